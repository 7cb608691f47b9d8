"""A baseline CI keeps: `reevaluate --baseline FILE` in a fresh clone of a workspace's repository, with no
`.procure/`, runs the documented job: unchanged inputs exit 0, a price rise past the limit exits 3, and neither
writes the history nor the baseline; only --accept rewrites the file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from clihelp import AS_OF, assert_error, run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "commands.md"


def documented_job() -> str:
    """The plain-shell CI job of docs/commands.md, as a user copies it."""
    text = DOCS.read_text()
    section = text[text.index("### A baseline CI keeps") :]
    return re.search(r"```sh\n(#!/bin/sh\n.*?)```", section, re.S).group(1)


def procure_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose `procure` is this checkout's, pinned to one evaluation date."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "procure"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m procure "$@" --as-of {AS_OF}\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def fresh_checkout(tmp_path: Path) -> Path:
    """The example workspace committed with its baseline.json, then cloned (or copied, without git)."""
    origin = tmp_path / "origin"
    assert run("init", origin, "--example").exit_code == 0
    accepted = run("reevaluate", "--baseline", origin / "baseline.json", "--accept", "--as-of", AS_OF, "-w", origin)
    assert accepted.exit_code == 0, accepted.stderr
    assert "baseline.json" in accepted.stdout and "commit it" in accepted.stdout
    assert not (origin / ".procure").exists()
    clone = tmp_path / "clone"
    git = shutil.which("git")
    if git:
        quiet = {"capture_output": True, "check": True, "cwd": origin}
        ident = ["-c", "user.name=ci", "-c", "user.email=ci@example.org"]
        subprocess.run([git, "init", "-q"], **quiet)
        subprocess.run([git, "add", "-A"], **quiet)
        subprocess.run([git, *ident, "commit", "-qm", "baseline"], **quiet)
        subprocess.run([git, "clone", "-q", str(origin), str(clone)], capture_output=True, check=True)
    else:
        shutil.copytree(origin, clone)
    assert (clone / "baseline.json").is_file() and not (clone / ".procure").exists()
    return clone


def job(clone: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    script = clone.parent / "job.sh"
    script.write_text(documented_job())
    return subprocess.run(["sh", str(script)], cwd=clone, env=env, capture_output=True, text=True, timeout=300)


def test_the_documented_job_passes_unchanged_inputs_and_fails_a_price_rise_in_a_fresh_clone(tmp_path):
    clone = fresh_checkout(tmp_path)
    env = procure_on_path(tmp_path)
    baseline = (clone / "baseline.json").read_bytes()

    unchanged = job(clone, env)
    assert unchanged.returncode == 0, unchanged.stderr
    assert "No changes" in unchanged.stdout
    assert not (clone / ".procure").exists()

    offer = clone / "offers" / "keel-b200-mc.yaml"
    text = offer.read_text()
    assert "gpu_hour: 4.85" in text
    offer.write_text(text.replace("gpu_hour: 4.85", "gpu_hour: 9.70", 1))  # the list price doubled
    breached = job(clone, env)
    assert breached.returncode == 3, breached.stderr
    assert "keel-b200-mc" in breached.stdout
    assert "baseline stays baseline.json" in breached.stderr
    assert not (clone / ".procure").exists()
    assert (clone / "baseline.json").read_bytes() == baseline  # red until someone accepts
    again = job(clone, env)
    assert again.returncode == 3


def test_accept_rewrites_the_file_and_the_next_run_passes(tmp_path):
    clone = fresh_checkout(tmp_path)
    offer = clone / "offers" / "keel-b200-mc.yaml"
    offer.write_text(offer.read_text().replace("gpu_hour: 4.85", "gpu_hour: 9.70", 1))
    common = ["--baseline", clone / "baseline.json", "--max-increase", "5%", "--as-of", AS_OF, "-w", clone]
    before = json.loads((clone / "baseline.json").read_text())
    assert run("reevaluate", *common).exit_code == 3
    accepted = run("reevaluate", *common, "--accept")
    assert accepted.exit_code == 0, accepted.stderr
    written = json.loads((clone / "baseline.json").read_text())

    def keel_cost(ev: dict) -> float:
        return next(o for o in ev["offers"] if o["id"] == "keel-b200-mc")["metrics"]["cost_per_task"]

    assert keel_cost(written) > keel_cost(before) * 1.05  # the doubled price is the baseline now
    assert run("reevaluate", *common).exit_code == 0
    assert not (clone / ".procure").exists()


def test_a_missing_baseline_file_is_an_error_naming_how_to_write_it(tmp_path):
    ws = tmp_path / "ws"
    assert run("init", ws, "--example").exit_code == 0
    result = run("reevaluate", "--baseline", ws / "baseline.json", "--as-of", AS_OF, "-w", ws)
    assert_error(result, "baseline.json", "no such baseline file", "--accept")
    assert not (ws / "baseline.json").exists() and not (ws / ".procure").exists()
    labelled = run("reevaluate", "--baseline", ws / "b.json", "--accept", "--label", "x", "--as-of", AS_OF, "-w", ws)
    assert_error(labelled, "--label", "nothing is saved")
    assert not (ws / "b.json").exists()


def test_the_json_document_names_the_baseline_file(tmp_path):
    clone = fresh_checkout(tmp_path)
    result = run("reevaluate", "--baseline", clone / "baseline.json", "--format", "json", "--as-of", AS_OF, "-w", clone)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["baseline_file"].endswith("baseline.json")
    assert doc["baseline_run"] is None and doc["saved_run"] is None and doc["changed"] is False
