"""One vocabulary: `--offer ID`, `--top N`, `-w/--workspace DIR` everywhere, uniform placeholders;
the older spellings still work but are hidden from --help."""

from __future__ import annotations

import json
import re

import pytest
from clihelp import AS_OF, assert_error, run

from procure.cli import app

COMMANDS = [[c.name or c.callback.__name__] for c in app.registered_commands] + [
    [g.name, c.name] for g in app.registered_groups for c in g.typer_instance.registered_commands
]
# Placeholders a user meets in --help: the five the vocabulary names, plus value kinds that are not
# files, dates, ids or counts (a change like +50%, a share, an amount, a name, a label, a list).
PLACEHOLDERS = {
    "DIR",
    "FILE",
    "DATE",
    "ID",
    "N",
    "CHANGE",
    "SHARE",
    "AMOUNT",
    "NAME",
    "TEXT",
    "LIST",
    "BASE",
    "HEAD",
    "[FILE]",
    "[BASE]",
    "[HEAD]",
    "[ID]",
    "URL",
    "COLUMN",
    "SECONDS",
}  # URL and SECONDS: a live server and its time-outs


def options_section(help_text: str) -> str:
    return help_text.split("Options:", 1)[1]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_takes_w_and_workspace(command):
    text = options_section(run(*command, "--help").stdout)
    assert re.search(r"-w, --workspace DIR", text), text


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_placeholders_are_uniform(command):
    text = options_section(run(*command, "--help").stdout)
    # "--option METAVAR" where the metavar is upper case; choices print as <a|b>.
    used = set(re.findall(r"--[a-z-]+ (\[?[A-Z_]+\]?)", text))
    assert used <= PLACEHOLDERS, used - PLACEHOLDERS
    assert "PATH" not in text and "INTEGER" not in text and "TEXT " not in text.replace("--label TEXT", "")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_old_spellings_are_hidden(command):
    text = run(*command, "--help").stdout
    for old in ("--offers", "--current-offer", "--explain", "OFFER_ID"):
        assert old not in text


def test_grade_offer_and_its_old_spelling_agree(data_dir):
    ws = data_dir / "basic"
    new = run("grade", "--offer", "alpha", "-f", "json", "-w", ws)
    old = run("grade", "--explain", "alpha", "-f", "json", "-w", ws)
    assert new.exit_code == old.exit_code == 0
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert [o["id"] for o in json.loads(new.stdout)["offers"]] == ["alpha"]


def test_grade_offer_is_repeatable(data_dir):
    result = run("grade", "--offer", "alpha", "--offer", "bravo", "-f", "json", "-w", data_dir / "basic")
    assert [r["id"] for r in json.loads(result.stdout)["offers"]] == ["alpha", "bravo"]
    table = run("grade", "--offer", "alpha", "--offer", "bravo", "-w", data_dir / "basic").stdout
    assert "alpha (" in table and "bravo (" in table


def test_grade_lists_every_unknown_offer(data_dir):
    assert_error(run("grade", "--offer", "zulu", "--offer", "yankee", "-w", data_dir / "basic"), "'zulu'", "'yankee'")


def test_position_offer_and_its_old_spelling_agree(data_dir):
    ws = data_dir / "rated"
    new = json.loads(run("position", "--offer", "delta", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    old = json.loads(run("position", "--current-offer", "delta", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    assert new == old and new["label"] == "offer delta"


def test_position_refuses_two_different_offers(data_dir):
    assert_error(
        run("position", "--offer", "delta", "--current-offer", "alpha", "-w", data_dir / "basic"),
        "--current-offer is the older name of --offer",
    )


def test_whatif_offer_and_the_old_argument_agree(data_dir):
    ws = data_dir / "basic"
    new = json.loads(
        run("whatif", "--offer", "alpha", "--throughput", "+50%", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout
    )
    old = json.loads(run("whatif", "alpha", "--throughput", "+50%", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    assert new == old and new["offer"] == "alpha"


def test_sensitivity_top_and_the_old_offers_agree(data_dir):
    ws = data_dir / "uncertainty_tornado"
    new = json.loads(run("sensitivity", "--top", "2", "-f", "json", "-w", ws).stdout)
    old = json.loads(run("sensitivity", "--offers", "2", "-f", "json", "-w", ws).stdout)
    assert new == old


def test_sensitivity_follows_named_offers(data_dir):
    ws = data_dir / "uncertainty_tornado"
    ranked = [o["id"] for o in json.loads(run("compare", "-f", "json", "-w", ws).stdout)["offers"] if o["acceptable"]]
    chosen = [ranked[2], ranked[0]]  # the third and the first: not simply the top two
    result = json.loads(run("sensitivity", "--offer", chosen[0], "--offer", chosen[1], "-f", "json", "-w", ws).stdout)
    assert sorted(result["offers"]) == sorted(chosen)


def test_init_takes_w_as_well_as_dir(tmp_path):
    result = run("init", "-w", tmp_path / "new", "--example")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "new" / "procure.yaml").is_file()
    assert_error(run("init"), "procure init DIR")


# --- usage errors, unknown ids, empty history, folders --------------------------------------------


@pytest.mark.parametrize(
    "args, needle",
    [
        (
            ("compare", "--as-of", "01/12/2026"),
            "procure compare: --as-of: must be a date like 2026-11-30 (got '01/12/2026')",
        ),
        (("compare", "--no-such-flag"), "procure compare: --no-such-flag: no such option"),
        (("compare", "--draws", "many"), "procure compare: --draws:"),
        (("comapre",), "procure: no such command 'comapre'"),
        (("diff", "1", "2", "3"), "procure diff: got unexpected extra argument"),
        # a missing argument: typer 0.2x's own click has no make_metavar on an argument (an internal error before)
        (("index", "build"), "procure index build: missing argument FILE"),
        (("perf", "import"), "procure perf import: missing argument FILE..."),
        (
            ("actuals", "import"),
            "procure actuals import: --offer: missing",
        ),  # FILE is optional: --prometheus URL reads a server
    ],
)
def test_usage_errors_are_in_procures_format_and_exit_2(data_dir, args, needle):
    result = run(*args, "-w", data_dir / "basic")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(needle), lines
    # one problem line, then the count and where to read the usage: no click "Usage:/Error:" block
    assert lines[1] == f"1 problem found; nothing was written. Usage: {' '.join(lines[0].split(':')[0].split())} --help"
    assert "Error:" not in result.stderr and "Try '" not in result.stderr


def test_a_command_given_no_arguments_still_shows_its_help():
    result = run("index")
    assert "build" in result.stdout + result.stderr and "problem" not in result.stderr


def test_an_unknown_offer_id_gets_a_did_you_mean(data_dir):
    # basic holds alpha, bravo and charlie: "alpah" is one transposition from alpha, "zulu" near none
    stderr = assert_error(
        run("whatif", "--offer", "alpah", "--price", "-5%", "-w", data_dir / "basic", "--as-of", AS_OF),
        "no offer with id 'alpah'; did you mean 'alpha'?",
    )
    assert "known: alpha, bravo, charlie)" in stderr
    stderr = assert_error(
        run("whatif", "--offer", "zulu", "--price", "-5%", "-w", data_dir / "basic", "--as-of", AS_OF),
        "no offer with id 'zulu' (known:",
    )
    assert "did you mean" not in stderr
    # a prefix of an id is an id cut short
    assert_error(run("grade", "--offer", "cha", "-w", data_dir / "basic"), "did you mean 'charlie'?")


def test_an_empty_history_is_one_line_and_exit_0(workspace_copy):
    ws = workspace_copy("basic")
    result = run("history", "-w", ws)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["No saved runs yet: save one with `procure evaluate --save`."]
    assert not (ws / ".procure" / "history.sqlite").exists()  # looking created nothing
    listed = run("history", "-f", "json", "-w", ws)
    assert listed.exit_code == 0 and json.loads(listed.stdout)["runs"] == []


def test_folder_options_are_out_dir_and_the_old_out_still_works(data_dir, tmp_path):
    for command in (["import"], ["perf", "import"]):
        text = options_section(run(*command, "--help").stdout)
        assert "--out-dir DIR" in text and "--out " not in text
    template = tmp_path / "rfp.csv"
    assert run("import", "--template", template).exit_code == 0
    assert_error(
        run("import", template, "--out-dir", tmp_path / "a", "--out", tmp_path / "b"),
        "--out is the older name of --out-dir",
    )


# The table commands: each takes --wide and --columns; where a ranking is printed, --top; where one
# offer can be chosen, --offer.
TABLE_COMMANDS = [
    ["grade"],
    ["compare"],
    ["rate"],
    ["whatif"],
    ["position"],
    ["index", "build"],
    ["hedge"],
    ["sensitivity"],
    ["history"],
    ["diff"],
    ["reevaluate"],
    ["scorecard"],
    ["cashflow"],
    ["plan"],
]
RANKING_COMMANDS = [["compare"], ["rate"], ["grade"], ["sensitivity"], ["cashflow"], ["whatif"], ["position"]]
OFFER_COMMANDS = [
    ["compare"],
    ["rate"],
    ["grade"],
    ["whatif"],
    ["position"],
    ["hedge"],
    ["sensitivity"],
    ["cashflow"],
    ["scorecard"],
]


@pytest.mark.parametrize("command", TABLE_COMMANDS, ids=" ".join)
def test_every_table_command_takes_wide_and_columns(command):
    text = options_section(run(*command, "--help").stdout)
    assert "--wide" in text and "--columns NAME,..." in text


@pytest.mark.parametrize("command", RANKING_COMMANDS, ids=" ".join)
def test_every_ranking_takes_top(command):
    assert "--top N" in options_section(run(*command, "--help").stdout)


@pytest.mark.parametrize("command", OFFER_COMMANDS, ids=" ".join)
def test_every_command_that_can_choose_one_offer_takes_offer(command):
    assert "--offer ID" in options_section(run(*command, "--help").stdout)


def test_compare_top_prints_the_first_acceptable_offers_by_rank_and_json_keeps_them_all(data_dir):
    ws = data_dir / "basic"
    evaluation = json.loads(run("compare", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    ranked = [o["id"] for o in sorted((o for o in evaluation["offers"] if o["acceptable"]), key=lambda o: o["rank"])]
    assert len(ranked) >= 2
    rows = run("compare", "--top", "1", "-f", "csv", "--as-of", AS_OF, "-w", ws).stdout.splitlines()[1:]
    assert [r.split(",")[2] for r in rows] == ranked[:1]
    table = run("compare", "--top", "1", "--as-of", AS_OF, "-w", ws).stdout
    assert f" {ranked[0]} " in table and f" {ranked[1]} " not in table
    full = json.loads(run("compare", "--top", "1", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    assert len(full["offers"]) == len(evaluation["offers"])  # the Evaluation is never cut


def test_compare_and_rate_offer_print_that_offer_and_suggest_a_near_id(data_dir):
    ws = data_dir / "basic"
    rows = run("compare", "--offer", "bravo", "-f", "csv", "--as-of", AS_OF, "-w", ws).stdout.splitlines()[1:]
    assert [r.split(",")[2] for r in rows] == ["bravo"]
    # one offer printed is not the cheapest of one: the leader is named only when it is printed
    leader = next(
        o["id"]
        for o in json.loads(run("compare", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)["offers"]
        if o["rank"] == 1
    )
    other = next(i for i in ("alpha", "bravo", "charlie") if i != leader)
    assert "Lowest cost" not in run("compare", "--offer", other, "-f", "markdown", "--as-of", AS_OF, "-w", ws).stdout
    assert f"(`{leader}`)" in run("compare", "--offer", leader, "-f", "markdown", "--as-of", AS_OF, "-w", ws).stdout
    rated = run("rate", "--offer", "charlie", "-f", "csv", "--as-of", AS_OF, "-w", ws).stdout.splitlines()[1:]
    assert [r.split(",")[0] for r in rated] == ["charlie"]
    assert_error(
        run("compare", "--offer", "bravoo", "--as-of", AS_OF, "-w", ws),
        "no offer with id 'bravoo'; did you mean 'bravo'?",
    )
    assert_error(run("rate", "--offer", "alpah", "--as-of", AS_OF, "-w", ws), "did you mean 'alpha'?")


def test_rate_top_follows_the_score_and_grade_top_the_grade(data_dir):
    ws = data_dir / "basic"
    records = json.loads(run("rate", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)["offers"]
    rows = run("rate", "--top", "2", "-f", "csv", "--as-of", AS_OF, "-w", ws).stdout.splitlines()[1:]
    assert [r.split(",")[0] for r in rows] == [r["id"] for r in records][:2]  # the JSON lists them by score
    grades = json.loads(run("grade", "-f", "json", "-w", ws).stdout)["offers"]
    table = run("grade", "--top", "1", "-w", ws).stdout
    assert sum(f" {g['id']} " in table for g in grades) == 1
