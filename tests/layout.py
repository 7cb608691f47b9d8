"""Reading a laid-out report: what each page holds, from WeasyPrint's box tree.

The PDF's text loses the structure the layout rules are about (which lines are table rows, which row is
a header, where a cell's lines break), so the tests lay the report's HTML out with WeasyPrint, exactly
as `procure report` does, and walk each page's boxes: every line of running text, every table row
with its table and whether it is a header, every column header's lines, every figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEADINGS = {"h1", "h2", "h3", "h4"}
FORCED = {"page", "left", "right", "recto", "verso"}  # break-before values that start a new page


@dataclass
class Row:
    """One table row as laid out on one page."""

    table: Any  # the <table> element (the same object on every page the table reaches)
    element: Any  # the <tr> element
    header: bool  # a <thead> row (repeated by WeasyPrint on every page the table reaches)
    all_th: bool  # every cell a <th>: a header row, in a <thead> or not
    lines: int  # the most lines any of its cells holds
    text: str


@dataclass
class HeaderCell:
    """A column header (<th>) and the lines it was broken into."""

    text: str  # the header as written (soft hyphens removed, white space collapsed)
    lines: list[str]  # each laid-out line's text
    width: float  # the cell's content width
    widest: float  # the widest laid-out line


@dataclass
class Page:
    """What one page holds, margins (running header, page number) left out."""

    number: int  # 1-based
    lines: list[str] = field(default_factory=list)  # lines of text outside tables, top to bottom
    rows: list[Row] = field(default_factory=list)
    figures: int = 0  # images and SVG charts
    headers: list[HeaderCell] = field(default_factory=list)
    blocks: set[int] = field(
        default_factory=set
    )  # ids of the block elements (sections, articles, tables, ...) with a box here
    forced: set[int] = field(default_factory=set)  # ids of those whose style forces a page break before them
    first: list[Any] = field(
        default_factory=list
    )  # the block elements around the page's first content, outermost first
    last: list[Any] = field(default_factory=list)  # the block elements around its last content, outermost first
    chars: dict[str, set[str]] = field(
        default_factory=dict
    )  # every character printed, margins included, by the first font family asked for
    top: float = 0.0  # the page's content area: its top and height (points)
    height: float = 0.0
    bottom: float = 0.0  # the lowest edge of anything printed in the content area (a line, a row, a figure)

    @property
    def filled(self) -> float:
        """The share of the content area's height down to its last line, row or figure."""
        return 0.0 if not self.height else max(0.0, min(1.0, (self.bottom - self.top) / self.height))

    @property
    def body_rows(self) -> list[Row]:
        return [r for r in self.rows if not r.header]

    @property
    def content_lines(self) -> int:
        """Lines of running text plus the lines of the table rows that are not repeated headers."""
        return len(self.lines) + sum(r.lines for r in self.body_rows)


def render(html: str) -> Any:
    """The report's HTML laid out as `procure report` lays it out (fonts from the templates folder)."""
    from weasyprint import HTML

    from procure.render.documents import templates_dir

    return HTML(string=html, base_url=templates_dir().as_uri() + "/").render()


def pages(document: Any) -> list[Page]:
    """Every page of a rendered document, read from its box tree."""
    return [read_page(number, page._page_box) for number, page in enumerate(document.pages, 1)]


def _text(box: Any) -> str:
    return " ".join(t.text for t in _descendants(box) if type(t).__name__ == "TextBox").strip()


def _descendants(box: Any) -> Iterator[Any]:
    yield box
    for child in getattr(box, "children", ()):
        yield from _descendants(child)


def _line_count(box: Any) -> int:
    return sum(1 for b in _descendants(box) if type(b).__name__ == "LineBox")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00ad", "")).strip()


def element_text(element: Any) -> str:
    """An element's text as written in the HTML, white space collapsed and soft hyphens dropped."""
    return _flat("".join(element.itertext()))


def read_page(number: int, page_box: Any) -> Page:
    """One page's lines, rows, column headers and figures, in the order they are laid out."""
    page = Page(number, top=page_box.content_box_y(), height=page_box.height)
    page.bottom = page.top
    chain: list[Any] = []  # block elements from the body down to the current box

    def reach(box: Any) -> None:
        page.bottom = max(page.bottom, box.position_y + box.margin_height())

    def visit(box: Any) -> None:
        kind = type(box).__name__
        if kind == "MarginBox":
            return
        element = getattr(box, "element", None)
        pushed = False
        if (
            kind in ("BlockBox", "TableBox", "BlockReplacedBox")
            and element is not None
            and element.tag not in ("html", "body")
        ):
            if not chain or chain[-1] is not element:
                chain.append(element)
                pushed = True
            page.blocks.add(id(element))
            if box.style["break_before"] in FORCED:
                page.forced.add(id(element))
        if kind == "TableRowGroupBox":
            for row in box.children:
                reach(row)
                cells = [c for c in row.children if getattr(c, "element_tag", None) in ("td", "th")]
                all_th = bool(cells) and all(c.element_tag == "th" for c in cells)
                page.rows.append(
                    Row(
                        _table_of(chain, element),
                        row.element,
                        box.is_header,
                        all_th,
                        max((_line_count(c) for c in cells), default=0),
                        _text(row),
                    )
                )
                for cell in row.children:
                    if getattr(cell, "element_tag", None) == "th":
                        _header_cell(page, cell)
            if box.children:
                _mark(page, chain)
            if pushed:
                chain.pop()
            return
        if kind in ("BlockReplacedBox", "InlineReplacedBox") or getattr(box, "element_tag", None) == "svg":
            reach(box)
            page.figures += 1
            _mark(page, chain)
            if pushed:
                chain.pop()
            return
        if kind == "LineBox":
            reach(box)
            text = _text(box)
            if any(type(b).__name__.endswith("ReplacedBox") for b in _descendants(box)):
                page.figures += 1  # an inline SVG chart
                _mark(page, chain)
            elif text:
                page.lines.append(text)
                _mark(page, chain)
            if pushed:
                chain.pop()
            return
        for child in getattr(box, "children", ()):
            visit(child)
        if pushed:
            chain.pop()

    for child in page_box.children:
        visit(child)
    for piece in _descendants(page_box):  # running headers and footers too
        if type(piece).__name__ == "TextBox":
            page.chars.setdefault(piece.style["font_family"][0], set()).update(piece.text)
    return page


def promised_but_missing(fonts_css: Path) -> dict[str, set[str]]:
    """Characters an @font-face's unicode-range claims but its font file has no glyph for, by family.

    The text layout takes the claim at its word and prints such a character as an empty box instead
    of falling back to the next font; the reports must not print any of them in that family.
    """
    from fontTools.ttLib import TTFont

    missing: dict[str, set[str]] = {}
    for face in re.findall(r"@font-face\s*{([^}]*)}", fonts_css.read_text(encoding="utf-8")):
        family = re.search(r"font-family:\s*'([^']+)'", face)
        source = re.search(r"src:\s*url\(([^)]+)\)", face)
        claimed = re.search(r"unicode-range:\s*([^;]+);", face)
        if not (family and source and claimed):
            continue
        cmap = TTFont(str(fonts_css.parent / source.group(1))).getBestCmap()
        for part in claimed.group(1).split(","):
            low, _, high = part.strip()[2:].partition("-")
            missing.setdefault(family.group(1), set()).update(
                chr(c)
                for c in range(int(low, 16), int(high or low, 16) + 1)
                if c not in cmap and not 0xD800 <= c <= 0xDFFF
            )
    return missing


def _table_of(chain: list[Any], element: Any) -> Any:
    for e in reversed(chain):
        if e.tag == "table":
            return e
    return element


def _mark(page: Page, chain: list[Any]) -> None:
    if not page.first:
        page.first = list(chain)
    page.last = list(chain)


def _header_cell(page: Page, cell: Any) -> None:
    lines = [b for b in _descendants(cell) if type(b).__name__ == "LineBox"]
    page.headers.append(
        HeaderCell(
            text=element_text(cell.element),
            lines=[_text(line) for line in lines],
            width=cell.width,
            widest=max((sum(c.margin_width() for c in line.children) for line in lines), default=0.0),
        )
    )


def continues(pages_: list[Page], page: Page) -> bool:
    """Whether a page carries on what the page before it holds, rather than starting a chapter or an
    offer (an element with a forced page break before it, that was not on the page before)."""
    if page.number == 1 or not page.first:
        return False
    before = pages_[page.number - 2]
    starts = any(id(e) in page.forced and id(e) not in before.blocks for e in page.first)
    return not starts and any(id(e) in before.blocks for e in page.first)


def widow_pages(pages_: list[Page]) -> list[Page]:
    """Pages that carry on from the page before with three lines or fewer, or three table rows or fewer
    and nothing else (a row counts once however many lines it wraps to), and no figure."""
    found = []
    for page in pages_:
        if not continues(pages_, page) or page.figures:
            continue
        if page.content_lines <= 3 or len(page.lines) + len(page.body_rows) <= 3:
            found.append(page)
    return found


def lone_rows(pages_: list[Page]) -> list[str]:
    """Tables split across pages that leave a single row on one of them (above or below the break)."""
    problems = []
    for page in pages_:
        before = tables_on(pages_[page.number - 2]) if page.number > 1 else {}
        after = tables_on(pages_[page.number]) if page.number < len(pages_) else {}
        for key, (table, rows) in tables_on(page).items():
            body = [r for r in rows if not r.header]
            if len(body) == 1 and (key in before or key in after):
                problems.append(f"page {page.number}: table {table_label(table)}: a single row {body[0].text[:60]!r}")
    return problems


def break_inside_word(header: HeaderCell) -> list[str]:
    """Where a column header's lines break inside a word without a hyphen, as 'end of line|start of next'.

    A break inside a word falls between two letters or digits of the header as written, with no hyphen
    printed at the end of the line: 'Avail|ability'. Breaks at a space, after a hyphen, after a slash
    ('USD/|GPU-h') or at a soft hyphen (printed as a hyphen) are where a reader expects them.
    """
    found = []
    written = header.text
    position = 0
    for current, following in zip(header.lines, header.lines[1:]):
        current, following = _flat(current), _flat(following)
        if not current or not following:
            continue
        hyphen = current.endswith(("-", "\u2010"))
        core = current
        at = written.find(core, position)
        if at < 0 and hyphen:  # the hyphen of a soft hyphen's break is printed, not written
            core = current[:-1]
            at = written.find(core, position)
        if at < 0:
            found.append(f"{current}|{following} (not found in {written!r})")
            continue
        end = at + len(core)
        position = end
        if hyphen or end >= len(written):
            continue
        if written[end - 1].isalnum() and written[end].isalnum():
            found.append(f"{current}|{following}")
    return found


def tables_on(page: Page) -> dict[int, tuple[Any, list[Row]]]:
    """The tables with rows on a page: id(table) -> (table element, its rows here)."""
    found: dict[int, tuple[Any, list[Row]]] = {}
    for row in page.rows:
        found.setdefault(id(row.table), (row.table, []))[1].append(row)
    return found


def header_problems(pages_: list[Page]) -> list[str]:
    """A header left alone at the foot of a page, or a table carried over without its header.

    A header row that is not a <thead> is a problem of its own: it is not repeated on the next page.
    """
    problems = []
    for page in pages_:
        after = tables_on(pages_[page.number]) if page.number < len(pages_) else {}
        before = tables_on(pages_[page.number - 2]) if page.number > 1 else {}
        for key, (table, rows) in tables_on(page).items():
            name = f"page {page.number}: table {table_label(table)}"
            if all(r.header or r.all_th for r in rows) and key in after:
                problems.append(f"{name}: header alone, its rows on the next page")
            if has_header(table) and key in before and not rows[0].header:
                problems.append(f"{name}: carried over from the page before without its header")
            first = next(iter(table.iter("tr")), None)
            if rows[0].element is first and rows[0].all_th and not rows[0].header:
                problems.append(f"{name}: its header row is not a <thead>, so it is not repeated on the next page")
    return problems


def heading_at_foot(pages_: list[Page]) -> list[str]:
    """Headings that end a page while what they introduce starts on the next."""
    return [
        f"page {p.number}: {element_text(p.last[-1])!r}"
        for p in pages_
        if p.last and p.last[-1].tag in HEADINGS and p.number < len(pages_)
    ]


def has_header(table: Any) -> bool:
    """A table with column headers: a <thead>, or a first row of <th> cells."""
    first = next(iter(table.iter("tr")), None)
    return any(c.tag == "thead" for c in table) or (
        first is not None and bool(_cells(first)) and all(c.tag == "th" for c in _cells(first))
    )


def _cells(row: Any) -> list[Any]:
    return [c for c in row if c.tag in ("th", "td")]


def table_label(table: Any) -> str:
    """A table named by its class and its first header cell, for messages."""
    first = next((element_text(c) for c in table.iter() if c.tag == "th"), "")
    return f"{table.get('class', '')!r} ({first[:30]!r})"


def half_empty(pages_: list[Page]) -> list[Page]:
    """Pages filled to less than half their height that do not end a chapter: the page after them
    carries on what they hold (a chapter, or an offer's section, starts its own page: a short last
    page of one is where the reader expects white space)."""
    return [page for page in pages_[:-1] if page.filled < 0.5 and not starts_anew(pages_, pages_[page.number])]


def starts_anew(pages_: list[Page], page: Page) -> bool:
    """Whether a page starts with an element whose style forces a page break before it (a chapter, an
    offer's section) and that was not on the page before."""
    before = pages_[page.number - 2] if page.number > 1 else None
    return page.number == 1 or any(
        id(e) in page.forced and (before is None or id(e) not in before.blocks) for e in page.first
    )
