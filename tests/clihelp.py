"""Running the CLI in-process for tests."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
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


def run_on_terminal(args: list[str | Path], timeout: float = 120, **env: str) -> tuple[int, bytes, bytes]:
    """procure in a subprocess, standard output a pipe and standard error a pseudo-terminal: (exit, stdout, stderr)."""
    import pytest

    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    environment.update(TERM="xterm", **env)
    # Standard output goes to a file, not a pipe: a child writing more than a pipe holds would
    # block on it while this process reads the terminal to its end, and neither would go on.
    with tempfile.TemporaryFile() as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "procure", *map(str, args)], stdout=stdout, stderr=slave, env=environment
        )
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        proc.wait(timeout=timeout)
        os.close(master)
        stdout.seek(0)
        out = stdout.read()
    return proc.returncode, out, err


def edit(ws: Path, name: str, old: str, new: str) -> int:
    """Replace text in a workspace file; returns the 1-based line where it was."""
    path = ws / name
    text = path.read_text(encoding="utf-8")
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


def header_cells(table: str) -> list[str]:
    """A terminal table's column headers, each cell's wrapped lines joined: 'USD/1k tasks 24 mo'."""
    lines = [line.strip()[1:-1].split("┃") for line in table.splitlines() if line.strip().startswith("┃")]
    return (
        [" ".join(" ".join(line[i] for line in lines if i < len(line)).split()) for i in range(len(lines[0]))]
        if lines
        else []
    )


# Elements that sit inside a line of text: their tags join the words around them ("<strong>Alpha</strong>, ..."
# reads "Alpha, ..."); every other tag separates words, as a line or cell break does on the page.
INLINE_TAGS = r"</?(?:a|abbr|b|code|em|i|small|span|strong|sub|sup|wbr)\b[^>]*>"


def html_words(page: str) -> str:
    """The words of an HTML report as a reader sees them, single-spaced: no head, styles, scripts or charts,
    entities read, soft hyphens dropped (the same words a PDF's text holds, without laying it out)."""
    import html
    import re

    page = re.sub(r"(?s)<head>.*?</head>", "", page)
    page = re.sub(r"(?s)<(style|script|svg)\b.*?</\1>", " ", page)
    page = re.sub(INLINE_TAGS + r"|&shy;", "", page)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).replace("\u00ad", "").split())
