"""An offer sheet read safely into rows: a CSV file or the first sheet of an .xlsx workbook (`read_sheet`), with the
limits that keep a hostile file small (its bytes, rows, columns and the expanded size of its parts), hidden rows,
columns and sheets refused, and a formula kept as a `Formula`, never evaluated."""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.files import own_input
from procure.io.yamlsafe import read_text, regular_file

MAX_XLSX_BYTES = 20 * 1024 * 1024


MAX_ROWS = 10_000


MAX_COLUMNS = 500


@dataclass(frozen=True)
class Formula:
    """A formula cell: refused, never evaluated."""

    text: str


@dataclass(frozen=True)
class Sheet:
    display: str
    header: list[Any]
    rows: list[tuple[int, list[Any]]]  # (spreadsheet row number, cell values), header = row 1


def read_sheet(path: Path) -> Sheet:
    """The header and rows of a CSV or XLSX (the first worksheet); empty cells are None."""
    path = Path(path)
    display = str(path)
    if path.suffix.lower() == ".csv":
        own_input(path)
        return _read_csv(path, display)
    if path.suffix.lower() == ".xls":
        raise InputError([Problem(display, None, "", "old .xls format: save the sheet as .xlsx or .csv")])
    own_input(path)
    regular_file(path, display, MAX_XLSX_BYTES)  # a pipe would hang the reader
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise InputError([Problem(display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    if magic != b"PK\x03\x04":
        raise InputError([Problem(display, None, "", "not an XLSX workbook: expected a .xlsx or .csv file")])
    return _read_xlsx(path, display)


def _read_csv(path: Path, display: str) -> Sheet:
    text = read_text(path, display)
    first = next((line for line in text.splitlines() if line.strip()), "")
    # Spreadsheets in many locales export CSV with ';': column names hold neither ',' nor ';'.
    delimiter = ";" if ";" in first and "," not in first else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    records = []
    try:
        for record in reader:
            records.append(record)
            if len(records) > MAX_ROWS + 1:
                break
    except csv.Error as exc:  # e.g. a field over the csv module's 131,072-character limit
        raise InputError([Problem(display, reader.line_num, "", f"malformed CSV: {exc}")]) from None
    if len(records) > MAX_ROWS + 1:
        raise InputError([Problem(display, None, "", f"too many rows ({len(records):,}; limit {MAX_ROWS:,} offers)")])

    def cell(raw: str) -> Any:
        value = raw.strip()
        if not value:
            return None
        return Formula(value) if value.startswith("=") else value

    rows = [(number, [cell(v) for v in record]) for number, record in enumerate(records, start=1)]
    if not rows:
        raise InputError([Problem(display, None, "", "empty file: expected a header row of field paths")])
    return Sheet(display, rows[0][1], rows[1:])


def _openpyxl_missing(display: str) -> InputError:
    return InputError(
        [Problem(display, None, "", "Excel files need openpyxl: pip install openpyxl (or save the sheet as CSV)")]
    )


def _read_xlsx(path: Path, display: str) -> Sheet:
    try:
        from openpyxl import load_workbook
    except ImportError:
        raise _openpyxl_missing(display) from None

    size = path.stat().st_size
    if size > MAX_XLSX_BYTES:
        raise InputError([Problem(display, None, "", f"file is too large ({size:,} bytes; limit {MAX_XLSX_BYTES:,})")])
    _check_expansion(path, display)
    try:
        # data_only=False: a formula cell reads as its formula, which is refused below; the value
        # cached by the sender's spreadsheet is never trusted.
        book = load_workbook(path, read_only=True, data_only=False)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise InputError([Problem(display, None, "", f"cannot read the workbook: {exc}")]) from None
    except Exception as exc:  # openpyxl raises its own types for malformed parts
        raise InputError(
            [Problem(display, None, "", f"cannot read the workbook: {type(exc).__name__}: {exc}")]
        ) from None
    try:
        if not book.worksheets:
            raise InputError([Problem(display, None, "", "the workbook has no worksheet")])
        sheet = book.worksheets[0]
        hidden_rows, hidden_columns = _scan_sheet(book, sheet, display)
        # The sheet's stated dimension is the sender's claim: a short one would silently cut rows
        # or columns off, so every cell present is read instead.
        sheet.reset_dimensions()
        rows: list[tuple[int, list[Any]]] = []
        for number, cells in enumerate(sheet.iter_rows(), start=1):
            if number > MAX_ROWS + 1:
                raise InputError([Problem(display, None, "", f"too many rows (limit {MAX_ROWS:,} offers)")])
            if len(cells) > MAX_COLUMNS:
                raise InputError(
                    [Problem(display, number, "", f"too many columns ({len(cells):,}; limit {MAX_COLUMNS:,})")]
                )
            values = [_xlsx_value(c) for c in cells]
            for index, value in enumerate(values):
                if isinstance(value, (str, Formula)) and len(str(value)) > MAX_CELL_CHARS:
                    raise InputError(
                        [
                            Problem(
                                display,
                                number,
                                _letters(index),
                                f"cell holds {len(str(value)):,} characters (limit {MAX_CELL_CHARS:,})",
                            )
                        ]
                    )
            rows.append((number, values))
    except InputError:
        raise
    except Exception as exc:  # malformed sheet XML (e.g. an entity expansion bomb) surfaces while reading
        raise InputError(
            [Problem(display, None, "", f"cannot read the workbook: {type(exc).__name__}: {exc}")]
        ) from None
    finally:
        book.close()
    if not rows:
        raise InputError([Problem(display, None, "", "empty worksheet: expected a header row of field paths")])
    _refuse_hidden(display, rows, hidden_rows, hidden_columns)
    return Sheet(display, rows[0][1], rows[1:])


def _refuse_hidden(
    display: str, rows: list[tuple[int, list[Any]]], hidden_rows: set[int], hidden_columns: set[int]
) -> None:
    """A hidden row or column that holds a value is refused by name: it would be imported unseen
    (hidden rows or columns that are empty, such as the unused columns to the sheet's end, are fine)."""
    rows_found = sorted(
        number for number, values in rows if number in hidden_rows and any(v is not None for v in values)
    )
    columns_found = sorted(
        i for i in hidden_columns if any(i < len(values) and values[i] is not None for _, values in rows)
    )
    if not rows_found and not columns_found:
        return
    header = rows[0][1]

    def column(i: int) -> str:
        name = header[i] if i < len(header) and isinstance(header[i], str) else None
        return f"{_letters(i)} ({name})" if name else _letters(i)

    named = (
        [
            ("rows " if len(rows_found) > 1 else "row ")
            + ", ".join(map(str, rows_found[:10]))
            + (" ..." if len(rows_found) > 10 else "")
        ]
        if rows_found
        else []
    ) + (
        [
            ("columns " if len(columns_found) > 1 else "column ")
            + ", ".join(column(i) for i in columns_found[:10])
            + (" ..." if len(columns_found) > 10 else "")
        ]
        if columns_found
        else []
    )
    raise InputError(
        [
            Problem(
                display,
                rows_found[0] if rows_found else None,
                _letters(columns_found[0]) if columns_found else "",
                f"{' and '.join(named)} {'are' if len(rows_found) + len(columns_found) > 1 else 'is'} hidden but "
                f"hold{'s' if len(rows_found) + len(columns_found) == 1 else ''} values that would be imported unseen: "
                "unhide or delete them, then import again",
            )
        ]
    )


def _scan_sheet(book: Any, sheet: Any, display: str) -> tuple[set[int], set[int]]:
    """Read the sheet's XML as a stream before openpyxl builds any row: a row is refused at its
    501st cell (openpyxl would first build the whole row: one row of 2 M cells took 11-22 s and
    970 MB before "too many columns"), and hidden rows and columns, which a reader of the sheet does
    not see but which would be imported (a hidden column set published_tier), are returned: the row
    numbers and the 0-based column indexes."""
    from xml.etree.ElementTree import ParseError, XMLPullParser

    parser = XMLPullParser(events=("start", "end"))
    hidden_rows: set[int] = set()
    hidden_columns: set[int] = set()
    rows = cells = number = 0
    try:
        with book._archive.open(sheet._worksheet_path) as stream:
            while chunk := stream.read(64 * 1024):
                parser.feed(chunk)
                for event, element in parser.read_events():
                    tag = element.tag.rsplit("}", 1)[-1]
                    if event == "end":
                        if tag == "row":
                            element.clear()  # what was read of a row is dropped as soon as it ends
                        continue
                    if tag == "row":
                        rows, cells = rows + 1, 0
                        stated = element.get("r") or ""
                        number = int(stated) if stated.isdigit() else rows
                        if rows > MAX_ROWS + 1 or number > MAX_ROWS + 1:
                            raise InputError(
                                [
                                    Problem(
                                        display,
                                        None,
                                        "",
                                        f"too many rows (row {number:,} of sheet {sheet.title!r}; limit {MAX_ROWS:,} "
                                        "offers and the header)",
                                    )
                                ]
                            )
                        if element.get("hidden") in ("1", "true"):
                            hidden_rows.add(number)
                    elif tag == "c":
                        cells += 1
                        # openpyxl fills a row with empty cells up to its last cell's column: a cell
                        # at XFD1 would build 16,384 cells, in every such row, before any count
                        column = _column_number(element.get("r") or "") or cells
                        if cells > MAX_COLUMNS or column > MAX_COLUMNS:
                            raise InputError(
                                [
                                    Problem(
                                        display,
                                        number,
                                        "",
                                        f"too many columns (over {MAX_COLUMNS:,}, at cell "
                                        f"{_letters(column - 1)}{number} of sheet {sheet.title!r}; the row was not "
                                        "read further)",
                                    )
                                ]
                            )
                    elif tag == "col" and element.get("hidden") in ("1", "true"):
                        first, last = int(element.get("min", "1")), int(element.get("max", "1"))
                        hidden_columns.update(
                            range(first - 1, min(last, MAX_COLUMNS))
                        )  # Excel hides the unused columns to the end: capped
    except (ParseError, ValueError, OSError, KeyError) as exc:
        raise InputError(
            [Problem(display, None, "", f"cannot read the workbook: {type(exc).__name__}: {exc}")]
        ) from None
    return hidden_rows, hidden_columns


def _column_number(reference: str) -> int:
    """The 1-based column of a cell reference such as "XFD1" (0 without one)."""
    number = 0
    for char in reference:
        if not ("A" <= char <= "Z"):
            break
        number = number * 26 + ord(char) - 64
    return number


# A workbook is a zip of XML: a small file can expand to gigabytes (a zip bomb, or millions of empty
# cells or shared strings). The sizes the zip declares are checked before anything is expanded
# (zipfile never reads past a member's declared size), then each cell's length as it is read.
MAX_XLSX_EXPANDED = 64 * 1024 * 1024  # all parts together, uncompressed


MAX_XLSX_PART = 32 * 1024 * 1024  # one worksheet or the shared strings


MAX_XLSX_PARTS = 2_000


MAX_XLSX_RATIO = 200  # uncompressed / compressed, for parts over 1 MB


MAX_CELL_CHARS = 32_767  # Excel's own limit on a cell's text


def _check_expansion(path: Path, display: str) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError([Problem(display, None, "", f"cannot read the workbook: {exc}")]) from None
    if len(parts) > MAX_XLSX_PARTS:
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "",
                    f"the workbook has {len(parts):,} parts (limit {MAX_XLSX_PARTS:,}): refused before reading",
                )
            ]
        )
    total = sum(p.file_size for p in parts)
    if total > MAX_XLSX_EXPANDED:
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "",
                    f"the workbook expands to {total:,} bytes (limit {MAX_XLSX_EXPANDED:,}): refused before reading",
                )
            ]
        )
    for part in parts:
        if part.file_size > MAX_XLSX_PART:
            raise InputError(
                [
                    Problem(
                        display,
                        None,
                        "",
                        f"{part.filename} expands to {part.file_size:,} bytes (limit {MAX_XLSX_PART:,}): refused "
                        "before reading",
                    )
                ]
            )
        if part.file_size > 1024 * 1024 and part.file_size > MAX_XLSX_RATIO * max(part.compress_size, 1):
            raise InputError(
                [
                    Problem(
                        display,
                        None,
                        "",
                        f"{part.filename} expands {part.file_size // max(part.compress_size, 1):,} times (a zip "
                        "bomb?): refused before reading",
                    )
                ]
            )


def _xlsx_value(cell: Any) -> Any:
    value = getattr(cell, "value", None)
    if getattr(cell, "data_type", None) == "f" or (
        value is not None and not isinstance(value, (str, int, float, bool, datetime, date, time, timedelta))
    ):
        text = getattr(value, "text", value)  # ArrayFormula keeps its formula in .text
        return Formula(str(text))
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return None
        if value.startswith("="):
            return Formula(value)
    return value


def _letters(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA: the column as a spreadsheet shows it."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(65 + rest) + out
    return out
