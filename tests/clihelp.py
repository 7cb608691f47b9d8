"""Running the CLI in-process for tests."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from procure.cli import app

AS_OF = "2026-11-29"


def run(*args: str | Path) -> Result:
    """Invoke procure with the given arguments; stdout and stderr are kept apart."""
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_error(result: Result, *needles: str) -> str:
    """Bad input: exit 2, no traceback, and each needle in the one-line-per-problem message."""
    combined = result.stdout + result.stderr
    assert result.exit_code == 2, (result.exit_code, result.exception, combined[-2000:])
    assert isinstance(result.exception, (SystemExit, type(None))), repr(result.exception)
    assert "Traceback" not in combined
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr[-2000:])
    return result.stderr
