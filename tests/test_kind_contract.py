"""The contract every offer kind keeps (procure/model/kinds/), checked the same way for each registered kind, the way
scikit-learn's check_estimator runs every estimator: an offer of the kind is validated, compared, planned, given a
cash flow and a what-if, written in the report's HTML, PDF and Markdown (the rows of the formula box it writes give
the figures beside them), and in the workbook, whose cells compute what procure computed. A new kind must name an
offer of its own in EXAMPLES below.

The kinds a test registers (tests/test_kind_cost_hooks.py's) go through the same steps: no offer file can state a
field of their own (`Pricing` gains each registered kind's block when procure is imported), so each is registered in
the GPU-hour kind's place, for the offers that state `pricing.gpu_hour` (alpha, bravo and charlie of
tests/data/uncertainty_zero), in every module that asks the registry.

A kind's own arithmetic, worked by hand, stays in its own module (tests/test_kind_<name>.py)."""

from __future__ import annotations

import io
import math
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_kind_cost_hooks import FLOORED, LEASED, PER_CALL, POOLED
from test_workbook_kinds import Sheet

from procure.model import costing
from procure.model.kinds import GPU_HOUR, KINDS, kind_named, kind_of

ROOT = Path(__file__).parent.parent
TAKE_OR_PAY = Path(__file__).parent / "data" / "take_or_pay"
AS_OF = date(2026, 11, 29)
# An offer of each registered kind: (workspace, offer id)
EXAMPLES = {
    "gpu_hour": (ROOT, "northwind-b200-mc"),
    "index": (ROOT, "corvid-b200-idx"),
    "per_token": (ROOT, "lumen-forge-tokens"),
    "owned": (ROOT, "own-b200-colo"),
    "take_or_pay": (TAKE_OR_PAY, "tollgate"),
}
NAMES = [kind.name for kind in KINDS]
# The kinds tests register (the cost model's hooks): each priced on northwind's row, its basis retyped
TEST_REGISTRY = (LEASED, POOLED, FLOORED, PER_CALL)
# ... and, in the GPU-hour kind's place, on the offers of a small workspace
REGISTERED = {kind.name: replace(kind, field=GPU_HOUR.field) for kind in TEST_REGISTRY}
SMALL = Path(__file__).parent / "data" / "uncertainty_zero"
# Every module that holds the registry or the GPU-hour kind by name
HOLDERS = (
    "procure.model.kinds",
    "procure.model.costing",
    "procure.model.offer_inputs",
    "procure.io.workspace_checks",
    "procure.io.importers",
    "procure.analysis.evaluate",
    "procure.render.workbook",
)


def register(monkeypatch: pytest.MonkeyPatch, kind: Any) -> None:
    """`kind` in the GPU-hour kind's place in every module that asks the registry."""
    import importlib

    registry = tuple(kind if k is GPU_HOUR else k for k in KINDS)
    for name in HOLDERS:
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "KINDS", registry)
        if hasattr(module, "GPU_HOUR"):
            monkeypatch.setattr(module, "GPU_HOUR", kind)


class Workspace:
    """One workspace's documents, each computed once for the module: what every kind's checks read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, Any] = {}

    def get(self, name: str, make: Any) -> Any:
        if name not in self.cache:
            self.cache[name] = make()
        return self.cache[name]

    def comparison(self) -> Any:
        from procure.analysis.usecases.compare import comparison

        return self.get("comparison", lambda: comparison(self.root, AS_OF))

    def plan(self) -> Any:
        from procure.analysis.usecases.plans import planning

        return self.get("plan", lambda: planning(self.root, AS_OF).plan)

    def cash_flows(self) -> Any:
        from procure.analysis.usecases.plans import cash_flows

        return self.get("cash_flows", lambda: cash_flows(self.root, AS_OF, 12, None, None).evaluation)

    def offer_page(self, offer_id: str) -> tuple[str, str]:
        """One offer's page of the comparison, alone: (its HTML, the text of its PDF), as the report lays it out."""

        def make() -> tuple[str, str]:
            from pypdf import PdfReader

            from procure.render.documents import Part, html_to_pdf, render_html

            ev = self.comparison().evaluation
            i = [o.id for o in ev.offers].index(offer_id)
            html = render_html(ev, "comparison", charts={}, part=Part(frozenset(), offers=(i, i + 1), merged=True))
            pdf = PdfReader(io.BytesIO(html_to_pdf(html)))
            return html, "\n".join(page.extract_text() for page in pdf.pages)

        return self.get(f"page-{offer_id}", make)

    def markdown(self) -> str:
        from procure.render.ranking import to_markdown

        return self.get("markdown", lambda: to_markdown(self.comparison().evaluation))

    def workbook(self) -> Any:
        from openpyxl import load_workbook

        from procure.analysis.evaluate import evaluate_with_inputs
        from procure.io.workspace import load_workspace
        from procure.render.workbook import to_xlsx

        def make() -> Any:
            ev, inputs = evaluate_with_inputs(load_workspace(self.root), AS_OF, None, None)
            return load_workbook(io.BytesIO(to_xlsx(ev, inputs))), ev

        return self.get("workbook", make)


_WORKSPACES: dict[Path | str, Workspace] = {}


@pytest.fixture(params=[*NAMES, *REGISTERED])
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Workspace, str]:
    """(the kind, its example's workspace, its offer's id); a kind a test registers is registered for the test, and
    its workspace's documents are its own."""
    if request.param in REGISTERED:
        registered = REGISTERED[request.param]
        register(monkeypatch, registered)
        return registered, _WORKSPACES.setdefault(request.param, Workspace(SMALL)), "alpha"
    root, offer_id = EXAMPLES[request.param]
    return kind_named(request.param), _WORKSPACES.setdefault(root, Workspace(root)), offer_id


def _offer(ws: Workspace, offer_id: str) -> Any:
    from procure.io.workspace import load_workspace

    return next(o for o in ws.get("loaded", lambda: load_workspace(ws.root)).offers if o.id == offer_id)


def test_every_registered_kind_names_an_offer_of_its_own():
    assert sorted(EXAMPLES) == sorted(NAMES)
    assert len(set(NAMES)) == len(NAMES) and len({k.field for k in KINDS}) == len(KINDS)


def test_the_kinds_rented_by_the_gpu_hour_are_those_that_take_a_discount_burst_and_commit_options():
    """Rented GPU-hours take a discount, a burst price, commit options and a billing unit; tokens and owned
    equipment do not (procure/model/kinds/base.py, Kind.rented)."""
    assert {k.name for k in KINDS if not k.rented} == {"per_token", "owned"}


def test_validate_reads_its_offer_as_of_its_kind_with_no_problem(kind):
    from kindrows import problems

    from procure.analysis.usecases.checks import validation

    k, ws, offer_id = kind
    offer = _offer(ws, offer_id)
    assert kind_of(offer.pricing) is k and k.selected(offer.pricing)
    assert problems(k.checks, offer) == []
    checked = ws.get("validation", lambda: validation(ws.root, AS_OF))  # a problem would raise InputError
    assert offer_id in [o.id for o in checked.evaluation.offers]


def test_compare_prices_it_by_its_kind_with_a_cost_per_task(kind):
    k, ws, offer_id = kind
    record = ws.comparison().evaluation.offer(offer_id)
    assert record.pricing_basis == k.name
    cost = record.metrics["cost_per_task"]
    assert cost is not None and math.isfinite(cost) and cost > 0


def test_the_plan_takes_it_or_says_why_not(kind):
    _, ws, offer_id = kind
    plan = ws.plan()
    assert (offer_id in plan.candidates) != (offer_id in plan.excluded)
    if offer_id in plan.candidates:
        assert offer_id in plan.single_offers
    else:
        assert plan.excluded[offer_id].strip()


def test_its_cash_flow_pays_every_month_once_delivered_and_sums_to_its_total(kind):
    _, ws, offer_id = kind
    flow = ws.cash_flows().offer(offer_id).cashflow
    served = [m for m in flow.months if m.month >= 1]
    assert len(served) == 12
    # nothing before delivery; every month from delivery pays (the last may be credited owned equipment's residue)
    assert all(m.total == 0 for m in served if m.month < flow.delivery_month)
    assert all(m.total > 0 for m in served[:-1] if m.month >= flow.delivery_month)
    assert sum(m.total for m in flow.months) == pytest.approx(flow.total_cost, rel=1e-9)
    assert flow.total_commitment >= 0


def test_a_what_if_on_its_price_moves_its_cost_per_task_and_no_more_than_the_price(kind):
    """Ten per cent on the price raises the cost per task by more than nothing and at most ten per cent (the price is
    only part of the cost); no change leaves it where it was."""
    from procure.analysis.whatif import Change, whatif
    from procure.io.workspace import load_workspace

    k, ws, offer_id = kind
    workspace = load_workspace(ws.root)
    raised = whatif(workspace, offer_id, Change(price=1.10), AS_OF)
    before, after = raised.before.cost_per_task, raised.after.cost_per_task
    assert before < after <= before * 1.10 * (1 + 1e-9)
    same = whatif(workspace, offer_id, Change(price=1.0), AS_OF)
    assert same.after.cost_per_task == pytest.approx(same.before.cost_per_task, rel=1e-12)
    assert kind_of(k.scale_price(_offer(ws, offer_id).pricing, 1.10, None, 1.0)) is k


def test_its_page_of_the_comparison_in_html_and_pdf_states_its_terms(kind):
    from html import unescape

    _, ws, offer_id = kind
    offer = _offer(ws, offer_id)
    found = offer.pricing.kind_row(offer.pricing.currency)
    row = (found.label, found.words) if found else ()  # none for an on-demand price
    html, pdf = ws.offer_page(offer_id)
    html, pdf = unescape(html), " ".join(pdf.split())
    assert offer_id in html and all(words in html for words in row or ())
    assert f"Offer details {offer.vendor}" in pdf and all(" ".join(words.split()) in pdf for words in row or ())


def test_its_rows_of_the_formula_box_give_the_figures_beside_them(kind):
    """The rows the kind writes on its page (a GPU-hour's list price, rent and financing, or a per-task kind's own
    row), their expressions evaluated as printed, give the evaluation's figures (tests/test_report_formulas.py reads
    every row of the example's pages the same way)."""
    from test_report_formulas import RELATIVE, ArithmeticTables, evaluate_expression

    k, ws, offer_id = kind
    ev = ws.comparison().evaluation
    record = ev.offer(offer_id)
    fx = ev.assumptions.fx.get(record.currency, 1.0) if record.currency != ev.currency else 1.0
    lines = record.formula_lines(fx, ev.assumptions, ev.workload)
    assert (lines.per_task is not None) == k.per_task  # a per-task kind words its own row, a GPU-hour kind its three
    figures = (
        {lines.per_task.step: ("rent_per_task", 1000)}
        if lines.per_task
        else {"List price": ("list_price", 1), "Rent": ("rent", 1), "Financing": ("financing", 1)}
    )
    parser = ArithmeticTables()
    parser.feed(ws.offer_page(offer_id)[0])
    rows = {step.split(" (")[0]: expression for step, expression, _ in parser.offers[offer_id]}
    for step, (name, scale) in figures.items():
        exact = record.metrics[name] * scale
        assert evaluate_expression(rows[step]) == pytest.approx(exact, rel=RELATIVE, abs=5e-4), f"{step}: {rows[step]}"


def test_the_markdown_ranking_lists_it_with_its_cost(kind):
    _, ws, offer_id = kind
    record = ws.comparison().evaluation.offer(offer_id)
    row = next(line for line in ws.markdown().splitlines() if f"| {offer_id} " in line or f"|{offer_id}|" in line)
    if record.acceptable:
        assert f"{record.metrics['cost_per_task'] * 1000:.2f}" in row


def test_the_workbook_row_computes_its_cost_per_task(kind):
    k, ws, offer_id = kind
    book, ev = ws.workbook()
    sheet = book["Offers"]
    letters = {str(c.value): c.column_letter for c in sheet[1]}
    rows = {str(sheet[f"A{r}"].value): r for r in range(2, sheet.max_row + 1)}
    assert sheet[f"{letters['Pricing basis']}{rows[offer_id]}"].value == k.name
    per_task = next(letter for header, letter in letters.items() if header.endswith("/task"))
    expected = ev.offer(offer_id).metrics["cost_per_task"]
    assert Sheet(book, "Offers").value("Offers", f"{per_task}{rows[offer_id]}") == pytest.approx(expected)


# --- the kinds a test registers: the steps that ask the registry when they run -------------------------------------


@pytest.fixture(scope="module")
def northwind_row() -> tuple[dict[str, np.ndarray], Any]:
    """northwind's cost-model inputs (its row of the example's columns) and the example's cost model."""
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.io.workspace import load_workspace

    _, inputs = evaluate_with_inputs(load_workspace(ROOT), AS_OF, None, None)
    i = next(i for i, o in enumerate(inputs.offers) if o.id == "northwind-b200-mc")
    return {name: values[i : i + 1].copy() for name, values in inputs.columns.items()}, inputs.model


@pytest.mark.parametrize("registered", TEST_REGISTRY, ids=[k.name for k in TEST_REGISTRY])
def test_a_kind_registered_by_a_test_is_priced_by_the_cost_model(registered, northwind_row, monkeypatch):
    """Retyped to the test's kind, northwind's row gets a finite cost per task, and the same hooks as the GPU-hour
    kind's give the same cost: the kind is asked, not its name."""
    monkeypatch.setattr(costing, "KINDS", (*KINDS, *TEST_REGISTRY))
    columns, model = northwind_row
    retyped = {**columns, "basis": np.array([registered.name], dtype=object)}
    out = costing.cost_arrays(retyped, model)
    cost = float(out["cost_per_task"][0])
    assert math.isfinite(cost) and cost > 0
    plain = replace(registered, list_price=None, own_rent=None, availability_rule=None, price_floor=None)
    plain = replace(plain, task_costs=None, per_task=False, rented=True)
    monkeypatch.setattr(costing, "KINDS", (*KINDS, plain))
    same = float(costing.cost_arrays(retyped, model)["cost_per_task"][0])
    gpu_hour = float(costing.cost_arrays(columns, model)["cost_per_task"][0])
    assert same == pytest.approx(gpu_hour, rel=1e-12)


@pytest.mark.parametrize("registered", TEST_REGISTRY, ids=[k.name for k in TEST_REGISTRY])
def test_a_kind_registered_by_a_test_gets_a_workbook_row(registered, monkeypatch):
    """northwind's row retyped to the test's kind: the workbook, asked with the kind registered, writes its basis and
    its cost formulas compute (blank per GPU-hour for a kind priced per task)."""
    from openpyxl import load_workbook

    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.io.workspace import load_workspace
    from procure.render import workbook

    monkeypatch.setattr(workbook, "KINDS", (*KINDS, *TEST_REGISTRY))
    ev, inputs = evaluate_with_inputs(load_workspace(ROOT), AS_OF, None, None)
    book = load_workbook(io.BytesIO(workbook.to_xlsx(ev, inputs)))
    sheet = book["Offers"]
    letters = {str(c.value): c.column_letter for c in sheet[1]}
    row = next(r for r in range(2, sheet.max_row + 1) if sheet[f"A{r}"].value == "northwind-b200-mc")
    sheet[f"{letters['Pricing basis']}{row}"].value = registered.name
    rent = next(f"{letter}{row}" for header, letter in letters.items() if header.startswith("Rent "))
    value = Sheet(book, "Offers").value("Offers", rent)
    assert value == "" if registered.per_task else value == pytest.approx(4.00925)
