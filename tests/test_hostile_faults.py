"""Faults: processes killed mid-write, concurrent saves to the history, a missing optional
dependency, and WeasyPrint failing.

An interrupted `report` leaves no partial PDF (the previous one, a complete new one, or nothing); a
killed `evaluate --save` leaves the history readable and consistent; concurrent saves all land; a
missing openpyxl or a failing WeasyPrint gives a clear message, no traceback and no file.

The kill tests run procure as a subprocess (`python -m procure`) and send SIGKILL, which cannot be
caught: a temporary file of the atomic write may stay behind, and is reported as a warning.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pypdf
import pytest
from clihelp import run

pytestmark = pytest.mark.slow  # PDF rendering, subprocesses or many generated examples

PROCURE = [sys.executable, "-m", "procure"]


def start(*args: str | Path) -> subprocess.Popen:
    return subprocess.Popen([*PROCURE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def assert_complete_pdf(path: Path) -> int:
    data = path.read_bytes()
    assert data.startswith(b"%PDF-"), f"{path} is not a PDF"
    assert data.rstrip().endswith(b"%%EOF"), f"{path} is cut short"
    reader = pypdf.PdfReader(str(path), strict=True)
    pages = len(reader.pages)
    assert pages >= 1
    return pages


def leftovers(folder: Path, name: str) -> tuple[list[str], list[str]]:
    """(temporary files of the atomic write, any other unexpected files) beside `name`."""
    names = [p.name for p in folder.iterdir() if p.name != name]
    temporary = [n for n in names if n.startswith(f".{name}.") and n.endswith(".tmp")]
    return temporary, [n for n in names if n not in temporary]


def tiny_pdf(path: Path) -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=100, height=100)
    with open(path, "wb") as handle:
        writer.write(handle)
    return path.read_bytes()


# --- interrupting `procure report` -----------------------------------------------------------------


@pytest.mark.slow
def test_killed_report_leaves_no_partial_pdf(workspace_copy, tmp_path):
    """Three runs at once, killed (SIGKILL) during start-up, during rendering, and as the temporary
    file of the atomic write appears (or, if that moment is missed, after completion)."""
    ws = workspace_copy("basic")
    plans: dict[str, float | str] = {"start-up": 0.4, "rendering": 2.5, "writing": "temporary file appears"}
    runs = {}
    previous = {}
    for name in plans:
        folder = tmp_path / name
        folder.mkdir()
        if name == "rendering":  # a report from an earlier run must survive an interrupted one
            previous[name] = tiny_pdf(folder / "X.pdf")
        runs[name] = (start("report", "-w", ws, "--out", folder / "X.pdf"), folder)
    began = time.monotonic()
    killed: dict[str, float] = {}
    while any(p.poll() is None for p, _ in runs.values()) and time.monotonic() - began < 90:
        elapsed = time.monotonic() - began
        for name, (process, folder) in runs.items():
            if name in killed or process.poll() is not None:
                continue
            plan = plans[name]
            due = (
                elapsed >= plan
                if isinstance(plan, float)
                else any(p.name.startswith(".X.pdf.") for p in folder.iterdir())
            )
            if due:
                process.send_signal(signal.SIGKILL)
                killed[name] = round(elapsed, 3)
        time.sleep(0.0005)
    leaked = []
    for name, (process, folder) in runs.items():
        process.wait(timeout=30)
        _, stderr = process.communicate()
        assert "Traceback" not in stderr
        if name in killed:
            assert process.returncode == -signal.SIGKILL
        else:
            assert process.returncode == 0, stderr  # finished before the kill: a complete report
        out = folder / "X.pdf"
        if out.exists():
            pages = assert_complete_pdf(out)
            if name in previous and out.read_bytes() != previous[name]:
                assert pages > 1, "neither the previous report nor a complete new one"
        else:
            assert name not in previous, "the previous report was deleted by an interrupted run"
        temporary, other = leftovers(folder, "X.pdf")
        assert other == [], f"unexpected files after a killed report: {other}"
        leaked += [f"{name}: {t}" for t in temporary]
    assert "start-up" in killed and "rendering" in killed, killed
    # What a SIGKILL left behind is removed by the next command writing in the same folder, whatever
    # it writes, since the owner process is gone; nothing else there is touched.
    for name, (_, folder) in runs.items():
        assert run("rate", "--format", "csv", "--out", folder / "ratings.csv", "-w", ws).exit_code == 0
        temporary, other = leftovers(folder, "X.pdf")
        assert temporary == [], f"{name}: still left behind: {temporary}"
        assert other == ["ratings.csv"], other
    assert all(name == "writing" for name in (entry.split(":")[0] for entry in leaked)), leaked


# --- interrupting `procure evaluate --save` -----------------------------------------------------------------


def history_runs(ws: Path) -> list[dict]:
    result = run("history", "--format", "json", "-w", ws)
    assert result.exit_code == 0, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return json.loads(result.stdout)["runs"]


@pytest.mark.slow
def test_killed_save_leaves_the_history_readable_and_consistent(workspace_copy):
    ws = workspace_copy("basic")
    began = time.monotonic()
    first = subprocess.run(
        [*PROCURE, "evaluate", "--save", "--label", "baseline", "-w", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    duration = time.monotonic() - began  # the kills below fall at shares of a whole run
    assert first.returncode == 0, first.stderr
    database = ws / ".procure" / "history.sqlite"
    journal = database.with_name(database.name + "-journal")
    kills = 0
    # One random moment in each quarter of the whole run (start-up, evaluation, the save: stratified, four
    # reach every stage, which seven drawn over the whole run did only by chance), and the moment the
    # rollback journal appears (inside the transaction); a moment that falls after the process
    # finished does not count as a kill.
    rng = random.Random(29)
    moments: list[float | str] = [(0.05 + 0.95 * (i + rng.random()) / 4) * duration for i in range(4)] + ["journal"]
    saved = 1
    for delay in moments:
        process = start("evaluate", "--save", "--label", f"killed at {delay}", "-w", ws)
        began = time.monotonic()
        while process.poll() is None and time.monotonic() - began < 30:
            if journal.exists() if delay == "journal" else time.monotonic() - began >= delay:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.0002)
        stdout, stderr = process.communicate(timeout=30)
        if process.returncode == -signal.SIGKILL:
            kills += 1
        else:
            assert process.returncode == 0, stderr
            saved += 1  # finished first: its run must be there
        runs = history_runs(ws)
        ids = [r["id"] for r in runs]
        assert ids == sorted(set(ids)) and ids[0] == 1
        assert runs[0]["label"] == "baseline"
        assert len(runs) >= saved, "a run that reported success was lost"
        assert all(r["offers"] == 3 and r["acceptable"] == 2 for r in runs), runs
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for (text,) in db.execute("SELECT evaluation FROM runs"):
            json.loads(text)  # every stored Evaluation is whole
    before = len(history_runs(ws))
    assert saved <= before <= 1 + len(moments)
    again = run("evaluate", "--save", "--label", "after the kills", "-w", ws)
    assert again.exit_code == 0, again.stderr
    runs = history_runs(ws)
    assert len(runs) == before + 1 and runs[-1]["label"] == "after the kills"
    assert run("diff", "1", str(runs[-1]["id"]), "-w", ws).exit_code == 0
    assert kills >= 2, "the processes finished before they could be killed"


# --- concurrent saves ----------------------------------------------------------------------------------


def test_concurrent_evaluate_save_and_reevaluate_all_land(workspace_copy):
    ws = workspace_copy("basic")
    labels = [f"evaluate {i}" for i in range(4)] + [f"reevaluate {i}" for i in range(4)]
    commands = [("evaluate", "--save") if label.startswith("evaluate") else ("reevaluate",) for label in labels]
    processes = [start(*command, "--label", label, "-w", ws) for command, label in zip(commands, labels)]
    results = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        results.append((process.returncode, stdout, stderr))
    for label, (code, stdout, stderr) in zip(labels, results):
        assert code == 0, (label, code, stderr)
        assert "Traceback" not in stdout + stderr
    runs = history_runs(ws)
    assert sorted(r["label"] for r in runs) == sorted(labels), "a concurrent save was lost"
    assert [r["id"] for r in runs] == list(range(1, len(labels) + 1))


# --- a missing optional dependency ------------------------------------------------------------------------


def test_missing_openpyxl_names_what_to_install_for_xlsx(workspace_copy, tmp_path, monkeypatch):
    ws = workspace_copy("basic")
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # import openpyxl now raises ImportError
    out = tmp_path / "out" / "cmp.xlsx"
    result = run("compare", "--format", "xlsx", "--out", out, "-w", ws)
    assert result.exit_code == 2, (result.exit_code, repr(result.exception), result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    assert "openpyxl" in result.stderr and "pip install" in result.stderr
    assert not out.exists() and not out.parent.exists()


def test_missing_openpyxl_leaves_other_commands_working(workspace_copy, tmp_path, monkeypatch):
    ws = workspace_copy("basic")
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    for args in (
        ("validate",),
        ("compare", "--format", "csv"),
        ("compare",),
        ("grade",),
        ("rate", "--format", "json"),
        ("evaluate", "--format", "json"),
    ):
        result = run(*args, "-w", ws)
        assert result.exit_code == 0, (args, result.exit_code, repr(result.exception), result.stderr[-1000:])


def import_available() -> bool:
    from typer.main import get_command

    from procure.cli import app

    return "import" in get_command(app).commands  # type: ignore[attr-defined]


@pytest.mark.skipif(not import_available(), reason="`procure import` does not exist yet")
def test_missing_openpyxl_names_what_to_install_for_xlsx_import(workspace_copy, data_dir, tmp_path, monkeypatch):
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["id", "vendor"])
    book.active.append(["zulu", "Zulu"])
    sheet = tmp_path / "rfp.xlsx"
    book.save(sheet)
    ws = workspace_copy("basic")
    before = sorted(p.name for p in (ws / "offers").iterdir())
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    for args in (("import", sheet, "--out", ws / "offers"), ("import", "--template", tmp_path / "template.xlsx")):
        result = run(*args)
        assert result.exit_code == 2, (args, result.exit_code, repr(result.exception), result.stderr)
        assert "Traceback" not in result.stdout + result.stderr
        assert "openpyxl" in result.stderr
    assert sorted(p.name for p in (ws / "offers").iterdir()) == before
    assert not (tmp_path / "template.xlsx").exists()


@pytest.mark.skipif(not import_available(), reason="`procure import` does not exist yet")
def test_missing_openpyxl_leaves_csv_import_working(workspace_copy, data_dir, tmp_path, monkeypatch):
    ws = workspace_copy("basic")
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    result = run("import", data_dir / "import_rfp.csv", "--out", ws / "offers")
    assert result.exit_code == 0, (result.exit_code, repr(result.exception), result.stderr)
    template = run("import", "--template", tmp_path / "template.csv")
    assert template.exit_code == 0, (template.exit_code, repr(template.exception), template.stderr)


# --- WeasyPrint missing or failing ----------------------------------------------------------------------


def small_html(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Skip the (slow) real report HTML: these tests are about what happens after it, in WeasyPrint.

    Replaced where the report command takes it from, in a module imported before: a module first imported
    while the stub is in place would keep it for the rest of the run (every later report one paragraph)."""
    from procure.render import documents, report

    stub = lambda *args, **kwargs: "<html><body><p>report</p></body></html>"  # noqa: E731
    monkeypatch.setattr(documents, "render_html", stub)
    monkeypatch.setattr(report, "render_html", stub)


def run_main(monkeypatch, capsys, *args: str | Path) -> tuple[int, str, str]:
    """The console entry point as a user runs it (procure.cli.main), in process."""
    from procure import cli

    monkeypatch.setattr(sys, "argv", ["procure", *map(str, args)])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    captured = capsys.readouterr()
    code = exit_info.value.code
    return int(code) if code is not None else 0, captured.out, captured.err


def test_weasyprint_failing_gives_a_clear_message_and_no_file(workspace_copy, tmp_path, monkeypatch, capsys):
    weasyprint = pytest.importorskip("weasyprint")
    ws = workspace_copy("basic")

    def broken(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("layout engine exploded")

    monkeypatch.setattr(weasyprint.HTML, "write_pdf", broken)
    monkeypatch.setattr(weasyprint.HTML, "render", broken)  # the report lays out, then writes
    small_html(monkeypatch)
    out = tmp_path / "out" / "X.pdf"
    code, stdout, stderr = run_main(monkeypatch, capsys, "report", "-w", ws, "--out", out)
    assert code != 0
    assert "Traceback" not in stdout + stderr
    assert not out.exists() and (not out.parent.exists() or list(out.parent.iterdir()) == [])
    assert "layout engine exploded" in stderr
    assert not stderr.startswith("internal error"), stderr
    assert "PDF" in stderr or "WeasyPrint" in stderr, stderr


def test_weasyprint_failing_writes_nothing_and_shows_no_traceback(workspace_copy, tmp_path, monkeypatch, capsys):
    """The minimum whatever the message: non-zero exit, no traceback, no file."""
    weasyprint = pytest.importorskip("weasyprint")
    ws = workspace_copy("basic")
    for step in ("write_pdf", "render"):  # the report lays out, then writes
        monkeypatch.setattr(
            weasyprint.HTML, step, lambda self, *a, **k: (_ for _ in ()).throw(RuntimeError("layout engine exploded"))
        )
    small_html(monkeypatch)
    out = tmp_path / "out" / "X.pdf"
    code, stdout, stderr = run_main(monkeypatch, capsys, "report", "-w", ws, "--out", out)
    assert code != 0 and stderr.strip()
    assert "Traceback" not in stdout + stderr
    assert not out.exists() and (not out.parent.exists() or list(out.parent.iterdir()) == [])


def test_missing_weasyprint_names_what_to_install(workspace_copy, tmp_path, monkeypatch, capsys):
    ws = workspace_copy("basic")
    monkeypatch.setitem(sys.modules, "weasyprint", None)
    out = tmp_path / "X.pdf"
    code, stdout, stderr = run_main(monkeypatch, capsys, "report", "-w", ws, "--out", out)
    assert code != 0
    assert "Traceback" not in stdout + stderr
    assert "WeasyPrint" in stderr and "pip install weasyprint" in stderr and "--format html" in stderr
    assert not out.exists()
    code, _, stderr = run_main(
        monkeypatch, capsys, "report", "--format", "html", "-w", ws, "--out", tmp_path / "X.html"
    )
    assert code == 0, stderr
    assert (tmp_path / "X.html").is_file()


def test_weasyprint_failing_to_load_pango_is_a_clear_message(workspace_copy, tmp_path, monkeypatch, capsys):
    """WeasyPrint raises OSError when the Pango library is missing."""
    import builtins

    ws = workspace_copy("basic")
    real_import = builtins.__import__

    def no_pango(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "weasyprint" or name.startswith("weasyprint."):
            raise OSError("cannot load library 'libpango-1.0-0': simulated")
        return real_import(name, *args, **kwargs)

    small_html(monkeypatch)
    monkeypatch.setattr(builtins, "__import__", no_pango)
    out = tmp_path / "X.pdf"
    code, stdout, stderr = run_main(monkeypatch, capsys, "report", "-w", ws, "--out", out)
    assert code != 0 and "Traceback" not in stdout + stderr
    assert "Pango" in stderr and "apt-get install" in stderr
    assert not out.exists()


# --- a damaged history -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"this is not a database", b"SQLite format 3\x00" + b"\xff" * 4000, b""],
    ids=["text", "garbled-header", "empty"],
)
def test_damaged_history_is_reported_and_left_untouched(workspace_copy, content):
    ws = workspace_copy("basic")
    database = ws / ".procure" / "history.sqlite"
    database.parent.mkdir()
    database.write_bytes(content)
    for args in (("history",), ("evaluate", "--save"), ("reevaluate",), ("diff",)):
        result = run(*args, "-w", ws)
        assert result.exit_code in (0, 2), (args, result.exit_code, repr(result.exception))
        assert "Traceback" not in result.stdout + result.stderr
        if content and result.exit_code == 2:
            assert ".procure/history.sqlite" in result.stderr
    if content:
        assert database.read_bytes() == content, "a damaged history was changed"


def test_newer_history_schema_is_refused_untouched(workspace_copy):
    ws = workspace_copy("basic")
    assert run("evaluate", "--save", "-w", ws).exit_code == 0
    database = ws / ".procure" / "history.sqlite"
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA user_version = 99")
    before = database.read_bytes()
    for args in (("history",), ("evaluate", "--save")):
        result = run(*args, "-w", ws)
        assert result.exit_code == 2 and "newer" in result.stderr and "Traceback" not in result.stderr
    assert database.read_bytes() == before


def test_history_row_with_a_corrupt_evaluation_is_an_error_not_a_crash(workspace_copy):
    ws = workspace_copy("basic")
    assert run("evaluate", "--save", "-w", ws).exit_code == 0
    assert run("evaluate", "--save", "-w", ws).exit_code == 0
    with sqlite3.connect(ws / ".procure" / "history.sqlite") as db:
        db.execute("UPDATE runs SET evaluation = ? WHERE id = 1", ('{"schema_version": "1", "offers": [{"id": "x"}]}',))
    for args in (("diff",), ("diff", "1", "2"), ("reevaluate",), ("history",)):
        result = run(*args, "-w", ws)
        assert result.exit_code in (0, 2, 3), (args, result.exit_code, repr(result.exception))
        assert "Traceback" not in result.stdout + result.stderr
