"""The board paper's decision memo, computed from the example workspace (2026-11-29)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from procure.evaluate import evaluate_with_inputs
from procure.report_data import gather_extras
from procure.workspace import load_workspace

ROOT = Path(__file__).parent.parent
AS_OF = date(2026, 11, 29)


@pytest.fixture(scope="module")
def extras():
    ws = load_workspace(ROOT)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    return gather_extras(ws, ev, inputs, board=True), ev


@pytest.fixture(scope="module")
def memo(extras):
    found, ev = extras
    return found.memo, ev


def test_headline_without_a_plan_asks_for_the_single_offer(extras):
    """Without `demand:` the memo asks for the recommended offer's commitment."""
    from procure.board import board_memo

    found, ev = extras
    m = board_memo(ev, found.cases, found.position, found.hedge, found.hedge_missing, None)
    # Keel: 256 GPUs for 12 months; the commitment in millions to one decimal; 0.0064274 per task -> 6.43 per 1,000
    keel = ev.offer("keel-b200-mc").metrics
    assert m.headline == f"Approve a 12-month commitment of 256 B200 GPUs with Keel Systems, {keel['total_commitment'] / 1e6:.1f} M USD, at {keel['cost_per_task'] * 1000:.2f} USD per 1,000 tasks."
    assert m.terms.nodes == 32 and m.terms.delivery == date(2026, 12, 20)
    assert m.plan is None


def test_headline_asks_for_the_plan_when_there_is_one(extras):
    """The example plans a portfolio: Petrel Cloud 224 GPUs at 5.10 for months 1-12, Keel Systems 256 at 4.85
    for months 13-24, pay-as-used capacity above them."""
    found, _ = extras
    m, plan = found.memo, found.plan
    commits = sorted((x for x in plan.plan if x.role == "commit"), key=lambda x: x.start_month)
    assert [(x.vendor, x.gpus, x.price, x.start_month, x.end_month) for x in commits] == [("Petrel Cloud", 224, 5.10, 1, 12), ("Keel Systems", 256, 4.85, 13, 24)]
    # 224 x 5.10 x 730 h x 12 = 10,007,424; 256 x 4.85 x 730 x 12 = 10,876,416; together 20,883,840 -> 20.9 M USD
    lines = m.plan.lines
    assert [(x.vendor, x.role, x.gpus, x.nodes, x.months) for x in lines[:2]] == [("Petrel Cloud", "commit", 224, 28, "1–12"), ("Keel Systems", "commit", 256, 32, "13–24")]
    assert lines[0].total_commitment == pytest.approx(10_007_424) and lines[1].total_commitment == pytest.approx(10_876_416)
    assert all(x.role == "pay as used" and x.total_commitment is None for x in lines[2:])
    assert m.plan.total_commitment == pytest.approx(20_883_840)
    # The saving against the best single offer: (single - plan) / single, e.g. (10.01 - 7.24) / 10.01 = 27.6%
    share = (plan.single_best.expected_cost_per_task - plan.expected_cost_per_task) / plan.single_best.expected_cost_per_task
    assert m.plan.saving_share == pytest.approx(share) and share > 0
    expected = f"{plan.expected_cost_per_task * 1000:.2f}"
    assert m.headline == (
        "Approve a portfolio: 224 B200 GPUs with Petrel Cloud for months 1–12 and 256 with Keel Systems for months 13–24, "
        f"pay-as-used capacity for peaks; 20.9 M USD committed, {expected} USD per 1,000 tasks expected, {share:.1%} below the best single offer."
    )
    assert m.plan.statement.endswith(f"{share:.1%} below the best single offer (Petrel Cloud alone, {plan.single_best.expected_cost_per_task * 1000:.2f}).")


def test_a_single_offer_plan_says_why_it_is_the_plan(extras):
    """When the plan's lines are all one offer (here: the best single offer's own plan), the memo says so and why."""
    from procure.board import plan_ask

    found, _ = extras
    single = found.plan.model_copy(deep=True)
    single.plan = single.single_best.plan
    single.expected_cost_per_task = single.single_best.expected_cost_per_task
    single.saving_share = 0.0
    headline, ask = plan_ask(single)
    # Petrel: 224 x 5.10 x 730 x 12 = 10,007,424 and 680 x 5.10 x 730 x 12 = 30,379,680; 40,387,104 -> 40.4 M USD
    assert ask.total_commitment == pytest.approx(40_387_104)
    assert headline.startswith("Approve the plan, a single offer: 224 B200 GPUs with Petrel Cloud for months 1–12 and 680 with Petrel Cloud for months 13–24")
    assert "40.4 M USD committed" in headline
    assert ask.statement == "A single offer is the plan: no mix of commitments and pay-as-used capacity costs less per task over the 500 demand scenarios than Petrel Cloud alone."


def test_saving_against_today_uses_our_recorded_cost(memo):
    m, _ = memo
    # market.own: 0.0068 on 2026-11-29; (0.0068 - 0.006427365) x 150,000,000 = 55,895 a month, 670,743 a year
    assert m.today.current_per_task == 0.0068
    assert m.today.monthly_saving == pytest.approx(55_895.27, abs=1)
    assert m.today.annual_saving == pytest.approx(12 * 55_895.27, abs=12)


def test_options_carry_basis_evidence_tier_and_a_near_tie(memo):
    m, ev = memo
    assert [o.offer for o in m.options] == [o.id for o in ev.ranked]
    corvid = next(o for o in m.options if o.offer == "corvid-b200-idx")
    assert (corvid.price_basis, corvid.evidence) == ("index-linked", "vendor claim")
    today = min(ev.ranked, key=lambda o: o.metrics["cost_per_task"])
    horizon = min(ev.ranked, key=lambda o: o.metrics["horizon_cost_per_task"])
    assert "lowest over 36 months" in next(o for o in m.options if o.offer == horizon.id).pros
    assert "lowest cost today" in next(o for o in m.options if o.offer == today.id).pros
    # A near-tie is called exactly when today's cheapest and the horizon's cheapest differ.
    if today.id == horizon.id:
        assert m.near_tie is None
    else:
        assert m.near_tie.startswith(f"A near-tie: {today.vendor} is cheapest today and {horizon.vendor} over 36 months")


def test_near_tie_names_both_offers_and_what_decides(memo):
    """Rank by the horizon with Keel made dearer over the horizon: today's and the horizon's cheapest differ."""
    from procure.board import _near_tie

    m, ev = memo
    changed = ev.model_copy(deep=True)
    keel = changed.offer("keel-b200-mc")
    keel.metrics["horizon_cost_per_task"] = 1.0  # far above every other offer over the horizon
    text = _near_tie(changed)
    horizon = min((o for o in changed.ranked), key=lambda o: o.metrics["horizon_cost_per_task"])
    assert text.startswith(f"A near-tie: Keel Systems is cheapest today and {horizon.vendor} over 36 months")
    assert "fixed price, 12-month term" in text


def test_risk_register_prices_each_risk_and_names_an_owner(memo):
    m, _ = memo
    names = " ".join(r.risk for r in m.risks)
    for word in ("Delivery", "Vendor fails", "Concentration", "Operator", "prices rise", "Demand"):
        assert word in names
    assert all(r.owner and r.likelihood in ("low", "medium", "high") for r in m.risks)
    demand = next(r for r in m.risks if r.risk == "Demand falls 30%")
    row = next(r for r in m.scenarios if r.name == "Demand −30%")
    assert demand.impact == pytest.approx(row.unused_monthly * 12)  # idle commitment over the 12-month term


def test_hedge_is_a_yes_no_question(memo):
    """The question buys what the hedging plan's ladder buys, over the months it covers."""
    from procure.hedging import plan_for_workspace

    m, ev = memo
    plan = plan_for_workspace(load_workspace(ROOT), ev)
    bought = [r for r in plan.ladder if r.contracts]
    contracts = sum(r.contracts for r in bought)
    assert m.hedge.ask
    assert m.hedge.question == f"Approve buying {contracts:,} GPU-hour price contracts ({sum(r.hedged_gpu_hours for r in bought):,.0f} GPU-hours) for months {bought[0].first_month}–{bought[-1].last_month}?"


def test_cheapest_odds_name_every_likely_offer_and_add_to_100():
    from types import SimpleNamespace

    from procure.report_data import cheapest_odds

    def offer(vendor, p):
        return SimpleNamespace(vendor=vendor, uncertainty=SimpleNamespace(prob_cheapest=p))

    # 33.4 + 33.3 + 33.3 rounds each to 33 (99 in all): largest remainder gives 34/33/33.
    ev = SimpleNamespace(ranked=[offer("A", 0.334), offer("B", 0.333), offer("C", 0.333)])
    assert cheapest_odds(ev) == [("A", 34), ("B", 33), ("C", 33)]
    # Under 5% pooled: 0.80, 0.155 and 0.03 + 0.015 = 0.045 -> 80 + 15 + 4 = 99 before the last point goes to a half
    ev = SimpleNamespace(ranked=[offer("A", 0.80), offer("B", 0.155), offer("C", 0.03), offer("D", 0.015)])
    odds = cheapest_odds(ev)
    assert [n for n, _ in odds] == ["A", "B", "others"] and sum(p for _, p in odds) == 100
