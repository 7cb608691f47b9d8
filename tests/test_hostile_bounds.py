"""Hostile inputs at the edges of what a command is told: a held offer whose quote has expired, --out naming a
folder or standard output, and report temporary folders owned by a live process."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clihelp import AS_OF, run


def compare(data_dir, *args):
    return run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, *args)


def test_a_signed_offer_whose_quote_expired_is_said_in_words_not_ranked_none(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", ws, "--example").exit_code == 0
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
