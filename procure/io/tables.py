"""CSV inputs (market quotes, price series, actuals, incident lists): rows with their line numbers, numbers and
dates checked where they are read, every problem located by file, line and column."""

from __future__ import annotations

import csv
import io
import re
from datetime import date
from pathlib import Path

from procure.errors import InputError, Problem
from procure.io.yamlsafe import FIRST_YEAR, LAST_YEAR, implausible, read_text
from procure.textsafe import MAX_NAME, text_problem


def read_csv_rows(
    path: Path, display: str, columns: tuple[str, ...]
) -> tuple[list[tuple[int, dict[str, str]]], list[str], list[Problem]]:
    """Rows of a CSV with exactly the given columns, with their line numbers; '#' lines are comments.

    Returns (rows, comment lines, problems).
    """
    try:
        text = read_text(path, display)
    except InputError as exc:
        return [], [], exc.problems
    return csv_text_rows(text, display, columns)


def csv_text_rows(
    text: str, display: str, columns: tuple[str, ...]
) -> tuple[list[tuple[int, dict[str, str]]], list[str], list[Problem]]:
    """read_csv_rows of text already in memory (a file about to be written, checked as it will be read)."""
    problems: list[Problem] = []
    comments: list[str] = []
    numbered: list[tuple[int, str]] = []
    # lines end at a line feed or carriage return only: a U+2028, form feed or NEL inside a field is that field's
    # (and refused there, by name), not the end of a row that leaves it with too few values
    lines = re.split(r"\r\n|\n|\r", text)
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(stripped.lstrip("#").strip())
        elif stripped:
            numbered.append((number, line))
    if not numbered:
        return [], comments, [Problem(display, None, "", f"no header: expected columns {', '.join(columns)}")]
    header_line, header = numbered[0]
    try:
        names = [h.strip() for h in next(csv.reader([header]))]
    except csv.Error as exc:  # e.g. a field over the csv module's 131,072-character limit
        return [], comments, [Problem(display, header_line, "", f"malformed CSV: {exc}")]
    if names != list(columns):
        missing = [c for c in columns if c not in names]
        extra = [c for c in names if c not in columns]
        detail = "; ".join(
            filter(
                None,
                [f"missing {', '.join(missing)}" if missing else "", f"unexpected {', '.join(extra)}" if extra else ""],
            )
        )
        return (
            [],
            comments,
            [Problem(display, header_line, "", f"expected columns {', '.join(columns)} ({detail or 'in this order'})")],
        )
    rows = []
    for number, line in numbered[1:]:
        try:
            values = next(csv.reader(io.StringIO(line)))
        except csv.Error as exc:  # e.g. a field over the csv module's 131,072-character limit
            problems.append(Problem(display, number, "", f"malformed CSV: {exc}"))
            continue
        if line.count('"') % 2:  # a quote opened and not closed: the field ran on past a line break
            problems.append(
                Problem(
                    display,
                    number,
                    "",
                    "a quoted field is not closed on its line: a field holding a line break is refused (a row is one "
                    "line; the lines after it would be read as rows or comments of their own)",
                )
            )
            continue
        if len(values) != len(columns):
            problems.append(Problem(display, number, "", f"expected {len(columns)} values, got {len(values)}"))
            continue
        rows.append((number, {c: v.strip() for c, v in zip(columns, values)}))
    return rows, comments, problems


def gate_field(
    text: str,
    display: str,
    line: int | None,
    field: str,
    problems: list[Problem],
    one_line: bool = True,
    max_length: int | None = MAX_NAME,
) -> bool:
    """The text gate (procure.textsafe.text_problem) for a field of a file read at intake (an incident's name or
    component, an invoice id, a billing export's unit): a refusal becomes a Problem naming the file, line and
    field; True if it passes."""
    found = text_problem(text, one_line, max_length)
    if found is not None:
        problems.append(Problem(display, line, field, found))
    return found is None


def number(
    raw: str,
    display: str,
    line: int,
    column: str,
    problems: list[Problem],
    *,
    quoted: int | None = None,
    finite: bool = True,
) -> float | None:
    """`raw` read as a number (finite unless `finite` is False: the caller words that check with its range), else None
    and a problem quoting `raw` (its first `quoted` characters when given)."""
    shown = raw if quoted is None else raw[:quoted]
    try:
        value = float(raw)
    except ValueError:
        problems.append(Problem(display, line, column, f"must be a number (got {shown!r})"))
        return None
    if finite and (value != value or value in (float("inf"), float("-inf"))):
        problems.append(Problem(display, line, column, f"must be a finite number (got {shown})"))
        return None
    return value


def parse_number(
    raw: str, display: str, line: int, column: str, problems: list[Problem], *, positive: bool = True
) -> float | None:
    value = number(raw, display, line, column, problems)
    if value is None:
        return None
    if positive and value <= 0:
        problems.append(Problem(display, line, column, f"must be greater than 0 (got {raw})"))
        return None
    why = implausible(value, raw)  # finite but beyond any price or volume: sums overflow, products vanish
    if why:
        problems.append(Problem(display, line, column, why))
        return None
    return value


def parse_date(raw: str, display: str, line: int, column: str, problems: list[Problem]) -> date | None:
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        problems.append(Problem(display, line, column, f"must be a date like 2026-11-30 (got {raw!r})"))
        return None
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        problems.append(
            Problem(display, line, column, f"must be a date between {FIRST_YEAR} and {LAST_YEAR} (got {raw})")
        )
        return None
    return day
