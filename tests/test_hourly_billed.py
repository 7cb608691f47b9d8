"""An offer billed by the hour with `gpus` and a term (tests/data/real_offers: Nebius, 7.15 USD per GPU-hour, 32 GPUs,
12 months, `billed_per: hour`) is paid for the time it runs: the plan takes it pay-as-used, and so do the cash flow's
commitment and the single-offer recommendation. It binds nothing at signing (no prepayment, no fees), where
32 GPUs x 7.15 x 730 h x 12 months = 2,004,288 USD used to be shown as its commitment."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from procure.analysis.decision import decide
from procure.analysis.evaluate import evaluate
from procure.io.workspace import load_workspace

REAL = Path(__file__).parent / "data" / "real_offers"
AS_OF = date(2026, 12, 7)


@pytest.fixture(scope="module")
def horizon_ev():
    return evaluate(load_workspace(REAL), AS_OF, None, 24)


def test_an_hourly_billed_offer_commits_no_gpus(horizon_ev):
    nebius = horizon_ev.offer("nebius-b200")
    assert nebius.terms.pricing.billed_per == "hour" and nebius.gpus == 32 and nebius.term_months == 12
    assert nebius.cashflow.total_commitment == 0.0
    assert nebius.metrics["total_commitment"] == 0.0
    # what it costs is still counted: the billed GPUs' rent every month it runs
    month = nebius.cashflow.months[1]
    assert month.rent == pytest.approx(7.15 * month.gpus * 730)


def test_an_offer_billed_by_the_month_still_commits_its_gpus(horizon_ev):
    # the example's Keel (4.85, billed monthly, a +2% step from month 7): 256 GPUs x 730 h x (6 x 4.85 + 6 x 4.947),
    # its per-GPU-hour support fee of 0.03 on those hours, whatever the demand uses, and its 20,000 onboarding fee
    keel = evaluate(load_workspace(Path(__file__).parent.parent), AS_OF, None, 24).offer("keel-b200-mc")
    assert keel.terms.usage_billed is False
    gpus = keel.terms.gpus
    assert gpus == 256
    expected = gpus * 730 * (6 * 4.85 + 6 * 4.85 * 1.02 + 12 * 0.03) + 20_000
    assert keel.cashflow.total_commitment == pytest.approx(expected, rel=1e-9)


def test_the_single_offer_recommendation_takes_it_pay_as_used(horizon_ev):
    rec = decide(horizon_ev)
    line = next(x for x in rec.lines if x.offer == "nebius-b200")
    assert line.role == "pay_as_used"
    assert line.commitment is None and rec.total_commitment is None
    assert "on demand" in rec.headline and "committed" not in rec.headline


def test_the_memo_asks_for_it_on_demand():
    from procure.analysis.memo import memo_figures
    from procure.render.board import board_memo

    ev = evaluate(load_workspace(REAL), date(2026, 11, 29))
    headline = board_memo(ev, memo_figures(ev, [], None, None, "", None)).headline
    assert headline.startswith("Approve using 39 B200 GPUs with Nebius on demand, billed as used (nothing committed)")


def test_demand_below_its_gpus_leaves_nothing_idle():
    """At 10 M tasks a month Nebius needs fewer than its 32 GPUs: billed by the hour it bills only those it needs and
    is full; the same offer billed by the month pays for all 32, partly idle, and costs more a task."""
    ws = load_workspace(REAL)
    workload = ws.config.workload.model_copy(update={"tasks_per_month": 10_000_000})
    ws = replace(ws, config=ws.config.model_copy(update={"workload": workload}))
    hourly = evaluate(ws, AS_OF).offer("nebius-b200").metrics
    monthly_offers = [
        o.model_copy(update={"pricing": o.pricing.model_copy(update={"billed_per": "month"})})
        if o.id == "nebius-b200"
        else o
        for o in ws.offers
    ]
    monthly = evaluate(replace(ws, offers=monthly_offers), AS_OF).offer("nebius-b200").metrics
    needed = hourly["gpus_needed"]
    assert needed < 32 and monthly["gpus_needed"] == pytest.approx(needed)
    assert hourly["billed_gpus"] == pytest.approx(needed) and hourly["fill"] == pytest.approx(1.0)
    assert monthly["billed_gpus"] == 32 and monthly["fill"] == pytest.approx(needed / 32)
    assert monthly["cost_per_task"] > hourly["cost_per_task"]


def test_its_exit_is_to_stop_using_it():
    """Capacity billed for the hours it runs is left by not running it: the term sheet does not say the whole term is
    owed, as it does for GPUs billed every month of the term."""
    from procure.analysis.memo import memo_figures
    from procure.render.board import board_memo

    ev = evaluate(load_workspace(REAL), date(2026, 11, 29))
    terms = board_memo(ev, memo_figures(ev, [], None, None, "", None)).terms
    assert terms.offer == "nebius-b200"
    assert terms.exit_terms.startswith("billed for the hours used: nothing is owed for capacity not used")
    assert "no termination for convenience" not in terms.exit_terms
