"""Every formula printed on an offer page reproduces the figure beside it.

The test reads the comparison report as a reader does: for each offer page it takes the arithmetic
table's "How" line, evaluates the expression with the figures exactly as printed, and checks the
result against the figure printed beside it and against the Evaluation's own value. Nothing here
is copied from the template's arithmetic: the expression is parsed from the document text.
"""

from __future__ import annotations

import ast
import operator
import re
from datetime import date
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from procure.analysis.evaluate import evaluate_with_inputs
from procure.io.workspace import load_workspace

ROOT = Path(__file__).parent.parent
AS_OF = date(2026, 11, 29)

# Which Evaluation figure each step prints, and the scale it is printed at (costs per task are
# printed per 1,000 tasks, percentages as fractions after parsing).
STEPS = {
    "List price": ("list_price", 1),
    "Rent (": ("rent", 1),
    "Fees over": ("fees", 1),
    "Financing": ("financing", 1),
    "Prepayment at risk": ("prepay_risk", 1),
    "Your operating staff": ("ops", 1),
    "Software": ("software", 1),
    "Full cost per paid GPU-hour": ("full", 1),
    "Availability": ("availability", 1),
    "Successful tasks per GPU-hour at full use": ("capacity_per_gpu_hour", 1),
    "GPUs the demand needs": ("gpus_needed", 1),
    "Fill": ("fill", 1),
    "Successful tasks per paid GPU-hour": ("successful_tasks_per_gpu_hour", 1),
    "Cost per 1,000 successful tasks at typical inputs": ("point_cost_per_task", 1000),
    "Expected cost per 1,000 successful tasks": ("cost_per_task", 1000),
    "Per million delivered output tokens": ("cost_per_mtok", 1),
    "Monthly spend at the demand": ("monthly_spend", 1),
    "Tokens per 1,000 successful tasks": ("rent_per_task", 1000),
    "Fees per 1,000 tasks": ("fees_per_task", 1000),
    "Your staff per 1,000 tasks": ("ops_per_task", 1000),
}

# The printed inputs are rounded (three decimals for amounts per GPU-hour, one for GPUs, four
# significant digits for shares): recomputing from them may differ from the exact figure by a few
# parts in ten thousand. 0.2% is far below any error the formulas could hide (a fee spread over the
# committed instead of the billed GPUs is off by the ratio of the two, 3% or more in the example).
RELATIVE = 0.002


class ArithmeticTables(HTMLParser):
    """Collects, per offer article, the rows of its arithmetic table: (step, expression or None, figure)."""

    def __init__(self) -> None:
        super().__init__()
        self.offers: dict[str, list[tuple[str, str | None, str]]] = {}
        self.offer: str | None = None
        self.in_arith = False
        self.cells: list[str] = []
        self.cell: list[str] | None = None
        self.expr: list[str] | None = None
        self.exprs: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "article" and "offer" in classes:
            self.offer = (a.get("id") or "").removeprefix("offer-")
            self.offers[self.offer] = []
        elif tag == "table" and "arith" in classes and self.offer:
            self.in_arith = True
        elif self.in_arith and tag == "tr":
            self.cells, self.exprs = [], []
        elif self.in_arith and tag == "td":
            self.cell, self.expr = [], None
        elif self.in_arith and tag == "span" and "expr" in classes:
            self.expr = []

    def handle_endtag(self, tag: str) -> None:
        if not self.in_arith:
            return
        if tag == "span" and self.expr is not None:
            self.exprs.append("".join(self.expr))
            self.expr = None
        elif tag == "td" and self.cell is not None:
            self.cells.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and len(self.cells) == 3:
            assert self.offer is not None
            self.offers[self.offer].append((self.cells[0], self.exprs[0] if self.exprs else None, self.cells[2]))
        elif tag == "table":
            self.in_arith = False

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)
        if self.expr is not None:
            self.expr.append(data)


OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate_expression(text: str) -> float:
    """Arithmetic as printed: '1,000', '×', '−', '%' understood; nothing but numbers and + − × /."""
    source = text.replace("×", "*").replace("−", "-").replace("\u2009", " ")
    source = re.sub(r"(?<=\d),(?=\d{3})", "", source)
    source = re.sub(r"(\d+(?:\.\d+)?)\s*%", r"(\1/100)", source)

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in OPS:
            return OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        raise AssertionError(f"not plain arithmetic: {text!r}")

    return walk(ast.parse(source, mode="eval"))


def printed_figure(text: str) -> tuple[float, float]:
    """The figure and half a unit of its last printed digit: '98.51%' -> (0.9851, 0.00005)."""
    clean = text.replace(",", "").strip()
    percent = clean.endswith("%")
    clean = clean.rstrip("%")
    decimals = len(clean.split(".")[1]) if "." in clean else 0
    value, half = float(clean), 0.5 * 10**-decimals
    return (value / 100, half / 100) if percent else (value, half)


@pytest.fixture(scope="module")
def report_tables(shared_report: Any) -> Any:
    """report_tables(root) -> (each offer page's arithmetic rows, the Evaluation): `procure report --format html`,
    as the run renders it once for every module that reads it (its plan, frontier and charts take seconds)."""

    def read(root: Path) -> tuple[dict[str, list[tuple[str, str | None, str]]], object]:
        ws = load_workspace(root)
        ev, _ = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
        parser = ArithmeticTables()
        parser.feed(shared_report(root, fmt="html", as_of=AS_OF.isoformat()).read_text(encoding="utf-8"))
        return parser.offers, ev

    return read


@pytest.mark.parametrize("workspace", ["example", "offer_kinds", "basic", "real_offers"])
def test_every_offer_page_formula_reproduces_its_figure(workspace: str, data_dir: Path, report_tables: Any) -> None:
    root = ROOT if workspace == "example" else data_dir / workspace
    tables, ev = report_tables(root)
    assert set(tables) == {o.id for o in ev.offers}  # type: ignore[attr-defined]
    checked = 0
    for offer_id, rows in tables.items():
        metrics = ev.offer(offer_id).metrics  # type: ignore[attr-defined]
        for step, expression, figure in rows:
            key = next((STEPS[prefix] for prefix in STEPS if step.startswith(prefix)), None)
            if expression is None or key is None:
                continue
            name, scale = key
            if metrics[name] is None:  # a figure that cannot be computed (no throughput at the target) prints a dash
                assert figure == "—", f"{offer_id}: {step}"
                continue
            exact = metrics[name] * scale
            value, half = printed_figure(figure)
            recomputed = evaluate_expression(expression)
            where = f"{offer_id}: {step}: {expression} = {recomputed:.6g}, printed {figure}, evaluation {exact:.6g}"
            assert abs(value - exact) <= half + 1e-12, where  # the figure printed is the Evaluation's
            assert abs(recomputed - exact) <= max(half, RELATIVE * abs(exact)), where  # the formula gives it
            checked += 1
        # Every priced GPU-hour offer shows at least rent, fees, financing, staff, software, full cost,
        # availability and cost per task as formulas.
        if metrics.get("full") is not None:
            assert sum(1 for _, e, _ in rows if e) >= 8, offer_id
    assert checked >= 5 * len(tables)


def test_fees_and_staff_are_spread_over_the_billed_gpus(report_tables: Any) -> None:
    """An offer billed for more GPUs than it commits shows the billed count in its fee and staff lines."""
    tables, ev = report_tables(ROOT)
    stretched = [
        o for o in ev.offers if o.metrics.get("billed_gpus") and o.gpus and o.metrics["billed_gpus"] > o.gpus + 0.5
    ]  # type: ignore[attr-defined]
    assert stretched, "the example has offers whose demand exceeds the commitment"
    for offer in stretched:
        billed = f"{offer.metrics['billed_gpus']:,.1f}"
        rows = {step.split(" over")[0].split(" (")[0]: expression for step, expression, _ in tables[offer.id]}
        assert billed in (rows["Your operating staff"] or ""), offer.id
        if offer.terms.pricing.fees and any(f.once or f.monthly or f.per_tb for f in offer.terms.pricing.fees):
            assert billed in (rows["Fees"] or ""), offer.id


def test_expression_reader_understands_the_printed_notation() -> None:
    # 1,000 × 2 − 50% of 10 = 2,000 − 5 = 1,995 (by hand)
    assert evaluate_expression("1,000 × 2 − 50% × 10") == pytest.approx(1995)
    assert printed_figure("98.51%") == (pytest.approx(0.9851), pytest.approx(0.00005))
    with pytest.raises(AssertionError):
        evaluate_expression("__import__('os')")
