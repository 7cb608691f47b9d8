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
def memo():
    ws = load_workspace(ROOT)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    return gather_extras(ws, ev, inputs, board=True).memo, ev


def test_headline_states_the_decision_requested(memo):
    m, ev = memo
    # Keel: 256 GPUs for 12 months; the commitment in millions to one decimal; 0.0064274 per task -> 6.43 per 1,000
    keel = ev.offer("keel-b200-mc").metrics
    assert m.headline == f"Approve a 12-month commitment of 256 B200 GPUs with Keel Systems, {keel['total_commitment'] / 1e6:.1f} M USD, at {keel['cost_per_task'] * 1000:.2f} USD per 1,000 tasks."
    assert m.terms.nodes == 32 and m.terms.delivery == date(2026, 12, 20)


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
