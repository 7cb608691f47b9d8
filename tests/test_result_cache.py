"""A repeated `procure compare` is answered from the result cache (procure/io/resultcache.py): the same bytes and exit
status, without the libraries; any changed input byte, or an entry someone else edited, gives the fresh answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA_DIR

PROBE = """
import atexit, json, sys
where = sys.argv[1]
atexit.register(lambda: open(where, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["procure"] + json.loads(sys.argv[2])
from procure.front import main
main()
"""
HEAVY = ("numpy", "pandas", "pydantic", "scipy")
ARGS = ["compare", "--as-of", "2026-11-29"]

pytestmark = pytest.mark.slow


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The basic workspace's inputs in a folder of their own (three offers: a compare takes a second of CPU where the
    example's takes six, its plan solved afresh in every cache folder; the cache keeps either the same way)."""
    root = tmp_path / "ws"
    shutil.copytree(DATA_DIR / "basic", root)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    found = dict(os.environ)
    found.update({"PROCURE_CACHE_DIR": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")})
    return found


def run(ws: Path, env: dict[str, str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, set[str]]:
    modules = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(modules), json.dumps(ARGS)],
        cwd=ws,
        env=env,
        capture_output=True,
        timeout=300,
    )
    return done, set(json.loads(modules.read_text()))


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HEAVY}


def entries(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["PROCURE_CACHE_DIR"]).glob("*.answer"))


def test_a_repeated_compare_answers_the_same_without_the_libraries(ws, env, tmp_path):
    first, loaded = run(ws, env, tmp_path)
    assert first.returncode == 0 and b"Bravo Metal" in first.stdout
    assert heavy(loaded)  # computed: the libraries were needed
    assert len(entries(env)) == 1
    again, loaded = run(ws, env, tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)
    assert heavy(loaded) == set()
    assert "typer" not in {m.split(".")[0] for m in loaded}


def test_a_changed_input_byte_gives_the_fresh_answer(ws, env, tmp_path):
    first, _ = run(ws, env, tmp_path)
    offer = ws / "offers" / "alpha.yaml"
    text = offer.read_text()
    assert "gpu_hour: 4.00" in text
    offer.write_text(text.replace("gpu_hour: 4.00", "gpu_hour: 4.10"))  # one byte
    changed, loaded = run(ws, env, tmp_path)
    assert heavy(loaded)  # computed afresh
    fresh = subprocess.run(
        [sys.executable, "-m", "procure", *ARGS], cwd=ws, env={**env, "PROCURE_CACHE_DIR": ""}, capture_output=True
    )
    assert changed.stdout == fresh.stdout and changed.stdout != first.stdout
    assert len(entries(env)) == 2


def test_an_edited_entry_is_ignored(ws, env, tmp_path):
    first, _ = run(ws, env, tmp_path)
    (entry,) = entries(env)
    data = bytearray(entry.read_bytes())
    at = data.find(b"Bravo Metal")
    assert at > 0
    data[at : at + 5] = b"FAKED"  # the stored answer changed, its authentication not
    entry.write_bytes(bytes(data))
    again, loaded = run(ws, env, tmp_path)
    assert heavy(loaded)  # not served: computed afresh
    assert again.stdout == first.stdout and b"FAKED" not in again.stdout


def test_a_cache_folder_that_cannot_be_written_changes_nothing(ws, env, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    env["PROCURE_CACHE_DIR"] = str(blocked)
    first, _ = run(ws, env, tmp_path)
    again, loaded = run(ws, env, tmp_path)
    assert first.returncode == again.returncode == 0
    assert again.stdout == first.stdout and again.stderr == first.stderr == b""
    assert heavy(loaded)


def test_an_answer_written_to_a_file_is_not_kept(ws, env, tmp_path):
    out = tmp_path / "ranked.csv"
    done = subprocess.run([sys.executable, "-m", "procure", *ARGS, "--out", str(out)], cwd=ws, env=env, timeout=300)
    assert done.returncode == 0 and out.is_file()
    assert entries(env) == []
