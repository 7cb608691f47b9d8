"""One envelope for machines: every --format json output is an object with schema_version, tool,
command, as_of and the input hashes at its top level, and conforms to `procure schema NAME`
(checked by tests/schemacheck.py, not by the models that wrote it)."""

from __future__ import annotations

import hashlib
import json

import pytest
from clihelp import AS_OF
from schemacheck import problems
from typer.main import get_command
from typer.testing import CliRunner

from procure.cli import app

# (arguments, schema name); the workspace is the packaged example with two saved runs
DOCUMENTS = [
    (("validate",), "validation"),
    (("compare",), "evaluation"),
    (("compare", "--uncertainty", "--draws", "200"), "evaluation"),
    (("evaluate",), "evaluation"),
    (("grade",), "grading"),
    (("grade", "--offer", "keel-b200-mc"), "grading"),
    (("grades", "update"), "grades-update"),
    (("rate",), "rate"),
    (("whatif", "--offer", "keel-b200-mc", "--throughput", "+50%"), "whatif"),
    (("whatif", "--price-to-win"), "price-to-win"),
    (("position",), "position"),
    (("index", "build", "market/quotes.csv"), "index"),
    (("hedge",), "hedge"),
    (("sensitivity",), "sensitivity"),
    (("history",), "history"),
    (("diff",), "diff"),
    (("cashflow",), "cashflow"),
    (("cashflow", "--offer", "keel-b200-mc"), "cashflow"),
    (("scorecard",), "scorecard"),
    (("scorecard", "--claim"), "claims"),
]
WITHOUT_AS_OF = {"diff", "index", "grades"}  # these take no --as-of: nothing in them depends on the date


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    ws = tmp_path_factory.mktemp("envelope") / "ws"
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(ws), "--example"]).exit_code == 0
    for day in ("2026-11-01", AS_OF):
        assert runner.invoke(app, ["evaluate", "--save", "--as-of", day, "-w", str(ws)]).exit_code == 0
    return ws


def document(ws, *args: str) -> dict:
    args = tuple(str(ws / a) if a.endswith(".csv") else a for a in args)
    as_of = () if args[0] in WITHOUT_AS_OF else ("--as-of", AS_OF)
    result = CliRunner().invoke(app, [*args, "--format", "json", *as_of, "-w", str(ws)])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def schema(name: str) -> dict:
    result = CliRunner().invoke(app, ["schema", name])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("args, name", DOCUMENTS, ids=lambda a: " ".join(a) if isinstance(a, tuple) else a)
def test_every_json_output_is_enveloped_and_conforms_to_its_schema(example, args, name):
    doc = document(example, *args)
    assert list(doc)[:2] == ["schema_version", "tool"] or name == "evaluation"
    assert doc["command"] == (" ".join(args[:2]) if args[0] == "grades" else args[0])
    assert doc["tool"].startswith("procure ")
    assert doc["schema_version"] and isinstance(doc["schema_version"], str)
    assert doc["as_of"] == (None if args[0] in ("grades", "index") else AS_OF) or args[0] == "diff"
    for item in doc["inputs"]:
        assert set(item) == {"path", "sha256"} and len(item["sha256"]) == 64
    assert problems(doc, schema(name)) == []


def test_the_input_hashes_are_those_of_the_files_read(example):
    doc = document(example, "rate")
    # computed here from the file itself
    expected = hashlib.sha256((example / "procure.yaml").read_bytes()).hexdigest()
    assert {"path": "procure.yaml", "sha256": expected} in doc["inputs"]
    index = document(example, "index", "build", "market/quotes.csv")
    assert index["inputs"] == [
        {
            "path": str(example / "market" / "quotes.csv"),
            "sha256": hashlib.sha256((example / "market" / "quotes.csv").read_bytes()).hexdigest(),
        }
    ]


def test_the_evaluation_keeps_its_top_level_names(example):
    doc = document(example, "compare")
    # DESIGN.md's names stay where scripts read them; the envelope adds `command` beside them
    assert {"schema_version", "tool", "as_of", "currency", "inputs", "workload", "summary", "offers"} <= set(doc)
    assert doc["schema_version"] == "1.3" and doc["command"] == "compare"
    assert document(example, "evaluate")["command"] == "evaluate"


def test_a_schema_check_catches_a_wrong_document(example):
    doc = document(example, "rate")
    broken = {**doc, "offers": [{**doc["offers"][0], "score": "high"}]}
    assert problems(broken, schema("rate"))  # the checker is not a formality
    assert problems({k: v for k, v in doc.items() if k != "command"}, schema("rate")) == ["$: missing command"]


def test_reevaluate_writes_both_of_its_documents_in_the_envelope(example, tmp_path):
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(example, ws, ignore=shutil.ignore_patterns(".procure"))
    first = document(ws, "reevaluate")
    assert first["command"] == "reevaluate" and first["baseline_saved"] == 1
    second = document(ws, "reevaluate")
    assert second["baseline_run"] == 1 and second["saved_run"] == 2
    for doc in (first, second):
        assert problems(doc, schema("reevaluate")) == []


@pytest.mark.slow  # the plan's solver takes seconds
def test_plan_json_is_enveloped(example):
    doc = document(example, "plan")
    assert doc["command"] == "plan" and doc["as_of"] == AS_OF
    assert problems(doc, schema("plan")) == []


@pytest.mark.slow  # the plan's solver takes seconds
def test_the_decision_record_is_enveloped_and_says_what_to_sign_by_when(example):
    doc = document(example, "decide")
    assert doc["command"] == "decide" and doc["as_of"] == AS_OF
    assert problems(doc, schema("decision")) == []
    # one answer to "what do we buy": the record's recommendation, its decide-by date and its contracts
    assert doc["decide_by"] == doc["recommendation"]["deadline"]
    assert [r["vendor"] for r in doc["sign_now"]] == [
        x["vendor"] for x in doc["recommendation"]["lines"] if x["role"] == "commit"
    ]
    assert all(r["sign_by"] >= doc["decide_by"] for r in doc["sign_now"])


def _json_commands() -> set[str]:
    """Every command (and group command) with json among its --format choices."""
    found = set()
    root = get_command(app)
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        subcommands = command.commands.items() if hasattr(command, "commands") else [(None, command)]
        for sub, cmd in subcommands:
            for param in cmd.params:
                kind = param.type_descriptor.annotation  # type: ignore[attr-defined]
                if param.name == "format" and "json" in {getattr(c, "value", c) for c in kind}:
                    found.add(f"{name} {sub}" if sub else name)
    return found


def test_every_command_with_json_output_is_checked_here():
    covered = {" ".join(a[:2]) if a[0] in ("index", "grades") else a[0] for a, _ in DOCUMENTS} | {
        "reevaluate",
        "plan",
        "decide",
        "schema",
    }
    assert _json_commands() - covered == set()


# Commands that print no data of their own: they write files (and say so on standard error) or print
# a document that is not data (a PDF). Every other command takes --format json and --out.
WRITE_FILES = {"init", "import", "perf import", "actuals import", "report"}
# Commands whose result does not depend on the date: grade files against the default grades, a JSON Schema.
# (diff picks its default runs by --as-of, index build its observations.)
DATELESS = {"grades update", "schema"}


def _commands() -> dict[str, object]:
    root = get_command(app)
    found = {}
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        for sub, cmd in command.commands.items() if hasattr(command, "commands") else [(None, command)]:
            found[f"{name} {sub}" if sub else name] = cmd
    return found


def _options(cmd) -> set[str]:
    return {opt for param in cmd.params for opt in getattr(param, "opts", ())}


def test_every_command_that_prints_data_takes_json_and_out_and_the_date():
    commands = _commands()
    assert WRITE_FILES | DATELESS <= set(commands)  # the exemptions name real commands
    printing = set(commands) - WRITE_FILES
    assert {c for c in printing if not {"--format", "--out"} <= _options(commands[c])} == set()
    assert _json_commands() == printing  # json among every printing command's formats
    dated = printing - DATELESS
    assert {c for c in dated if "--as-of" not in _options(commands[c])} == set()
    # the rule has teeth: grade and history depend on the date (validity; runs evaluated by then)
    assert {"grade", "history", "validate", "scorecard"} <= dated


def test_grade_as_of_marks_expired_offers(example):
    # every example offer is valid until 2027-06-30 or later (offers/*.yaml valid_until): on
    # 2027-07-01 all but the ones valid to 2027-07-31 have expired, on AS_OF none has
    later = CliRunner().invoke(app, ["grade", "--format", "json", "--as-of", "2027-07-01", "-w", str(example)])
    doc = json.loads(later.stdout)
    assert doc["as_of"] == "2027-07-01"
    for offer in doc["offers"]:
        assert offer["valid"] == (offer["valid_until"] >= "2027-07-01")
    assert any(not o["valid"] for o in doc["offers"])
    assert all(o["valid"] for o in document(example, "grade")["offers"])
    table = CliRunner().invoke(app, ["grade", "--as-of", "2027-07-01", "-w", str(example)], env={"COLUMNS": "200"})
    assert "(expired 2027-06-30)" in table.stdout


def test_history_as_of_keeps_the_runs_evaluated_by_then(example):
    # the fixture saved runs as of 2026-11-01 and AS_OF (2026-11-29)
    early = CliRunner().invoke(app, ["history", "--format", "json", "--as-of", "2026-11-15", "-w", str(example)])
    doc = json.loads(early.stdout)
    assert doc["as_of"] == "2026-11-15" and [r["as_of"] for r in doc["runs"]] == ["2026-11-01"]
    none = CliRunner().invoke(app, ["history", "--as-of", "2026-10-01", "-w", str(example)])
    assert none.exit_code == 0
    assert (
        none.stdout == "No saved runs evaluated as of 2026-10-01 or earlier: save one with `procure evaluate --save`.\n"
    )


def test_validate_json_counts_what_the_text_says(example):
    doc = document(example, "validate")
    text = CliRunner().invoke(app, ["validate", "--as-of", AS_OF, "-w", str(example)]).stdout.splitlines()[0]
    assert text == (
        f"ok: {doc['offers']} offers, {doc['grades']} grades, {doc['reference_curves']} reference curves, "
        f"{doc['index_levels']} index levels; {doc['acceptable']} acceptable as of {AS_OF}"
    )
    assert doc["offers"] == len(list((example / "offers").glob("*.yaml")))  # counted here from the files


def test_claims_json_and_text(example, tmp_path):
    doc = document(example, "scorecard", "--claim")
    assert doc["command"] == "scorecard" and [v["offer"] for v in doc["vendors"]] == sorted(
        p.name for p in (example / "actuals").iterdir()
    )
    out = tmp_path / "claims.txt"
    result = CliRunner().invoke(
        app, ["scorecard", "--claim", "--format", "text", "--as-of", AS_OF, "--out", str(out), "-w", str(example)]
    )
    assert result.exit_code == 0 and result.stdout == ""
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"SLA credit claims ({AS_OF})\n===")
    assert "&" not in text and "\\" not in text and "#" not in text


def test_diff_as_of_compares_the_runs_evaluated_by_then(example, tmp_path):
    # the example's runs: 1 as of 2026-11-01, 2 as of AS_OF; a third saved as of 2026-11-15 sits between them
    ws = tmp_path / "ws"
    import shutil

    shutil.copytree(example, ws)
    runner = CliRunner()
    assert runner.invoke(app, ["evaluate", "--save", "--as-of", "2026-11-15", "-w", str(ws)]).exit_code == 0
    latest = json.loads(runner.invoke(app, ["diff", "--format", "json", "-w", str(ws)]).stdout)
    assert (latest["base"], latest["head"]) == ("run 2", "run 3")
    dated = runner.invoke(app, ["diff", "--format", "json", "--as-of", "2026-11-20", "-w", str(ws)])
    assert dated.exit_code == 0, dated.stderr
    doc = json.loads(dated.stdout)
    assert (doc["base"], doc["head"]) == ("run 1", "run 3") and doc["as_of"] == "2026-11-15"
    early = runner.invoke(app, ["diff", "--as-of", "2026-10-01", "-w", str(ws)])
    assert early.exit_code == 2 and "no run evaluated as of 2026-10-01 or earlier" in early.stderr


def test_index_build_as_of_is_the_index_built_from_the_observations_of_then(example, tmp_path):
    quotes = example / "market" / "quotes.csv"
    lines = quotes.read_text().splitlines()
    kept = [line for line in lines if not line[:1].isdigit() or line.split(",")[0] <= "2026-06-30"]
    assert 1 < len(kept) < len(lines)  # the date cuts the observations
    (tmp_path / "early.csv").write_text("\n".join(kept) + "\n")
    runner = CliRunner()
    dated = runner.invoke(app, ["index", "build", str(quotes), "--as-of", "2026-06-30", "-w", str(example)])
    cut = runner.invoke(app, ["index", "build", str(tmp_path / "early.csv"), "-w", str(example)])
    assert dated.exit_code == 0 and cut.exit_code == 0, dated.stderr + cut.stderr
    assert dated.stdout == cut.stdout
    assert dated.stdout.strip().splitlines()[-1].startswith("2026-06-01,")
    doc = runner.invoke(
        app, ["index", "build", str(quotes), "--as-of", "2026-06-30", "--format", "json", "-w", str(example)]
    )
    assert json.loads(doc.stdout)["as_of"] == "2026-06-30"
