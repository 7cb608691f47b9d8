"""The plan: newsvendor cases worked out by hand, single offers, CVaR, properties over small random markets."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planws import TASKS_PER_GPU_HOUR, config, offer, write

from procure.analysis.plan import make_plan
from procure.analysis.plan.figures import cvar, weighted_quantile
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the solver: every plan is solved here, never read from the run's solve cache
    (tests/conftest.py), which a second run in the same checkout would otherwise serve."""
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


def plan_for(root: Path, cfg: dict, offers: list[dict], names: list[str] | None = None, frontier: bool = False):
    return make_plan(load_workspace(write(root, cfg, offers, names)), AS_OF, frontier=frontier)


def commits(result) -> dict[str, int]:
    found: dict[str, int] = {}
    for line in result.plan:
        if line.role == "commit":
            found[line.offer] = found.get(line.offer, 0) + (line.gpus or 0)
    return found


def newsvendor(c: float, p: float, node_gpus: int = 1) -> tuple[dict, list[dict]]:
    """Demand of 100 or 200 GPUs' worth, equally likely; a commit-only offer at c, an on-demand one at p."""
    return config(), [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=c, node_gpus=node_gpus),
        offer("ondemand", gpus=0, burst={"gpu_hour": p, "max_gpus": 1000}),
    ]


# --- the newsvendor, both sides of the critical ratio --------------------------------------------


def test_cheap_commitment_commits_the_high_demand(tmp_path):
    # c = 2 < p / 2 = 3: each GPU committed above 100 saves p x P(demand > q) = 3 an hour and costs 2, so commit 200.
    result = plan_for(tmp_path, *newsvendor(2.0, 6.0))
    assert commits(result) == {"commit": 200}
    # 200 GPUs x 2 = 400 an hour for 150 GPUs' worth of tasks on average: 400 / (150 x 1,080) = 0.00246914
    assert result.expected_cost_per_task == pytest.approx(400 / (150 * 1080), rel=1e-9)
    assert result.expected_unused_share == pytest.approx(0.25)  # half the time 100 of 200 GPUs idle: 50 / 200
    assert result.pay_as_used_share == pytest.approx(0.0)


def test_dear_commitment_commits_the_low_demand(tmp_path):
    # c = 4 > p / 2 = 3: commit 100; the high months buy 100 GPUs on demand at 6.
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0))
    assert commits(result) == {"commit": 100}
    # per hour: 100 x 4 + 0.5 x 100 x 6 = 700, for 150 GPUs' worth: 700 / (150 x 1,080) = 0.00432099
    assert result.expected_cost_per_task == pytest.approx(700 / (150 * 1080), rel=1e-9)
    assert result.expected_unused_share == pytest.approx(0.0)
    # pay-as-used share: 0.5 x 100 / 150
    assert result.pay_as_used_share == pytest.approx(1 / 3)
    on_demand = next(line for line in result.plan if line.role == "pay_as_used")
    assert (on_demand.offer, on_demand.gpus, on_demand.price) == ("ondemand", 100, 6.0)


def test_the_saving_against_the_best_single_offer(tmp_path):
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0))
    # commit alone must cover 200 GPUs: 800 / 162,000 = 0.0049383; on demand alone: 6 / 1,080 = 0.0055556
    assert result.single_best.offer == "commit"
    assert result.single_best.expected_cost_per_task == pytest.approx(800 / (150 * 1080), rel=1e-9)
    assert result.saving_per_task == pytest.approx((800 - 700) / (150 * 1080), rel=1e-9)
    assert result.saving_share == pytest.approx(100 / 800, rel=1e-9)


def test_each_offer_alone_is_priced_over_the_same_scenarios(tmp_path):
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0))
    # commit alone: 200 GPUs x 4 = 800 an hour; on demand alone: 6 an hour per GPU's worth, 6 / 1,080 a task
    assert result.single_offers == {"commit": pytest.approx(800 / (150 * 1080)), "ondemand": pytest.approx(6 / 1080)}


def test_stress_holds_the_plan_fixed(tmp_path):
    """The plan commits 100 GPUs at 4 (292,000 a month) and buys the high path's other 100 on demand at 6. Held
    fixed at demand -50% (50 and 100 GPUs' worth): 292,000 a month either way, on the low path half the commitment
    idle, 146,000 of it a month; over 12 months 0.5 x 146,000 x 12 = 876,000 expected. Without the committed vendor
    everything is bought on demand: 0.5 x (100 + 200) x 6 x 730 = 657,000 a month against 292,000 + 0.5 x 438,000
    = 511,000: 146,000 more a month, 1,752,000 over the year. Market prices +20%: on demand at 7.20, 511,000 +
    0.5 x 100 x 1.20 x 730 = 554,800 a month."""
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0))
    cases = {c.name: c for c in result.stress.cases}
    half = cases["Demand −50%"]
    assert half.monthly_spend == pytest.approx(292_000) and half.unused_commitment == pytest.approx(876_000)
    assert half.unused_share == pytest.approx(0.25) and half.pay_as_used_spend == 0.0
    assert cases["Demand as planned"].total_spend == pytest.approx(511_000 * 12)
    assert cases["Market prices +20%"].monthly_spend == pytest.approx(554_800)
    (vendor,) = result.stress.vendors
    assert (vendor.vendor, vendor.first_month) == ("Vendor commit", 1)
    assert vendor.extra_spend == pytest.approx(146_000 * 12) and vendor.extra_first_month == pytest.approx(146_000)
    assert vendor.unserved_share == 0.0
    # Expected on-demand GPU-hours: 0.5 x 100 x 730 = 36,500 a month at 6
    assert result.stress.pay_as_used_gpu_hours == pytest.approx([36_500] * 12)
    assert result.stress.pay_as_used_gpu_hour_rent == pytest.approx([219_000] * 12)
    assert result.stress.claims_low_end is None  # both offers' throughput is measured


def test_node_rounding_takes_the_cheaper_whole_node(tmp_path):
    # 8-GPU nodes: 100 GPUs lies between 96 and 104. From 100 down to 96 every hour buys 4 GPUs on demand in
    # both scenarios (4 x (6 - 4) = 8 more an hour); up to 104 four idle GPUs half the time (4 x (4 - 3) = 4).
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0, node_gpus=8))
    assert commits(result) == {"commit": 104}
    hourly = 104 * 4 + 0.5 * 96 * 6  # the high scenario buys 200 - 104 = 96 GPUs on demand
    assert result.expected_cost_per_task == pytest.approx(hourly / (150 * 1080), rel=1e-9)


def test_the_scenario_table_names_each_path_and_the_worst_tenth(tmp_path):
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0))
    rows = {r.name: r for r in result.scenarios}
    assert list(rows) == ["low", "high", "worst 10%"]
    assert rows["low"].cost_per_task == pytest.approx(400 / (100 * 1080))  # 100 committed, all used
    assert rows["high"].cost_per_task == pytest.approx((400 + 600) / (200 * 1080))
    assert rows["high"].pay_as_used_share == pytest.approx(0.5)
    # the worst 10% by cost per task is the high path here (0.00463 against 0.00370)
    assert rows["worst 10%"].cost_per_task == pytest.approx(rows["high"].cost_per_task)


def test_sampled_paths_are_shown_as_thirds_of_the_probability(tmp_path):
    # 300 sampled paths split into the lowest, middle and highest 100 by total demand: each row carries
    # probability 100/300, and the three rows' probability-weighted demand adds back to the mean demand
    # over all 300 paths (computed here from the paths themselves, not from the rows).
    from procure.model.demand import scenarios

    cfg, offers = newsvendor(4.0, 6.0)
    cfg["demand"] = {"months": 12, "start": 150 * 788_400, "growth": 0.0, "volatility": 0.3, "scenarios": 300}
    root = write(tmp_path, cfg, offers)
    result = make_plan(load_workspace(root), AS_OF)
    rows = {r.name: r for r in result.scenarios}
    assert [rows[n].probability for n in ("low", "base", "high")] == [pytest.approx(1 / 3)] * 3
    assert rows["low"].demand_per_month < rows["base"].demand_per_month < rows["high"].demand_per_month
    paths = scenarios(load_workspace(root).config).demand
    weighted = sum(rows[n].probability * rows[n].demand_per_month for n in ("low", "base", "high"))
    assert weighted == pytest.approx(paths.mean(), rel=1e-9)


def test_monthly_spend_risk(tmp_path):
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0))
    low, high = 400 * 730, 1000 * 730  # monthly spend in each path
    assert result.p90_monthly_spend == pytest.approx(high)
    assert result.cvar == pytest.approx(high)  # the worst 10% of months are all high months
    assert result.expected_monthly_spend == pytest.approx((low + high) / 2)


def test_fixed_fees_decide_whether_an_offer_is_worth_using(tmp_path):
    # The on-demand offer charges 300,000 a month to be used at all. A month of 200 committed GPUs costs
    # 200 x 4 x 730 = 584,000; 100 committed plus on demand 100 x 4 x 730 + 0.5 x 100 x 6 x 730 = 511,000, plus the
    # 300,000 fee: 811,000. So commit 200 and leave the on-demand offer out.
    cfg, offers = newsvendor(4.0, 6.0)
    offers[1]["pricing"]["fees"] = [{"name": "access", "monthly": 300000}]
    result = plan_for(tmp_path, cfg, offers)
    assert commits(result) == {"commit": 200}
    assert all(line.offer == "commit" for line in result.plan)


def test_a_commit_option_with_a_lower_price_is_taken_when_its_minimum_fits(tmp_path):
    cfg, offers = newsvendor(4.0, 6.0)
    offers[0]["pricing"]["commit_options"] = [{"gpus": 150, "term_months": 12, "gpu_hour": 2.5}]
    result = plan_for(tmp_path, cfg, offers)
    # at 2.5 < 3 the option commits 200 (its minimum 150 fits): 500 / 162,000
    assert commits(result) == {"commit": 200}
    line = next(line for line in result.plan if line.role == "commit")
    assert line.price == 2.5 and line.option == "150+ GPUs, 12 months"
    assert result.expected_cost_per_task == pytest.approx(500 / (150 * 1080), rel=1e-9)


def test_short_terms_are_decided_per_block(tmp_path):
    # A 6-month term on a 12-month horizon is decided twice (months 1-6 and 7-12); at c = 2 < p / 2 both commit 200.
    cfg, offers = newsvendor(2.0, 6.0)
    offers[0]["term_months"] = 6
    result = plan_for(tmp_path, cfg, offers)
    blocks = [(line.start_month, line.end_month, line.gpus) for line in result.plan if line.role == "commit"]
    assert blocks == [(1, 6, 200), (7, 12, 200)]


def test_unserved_penalty_lets_the_plan_leave_demand(tmp_path):
    cfg, offers = newsvendor(4.0, 6.0)
    cfg["plan"]["unserved_penalty_per_task"] = 6.0 / TASKS_PER_GPU_HOUR  # a task unserved costs 6 per GPU-hour's worth
    result = plan_for(tmp_path, cfg, offers[:1])
    # the penalty plays the on-demand price: c = 4 > 6 / 2, so commit 100 and leave the high months' extra 100 unserved
    assert commits(result) == {"commit": 100}
    # Cost per task is cash: 100 GPUs x 4 an hour over the 100 GPUs' worth served each hour = 400 / (100 x 1,080); the
    # unserved tasks are priced apart (the shortfall): half the months leave 100 GPUs' worth, 100 x 1,080 x 730 tasks,
    # at 6 / 1,080 each = 0.5 x 100 x 6 x 730 = 219,000 a month expected, 2,628,000 over the 12 months.
    assert result.expected_cost_per_task == pytest.approx(400 / (100 * 1080), rel=1e-9)
    assert result.shortfall_cost == pytest.approx(0.5 * 100 * 6 * 730 * 12, rel=1e-9)
    assert result.unserved_tasks == pytest.approx(0.5 * 100 * 1080 * 730 * 12, rel=1e-9)
    assert result.expected_monthly_spend == pytest.approx(100 * 4 * 730, rel=1e-9)  # cash: the commitment alone
    assert "left unserved" in result.served and "Every scenario" not in result.served


def test_the_vendor_share_splits_the_plan(tmp_path):
    cfg, offers = newsvendor(2.0, 6.0)
    cfg["plan"]["max_vendor_share"] = 0.6
    result = plan_for(tmp_path, cfg, offers)
    # In GPUs' worth a month: q committed, on demand 0.5 x (200 - q) + 0.5 x (100 - q) = 150 - q for q <= 100.
    # q <= 0.6 x (q + 150 - q) = 90; committing is cheaper (2 < 6), so q = 90.
    assert commits(result) == {"commit": 90}
    # per hour: 90 x 2 + 6 x (0.5 x 110 + 0.5 x 10) = 540, over 150 x 1,080 tasks
    assert result.expected_cost_per_task == pytest.approx(540 / (150 * 1080), rel=1e-9)
    assert result.saving_per_task == pytest.approx(
        (400 - 540) / (150 * 1080), rel=1e-9
    )  # the single offer is ruled out
    assert any("max_vendor_share 0.6 rules out the single offer" in n for n in result.notes)


def test_cvar_weight_buys_a_lower_tail(tmp_path):
    cfg, offers = newsvendor(4.0, 6.0)
    neutral = plan_for(tmp_path / "a", cfg, offers)
    cfg["plan"]["cvar_weight"] = 5.0
    averse = plan_for(tmp_path / "b", cfg, offers)
    # committing 200 makes every month 584,000; committing 100 has high months at 730,000
    assert commits(averse) == {"commit": 200}
    assert averse.cvar < neutral.cvar
    assert averse.expected_cost_per_task > neutral.expected_cost_per_task


def test_frontier_runs_from_risk_neutral_to_least_cvar(tmp_path):
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0), frontier=True)
    points = result.frontier
    assert points is not None and len(points) >= 2
    assert points[0].cvar_limit is None and points[0].expected_cost_per_task == pytest.approx(
        result.expected_cost_per_task
    )
    assert points[-1].cvar == pytest.approx(800 * 730)  # least CVaR: commit 200, every month 584,000
    costs = [p.expected_cost_per_task for p in points]
    cvars = [p.cvar for p in points]
    assert costs == sorted(costs) and cvars == sorted(cvars, reverse=True)


def test_per_token_capacity_is_limited_by_rate_limits(tmp_path):
    # 1,000 output tokens a task: 1,800,000 output tokens a minute = 1,800 tasks a minute = 78.84 M a month,
    # exactly the high months' extra 100 GPUs' worth (100 x 788,400).
    cfg = config()
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0),
        offer(
            "tokens",
            per_mtok={"input": 0.0, "output": 5.0},
            service={"rate_limits": {"output_tokens_per_minute": 1_800_000}},
        ),
    ]
    result = plan_for(tmp_path, cfg, offers)
    # a task costs 1,000 x 5 / 1e6 = 0.005, i.e. 5.4 per GPU-hour's worth (1,080 tasks): c = 4 > 5.4 / 2, so commit 100
    assert commits(result) == {"commit": 100}
    assert any(line.offer == "tokens" and line.role == "pay_as_used" for line in result.plan)


# --- helpers ------------------------------------------------------------------------------------


def test_cvar_is_the_tail_mean():
    values = np.arange(1.0, 11.0)  # 1..10 equally likely: the worst 10% is 10, the worst 20% averages 9.5
    weights = np.full(10, 0.1)
    assert cvar(values, weights, 0.9) == pytest.approx(10.0)
    assert cvar(values, weights, 0.8) == pytest.approx(9.5)
    assert weighted_quantile(values, weights, 0.5) == 5.0


# --- properties ---------------------------------------------------------------------------------

prices = st.floats(min_value=1.0, max_value=9.0, allow_nan=False).map(lambda x: round(x, 2))


@st.composite
def markets(draw):
    """Two to four offers: commit-only, on-demand, or both, with their own prices and minimums."""
    count = draw(st.integers(2, 4))
    offers = []
    for i in range(count):
        kind = draw(st.sampled_from(["commit", "ondemand", "both"]))
        burst = {"gpu_hour": draw(prices), "max_gpus": 1000} if kind != "commit" else None
        if kind == "ondemand":
            offers.append(offer(f"o{i}", gpus=0, burst=burst))
        else:
            minimum = draw(st.sampled_from([0, 50, 120]))
            offers.append(
                offer(
                    f"o{i}",
                    gpus=minimum,
                    max_gpus=1000,
                    gpu_hour=draw(prices),
                    burst=burst,
                    node_gpus=draw(st.sampled_from([1, 8])),
                )
            )
    if not any(o["pricing"].get("burst") or o.get("max_gpus") for o in offers):
        offers.append(offer("od", gpus=0, burst={"gpu_hour": 8.0, "max_gpus": 1000}))
    return offers


SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@SETTINGS
@given(markets())
def test_the_plan_never_costs_more_than_the_best_single_offer(tmp_path_factory, offers):
    result = plan_for(tmp_path_factory.mktemp("m"), config(), offers)
    assert result.single_best.expected_cost_per_task is not None
    assert result.expected_cost_per_task <= result.single_best.expected_cost_per_task * (1 + 1e-9)


@SETTINGS
@given(markets(), prices)
def test_adding_an_offer_never_raises_the_cost(tmp_path_factory, offers, extra_price):
    before = plan_for(tmp_path_factory.mktemp("m"), config(), offers)
    more = offers + [
        offer(
            "extra", gpus=0, max_gpus=1000, gpu_hour=extra_price, burst={"gpu_hour": extra_price + 1, "max_gpus": 500}
        )
    ]
    after = plan_for(tmp_path_factory.mktemp("m"), config(), more)
    assert after.expected_cost_per_task <= before.expected_cost_per_task * (1 + 1e-9)


def scaled(offers: list[dict], k: float) -> list[dict]:
    out = []
    for o in offers:
        p = dict(o["pricing"])
        if "gpu_hour" in p:
            p["gpu_hour"] = p["gpu_hour"] * k
        if "burst" in p:
            p["burst"] = {**p["burst"], "gpu_hour": p["burst"]["gpu_hour"] * k}
        out.append({**o, "pricing": p})
    return out


@SETTINGS
@given(markets(), st.sampled_from([0.5, 2.0, 3.0]))
def test_scaling_every_price_scales_the_cost_and_keeps_the_plan(tmp_path_factory, offers, k):
    base = plan_for(tmp_path_factory.mktemp("m"), config(), offers)
    moved = plan_for(tmp_path_factory.mktemp("m"), config(), scaled(offers, k))
    assert moved.expected_cost_per_task == pytest.approx(k * base.expected_cost_per_task, rel=1e-6)
    assert [(ln.offer, ln.role, ln.gpus, ln.start_month) for ln in moved.plan] == [
        (ln.offer, ln.role, ln.gpus, ln.start_month) for ln in base.plan
    ]


@SETTINGS
@given(markets(), st.randoms(use_true_random=False))
def test_file_order_and_currency_do_not_change_the_plan(tmp_path_factory, offers, rng):
    base = plan_for(tmp_path_factory.mktemp("m"), config(), offers)
    # The same offers in EUR at 1.25 USD per EUR, in files whose names sort in another order.
    in_euros = [{**o, "pricing": {**o["pricing"], "currency": "EUR"}} for o in scaled(offers, 1 / 1.25)]
    names = [f"{rng.randint(0, 10**6):07d}-{o['id']}" for o in in_euros]
    moved = plan_for(tmp_path_factory.mktemp("m"), config(), in_euros, names)
    assert moved.expected_cost_per_task == pytest.approx(base.expected_cost_per_task, rel=1e-9)
    assert [(ln.offer, ln.role, ln.gpus) for ln in moved.plan] == [(ln.offer, ln.role, ln.gpus) for ln in base.plan]


# --- model size ---------------------------------------------------------------------------------


def model_size(offers: int, scenarios: int, months: int) -> tuple[int, int, int]:
    """Variables, constraints and nonzeros of a model of `offers` offers (a commitment and a burst each),
    with every scenario its own demand level."""
    from procure.analysis.plan.candidates import Candidate, Commit, Source
    from procure.analysis.plan.discount import discount_factors
    from procure.analysis.plan.program import Risk, Setting, build_model
    from procure.model.demand import Scenarios
    from procure.model.inputs import PlanConfig

    cands = []
    for i in range(offers):
        cand = Candidate(f"o{i}", f"V{i}", 1000.0)
        cand.commits.append(Commit(i, "base", 1, 100, 8, 12, 4.0, 8 * 4.0 * 730, 8 * TASKS_PER_GPU_HOUR * 730))
        cand.source = Source(i, 6.0 / TASKS_PER_GPU_HOUR, 1e9, 6.0, "gpu_hour", TASKS_PER_GPU_HOUR * 730)
        cands.append(cand)
    rng = np.random.default_rng(1)
    scen = Scenarios(
        [f"s{i}" for i in range(scenarios)],
        np.full(scenarios, 1 / scenarios),
        rng.uniform(1e6, 2e6, (scenarios, months)),
        True,
        months,
        1e6,
        0.0,
        0.3,
        7,
    )
    policy = PlanConfig(levels=max(scenarios, 2), max_vendor_share=0.7)
    model = build_model(cands, Setting(scen, policy, discount_factors(months, 0.1), Risk(weight=1.0), 1e6, 1e6))
    return len(model.c), model.nrows, model.nonzeros


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_model_size_grows_linearly_with_offers_scenarios_and_months(axis):
    base = [4, 10, 12]

    def size(factor: int) -> np.ndarray:
        dims = list(base)
        dims[axis] *= factor
        return np.array(model_size(*dims))

    one, two, four = size(1), size(2), size(4)
    # linear: doubling again adds twice what the first doubling added (up to the constant part)
    assert ((four - two) == 2 * (two - one)).all(), (one, two, four)


def test_the_frontiers_solves_stop_on_work_not_on_the_clock(tmp_path, monkeypatch):
    # Every solve of the frontier carries the deterministic node limit and the plan's own time limit (a backstop only):
    # the same workspace gives the same frontier on a fast or a slow machine, and its proven solves are kept like the
    # plan's. The newsvendor's points: risk-neutral (commit 100, CVaR of the high path 100 x 4 + 100 x 6 = 1,000 an
    # hour) to least CVaR (commit 200: 800 an hour in every path), so two points at least.
    import procure.analysis.milp as solving
    from procure.analysis.plan.frontier import FRONTIER_NODES

    seen = []
    real = solving.run_milp

    def recording(program):
        seen.append(dict(program.options))
        return real(program)

    monkeypatch.setattr(solving, "run_milp", recording)
    result = plan_for(tmp_path, *newsvendor(4.0, 6.0), frontier=True)
    # every solve now carries a node limit: the plan's plan.node_limit, the frontier's FRONTIER_NODES
    assert all("node_limit" in o and o["time_limit"] == result.policy.time_limit_s for o in seen)
    frontier = [o for o in seen if o["node_limit"] == FRONTIER_NODES]
    assert frontier and any(o["node_limit"] == result.policy.node_limit for o in seen)
    assert result.frontier[0].cvar == pytest.approx(1000 * 730)
    assert result.frontier[-1].cvar == pytest.approx(800 * 730)


def test_the_vendor_switches_leave_the_best_plan_unchanged():
    # The per-vendor switches are there for the solver to branch on, not to change the program: solved to a zero gap
    # with and without their rows (and the switches free), a small market with fees, a vendor with two offers and a
    # binding share reaches the same optimum; and with them a vendor switched off holds nothing.
    from scipy.optimize import Bounds, LinearConstraint, milp

    from procure.analysis.plan.candidates import Candidate, Commit, Source
    from procure.analysis.plan.discount import discount_factors
    from procure.analysis.plan.program import Risk, Setting, build_model
    from procure.model.demand import Scenarios
    from procure.model.inputs import PlanConfig

    cands = []
    for i, (vendor, fee, price) in enumerate(
        [("A", 5000.0, 3.0), ("A", 0.0, 3.6), ("B", 20000.0, 3.3), ("C", 8000.0, 3.9)]
    ):
        cand = Candidate(f"o{i}", vendor, fee)
        cand.commits.append(Commit(i, "base", 1, 100, 8, 3, price, 8 * price * 730, 8 * TASKS_PER_GPU_HOUR * 730))
        cand.source = Source(
            i, 1.5 * price / TASKS_PER_GPU_HOUR, 2e6, 1.5 * price, "gpu_hour", TASKS_PER_GPU_HOUR * 730, 3
        )
        cands.append(cand)
    rng = np.random.default_rng(3)
    months, count = 6, 8
    scen = Scenarios(
        [f"s{i}" for i in range(count)],
        np.full(count, 1 / count),
        rng.uniform(5e6, 2e7, (count, months)),
        True,
        months,
        1e7,
        0.0,
        0.3,
        7,
    )
    model = build_model(
        cands,
        Setting(
            scen,
            PlanConfig(levels=count, max_vendor_share=0.7),
            discount_factors(months, 0.1),
            Risk(),
            1e5,
            1e6,
            penalty=1e-3,
        ),
    )
    A, lo, hi = model.matrix()
    first = {name: row for row, name in model.row_names}
    switched = np.arange(first["vendor switched on"], first["two vendors at least"] + 1)
    # one row per commitment switch (8: 4 offers x 2 blocks of 3 months), per pay-as-used block with fees (3 offers x
    # 2),
    # one for the source without fees (o1), and the count
    assert len(switched) == 8 + 6 + 1 + 1
    keep = np.setdiff1d(np.arange(A.shape[0]), switched)
    free = model.integrality.copy()
    free[model.layout["w"]] = 0

    def optimum(rows: np.ndarray, integrality: np.ndarray):
        return milp(
            model.c,
            constraints=LinearConstraint(A[rows], lo[rows], hi[rows]),
            integrality=integrality,
            bounds=Bounds(model.lb, model.ub),
            options={"mip_rel_gap": 0.0},
        )

    with_switches, without = optimum(np.arange(A.shape[0]), model.integrality), optimum(keep, free)
    assert with_switches.status == 0 and without.status == 0
    assert with_switches.fun == pytest.approx(without.fun, rel=1e-9)
    x = with_switches.x
    off = [v for v, w in enumerate(x[model.layout["w"]]) if w < 0.5]
    vendors = sorted({c.vendor for c in cands})
    for j, u in enumerate(model.units):
        if vendors.index(cands[u.commit.offer].vendor) in off:
            assert x[model.layout["n"]][j] < 0.5


@pytest.mark.slow
def test_the_frontier_solved_in_the_report_workers_is_the_one_solved_here(tmp_path, monkeypatch):
    """The comparison report hands the frontier's solves to its layout processes; each is the same program there,
    so the frontier is the same, point for point (the solve cache off, so that both really solve)."""
    from procure.render.assemble import LayoutWorkers

    monkeypatch.setenv("PROCURE_CACHE_DIR", "")
    ws = load_workspace(write(tmp_path, *newsvendor(4.0, 6.0)))
    here = make_plan(ws, AS_OF, frontier=True)
    with LayoutWorkers(2) as workers:
        there = make_plan(ws, AS_OF, frontier=True, solves=workers.map)
    assert there.frontier == here.frontier and len(here.frontier) >= 2
    assert there.plan == here.plan
