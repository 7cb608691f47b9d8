"""One text gate, and history rows checked like files.

Line and paragraph separators (U+2028, U+2029) start a line of their own in a terminal, a Markdown
viewer, a browser or a PDF: in vendor text they are refused at validation like control characters;
in anything echoed (notes, warnings, problems) or rendered (the HTML/PDF templates) they are shown as
visible escapes. A saved run read back from the history is held to the rules of an Evaluation file
(finite numbers, each offer once, known fields, no control characters) before any diff.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, edit, run
from refusals import refused, validate

from procure import textsafe
from procure.analysis.history import HISTORY_FILE

FORGED = "Alpha Cloud\u2028APPROVED BY THE BOARD, 2026-11-30"
ESCAPE = "\x1b]0;owned\x07\x1b[2J"  # set the terminal's title, clear the screen
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029"])
def test_a_line_separator_in_a_vendor_name_is_refused_at_validation(workspace_copy, separator):
    ws = workspace_copy("basic")
    edit(
        ws, "offers/alpha.yaml", "vendor: Alpha Cloud", f"vendor: {json.dumps(FORGED.replace(chr(0x2028), separator))}"
    )
    stderr = refused(validate(ws), "offers/alpha.yaml:2: vendor:", f"holds a line break (U+{ord(separator):04X})")
    assert not RAW.search(stderr)


def test_a_paragraph_separator_in_offer_notes_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "region: us-east", 'region: us-east\nnotes: "fine\u2029APPROVED"')
    refused(validate(ws), "offers/alpha.yaml", "notes", "holds a line break (U+2029)")


def test_printable_and_markdown_show_separators_as_escapes():
    assert textsafe.printable("a\u2028b\u2029c") == "a\\u2028b\\u2029c"
    assert "\u2028" not in textsafe.markdown_text(FORGED)
    assert textsafe.unsafe_characters(FORGED) == "line or paragraph separators (U+2028, U+2029)"
    # several lines of one message keep their line feeds; each line is made printable
    assert textsafe.printable_lines("x\x1b[2J\ny\u2028z") == "x\\x1b[2J\ny\\u2028z"


def test_the_html_templates_show_separators_and_controls_as_escapes():
    from markupsafe import Markup

    from procure.render.documents import _environment, templates_dir

    env = _environment(templates_dir())
    page = env.from_string("<p>{{ name }}</p><p>{{ safe }}</p>").render(
        name=FORGED + ESCAPE, safe=Markup("<b>ok\u2029</b>")
    )
    assert not RAW.search(page)
    assert "Alpha Cloud\\u2028APPROVED" in page and "\\x1b]0;owned\\x07" in page
    assert "<b>ok\\u2029</b>" in page  # markup already escaped stays markup


def snapshot(folder: Path, name: str, tokens: float, model: str) -> Path:
    path = folder / name
    path.write_text(
        f'# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{model_name="{model}"}} {tokens}\n',
        encoding="utf-8",
    )
    return path


def test_note_lines_show_label_values_and_file_names_escaped(workspace_copy, tmp_path):
    # A counter that falls is a reset, stated in a note naming the series with its labels: the
    # model_name label carries a terminal title sequence and a screen clear.
    ws = workspace_copy("basic")
    folder = tmp_path / f"snap{ESCAPE}"
    folder.mkdir()
    first = snapshot(folder, "2026-11-01T00:00:00Z.prom", 100, f"m{ESCAPE}")
    second = snapshot(folder, "2026-11-01T00:01:00Z.prom", 5, f"m{ESCAPE}")
    result = run("actuals", "import", first, second, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.stderr
    assert "note: " in result.stderr and "counter reset" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert 'model_name="m\\x1b]0;owned\\x07\\x1b[2J"' in result.stderr


# --- history rows ------------------------------------------------------------------------------


@pytest.fixture
def ws(workspace_copy) -> Path:
    return workspace_copy("history_base")


def save(ws: Path) -> None:
    result = run("evaluate", "--save", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr


def rewrite_run(ws: Path, run_id: int, change) -> None:  # type: ignore[no-untyped-def]
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        (text,) = db.execute("SELECT evaluation FROM runs WHERE id = ?", (run_id,)).fetchone()
        data = json.loads(text)
        change(data)
        db.execute("UPDATE runs SET evaluation = ? WHERE id = ?", (json.dumps(data), run_id))  # json writes NaN as NaN


def saved_ids(ws: Path) -> list[int]:
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        return [r[0] for r in db.execute("SELECT id FROM runs ORDER BY id")]


def test_a_nan_baseline_does_not_hide_a_94_percent_price_rise(ws):
    save(ws)

    def nan_costs(data: dict) -> None:
        for record in data["offers"]:
            record["metrics"]["cost_per_task"] = float("nan")

    rewrite_run(ws, 1, nan_costs)
    edit(ws, "offers/alpha.yaml", "gpu_hour: 4.00", "gpu_hour: 7.76")  # 4.00 x 1.94
    result = run("reevaluate", "--max-increase", "5%", "-w", ws, "--as-of", AS_OF)
    assert_error(result, ".procure/history.sqlite run 1", "offers[0].metrics.cost_per_task", "finite")
    assert saved_ids(ws) == [1]  # the baseline did not move
    assert "no changes" not in result.stdout.lower()


def test_a_history_row_listing_an_offer_twice_is_refused_not_read_as_no_changes(ws):
    save(ws)
    save(ws)

    def doubled(data: dict) -> None:
        data["offers"] = data["offers"] * 2

    rewrite_run(ws, 2, doubled)
    result = run("diff", "1", "2", "-w", ws)
    assert_error(result, ".procure/history.sqlite run 2", "offers[4].id", "listed twice")
    assert "no changes" not in result.stdout.lower()


def test_diff_of_history_rows_never_prints_an_ids_escape_sequences_raw(ws):
    save(ws)
    save(ws)

    def escaped(data: dict) -> None:
        data["offers"][0]["id"] = f"alpha{ESCAPE}"

    rewrite_run(ws, 2, escaped)
    result = run("diff", "1", "2", "-w", ws)
    stderr = assert_error(result, ".procure/history.sqlite run 2", "offers[0].id", "control characters")
    assert "\x1b" not in result.stdout + stderr


def test_a_history_row_with_a_field_this_procure_does_not_know_is_refused(ws):
    save(ws)
    save(ws)

    def unknown(data: dict) -> None:
        data["offers"][1]["metrics_override"] = {"cost_per_task": 0.0}

    rewrite_run(ws, 1, unknown)
    assert_error(
        run("diff", "1", "2", "-w", ws), ".procure/history.sqlite run 1", "offers.1.metrics_override", "unknown field"
    )
