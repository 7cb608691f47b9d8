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
    (("compare",), "evaluation"),
    (("compare", "--uncertainty", "--draws", "200"), "evaluation"),
    (("evaluate",), "evaluation"),
    (("grade",), "grading"),
    (("grade", "--offer", "keel-b200-mc"), "grading"),
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
]
WITHOUT_AS_OF = {"grade", "history", "diff", "index"}  # these take no --as-of


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
    assert doc["command"] == args[0]
    assert doc["tool"].startswith("procure ")
    assert doc["schema_version"] and isinstance(doc["schema_version"], str)
    assert doc["as_of"] == (None if args[0] in ("grade", "history", "index") else AS_OF) or args[0] == "diff"
    for item in doc["inputs"]:
        assert set(item) == {"path", "sha256"} and len(item["sha256"]) == 64
    assert problems(doc, schema(name)) == []


def test_the_input_hashes_are_those_of_the_files_read(example):
    doc = document(example, "rate")
    # computed here from the file itself
    expected = hashlib.sha256((example / "procure.yaml").read_bytes()).hexdigest()
    assert {"path": "procure.yaml", "sha256": expected} in doc["inputs"]
    index = document(example, "index", "build", "market/quotes.csv")
    assert index["inputs"] == [{"path": str(example / "market" / "quotes.csv"), "sha256": hashlib.sha256((example / "market" / "quotes.csv").read_bytes()).hexdigest()}]


def test_the_evaluation_keeps_its_top_level_names(example):
    doc = document(example, "compare")
    # DESIGN.md's names stay where scripts read them; the envelope adds `command` beside them
    assert {"schema_version", "tool", "as_of", "currency", "inputs", "workload", "summary", "offers"} <= set(doc)
    assert doc["schema_version"] == "1.2" and doc["command"] == "compare"
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
    covered = {" ".join(a[:2]) if a[0] == "index" else a[0] for a, _ in DOCUMENTS} | {"reevaluate", "plan"}
    assert _json_commands() - covered == set()
