"""Text from outside (vendor names, notes, file names, Evaluation files) on its way to a reader.

One place for each rule, so that every writer applies the same one:

- `printable`: control characters (terminal escape sequences) and bidirectional overrides
  (which reverse a name on screen: "U+202E" spoofing) are shown as visible escapes in messages;
- `spreadsheet_text` / `csv_writer`: the OWASP CSV-injection rule, for every CSV the tool writes
  and the xlsx export: text that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is
  written so that a spreadsheet shows it as text, never runs it as a formula; numbers stay numbers;
- `markdown_text`: Markdown a vendor could smuggle in (links, images, mentions, headings, table
  syntax, raw HTML) is escaped so that it prints as typed;
- `plain_text`: Markdown the tool wrote, turned back into plain text for mail or chat (`--format
  text`): no backslash escapes, HTML entities or bold markers, vendor text as typed.
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

# Embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder the text around
# them. The plain marks U+200E/U+200F do not, and right-to-left scripts need them: they stay.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# The line and paragraph separators: a terminal, Markdown viewer, browser or PDF may start a new line
# at them, so one vendor name could forge a line of its own ("APPROVED BY THE BOARD").
SEPARATORS = "\u2028\u2029"
_UNSAFE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{SEPARATORS}{BIDI_CONTROLS}]")
_UNSAFE_IN_LINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{SEPARATORS}{BIDI_CONTROLS}]")


def unsafe_characters(text: str) -> str | None:
    """What is wrong with text from outside ("control characters", "bidirectional overrides"), or None.
    Tabs and line feeds are fine; a carriage return is not (it forges lines in Markdown and terminals)."""
    found = _UNSAFE.findall(text)
    if not found:
        return None
    if any(c in BIDI_CONTROLS for c in found):
        return "bidirectional override characters (U+202A-U+202E, U+2066-U+2069)"
    if "\r" in found:
        return "a carriage return"
    if any(c in SEPARATORS for c in found):
        return "line or paragraph separators (U+2028, U+2029)"
    return "control characters"


# --- the gate at intake -----------------------------------------------------------------------------

# Every character a terminal, Markdown viewer, browser, PDF or str.splitlines may end a line at: line feed,
# vertical tab, form feed, carriage return, the file/group/record separators, NEL, and U+2028/U+2029.
LINE_BREAKS = "\n\x0b\x0c\r\x1c\x1d\x1e\x85" + SEPARATORS
MAX_COMBINING_RUN = 4  # combining marks on one character: a script stacks two or three, "Zalgo" text hundreds
MAX_NAME = 256  # characters in a name (vendor, region, GPU, fee, workload): at most four lines of an 80-column screen
_CONTROLS = re.compile("[\\x00-\\x08\\x0e-\\x1b\\x1f\\x7f-\\x84\\x86-\\x9f]")


class TextRefused(ValueError):
    """The gate's refusal as a field's check raises it: its message is the whole message."""


def _combining_run(text: str) -> int:
    import unicodedata

    longest = run = 0
    for c in text:
        run = run + 1 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me") else 0
        longest = max(longest, run)
    return longest


def _shown(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"U+{code:04X}"


def text_problem(text: str, one_line: bool = True, max_length: int | None = None) -> str | None:
    """What the one gate for text from outside refuses in `text`, in words (None: nothing): a line break of any
    kind (`one_line`; otherwise line feeds are allowed and every other break refused), a control character, a
    bidirectional control, a run of more than MAX_COMBINING_RUN combining marks, more than `max_length`
    characters. The message names the first character refused and where it is."""
    if text.isascii() and text.isprintable():  # the common case, at a row's speed: no break, control or mark
        if max_length is not None and len(text) > max_length:
            return f"is {len(text):,} characters long: at most {max_length:,} expected"
        return None
    breaks = LINE_BREAKS if one_line else LINE_BREAKS.replace("\n", "")
    for i, c in enumerate(text):
        if c in breaks:
            kind = "a line break" if c in "\n\r\x0b\x0c\x85" or c in SEPARATORS else "a record separator"
            return f"holds {kind} ({_shown(c)}) at character {i + 1}: {'one line' if one_line else 'text'} expected"
        if c in BIDI_CONTROLS:
            return f"holds a bidirectional control ({_shown(c)}) at character {i + 1}: it reorders the text on screen"
        if _CONTROLS.match(c):
            return f"holds a control character ({_shown(c)}) at character {i + 1}"
    run = _combining_run(text)
    if run > MAX_COMBINING_RUN:
        return f"holds {run} combining marks on one character: at most {MAX_COMBINING_RUN} expected"
    if max_length is not None and len(text) > max_length:
        return f"is {len(text):,} characters long: at most {max_length:,} expected"
    return None


def printable(text: str) -> str:
    """One line, safe for a terminal: every control character and bidirectional override becomes
    a visible escape such as \\x1b or \\u202e."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNSAFE_IN_LINE.sub(escape, text)


def printable_lines(text: str) -> str:
    """Lines for a terminal: each line as `printable` makes it, the line feeds between them kept."""
    return "\n".join(printable(line) for line in text.split("\n"))


def visible(value: Any) -> Any:
    """Text for HTML or PDF (the templates' finalize): control characters, line and paragraph
    separators and bidirectional overrides shown as escapes; tabs and line feeds kept; the type
    (str, or markupsafe.Markup already escaped) kept; anything else unchanged."""
    if not isinstance(value, str) or not _UNSAFE.search(value):
        return value

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return type(value)(_UNSAFE.sub(escape, value))


# --- spreadsheets -----------------------------------------------------------------------------------

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text)) and text.strip() == text and "_" not in text
    except ValueError:
        return False


def formula_like(value: Any) -> bool:
    """Text a spreadsheet would read as a formula (OWASP): it begins with = + - @ tab or CR and is
    not a plain number such as -0.05."""
    return isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value)


def spreadsheet_text(value: Any) -> Any:
    """A cell for a CSV: formula-like text gets a leading apostrophe (shown as text, never run);
    numbers, and text that is a plain number, are returned unchanged."""
    return "'" + value if formula_like(value) else value


class _SafeWriter:
    """csv.writer with every cell passed through spreadsheet_text."""

    def __init__(self, writer: Any):
        self._writer = writer

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([spreadsheet_text(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(buffer: Any, **options: Any) -> _SafeWriter:
    """The CSV writer of every CSV output: spreadsheet-safe cells, one line ending."""
    options.setdefault("lineterminator", "\n")
    return _SafeWriter(csv.writer(buffer, **options))


# --- Markdown ---------------------------------------------------------------------------------------

_MD_ESCAPE = re.compile(r"([\\`*_\[\]|#~])")
_RULE = re.compile(r"^(\s*)([-=])(?=[-=\s]*$)")  # a line of - or = turns the line above into a heading


def markdown_text(text: str) -> str:
    """Vendor text as literal Markdown on one line: no link, image, mention, heading, table cell
    break, emphasis or HTML can come out of it."""
    text = printable(text.replace("\r\n", " ").replace("\r", " ").replace("\n", " "))
    text = _MD_ESCAPE.sub(r"\\\1", text)
    # "<" is what opens HTML and autolinks: with it escaped, a ">" is literal ("->" stays "->") except at the
    # start of a line, where it would open a quote
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace("@", "&#64;")
    text = re.sub(r"^(\s*)>", r"\1\\>", text)
    # www.x and scheme://x turn into links on their own (GitHub's autolinks): break them visibly.
    text = re.sub(r"(?i)\b(www)\.", r"\1&#46;", text)
    text = re.sub(r"(?i)\b([a-z][a-z0-9+.-]*):(?=//)", r"\1&#58;", text)
    return _RULE.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


_ESCAPED = re.compile(r"\\([\\`*_\[\]|#~=>-])")  # what markdown_text puts a backslash before
_BOLD = re.compile(r"(?<!\\)\*\*")


def plain_text(markdown: str) -> str:
    """Markdown written by the tool (its vendor text through markdown_text) as plain text: headings as a line
    underlined, tables as aligned columns, bold markers dropped, backslash escapes and HTML entities undone, so a
    mail or chat message reads "->" and "&" rather than "-&gt;" and "&amp;" and no "##" or "|---|". Control
    characters stay escaped (printable)."""
    out: list[str] = []
    for line in markdown_runs(markdown.split("\n")):
        if isinstance(line, list):
            out += _plain_table(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            title = _plain_line(heading.group(2))
            out += [title, ("=" if len(heading.group(1)) == 1 else "-") * len(title)]
        else:
            out.append(_plain_line(line))
    return "\n".join(out)


def markdown_runs(lines: list[str]) -> Iterator[str | list[str]]:
    """The lines of a Markdown text, each table (a run of lines that start with "|") gathered in one list."""
    for table, run in itertools.groupby(lines, key=lambda line: line.startswith("|")):
        if table:
            yield list(run)
        else:
            yield from run


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CELL_BREAK = re.compile(r"(?<!\\)\|")
_ALIGN_ROW = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")


def _plain_line(line: str) -> str:
    import html

    # html.unescape also undoes the &#46; and &#58; that break autolinks: plain text has none
    return html.unescape(_ESCAPED.sub(r"\1", _BOLD.sub("", line)))


def table_cells(block: list[str]) -> tuple[list[list[str]], set[int]]:
    """The rows of a Markdown table written by the tool (its lines starting with "|") as plain text cells, the
    header first, every row as long as the longest; and the columns aligned right (---:)."""
    right: set[int] = set()
    rows: list[list[str]] = []
    for line in block:
        if _ALIGN_ROW.match(line):
            right = {n for n, c in enumerate(line.strip().strip("|").split("|")) if c.strip().endswith(":")}
            continue
        cells = _CELL_BREAK.split(line.strip())[1:-1]
        rows.append([_plain_line(c.strip()) for c in cells])
    count = max(len(r) for r in rows)
    return [r + [""] * (count - len(r)) for r in rows], right


def _plain_table(block: list[str]) -> list[str]:
    """A Markdown table as columns two spaces apart, numbers (---: columns) right-aligned, the header underlined."""
    from rich.cells import cell_len

    rows, right = table_cells(block)
    count = len(rows[0])
    widths = [max(cell_len(r[n]) for r in rows) for n in range(count)]

    def line(row: list[str]) -> str:
        cells = [
            " " * (w - cell_len(c)) + c if n in right else c + " " * (w - cell_len(c))
            for n, (c, w) in enumerate(zip(row, widths))
        ]
        return "  ".join(cells).rstrip()

    lines = [line(rows[0]), "  ".join("-" * w for w in widths)] if len(block) > 1 else []
    return lines + [line(r) for r in rows[1:]] if lines else [line(r) for r in rows]
