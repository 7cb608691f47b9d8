"""Tables fit the terminal: at 80, 120 and 200 columns (COLUMNS set) no line is wider, numbers and
ids are never split, and the columns left out are named with how to see them all."""

from __future__ import annotations

import json

import pytest
from clihelp import AS_OF
from rich.cells import cell_len
from typer.testing import CliRunner

from procure.cli import app

TABLE_COMMANDS = [
    ("compare",),
    ("compare", "--uncertainty", "--draws", "200"),
    ("rate",),
    ("hedge",),
    ("sensitivity",),
    ("cashflow",),
    ("cashflow", "--offer", "keel-b200-mc"),
    ("grade",),
    ("grade", "--offer", "keel-b200-mc"),
    ("position",),
    ("whatif", "--price-to-win"),
    ("whatif", "--offer", "keel-b200-mc", "--throughput", "+50%"),
    ("index", "build", "market/quotes.csv", "--format", "table"),
    ("history",),
    ("diff",),
]


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The packaged example workspace (11 offers), with two saved runs for history and diff."""
    ws = tmp_path_factory.mktemp("width") / "ws"
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(ws)]).exit_code == 0
    for day in ("2026-11-01", AS_OF):
        assert runner.invoke(app, ["evaluate", "--save", "--as-of", day, "-w", str(ws)]).exit_code == 0
    return ws


def at_width(ws, columns: int, *args: str) -> str:
    args = tuple(str(ws / a) if a.endswith(".csv") else a for a in args)
    as_of = () if args[0] in ("history", "diff", "index", "grade") else ("--as-of", AS_OF)
    result = CliRunner().invoke(app, [*args, *as_of, "-w", str(ws)], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
@pytest.mark.parametrize("args", TABLE_COMMANDS, ids=" ".join)
def test_no_line_is_wider_than_the_terminal(example, columns, args):
    lines = at_width(example, columns, *args).splitlines()
    assert lines
    assert max(cell_len(line) for line in lines) <= columns


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
def test_compare_never_splits_an_id_or_a_cost(example, columns):
    text = at_width(example, columns, "compare")
    evaluation = json.loads(CliRunner().invoke(app, ["compare", "-f", "json", "--as-of", AS_OF, "-w", str(example)]).stdout)
    lines = text.splitlines()
    for offer in evaluation["offers"]:
        line = next((line for line in lines if f" {offer['id']} " in line), None)
        assert line is not None, offer["id"]  # the whole id on one line
        cost = offer["metrics"]["cost_per_task"]
        if cost is not None:
            assert f"{cost * 1000:.2f}" in line  # per 1,000 tasks, two decimals, as printed; whole, beside its id


def test_compare_at_80_columns_names_what_it_left_out_and_fits_one_line_per_offer(example):
    text = at_width(example, 80, "compare")
    assert "left out to fit 80 columns: Vendor" in text
    assert "--wide, or every figure and the full text with --format json" in " ".join(text.split())
    # 11 offers: each acceptable one on one line; the table and its notes stay within 40 lines (was 119), below the
    # recommendation's few lines (it names the plan's vendors and leaves its lines to `procure plan`).
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Cost per 1,000 successful tasks" in line)
    assert lines[0].startswith("Recommended: the plan") and start <= 4
    assert len(lines) - start <= 40


def test_compare_at_200_columns_leaves_nothing_out(example):
    text = at_width(example, 200, "compare")
    assert "left out" not in text and "Vendor" in text and "USD/M" in text  # headers may wrap at spaces


def test_wide_shows_every_column_at_80(example):
    text = at_width(example, 80, "compare", "--wide")
    assert "left out" not in text
    lines = text.splitlines()
    assert lines[0].startswith("Recommended: ")  # the recommendation first, then the table
    start = next(i for i, line in enumerate(lines) if "Cost per 1,000 successful tasks" in line)
    header = " ".join(lines[start + 1:start + 6])
    assert "Vendor" in header


def test_rate_at_80_keeps_the_score_and_tier_whole(example):
    text = at_width(example, 80, "rate")
    line = next(line for line in text.splitlines() if " halvard-b200-ms " in line)
    assert " 98.7 " in line and "Platinum" in line


def test_a_file_gets_every_column(example, tmp_path):
    out = tmp_path / "cmp.txt"
    CliRunner().invoke(app, ["compare", "--as-of", AS_OF, "-w", str(example), "--out", str(out)], env={"COLUMNS": "80"})
    assert "Vendor" in out.read_text() and "left out" not in out.read_text()


@pytest.mark.slow  # the plan's solver takes seconds
def test_plan_fits_80_columns(example):
    text = at_width(example, 80, "plan")
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    assert "left out to fit 80 columns: Vendor" in text
    assert " keel-b200-mc " in text  # ids whole


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_every_offer_is_one_line_and_a_reason_is_cut_not_wrapped(example, columns):
    text = at_width(example, columns, "compare")
    evaluation = json.loads(CliRunner().invoke(app, ["compare", "-f", "json", "--as-of", AS_OF, "-w", str(example)]).stdout)
    body = [line for line in text.splitlines() if line.startswith("│")]
    assert len(body) == len(evaluation["offers"])  # one line per offer: nothing wraps
    failing = [o for o in evaluation["offers"] if not o["acceptable"]]
    assert failing
    for offer in failing:
        line = next(line for line in body if f" {offer['id']} " in line)
        reason = offer["reasons"][0]
        assert reason in line or reason[:10] in line and "…" in line  # whole, or its start and an ellipsis
    if any("…" in line for line in body):
        assert "Reasons cut to one line." in text


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_ranges_keep_p50_and_then_p10_and_p90_before_the_reason(example, columns):
    text = at_width(example, columns, "compare", "--uncertainty", "--draws", "200")
    header = " ".join(line for line in text.splitlines() if line.startswith("┃"))
    assert "USD/1k" in header and "P50" in header and " Offer " in header
    if columns >= 80:
        assert "P10" in header and "P90" in header  # at 80 the range stays and the reason goes
    if "Reason" in header:
        assert "P10" in header and "P(cheapest)" in header  # the reason is never kept over a range figure
