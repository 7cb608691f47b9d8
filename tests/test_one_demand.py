"""One demand per workspace: the cash flow of one offer (`procure cashflow`, compare --horizon, the hedge of one offer)
counts the demand the plan is solved over, month by month, not today's flat workload.tasks_per_month.

Worked by hand on the small plan workspaces (tests/planws.py: one GPU-hour serves 1,080 tasks and costs exactly its
price): demand.start is 100 GPU-months of tasks, growing 10% a month, so months 1-3 want 100, 110 and 121 GPUs' worth.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from planws import TASKS_PER_GPU_MONTH, config, offer, write

from procure.analysis.evaluate import evaluate
from procure.analysis.hedging import plan_for_workspace
from procure.analysis.plan import make_plan
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)  # the first of the month: the plan's month 1 is whole, as the cash flow's is


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


def workspace(root: Path, paths: list[dict], gpus: int = 0) -> Path:
    cfg = config()
    cfg["demand"] = {"months": 3, "start": 100 * TASKS_PER_GPU_MONTH, "growth": 0.10, "paths": paths}
    cfg["horizon"] = {"months": 3}
    cfg["hedge"] = {"horizon_months": 3}
    offers = [offer("commit", gpus=gpus, max_gpus=1000, gpu_hour=4.0, term_months=12, valid_until="2029-12-31")]
    return write(root, cfg, offers)


def test_the_cash_flow_bills_the_gpus_each_months_demand_needs(tmp_path):
    root = workspace(tmp_path, [{"name": "only", "factor": 1.0, "probability": 1.0}])
    flow = evaluate(load_workspace(root), AS_OF, None, 3).offer("commit").cashflow
    served = flow.months[1:]
    assert [f.gpus for f in served] == pytest.approx([100, 110, 121])
    # 4.00 a GPU-hour x 730 hours x the month's GPUs
    assert [f.rent for f in served] == pytest.approx([292_000, 321_200, 353_320])
    assert [f.successful_tasks for f in served] == pytest.approx([g * TASKS_PER_GPU_MONTH for g in (100, 110, 121)])
    assert flow.horizon_cost_per_task == pytest.approx(4.0 / 1080)


def test_committed_gpus_are_billed_until_the_demand_outgrows_them(tmp_path):
    # 105 committed GPUs: month 1 wants 100 (105 billed, 5 idle), months 2 and 3 want 110 and 121 (billed as wanted)
    root = workspace(tmp_path, [{"name": "only", "factor": 1.0, "probability": 1.0}], gpus=105)
    flow = evaluate(load_workspace(root), AS_OF, None, 3).offer("commit").cashflow
    assert [f.gpus for f in flow.months[1:]] == pytest.approx([105, 110, 121])
    assert flow.months[1].successful_tasks == pytest.approx(100 * TASKS_PER_GPU_MONTH)


def test_the_cash_flow_and_the_plan_count_one_demand(tmp_path):
    # two paths, 1x and 2x the trend, half likely each: the expected demand is 1.5x the trend, 150, 165 and 181.5 GPUs'
    # worth, in the cash flow as in the plan's own months
    paths = [{"name": "low", "factor": 1.0, "probability": 0.5}, {"name": "high", "factor": 2.0, "probability": 0.5}]
    ws = load_workspace(workspace(tmp_path, paths))
    wanted = [g * TASKS_PER_GPU_MONTH for g in (150, 165, 181.5)]
    flow = evaluate(ws, AS_OF, None, 3).offer("commit").cashflow
    assert [f.successful_tasks for f in flow.months[1:]] == pytest.approx(wanted)
    plan = make_plan(ws, AS_OF)
    assert [m.demand for m in plan.shortfall_by_month] == pytest.approx(wanted)


def test_the_hedge_of_one_offer_is_sized_on_the_same_demand(tmp_path):
    root = workspace(tmp_path, [{"name": "only", "factor": 1.0, "probability": 1.0}])
    (root / "market").mkdir()
    (root / "market" / "index.csv").write_text("date,price\n2026-10-05,4.20\n2026-11-02,4.00\n")
    ws = load_workspace(root)
    ev = evaluate(ws, AS_OF, None, 3)
    hedge = plan_for_workspace(ws, ev, "commit")
    assert [e.gpu_hours for e in hedge.exposure] == pytest.approx([100 * 730, 110 * 730, 121 * 730])


def test_cashflow_counts_the_plans_months_where_no_horizon_is_stated(tmp_path):
    # demand: over 3 months and no horizon: section at all: `procure cashflow` counts the plan's 3 months, not 36
    from procure.analysis.usecases import cash_flows

    cfg = config()
    cfg["demand"] = {"months": 3, "start": 100 * TASKS_PER_GPU_MONTH, "growth": 0.0}
    root = write(tmp_path, cfg, [offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, valid_until="2029-12-31")])
    flows = cash_flows(root, AS_OF, None, None, None)
    assert flows.evaluation.horizon_months == 3
    assert cash_flows(root, AS_OF, 5, None, None).evaluation.horizon_months == 5  # --horizon asks for another


def test_the_horizon_names_the_demand_it_counts(tmp_path):
    from procure.render.cashflow import horizon_caption

    root = workspace(tmp_path, [{"name": "only", "factor": 1.0, "probability": 1.0}])
    caption = horizon_caption(evaluate(load_workspace(root), AS_OF, None, 3))
    # 100 GPU-months of tasks: 100 x 788,400 = 78.84 M tasks in month 1
    assert (
        "Horizon 3 months from 2026-12-01, each month wanting the plan's expected demand (78.8 M tasks in month 1, "
        "growing 10.0% a month)" in caption
    )
