"""Every screen at 80 x 24: each printing command's default output fits a 24-line terminal (23 lines,
the 24th is the prompt's) at 60, 80 and 120 columns, with its decision columns; the notes it folds are
printed in full with --notes and are in --format json (docs/style.md, "Screens")."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from clihelp import AS_OF
from rich.cells import cell_len
from typer.testing import CliRunner

from procure.cli import app

HEIGHT = 24
FOLD = HEIGHT - 1  # the last line of the terminal is the prompt's
WIDTHS = (60, 80, 120)
REAL = Path(__file__).parent / "data" / "real_offers"


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory):
    """The example (12 offers, two saved runs), tests/data/real_offers (10 real offers) and a fresh
    `procure init` workspace holding three of the example's offers."""
    root = tmp_path_factory.mktemp("screens")
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(root / "example"), "--example"]).exit_code == 0
    assert runner.invoke(app, ["init", str(root / "fresh")]).exit_code == 0
    for name in ("keel-b200-mc", "petrel-b200-ondemand", "halvard-b200-ms"):
        shutil.copy(root / "example" / "offers" / f"{name}.yaml", root / "fresh" / "offers")
    shutil.copytree(REAL, root / "real")
    for ws in ("example", "real", "fresh"):
        for day in ("2026-11-01", AS_OF):
            assert runner.invoke(app, ["evaluate", "--save", "--as-of", day, "-w", str(root / ws)]).exit_code == 0
    return {
        "example": (root / "example", "keel-b200-mc"),
        "real": (root / "real", "lambda-b200"),
        "fresh": (root / "fresh", "keel-b200-mc"),
    }


# Every command that prints, as a user runs it first (procure/cli/__init__.py lists them; init, import,
# perf import, actuals import, report and schema write files or a JSON document, and scorecard --claim a claim
# letter in Markdown, a document to send: none of them is a screen; `grade --offer ID` is the offer's page asked
# for by name, printed whole: test_the_offers_page_is_never_folded).
COMMANDS = [
    ("validate",),
    ("grade",),
    ("compare",),
    ("compare", "--uncertainty", "--draws", "200"),
    ("compare", "--horizon", "24"),
    ("rate",),
    ("whatif", "--price-to-win"),
    ("whatif", "--offer", "{offer}", "--throughput", "+50%"),
    ("position",),
    ("hedge",),
    ("sensitivity",),
    ("evaluate",),
    ("history",),
    ("diff",),
    ("scorecard",),
    ("cashflow",),
    ("cashflow", "--offer", "{offer}"),
    ("plan",),
    ("grades", "update"),
]
DATED = {"history", "diff", "grades"}  # commands that take no --as-of, or read the saved runs as they are


@functools.cache
def _screen(root: str, offer: str, columns: int, args: tuple[str, ...]) -> str:
    args = tuple(a.format(offer=offer) for a in args)
    as_of = () if args[0] in DATED else ("--as-of", AS_OF)
    result = CliRunner().invoke(app, [*args, *as_of, "-w", root], env={"COLUMNS": str(columns), "LINES": str(HEIGHT)})
    if args[0] == "hedge" and root.endswith(
        "fresh"
    ):  # a fresh workspace has no index history: said in a line or two, exit 2
        assert result.exit_code == 2 and "market/index.csv" in result.stderr, result.output
        return result.stderr
    assert result.exit_code == 0, result.stderr
    return result.stdout


def screen(workspaces, name: str, columns: int, *args: str) -> str:
    root, offer = workspaces[name]
    return _screen(str(root), offer, columns, args)


def rows_on_terminal(text: str, columns: int) -> int:
    """The terminal lines a text takes: a line wider than the terminal wraps."""
    return sum(max(1, -(-cell_len(line) // columns)) for line in text.splitlines())


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    "name", ["example", pytest.param("real", marks=pytest.mark.slow), pytest.param("fresh", marks=pytest.mark.slow)]
)
def test_every_screen_fits_24_lines(workspaces, name, columns, args):
    text = screen(workspaces, name, columns, *args)
    assert text.strip()
    assert rows_on_terminal(text, columns) <= FOLD, text


def header_row(text: str) -> str:
    """The header cells of the first table, a header's wrapped lines together."""
    cells: list[str] = []
    for line in text.splitlines():
        if line.startswith("┃"):
            for i, cell in enumerate(c.strip() for c in line.strip("┃").split("┃")):
                cells += [""] * (i + 1 - len(cells))
                cells[i] = (cells[i] + " " + cell).strip()
        elif cells:
            break
    return " | ".join(cells)


# The decision columns of each ranking, kept at every width: the id, the cost, a grade or OK, the reason.
DECISION = {
    ("compare",): ["Offer", "USD/1k tasks", "OK", "Reason"],
    # --uncertainty asked for the ranges: they outlast the reason (test_cli_table_width.py)
    ("compare", "--uncertainty", "--draws", "200"): ["Offer", "USD/1k tasks", "OK"],
    ("grade",): ["Offer", "Grade", "Requirements"],
    ("rate",): ["Offer", "Score", "Tier"],
    ("whatif", "--price-to-win"): ["Offer"],
    ("cashflow",): ["Offer"],
    ("position",): ["Who", "Per 1k tasks"],
    ("hedge",): ["Months", "Contracts"],
}


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("args", list(DECISION), ids=" ".join)
def test_decision_columns_survive_every_width(workspaces, columns, args):
    headers = header_row(screen(workspaces, "example", columns, *args))
    for header in DECISION[args]:
        assert header in headers, (columns, headers)


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_cheapest_offer_shows_its_id_cost_and_verdict_at_every_width(workspaces, columns):
    text = screen(workspaces, "example", columns, "compare")
    root, _ = workspaces["example"]
    ev = json.loads(CliRunner().invoke(app, ["compare", "-f", "json", "--as-of", AS_OF, "-w", str(root)]).stdout)
    best = next(o for o in ev["offers"] if o["rank"] == 1)
    line = next(line for line in text.splitlines() if f" {best['id']} " in line)
    assert f"{best['metrics']['cost_per_task'] * 1000:.2f}" in line and " yes " in line


def test_folded_notes_say_how_many_and_notes_prints_them(workspaces):
    folded = screen(workspaces, "example", 80, "hedge")
    full = screen(workspaces, "example", 80, "hedge", "--notes")
    assert "--notes" in folded.splitlines()[-1]  # the last line says where the rest is
    assert "more notes" in folded and "- It does not make a customer pay" not in folded
    assert "- It does not make a customer pay: revenue risk stays where it is." in " ".join(full.split("\n"))
    assert rows_on_terminal(full, 80) > FOLD  # --notes is the long form, on purpose
    root, _ = workspaces["example"]
    plan = json.loads(CliRunner().invoke(app, ["hedge", "-f", "json", "--as-of", AS_OF, "-w", str(root)]).stdout)
    assert any("customer pay" in limit for limit in plan["limits"])  # JSON always carries them


def test_folded_note_lines_are_at_most_three(workspaces):
    for args in (("compare",), ("hedge",), ("plan",), ("rate",), ("position",)):
        folded = screen(workspaces, "example", 80, *args).splitlines()
        full = set(screen(workspaces, "example", 80, *args, "--notes").splitlines())
        # what stands for the notes folded away (a table's lines aside: its columns may differ when folded)
        summary = [line for line in folded if line not in full and not line.startswith(tuple("┏┃┡│└ "))]
        summary = [line for line in summary if "more row" not in line]
        assert 1 <= len(summary) <= 3, (args, summary)
        assert "--notes" in summary[-1]


def test_a_table_taller_than_the_screen_shows_its_first_rows_and_all_shows_every_row(workspaces):
    # 12 offers under a five-line recommendation at 60 columns: 23 lines hold ten of them
    cut = screen(workspaces, "example", 60, "compare")
    every = screen(workspaces, "example", 60, "compare", "--all")
    body = lambda text: [line for line in text.splitlines() if line.startswith("│")]  # noqa: E731
    assert len(body(every)) == 12
    more = 12 - len(body(cut))
    assert more > 0 and f"{more} more row{'s' if more != 1 else ''}: --all shows every row." in cut
    assert body(cut) == body(every)[: len(body(cut))]  # the first rows, in the ranking's order


def test_the_offers_page_is_never_folded(workspaces):
    # on a 24-line terminal the grades it misses and the throughput factor by factor are all printed
    text = screen(workspaces, "example", 80, "grade", "--offer", "{offer}")
    assert "throughput at the target, factor by factor" in text and "product:" in text
    assert "B200-OWN" in text and "--notes" not in text and "--all" not in text
