"""The cost model asks each offer kind for its own formulas (procure/model/kinds/base.py: list_price, own_rent,
availability_rule, price_floor, task_costs): a kind declared only in a test registry is priced by the hooks it
declares, on its own offers only, without a line of procure/model/costing.py changing. Figures worked by hand in the
comments (tests/kindrows.py: the plain offer, 2,566.08 successful tasks per GPU-hour at SLA 0.99)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from kindrows import TASKS_PER_GPU_HOUR, columns, cost_model, costs

from procure.model import costing
from procure.model.costing import Variation, cost_arrays, price_to_tie
from procure.model.kinds import GPU_HOUR, KINDS
from procure.model.kinds.base import Figure, FormulaLine, FormulaLines, TaskCosts, financing_line, times_fx

HOOKS = ("list_price", "own_rent", "availability_rule", "price_floor", "task_costs")
# A lease whose hour is its rate plus metered power at 0.25, with no discount or escalator on either; its rows of
# the report's formula box say so.
LEASED = replace(
    GPU_HOUR,
    name="leased",
    field="leased",
    own_rent=lambda col, fx, r: col["gpu_hour"] * fx + 0.25,
    formula_lines=lambda f: FormulaLines(
        FormulaLine(("rate + metered power: ",), (Figure(f.rate, 4), *times_fx(f.fx), " + 0.25")),
        FormulaLine((), (Figure(f.metrics["list_price"], 3),)),
        financing_line(f),
    ),
)
# A pool whose hours are won 90% of the time: availability = 0.9 x the reliability factor, whatever the SLA says.
POOLED = replace(GPU_HOUR, name="pooled", field="pooled", availability_rule=lambda col, factor, a: 0.9 * factor)
# A price that may not go below 3.50 a GPU-hour.
FLOORED = replace(GPU_HOUR, name="floored", field="floored", price_floor=lambda col: np.full(len(col["basis"]), 3.5))
# A price per call: its field states the price of 1,000 calls in the offer's currency (10.00: 0.01 a call), paid for
# failed calls too; in the workbook, the price of a call over the share of calls that succeed.
PER_CALL = replace(
    GPU_HOUR,
    name="per_call",
    field="per_call",
    rented=False,
    per_task=True,
    task_costs=lambda col, wl, fx, term, esc, success, fte, fte_cost, tasks: TaskCosts(
        col["gpu_hour"] / 1000 * fx / success,
        0.0,
        0.0,
        col["gpu_hour"] / 1000 * fx / success,
        col["gpu_hour"] / 1000 * fx * 1e6 / wl.output_tokens,
    ),
    workbook_inputs=(("per_call", "Price per call (offer currency)", "#,##0.0000"),),
    workbook_values=lambda offer, metrics: {"per_call": offer.pricing.gpu_hour / 1000},
    workbook_cost=lambda k, ref: f"{k('per_call')}*{k('fx')}/({ref('success_rate')}*{k('quality')})",
    formula_lines=lambda f: FormulaLines(
        per_task=FormulaLine(
            ("the price of 1,000 calls over the share that succeed: ",),
            (Figure(f.rate, 4), *times_fx(f.fx), " / ", Figure(f.metrics["success_rate"], 4)),
            "Calls per 1,000 successful tasks",
        )
    ),
)


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(costing, "KINDS", (*KINDS, LEASED, POOLED, FLOORED, PER_CALL))


def rows(*offers: dict[str, object]) -> dict[str, np.ndarray]:
    """Several plain offers (tests/kindrows.py), each with its own columns, as the cost model's input arrays."""
    each = [columns(**offer) for offer in offers]
    return {name: np.concatenate([one[name] for one in each]) for name in each[0]}


def test_a_kind_with_its_own_rent_is_priced_by_it_and_the_others_are_not(registry):
    # leased: 3.00 + 0.25 = 3.25 before and after the 10% discount and the 1.05 escalator, per task / 2,566.08;
    # the same row priced per GPU-hour: 3.00 x 0.90 = 2.70 today, x 1.05 = 2.835 over the term
    row = {"gpu_hour": 3.0, "discount": 0.10, "escalation": 1.05}
    leased, fixed = costs(basis="leased", **row), costs(basis="gpu_hour", **row)
    assert (leased["list_price"], leased["rent_today"], leased["rent"]) == pytest.approx((3.25, 3.25, 3.25))
    assert leased["cost_per_task"] == pytest.approx(3.25 / TASKS_PER_GPU_HOUR)
    assert (fixed["rent_today"], fixed["rent"]) == pytest.approx((2.70, 2.835))


def test_a_kind_with_its_own_availability_is_priced_by_it_per_draw_and_offer(registry):
    # pooled: 0.9 x factor 0.95 = 0.855 (its SLA 0.99 unused); 3,600 x 0.855 x 0.9 x 0.8 = 2,216.16 tasks a GPU-hour
    alone = costs(basis="pooled", gpu_hour=3.0, reliability_factor=0.95)
    assert alone["availability"] == pytest.approx(0.855)
    assert alone["cost_per_task"] == pytest.approx(3.0 / 2216.16)
    # beside a GPU-hour offer (0.99 x 0.95 = 0.9405), with drawn availability factors 1 and 0.5 (draws x offers)
    col = rows(
        {"basis": "pooled", "gpu_hour": 3.0, "reliability_factor": 0.95},
        {"basis": "gpu_hour", "gpu_hour": 3.0, "reliability_factor": 0.95},
    )
    drawn = cost_arrays(col, cost_model(), Variation(availability_factor=np.array([[1.0], [0.5]])))
    assert drawn["availability"] == pytest.approx(np.array([[0.855, 0.9405], [0.4275, 0.47025]]))
    assert drawn["cost_per_task"].shape == (2, 2)


def test_a_kind_with_its_own_floor_has_no_price_to_tie_below_it(registry):
    # price to tie = target x 2,566.08 tasks a GPU-hour (no fees, staff, software or prepay): 3.00 for a target of
    # 3.00 / 2,566.08, below the floor 3.50: out of reach for the floored offer, 3.00 for the GPU-hour one
    col = rows({"basis": "floored", "gpu_hour": 4.0}, {"basis": "gpu_hour", "gpu_hour": 4.0})
    figures = cost_arrays(col, cost_model())
    tie = price_to_tie(col, figures, 3.0 / TASKS_PER_GPU_HOUR, 0.10)
    assert np.isnan(tie[0]) and tie[1] == pytest.approx(3.0)
    assert price_to_tie(col, figures, 4.0 / TASKS_PER_GPU_HOUR, 0.10) == pytest.approx([4.0, 4.0])


def test_two_kinds_priced_per_task_each_keep_their_own_figures(registry):
    # per-token: (8,000 x 1.00 + 1,000 x 4.00) / 1e6 = 0.012 a task / success 0.9 = 0.013333; per million output
    # tokens 0.013333 x 0.9 x 1e6 / 1,000 = 12.00. per call (10.00 a thousand calls): 0.01 / 0.9 = 0.011111;
    # 0.01 x 1e6 / 1,000 = 10.00
    col = rows(
        {"basis": "per_token", "per_mtok_input": 1.0, "per_mtok_output": 4.0},
        {"basis": "per_call", "gpu_hour": 10.0},
        {"basis": "gpu_hour", "gpu_hour": 3.0},
    )
    out = cost_arrays(col, cost_model())
    assert out["cost_per_task"] == pytest.approx([0.012 / 0.9, 0.01 / 0.9, 3.0 / TASKS_PER_GPU_HOUR])
    assert out["cost_per_mtok"][:2] == pytest.approx([12.0, 10.0])
    assert np.isnan(out["rent"][:2]).all() and out["rent"][2] == pytest.approx(3.0)  # no GPU-hour of their own


def test_the_registered_kinds_declare_the_formulas_their_pricing_needs():
    declared = {hook: [k.name for k in KINDS if getattr(k, hook) is not None] for hook in HOOKS}
    assert declared == {
        "list_price": ["index"],
        "own_rent": ["owned"],
        "availability_rule": ["owned"],
        "price_floor": ["index"],
        "task_costs": ["per_token"],
    }
    assert all(kind.task_costs is not None for kind in KINDS if kind.per_task)  # per task: figures of its own
