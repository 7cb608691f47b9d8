"""Progress: a command still working after PROCURE_PROGRESS_AFTER seconds (1.5 by default) shows a
spinner on a terminal's standard error, never on standard output and never when piped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from clihelp import AS_OF, run_on_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


def run_with_terminal_stderr(args: list[str], after: str) -> tuple[int, bytes, bytes]:
    return run_on_terminal(args, PROCURE_PROGRESS_AFTER=after)


def test_a_slow_command_shows_a_spinner_on_the_terminal_only(data_dir):
    # A zero delay makes every command "slow"; standard output stays pure JSON.
    code, out, err = run_with_terminal_stderr(
        ["compare", "-f", "json", "-w", str(data_dir / "basic"), "--as-of", AS_OF], "0"
    )
    assert code == 0
    assert b"working" in err
    assert json.loads(out)["as_of"] == AS_OF


def test_a_quick_command_shows_nothing(data_dir):
    code, out, err = run_with_terminal_stderr(["validate", "-w", str(data_dir / "basic"), "--as-of", AS_OF], "60")
    assert code == 0
    assert b"working" not in err and out.startswith(b"ok: ")


def test_nothing_when_piped(data_dir):
    env = {**os.environ, "PROCURE_PROGRESS_AFTER": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "procure", "compare", "-f", "json", "-w", str(data_dir / "basic"), "--as-of", AS_OF],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == b""
