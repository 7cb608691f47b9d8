"""Hostile RFP workbooks, fourth pass: a row far past the column limit is refused without reading
it whole, and hidden rows and columns holding values are refused by name instead of imported unseen.

The valid sheet is tests/test_importers.py's India row (one offer, every field typed).
"""

from __future__ import annotations

import random
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from test_importers import XLSX_HEADER, problems_of, write_xlsx, xlsx_row

from procure.errors import InputError
from procure.io.sheets import MAX_COLUMNS, read_sheet


def with_sheet_xml(path: Path, change) -> Path:
    """Rewrite the first worksheet's XML of a workbook (its other parts as they were)."""
    source = path.read_bytes()
    target = path.with_name("changed.xlsx")
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = change(data.decode()).encode()
            new.writestr(item.filename, data)
    assert path.read_bytes() == source
    return target


def test_a_row_far_past_the_column_limit_is_refused_at_its_limit(tmp_path):
    # Finding: one row of 2 M cells, within every size limit, took 11-22 s and 970 MB before "too many
    # columns". Here 300,000 cells of random numbers (4.5 MB of XML, compressing about 3 times, so no
    # zip-bomb rule applies) stand for it: openpyxl builds all of them before the row's length is
    # known (about 150 MB traced on the unchanged code); the row must be refused after 501.
    base = write_xlsx(tmp_path / "rfp.xlsx", XLSX_HEADER, [xlsx_row()])
    rng = random.Random(7)
    long_row = '<row r="3">' + "".join(f"<c><v>{rng.randrange(10**6)}</v></c>" for _ in range(300_000)) + "</row>"
    sheet = with_sheet_xml(base, lambda xml: xml.replace("</sheetData>", long_row + "</sheetData>"))
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as excinfo:
            read_sheet(sheet)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert any("changed.xlsx:3: too many columns" in p and f"{MAX_COLUMNS:,}" in p for p in problems_of(excinfo)), (
        problems_of(excinfo)
    )
    assert peak < 40_000_000, f"{peak / 1e6:.0f} MB traced"


def test_a_hidden_column_holding_a_value_is_refused_by_name(tmp_path):
    # Finding: a hidden column set operator.published_tier: platinum, imported without a word.
    from openpyxl import Workbook

    header = [*XLSX_HEADER, "operator.published_tier"] if "operator.published_tier" not in XLSX_HEADER else XLSX_HEADER
    row = xlsx_row()
    index = header.index("operator.published_tier")
    row = row + [None] * (len(header) - len(row))
    row[index] = "platinum"
    book = Workbook()
    sheet = book.active
    sheet.append(header)
    sheet.append(row)
    letter = sheet.cell(row=1, column=index + 1).column_letter
    sheet.column_dimensions[letter].hidden = True
    sheet.column_dimensions["ZZ"].hidden = True  # an empty hidden column, as unused columns often are: fine
    path = tmp_path / "rfp.xlsx"
    book.save(path)
    with pytest.raises(InputError) as excinfo:
        read_sheet(path)
    (problem,) = problems_of(excinfo)
    assert f"rfp.xlsx: {letter}: column {letter} (operator.published_tier) is hidden" in problem, problem


def test_a_hidden_row_holding_values_is_refused_by_name(tmp_path):
    from openpyxl import load_workbook

    path = write_xlsx(tmp_path / "rfp.xlsx", XLSX_HEADER, [xlsx_row(), xlsx_row(id="juliet")])
    book = load_workbook(path)
    book.active.row_dimensions[3].hidden = True
    book.active.row_dimensions[9].hidden = True  # hidden and empty: fine
    book.save(path)
    with pytest.raises(InputError) as excinfo:
        read_sheet(path)
    (problem,) = problems_of(excinfo)
    assert "rfp.xlsx:3:" in problem and "row 3 is hidden" in problem, problem


def test_hidden_empty_rows_and_columns_are_no_reason_to_refuse(tmp_path):
    from openpyxl import load_workbook

    path = write_xlsx(tmp_path / "rfp.xlsx", XLSX_HEADER, [xlsx_row()])
    book = load_workbook(path)
    book.active.column_dimensions.group("ZA", "ZZ", hidden=True)
    book.active.row_dimensions[7].hidden = True
    book.save(path)
    sheet = read_sheet(path)
    assert [number for number, _ in sheet.rows][:1] == [2] and sheet.rows[0][1][0] == "india"
