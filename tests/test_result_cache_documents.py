"""A repeated `procure report` is answered from the result cache (procure/io/resultcache.py): the same document, byte
for byte, written again without the libraries; a changed input gives the fresh document; a kept document that cannot
be written again is not served, and the command says why as it would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from conftest import ROOT

from procure.environment import Environment, using
from procure.io import resultcache

PROBE = """
import atexit, json, sys
where = sys.argv[1]
atexit.register(lambda: open(where, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["procure"] + json.loads(sys.argv[2])
from procure.front import main
main()
"""
HEAVY = ("numpy", "pandas", "pydantic", "scipy", "weasyprint")
COMPUTED = {"numpy", "pydantic", "scipy"}  # what the memo is worked out with (its HTML needs no pandas)
MEMO = ["report", "--board", "--as-of", "2026-11-29", "--format", "html", "-o", "memo.html"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The example's inputs in a folder of their own."""
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(ROOT / "procure.yaml", root)
    for folder in ("offers", "grades", "performance", "market", "actuals"):
        shutil.copytree(ROOT / folder, root / folder)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    found = dict(os.environ)
    found.update(
        {
            "PROCURE_CACHE_DIR": str(tmp_path / "cache"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "SOURCE_DATE_EPOCH": "1764374400",  # a reproducible document: a fresh one is byte for byte the kept one
        }
    )
    return found


def run(ws: Path, env: dict[str, str], tmp_path: Path, args: list[str]) -> tuple[subprocess.CompletedProcess, set]:
    modules = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(modules), json.dumps(args)], cwd=ws, env=env, capture_output=True, timeout=300
    )
    return done, {m.split(".")[0] for m in json.loads(modules.read_text())}


@pytest.mark.slow
def test_a_repeated_report_writes_the_same_document_without_the_libraries(ws, env, tmp_path):
    first, loaded = run(ws, env, tmp_path, MEMO)
    assert first.returncode == 0, first.stderr
    assert COMPUTED <= loaded  # computed: the libraries were needed
    written = (ws / "memo.html").read_bytes()
    assert b"decision memo" in written
    (ws / "memo.html").unlink()

    again, loaded = run(ws, env, tmp_path, MEMO)
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr)
    assert b"wrote memo.html" in again.stderr
    assert (ws / "memo.html").read_bytes() == written  # written again, byte for byte
    assert not loaded & {*HEAVY, "typer", "jinja2"}

    (offer,) = (ws / "offers").glob("keel*.yaml")  # the offer the memo asks the board to sign
    offer.write_text(offer.read_text().replace("gpu_hour: 4.85", "gpu_hour: 4.95"))  # one input byte
    changed, loaded = run(ws, env, tmp_path, MEMO)
    assert changed.returncode == 0 and COMPUTED <= loaded  # computed afresh
    fresh = subprocess.run(
        [sys.executable, "-m", "procure", *MEMO[:-1], "fresh.html"],
        cwd=ws,
        env={**env, "PROCURE_CACHE_DIR": ""},
        capture_output=True,
        timeout=300,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert (ws / "memo.html").read_bytes() == (ws / "fresh.html").read_bytes() != written


@pytest.mark.slow
def test_a_kept_document_that_cannot_be_written_is_not_served(ws, env, tmp_path):
    first, _ = run(ws, env, tmp_path, MEMO)
    assert first.returncode == 0
    (ws / "memo.html").unlink()
    (ws / "memo.html").mkdir()  # the document's place is now a folder
    again, loaded = run(ws, env, tmp_path, MEMO)
    assert again.returncode == 2
    assert b"is a folder: give a file name" in again.stderr and b"Traceback" not in again.stderr
    assert "typer" in loaded  # the command ran, and said why
    assert (ws / "memo.html").is_dir() and list((ws / "memo.html").iterdir()) == []


def test_a_report_is_keyed_by_the_day_it_is_prepared_whatever_its_as_of(ws, monkeypatch):
    """The cover gives the day the document was prepared, so tomorrow's report is not today's; a dated compare names
    no such day and keeps its answer."""

    class Tomorrow(date):
        @classmethod
        def today(cls) -> date:
            return date.fromordinal(date.today().toordinal() + 1)

    monkeypatch.chdir(ws)
    with using(Environment({})):
        report, compare = resultcache.key_for(MEMO), resultcache.key_for(["compare", "--as-of", "2026-11-29"])
        monkeypatch.setattr(resultcache, "date", Tomorrow)
        assert resultcache.key_for(MEMO) != report
        assert resultcache.key_for(["compare", "--as-of", "2026-11-29"]) == compare
        assert report is not None and compare is not None


def test_a_kept_document_is_authenticated_with_its_answer(tmp_path):
    environment = Environment({"PROCURE_CACHE_DIR": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "s")})
    key = "ab" * 32
    document = (tmp_path / "board.pdf", b"%PDF-1.7 the memo")
    with using(environment):
        resultcache.store(key, 0, b"", b"wrote board.pdf\n", [document])
        assert resultcache.load(key) == (0, b"", b"wrote board.pdf\n", [document])
        (entry,) = (tmp_path / "cache").glob("*.answer")
        entry.write_bytes(entry.read_bytes().replace(b"the memo", b"THE MEMO"))  # the document changed, its MAC not
        assert resultcache.load(key) is None


def test_a_compare_written_to_a_file_is_still_not_kept_and_a_report_is(ws, monkeypatch):
    monkeypatch.chdir(ws)
    with using(Environment({})):
        assert resultcache.key_for(["compare", "--out", "ranked.csv"]) is None
        assert resultcache.key_for(["compare", "-oranked.csv"]) is None
        assert resultcache.key_for(["report", "--out", "board.pdf"]) is not None
        assert resultcache.key_for(["report", "--help"]) is None
        assert resultcache.key_for(["plan"]) is None  # a command whose answers are not kept
