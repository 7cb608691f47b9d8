"""Shared fixtures: the fixture workspaces under tests/data and throw-away copies of them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pytest

DATA_DIR = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: one small fixture workspace per folder."""
    return DATA_DIR


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
