"""Hostile inputs at the edges of what a command is told: a held offer whose quote has expired, --out naming a
folder or standard output, and report temporary folders owned by a live process."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clihelp import AS_OF, run

from procure.io.example import write_example


def compare(data_dir, *args):
    return run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, *args)


def test_a_signed_offer_whose_quote_expired_is_said_in_words_not_ranked_none(tmp_path):
    ws = tmp_path / "ws"
    write_example(ws)  # what `procure init DIR --example` writes
    offer = ws / "offers" / "keel-b200-mc.yaml"
    offer.write_text(offer.read_text().replace("valid_until: 2027-06-30", "valid_until: 2026-11-20"))
    result = run("compare", "--as-of", "2026-11-29", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "ranked None" not in result.output
    assert "Keel Systems (signed; its quote expired on 2026-11-20, not ranked): " in result.output


def test_out_ending_in_a_slash_is_refused_and_writes_nothing(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = compare(data_dir, "--out", "newdir/")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--out: 'newdir/' names a folder: give a file name (for example newdir/NAME), or - for standard output" in (
        result.output
    )
    assert list(tmp_path.iterdir()) == []


def test_out_naming_an_existing_folder_is_refused(data_dir, tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    result = compare(data_dir, "--out", folder)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{folder}: --out: is a folder: give a file name" in result.output
    assert list(folder.iterdir()) == []


def test_out_dash_is_standard_output(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = compare(data_dir, "--format", "json", "--out", "-")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads(compare(data_dir, "--format", "json").stdout)
    assert list(tmp_path.iterdir()) == []  # no file named "-"


def test_report_out_dash_writes_the_document_to_standard_output(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("report", "-w", data_dir / "basic", "--as-of", AS_OF, "--format", "html", "--out", "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert list(tmp_path.iterdir()) == []
    assert os.path.exists(Path(tmp_path)) and not (tmp_path / "-").exists()


def _fonts_folder(parent: Path, pid: int, started: str | None) -> Path:
    """A report's fonts folder as the process `pid` makes it (its name and its owner file), older than ten minutes."""
    import procure.io.files as fileio

    real = os.getpid
    try:
        os.getpid = lambda: pid  # type: ignore[assignment]
        folder = parent / fileio.temporary_name("procure-fonts")
    finally:
        os.getpid = real  # type: ignore[assignment]
    folder.mkdir()
    (folder / "font.woff2").write_bytes(b"font")
    (folder / ".owner").write_text(f"{pid} {started or '-'}\n")
    os.utime(folder, (0, 0))  # far older than the ten minutes after which an id was once taken as reused
    return folder


def test_a_temporary_folder_of_a_live_process_is_never_removed_however_old(tmp_path):
    import subprocess
    import sys

    import procure.io.files as fileio

    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        working = _fonts_folder(tmp_path, live.pid, fileio._started(live.pid))
        # an id reused by another process: the start time recorded is not the live process's
        reused = _fonts_folder(tmp_path, live.pid, "1")
        killed = _fonts_folder(tmp_path, dead.pid, "1")
        removed = fileio.remove_abandoned(tmp_path)
        # before: all three removed (older than ten minutes), the live report's fonts with them
        assert working.exists() and (working / "font.woff2").read_bytes() == b"font"
        expected = [reused, killed] if fileio._started(live.pid) else [killed]  # no start times: the id alone
        assert sorted(removed) == sorted(expected)
        assert not killed.exists()
    finally:
        live.kill()
        live.wait()


def test_a_report_records_its_owner_in_its_fonts_folder(tmp_path, monkeypatch):
    import tempfile

    import procure.io.files as fileio
    from procure.render.assemble import LayoutWorkers

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with LayoutWorkers(count=1) as workers:
        folder = Path(workers.folder)
        assert folder.parent == tmp_path
        pid, started = (folder / ".owner").read_text().split()
        assert int(pid) == os.getpid() and started == (fileio._started(os.getpid()) or "-")
        assert fileio._owner_alive(str(folder)) is True
    assert not folder.exists()
