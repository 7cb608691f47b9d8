"""scorecard --claim on an 80-column terminal: sentences and table rows wrap at spaces, never inside a word
(the terminal's own wrap of a long Markdown row cut "deadline" into "deadli" / "ne"); a pipe gets the Markdown."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from clihelp import AS_OF, run


def on_terminal(args: list[str], columns: int = 80, lines: int = 24) -> str:
    """procure with standard output and error on a pseudo-terminal of the given size: what the screen shows."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm", PROCURE_PROGRESS_AFTER="600")
    proc = subprocess.Popen([sys.executable, "-m", "procure", *args], stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=300)
    os.close(master)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).replace("\r", "")


def words(text: str) -> set[str]:
    return {w.strip(":;,.()|-*#`") for w in text.split()} - {""}


def test_a_claim_on_an_80_column_terminal_never_cuts_a_word(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", ws, "--example").exit_code == 0
    markdown = run("scorecard", "--claim", "--as-of", AS_OF, "-w", ws).stdout  # not a terminal: the Markdown
    assert "| month |" in markdown and "deadline" in markdown
    screen = on_terminal(["scorecard", "--claim", "--as-of", AS_OF, "-w", str(ws)])
    assert max(len(line) for line in screen.splitlines()) <= 80
    assert "deadline: no window stated" in " ".join(screen.split())  # the table's row as one item
    cut = words(screen) - words(markdown)
    assert cut == set(), cut  # every word on the screen is a whole word of the claim
