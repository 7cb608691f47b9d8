"""Pipes carry everything: a table written to a pipe or a file keeps every column and every cell whole (as
--wide does), a reader that goes away (`| head -1`) ends procure quietly with the status Unix tools give
(141 = 128 + SIGPIPE) so `set -o pipefail` scripts tell it from a bug (1); on a terminal the columns an option
asked for outlast the other optional columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from clihelp import AS_OF, run
from typer.testing import CliRunner

from procure.cli import app


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    ws = tmp_path_factory.mktemp("pipes") / "ws"
    assert run("init", ws, "--example").exit_code == 0
    return ws


def piped(ws, *args: str) -> subprocess.CompletedProcess:
    """procure in a subprocess, standard output a pipe to a file (no terminal, no COLUMNS)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [sys.executable, "-m", "procure", *args, "--as-of", AS_OF, "-w", str(ws)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_compare_into_a_file_keeps_every_reason_whole(example):
    doc = json.loads(run("compare", "--format", "json", "--as-of", AS_OF, "-w", example).stdout)
    reasons = {o["id"]: o["reasons"][0] for o in doc["offers"] if o["reasons"]}
    assert any(len(r) > 80 for r in reasons.values())  # reasons longer than any terminal's column
    result = piped(example, "compare")
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout and "left out to fit" not in result.stdout
    for offer, reason in reasons.items():
        line = next(line for line in result.stdout.splitlines() if f" {offer} " in line)
        assert reason in line, (offer, reason)


def test_rate_into_a_pipe_keeps_tier_and_critical_whole(example):
    doc = json.loads(run("rate", "--format", "json", "--as-of", AS_OF, "-w", example).stdout)
    result = piped(example, "rate")
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    for offer in doc["offers"]:
        line = next(line for line in result.stdout.splitlines() if f" {offer['id']} " in line)
        assert (offer["tier"] or "").lower() in line.lower()
        for failure in offer["critical_failures"]:
            assert failure in line


@pytest.mark.parametrize("command", ["compare", "rate", "grade", "schema"])
def test_a_closed_pipe_ends_quietly_with_the_status_of_sigpipe(example, command):
    args = "schema offer" if command == "schema" else f"{command} --as-of {AS_OF} -w {example}"
    if command == "grade":
        args = f"grade -w {example}"
    script = f'set -o pipefail; "{sys.executable}" -m procure {args} | head -c 1 > /dev/null'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    # a document that fits the pipe's buffer may be written whole before head leaves: that is success
    assert result.returncode in (141, 0), result.stderr
    assert result.stderr == ""  # no "internal error", no traceback, no "Exception ignored"


def test_a_closed_pipe_on_a_long_output_is_141(example):
    # the reader gone before procure writes (its end of the pipe closed): every write fails, whatever the size of the
    # pipe's buffer, so the status is the one Unix tools give, 128 + SIGPIPE, with nothing on standard error
    for args in (["compare", "--format", "markdown"], ["compare"]):
        read, write = os.pipe()
        os.close(read)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "procure", *args, "--as-of", AS_OF, "-w", str(example)],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=300,
            )
        finally:
            os.close(write)
        assert result.returncode == 141, (args, result.stderr)
        assert "error" not in result.stderr.lower()


def test_the_horizon_asked_for_outlasts_the_reason_on_a_terminal(example):
    result = CliRunner().invoke(
        app, ["compare", "--horizon", "24", "--as-of", AS_OF, "-w", str(example)], env={"COLUMNS": "70", "LINES": "200"}
    )
    assert result.exit_code == 0, result.stderr
    header = "\n".join(line for line in result.stdout.splitlines() if line.startswith("┃"))
    assert "24" in header and "Commit" in header and header.count("USD/1k") == 2
    assert "Reason" not in header  # the reason went first: --horizon asked for the others
