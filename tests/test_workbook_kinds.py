"""The workbook's Offers sheet asks each row's offer kind (procure/model/kinds/): a kind with no GPU-hour
(`Kind.per_task`) gets blank cost-per-GPU-hour cells, a kind whose prepay is not financed (`Kind.prepay_financed`:
owned) gets no financing or prepay risk, and a new kind that declares either gets the same without a line of
render/workbook.py changing.

The cells are checked as a spreadsheet computes them: a small evaluator below reads the formulas openpyxl stores
(IF, OR, N, IFERROR, MIN, MAX, arithmetic and comparisons, the subset these cells use), with Excel's rules that a
blank cell counts as 0 in arithmetic and that IF computes only the branch it takes. Figures are worked by hand from
the example workspace (docs/cost-model.md, steps 1-3): assumptions.cost_of_capital 0.10, vendor_default_rate 0."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from procure.analysis.evaluate import evaluate_with_inputs
from procure.io.workspace import load_workspace
from procure.model.kinds import KINDS, Kind
from procure.render import workbook
from procure.render.workbook import to_xlsx

openpyxl = pytest.importorskip("openpyxl")

ROOT = Path(__file__).parent.parent
AS_OF = date(2026, 11, 29)
COST_COLUMNS = ("Rent", "Financing", "Prepay risk", "Staff", "Software", "Full")

TOKEN = re.compile(
    r'\s*(?:(?P<string>"[^"]*")|(?P<ref>(?:\w+!)?\$?[A-Z]{1,3}\$?\d+)|(?P<number>\d+(?:\.\d+)?(?:E[+-]?\d+)?)'
    r"|(?P<name>[A-Z]+)(?=\()|(?P<bool>TRUE|FALSE)|(?P<op><>|<=|>=|[-+*/^=<>(),]))"
)


class Sheet:
    """Computes the formula cells of a workbook's sheet as a spreadsheet does (the subset the Offers sheet uses)."""

    def __init__(self, book: Any, name: str) -> None:
        self.book, self.name = book, name

    def value(self, sheet: str, cell: str) -> Any:
        content = self.book[sheet][cell.replace("$", "")].value
        if isinstance(content, str) and content.startswith("="):
            return Formula(self, sheet, content[1:]).compute()
        return content


class Formula:
    """A recursive-descent reader of one formula; functions get their arguments unevaluated (IF is lazy)."""

    def __init__(self, sheet: Sheet, where: str, text: str) -> None:
        self.sheet, self.where = sheet, where
        self.tokens = [(m.lastgroup, m.group(m.lastgroup)) for m in TOKEN.finditer(text)]
        assert "".join(t for _, t in self.tokens) == text.replace(" ", ""), text  # every character read
        self.i = 0

    def compute(self) -> Any:
        result = self.compare()()
        assert self.i == len(self.tokens)
        return result

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        self.i += 1
        return self.tokens[self.i - 1]

    def compare(self) -> Callable[[], Any]:
        left = self.add()
        ops = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}
        if self.peek() in ops:
            op, right = ops[self.take()[1]], self.add()
            return lambda: op(_blank(left()), _blank(right()))
        return left

    def add(self) -> Callable[[], Any]:
        value = self.mul()
        while self.peek() in ("+", "-"):
            op, right, left = self.take()[1], self.mul(), value
            value = (
                (lambda a, b: lambda: _num(a()) + _num(b()))(left, right)
                if op == "+"
                else (lambda a, b: lambda: _num(a()) - _num(b()))(left, right)
            )
        return value

    def mul(self) -> Callable[[], Any]:
        value = self.unary()
        while self.peek() in ("*", "/"):
            op, right, left = self.take()[1], self.unary(), value
            value = (
                (lambda a, b: lambda: _num(a()) * _num(b()))(left, right)
                if op == "*"
                else (lambda a, b: lambda: _num(a()) / _num(b()))(left, right)
            )
        return value

    def unary(self) -> Callable[[], Any]:
        if self.peek() == "-":
            self.take()
            inner = self.unary()
            return lambda: -_num(inner())
        return self.primary()

    def primary(self) -> Callable[[], Any]:
        kind, text = self.take()
        if kind == "number":
            return lambda: float(text)
        if kind == "string":
            return lambda: text[1:-1]
        if kind == "bool":
            return lambda: text == "TRUE"
        if kind == "ref":
            sheet, _, cell = text.rpartition("!")
            return lambda: self.sheet.value(sheet or self.where, cell)
        if text == "(":
            inner = self.compare()
            assert self.take()[1] == ")"
            return inner
        assert kind == "name", text
        self.take()  # (
        args = [self.compare()]
        while self.take()[1] == ",":
            args.append(self.compare())
        return FUNCTIONS[text](*args)


def _blank(x: Any) -> Any:
    return 0.0 if x is None else x


def _num(x: Any) -> float:
    if x is None:
        return 0.0
    if isinstance(x, str):
        raise ValueError(f"#VALUE! ({x!r} in arithmetic)")
    return float(x)


def _iferror(value: Callable[[], Any], fallback: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        try:
            return value()
        except (ValueError, ZeroDivisionError):
            return fallback()

    return run


FUNCTIONS: dict[str, Callable[..., Callable[[], Any]]] = {
    "IF": lambda test, yes, no: lambda: yes() if test() else no(),
    "OR": lambda *tests: lambda: any(t() for t in tests),
    "N": lambda x: lambda: x() if isinstance(x(), (int, float)) and not isinstance(x(), bool) else 0.0,
    "IFERROR": _iferror,
    "MIN": lambda *xs: lambda: min(_num(x()) for x in xs),
    "MAX": lambda *xs: lambda: max(_num(x()) for x in xs),
}


def _book() -> Any:
    ws = load_workspace(ROOT)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, None)
    return openpyxl.load_workbook(io.BytesIO(to_xlsx(ev, inputs)))


def _rows(book: Any) -> tuple[dict[str, str], dict[str, int]]:
    """The Offers sheet's column letter by header (its first words) and row number by offer id."""
    sheet = book["Offers"]
    letters = {str(c.value): c.column_letter for c in sheet[1]}
    return letters, {str(sheet[f"A{r}"].value): r for r in range(2, sheet.max_row + 1)}


def _cost_cell(letters: dict[str, str], start: str, row: int) -> str:
    return next(f"{letter}{row}" for header, letter in letters.items() if header.startswith(start + " "))


@pytest.fixture
def book() -> Any:
    return _book()


def test_a_kind_without_a_gpu_hour_gets_blank_gpu_hour_cells(book):
    """lumen-forge-tokens is per token: every cost per GPU-hour is blank; its cost per task is the token formula."""
    letters, rows = _rows(book)
    sheet = Sheet(book, "Offers")
    row = rows["lumen-forge-tokens"]
    assert [sheet.value("Offers", _cost_cell(letters, c, row)) for c in COST_COLUMNS] == [""] * len(COST_COLUMNS)
    # a GPU-hour row beside it: rent 3.95 x (1 - 0) x 1.015 (escalators, term average) = 4.00925 per GPU-hour
    assert sheet.value("Offers", _cost_cell(letters, "Rent", rows["northwind-b200-mc"])) == pytest.approx(4.00925)


def test_an_owned_kind_has_no_financing_even_with_a_prepay(book):
    """A quarter prepaid on northwind (24 months) is financed: 0.25 x 4.00925 x 0.10 x 24 / 24 = 0.10023125 per
    GPU-hour. The owned cluster with half prepaid (typed in, as a user would) still finances nothing: its capital
    recovery already carries the cost of capital; were it financed it would be 0.5 x 2.0864 x 0.10 x 60 / 24."""
    letters, rows = _rows(book)
    owned = rows["own-b200-colo"]
    book["Offers"][f"{letters['Prepaid share']}{owned}"].value = 0.5
    sheet = Sheet(book, "Offers")
    financing = sheet.value("Offers", _cost_cell(letters, "Financing", rows["northwind-b200-mc"]))
    assert financing == pytest.approx(0.25 * 4.00925 * 0.10 * 24 / 24)
    assert sheet.value("Offers", _cost_cell(letters, "Financing", owned)) == 0
    assert sheet.value("Offers", _cost_cell(letters, "Prepay risk", owned)) == 0
    # its rent is its own hour as evaluated: no discount, no escalators
    assert (
        book["Offers"][f"{letters['Discount']}{owned}"].value,
        book["Offers"][f"{letters['Escalators, term average']}{owned}"].value,
    ) == (None, 1)


def test_a_new_kind_is_asked_without_changing_the_workbook(monkeypatch):
    """Two kinds added to the registry only: 'metered' has no GPU-hour, 'leased' finances no prepay. A row of each
    (northwind's, its basis retyped) gets blank cells, and no financing on its quarter prepaid, respectively."""
    metered = Kind(name="metered", field="metered", label="metered", per_task=True)
    leased = Kind(name="leased", field="leased", label="leased", prepay_financed=False)
    monkeypatch.setattr(workbook, "KINDS", (*KINDS, metered, leased))
    book = _book()
    letters, rows = _rows(book)
    northwind, keel = rows["northwind-b200-mc"], rows["keel-b200-mc"]
    basis = letters["Pricing basis"]
    formula = book["Offers"][_cost_cell(letters, "Financing", northwind)].value
    assert formula.startswith(f'=IF(OR({basis}{northwind}="per_token",{basis}{northwind}="metered"),"",IF(OR(')
    book["Offers"][f"{basis}{northwind}"].value = "leased"
    book["Offers"][f"{basis}{keel}"].value = "metered"
    sheet = Sheet(book, "Offers")
    assert sheet.value("Offers", _cost_cell(letters, "Financing", northwind)) == 0  # was 0.10023125
    assert sheet.value("Offers", _cost_cell(letters, "Rent", northwind)) == pytest.approx(4.00925)
    assert [sheet.value("Offers", _cost_cell(letters, c, keel)) for c in COST_COLUMNS] == [""] * len(COST_COLUMNS)


def test_the_rules_are_declared_by_the_kinds():
    """Today per-token alone has no GPU-hour, owned alone finances no prepay and takes no escalators."""
    assert [k.name for k in KINDS if k.per_task] == ["per_token"]
    assert [k.name for k in KINDS if not k.prepay_financed] == ["owned"]
    assert [k.name for k in KINDS if not k.escalates] == ["owned"]
    assert replace(KINDS[0], name="x").prepay_financed  # the default: a prepay is financed


def test_the_evaluator_reads_every_cost_per_task_as_procure_computed_it(book):
    """A check on the evaluator above: every row's cost per task, computed from the formulas, is the Evaluation's own
    (the LibreOffice test, tests/test_xlsx_live.py, makes the same check with a real spreadsheet)."""
    ws = load_workspace(ROOT)
    ev, _ = evaluate_with_inputs(ws, AS_OF, None, None)
    letters, rows = _rows(book)
    sheet = Sheet(book, "Offers")
    cell = next(letter for header, letter in letters.items() if header.endswith("/task"))
    for record in ev.offers:
        expected = record.metrics["cost_per_task"]
        found = sheet.value("Offers", f"{cell}{rows[record.id]}")
        assert found == ("" if expected is None else pytest.approx(expected)), record.id
