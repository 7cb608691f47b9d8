"""Workspace discovery as git does it: the nearest procure.yaml from here upward; outside any
workspace, every command says so and how to make one."""

from __future__ import annotations

import json
import shutil

import pytest
from clihelp import AS_OF, assert_error, run

from procure.io.workspace import find_workspace

MESSAGE = "not a procure workspace (no procure.yaml here or above): run `procure init DIR`"

# Every command that reads a workspace, with the arguments it needs.
READERS = [
    ("validate",),
    ("grade",),
    ("compare",),
    ("rate",),
    ("whatif", "--price-to-win"),
    ("position",),
    ("hedge",),
    ("sensitivity",),
    ("evaluate",),
    ("history",),
    ("diff",),
    ("reevaluate",),
    ("cashflow",),
    ("report", "--format", "html"),
]


@pytest.fixture
def nested(tmp_path, data_dir):
    """A copy of tests/data/basic and a folder two levels inside it."""
    ws = tmp_path / "ws"
    shutil.copytree(data_dir / "basic", ws)
    inner = ws / "notes" / "2026"
    inner.mkdir(parents=True)
    return ws, inner


def test_compare_from_a_subfolder_uses_the_workspace_above(nested, monkeypatch):
    ws, inner = nested
    expected = json.loads(run("compare", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    monkeypatch.chdir(inner)
    result = run("compare", "-f", "json", "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["offers"] == expected["offers"]


def test_w_naming_a_subfolder_finds_the_workspace_above(nested):
    ws, inner = nested
    result = run("validate", "-w", inner)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ok: 3 offers")  # alpha, bravo, charlie


def test_evaluate_save_from_a_subfolder_writes_history_at_the_root(nested, monkeypatch):
    ws, inner = nested
    monkeypatch.chdir(inner)
    assert run("evaluate", "--save", "--as-of", AS_OF).exit_code == 0
    assert (ws / ".procure" / "history.sqlite").is_file()
    assert not (inner / ".procure").exists()
    assert "1" in run("history").stdout


def test_find_workspace_returns_the_folder_itself_unchanged(data_dir):
    assert find_workspace(data_dir / "basic") == data_dir / "basic"


@pytest.mark.parametrize("args", READERS, ids=lambda a: a[0])
def test_outside_any_workspace_every_command_says_how_to_make_one(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    assert_error(run(*args), MESSAGE)


def test_import_from_a_subfolder_writes_to_the_workspace_offers(nested, monkeypatch, data_dir):
    ws, inner = nested
    monkeypatch.chdir(inner)
    result = run("import", data_dir / "import_rfp.csv")
    assert result.exit_code == 0, result.stderr
    assert not (inner / "offers").exists()
    assert sorted(p.name for p in (ws / "offers").glob("*.yaml")) == [
        "alpha.yaml",
        "bravo.yaml",
        "charlie.yaml",
        "delta.yaml",
        "echo.yaml",
    ]
