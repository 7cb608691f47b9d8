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
PLACEHOLDERS = {"DIR", "FILE", "DATE", "ID", "N", "CHANGE", "SHARE", "AMOUNT", "NAME", "TEXT", "LIST", "BASE", "HEAD", "[FILE]", "[BASE]", "[HEAD]", "[ID]"}


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
    assert json.loads(new.stdout)["id"] == "alpha"


def test_grade_offer_is_repeatable(data_dir):
    result = run("grade", "--offer", "alpha", "--offer", "bravo", "-f", "json", "-w", data_dir / "basic")
    assert [r["id"] for r in json.loads(result.stdout)] == ["alpha", "bravo"]
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
    assert_error(run("position", "--offer", "delta", "--current-offer", "alpha", "-w", data_dir / "basic"), "--current-offer is the older name of --offer")


def test_whatif_offer_and_the_old_argument_agree(data_dir):
    ws = data_dir / "basic"
    new = json.loads(run("whatif", "--offer", "alpha", "--throughput", "+50%", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
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
    result = run("init", "-w", tmp_path / "new")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "new" / "procure.yaml").is_file()
    assert_error(run("init"), "procure init DIR")
