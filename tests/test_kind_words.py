"""A kind owns its formulas and its words (procure/model/kinds/): the report's templates and the render modules print
what a kind gives them and never branch on which kind an offer is. Read from the sources: the templates with
Jinja's own parser (only expressions count, not a formula's words), the render modules with Python's; and the rows a
kind gives, evaluated as printed, reproduce its own cost-model hook (a second method)."""

from __future__ import annotations

import ast
from datetime import date
from pathlib import Path

import jinja2
import numpy as np
import pytest
from jinja2 import nodes
from kindrows import cost_model, example_offer
from test_report_formulas import evaluate_expression

from procure.model.input_types import SERVICE_KINDS
from procure.model.kinds import KINDS, kind_named
from procure.model.kinds.base import Figure, FormulaInputs, FormulaLine, TermsRow
from procure.model.kinds.index_linked import IndexLinked
from procure.model.kinds.owned import OwnedCost
from procure.render.formats import plain

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "templates"
RENDER = ROOT / "procure" / "render"
# What names a kind: its basis, its pricing field, and the service kinds that go with a way of paying
NAMES = frozenset({k.name for k in KINDS} | {k.field for k in KINDS} | set(SERVICE_KINDS))
# A pricing block only its kind reads (gpu_hour is also a fee's and a burst price's field: read through `pricing`)
FIELDS = frozenset(k.field for k in KINDS)


def _names_a_kind(node: nodes.Node) -> bool:
    if isinstance(node, nodes.Const):
        return node.value in NAMES
    return isinstance(node, (nodes.Tuple, nodes.List)) and any(_names_a_kind(item) for item in node.items)


def _is_pricing(node: nodes.Node) -> bool:
    """`pricing`, `x.pricing`, or the offer template's `p` (its pricing)."""
    return (isinstance(node, nodes.Name) and node.name in ("p", "pricing")) or (
        isinstance(node, nodes.Getattr) and node.attr == "pricing"
    )


def template_branches(source: str) -> list[tuple[int, str]]:
    """(line, what) for each expression that compares with a kind's name or reads a kind's pricing block."""
    tree = jinja2.Environment().parse(source)
    found = []
    for node in tree.find_all(nodes.Compare):
        if any(_names_a_kind(x) for x in (node.expr, *(op.expr for op in node.ops))):
            found.append((node.lineno, "compares with a kind's name"))
    for node in tree.find_all(nodes.Getattr):
        if node.attr in FIELDS and _is_pricing(node.node):
            found.append((node.lineno, f"reads pricing.{node.attr}"))
    return sorted(found)


def _py_names_a_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(_py_names_a_kind(x) for x in node.elts)


def module_branches(source: str) -> list[tuple[int, str]]:
    """The same in Python: a comparison with a kind's name, or a read of a kind's block of `pricing`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        operands = (node.left, *node.comparators) if isinstance(node, ast.Compare) else ()
        if any(isinstance(x, ast.Attribute) and x.attr == "price_unit" for x in operands):
            continue  # a plan line's price unit: per GPU-hour or per task, not a kind
        if any(_py_names_a_kind(x) for x in operands):
            found.append((node.lineno, "compares with a kind's name"))
        if isinstance(node, ast.Attribute) and node.attr in FIELDS:
            inner = node.value
            if (isinstance(inner, ast.Attribute) and inner.attr == "pricing") or (
                isinstance(inner, ast.Name) and inner.id == "pricing"
            ):
                found.append((node.lineno, f"reads pricing.{node.attr}"))
    return sorted(found)


@pytest.mark.parametrize("path", sorted(TEMPLATES.glob("*.html")), ids=lambda p: p.name)
def test_a_template_prints_what_a_kind_gives_and_tests_no_kind(path: Path):
    assert template_branches(path.read_text(encoding="utf-8")) == [], f"{path.name}: ask the offer's kind"


@pytest.mark.parametrize("path", sorted(RENDER.glob("*.py")), ids=lambda p: p.name)
def test_a_render_module_branches_on_no_kind(path: Path):
    assert module_branches(path.read_text(encoding="utf-8")) == [], f"{path.name}: ask the offer's kind or record"


def test_the_checks_find_what_they_forbid():
    assert template_branches('{% if o.pricing_basis == "owned" %}{% endif %}') == [(1, "compares with a kind's name")]
    assert template_branches("{% if o.kind in ['bare_metal', 'x'] %}{% endif %}") == [
        (1, "compares with a kind's name")
    ]
    assert template_branches("{{ p.per_mtok.input }}\n{% if t.pricing.index_linked %}{% endif %}") == [
        (1, "reads pricing.per_mtok"),
        (2, "reads pricing.index_linked"),
    ]
    # a fee's price per GPU-hour and a formula's words are not a kind
    assert template_branches('{{ f.gpu_hour }} owned × index {% if rec.kind == "plan" %}{% endif %}') == []
    assert module_branches('if r.kind in ("owned", "bare_metal"):\n    x = o.pricing.take_or_pay') == [
        (1, "compares with a kind's name"),
        (2, "reads pricing.take_or_pay"),
    ]
    assert (
        module_branches('x = {"index": 1}\nif basis != "plan" or line.price_unit == "gpu_hour":\n    y = f.gpu_hour')
        == []
    )


# --- the rows a kind gives, evaluated as printed, against its cost-model hook ---------------------------------------


def printed(parts: tuple[str | Figure, ...]) -> str:
    """A formula's parts as the offer template writes them (its `g` filter is render/formats.plain)."""
    return "".join(x if isinstance(x, str) else plain(x.value, x.digits) for x in parts)


def inputs(offer_id: str, fx: float, metrics: dict[str, float | None] | None = None, **pricing: object):
    offer = example_offer(offer_id)
    found = offer.pricing.model_copy(update=pricing)
    kind = kind_named({"index_linked": "index", "owned": "owned"}.get(next(iter(pricing), ""), "gpu_hour"))
    model = cost_model()
    return kind, FormulaInputs(
        pricing=found,
        currency="EUR",
        fx=fx,
        rate=kind.rate(found),
        index_level=3.0,
        index_date=date(2026, 11, 27),
        cost_of_capital=0.10,
        term_months=24,
        metrics={"list_price": None, "rent": None, "escalation": 1.0, **(metrics or {})},
        escalated=False,
        workload=model.workload,
    )


@pytest.mark.parametrize(("spread", "bound"), [(-0.30, "at the floor "), (3.50, "at the cap "), (1.00, None)])
def test_an_index_linked_list_price_row_gives_the_clamped_price(spread, bound):
    """index 3.00 (the workspace's currency), floor 3.50 and cap 6.00 in EUR at 1.08: 3.78 and 6.48. Spread -0.30:
    3.00 - 0.324 = 2.676, below the floor, 3.78; +3.50: 6.78, above the cap, 6.48; +1.00: 4.08, within."""
    linked = IndexLinked(spread=spread, floor=3.50, cap=6.00)
    kind, f = inputs("corvid-b200-idx", 1.08, index_linked=linked)
    line = kind.formula_lines(f).list_price
    assert isinstance(line, FormulaLine)
    assert printed(line.words).startswith("index on 2026-11-27 + spread, within floor and cap: ")
    assert printed(line.words).endswith(bound or ": ")
    by_hook, _ = kind.list_price(
        {
            "index_level": np.array([3.0]),
            "spread": np.array([spread]),
            "floor": np.array([3.5]),
            "cap": np.array([6.0]),
        },
        np.array([1.08]),
        np.array([0.0]),
    )
    by_hand = {"at the floor ": 3.78, "at the cap ": 6.48, None: 4.08}[bound]
    assert evaluate_expression(printed(line.expr)) == pytest.approx(by_hand, abs=5e-5)
    assert by_hook[0] == pytest.approx(by_hand)


def test_a_discount_to_the_index_reads_as_a_subtraction():
    """Spread -0.30 EUR at 1.08 with the index at 3.00, within floor 2.00 and cap 6.00: 3.00 - 0.30 x 1.08 = 2.676,
    printed as a subtraction, never '+ -0.3000'."""
    linked = IndexLinked(spread=-0.30, floor=2.00, cap=6.00)
    kind, f = inputs("corvid-b200-idx", 1.08, index_linked=linked)
    line = kind.formula_lines(f).list_price
    assert isinstance(line, FormulaLine)
    expression = printed(line.expr)
    assert " − 0.3" in expression and "-" not in expression
    assert evaluate_expression(expression) == pytest.approx(2.676, abs=5e-5)


def test_an_owned_list_price_row_in_another_currency_gives_the_hour_in_ours():
    """The whole hour times the exchange rate, inside the expression: 40,000 x CRF(10%, 5 y) 0.263797 / 8,760 +
    1.2 x 1.3 x 0.1 + 150 x 1.2 / 730 = 1.204555 + 0.156 + 0.246575 = 1.607130 EUR, x 1.08 = 1.735700."""
    block = OwnedCost(
        capex_per_gpu=40000, life_years=5, power_kw_per_gpu=1.2, pue=1.3, electricity_kwh=0.1, colo_kw_month=150
    )
    kind, f = inputs("own-b200-colo", 1.08, {"list_price": 1.7357}, owned=block)
    lines = kind.formula_lines(f)
    assert "CRF 0.26380: " in printed(lines.list_price.words)
    assert printed(lines.list_price.expr).endswith(") × 1.08")
    assert evaluate_expression(printed(lines.list_price.expr)) == pytest.approx(1.7357, rel=2e-5)
    columns = {name: np.array([float(getattr(block, name))]) for name in OwnedCost.model_fields}
    assert kind.own_rent(columns, np.array([1.08]), 0.10)[0] == pytest.approx(1.7357, rel=1e-6)
    # its rent is the list price, its financing in the capital recovery
    assert (printed(lines.rent.expr), printed(lines.financing.words), printed(lines.financing.expr)) == (
        "1.736",
        "in the capital recovery: ",
        "0",
    )


def test_the_gpu_hour_kind_states_its_price_and_an_on_demand_offer_its_pay_as_used_one():
    """northwind: 3.95 USD per GPU-hour, its offer-table row a figure; petrel states only a burst price."""
    assert example_offer("northwind-b200-mc").pricing.kind_row("USD") == TermsRow(
        "Price per GPU-hour", "3.95 USD", True
    )
    petrel = example_offer("petrel-b200-ondemand").pricing
    assert petrel.gpu_hour is None and petrel.kind_row("USD") is None
    kind, f = inputs("petrel-b200-ondemand", 1.0)
    line = kind.formula_lines(f).list_price
    assert printed(line.words) == "pay-as-used price: "
    assert evaluate_expression(printed(line.expr)) == pytest.approx(petrel.burst.gpu_hour)
