"""Running the CLI in-process for tests."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from procure.cli import app

AS_OF = "2026-11-29"


def run(*args: str | Path) -> Result:
    """Invoke procure with the given arguments; stdout and stderr are kept apart."""
    return CliRunner().invoke(app, [str(a) for a in args])
