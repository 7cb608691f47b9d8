"""The style guide (docs/style.md), enforced: the figure helpers of render/formats.py on values worked
by hand, and every table, Markdown output and both reports (HTML: the words) of the example, the real
offers and a fresh workspace of three offers scanned for what the guide forbids."""

from __future__ import annotations

import functools
import html
import re
import shutil
from pathlib import Path

import pytest
from clihelp import AS_OF
from typer.testing import CliRunner

from procure.cli import app
from procure.render.formats import count, factor, month_range, prose_count

# --- the helpers --------------------------------------------------------------------------------


def test_factor_reads_as_the_change_it_makes():
    assert factor(0.961191) == "-3.9%"  # (0.961191 - 1) x 100 = -3.88 -> -3.9
    assert factor(1.04038) == "+4.0%"  # 4.038 -> 4.0
    assert factor(1.2) == "+20.0%" and factor(0.8) == "-20.0%"
    assert factor(1.0) == "0%" and factor(1.00004) == "0%"  # no "+0.0%" nor "-0.0%"
    assert factor(None) == "—"


def test_counts_are_whole():
    assert count(256.0) == "256" and count(256, "GPUs") == "256 GPUs" and count(1024.0) == "1,024"
    assert count(12.5) == "12.5"  # an average over months that is not whole keeps its decimal
    assert count(None) == "—"


def test_a_range_of_one_month_is_a_month():
    assert month_range(25, 25) == "month 25" and month_range(1, 24) == "months 1–24"


def test_counts_in_prose_have_three_significant_figures():
    assert prose_count(188_797_697) == "189 M"  # 188.797697 M -> 189
    assert prose_count(1_471_000, "tasks") == "1.47 M tasks"
    assert prose_count(927_830) == "928 k" and prose_count(45_210) == "45.2 k" and prose_count(4_712_792) == "4.71 M"
    assert prose_count(999_600) == "1.00 M"  # rounds up to the next unit, not "1,000 k"
    assert prose_count(812) == "812" and prose_count(None) == "—"


# --- the outputs --------------------------------------------------------------------------------

# What no table, Markdown output or report may print (docs/style.md), each with what it catches.
FORBIDDEN = {
    "a range of one month ('months 25-25')": re.compile(r"\bmonths? (\d+) ?[-–] ?\1\b"),
    "a factor not as a percentage ('x0.961191')": re.compile(r"(?<![\w.])x\d+\.\d{3,}"),
    "a count with a decimal ('GPUs 256.0')": re.compile(r"\bGPUs:? \d[\d,]*\.0\b|\b\d[\d,]*\.0 GPUs\b"),
    "a cost of nothing ('net of 0 a month')": re.compile(r"\bnet of 0\b|\bpayback of 0\b"),
    "a name said twice ('(Petrel Cloud) (plan)')": re.compile(r"\) \(plan\)"),
}
# In a table's body (at 80 and 120 columns): a cell holding only a unit, split from its number.
LONE_UNIT = re.compile(r"│\s*(s|USD|EUR|GBP|%|GPUs|tasks|GPU-h)\s*│")
# In a table's body: a count printed with a decimal ("256.0") in a GPUs column.
TABLE_COMMANDS = [
    ("compare",),
    ("compare", "--uncertainty", "--draws", "200"),
    ("rate",),
    ("grade",),
    ("hedge",),
    ("cashflow",),
    ("position",),
    ("whatif", "--price-to-win"),
    ("scorecard",),
    ("sensitivity",),
    (
        "whatif",
        "--offer",
        "keel-b200-mc",
        "--throughput",
        "+20%",
        "--one-off",
        "50000",
    ),  # a one-off alone: no "net of 0 a month"
    ("whatif", "--offer", "keel-b200-mc", "--throughput", "+20%", "--monthly", "5000"),
]
MARKDOWN_COMMANDS = [("compare",), ("rate",), ("cashflow",), ("hedge",), ("sensitivity",), ("scorecard",)]


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory, data_dir) -> dict[str, Path]:
    """The example, the real offers, and a fresh workspace cut to three offers."""
    root = tmp_path_factory.mktemp("style")
    runner = CliRunner()
    example, fresh = root / "example", root / "fresh"
    for ws in (example, fresh):
        assert runner.invoke(app, ["init", str(ws), "--example"]).exit_code == 0
    keep = {"keel-b200-mc", "petrel-b200-ondemand", "corvid-b200-idx"}
    for offer in (fresh / "offers").glob("*.yaml"):
        if offer.stem not in keep:
            offer.unlink()
    real = root / "real"
    shutil.copytree(data_dir / "real_offers", real)
    return {"example": example, "real": real, "fresh": fresh}


@functools.cache
def _output(root: str, columns: int, args: tuple[str, ...]) -> str:
    as_of = () if args[0] == "grade" else ("--as-of", AS_OF)
    result = CliRunner().invoke(app, [*args, *as_of, "-w", root], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, (args, result.stderr[-2000:])
    return result.stdout


def output(ws: Path, columns: int, *args: str) -> str:
    return _output(str(ws), columns, args)


def first_offer(ws: Path, name: str) -> str:
    return "keel-b200-mc" if name != "real" else sorted(p.stem for p in (ws / "offers").glob("*.yaml"))[0]


def breaches(text: str) -> list[str]:
    return [f"{what}: {m.group(0)!r}" for what, pattern in FORBIDDEN.items() for m in pattern.finditer(text)]


@pytest.mark.parametrize("name", ["example", "real", "fresh"])
@pytest.mark.parametrize("args", TABLE_COMMANDS, ids=" ".join)
def test_tables_follow_the_style(workspaces, name, args):
    ws = workspaces[name]
    if "--offer" in args and name == "real":
        pytest.skip("the real offers have no keel-b200-mc")
    for columns in (80, 120):
        text = output(ws, columns, *args)
        assert breaches(text) == [], (columns, text)
        assert LONE_UNIT.findall(text) == [], (columns, text)


@pytest.mark.parametrize("name", ["example", "real", "fresh"])
def test_one_offers_cash_flow_counts_whole_gpus(workspaces, name):
    ws = workspaces[name]
    text = output(ws, 120, "cashflow", "--offer", first_offer(ws, name))
    header = next(line for line in text.splitlines() if line.startswith("┃") and "GPUs" in line)
    at = [c.strip() for c in header.split("┃")].index("GPUs")
    cells = [
        line.split("│")[at].strip()
        for line in text.splitlines()
        if line.startswith("│") and line.split("│")[1].strip().isdigit()
    ]
    assert cells and all(re.fullmatch(r"\d{1,3}(,\d{3})*(\.[1-9])?", c) for c in cells), cells
    assert breaches(text) == []


@pytest.mark.parametrize("name", ["example", "real", "fresh"])
@pytest.mark.parametrize("args", MARKDOWN_COMMANDS, ids=" ".join)
def test_markdown_follows_the_style(workspaces, name, args):
    text = output(workspaces[name], 200, *args, "--format", "markdown")
    assert breaches(text) == [], text


def test_the_plans_hedge_names_its_vendors_once(workspaces):
    first = output(workspaces["example"], 200, "hedge").splitlines()[0]
    assert first.startswith("Hedging the procurement plan (") and "(plan)" not in first


def test_sensitivity_prints_factors_as_percentages(workspaces):
    text = output(workspaces["example"], 200, "sensitivity")
    body = [line for line in text.splitlines() if line.startswith("│")]
    assert body and not any(re.search(r"│\s*x\d", line) for line in body)
    assert any(re.search(r"│\s*-20\.0%\s*│\s*\+20\.0%\s*│", line) for line in body)  # index level 0.8 / 1.2


@pytest.mark.slow  # the plan's solver takes seconds
@pytest.mark.parametrize("name", ["example", "real", "fresh"])
def test_the_plan_follows_the_style(workspaces, name):
    for columns in (80, 120):
        text = output(workspaces[name], columns, "plan")
        assert breaches(text) == [] and LONE_UNIT.findall(text) == [], text
        months = [c.strip() for line in text.splitlines() if line.startswith("│") for c in line.split("│")[1:-1]]
        assert not [c for c in months if re.fullmatch(r"(\d+)-\1", c)]  # the Months column: "25", never "25-25"
    assert breaches(output(workspaces[name], 200, "plan", "--format", "markdown")) == []


# --- the reports (HTML: the words; the PDF's pages are checked in test_documents) ---------------


def body_text(page: str) -> str:
    """The visible words of an HTML report: no head, no tags, entities read."""
    page = re.sub(r"(?s)<head>.*?</head>", "", page)
    page = re.sub(r"(?s)<(style|script)\b.*?</\1>", "", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


# The example and the real offers are the workspaces the fixture copied (identical files): their reports are the
# run's, rendered once for every module that reads them (tests/conftest.py shared_report).
SHARED = {"example": Path(__file__).parent.parent, "real": Path(__file__).parent / "data" / "real_offers"}


def _report(shared_report, workspaces: dict[str, Path], name: str, board: bool) -> str:
    root = SHARED.get(name, workspaces[name])
    return shared_report(root, *(["--board"] if board else []), fmt="html", as_of=AS_OF).read_text()


@pytest.mark.slow  # each report evaluates, plans and draws its charts
@pytest.mark.parametrize("name", ["example", "real", "fresh"])
def test_the_board_memo_speaks_of_the_decision(workspaces, shared_report, name):
    from procure import __version__

    text = body_text(_report(shared_report, workspaces, name, True))
    assert breaches(text) == []
    assert "`" not in text
    assert not re.search(r"\bprocure [a-z]", text), re.search(r".{60}\bprocure [a-z].{60}", text)  # no command names
    assert __version__ not in text and "input files" not in text  # the provenance is the comparison's appendix
    # counts and money in the memo's sentences to three significant figures: no 1,471,000 or 188,797,697
    whole = re.findall(r"\b\d{1,3}(?:,\d{3}){2,}\b", text)
    if (
        name == "real"
    ):  # no demand: the recommendation's basis (analysis/decision.py) still prints the stated demand whole
        assert all(f"at today's stated demand ({n} tasks a month)" in text for n in whole), whole
    else:
        assert whole == []


@pytest.mark.slow  # each report evaluates, plans and draws its charts
@pytest.mark.parametrize("name", ["example", "real", "fresh"])
def test_the_comparison_report_has_no_literal_backticks_and_its_provenance_in_the_appendix(
    workspaces, shared_report, name
):
    from procure import __version__

    page = _report(shared_report, workspaces, name, False)
    text = body_text(page)
    assert breaches(text) == []
    assert "`" not in text
    appendix = body_text(page[page.index('id="inputs"') :])
    assert re.search(
        rf"Prepared \d{{4}}-\d{{2}}-\d{{2}} with procure {re.escape(__version__)} from \d+ input files\.", appendix
    )
    front = body_text(page[: page.index('id="appendix"')])
    assert f"procure {__version__}" not in front
