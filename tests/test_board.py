"""The board paper's decision memo, computed from the example workspace (2026-12-01)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest

from procure.analysis.evaluate import evaluate_with_inputs
from procure.analysis.report import gather_extras
from procure.io.workspace import load_workspace
from procure.render.formats import month_range, prose_count

ROOT = Path(__file__).parent.parent
AS_OF = date(2026, 12, 1)


@pytest.fixture(scope="module")
def extras():
    ws = load_workspace(ROOT)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    return gather_extras(ws, ev, inputs, board=True), ev


def _words(ev, figures):
    """The memo in words (render/board.py) from its figures (analysis/memo.py, carried on the report's extras)."""
    from procure.render.board import board_memo

    return board_memo(ev, figures)


@pytest.fixture(scope="module")
def memo(extras):
    found, ev = extras
    return _words(ev, found.memo), ev


@pytest.fixture(scope="module")
def single_memo(extras):
    """The memo as it reads without `demand:` in procure.yaml: the recommended offer is the ask."""
    from procure.analysis.hedging import plan_for_workspace
    from procure.analysis.memo import memo_figures
    from procure.render.board import board_memo

    found, ev = extras
    return board_memo(
        ev,
        memo_figures(
            ev,
            found.cases,
            found.position,
            plan_for_workspace(load_workspace(ROOT), ev, ev.summary.recommended),
            found.hedge_missing,
            None,
        ),
    ), ev


def test_headline_without_a_plan_asks_for_the_single_offer(extras):
    """Without `demand:` the memo asks for the recommended offer's commitment."""
    from procure.analysis.memo import memo_figures
    from procure.render.board import board_memo

    found, ev = extras
    m = board_memo(ev, memo_figures(ev, found.cases, found.position, found.hedge, found.hedge_missing, None))
    # Keel: 256 GPUs for 12 months; the commitment in millions to one decimal; today's demand bills more GPUs than
    # the commitment (at its promised 287.4 tok/s/GPU), which the headline says
    import math

    keel = ev.offer("keel-b200-mc").metrics
    assert keel["billed_gpus"] > 256
    assert m.headline == (
        f"Approve a 12-month commitment of 256 B200 GPUs with Keel Systems, {keel['total_commitment'] / 1e6:.1f} M USD "
        f"({math.ceil(keel['billed_gpus']):.0f} GPUs billed at today's demand), "  # whole GPUs, rounded up
        f"at {keel['cost_per_task'] * 1000:.2f} USD per 1,000 tasks."
    )
    assert m.terms.nodes == 32 and m.terms.delivery == date(2026, 12, 20)
    assert m.plan is None


def test_headline_asks_for_the_plan_when_there_is_one(extras):
    """The example holds Keel's contract (contract.signed: 256 GPUs, 2026-05-01 to 2027-04-30): the plan keeps it as it
    stands in months 1-5, renews Keel's 256 GPUs for months 6-17 now (signed before the window closes, 2027-06-30,
    the earliest expiry of the usable offers), plans 64 Petrel GPUs for months 13-24 as a later decision and serves
    the rest on demand. The memo asks for what is signed now, and says what we hold and what is left to decide."""
    found, ev = extras
    m, plan = _words(ev, found.memo), found.plan
    commits = sorted((x for x in plan.plan if x.role == "commit"), key=lambda x: x.start_month)
    assert [(x.vendor, x.gpus, x.start_month, x.end_month, x.decision) for x in commits] == [
        ("Keel Systems", 256, 1, 5, "held"),
        ("Keel Systems", 256, 6, 17, "sign_now"),
        ("Petrel Cloud", 64, 13, 24, "later"),
    ]
    # the renewal is costed at the price the contract escalates to: 4.85 x 1.02 (its +2% from month 7) = 4.947
    assert commits[1].expected_price == pytest.approx(4.85 * 1.02)
    assert str(plan.decide_by) == "2027-06-30" and plan.ask_gpus == 256 and plan.held_gpus == 256
    [row] = plan.term_sheet
    assert (row.vendor, row.gpus, row.price) == ("Keel Systems", 256, 4.85)
    assert m.holding[0] == (
        # the ask starts the day after the held contract ends (30 April 2027; plan month 6, May, from December 2026):
        # a renewal, not GPUs on top
        "We hold 256 GPUs with Keel Systems until 30 April 2027; we ask to commit 256 GPUs now for when it ends, from "
        "1 May 2027, and capacity paid for as used."
    )
    # its term is 12 calendar months from then, and it must be signed the day before it starts (a renewal: the GPUs
    # are already running), well before the offer expires (30 June 2027)
    assert (row.start, row.end, row.sign_by) == (date(2027, 5, 1), date(2028, 4, 30), date(2027, 4, 30))
    assert m.deadline == date(2027, 4, 30)
    # the later block's spread: the index's monthly log moves, sd sigma, over the 12 months to its start:
    # 5.10 x exp(-/+ 1.2816 sigma sqrt(12))
    import math

    sigma = plan.index_monthly_volatility
    assert commits[2].price_p10 == pytest.approx(5.10 * math.exp(-1.2815516 * sigma * math.sqrt(12)), rel=1e-6)
    assert m.holding[1].startswith(
        "Not asked for today: 64 GPUs with Petrel Cloud from December 2027 (expected 5.10 USD per GPU-hour, 8 in 10 "
        f"chances between {commits[2].price_p10:.2f} and {commits[2].price_p90:.2f}): "
        "decisions after 30 June 2027"
    )
    # What Keel's held contract still binds (procure.analysis.commitment): its 5 remaining months of 256 GPUs, 934,400
    # GPU-hours, at 4.85 and the 0.03 support fee, no onboarding again: 934,400 x 4.88 = 4,559,872. Nothing already in
    # service is delivered late.
    from procure.analysis.decision import line_commitments

    bound = dict(zip(map(id, plan.plan), line_commitments(plan, {o.id: o for o in extras[1].offers})))
    held = next(x for x in plan.plan if x.decision == "held")
    assert bound[id(held)] == pytest.approx(4_559_872)
    assert not any(
        r.risk.startswith("Keel Systems delivers") or r.risk.startswith("Keel Systems not in service") for r in m.risks
    )
    share = (
        plan.single_best.expected_cost_per_task - plan.expected_cost_per_task
    ) / plan.single_best.expected_cost_per_task
    assert m.plan.saving_share == pytest.approx(share) and share > 0
    assert m.plan.statement.endswith(
        f"{share:.1%} below the best single offer (Petrel Cloud alone, "
        f"{plan.single_best.expected_cost_per_task * 1000:.2f})."
    )


def test_a_single_offer_plan_says_why_it_is_the_plan(extras):
    """When the plan's lines are all one offer (here: the best single offer's own plan), the memo says so and why."""
    from procure.analysis.memo import memo_figures
    from procure.render.board import plan_ask

    found, _ = extras
    single = found.plan.model_copy(deep=True)
    best = single.single_best
    # The best single offer is costed beside what we hold (Keel's 256 GPUs, months 1-5): its lines are Petrel's and
    # the held contract's; its own lines alone make a plan of one offer
    assert [(x.offer, x.gpus, x.start_month, x.end_month) for x in best.plan if x.role == "commit"] == [
        ("petrel-b200-ondemand", 944, 13, 24),
        ("keel-b200-mc", 256, 1, 5),
    ]
    single.plan = [x for x in best.plan if x.offer == best.offer]
    single.expected_cost_per_task = best.expected_cost_per_task
    single.saving_share = 0.0
    ev = extras[1]
    headline, ask = plan_ask(single, memo_figures(ev, found.cases, found.position, found.hedge, "", single))
    # Beside the held 256 GPUs, Petrel alone commits nothing for months 1-12 (the held GPUs serve months 1-5, on
    # demand the rest) and 944 GPUs for months 13-24 (each delivering at the capacity whose cost per task is its
    # expected one, the harmonic mean of its draws): 944 x 5.10 x 730 x 12 = 42,174,144, plus its 3,000 a month of
    # networking over the 12 months committed: 36,000; 42,210,144 -> 42.2 M USD
    assert ask.total_commitment == pytest.approx(944 * 5.10 * 730 * 12 + 12 * 3_000)
    assert headline.startswith("Approve the plan, a single offer: 944 B200 GPUs with Petrel Cloud for months 13–24")
    assert "42.2 M USD committed" in headline
    assert (
        ask.statement
        == "A single offer is the plan: no mix of commitments and on-demand capacity costs less per task over the 500 "
        "demand scenarios than Petrel Cloud alone."
    )


def test_saving_against_today_uses_our_recorded_cost(single_memo):
    m, _ = single_memo
    # market.own: 0.0068 on 2026-11-29, against Keel's cost per task as evaluated (its throughput the promise,
    # 310 x 0.993333 x 0.933333 = 287.4 tok/s/GPU: its months of tokens per billed GPU-hour do not move it):
    # (0.0068 - cost) x 150,000,000 a month
    _, ev = single_memo
    cost = ev.offer("keel-b200-mc").metrics["cost_per_task"]
    assert ev.offer("keel-b200-mc").metrics["throughput"] == pytest.approx(
        310 * (0.95 + 1.0 + 1.03) / 3 * (0.85 + 0.95 + 1.0) / 3, rel=1e-12
    )
    assert m.today.current_per_task == 0.0068 and not m.today.of_plan
    assert m.today.monthly_saving == pytest.approx((0.0068 - cost) * 150_000_000, rel=1e-9)
    assert m.today.annual_saving == pytest.approx(12 * (0.0068 - cost) * 150_000_000, rel=1e-9)


def test_against_today_with_a_plan_is_the_plan_against_our_cost(extras):
    """The example's plan: today's 0.0068 against the plan's expected cost per task, priced at the plan's expected
    tasks a month (150 M growing 2% a month: the mean of 1.02^k over 24 months is 1.2672, so about 190 M; the
    500 sampled paths average close to it)."""
    found, ev = extras
    m, plan = _words(ev, found.memo), found.plan
    assert m.today.of_plan and m.today.new_per_task == plan.expected_cost_per_task
    trend = 150e6 * sum(1.02**k for k in range(24)) / 24
    assert m.today.tasks_per_month == pytest.approx(trend, rel=0.02)
    assert m.today.monthly_saving == pytest.approx((0.0068 - plan.expected_cost_per_task) * m.today.tasks_per_month)


def test_options_carry_basis_evidence_tier_and_a_near_tie(memo):
    m, ev = memo
    # The one ranked first, then in rank order the best single offer over the plan's scenarios (Petrel, 4th here) and
    # the
    # offers the plan asks for (Keel and Petrel; Lumen Forge's per-token service is no longer in the plan: the peaks it
    # served are left unserved, docs/plan.md): page 1 holds the decision, the comparison report the rest.
    named = {"keel-b200-mc", "petrel-b200-ondemand"}
    assert [o.offer for o in m.options] == [o.id for o in ev.ranked if o.id in named or o.rank == 1]
    assert m.options_more == len(ev.ranked) - len(m.options)
    petrel = next(o for o in m.options if o.offer == "petrel-b200-ondemand")
    assert (petrel.price_basis, petrel.evidence) == ("fixed price", "reference curve")
    today = min(ev.ranked, key=lambda o: o.metrics["cost_per_task"])
    horizon = min(ev.ranked, key=lambda o: o.metrics["horizon_cost_per_task"])
    assert f"lowest over {ev.horizon_months} months" in next(o for o in m.options if o.offer == horizon.id).pros
    assert "lowest cost today" in next(o for o in m.options if o.offer == today.id).pros
    # A near-tie is called exactly when today's cheapest and the horizon's cheapest differ.
    if today.id == horizon.id:
        assert m.near_tie is None
    else:
        assert m.near_tie.startswith(
            f"A near-tie: {today.vendor} is cheapest today and {horizon.vendor} over {ev.horizon_months} months"
        )


def test_near_tie_names_both_offers_and_what_decides(memo):
    """Rank by the horizon with Keel made dearer over the horizon: today's and the horizon's cheapest differ."""
    from procure.analysis.memo import memo_figures
    from procure.render.board import _near_tie

    m, ev = memo
    changed = ev.model_copy(deep=True)
    keel = changed.offer("keel-b200-mc")
    keel.metrics["horizon_cost_per_task"] = 1.0  # far above every other offer over the horizon
    text = _near_tie(changed, memo_figures(changed, [], None, None, ""))
    horizon = min((o for o in changed.ranked), key=lambda o: o.metrics["horizon_cost_per_task"])
    # today's cost apart, as a share of today's cheapest (Keel)
    gap = abs(keel.metrics["cost_per_task"] - horizon.metrics["cost_per_task"]) / keel.metrics["cost_per_task"]
    assert f"{gap:.1%} apart today" in text
    assert text.startswith(f"A near-tie: Keel Systems is cheapest today and {horizon.vendor} over 24 months")
    assert "fixed price, 12-month term" in text


def test_risk_register_prices_each_risk_and_names_an_owner(single_memo):
    m, _ = single_memo
    names = " ".join(r.risk for r in m.risks)
    for word in ("Delivery", "Vendor fails", "Concentration", "Operator", "prices rise", "Demand"):
        assert word in names
    assert all(r.owner and r.likelihood in ("low", "medium", "high") for r in m.risks)
    demand = next(r for r in m.risks if r.risk == "Demand falls 30%")
    row = next(r for r in m.scenarios if r.name == "Demand −30%")
    assert demand.impact == pytest.approx(row.unused_monthly * 12)  # idle commitment over the 12-month term


def test_hedge_is_a_yes_no_question(single_memo):
    """The question buys what the hedging plan's ladder buys, over the months it covers."""
    from procure.analysis.hedging import plan_for_workspace

    m, ev = single_memo
    plan = plan_for_workspace(load_workspace(ROOT), ev, ev.summary.recommended)
    bought = [r for r in plan.ladder if r.contracts]
    contracts = sum(r.contracts for r in bought)
    assert m.hedge.ask
    assert (
        m.hedge.question == f"Approve buying {contracts:,} GPU-hour price contracts "
        f"({prose_count(sum(r.hedged_gpu_hours for r in bought))} GPU-hours) for "
        f"{month_range(bought[0].first_month, bought[-1].last_month)}?"
    )


def test_cheapest_odds_name_every_likely_offer_and_add_to_100():
    from types import SimpleNamespace

    from procure.analysis.report import cheapest_odds

    def offer(vendor, p):
        return SimpleNamespace(vendor=vendor, uncertainty=SimpleNamespace(prob_cheapest=p))

    # 33.4 + 33.3 + 33.3 rounds each to 33 (99 in all): largest remainder gives 34/33/33.
    ev = SimpleNamespace(ranked=[offer("A", 0.334), offer("B", 0.333), offer("C", 0.333)])
    assert cheapest_odds(ev) == [("A", 34), ("B", 33), ("C", 33)]
    # Under 5% pooled: 0.80, 0.155 and 0.03 + 0.015 = 0.045 -> 80 + 15 + 4 = 99 before the last point goes to a half
    ev = SimpleNamespace(ranked=[offer("A", 0.80), offer("B", 0.155), offer("C", 0.03), offer("D", 0.015)])
    odds = cheapest_odds(ev)
    assert [n for n, _ in odds] == ["A", "B", "others"] and sum(p for _, p in odds) == 100


# --- the memo when the plan is the ask: a small plan workspace worked out by hand ------------------------------------
#
# tests/planws.py: one GPU-month serves 788,400 tasks and a GPU-hour costs its price. Demand is 100 GPU-months of tasks
# (low path, probability 1/2) or 200 (high path, 1/2) for 12 months. "commit" rents committed GPUs at 2.00 a GPU-hour,
# 25% prepaid; "ondemand" bills 3.00 a GPU-hour when used. The newsvendor rule commits 100 GPUs: a GPU above 100 is
# needed half the time, 0.5 x 3.00 = 1.50 < 2.00, so it is bought on demand. Per month: the commitment costs
# 100 x 2.00 x 730 = 146,000; the high path buys 100 GPUs on demand, 100 x 3.00 x 730 = 219,000.

MONTH = 730.0


@pytest.fixture(scope="module")
def small_plan(tmp_path_factory):
    from procure.analysis import evaluate as evaluate_module
    from tests import planws

    root = tmp_path_factory.mktemp("plan-memo")
    cfg = planws.config(market={"own": [{"cost_per_task": 4.0 / planws.TASKS_PER_GPU_HOUR, "date": "2026-12-01"}]})
    offers = [
        # delivered on the as-of date: the plan has its capacity from the first day (the hand-worked figures below
        # assume it)
        planws.offer(
            "commit", gpus=0, max_gpus=1000, gpu_hour=2.0, pricing={"prepay_fraction": 0.25}, delivery="2026-12-01"
        ),
        planws.offer("ondemand", gpus=0, burst={"gpu_hour": 3.0, "max_gpus": 1000}),
    ]
    planws.write(root, cfg, offers)
    (root / "market").mkdir()
    (root / "market" / "index.csv").write_text("date,price\n2026-10-05,4.20\n2026-11-02,4.00\n")
    ws = load_workspace(root)
    ev, inputs = evaluate_module.evaluate_with_inputs(ws, AS_OF)
    found = gather_extras(ws, ev, inputs, board=True)
    return _words(ev, found.memo), found.plan, ev, found.memo


def test_the_memo_figures_are_computed_in_analysis_once(small_plan):
    """The figures the memo prints are on procure.analysis.memo's MemoFigures, by hand: "commit" 100 GPUs x 730 h x
    2.00 x 12 months = 1,752,000 committed, 25% of it prepaid = 438,000, all with one vendor (100%); the ask's total
    is the recommendation's commitment (one rule). The hedge: 263 contracts, 191,990 GPU-hours; prices +20% raise the
    on-demand rent (0.5 x 100 GPUs x 730 h x 3.00 x 12 = 1,314,000) by 262,800 and the contracts pay 191,990 x 4.00 x
    0.2 = 153,592 (test_plan_hedge_asks_about_the_pay_as_used_hours)."""
    _, _, _, figures = small_plan
    risks = figures.plan_risks
    assert risks.committed == {"Vendor commit": pytest.approx(1_752_000)}
    assert risks.prepaid == {"Vendor commit": pytest.approx(438_000)}
    assert risks.concentration == [("Vendor commit", pytest.approx(1.0))] and risks.top_vendor == "Vendor commit"
    assert figures.ask_total == pytest.approx(1_752_000) == figures.rec.total_commitment
    hedge = figures.hedge_sums
    assert (hedge.contracts, hedge.hedged) == (263, pytest.approx(191_990))
    assert hedge.rise == pytest.approx(262_800) and hedge.payoff == pytest.approx(153_592)
    # the memo prints these figures as they are
    assert figures.today.monthly_saving == pytest.approx(182_500)


def test_small_plan_commits_the_base_load(small_plan):
    _, plan, _, _ = small_plan
    assert [(x.offer, x.role, x.gpus) for x in plan.plan] == [
        ("commit", "commit", 100),
        ("ondemand", "pay_as_used", 100),
    ]


def test_against_today_prices_the_plan_at_its_expected_volume(small_plan):
    """Today 4.00 a GPU-hour's worth per task; the plan (146,000 + 0.5 x 219,000) / (150 x 730) = 2.3333 a GPU-hour;
    expected volume 150 GPU-months = 118,260,000 tasks; saving (4 - 2.3333) x 150 x 730 = 182,500 a month."""
    m, _, _, _ = small_plan
    assert m.today.of_plan
    assert m.today.new_per_task == pytest.approx(255_500 / 118_260_000)
    assert m.today.tasks_per_month == pytest.approx(118_260_000)
    assert m.today.monthly_saving == pytest.approx(182_500)
    assert m.today.annual_saving == pytest.approx(2_190_000)


def test_options_put_the_plan_first_against_each_offer_alone(small_plan):
    """Alone, "commit" must commit 200 GPUs (it has no pay-as-used capacity): 200 x 2 x 730 = 292,000 a month,
    2.6667 a GPU-hour's worth; "ondemand" alone pays 3.00. The plan, 2.3333, is 12.5% below the best single offer."""
    m, _, _, _ = small_plan
    per_task = {o.offer: o.scenarios_per_task for o in m.options}
    assert per_task["commit"] == pytest.approx(292_000 / 118_260_000)
    assert per_task["ondemand"] == pytest.approx(3.0 / 1080)
    row = m.plan_option
    assert row.vendor == "Recommended portfolio" and row.scenarios_per_task == pytest.approx(255_500 / 118_260_000)
    assert row.commitment == pytest.approx(100 * 2.0 * MONTH * 12)  # 1,752,000
    assert row.pros.startswith("12.5% below the best single offer (Vendor commit alone, 2.47)")  # 2.6667 / 1.08


def test_plan_scenarios_hold_the_portfolio_fixed(small_plan):
    """Demand -30%: paths of 70 and 140 GPU-months. Low: 146,000, 30 committed GPUs idle (43,800); high: 146,000 +
    40 x 3 x 730 = 233,600, none idle. Expected spend 189,800 a month, idle 21,900 a month; tasks 105 GPU-months.
    Demand -50% (50 and 100): 146,000 either way, idle half the commitment on the low path: 36,500 a month."""
    m, _, _, _ = small_plan
    rows = {r.name: r for r in m.plan_cases}
    low = rows["Demand −30%"]
    assert low.monthly_spend == pytest.approx(189_800)
    assert low.unused_monthly == pytest.approx(21_900)
    assert low.cost_per_task == pytest.approx(189_800 / (105 * planws_month()))
    half = rows["Demand −50%"]
    assert (half.monthly_spend, half.unused_monthly, half.pay_as_used_share) == (
        pytest.approx(146_000),
        pytest.approx(36_500),
        0.0,
    )
    # +30%: 130 and 260 GPU-months; on demand 30 and 160 GPUs: 146,000 + 0.5 x (30 + 160) x 2,190 = 354,050
    assert rows["Demand +30%"].monthly_spend == pytest.approx(354_050)
    assert rows["Demand as planned"].cost_per_task == pytest.approx(255_500 / 118_260_000)
    assert rows["Demand as planned"].pay_as_used_share == pytest.approx(50 / 150)  # 0.5 x 100 of 150 GPU-months
    # Market prices +20%: the on-demand rent 3.00 -> 3.60: 146,000 + 0.5 x 100 x 3.60 x 730 = 277,400
    assert rows["Market prices +20%"].monthly_spend == pytest.approx(277_400)
    assert [r.name for r in m.plan_cases][5:] == [
        "Path: low",
        "Path: high",
        "Worst 10% of paths (cost per task)",
    ]  # the explicit paths, then the tail


def planws_month() -> float:
    from tests import planws

    return planws.TASKS_PER_GPU_MONTH


def test_plan_risks_are_priced_from_the_plan(small_plan):
    m, _, _, _ = small_plan
    risks = {r.risk: r for r in m.risks}
    # Delivery: a month without the commitment buys its 100 GPUs on demand on both paths: 0.5 x (219,000 + 438,000)
    # - (146,000 + 0.5 x 219,000) = 328,500 - 255,500 = 73,000 a month late.
    late = risks["Vendor commit delivers later than 2026-12-01"]
    assert late.impact == pytest.approx(73_000) and late.likelihood == "medium"  # no late-delivery credit
    # Failure: the prepayment 0.25 x 1,752,000 = 438,000 plus 12 months x 73,000 = 876,000 on demand.
    fails = risks["Vendor commit fails during its term"]
    assert fails.impact == pytest.approx(438_000 + 876_000)
    assert (
        "438 k USD prepaid lost" in fails.impact_basis
        and "Vendor ondemand on demand already in the plan" in fails.mitigation
    )
    # Concentration: every committed dollar with one vendor.
    conc = risks["Concentration of committed spend"]
    assert (
        conc.impact == pytest.approx(1_752_000)
        and conc.likelihood == "high"
        and "Vendor commit 100%" in conc.impact_basis
    )
    # Availability one point lower: 100 committed GPUs serve 99 GPU-months; the shortfall on demand at 3.00 / 0.99:
    # low path 1 x 2,190 / 0.99, high path 101 x 2,190 / 0.99 - 100 x 2,190; half each, 12 months.
    extra = 0.5 * (2190 / 0.99) + 0.5 * (101 * 2190 / 0.99 - 100 * 2190)
    assert risks["Operators deliver less availability than expected"].impact == pytest.approx(12 * extra)
    # Price: 20% of the on-demand rent, 0.5 x 100 GPUs x 730 h x 3.00 x 12 = 1,314,000 -> 262,800.
    assert risks["Market prices rise 20% (on demand, or following the index)"].impact == pytest.approx(262_800)
    # Demand 30% lower: 21,900 idle a month x 12 = 262,800; at -50%: 36,500 x 12 = 438,000.
    demand = risks["Demand 30% below the plan"]
    assert demand.impact == pytest.approx(262_800) and "438 k USD at −50%" in demand.impact_basis


def _register(plan, ev, hedge_asked):
    """The plan's risk register in words, from its figures (procure.analysis.memo.plan_risks)."""
    from procure.analysis.commitment import line_commitments
    from procure.analysis.memo import plan_risks
    from procure.render.board_risks import plan_risks as _plan_risks

    figures = plan_risks(plan, ev, line_commitments(plan, {o.id: o for o in ev.offers}))
    return _plan_risks(plan, ev, figures, hedge_asked)


def test_plan_risks_sum_the_smaller_commitments(small_plan, monkeypatch):
    """Past VENDOR_ROWS committed vendors, the register keeps one delivery row (their impacts summed) and one
    failure row (the costliest) for the rest: with none named, the single commitment's figures above."""
    from procure.analysis import memo

    _, plan, ev, _ = small_plan
    monkeypatch.setattr(memo, "VENDOR_ROWS", 0)
    risks = {r.risk: r for r in _register(plan, ev, hedge_asked=True)}
    assert "Vendor commit fails during its term" not in risks
    assert risks["1 smaller commitment delivered late"].impact == pytest.approx(73_000)
    fails = risks["The smallest committed vendor fails"]
    assert fails.impact == pytest.approx(438_000 + 876_000) and fails.impact_basis.startswith(
        "the costliest: Vendor commit, 438 k USD prepaid lost"
    )


def test_a_vendor_the_rest_of_the_plan_covers_costs_no_more_than_its_prepayment(small_plan):
    """An over-committed plan serves the demand without one vendor: dispatching without it spends less (its
    commitment is not paid), but a failure is no saving: the impact is the prepayment lost, 438,000, and a
    late delivery costs nothing."""
    _, plan, ev, _ = small_plan
    covered = plan.model_copy(deep=True)
    vendor = covered.stress.vendors[0]
    vendor.extra_spend, vendor.extra_first_month, vendor.unserved_share = -5_000_000.0, -100_000.0, 0.0
    risks = {r.risk: r for r in _register(covered, ev, hedge_asked=True)}
    late = risks["Vendor commit delivers later than 2026-12-01"]
    assert late.impact == 0 and late.impact_basis.startswith("none: the rest of the plan")
    fails = risks["Vendor commit fails during its term"]
    assert (
        fails.impact == pytest.approx(438_000)
        and "the rest of the plan's capacity serves the demand" in fails.impact_basis
    )


def test_the_comparison_summary_states_the_plan_the_memo_asks_for(small_plan):
    from procure.render.board_plan import plan_summary

    memo, plan, _, _ = small_plan
    sentence = plan_summary(plan)
    assert sentence.startswith(
        "The procurement plan over 12 months of uncertain demand: 100 B200 GPUs with Vendor commit for months 1–12, "
        "on-demand capacity for peaks. "
    )
    assert sentence.endswith(memo.plan.statement)  # the memo's own words for the saving


def test_plan_hedge_asks_about_the_pay_as_used_hours(small_plan):
    """Floating: 0.5 x 100 GPUs x 730 h = 36,500 GPU-hours a month, all on demand. The default ladder over 12 months:
    months 1-3 75% of 109,500 = 82,125 h -> 112.5 -> 113 contracts; 4-6 50% = 54,750 -> 75; 7-12 25% of 219,000 =
    54,750 -> 75: 263 contracts, 191,990 GPU-hours. +20%: the rent rises 0.2 x 438,000 x 3 = 262,800; the hedge
    pays 191,990 x 4.00 (the latest index) x 0.2 = 153,592."""
    m, _, _, _ = small_plan
    assert m.hedge.ask
    assert (
        m.hedge.question
        == "Approve buying 263 GPU-hour price contracts (192 k GPU-hours) for months 1–12, against the plan's "
        "GPU-hours at market prices?"
    )
    assert "438 k GPU-hours expected over months 1–12" in m.hedge.detail
    assert "that cost rises 263 k USD; the contracts pay 154 k USD of it" in m.hedge.detail


def test_a_plan_of_fixed_commitments_has_nothing_to_hedge(small_plan):
    from procure.analysis.memo import plan_hedge_sums
    from procure.render.board_risks import plan_hedge_ask as _plan_hedge

    _, plan, ev, _ = small_plan
    fixed = plan.model_copy(deep=True)
    fixed.stress.pay_as_used_gpu_hours = [0.0] * 12
    fixed.stress.pay_as_used_gpu_hour_rent = [0.0] * 12
    ask = _plan_hedge(fixed, plan_hedge_sums(fixed, ev, None), None, "")
    assert not ask.ask and ask.question == "No hedge is needed."
    assert ask.detail.startswith("Every commitment in the plan is at a fixed price")


def test_a_claimed_throughput_in_the_plan_is_priced(tmp_path):
    """ "commit" states its throughput as a vendor claim whose low end is 0.8 (0.8 / 1.0 / 1.2: the point reads
    its mean, 1). The plan delivers at the capacity whose cost per task is the expected one, 1 / E[1/X] of the
    point: for this triangular E[1/X] = 25 x (0.2 - 0.8 ln 1.25) + 25 x (1.2 ln 1.2 - 0.2) = 1.00679, so the low path's
    100 GPU-months need 100 x 1.00679 -> 101 committed GPUs, which deliver c = 101 / 1.00679 = 100.32 GPU-months. At
    the claim's low end they deliver 0.8 c: the low path buys 100 - 0.8 c on demand and the high path 0.2 c more than
    planned, on average (100 - 0.6 c) / 2 = 19.90 GPU-months a month at 3.00 x 730, 12 months: 523,100 (the draws'
    own E[1/X] moves it by about 0.1%)."""
    from procure.analysis.evaluate import evaluate
    from procure.analysis.plan import make_plan
    from tests import planws

    cfg = planws.config(uncertainty={"throughput": {"vendor_claim": {"triangular": [0.8, 1.0, 1.2]}}})
    offers = [
        planws.offer("commit", gpus=0, max_gpus=1000, gpu_hour=2.0, performance={"points_source": "vendor_claim"}),
        planws.offer("ondemand", gpus=0, burst={"gpu_hour": 3.0, "max_gpus": 1000}),
    ]
    ws = load_workspace(planws.write(tmp_path, cfg, offers))
    plan = make_plan(ws, AS_OF)
    inverse = 25 * (0.2 - 0.8 * math.log(1.25)) + 25 * (1.2 * math.log(1.2) - 0.2)
    assert [(x.offer, x.gpus) for x in plan.plan if x.role == "commit"] == [("commit", math.ceil(100 * inverse))]
    row = next(r for r in _register(plan, evaluate(ws, AS_OF), False) if r.risk.startswith("Throughput below"))
    assert row.risk == "Throughput below the vendor's claim (Vendor commit)"
    c = 101 / inverse
    assert row.impact == pytest.approx(12 * 3.0 * 730 * (100 - 0.6 * c) / 2, rel=2e-3)


def test_an_index_linked_commitment_floats_in_the_price_risk_and_the_hedge(tmp_path):
    """ "commit" is index-linked at index - 2.00 = 2.00 today (index 4.00): the same plan, 100 GPUs committed, but its
    73,000 GPU-hours a month float too. Price risk: 20% of (100 x 730 x 2.00 x 12 = 1,752,000 committed + 1,314,000 on
    demand) = 613,200. Hedge: 73,000 + 36,500 = 109,500 GPU-hours a month; months 1-3 75% of 328,500 = 337.5 -> 338
    contracts, 4-6 50% -> 225, 7-12 25% of 657,000 -> 225: 788 contracts, 575,240 GPU-hours."""
    from procure.analysis.evaluate import evaluate
    from procure.analysis.hedging import plan_hedge
    from procure.analysis.memo import plan_hedge_sums
    from procure.analysis.plan import make_plan
    from procure.render.board_risks import plan_hedge_ask as _plan_hedge
    from tests import planws

    offers = [
        planws.offer("commit", gpus=0, max_gpus=1000, pricing={"index_linked": {"spread": -2.0}}),
        planws.offer("ondemand", gpus=0, burst={"gpu_hour": 3.0, "max_gpus": 1000}),
    ]
    root = planws.write(tmp_path, planws.config(), offers)
    (root / "market").mkdir()
    (root / "market" / "index.csv").write_text("date,price\n2026-10-05,4.20\n2026-11-02,4.00\n")
    ws = load_workspace(root)
    ev = evaluate(ws, AS_OF)
    plan = make_plan(ws, AS_OF)
    assert [(x.offer, x.gpus, x.price) for x in plan.plan if x.role == "commit"] == [
        ("commit", 100, pytest.approx(2.0))
    ]
    price = next(r for r in _register(plan, ev, True) if r.risk.startswith("Market prices"))
    assert price.impact == pytest.approx(613_200)
    hedge = plan_hedge(ev, ws.config.hedge, ws.index, plan)
    ask = _plan_hedge(plan, plan_hedge_sums(plan, ev, hedge), hedge, "")
    assert (
        ask.question
        == "Approve buying 788 GPU-hour price contracts (575 k GPU-hours) for months 1–12, against the plan's "
        "GPU-hours at market prices?"
    )
    assert ask.detail.startswith(
        "What moves with the market is the commitments whose price follows the market index (Vendor commit) and the "
        "capacity bought on demand"
    )


def test_losing_the_only_source_is_not_priced_as_a_saving(tmp_path):
    """A plan of one offer (its commitment and its own burst): without it nothing serves the demand, so spend
    falls; the memo prices the demand left unserved instead of printing a negative impact."""
    from procure.analysis.evaluate import evaluate
    from procure.analysis.plan import make_plan
    from tests import planws

    ws = load_workspace(
        planws.write(
            tmp_path,
            planws.config(),
            [planws.offer("solo", gpus=0, max_gpus=1000, gpu_hour=2.0, burst={"gpu_hour": 3.0, "max_gpus": 1000})],
        )
    )
    plan = make_plan(ws, AS_OF)
    assert plan.stress.vendors[0].unserved_share == pytest.approx(1.0)
    risks = {r.risk: r for r in _register(plan, evaluate(ws, AS_OF), False)}
    fails = risks["Vendor solo fails during its term"]
    # Not a saving and not "not priced": no extra cash (spend falls, counted as 0), and apart from the cash, the
    # shortfall
    # of a month of the demand it alone serves, at the plan's unserved price until a fallback delivers. Demand as
    # planned:
    # 78,840,000 x (0.5 x 1 + 0.5 x 2) = 118,260,000 tasks a month; the default unserved price is on-demand capacity
    # at the market price (no index here: the dearest on-demand list price, its burst at 3.00) x the premium 2 over
    # 1,080 tasks a GPU-hour at the policy's 0.99 availability: 6 / 1,069.2 = 0.0056117; 118,260,000 x that =
    # 663,636.
    assert fails.impact == 0 and fails.shortfall == pytest.approx(118_260_000 * 3.0 * 2 / (1080 * 0.99))
    assert (
        fails.impact_basis
        == "no extra cash; 1 month until a fallback delivers: 100% of demand (118 M tasks) unserved at 5.61 USD per "
        "1,000 (the shortfall)"
    )
    assert "qualify a fallback offer" in fails.mitigation
    late = next(r for name, r in risks.items() if name.startswith("Vendor solo"))
    # late: the same month of demand, from the plan's stress of its first month (flat demand), apart from the cash;
    # its words state the tasks whose price is the shortfall: 118 M x 5.61 per 1,000 = 664 k
    assert late.impact == 0 and late.shortfall == pytest.approx(fails.shortfall)
    assert late.impact_basis == (
        "per month late: no extra cash; 118 M tasks unserved per month late at 5.61 USD per 1,000 (the shortfall)"
    )


def test_money_reads_in_one_unit_from_a_thousand_up():
    # A column of the memo holds "324 k" and "7,033" side by side otherwise: from 1,000 up a board
    # reads k or M; below 1,000 the full figure; never "1,000 k" where the next unit is meant.
    from procure.render.formats import cash

    assert [cash(v) for v in (466, 7033, 9949, 9951, 324_000)] == ["466", "7.0 k", "9.9 k", "10 k", "324 k"]
    assert cash(999_999, "USD") == "1.00 M USD" and cash(999.6) == "1.0 k"
    assert cash(-7033, "USD") == "-7.0 k USD" and cash(12_300_000) == "12.3 M"


def _text(html: str) -> str:
    import re

    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.replace("<wbr>", "")))


def test_each_reports_served_words_follow_its_tables(extras):
    """The plan chapter and the memo say "served" only as the figures allow: the chapter's sentence is the plan's
    `served`, which says "Every scenario is served in full" only when every scenario row of its table shows less
    than 0.05% unserved, and gives the share otherwise; the table carries the shares the sentence reads."""
    from procure.render.documents import render_html

    found, ev = extras
    plan = found.plan
    html = render_html(ev, "comparison", extras=found)
    start = html.index('id="plan"')
    chapter = _text(html[start : html.index("</section>", start)])
    rows = {r.name: r.unserved_share for r in plan.scenarios}
    in_full = max(rows.values()) < 0.0005
    assert ("Every scenario is served in full" in plan.served) == in_full
    assert plan.served in chapter
    if not in_full:
        assert f"{rows['worst 10%']:.1%}" in plan.served
    for name, share in rows.items():
        assert f"{name} " in chapter and f"{share * 100:.1f}%" in chapter
    memo = _text(render_html(ev, "board", extras=found))
    ask = memo[memo.index("What we ask") : memo.index("What it costs")]
    # the ask names what is signed now and says what we hold and what waits
    assert "We hold 256 GPUs with Keel Systems until 30 April 2027" in ask and "Not asked for today" in ask


# Impacts the memo gives no figure for must say why ("not priced: ..."), or that there is nothing at stake.
WHY_NONE = ("not priced", "none", "nothing", "no commitment")


def _unexplained(risks) -> list[str]:
    return [
        f"{r.risk}: {r.impact_basis}" for r in risks if r.impact is None and not r.impact_basis.startswith(WHY_NONE)
    ]


def test_every_risk_has_an_impact_or_says_why_none_can_be_given(memo, single_memo):
    for m, _ in (memo, single_memo):
        assert m.risks and not _unexplained(m.risks)
    # the example's largest risk, demand no other source in the plan serves, has its figure: cash, or the shortfall
    # priced
    # apart from the cash (Petrel failing leaves its demand unserved for a month: no extra cash, a priced shortfall)
    plan_memo, _ = memo
    stranded = [r for r in plan_memo.risks if "unserved at" in r.impact_basis]
    assert stranded and all((r.impact or 0) + (r.shortfall or 0) > 0 for r in stranded)


@pytest.mark.slow
def test_every_risk_of_the_real_offers_memo_has_an_impact_or_says_why(data_dir):
    ws = load_workspace(data_dir / "real_offers")
    ev, inputs = evaluate_with_inputs(ws, None, None, ws.config.horizon.months if ws.config.horizon else None)
    memo = _words(ev, gather_extras(ws, ev, inputs, board=True).memo)
    assert memo.risks and not _unexplained(memo.risks)
    # one commitment figure: the ask's vendor entry, its options row and the term sheet
    ask = memo.ask[0]
    row = next(o for o in memo.options if o.vendor == ask.vendor)
    assert ask.commitment == row.commitment == memo.terms.total_commitment


def test_a_memo_led_by_an_on_demand_offer_asks_for_no_commitment(tmp_path):
    """A user's own workspace (init, three of the example's offers) whose cheapest offer is on demand only
    (Petrel: burst at 6.00 a GPU-hour, no committed price): the memo is written, its headline commits to
    nothing, its price is the on-demand one and a one-month horizon is one month."""
    from typer.testing import CliRunner

    from procure.cli import app

    runner = CliRunner()
    ws = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(ws)]).exit_code == 0
    example = Path(__file__).parent.parent / "offers"
    for name in ("keel-b200-mc", "petrel-b200-ondemand", "halvard-b200-ms"):
        (ws / "offers" / f"{name}.yaml").write_text((example / f"{name}.yaml").read_text())
    ev, inputs = evaluate_with_inputs(load_workspace(ws), date(2026, 12, 3))
    memo = _words(ev, gather_extras(load_workspace(ws), ev, inputs, board=True).memo)
    assert ev.ranked[0].id == "petrel-b200-ondemand"
    assert (
        memo.headline.startswith("Approve using ") and "on demand, billed as used (nothing committed)" in memo.headline
    )
    assert "commitment of" not in memo.headline
    assert "6.00 USD per GPU-hour on demand, billed as used" == memo.terms.price


def test_the_position_the_comparison_shows_is_figures_put_in_words_by_render(extras):
    """The example's market: Rival A's own cost 5.20 per 1,000 tasks on 2026-11-29 (procure.yaml), Rival B's public
    price 11.00 (a price, so never compared with our cost); our recorded cost 6.80. Signing Keel at its cost per task
    puts us ours / 5.20 - 1 above Rival A."""
    from procure.render.documents import _signing_words

    found, ev = extras
    view = found.standing
    assert [(n, c, is_price) for n, c, _, is_price in view.competitors] == [
        ("Rival A (analyst estimate)", pytest.approx(0.0052), False),
        ("Rival B (public pricing)", pytest.approx(0.011), True),
    ]
    s = view.signing
    keel = ev.offer("keel-b200-mc").metrics["cost_per_task"]
    assert (s.vendor, s.competitor, s.competitor_cost, s.today) == (
        "Keel Systems",
        "Rival A (analyst estimate)",
        pytest.approx(0.0052),
        pytest.approx(0.0068),
    )
    assert s.gap == pytest.approx(keel / 0.0052 - 1)
    assert _signing_words(view, "USD") == (
        f"Signing Keel Systems at {keel * 1000:.2f} USD per 1,000 tasks puts us {keel / 0.0052 - 1:.0%} above the "
        "cheapest competitor, Rival A (analyst estimate), at 5.20; today we pay 6.80."
    )


def _verdicts_memo(root: Path, stated: bool):
    """The memo of tests/data/verdicts, whose managed cluster has no rating evidence: with its unrated haircut as
    stated (0.99) or not stated (the default; the availability minimum lowered so that it still ranks)."""
    import shutil

    from procure.render.board import board_memo

    ws_dir = root / "verdicts"
    shutil.copytree(Path(__file__).parent / "data" / "verdicts", ws_dir)
    (ws_dir / "offers" / "api-history.yaml").unlink()  # the cheaper API away: the unrated cluster leads, in the memo
    if not stated:
        text = (ws_dir / "procure.yaml").read_text()
        text = text.replace("    unrated: 0.99\n", "").replace("  min_availability: 0.97 ", "  min_availability: 0.95 ")
        (ws_dir / "procure.yaml").write_text(text)
    ws = load_workspace(ws_dir)
    ev, inputs = evaluate_with_inputs(ws, date(2026, 4, 1), None, ws.config.horizon.months)
    return board_memo(ev, gather_extras(ws, ev, inputs, board=True).memo), ev


def test_the_comparison_report_names_the_offers_costed_at_the_unrated_default(tmp_path):
    from procure.render.documents import render_html

    _, ev = _verdicts_memo(tmp_path, stated=False)
    html = render_html(ev, "comparison")
    start = html.index('id="operators"')
    chapter = _text(html[start : html.index("</section>", start)])
    # SLA 99.50% x the Participation Ribbon's 0.965
    assert "Costed at the unrated default, availability unverified: Unrated Cloud (SLA 99.50% × 0.965)." in chapter
    assert "costed as the lowest published tier short of Underperform" in chapter


def test_the_memo_says_when_an_operator_is_costed_unrated(tmp_path):
    for stated, words in (
        (False, "operator unrated: its availability is counted as for an operator with no medal until it is rated"),
        (True, "operator unrated: its availability is discounted by our stated allowance until it is rated"),
    ):
        memo, ev = _verdicts_memo(tmp_path / str(stated), stated)
        cluster = ev.offer("cluster-unrated")
        assert cluster.rating_state == "unrated" and cluster.rank == 1
        # not stated: the Participation Ribbon's 0.965; stated: 0.99
        assert cluster.reliability_factor == (0.99 if stated else 0.965)
        row = next(o for o in memo.options if o.offer == "cluster-unrated")
        assert words in row.cons and "assumptions" not in row.cons
        # a rated offer's row says nothing of it
        assert all("unrated" not in o.cons for o in memo.options if o.offer != "cluster-unrated")


def test_a_short_index_history_gives_no_band_in_the_memo(tmp_path):
    """The example with its index cut to the last seven months (six monthly changes): the later block's price is
    given without a band, and the plan's note says why."""
    import shutil

    from procure.render.board import board_memo

    root = tmp_path / "example"
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns(".*", "tests", "benchmarks", "procure", "docs"))
    lines = (root / "market" / "index.csv").read_text().splitlines(keepends=True)
    kept = [line for line in lines if line.startswith(("#", "date")) or line >= "2026-05-01"]
    (root / "market" / "index.csv").write_text("".join(kept))
    ws = load_workspace(root)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    found = gather_extras(ws, ev, inputs, board=True)
    plan = found.plan
    # month ends May to November 2026: seven levels, six changes, under the twelve a band needs
    assert plan.index_monthly_volatility is None and plan.index_monthly_changes == 6
    later = [x for x in plan.plan if x.decision == "later"]
    assert later and all(x.price_p10 is None and x.price_p90 is None for x in later)
    memo = board_memo(ev, found.memo)
    line = next(h for h in memo.holding if h.startswith("Not asked for today"))
    assert "too little price history for a band" in line and "chances between" not in line
    assert any("too little price history for a band (6 monthly index changes, 12 needed)" in n for n in plan.notes)


@pytest.mark.slow
@pytest.mark.parametrize("kept", [1, 2, 5])
def test_the_memo_words_rejected_offers_for_a_board_whatever_their_number(tmp_path, kept):
    """The example's five offers that fail a gate, one, two or all five of them beside the acceptable ones: the memo
    gives each its reason in the board's words (named when few, counted when more), never the tool's: no setting,
    no draws or haircut, no backticks, no command."""
    import re
    import shutil

    from clihelp import html_words, run

    root = Path(__file__).parent.parent
    ws = tmp_path / "ws"
    ws.mkdir()
    for part in ("offers", "grades", "performance", "market", "actuals", "procure.yaml"):
        copy = shutil.copytree if (root / part).is_dir() else shutil.copy
        copy(root / part, ws / part)
    rejected = ["brightwater-b200-bm", "meridian-b200-mc", "own-b200-colo", "quarry-b200-mc", "saltmarsh-b200-ms"]
    for offer_id in rejected[kept:]:
        next((ws / "offers").glob(f"{offer_id}.yaml")).unlink()
    out = tmp_path / "memo.html"
    result = run("report", "--board", "-w", ws, "--as-of", "2026-12-07", "--format", "html", "--out", out)
    assert result.exit_code == 0, result.output
    text = html_words(out.read_text(encoding="utf-8"))
    sentence = text[text.index("Not acceptable at any price") :].split(" reasons.")[0]
    if kept <= 2:
        # named with the first gate each fails: Brightwater's availability (unrated), Meridian's availability
        assert "Brightwater" in sentence and "availability below our minimum" in sentence
    else:
        assert "5 offers" in sentence and "availability below our minimum (4)" in sentence
        assert "too slow for each user (1)" in sentence
    for word in ("policy.", "gate_confidence", "draws", "haircut", "`", "procure ", "x ours", "unrated:"):
        assert word not in sentence, word
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", sentence), sentence  # no configuration key


@pytest.mark.slow
def test_a_memo_with_no_acceptable_offer_says_why_and_what_to_do_next(tmp_path):
    """Every offer of the example fails once the availability minimum is 99.99%: the memo recommends none, says why
    in the board's words (counted by reason) and names the next step."""
    import shutil

    from clihelp import html_words, run

    root = Path(__file__).parent.parent
    ws = tmp_path / "ws"
    ws.mkdir()
    for part in ("offers", "grades", "performance", "market", "actuals", "procure.yaml"):
        (shutil.copytree if (root / part).is_dir() else shutil.copy)(root / part, ws / part)
    config = ws / "procure.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("min_availability: 0.98 ", "min_availability: 0.9999 ")
    )
    out = tmp_path / "memo.html"
    result = run("report", "--board", "-w", ws, "--as-of", "2026-12-07", "--format", "html", "--out", out)
    assert result.exit_code == 0, result.output
    text = html_words(out.read_text(encoding="utf-8"))
    assert "No offer passes every requirement, so none can be recommended." in text
    assert "Not acceptable at any price: 12 offers, availability below our minimum" in text
    assert "Next: ask the vendors closest to our requirements for what they miss" in text
