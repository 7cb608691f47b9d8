"""Tables fit the terminal: at 80, 120 and 200 columns (COLUMNS set) no line is wider, numbers and
ids are never split, and the columns left out are named with how to see them all."""

from __future__ import annotations

import functools
import json
from pathlib import Path

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
    assert runner.invoke(app, ["init", str(ws), "--example"]).exit_code == 0
    for day in ("2026-11-01", AS_OF):
        assert runner.invoke(app, ["evaluate", "--save", "--as-of", day, "-w", str(ws)]).exit_code == 0
    return ws


def at_width(ws, columns: int, *args: str) -> str:
    """What a command prints at `columns` (each command and width run once in this module: the
    output depends on nothing else)."""
    return _at_width(str(ws), columns, args)


@functools.cache
def _at_width(root: str, columns: int, args: tuple[str, ...]) -> str:
    ws = Path(root)
    args = tuple(str(ws / a) if a.endswith(".csv") else a for a in args)
    as_of = () if args[0] in ("history", "diff", "index", "grade") else ("--as-of", AS_OF)
    # a tall screen: these tests are about widths; tests/test_screens.py holds the 24-line fold
    result = CliRunner().invoke(app, [*args, *as_of, "-w", str(ws)], env={"COLUMNS": str(columns), "LINES": "200"})
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
    evaluation = json.loads(
        CliRunner().invoke(app, ["compare", "-f", "json", "--as-of", AS_OF, "-w", str(example)]).stdout
    )
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
    assert "All: --wide; some: --columns NAME,...; every figure: --format json." in " ".join(text.split())
    # 11 offers: each acceptable one on one line; the table and its notes stay within 40 lines (was 119), below the
    # recommendation's few lines (it names the plan's vendors, with two of them each one's GPUs, months and price, five
    # lines at 80 columns; with more it leaves the lines to `procure plan`).
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Cost per 1,000 successful tasks" in line)
    assert lines[0].startswith("Recommended: the plan") and start <= 5
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
    header = " ".join(lines[start + 1 : start + 6])
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
    evaluation = json.loads(
        CliRunner().invoke(app, ["compare", "-f", "json", "--as-of", AS_OF, "-w", str(example)]).stdout
    )
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


def headers(text: str) -> list[list[str]]:
    """Each table's column headers as printed, a header's wrapped lines joined ("Price USD/GPU-h")."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("┃"):
            cells = [c.strip() for c in line.strip("┃").split("┃")]
            if current is None or len(current) != len(cells):
                current = [[] for _ in cells]
                tables.append(current)
            for parts, cell in zip(current, cells):
                if cell:
                    parts.append(cell)
        else:
            current = None
    return [[" ".join(parts) for parts in table] for table in tables]


# What each table keeps at 60, 80 and 120 columns: its id, its decision figures and their units
# (a pattern per header: a cost per task reads USD/1k tasks, per 1,000 successful tasks).
COST = r"USD/1k tasks"
KEPT = [
    (("compare",), [r"Rank", r"Offer", COST]),
    # --uncertainty asked for the ranges: the median outlasts the reason, the spread follows from 80 columns
    (("compare", "--uncertainty", "--draws", "200"), [r"Rank", r"Offer", COST, r"OK", r"P50"]),
    (("rate",), [r"Offer", r"Score", r"Tier"]),
    (("sensitivity",), [r"Input", r"Low", r"High"]),
    (("cashflow",), [r"Offer", COST + r" over horizon"]),
    (("cashflow", "--offer", "keel-b200-mc"), [r"Month", r"total"]),
    (("grade",), [r"Offer", r"Grade"]),
    (("grade", "--offer", "keel-b200-mc"), [r"Requirement", r"Offer states", r"Result"]),
    (("position",), [r"Who", r"Per 1k tasks"]),
    (("hedge",), [r"Months", r"Contracts"]),
    (("whatif", "--offer", "keel-b200-mc", "--throughput", "+50%"), [r"Figure", r"Before", r"After"]),
    (("index", "build", "market/quotes.csv", "--format", "table"), [r"Period", r"Level"]),
    (("scorecard",), [r"offer", r"month", r"credits owed USD"]),
    (("whatif", "--price-to-win"), [r"Offer", r"List USD/GPU-h", r"Price to tie USD/GPU-h"]),
    (("history",), [r"Run", r"Saved \(UTC\)", r"Top offer"]),
    (("diff",), [r"Offer", r"Status", r"Change"]),
]
# ... and what more each keeps from 80 columns on.
KEPT_FROM_80 = {
    ("compare", "--uncertainty", "--draws", "200"): [r"P10", r"P90"],
    ("sensitivity",): [r"Largest swing \(USD/1k tasks\)", r"Ranking flips"],
    ("cashflow",): [r"Total USD", r"Commitment USD"],
    ("whatif", "--price-to-win"): [COST, r"Change"],
    ("history",): [r"As of", r"Cost per 1k tasks"],
}


def has(table_headers: list[str], pattern: str) -> bool:
    import re

    return any(re.fullmatch(pattern, h) for h in table_headers)


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("args,kept", KEPT, ids=[" ".join(a) for a, _ in KEPT])
def test_each_table_keeps_its_id_decision_figures_and_units(example, columns, args, kept):
    text = at_width(example, columns, *args)
    first = headers(text)[0]
    wanted = kept + (KEPT_FROM_80.get(args, []) if columns >= 80 else [])
    assert [p for p in wanted if not has(first, p)] == [], first
    if len(first) < len(headers(at_width(example, 200, *args))[0]):
        assert f"left out to fit {columns} columns" in text  # what went is named


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_ranges_keep_the_decision_columns_and_drop_p10_p90_together(example, columns):
    text = at_width(example, columns, "compare", "--uncertainty", "--draws", "200")
    first = headers(text)[0]
    # an offer that is not acceptable says so at any width; the ranges asked for outlast the reason
    assert {"Offer", "OK", "P50"} <= set(first)
    assert ("P10" in first) == ("P90" in first)  # never half a range
    if columns >= 80:
        assert {"P10", "P90"} <= set(first)
    if columns >= 120:
        assert {"P10", "P90", "P(cheapest)", "P(fail)", "Reason"} <= set(first)
    line = next(line for line in text.splitlines() if " quarry-b200-mc " in line)  # the cheapest, not acceptable
    assert " no " in line and ("security" in line or columns < 120)


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_the_uncertainty_method_takes_two_lines_and_promises_only_what_is_shown(example, columns):
    text = at_width(example, columns, "compare", "--uncertainty", "--draws", "200")
    start = text.index("Uncertainty:")
    method = text[start:].split("\n")
    end = next(
        i for i, line in enumerate(method) if "left out" in line or not line.strip() or line.startswith("Keel Systems")
    )  # the usage line follows
    assert end <= 2  # "200 draws, seed 7" and where the method is: not a 21-line paragraph
    assert "probability of failing" not in text  # the column is P(fail), shown from 120 columns and in JSON


@pytest.mark.slow  # the plan's solver takes seconds
def test_plan_keeps_months_at_60_80_and_120(example):
    for columns in (60, 80, 120):
        plan, scenarios = headers(at_width(example, columns, "plan"))[:2]
        # the price cells carry their unit ("4.85 USD/GPU-h", "12.50 USD/1k tasks"), or the header does when every line
        # is priced per GPU-hour ("Price USD/GPU-h"): too wide beside the rest at 60
        assert {"Offer", "GPUs", "Months"} <= set(plan) and (
            columns == 60 or any(h.startswith("Price") for h in plan)
        ), (columns, plan)
        assert "Scenario" in scenarios


def split_ids(text: str, ids: list[str]) -> list[str]:
    """Cells whose last word is the start of an offer id but not the id (cut with … or folded)."""
    found = []
    for line in text.splitlines():
        for cell in line.strip("│┃").split("│"):
            words = cell.replace("(", " ").replace(")", " ").split()
            last = words[-1].rstrip("…") if words else ""
            if len(last) >= 6 and last not in ids and any(i.startswith(last) for i in ids):
                found.append(cell.strip())
    return found


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("args", [a for a in TABLE_COMMANDS if a[0] not in ("index",)], ids=" ".join)
def test_no_offer_id_is_split(example, columns, args):
    ids = [p.stem for p in (example / "offers").glob("*.yaml")]
    assert split_ids(at_width(example, columns, *args), ids) == []


def test_columns_chooses_and_orders_and_wide_shows_all(example):
    text = at_width(example, 60, "compare", "--uncertainty", "--draws", "200", "--columns", "offer,p90,p10,reason")
    assert headers(text)[0] == ["Offer", "P90", "P10", "Reason"]  # in the order asked, none dropped
    assert "left out" not in text
    wide = at_width(example, 60, "sensitivity", "--wide")
    assert "left out" not in wide and any(h.startswith("Leader at low") for h in headers(wide)[0])


def test_an_unknown_column_is_named_with_the_nearest_and_the_list(example):
    result = CliRunner().invoke(app, ["rate", "--columns", "offer,tiers", "--as-of", AS_OF, "-w", str(example)])
    assert result.exit_code == 2
    assert "--columns: no column named 'tiers'; did you mean tier?" in result.stderr
    assert "(columns: offer, vendor, score, tier," in result.stderr and result.stdout == ""


def test_columns_is_refused_with_a_format_that_carries_every_column(example):
    result = CliRunner().invoke(
        app, ["rate", "--columns", "offer", "--format", "csv", "--as-of", AS_OF, "-w", str(example)]
    )
    assert (
        result.exit_code == 2 and "--columns: chooses the columns of a table; csv carries every column" in result.stderr
    )


@pytest.mark.parametrize(
    "args", [["rate", "--format", "json"], ["compare", "--out", "ranking.csv"], ["sensitivity", "--format", "markdown"]]
)
def test_wide_is_refused_with_a_format_that_carries_every_column(example, args, tmp_path):
    result = CliRunner().invoke(
        app,
        [
            *args[:1],
            "--wide",
            *[str(tmp_path / a) if a.endswith(".csv") else a for a in args[1:]],
            "--as-of",
            AS_OF,
            "-w",
            str(example),
        ],
    )
    assert (
        result.exit_code == 2
        and "--wide: shows every column of a table;" in result.stderr
        and "carries every column" in result.stderr
    )
    assert result.stdout == "" and not (tmp_path / "ranking.csv").exists()


def test_columns_is_refused_where_csv_is_the_default(example):
    result = CliRunner().invoke(
        app, ["index", "build", str(example / "market" / "quotes.csv"), "--columns", "period", "-w", str(example)]
    )
    assert result.exit_code == 2 and "csv carries every column" in result.stderr and result.stdout == ""


def test_a_table_cut_to_one_narrow_column_keeps_its_title_on_one_line(example):
    # "Score" is 5 characters wide, the title "Operator ratings" 16: the title once wrapped
    # ("Operator" / "ratings", and "successf" / "ul" for compare's); the table now widens to hold it.
    out = at_width(example, 80, "rate", "--columns", "score")
    assert out.splitlines()[0].strip() == "Operator ratings"


# Above the fold of a 24-line terminal: what each command prints at 80 columns on the example.
FITS_24 = [("whatif", "--price-to-win"), ("scorecard",)]


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("args", FITS_24, ids=" ".join)
def test_fits_a_24_line_terminal(example, columns, args):
    assert len(at_width(example, columns, *args).splitlines()) <= 24


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize("args", [("cashflow",), ("cashflow", "--offer", "own-b200-colo")], ids=" ".join)
def test_notes_take_at_most_three_lines(example, columns, args):
    as_of = ("--as-of", AS_OF)
    text = (
        CliRunner()
        .invoke(app, [*args, *as_of, "-w", str(example)], env={"COLUMNS": str(columns), "LINES": "24"})
        .stdout
    )
    lines = text.splitlines()
    notes = [i for i, line in enumerate(lines) if line.startswith("note: ") or "more note" in line]
    assert notes and len(notes) <= 3
    assert all(len(lines[i]) <= columns for i in notes)
    if any("more note" in lines[i] for i in notes):
        assert "--notes" in lines[notes[-1]]
        full = at_width(example, columns, *args, "--notes")
        assert "more note" not in full and full.count("note: ") > len(notes) - 1  # --notes gives every note
