"""The plan in time: delivery dates, terms past the horizon, fees when used, exact shortlists, demand tails and
CVaR on whole paths, each worked out by hand on a small workspace (tests/planws.py: one GPU-hour serves 1,080
tasks, a GPU-month 788,400; no staff, software or cost of capital unless set, so a GPU-hour costs its price)."""

from __future__ import annotations

import calendar
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from planws import TASKS_PER_GPU_HOUR, TASKS_PER_GPU_MONTH, config, offer, write

from procure.analysis.plan import make_plan
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)
GPU_MONTH = 730  # hours


def plan_for(root: Path, cfg: dict, offers: list[dict]):
    return make_plan(load_workspace(write(root, cfg, offers)), AS_OF)


def flat(months: int, gpus: float = 100, **plan) -> dict:
    """Demand of `gpus` GPUs' worth every month, one path."""
    return config(
        demand={
            "months": months,
            "start": gpus * TASKS_PER_GPU_MONTH,
            "growth": 0.0,
            "paths": [{"name": "base", "factor": 1.0, "probability": 1.0}],
        },
        plan={"max_vendor_share": 1.0, "mip_gap": 0.0, **plan},
    )


def commits(result) -> list[tuple[str, int, int, int]]:
    return [(line.offer, line.gpus, line.start_month, line.end_month) for line in result.plan if line.role == "commit"]


def share_of_month(delivered: date) -> tuple[int, float]:
    """The delivery month (1-based: month 1 is the as-of month, December 2026) and the share of it from the delivery
    day on, by whole days."""
    month = (delivered.year - AS_OF.year) * 12 + delivered.month - AS_OF.month + 1
    days = calendar.monthrange(delivered.year, delivered.month)[1]
    return month, (days - delivered.day + 1) / days


def test_a_delivery_in_month_5_is_bridged_by_pay_as_used(tmp_path):
    # "late" is delivered on 2027-04-30: month 5 (April; month 1 is the as-of month, December 2026), 1/30 of it from
    # the delivery day. Its 8-month term runs to 29 December 2027: 1/30 of month 5, months 6-12, and the rest of a
    # month past the 12-month horizon, paid in full (8 months of rent) at 2 an hour; on demand costs 6. Months 1-4 can
    # only be served on demand (100 GPUs x 6 x 730 = 438,000 a month); from month 5 the commitment of 100 GPUs (one
    # more would cost 2 x 730 x 8 = 11,680 to save under a GPU-month on demand), and the 29/30 of month 5 before the
    # delivery day on demand too.
    month, share = share_of_month(date(2027, 4, 30))
    assert (month, share) == (5, pytest.approx(1 / 30))
    offers = [
        offer("late", gpus=0, max_gpus=1000, gpu_hour=2.0, term_months=8, delivery="2027-04-30"),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path, flat(12), offers)
    assert commits(result) == [("late", 100, 5, 12)]
    assert result.delivery == {"late": 5, "ondemand": 1}
    bridge = 4 * 438_000 + (1 - share) * 100 * 6 * GPU_MONTH
    total = bridge + 100 * 2 * GPU_MONTH * 8
    assert result.expected_cost_per_task == pytest.approx(total / (12 * 100 * TASKS_PER_GPU_MONTH), rel=1e-9)
    assert result.unserved_share == pytest.approx(0.0, abs=1e-12)
    (line,) = result.bridge
    assert "late is delivered in month 5: months 1-4 are bridged by ondemand" in line and "1,752,000" in line
    (figures,) = result.bridges
    assert (figures.offer, figures.delivery_month, figures.served_by, figures.unserved_share) == (
        "late",
        5,
        ["ondemand"],
        0.0,
    )
    assert figures.cost == pytest.approx(4 * 438_000)
    # The single offer that cannot serve months 1-4 leaves them unserved at the plan's price: never the best alone.
    assert result.single_best.offer == "ondemand"


def test_an_offer_delivered_after_the_horizon_is_not_a_candidate(tmp_path):
    offers = [
        offer("far", gpus=0, max_gpus=1000, gpu_hour=1.0, delivery="2028-06-01"),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path, flat(12), offers)
    assert "far" not in result.candidates
    # June 2028 is month 19 when month 1 is December 2026
    assert result.excluded["far"].startswith("delivered in month 19 (2028-06-01), after the 12-month horizon")


@pytest.mark.parametrize(("price", "second_block"), [(2.5, False), (1.5, True)])
def test_an_18_month_term_from_month_19_is_costed_in_full(tmp_path, price, second_block):
    # On a 24-month horizon an 18-month term is decided for months 1-18 and again from month 19, where it runs to
    # month 36. Costed in full, the second block is 18 months of rent for 6 months of use: at 2.5 an hour that is
    # 2.5 x 18 = 45 per GPU-hour of the horizon's 6 months against 6 x 6 = 36 on demand, so months 19-24 go on
    # demand; at 1.5 it is 27 < 36, so the plan commits again and pays all 18 months.
    offers = [
        offer("term18", gpus=0, max_gpus=1000, gpu_hour=price, term_months=18),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path / str(price), flat(24), offers)
    tasks = 24 * 100 * TASKS_PER_GPU_MONTH
    first = 100 * price * GPU_MONTH * 18
    if second_block:
        assert commits(result) == [("term18", 100, 1, 18), ("term18", 100, 19, 24)]
        line = [x for x in result.plan if x.role == "commit"][1]
        assert line.term_end_month == 36
        assert result.beyond_horizon_cost == pytest.approx(100 * price * GPU_MONTH * 12)
        assert result.expected_cost_per_task == pytest.approx((first + 100 * price * GPU_MONTH * 18) / tasks, rel=1e-9)
        assert any("runs to month 36" in n and "counted in full" in n for n in result.notes)
    else:
        assert commits(result) == [("term18", 100, 1, 18)]
        assert result.beyond_horizon_cost == 0.0
        assert result.expected_cost_per_task == pytest.approx((first + 6 * 100 * 6 * GPU_MONTH) / tasks, rel=1e-9)


def test_a_fixed_fee_is_paid_only_in_the_months_the_offer_is_used(tmp_path):
    # "year2" (12-month term at 2 an hour, 50,000 a month in fixed fees) is delivered on 2027-12-15: month 13
    # (December 2027), 17/31 of it from the delivery day. Months 1-12 are on demand at 6: 438,000 a month. Its term
    # runs to 14 December 2028, past the 24-month horizon: 100 GPUs at 2 (1,752,000 over the term) plus its fee in
    # the twelve months it holds only (600,000, not 1,200,000), and the part of month 13 before delivery on demand.
    month, share = share_of_month(date(2027, 12, 15))
    assert (month, share) == (13, pytest.approx(17 / 31))
    offers = [
        offer(
            "year2",
            gpus=0,
            max_gpus=1000,
            gpu_hour=2.0,
            term_months=12,
            delivery="2027-12-15",
            pricing={"fees": [{"name": "platform", "monthly": 50000}]},
        ),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path, flat(24), offers)
    assert commits(result) == [("year2", 100, 13, 24)]
    total = 12 * 438_000 + (1 - share) * 100 * 6 * GPU_MONTH + 100 * 2 * GPU_MONTH * 12 + 12 * 50_000
    assert result.expected_cost_per_task == pytest.approx(total / (24 * 100 * TASKS_PER_GPU_MONTH), rel=1e-9)
    # held fixed, the plan spends 438,000 a month in the first year and 146,000 + 50,000 after (month 13 aside); the
    # scenario table's spend is the horizon's: the term's last 14/31 of a month, past it, is not in it
    stress = {c.name: c for c in result.stress.cases}["Demand as planned"]
    assert stress.total_spend == pytest.approx(total - (1 - share) * (100 * 2 * GPU_MONTH + 50_000))
    assert result.beyond_horizon_cost == pytest.approx((1 - share) * (100 * 2 * GPU_MONTH + 50_000))


@pytest.mark.parametrize("max_candidates", [12, 60])
def test_decoys_with_fees_do_not_push_out_the_best_offer(tmp_path, max_candidates):
    # Twelve decoys at 3.00 an hour with a 69,000 monthly fee each, and "plain" at 3.50 with none. For 100 GPUs a
    # decoy costs 3 x 730 x 100 + 69,000 = 288,000 a month, "plain" 3.5 x 730 x 100 = 255,500: "plain" alone is the
    # optimum (any decoy in the plan pays its whole fee for at most 0.5 x 73,000 saved). The relaxation spreads the
    # fees thinly and favours the decoys; the shortlist keeps the best single offers, so the answer is exact either
    # way (12: a shortlist of 13 offers; 60: the whole model).
    offers = [
        offer(
            f"decoy{i:02d}",
            gpus=0,
            max_gpus=1000,
            gpu_hour=3.0,
            pricing={"fees": [{"name": "access", "monthly": 69000}]},
        )
        for i in range(12)
    ]
    offers.append(offer("plain", gpus=0, max_gpus=1000, gpu_hour=3.5))
    result = plan_for(tmp_path, flat(12, max_candidates=max_candidates), offers)
    assert commits(result) == [("plain", 100, 1, 12)]
    assert result.expected_cost_per_task == pytest.approx(3.5 / TASKS_PER_GPU_HOUR, rel=1e-9)


def test_a_rare_spike_keeps_its_cost_in_the_bands(tmp_path):
    # 50 equally likely paths: 48 at 100 GPUs' worth, 2 (4%) at 400. The solver starts from 2 bands a month, so the
    # top band mixes spikes with ordinary paths; bands that straddle the plan's committed capacity are split until
    # the banded cost is the cost on every path. Optimum: commit 100 at 2 (one more GPU saves 6 x 0.04 = 0.24 an
    # hour for 2), the spikes' 300 GPUs on demand at 6: 146,000 + 0.04 x 300 x 6 x 730 = 198,560 a month for
    # 0.96 x 100 + 0.04 x 400 = 112 GPUs' worth of tasks.
    paths = [{"name": f"p{i:02d}", "factor": 1.0, "probability": 0.02} for i in range(48)] + [
        {"name": f"spike{i}", "factor": 4.0, "probability": 0.02} for i in range(2)
    ]
    cfg = flat(12, levels=2)
    cfg["demand"]["paths"] = paths
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=2.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path, cfg, offers)
    assert commits(result) == [("commit", 100, 1, 12)]
    assert result.expected_cost_per_task == pytest.approx(198_560 / (112 * TASKS_PER_GPU_MONTH), rel=1e-9)
    assert result.band_gap < 0.005
    assert result.band_gap == pytest.approx(0.0, abs=1e-9)  # every band lies within one price of the chosen plan


def test_a_cvar_limit_holds_on_whole_paths(tmp_path):
    # The newsvendor (100 or 200 GPUs' worth, equally likely; commit at 4, on demand at 6) with the CVaR at 90% of a
    # path's cost a month limited to 650,000. The worst 10% is the high path: 730 x (4q + 6 (200 - q)) =
    # 730 x (1,200 - 2q) <= 650,000 needs q >= 154.8, so 155 GPUs (risk-neutral: 100, CVaR 730,000). Expected:
    # 4 x 155 + 0.5 x 6 x 45 = 755 an hour for 150 GPUs' worth; CVaR 730 x 890 = 649,700.
    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0, "cvar_limit": 650000})
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path, cfg, offers)
    assert commits(result) == [("commit", 155, 1, 12)]
    assert result.cvar == pytest.approx(649_700) and result.cvar <= 650_000
    assert result.expected_cost_per_task == pytest.approx(755 / (150 * TASKS_PER_GPU_HOUR), rel=1e-9)


def test_a_cvar_limit_holds_on_every_sampled_path(tmp_path):
    # 200 sampled paths: the solver's CVaR sees the paths with the most demand first and adds every path whose cost
    # exceeds its threshold, so the CVaR computed afterwards on all 200 paths keeps the limit.
    from procure.analysis.plan.figures import cvar
    from procure.model.demand import scenarios

    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0})
    cfg["demand"] = {
        "months": 6,
        "start": 150 * TASKS_PER_GPU_MONTH,
        "growth": 0.0,
        "volatility": 0.4,
        "scenarios": 200,
    }
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, term_months=6),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    neutral = plan_for(tmp_path / "a", cfg, offers)
    limit = neutral.cvar * 0.97
    cfg["plan"]["cvar_limit"] = limit
    limited = plan_for(tmp_path / "b", cfg, offers)
    assert limited.cvar <= limit * (1 + 1e-9) < neutral.cvar
    # recomputed here from the paths: committed q GPUs at 4 every month, the rest of each path on demand at 6
    (q,) = [line.gpus for line in limited.plan if line.role == "commit"]
    paths = scenarios(load_workspace(tmp_path / "b").config).demand / TASKS_PER_GPU_MONTH  # GPUs' worth
    per_month = (4 * q + 6 * (paths - q).clip(min=0)).mean(axis=1) * GPU_MONTH
    assert cvar(per_month, np.full(200, 1 / 200), 0.9) == pytest.approx(limited.cvar, rel=1e-9)


@pytest.mark.parametrize(
    ("c", "expected", "better"),
    [(4.0, 700 / (150 * TASKS_PER_GPU_HOUR), True), (2.0, 400 / (150 * TASKS_PER_GPU_HOUR), False)],
)
def test_an_offer_the_shortlist_leaves_out_is_re_added_when_it_improves_the_plan(tmp_path, c, expected, better):
    # The newsvendor (tests/test_plan.py): demand of 100 or 200 GPUs' worth, equally likely; "commit" at c an hour,
    # "ondemand" at 6. With plan.max_candidates 1 the shortlist is "commit" alone (the relaxation uses it most and it
    # is the best single offer). At c = 4 the best plan commits 100 GPUs and buys the high months on demand: per hour
    # 100 x 4 + 0.5 x 100 x 6 = 700 for 150 GPUs' worth of tasks, while "commit" alone must cover 200: 800. The whole
    # program, cut off at the shortlist's cost, finds that plan, so "ondemand" is re-added. At c = 2 committing 200 is
    # the optimum (2 x 200 = 400 an hour against 100 x 2 + 0.5 x 100 x 6 = 500): the check proves nothing is missing.
    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0, "max_candidates": 1})
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=c),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    result = plan_for(tmp_path, cfg, offers)
    assert result.expected_cost_per_task == pytest.approx(expected, rel=1e-9)
    check = result.solver.shortlist_check
    assert check is not None and check in result.notes
    if better:
        assert check.startswith("the program over all 2 usable offers has a cheaper plan")
        assert {line.offer for line in result.plan} == {"commit", "ondemand"}
    else:
        assert check.startswith("proven: the program over all 2 usable offers has no plan cheaper")
        assert {line.offer for line in result.plan} == {"commit"}


@pytest.mark.parametrize("billed_per", ["month", "minute"])
def test_a_dedicated_endpoint_billed_by_the_minute_is_pay_as_used(tmp_path, billed_per):
    # Demand of 100 or 200 GPUs' worth a month, equally likely (tests/planws.py); one offer of up to 1,000 GPUs at 5 an
    # hour for 12 months. Billed by the minute it is paid only for what runs: 5 / 1,080 per task in every scenario.
    # Billed by the month its GPUs are a commitment fixed in advance: committing 200 costs 200 x 5 = 1,000 an hour for
    # 150 GPUs' worth of tasks on average, 1,000 / (150 x 1,080) per task (committing 100 would leave 100 GPUs' worth
    # unserved half the time at the default price, 3 x 5 / 1,080 a task: 0.5 x 100 x 1,080 x 0.01389 = 750 an hour
    # lost against 500 for the second 100 GPUs), and nothing can follow demand, which the plan's first line says.
    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0})
    offers = [offer("endpoint", gpus=0, max_gpus=1000, gpu_hour=5.0, pricing={"billed_per": billed_per})]
    result = plan_for(tmp_path, cfg, offers)
    if billed_per == "minute":
        assert result.expected_cost_per_task == pytest.approx(5.0 / TASKS_PER_GPU_HOUR, rel=1e-9)
        assert [(line.offer, line.role, line.gpus) for line in result.plan] == [("endpoint", "pay_as_used", 200)]
        assert result.expected_unused_share == 0.0 and result.headline is None
    else:
        assert result.expected_cost_per_task == pytest.approx(1000 / (150 * TASKS_PER_GPU_HOUR), rel=1e-9)
        assert commits(result) == [("endpoint", 200, 1, 12)]
        assert result.headline.startswith("No acceptable offer can follow demand")


def test_an_offer_billed_per_minute_has_no_burst(tmp_path):
    from procure.errors import InputError

    bad = offer(
        "endpoint",
        gpus=0,
        max_gpus=1000,
        gpu_hour=5.0,
        pricing={"billed_per": "minute"},
        burst={"gpu_hour": 6.0, "max_gpus": 100},
    )
    with pytest.raises(InputError) as err:
        plan_for(tmp_path, config(), [bad])
    assert "pricing.burst" in str(err.value) and "billed per minute" in str(err.value)


def test_the_horizon_shows_what_bridges_the_months_before_delivery(tmp_path):
    # "late" is delivered on 2027-03-31: month 5 on the cash flow's calendar (1 + floor(122 / 30.44)). Months 1-4 are
    # bridged by "now", the cheapest acceptable offer delivered in month 1, for the demand the plan is solved over (the
    # paths 1x and 2x of 100 GPUs' worth, half likely each: 150 GPUs' worth a month) at 5 an hour,
    # 4 x 150 x 730 x 5 = 2,190,000. With "now" gone nothing is delivered in month 1: the 4 x 118,260,000 tasks are
    # priced unserved at the default, 3 x the dearest acceptable cost per task (4 / 1,080): 4 x 118,260,000 x 3 x 4 /
    # 1,080 = 5,256,000.
    from procure.analysis.evaluate import evaluate

    late = offer("late", gpus=0, max_gpus=1000, gpu_hour=4.0, delivery="2027-04-30")
    cfg = config(workload={**config()["workload"], "tasks_per_month": 100 * TASKS_PER_GPU_MONTH})
    ev = evaluate(
        load_workspace(write(tmp_path / "a", cfg, [late, offer("now", gpus=0, max_gpus=1000, gpu_hour=5.0)])),
        AS_OF,
        horizon=12,
    )
    flow = ev.offer("late").cashflow
    assert flow.delivery_month == 5 and flow.bridge_by == "now"
    assert flow.bridge_cost == pytest.approx(4 * 150 * GPU_MONTH * 5.0, rel=1e-9)
    assert flow.bridge in flow.notes and "months 1-4" in flow.bridge and "now" in flow.bridge
    assert ev.offer("now").cashflow.bridge is None
    alone = evaluate(load_workspace(write(tmp_path / "b", cfg, [late])), AS_OF, horizon=12).offer("late").cashflow
    assert alone.bridge_by is None
    assert alone.bridge_cost == pytest.approx(4 * 150 * TASKS_PER_GPU_MONTH * 3 * 4.0 / TASKS_PER_GPU_HOUR, rel=1e-9)
