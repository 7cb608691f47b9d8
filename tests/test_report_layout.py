"""The reports' layout rules, checked on the laid-out pages of both reports of seven workspaces.

A reader turning the pages must never meet: a page holding three lines, or three table rows or
fewer, that spilled over from the page before (a widow page), or a table split with one row on a
page; a table's header alone at the foot of a page, or a table carried onto the next page without its
header; a column header broken inside a word without a hyphen (or too wide for its column); an
abbreviated column header without a key on the table's page, or a unit abbreviated in a cell (k, M,
mo, GPU-h) without a key in the report. The board paper is two pages (not yet for the 50 offers,
whose plan of seven vendors fills page 2 with their risks).

Each report is produced by `procure report --format html` and laid out by WeasyPrint as `procure
report` lays it out (tests/layout.py walks the box tree: exact, where the PDF's text would lose which
line is a table row or a header). The workspaces: the example at the repository root, the fixture
workspaces other report tests render (basic, offer_kinds, real_offers: real public offers), rated
(operator checklists, a hedge without a fitted ratio) and a synthetic one of 50 offers
(benchmarks/synthetic.py), whose tables run over several pages; and basic with one offer of 26 fees,
whose offer page overflows.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import layout
import pytest
import svgtext
from clihelp import AS_OF, edit

pytestmark = pytest.mark.slow  # each report is laid out by WeasyPrint: 1 to 20 seconds

ROOT = Path(__file__).parent.parent
WORKSPACES = ["example", "basic", "offer_kinds", "rated", "real_offers", "synthetic50"]
KINDS = ["comparison", "board"]
# basic with 26 monthly fees on one offer: its terms fill most of a page, and its arithmetic table, split,
# would leave a row alone on the next (measured without the rule that moves it whole).
REPORTS = [(w, k) for w in WORKSPACES for k in KINDS] + [("many_fees", "comparison")]
FEES = "".join(f"    - {{name: fee number {i}, monthly: {1000 + i}}}\n" for i in range(26))

# Abbreviations a column header may use, each with the term its key defines ("Sec = security").
# A header word that is neither here nor in WORDS fails the rule "abbreviated headers without a key":
# if it is a plain word, add it to WORDS; if it is an abbreviation, print a key with the table and add it here.
ABBREVIATIONS = {
    "Sec": "Sec",
    "Life": "Life",
    "Orch": "Orch",
    "Stor": "Stor",
    "Net": "Net",
    "Rel": "Rel",
    "Mon": "Mon",
    "Part": "Part",
    "Avail": "Avail",  # operator rating categories
    "GPU-h": "GPU-h",
    "tok/s/GPU": "tok/s/GPU",
    "M tokens": "M tokens",  # offers at a glance
    "FTE": "FTE",  # the appendix's operating jobs
    "h*": "h*",  # the fitted hedge ratio
    "TTFT": "TTFT",
    "P50": "P50",
    "P90": "P90",
    "P99": "P99",  # the scorecard's latency quantiles
}
# Plain words (and unit names every reader knows: currency codes, GPU, SLA, SHA-256) in column headers.
WORDS = set(
    """
    a and first unserved credits sla offer acceptable decision shortfall start ranked expires end today's volume advertised ahead all as at attestation availability band basis case cash cheapest commitment contracts cost
    currency demand escalator evidence exit factor figure figures file floating full gpu gpus gpu-hours grade hedge hedged
    highest how impact in index isolation job kind likelihood list method mitigation month monthly months move node notional
    of offer offer's operating operator our ours output owner owns pay-as-used payoff per pick's policy prepared present
    price probability producer provider published rank rate ratio replacement risk role scenario scope score service share
    served signing single sla speed spend spread scenarios step success tasks tenant term this throughput tier today total transacted unhedged unused
    user value vendor with workload x fixed usd eur sha-256 pricing on delivery signed alone
    tokens billed gpu-hour delivered promised requests end-to-end credit credits owed invoice contracted
    """.split()  # noqa: E501
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, data_dir: Path, shared_report: Any) -> Any:
    """Each (workspace, kind) laid out once for the module, on first use: {(workspace, kind): [Page]}. The HTML
    is the run's (tests/conftest.py: other modules read the same reports)."""
    folder = tmp_path_factory.mktemp("layout")
    cache: dict[tuple[str, str], tuple[Any, list[layout.Page]]] = {}

    def root_of(workspace: str) -> Path:
        if workspace == "example":
            return ROOT
        if workspace == "synthetic50":
            root = folder / "synthetic50"
            if not root.exists():
                sys.path.insert(0, str(ROOT / "benchmarks"))
                from synthetic import make_workspace

                make_workspace(root, 50)
            return root
        if workspace == "many_fees":
            root = folder / "many_fees"
            if not root.exists():
                shutil.copytree(data_dir / "basic", root)
                edit(root, "offers/alpha.yaml", "    - {name: onboarding, once: 87600}\n", FEES)
            return root
        return data_dir / workspace

    def get(workspace: str, kind: str) -> list[layout.Page]:
        if (workspace, kind) not in cache:
            document = layout.render(source(workspace, kind))
            cache[(workspace, kind)] = (
                document,
                layout.pages(document),
            )  # the document keeps the elements the pages name alive
        return cache[(workspace, kind)][1]

    html: dict[tuple[str, str], str] = {}

    def source(workspace: str, kind: str) -> str:
        """The report's HTML, not laid out: the chart tests read only its SVGs."""
        if (workspace, kind) not in html:
            target = shared_report(
                root_of(workspace), *(["--board"] if kind == "board" else []), fmt="html", as_of=AS_OF
            )
            html[(workspace, kind)] = target.read_text(encoding="utf-8")
        return html[(workspace, kind)]

    get.html = source  # type: ignore[attr-defined]
    get.root = root_of  # type: ignore[attr-defined]
    return get


def where(page: layout.Page) -> str:
    shown = page.lines[:3] + [r.text[:80] for r in page.body_rows[:3]]
    return f"page {page.number}: {shown}"


def widows(pages: list[layout.Page]) -> list[str]:
    """Pages that carry on with three lines or rows or fewer; tables that leave one row on a page."""
    return [where(p) for p in layout.widow_pages(pages)] + layout.lone_rows(pages)


def headers_with_rows(pages: list[layout.Page]) -> list[str]:
    """Headers alone at a page's foot or not repeated, and headings that end a page."""
    return layout.header_problems(pages) + layout.heading_at_foot(pages)


def header_breaks(pages: list[layout.Page]) -> list[str]:
    """Column headers broken inside a word, or wider than their column (one that may not break must fit)."""
    problems = []
    for page in pages:
        for header in page.headers:
            problems += [f"page {page.number}: {header.text!r}: {b}" for b in layout.break_inside_word(header)]
            if header.widest > header.width + 0.5:
                problems.append(
                    f"page {page.number}: {header.text!r} is {header.widest:.1f} pt wide in a {header.width:.1f} pt "
                    "column"
                )
    return problems


def unkeyed_headers(pages: list[layout.Page]) -> list[str]:
    """Abbreviated column headers without their key on a page of their table; header words not known."""
    problems = []
    tables: dict[int, tuple[Any, list[layout.Page]]] = {}
    for page in pages:
        for key, (table, _) in layout.tables_on(page).items():
            tables.setdefault(key, (table, []))[1].append(page)
    for table, on in tables.values():
        text = " ".join(" ".join(p.lines + [r.text for r in p.rows]) for p in on)
        for header in (layout.element_text(c) for c in table.iter() if c.tag == "th"):
            rest = header
            for abbreviation, term in ABBREVIATIONS.items():
                pattern = rf"(?<![\w-]){re.escape(abbreviation)}(?![\w-])"
                if re.search(pattern, rest):
                    rest = re.sub(pattern, " ", rest)
                    if f"{term} =" not in text:
                        problems.append(
                            f"page {on[0].number}: {header!r} uses {abbreviation} but no key '{term} = ...' is printed "
                            "with its table"
                        )
            for word in rest.split():
                word = word.strip("()[],;:./").lower()
                if re.search("[a-z]", word) and word not in WORDS:
                    problems.append(
                        f"page {on[0].number}: {header!r}: {word!r} is neither a known word nor a keyed abbreviation"
                    )
    return problems


# Units abbreviated in table cells ("11.1 M", "794 k", "24 mo", "5.10 /GPU-h"): a convention of the whole
# report, so their key may be printed once anywhere in it.
CELL_UNITS = {r"\d M\b": "M = million", r"\d k\b": "k = thousand", r"\d mo\b": "mo = months", r"GPU-h\b": "GPU-h ="}


def cell_units(pages: list[layout.Page]) -> dict[str, str]:
    """The keys the units in table cells need: {key: where a unit is first used}."""
    used: dict[str, str] = {}
    for page in pages:
        for row in page.body_rows:
            for pattern, key in CELL_UNITS.items():
                if re.search(pattern, row.text):
                    used.setdefault(key, f"page {page.number}: {row.text[:60]!r}")
    return used


def boxes_for_glyphs(pages: list[layout.Page]) -> list[str]:
    """Characters printed in a shipped font that has no glyph for them: each prints as an empty box."""
    from procure.render.documents import templates_dir

    missing = layout.promised_but_missing(templates_dir() / "fonts.css")
    problems = []
    for page in pages:
        for family, printed in page.chars.items():
            problems += [
                f"page {page.number}: U+{ord(c):04X} in {family}" for c in sorted(printed & missing.get(family, set()))
            ]
    return problems


RULES = {
    "widow pages and lone rows": widows,
    "headers kept with their rows": headers_with_rows,
    "column headers broken inside a word": header_breaks,
    "abbreviated headers without a key": unkeyed_headers,
    "characters the font has no glyph for": boxes_for_glyphs,
}


@pytest.mark.parametrize("workspace,kind", REPORTS)
def test_layout_rules_hold_on_every_page(reports: Any, workspace: str, kind: str) -> None:
    """One test per report, every rule at once: a report is laid out once even when tests run in parallel."""
    pages = reports(workspace, kind)
    assert {rule: check(pages) for rule, check in RULES.items()} == {rule: [] for rule in RULES}
    document = " ".join(" ".join(p.lines + [r.text for r in p.rows]) for p in pages)
    used = cell_units(pages)
    assert {key: first for key, first in used.items() if key not in document} == {}  # each unit in a cell has its key
    if kind == "board":
        assert used.keys() & {
            "M = million",
            "k = thousand",
        }  # its tables print money in k or M (each with its key, above)
    if workspace == "synthetic50" and kind == "comparison":
        # Its long tables (grades, ratings, the input files) run over pages: the header rule was put to work.
        assert carried_over(pages) >= 3


@pytest.mark.parametrize("workspace", WORKSPACES)
def test_board_paper_is_two_pages(reports: Any, workspace: str) -> None:
    assert len(reports(workspace, "board")) == 2


def carried_over(pages: list[layout.Page]) -> int:
    """How many times a table with a header is carried onto the next page (each time starting with it)."""
    count = 0
    for page in pages[1:]:
        before = layout.tables_on(pages[page.number - 2])
        for key, (table, rows) in layout.tables_on(page).items():
            if key in before and layout.has_header(table):
                assert rows[0].header, f"page {page.number}: {layout.table_label(table)}"
                count += 1
    return count


# The checks themselves, on small documents whose pages are known by construction.

PAGE = (
    "<style>@page { size: 100mm 60mm; margin: 5mm } body { font: 10pt/12pt sans-serif; margin: 0 } table { "
    "border-collapse: collapse }</style>"
)


def small(body: str) -> list[layout.Page]:
    return layout.pages(layout.render(f"<html><head>{PAGE}</head><body>{body}</body></html>"))


def test_checker_finds_a_row_left_alone_on_a_page() -> None:
    # 50 mm of page height holds the header and 9 one-line rows (measured); the 10th row goes over alone.
    rows = "".join(f"<tr><td>row {i}</td></tr>" for i in range(10))
    pages = small(f"<table><thead><tr><th>Head</th></tr></thead><tbody>{rows}</tbody></table>")
    assert [len(p.body_rows) for p in pages] == [9, 1]
    assert [p.number for p in layout.widow_pages(pages)] == [2]
    assert layout.lone_rows(pages) == ["page 2: table '' ('Head'): a single row 'row 9'"]
    # Three rows that wrap to six lines are still three rows and nothing else.
    rows = "".join(f"<tr><td>row {i}</td></tr>" for i in range(9)) + "".join(
        f"<tr><td>row<br>{i}</td></tr>" for i in range(9, 12)
    )
    pages = small(f"<table><thead><tr><th>Head</th></tr></thead><tbody>{rows}</tbody></table>")
    assert [len(p.body_rows) for p in pages] == [9, 3] and pages[1].content_lines == 6
    assert [p.number for p in layout.widow_pages(pages)] == [2] and layout.lone_rows(pages) == []
    assert pages[1].rows[0].header  # thead display: table-header-group repeats it
    assert layout.header_problems(pages) == []
    # A chapter that starts its own page with two lines is short, not a widow.
    pages = small("<p>one</p><section style='break-before: page'><h1>Two</h1><p>lines</p></section>")
    assert len(pages) == 2 and layout.widow_pages(pages) == []


def test_checker_finds_a_header_alone_and_a_header_not_repeated() -> None:
    # A spacer leaves room for the header row (a 12 pt line and its padding) but not for the first row below it.
    rows = "".join(f"<tr><td>row {i}</td></tr>" for i in range(12))
    pages = small(f"<div style='height: calc(50mm - 16pt)'></div><table><tr><th>Head</th></tr>{rows}</table>")
    problems = layout.header_problems(pages)
    assert any(p.startswith("page 1:") and "header alone" in p for p in problems), problems
    assert any(p.startswith("page 1:") and "not a <thead>" in p for p in problems), problems
    assert any(p.startswith("page 2:") and "without its header" in p for p in problems), problems


def test_checker_finds_a_header_broken_inside_a_word() -> None:
    forced = small(
        "<table style='width:20mm; table-layout: fixed'><thead><tr><th style='overflow-wrap: anywhere'>Availability "
        "Net</th></tr></thead></table>"
    )
    header = forced[0].headers[0]
    assert len(header.lines) == 2
    assert layout.break_inside_word(header) == [f"{header.lines[0]}|{header.lines[1]}"]
    soft = small(
        "<table style='width:10mm'><thead><tr><th style='hyphens: manual'>Avail&shy;ability</th></tr></thead></table>"
    )
    assert [line.replace("\u00ad", "") for line in soft[0].headers[0].lines] == [
        "Avail\u2010",
        "ability",
    ]  # printed with a hyphen
    assert layout.break_inside_word(soft[0].headers[0]) == []
    slash = layout.HeaderCell("List USD/GPU-h per unit", ["List USD/", "GPU-h per", "unit"], 40.0, 40.0)
    assert layout.break_inside_word(slash) == []  # after a slash and at a space


def test_checker_finds_a_heading_at_the_foot_of_a_page() -> None:
    # A spacer fills the page but for one line: the heading fits there, the table under it does not
    # (break-after: auto overrides the default stylesheet's avoid, which keeps headings with what follows).
    rows = "".join(f"<tr><td>row {i}</td></tr>" for i in range(4))
    pages = small(
        "<div style='height: calc(50mm - 14pt)'></div><h2 style='font-size: 10pt; margin: 0; break-after: "
        f"auto'>Table</h2><table><thead><tr><th>Head</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    assert layout.heading_at_foot(pages) == ["page 1: 'Table'"]


def test_checker_knows_which_characters_the_shipped_font_lacks() -> None:
    from procure.render.documents import templates_dir

    missing = layout.promised_but_missing(templates_dir() / "fonts.css")["Source Sans 3"]
    assert "\u2010" in missing  # HYPHEN: inside the claimed U+2000-206F, not in the subset's glyphs
    assert (
        not {"a", "-", "\u20ac", "\u2212", "\u2026", "\u00d7"} & missing
    )  # a, hyphen-minus, euro, minus, ellipsis, times


# --- charts: every text where a reader can read it ----------------------------------------------

COLUMN_PT = (210 - 2 * 17) / 25.4 * 72  # the text column of the reports' A4 pages (templates/report.css)
BODY_PT = 9.5


@pytest.mark.parametrize("workspace", ["example", "real_offers", "synthetic50"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_chart_text_collides_or_is_clipped(reports: Any, workspace: str, kind: str) -> None:
    """Every chart of the report, its text boxes measured in the SVG (tests/svgtext.py): no two overlap
    (names under bars, a matrix's columns, the case names of the side-by-side bars), none runs off the chart."""
    found = svgtext.charts_in(reports.html(workspace, kind))
    if kind == "comparison":
        assert {"cost-curve", "cost-breakdown", "responsibility-matrix", "throughput-frontiers"} <= found.keys()
    problems = {name: (svgtext.collisions(svg), svgtext.clipped(svg)) for name, svg in found.items()}
    assert {name: p for name, p in problems.items() if p != ([], [])} == {}


@pytest.mark.parametrize("workspace", ["example", "synthetic50"])
def test_tornado_text_prints_at_body_size(reports: Any, workspace: str) -> None:
    """The tornado is drawn to the column's width and printed at its natural size, so each of its
    texts (inputs, ticks, the axis, the flips) prints at the body's 9.5 pt."""
    document = reports.html(workspace, "comparison")
    svg = svgtext.charts_in(document)["tornado"]
    assert '<figure class="natural">' + svg[:20] in document.replace("\n", "")
    width = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', svg).group(1))
    scale = min(1.0, COLUMN_PT / width)  # width: auto, at most the column
    printed = {round(box.size * scale, 2) for box in svgtext.text_boxes(svg)}
    assert printed == {BODY_PT}, (width, printed)


def test_the_text_box_check_finds_collisions_and_clipping() -> None:
    """Two level names 10 points apart at 6 px collide (each is wider than that); 60 apart they do not; slanted
    the same 10 points apart they do not (the slant puts them a line's height apart); a name starting at x = -5 is
    clipped."""
    level = '<text style="font-size: 6px" x="{x}" y="50" transform="rotate(-0 {x} 50)">Meridian GPU</text>'
    slanted = '<text style="font-size: 6px" transform="translate({x} 50) rotate(-35)">Meridian GPU</text>'
    svg = '<svg viewBox="0 0 200 100">{}</svg>'
    assert svgtext.collisions(svg.format(level.format(x=10) + level.format(x=20))) == [("Meridian GPU", "Meridian GPU")]
    assert svgtext.collisions(svg.format(level.format(x=10) + level.format(x=70))) == []
    assert svgtext.collisions(svg.format(slanted.format(x=10) + slanted.format(x=30))) == []
    assert svgtext.clipped(svg.format(level.format(x=-5))) == ["Meridian GPU"]
    assert svgtext.clipped(svg.format(level.format(x=5))) == []


# --- pages: none more than half empty but where a chapter ends -----------------------------------


@pytest.mark.parametrize("workspace", ["example", "real_offers", "synthetic50"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_page_is_more_than_half_empty_but_at_a_chapters_end(reports: Any, workspace: str, kind: str) -> None:
    """A page filled to less than half its height is the last of its chapter (or of an offer's section):
    the next page starts one. Elsewhere a half-empty page is a figure or table that did not fit and left a hole."""
    pages = reports(workspace, kind)
    assert [
        f"page {p.number}: {p.filled:.0%} filled, then {pages[p.number].lines[:1]}" for p in layout.half_empty(pages)
    ] == []


def test_checker_finds_a_half_empty_page_inside_a_chapter() -> None:
    # A figure 30 mm tall, then one 40 mm tall that does not fit in the 20 mm left: page 1 is 30 of 50 mm
    # filled (60%). With 20 and 40 mm, page 1 is 40% filled inside the chapter; a chapter of its own after it is not a
    # hole.
    def blocks(first: int, second: str) -> list[layout.Page]:
        box = "<svg xmlns='http://www.w3.org/2000/svg' style='display: block' width='50mm' height='{}mm'></svg>"
        return small(f"<div>{box.format(first)}</div><div style='margin: 0{second}'>{box.format(40)}</div>")

    assert layout.half_empty(blocks(30, "")) == []
    pages = blocks(20, "")
    assert [round(p.filled, 1) for p in pages] == [0.4, 0.8]
    assert [p.number for p in layout.half_empty(pages)] == [1]
    assert layout.half_empty(blocks(20, "; break-before: page")) == []  # the end of a chapter


# --- the board memo: the deadline, the spend, in plain words --------------------------------------

JARGON = ("index-linked", "basis", "ladder", "pay-as-used", "interpolation")  # words a board member would not know


@pytest.mark.parametrize("workspace", ["example", "real_offers", "synthetic50"])
def test_board_memo_states_the_deadline_and_the_spend_in_plain_words(reports: Any, workspace: str) -> None:
    """Two pages; "Decide by" the earliest valid_until of the vendors it asks to sign (read from their offer
    files), or sooner, the last day to sign a contract and start on time; the total spend over the horizon and per
    year (the year's figure 12 / months of the total, to its rounding); none of the listed terms."""
    import yaml

    pages = reports(workspace, "board")
    assert len(pages) == 2
    text = " ".join(" ".join(p.lines + [r.text for r in p.rows]) for p in pages)
    spend = re.search(r"Expected spend ([\d.]+) ([kM]) (\w+) over (\d+) months, ([\d.]+) ([kM]) \w+ a year", text)
    assert spend, text[:600]
    scale = {"k": 1e3, "M": 1e6}
    total, months, year = (
        float(spend.group(1)) * scale[spend.group(2)],
        int(spend.group(4)),
        float(spend.group(5)) * scale[spend.group(6)],
    )
    assert year == pytest.approx(total * 12 / months, rel=0.01)  # each printed to three figures
    # "Decide by D: the offer of X expires then" or, when a contract must be signed sooner to start on time,
    # "Decide by D: the last day to sign for the N GPUs of X to start on S": D is never after the expiry of an offer
    # it names, and not after the start it names (the as-of date itself for a contract that starts now)
    from datetime import date, datetime

    deadline = re.search(
        r"Decide by (\d{1,2} \w+ \d{4}): (?:the offers of (.+?) expire|the offer of (.+?) expires|the last day to sign "
        r"for the [\d,]+ GPUs of (.+?) to start on (\d{1,2} \w+ \d{4}))",
        text,
    )
    assert deadline, text[:600]
    day = datetime.strptime(deadline.group(1), "%d %B %Y").date()
    named = deadline.group(2) or deadline.group(3) or deadline.group(4)
    vendors = [v.strip() for v in re.split(r",| and ", named) if v.strip()]
    offers = [yaml.safe_load(f.read_text()) for f in sorted(reports.root(workspace).glob("offers/*.yaml"))]
    dates = [date.fromisoformat(str(o["valid_until"])) for o in offers if o["vendor"] in vendors]
    assert dates, vendors
    if deadline.group(4):
        assert day <= min(dates) and day <= datetime.strptime(deadline.group(5), "%d %B %Y").date(), (vendors, dates)
    else:
        assert day == min(dates), (vendors, dates)
    assert [w for w in JARGON if w in text.lower()] == []
