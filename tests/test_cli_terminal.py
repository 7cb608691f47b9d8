"""On a real 80 x 24 terminal (a pseudo-terminal for standard output and error): scorecard --claim wraps at
spaces, never inside a word (the terminal's own wrap of a long Markdown row cut "deadline" into "deadli" / "ne"),
and index build's CSV and methodology share one screen; pipes get everything."""

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


def test_index_build_fits_a_24_line_screen_and_a_pipe_gets_the_methodology(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", ws, "--example").exit_code == 0
    quotes = ws / "market" / "quotes.csv"
    screen = on_terminal(["index", "build", str(quotes), "-w", str(ws)])
    shown = [line for line in screen.splitlines() if line.strip()]
    assert len(shown) <= 23  # the 24th line is the prompt's
    assert shown[0] == "period,level,observations"
    periods = [line for line in shown if line[:4].isdigit()]
    piped = run("index", "build", quotes, "-w", ws)
    assert periods == piped.stdout.splitlines()[1:]  # every period of the index, on the screen too
    assert "--notes" in screen
    # a pipe (standard error too) is not a screen: the methodology table and every note
    assert "Methodology: the month of" in piped.stderr and "note: " in piped.stderr
    full = on_terminal(["index", "build", str(quotes), "--notes", "-w", str(ws)])
    assert "Methodology: the month of" in full and "volume-weight" in full
