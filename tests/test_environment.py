"""The environment variables procure heeds are read once, by the command line, into one Environment
(procure/environment.py) that the layers below are handed: no module outside procure/cli reads os.environ
(procure/front.py, the console entry, reads it for the result cache before the command line loads)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from procure.environment import Environment, current, using

PACKAGE = Path(__file__).resolve().parent.parent / "procure"
# Where os.environ may be read: the command line, and the entry that answers from the result cache before it loads.
MAY_READ = ("procure/cli/", "procure/front.py")
READERS = {"environ", "environb", "getenv", "getenvb"}


def environment_reads(path: Path) -> list[int]:
    """Lines of `path` that read the process's environment: os.environ, os.getenv, or either imported by name."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in READERS:
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            lines += [node.lineno for alias in node.names if alias.name in READERS]
    return lines


def test_only_the_command_line_reads_the_environment():
    found = [
        f"{name}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not (name := path.relative_to(PACKAGE.parent).as_posix()).startswith(MAY_READ)
        for line in environment_reads(path)
    ]
    assert not found, f"read variables from procure.environment's Environment, handed down by the cli: {found}"


def test_the_check_sees_each_way_of_reading(tmp_path):
    source = tmp_path / "reader.py"
    source.write_text(
        "import os\nfrom os import getenv\na = os.environ.get('X')\nb = os.getenv('Y')\nc = os.path.join('a')\n"
    )
    assert sorted(environment_reads(source)) == [2, 3, 4]


def test_the_cache_folder_follows_procure_cache_dir_then_xdg(tmp_path):
    home = Path.home()
    assert Environment({}).cache_folder == home / ".cache" / "procure"
    assert Environment({"XDG_CACHE_HOME": str(tmp_path)}).cache_folder == tmp_path / "procure"
    chosen = {"PROCURE_CACHE_DIR": str(tmp_path / "mine"), "XDG_CACHE_HOME": "/elsewhere"}
    assert Environment(chosen).cache_folder == tmp_path / "mine"
    assert Environment({"PROCURE_CACHE_DIR": "  "}).cache_folder is None  # set empty: the cache is off
    assert Environment({"XDG_STATE_HOME": str(tmp_path)}).state_folder == tmp_path / "procure"
    assert Environment({}).state_folder == home / ".local" / "state" / "procure"


@pytest.mark.parametrize(("written", "seconds"), [(None, 1.5), ("0", 0.0), ("2.5", 2.5), ("-3", 0.0), ("soon", 1.5)])
def test_the_spinner_delay(written, seconds):
    variables = {} if written is None else {"PROCURE_PROGRESS_AFTER": written}
    assert Environment(variables).progress_after == seconds


def test_terminal_and_screen_variables():
    assert not Environment({}).forces_terminal
    assert Environment({"FORCE_COLOR": ""}).forces_terminal and Environment({"TTY_COMPATIBLE": "1"}).forces_terminal
    assert Environment({"COLUMNS": "90"}).width_asked and not Environment({"LINES": "40"}).width_asked
    assert Environment({"LINES": "40"}).lines == "40" and Environment({}).lines is None
    assert Environment({"B": "2", "A": "1"}).items() == [("A", "1"), ("B", "2")]


def test_a_command_environment_is_current_while_it_runs_and_the_one_before_after():
    before = current()
    outer, inner = Environment({"SOURCE_DATE_EPOCH": "1"}), Environment({"SOURCE_DATE_EPOCH": "2"})
    with using(outer):
        with using(inner):
            assert current().source_date_epoch == "2"
        assert current() is outer
        with pytest.raises(RuntimeError), using(inner):
            raise RuntimeError
        assert current() is outer
    assert current() is before


def test_the_report_reads_the_date_from_the_commands_environment():
    """SOURCE_DATE_EPOCH reaches the document through the Environment the command made, not through os.environ."""
    from datetime import UTC, datetime

    from procure.render.documents import report_date

    with using(Environment({"SOURCE_DATE_EPOCH": "86400"})):  # one day after 1970-01-01
        assert report_date() == datetime(1970, 1, 2, tzinfo=UTC)
