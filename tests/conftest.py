"""Shared fixtures: the fixture workspaces under tests/data and throw-away copies of them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

DATA_DIR = Path(__file__).parent / "data"


def _build_each_app_once() -> None:
    """typer's CliRunner turns the app into a click command on every invoke (about 50 ms: it evaluates
    every annotation of every command); thousands of in-process runs build the same command. Built
    once per app, each run still gets its own context, streams and environment."""
    import typer.main
    import typer.testing

    built: dict[int, tuple[object, object]] = {}

    def get_command_once(app):  # type: ignore[no-untyped-def]
        if id(app) not in built:
            built[id(app)] = (app, typer.main.get_command(app))  # the app is kept so that its id is not reused
        return built[id(app)][1]

    typer.testing._get_command = get_command_once


_build_each_app_once()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: one small fixture workspace per folder."""
    return DATA_DIR


@pytest.fixture(scope="session", autouse=True)
def _solved_plans_shared_by_the_run(pytestconfig: pytest.Config):
    """Solved plans are kept in pytest's cache folder (.pytest_cache), never in the user's ~/.cache.

    The folder is shared by the run's workers, the commands they start and the two steps of make test,
    as a user's is shared by their commands: the example's plan is solved once, not once per report a
    test renders. A kept plan is read only for the very same program (procure/solvecache.py); the
    cache itself is tested in tests/test_solvecache.py with folders of its own.
    """
    folder = pytestconfig.cache.mkdir("procure-solved-plans")
    # The key that authenticates kept plans lives outside the cache folder, as the user's does.
    chosen = {"PROCURE_CACHE_DIR": str(folder), "XDG_STATE_HOME": str(pytestconfig.cache.mkdir("procure-state"))}
    before = {name: os.environ.get(name) for name in chosen}
    os.environ.update(chosen)
    yield folder
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def workspace_copy(tmp_path: Path) -> Callable[[str], Path]:
    """workspace_copy("basic") -> a fresh copy of tests/data/basic under tmp_path, safe to break."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(DATA_DIR / name, target)
        return target

    return copy



@pytest.fixture(autouse=True)
def _no_inherited_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables are measured as when piped unless a test sets COLUMNS itself.

    pytest-xdist workers inherit COLUMNS=80 and LINES=24; a test of the terminal width sets its own.
    """
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
