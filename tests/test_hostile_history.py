"""Hostile history and diff input: labels and stored text never drive the terminal, and an Evaluation
file given to `diff` is held to the rules of every input (finite numbers, each offer once, a size limit).

tests/data/history_base has four offers (alpha, bravo, delta acceptable; charlie not).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, run

from procure.analysis.history import HISTORY_FILE

ESCAPE = "\x1b]0;owned\x07\x1b[2J"  # set the terminal's title, clear the screen


@pytest.fixture
def ws(workspace_copy) -> Path:
    return workspace_copy("history_base")


def evaluation(ws: Path, tmp_path: Path, name: str = "base.json") -> tuple[Path, dict]:
    result = run("compare", "--format", "json", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    path = tmp_path / name
    path.write_text(result.stdout)
    return path, json.loads(result.stdout)


def test_a_label_with_control_characters_is_refused_and_nothing_saved(ws):
    result = run("evaluate", "--save", "--label", f"Nov{ESCAPE}", "-w", ws, "--as-of", AS_OF)
    stderr = assert_error(result, "--label", "control characters", "\\x1b")
    assert "\x1b" not in stderr
    assert not (ws / HISTORY_FILE).exists() or run("history", "-w", ws, "--format", "json").stdout.strip() == "[]"


def test_stored_text_edited_in_the_database_is_shown_with_visible_escapes(ws):
    assert run("evaluate", "--save", "--label", "Nov RFP", "-w", ws, "--as-of", AS_OF).exit_code == 0
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        db.execute("UPDATE runs SET top_offer = ?, label = ?", (f"alpha{ESCAPE}", f"Nov{ESCAPE}"))
    result = run("history", "-w", ws)
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    flat = "".join(result.stdout.replace("│", "").split())  # the table may wrap a long cell
    assert "alpha\\x1b]0;owned\\x07" in flat and "Nov\\x1b]0;owned\\x07" in flat


def test_diff_refuses_an_evaluation_whose_costs_are_not_numbers(ws, tmp_path):
    base, data = evaluation(ws, tmp_path)
    for record in data["offers"]:
        record["metrics"]["cost_per_task"] = float("nan")
    head = tmp_path / "nan.json"
    head.write_text(json.dumps(data))  # json writes NaN, which pydantic reads as a float
    result = run("diff", base, head, "-w", ws)
    assert_error(result, str(head), "offers[0].metrics.cost_per_task", "finite")
    assert "no changes" not in result.stdout


def test_diff_refuses_an_evaluation_listing_an_offer_twice(ws, tmp_path):
    base, data = evaluation(ws, tmp_path)
    count = len(data["offers"])
    data["offers"] = data["offers"] * 500
    head = tmp_path / "repeated.json"
    head.write_text(json.dumps(data))
    result = run("diff", base, head, "-w", ws)
    assert_error(result, str(head), f"offers[{count}].id", "listed twice", "offers[0]")


def test_diff_refuses_an_evaluation_file_over_its_size_limit_before_reading_it(ws, tmp_path):
    # Finding: a 60 MB Evaluation cost 760 MB in diff. 2,200 distinct offers (about 8 kB each here)
    # make a valid Evaluation of about 18 MB: over the 16 MB limit, refused from its size alone.
    base, data = evaluation(ws, tmp_path)
    template = data["offers"][0]
    data["offers"] = [{**template, "id": f"offer-{i}"} for i in range(2200)]
    head = tmp_path / "large.json"
    head.write_text(json.dumps(data, indent=2))
    assert head.stat().st_size > 16 * 1024 * 1024
    started = time.perf_counter()
    result = run("diff", base, head, "-w", ws)
    assert_error(result, str(head), "too large", f"{16 * 1024 * 1024:,}")
    assert time.perf_counter() - started < 2
