"""Spot capacity in the plan: a pay-as-used burst source whose share of each month's demand is bounded
(plan.max_spot_share), with the restart cost of its interruptions in its price per task. Worked by hand on
the round numbers of tests/planws.py (one GPU-hour at full availability serves 1,080 tasks)."""

from __future__ import annotations

from datetime import date

import pytest
from planws import TASKS_PER_GPU_HOUR, config, offer, write

from procure.analysis.plan import make_plan
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)
# 6 interruptions a node-month x 73 minutes lost each = 438 of the 730 x 60 = 43,800 minutes: 1% of the billed time
SPOT_SERVICE = {"preemptible": True, "interruptions_per_month": 6, "restart_minutes": 73}
KEPT = 1 - 438 / 43800  # 0.99


def market(share: float | None, spot_prices: tuple[float, ...] = (2.0,)):
    """Demand of 100 or 200 GPUs' worth, equally likely; a commit-only offer at 4 per GPU-hour and spot at 2."""
    cfg = config()
    if share is not None:
        cfg["plan"]["max_spot_share"] = share
    offers = [offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0)]
    for k, price in enumerate(spot_prices):
        offers.append(offer(f"spot{k}", gpus=0, max_gpus=1000, gpu_hour=price, term_months=1, service=SPOT_SERVICE))
    return cfg, offers


def lines(result, role):
    return {line.offer: line for line in result.plan if line.role == role}


def test_spot_serves_at_most_its_share_and_is_never_committed(tmp_path):
    result = make_plan(load_workspace(write(tmp_path, *market(0.3))), AS_OF)
    # Spot may serve 0.3 of a month's demand: 30 GPUs' worth of the low 100, 60 of the high 200. The high months
    # need 200 - 60 = 140 committed (an unserved task costs 3 x the dearest, 12 per GPU-hour's worth, and half the
    # time x 12 = 6 > 4 a GPU-hour committed). Committed capacity serves first, so the low months use no spot.
    assert lines(result, "commit")["commit"].gpus == 140
    spot = lines(result, "pay_as_used")["spot0"]
    assert "spot0" not in lines(result, "commit")
    # share of the expected served tasks: 0.5 x 60 / (0.5 x 100 + 0.5 x 200) = 0.2 <= 0.3
    assert spot.expected_tasks_share == pytest.approx(0.2, abs=1e-9)
    assert spot.price == 2.0
    # The restart cost is priced: 60 GPUs' worth of tasks take 60 / 0.99 spot GPU-hours at 2 each. Per hour:
    # 140 x 4 + 0.5 x 60 x 2 / 0.99 = 560 + 60.6061 = 620.6061, over 150 x 1,080 tasks.
    assert result.expected_cost_per_task == pytest.approx(
        (140 * 4 + 0.5 * 60 * 2 / KEPT) / (150 * TASKS_PER_GPU_HOUR), rel=1e-6
    )
    assert result.unserved_share == pytest.approx(0.0, abs=1e-9)


def test_the_default_share_is_stated_and_binds(tmp_path):
    # Unstated, plan.max_spot_share is 0.3: the same plan as above.
    result = make_plan(load_workspace(write(tmp_path, *market(None))), AS_OF)
    assert lines(result, "commit")["commit"].gpus == 140


def test_without_the_bound_spot_would_carry_everything(tmp_path):
    # max_spot_share 1: spot at 2 / 0.99 = 2.0202 per GPU-hour's worth is cheaper than committing at 4, so it serves
    # every task: 2 / (0.99 x 1,080) per task.
    result = make_plan(load_workspace(write(tmp_path, *market(1.0))), AS_OF)
    assert "commit" not in lines(result, "commit")
    assert lines(result, "pay_as_used")["spot0"].expected_tasks_share == pytest.approx(1.0)
    assert result.expected_cost_per_task == pytest.approx(2 / (KEPT * TASKS_PER_GPU_HOUR), rel=1e-6)


def test_the_bound_holds_for_all_spot_offers_together(tmp_path):
    # Two spot offers (2 and 2.5): together still at most 0.3 of each month's demand; the cheaper serves it all.
    result = make_plan(load_workspace(write(tmp_path, *market(0.3, (2.0, 2.5)))), AS_OF)
    used = lines(result, "pay_as_used")
    assert sum(line.expected_tasks_share for line in used.values()) == pytest.approx(0.2, abs=1e-9)
    assert lines(result, "commit")["commit"].gpus == 140
    assert result.expected_cost_per_task == pytest.approx(
        (140 * 4 + 0.5 * 60 * 2 / KEPT) / (150 * TASKS_PER_GPU_HOUR), rel=1e-6
    )


def test_demand_that_spot_may_not_serve_is_left_unserved_and_shown(tmp_path):
    """Every offer together holds 100 committed + 1,000 spot GPUs' worth, far above the high months' 200; but spot
    may serve at most 0.3 x 200 = 60 of them, and 100 + 60 = 160 < 200. That is planned, not refused: the high path
    leaves 40 GPUs' worth unserved every month (20 expected), beyond what the offers may serve, priced apart from the
    cash. At a share of 0.5, 100 + 0.5 x 200 = 200 is served."""
    from planws import TASKS_PER_GPU_MONTH

    cfg, offers = market(0.3)
    offers[0] = offer("commit", gpus=0, max_gpus=100, gpu_hour=4.0)
    short = make_plan(load_workspace(write(tmp_path / "short", cfg, offers)), AS_OF)
    assert lines(short, "commit")["commit"].gpus == 100
    for month in short.shortfall_by_month:
        assert month.beyond_offers_tasks == pytest.approx(0.5 * 40 * TASKS_PER_GPU_MONTH, rel=1e-6)
        assert month.unserved_tasks == pytest.approx(0.5 * 40 * TASKS_PER_GPU_MONTH, rel=1e-6)
        # the worst 10% by cost per task is the high path, which leaves the shortfall
        high = 40 * TASKS_PER_GPU_MONTH
        assert month.by_scenario == pytest.approx({"low": 0.0, "high": high, "worst 10%": high})
        assert month.shortfall_cost == pytest.approx(month.unserved_tasks * short.unserved_penalty_per_task)
    cfg["plan"]["max_spot_share"] = 0.5
    result = make_plan(load_workspace(write(tmp_path / "enough", cfg, offers)), AS_OF)
    assert result.unserved_share == pytest.approx(0.0, abs=1e-9)
