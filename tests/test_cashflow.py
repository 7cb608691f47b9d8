"""Cash flow over a horizon (procure/analysis/cashflow.py), every figure worked out by hand.

The fixture workspace tests/data/cashflow_basic keeps the numbers round:

- one engineer (the serving stack, the only staffed job) at 120,000 a year: 10,000 a month;
- software 0.05 per GPU-hour: 3,650 a month on 100 GPUs (73,000 GPU-hours), 1,825 on 50;
- 3,600 output tokens a task at 100 tok/s/GPU, success and utilization 100%: 100 tasks per GPU-hour
  times the expected availability. Every managed offer is unrated (reliability.unrated 0.98) with a
  100% SLA, so expected availability is 98%, two points below the SLA: 98 successful tasks per
  GPU-hour, 7,154,000 a month on 100 GPUs;
- the index level on or before 2026-11-29 is 5.00 (the 9.00 of 2026-12-31 is after the as-of date);
- cost of capital 12%: a month m is discounted by 1.12 ** (m / 12), month 0 not at all;
- horizon.months 30, renewal at the index, claims succeed half the time, no expected delay.
"""

from __future__ import annotations

import math
from datetime import date
from functools import partial
from pathlib import Path

import pytest

from procure.analysis.cashflow import (
    delivery_month,
    escalation,
    expected_credit_share,
    renewal_rent,
    term_average_rent,
)
from procure.analysis.evaluate import evaluate
from procure.io.workspace import load_workspace

AS_OF = date(2026, 11, 29)
RATE = 0.12
MONTH_COLUMNS = (
    "month",
    "phase",
    "gpus",
    "prepayment",
    "rent",
    "fees",
    "staff",
    "software",
    "power_colo",
    "capital",
    "credits",
    "exit",
    "total",
    "successful_tasks",
)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


def horizon_eval(root: Path, months: int = 30, rank_by_horizon: bool = False):
    return evaluate(load_workspace(root), AS_OF, None, months, rank_by_horizon)


def plan_of(root: Path, offer_id: str, months: int = 30):
    return horizon_eval(root, months).offer(offer_id).cashflow


def pv(amount: float, month: int) -> float:
    """Present value at the 12% cost of capital, discounted monthly at (1 + r) ** (m / 12)."""
    return amount / (1 + RATE) ** (month / 12)


def rows(plan) -> list[tuple]:
    return [tuple(getattr(f, c) for c in MONTH_COLUMNS) for f in plan.months]


def assert_rows(plan, expected: list[tuple]) -> None:
    got = rows(plan)
    assert len(got) == len(expected)
    for found, wanted in zip(got, expected):
        assert found[:2] == wanted[:2], (found, wanted)
        assert found[2:] == pytest.approx(wanted[2:], abs=1e-6), f"month {wanted[0]}: {found} != {wanted}"


@pytest.fixture
def cf(workspace_copy) -> Path:
    return workspace_copy("cashflow_basic")


# --- the building blocks -------------------------------------------------------------------------


def test_escalation_rises_each_contract_year_from_month_13():
    assert escalation(0.03, None, 1) == 1.0
    assert escalation(0.03, None, 12) == 1.0
    assert escalation(0.03, None, 13) == pytest.approx(1.03)
    assert escalation(0.03, None, 24) == pytest.approx(1.03)
    assert escalation(0.03, None, 25) == pytest.approx(1.03 * 1.03)
    assert escalation(None, None, 40) == 1.0
    # a schedule: +3% from month 13, +4% more from month 25 (compounded); no yearly repeat
    assert escalation(None, [(13, 0.03), (25, 0.04)], 12) == 1.0
    assert escalation(None, [(13, 0.03), (25, 0.04)], 13) == pytest.approx(1.03)
    assert escalation(None, [(13, 0.03), (25, 0.04)], 37) == pytest.approx(1.03 * 1.04)


def test_delivery_month_counts_calendar_months_from_the_as_of_month():
    # Month 1 is the as-of month (November 2026 for an as-of date of 2026-11-29), month 2 December, and so on.
    # no promised date: served from month 1
    assert delivery_month(None, AS_OF, 0) == 1
    # promised before or on the as-of date, or later within November: month 1
    assert delivery_month(date(2026, 11, 1), AS_OF, 0) == 1
    assert delivery_month(date(2026, 11, 30), AS_OF, 0) == 1
    # 20 December is in month 2 (December), however few days after the as-of date
    assert delivery_month(date(2026, 12, 1), AS_OF, 0) == 2
    assert delivery_month(date(2026, 12, 20), AS_OF, 0) == 2
    # 20 January 2027: month 3
    assert delivery_month(date(2027, 1, 20), AS_OF, 0) == 3
    # six weeks late: 3 March 2027, month 5
    assert delivery_month(date(2027, 1, 20), AS_OF, 6) == 5


# --- a two-year offer by hand --------------------------------------------------------------------
#
# delta: 100 GPUs for 24 months at 4.00, ramp 50 then 100, +3% per contract year (4.12 from contract
# month 13), 25% prepaid, onboarding 12,000 once, support 2,000 a month, usage 0.10 per GPU-hour,
# egress 10 x 50 TB = 500 a month; exit 5,000 + 100 TB x 20 = 7,000; automatic SLA credits of 5% of
# the month's rent per point below the SLA: shown, not counted (horizon.count_sla_credits is false).
# Horizon 30 months: renewal in 25-30 at the raw index (the fixture sets horizon.renewal: index), 5.00.
#
# full rent   month 1: 4.00 x 50 x 730 = 146,000; months 2-12: 4.00 x 73,000 = 292,000;
#             months 13-24: 4.12 x 73,000 = 300,760; renewal: 5.00 x 73,000 = 365,000
# prepayment  0.25 x (146,000 + 11 x 292,000 + 12 x 300,760) = 0.25 x 6,967,120 = 1,741,780
# rent paid   net of the prepayment in the term: 109,500; 219,000; 225,570; renewal 365,000 in full
# fees        month 0: 12,000; month 1: 2,000 + 500 + 0.10 x 36,500 = 6,150; then 2,500 + 7,300 = 9,800
# credits     none counted (the expected SLA credits are shown in sla_credits, tested below)
# totals      month 0: 1,753,780; month 1: 109,500 + 6,150 + 10,000 + 1,825 = 127,475;
#             2-12: 219,000 + 9,800 + 10,000 + 3,650 = 242,450;
#             13-24: 225,570 + 9,800 + 10,000 + 3,650 = 249,020;
#             25-29: 365,000 + 9,800 + 10,000 + 3,650 = 388,450; 30: 388,450 + 7,000 = 395,450
# tasks       98 x 36,500 = 3,577,000 in month 1, then 98 x 73,000 = 7,154,000

T, R = "term", "renewal"
DELTA_MONTHS = [
    # month, phase, gpus, prepayment, rent, fees, staff, software, power_colo, capital, credits, exit, total, tasks
    (0, "signing", 0, 1_741_780, 0, 12_000, 0, 0, 0, 0, 0, 0, 1_753_780, 0),
    (1, T, 50, 0, 109_500, 6_150, 10_000, 1_825, 0, 0, 0, 0, 127_475, 3_577_000),
    (2, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (3, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (4, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (5, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (6, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (7, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (8, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (9, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (10, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (11, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (12, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000),
    (13, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (14, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (15, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (16, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (17, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (18, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (19, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (20, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (21, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (22, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (23, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (24, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000),
    (25, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
    (26, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
    (27, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
    (28, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
    (29, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
    (30, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 7_000, 395_450, 7_154_000),
]
# total: 1,753,780 + 127,475 + 11 x 242,450 + 12 x 249,020 + 6 x 388,450 + 7,000
DELTA_TOTAL = 9_874_145
# commitment: prepayment + onboarding + the rent paid in the term + the fixed fees (support 2,000 a month)
# + the 0.10 surcharge on every committed GPU-hour (billed whether used or not: 36,500 in month 1, then
# 73,000); the egress estimate (per TB) depends on use and binds nothing:
# 1,741,780 + 12,000 + (109,500 + 11 x 219,000 + 12 x 225,570) + 24 x 2,000 + 0.10 x (36,500 + 23 x 73,000)
# = 1,753,780 + 5,225,340 + 48,000 + 171,550 = 7,198,670
DELTA_COMMITMENT = 7_198_670


def test_two_year_offer_month_by_month(cf):
    plan = plan_of(cf, "delta")
    assert plan.horizon_months == 30 and plan.delivery_month == 1 and plan.renewal == "index"
    assert_rows(plan, DELTA_MONTHS)


def test_two_year_offer_totals_npv_and_horizon_cost_per_task(cf):
    record = horizon_eval(cf).offer("delta")
    plan = record.cashflow
    assert DELTA_TOTAL == 1_753_780 + 127_475 + 11 * 242_450 + 12 * 249_020 + 6 * 388_450 + 7_000
    assert plan.total_cost == pytest.approx(DELTA_TOTAL)
    npv_cost = sum(pv(row[12], row[0]) for row in DELTA_MONTHS)
    npv_tasks = sum(pv(row[13], row[0]) for row in DELTA_MONTHS)
    assert npv_cost == pytest.approx(8_691_176.47, abs=0.01)  # the sum above, to the cent
    assert plan.npv_cost == pytest.approx(npv_cost)
    assert plan.npv_tasks == pytest.approx(npv_tasks)
    assert plan.horizon_cost_per_task == pytest.approx(npv_cost / npv_tasks)
    # the four figures join the offer's metrics
    assert record.metrics["total_cost"] == pytest.approx(DELTA_TOTAL)
    assert record.metrics["npv_cost"] == pytest.approx(npv_cost)
    assert record.metrics["horizon_cost_per_task"] == pytest.approx(npv_cost / npv_tasks)
    assert record.metrics["total_commitment"] == pytest.approx(DELTA_COMMITMENT)
    # month 0 is not discounted: the prepayment and onboarding count in full
    assert pv(1_753_780, 0) == 1_753_780


def test_total_commitment_by_hand(cf):
    assert DELTA_COMMITMENT == 1_741_780 + 12_000 + (109_500 + 11 * 219_000 + 12 * 225_570) + 24 * 2_000 + 0.10 * (
        36_500 + 23 * 73_000
    )
    assert plan_of(cf, "delta").total_commitment == pytest.approx(DELTA_COMMITMENT)


def test_termination_for_convenience_caps_the_commitment(cf):
    # Six months' notice and a 500,000 fee: prepayment + onboarding + 6 months of rent and fixed fees
    # + the surcharge on the committed hours + the fee = 1,753,780 + (109,500 + 5 x 219,000) + 6 x 2,000
    # + 0.10 x (36,500 + 5 x 73,000) + 500,000 = 3,510,430 < 7,198,670.
    edit(
        cf / "offers" / "delta.yaml",
        "  escalator: 0.03\n",
        "  escalator: 0.03\n  termination: {notice_months: 6, fee: 500000}\n",
    )
    plan = plan_of(cf, "delta")
    assert plan.total_commitment == pytest.approx(
        1_753_780 + (109_500 + 5 * 219_000) + 6 * 2_000 + 0.10 * (36_500 + 5 * 73_000) + 500_000
    )
    assert plan.total_commitment == pytest.approx(3_510_430)
    # termination changes what is binding, not what is expected to be paid
    assert plan.total_cost == pytest.approx(DELTA_TOTAL)


def test_termination_dearer_than_the_full_term_leaves_the_full_term(cf):
    # a 5,000,000 fee: 3,010,430 + 5,000,000 = 8,010,430 > 7,198,670, so the full term binds
    edit(
        cf / "offers" / "delta.yaml",
        "  escalator: 0.03\n",
        "  escalator: 0.03\n  termination: {notice_months: 6, fee: 5000000}\n",
    )
    assert plan_of(cf, "delta").total_commitment == pytest.approx(DELTA_COMMITMENT)


# --- SLA credits ---------------------------------------------------------------------------------


def test_expected_availability_is_below_the_sla(cf):
    record = horizon_eval(cf).offer("delta")
    assert record.rating.rated is False
    assert record.reliability_factor == pytest.approx(0.98)
    assert record.metrics["availability"] == pytest.approx(1.0 * 0.98)  # 2 points below the 100% SLA


# Monthly downtime U is Gamma with mean 1 - 0.98 = 0.02 and cv 1 (horizon.downtime_cv): exponential.
# delta's credit is min(0.30, 5 x U) (0.05 per point = 5 per unit of downtime, SLA 100%), so
# E = 5 x E[min(0.06, U)] = 5 x 0.02 x (1 - exp(-0.06 / 0.02)) = 0.1 x (1 - e^-3) = 0.0950213
# of the month's full rent: below the 10% the mean alone would give, because the cap bites in bad months.
SHARE = 0.1 * (1 - math.exp(-3))


def test_expected_sla_credit_from_a_distribution_of_monthly_availability(cf):
    plan = plan_of(cf, "delta")
    assert SHARE == pytest.approx(0.0950213, abs=1e-7)
    assert [f.sla_credits for f in plan.months[1:4]] == pytest.approx(
        [-SHARE * 146_000, -SHARE * 292_000, -SHARE * 292_000]
    )
    assert plan.months[13].sla_credits == pytest.approx(-SHARE * 300_760)
    assert plan.months[25].sla_credits == pytest.approx(-SHARE * 365_000)
    # shown, not counted: the total is the rows' cost without them
    assert all(f.credits == 0 for f in plan.months)
    assert plan.sla_credits_counted is False
    assert plan.sla_credits_expected == pytest.approx(SHARE * (146_000 + 11 * 292_000 + 12 * 300_760 + 6 * 365_000))
    assert plan.total_cost == pytest.approx(DELTA_TOTAL)
    assert any("shown, not counted" in n for n in plan.notes)


def test_expected_credit_share_against_a_numerical_integral():
    # Second method: integrate min(cap, R (u - s)+) against the Gamma density numerically (scipy.integrate).
    from scipy import integrate, stats

    sla, expected, rate, cap, cv = 0.995, 0.99, 0.10, 0.25, 0.5  # shape 4, mean downtime 0.01
    shape = 1 / cv**2
    density = stats.gamma(shape, scale=0.01 / shape).pdf
    value, _ = integrate.quad(
        lambda u: min(cap, rate * 100 * max(0.0, u - 0.005)) * density(u), 0, 1, points=[0.005, 0.03], limit=200
    )
    assert expected_credit_share(sla, expected, rate, cap, cv) == pytest.approx(value, rel=1e-6)
    # a mean exactly at the SLA still earns credits in the bad months; a perfect service none
    assert expected_credit_share(0.99, 0.99, 0.10, 0.25, 1.0) == pytest.approx(
        10 * 0.01 * math.exp(-1) - 10 * 0.01 * math.exp(-1 - 2.5), rel=1e-9
    )
    assert expected_credit_share(0.99, 1.0, 0.10, 0.25, 1.0) == 0.0


def test_counted_credits_only_when_asked(cf):
    edit(cf / "procure.yaml", "  claim_success: 0.5\n", "  claim_success: 0.5\n  count_sla_credits: true\n")
    counted = plan_of(cf, "delta")
    assert counted.sla_credits_counted is True
    assert [f.credits for f in counted.months[1:4]] == pytest.approx(
        [-SHARE * 146_000, -SHARE * 292_000, -SHARE * 292_000]
    )
    assert counted.total_cost == pytest.approx(
        DELTA_TOTAL - SHARE * (146_000 + 11 * 292_000 + 12 * 300_760 + 6 * 365_000)
    )


def test_claimed_credit_is_the_automatic_one_times_claim_success(cf):
    automatic = plan_of(cf, "delta")
    assert not any("claimed" in n for n in automatic.notes)
    edit(cf / "offers" / "delta.yaml", "cap: 0.30, automatic: true}", "cap: 0.30, automatic: false}")
    claimed = plan_of(cf, "delta")
    # claimed: x claim_success 0.5
    assert [f.sla_credits for f in claimed.months[1:4]] == pytest.approx(
        [-SHARE * 73_000, -SHARE * 146_000, -SHARE * 146_000]
    )
    for a, c in zip(automatic.months, claimed.months):
        assert c.sla_credits == pytest.approx(a.sla_credits * 0.5)
    assert "SLA credits must be claimed: counted at 50% of their expected value" in claimed.notes
    edit(cf / "procure.yaml", "  claim_success: 0.5\n", "  claim_success: 0.8\n")
    assert plan_of(cf, "delta").months[2].sla_credits == pytest.approx(-SHARE * 292_000 * 0.8)


def test_credits_default_to_the_sla_automatic_credits_and_stop_at_the_cap(cf):
    delta = cf / "offers" / "delta.yaml"
    # without `automatic`, the SLA's automatic_credits decides: false by default -> claimed
    edit(delta, "cap: 0.30, automatic: true}", "cap: 0.30}")
    assert plan_of(cf, "delta").months[2].sla_credits == pytest.approx(-SHARE * 292_000 * 0.5)
    edit(
        delta,
        "sla: {availability: 1.0, node_replacement_hours: 24}",
        "sla: {availability: 1.0, node_replacement_hours: 24, automatic_credits: true}",
    )
    assert plan_of(cf, "delta").months[2].sla_credits == pytest.approx(-SHARE * 292_000)
    # 0.20 a point = 20 per unit of downtime, capped at 30%: 20 x 0.02 x (1 - exp(-0.015 / 0.02))
    edit(delta, "rate_per_point: 0.05, cap: 0.30}", "rate_per_point: 0.20, cap: 0.30}")
    assert plan_of(cf, "delta").months[2].sla_credits == pytest.approx(-0.4 * (1 - math.exp(-0.75)) * 292_000)


def test_the_reliability_penalty_never_becomes_a_rebate(cf):
    # The unrated factor puts expected availability 2 points under the SLA. With the credit clause the
    # offer must cost exactly what it costs without the clause (credits are not counted by default).
    with_clause = horizon_eval(cf).offer("delta").metrics["horizon_cost_per_task"]
    edit(cf / "offers" / "delta.yaml", "  sla_credits: {rate_per_point: 0.05, cap: 0.30, automatic: true}\n", "")
    without = horizon_eval(cf).offer("delta").metrics["horizon_cost_per_task"]
    assert with_clause == pytest.approx(without, rel=1e-12)


# --- late delivery -------------------------------------------------------------------------------


def test_delivery_after_as_of_moves_the_first_served_month(cf):
    edit(cf / "offers" / "delta.yaml", "term_months: 24\n", "term_months: 24\ndelivery: 2027-01-20\n")
    plan = plan_of(cf, "delta")
    # January 2027 is month 3 after an as-of date in November: the 24-month term is months 3-26, renewal 27-30
    assert plan.delivery_month == 3
    assert_rows(
        plan,
        [
            DELTA_MONTHS[0],
            (1, "before delivery", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            (2, "before delivery", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            *[(m + 2, *row[1:]) for m, row in enumerate(DELTA_MONTHS[1:25], start=1)],
            (27, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
            (28, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
            (29, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
            (30, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 7_000, 395_450, 7_154_000),
        ],
    )
    assert "delivered in month 3: nothing to serve before" in plan.notes
    # no expected delay: no late-delivery credit even though the offer has one
    edit(
        cf / "offers" / "delta.yaml",
        "  escalator: 0.03\n",
        "  escalator: 0.03\n  late_delivery: {per_week: 10000, cap: 50000}\n",
    )
    assert plan_of(cf, "delta").months[2].credits == 0


def test_expected_delay_moves_delivery_further_and_earns_the_capped_credit(cf):
    edit(cf / "offers" / "delta.yaml", "term_months: 24\n", "term_months: 24\ndelivery: 2027-01-20\n")
    edit(
        cf / "offers" / "delta.yaml",
        "  escalator: 0.03\n",
        "  escalator: 0.03\n  late_delivery: {per_week: 10000, cap: 50000}\n",
    )
    edit(cf / "procure.yaml", "  expected_delay_weeks: 0\n", "  expected_delay_weeks: 6\n")
    plan = plan_of(cf, "delta")
    # six weeks late: 3 March 2027 -> month 5 (month 1 is November 2026). Term months 5-28 (4.12 from month 17),
    # renewal 29-30. Late-delivery credit in the delivery month: 10,000 x 6 = 60,000, capped at 50,000.
    # month 5: 109,500 + 6,150 + 10,000 + 1,825 - 50,000 = 77,475
    assert plan.delivery_month == 5
    before = (0,) * 12  # gpus .. successful tasks
    expected = [
        DELTA_MONTHS[0],
        *[(m, "before delivery", *before) for m in range(1, 5)],
        (5, T, 50, 0, 109_500, 6_150, 10_000, 1_825, 0, 0, -50_000, 0, 77_475, 3_577_000),
        *[(m, T, 100, 0, 219_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 242_450, 7_154_000) for m in range(6, 17)],
        *[(m, T, 100, 0, 225_570, 9_800, 10_000, 3_650, 0, 0, 0, 0, 249_020, 7_154_000) for m in range(17, 29)],
        (29, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 0, 388_450, 7_154_000),
        (30, R, 100, 0, 365_000, 9_800, 10_000, 3_650, 0, 0, 0, 7_000, 395_450, 7_154_000),
    ]
    assert_rows(plan, expected)
    assert plan.total_cost == pytest.approx(1_753_780 + 77_475 + 11 * 242_450 + 12 * 249_020 + 2 * 388_450 + 7_000)

    # without a cap the whole 60,000 is credited
    edit(
        cf / "offers" / "delta.yaml", "late_delivery: {per_week: 10000, cap: 50000}", "late_delivery: {per_week: 10000}"
    )
    assert plan_of(cf, "delta").months[5].credits == pytest.approx(-60_000)


def test_no_late_delivery_credit_without_a_promised_date(cf):
    edit(
        cf / "offers" / "delta.yaml",
        "  escalator: 0.03\n",
        "  escalator: 0.03\n  late_delivery: {per_week: 10000, cap: 50000}\n",
    )
    edit(cf / "procure.yaml", "  expected_delay_weeks: 0\n", "  expected_delay_weeks: 6\n")
    plan = plan_of(cf, "delta")
    assert plan.delivery_month == 1  # nothing promised, nothing late
    assert plan.months[1].credits == 0  # no late-delivery credit; SLA credits are not counted


# --- renewal -------------------------------------------------------------------------------------


def test_renewal_at_the_index_fixed_price_and_index_linked(cf):
    ev = horizon_eval(cf)
    # fixed price 4.00 (4.12 in year two) renews at the index itself: 5.00 x 73,000
    delta = ev.offer("delta").cashflow
    assert [f.rent for f in delta.months[25:]] == pytest.approx([365_000] * 6)
    # index-linked: clamp(5.00 + 0.50, 3, 10) = 5.50 in the term, and the same at renewal (the index on or
    # before the as-of date, not the later 9.00); its escalator does not apply to a renewal at the index
    foxtrot = ev.offer("foxtrot").cashflow
    assert [f.phase for f in foxtrot.months[1:]] == ["term"] * 12 + ["renewal"] * 18
    assert [f.rent for f in foxtrot.months[1:]] == pytest.approx([5.50 * 73_000] * 30)
    assert any(
        n.startswith("after its 12-month term the offer renews at the raw index") and "horizon.renewal: index" in n
        for n in foxtrot.notes
    )


def test_a_renewal_at_the_index_basis_starts_from_the_escalated_price(cf):
    # renewal: basis, index flat (index_growth 0): delta's 24-month term is 4.00, then 4.00 x 1.03 = 4.12 (contract
    # months 13-24); its renewal starts where the escalator goes next, 4.00 x 1.03^2 = 4.2436, so months 25-30 renew at
    # 4.2436 + (5.00 - 5.00) = 4.2436 x 100 GPUs x 730 h = 309,782.8 a month, as the plan prices the same renewal
    edit(cf / "procure.yaml", "  renewal: index\n", "  renewal: basis\n")
    delta = horizon_eval(cf).offer("delta").cashflow
    assert [f.phase for f in delta.months[25:]] == ["renewal"] * 6
    assert [f.rent for f in delta.months[25:]] == pytest.approx([4.2436 * 73_000] * 6)
    # terms that say a renewal restarts at the list price: 4.00 x 73,000 = 292,000
    edit(cf / "offers" / "delta.yaml", "  escalator: 0.03\n", "  escalator: 0.03\n  renewal_price: list\n")
    delta = horizon_eval(cf).offer("delta").cashflow
    assert [f.rent for f in delta.months[25:]] == pytest.approx([4.00 * 73_000] * 6)


def test_renewal_at_the_escalated_price(cf):
    edit(cf / "procure.yaml", "  renewal: index\n", "  renewal: escalate\n")
    ev = horizon_eval(cf)
    # delta: the escalator goes on, 4.00 x 1.03^2 = 4.2436 in contract months 25-36, paid in full
    delta = ev.offer("delta").cashflow
    assert delta.renewal == "escalate"
    assert [f.rent for f in delta.months[25:]] == pytest.approx([4.2436 * 73_000] * 6)
    assert [f.sla_credits for f in delta.months[25:]] == pytest.approx([-SHARE * 4.2436 * 73_000] * 6)
    assert [f.rent for f in delta.months[:25]] == pytest.approx(
        [row[4] for row in DELTA_MONTHS[:25]]
    )  # the term is unchanged
    assert any(
        n.startswith("after its 24-month term the offer renews at the price its escalators reach in the month after")
        for n in delta.notes
    )
    # foxtrot: 5.50 in the term, x 1.10 in contract months 13-24, x 1.21 in 25-30
    foxtrot = ev.offer("foxtrot").cashflow
    assert [f.rent for f in foxtrot.months[1:]] == pytest.approx(
        [5.50 * 73_000] * 12 + [6.05 * 73_000] * 12 + [6.655 * 73_000] * 6
    )
    # a fixed price with no escalator renews at its own price
    hotel = ev.offer("hotel").cashflow
    assert [f.rent for f in hotel.months[1:]] == pytest.approx([3.00 * 73_000] * 30)


# --- an owned cluster ----------------------------------------------------------------------------


def test_owned_offer_capital_at_signing_and_residual_value_at_the_end(cf):
    plan = plan_of(cf, "golf")
    # capital 100 x 36,000 = 3,600,000 at signing; running per GPU-month 1.0 kW x 1.25 x 0.08 x 730 = 73
    # of power + 150 x 1.0 of colocation = 223, x 100 GPUs = 22,300; staff 10,000; software 3,650.
    # Remaining value after 30 months of its 5-year life, consistent with the capital recovery factor
    # the snapshot charges: the balance of the annuity, which grows at 12% and is paid down by the yearly
    # payment P = 3,600,000 x 0.12 / (1 - 1.12^-5) = 998,675.0: B(2.5) = C x 1.12^2.5 - P x (1.12^2.5 - 1) / 0.12
    # = 2,053,297.4 (straight line would say 1,800,000), credited in month 30. Tasks: owned availability is our host
    # 0.98 x our operating jobs 0.98 = 0.9604, so 96.04 x 73,000 = 7,010,920 a month.
    payment = 3_600_000 * 0.12 / (1 - 1.12**-5)
    residual = 3_600_000 * 1.12**2.5 - payment * (1.12**2.5 - 1) / 0.12
    assert residual == pytest.approx(2_053_297.43, abs=0.01)
    assert plan.residual_value == pytest.approx(residual)
    expected = [(0, "signing", 0, 0, 0, 0, 0, 0, 0, 3_600_000, 0, 0, 3_600_000, 0)]
    for m in range(1, 31):
        capital = -residual if m == 30 else 0
        expected.append((m, T, 100, 0, 0, 0, 10_000, 3_650, 22_300, capital, 0, 0, 35_950 + capital, 7_010_920))
    assert_rows(plan, expected)
    assert plan.total_cost == pytest.approx(3_600_000 + 30 * 35_950 - residual)
    assert plan.total_commitment == pytest.approx(3_600_000)  # the capital
    npv = 3_600_000 + sum(pv(35_950, m) for m in range(1, 31)) - pv(residual, 30)
    assert plan.npv_cost == pytest.approx(npv)
    assert plan.horizon_cost_per_task == pytest.approx(npv / sum(pv(7_010_920, m) for m in range(1, 31)))
    assert any("2,053,297" in n and "credited in the last month" in n for n in plan.notes)
    # after three whole years the balance is the present value of the two payments left: P x (1 - 1.12^-2) / 0.12
    assert plan_of(cf, "golf", 36).residual_value == pytest.approx(payment * (1 - 1.12**-2) / 0.12)
    # a horizon as long as the equipment's life leaves no value to credit
    assert plan_of(cf, "golf", 60).months[60].capital == 0


def test_owned_equipment_past_its_life_is_replaced_not_free(cf):
    # golf (5-year life, delivered in month 1) over 72 months: the first cluster serves months 1-60; the
    # replacement, 3,600,000 again at today's capex, is paid in month 61 and serves 61-72. At the horizon
    # the replacement has run one year: its balance is the PV of the four payments left,
    # P x (1 - 1.12^-4) / 0.12 with P = 3,600,000 x 0.12 / (1 - 1.12^-5) = 998,675.0, 998,675.0 x 3.037349 =
    # 3,033,325.0.
    # Without the replacement, months 61-72 would have served on hardware whose capital was fully recovered.
    payment = 3_600_000 * 0.12 / (1 - 1.12**-5)
    residual = payment * (1 - 1.12**-4) / 0.12
    assert residual == pytest.approx(3_033_325.0, abs=0.1)
    plan = plan_of(cf, "golf", 72)
    assert plan.months[61].capital == pytest.approx(3_600_000)
    assert (plan.months[60].phase, plan.months[61].phase) == ("term", "replacement")
    assert plan.months[72].capital == pytest.approx(-residual)
    assert plan.residual_value == pytest.approx(residual)
    assert plan.total_cost == pytest.approx(2 * 3_600_000 + 72 * 35_950 - residual)
    npv = 3_600_000 + pv(3_600_000, 61) + sum(pv(35_950, m) for m in range(1, 73)) - pv(residual, 72)
    assert plan.npv_cost == pytest.approx(npv)
    assert plan.total_commitment == pytest.approx(3_600_000)  # the replacement is not signed today
    assert any("replaced at the end of its 5-year life" in n and "month 61" in n for n in plan.notes)
    # two replacements over 130 months: months 61 and 121, the last one 10 months old at the horizon
    long = plan_of(cf, "golf", 130)
    assert [m.month for m in long.months if m.capital > 0] == [0, 61, 121]
    balance = 3_600_000 * (1.12**5 - 1.12 ** (10 / 12)) / (1.12**5 - 1)
    assert long.residual_value == pytest.approx(balance)


# --- the horizon ranking --------------------------------------------------------------------------


def test_horizon_ranking_differs_from_the_snapshot(cf):
    # hotel: 3.00 for 6 months, then the index 5.00; india: 3.20 fixed for 36 months. Same throughput,
    # staff and software. Snapshot (per GPU-hour, staff 10,000 x 12 / 876,000 = 0.136986):
    # hotel (3.05 + 0.136986) / 98 < india (3.25 + 0.136986) / 98.
    snapshot = evaluate(load_workspace(cf), AS_OF)
    hotel_snap, india_snap = snapshot.offer("hotel"), snapshot.offer("india")
    assert hotel_snap.metrics["cost_per_task"] == pytest.approx((3.05 + 120_000 / 876_000) / 98)
    assert india_snap.metrics["cost_per_task"] == pytest.approx((3.25 + 120_000 / 876_000) / 98)
    assert hotel_snap.rank < india_snap.rank
    assert snapshot.rank_by == "cost_per_task"

    # Over 24 months: hotel 219,000 + 13,650 = 232,650 in months 1-6, 365,000 + 13,650 = 378,650 in 7-24;
    # india 233,600 + 13,650 = 247,250 every month; both 7,154,000 tasks a month.
    ev = horizon_eval(cf, 24, rank_by_horizon=True)
    assert ev.rank_by == "horizon_cost_per_task"
    tasks = sum(pv(7_154_000, m) for m in range(1, 25))
    hotel_cost = sum(pv(232_650, m) for m in range(1, 7)) + sum(pv(378_650, m) for m in range(7, 25))
    india_cost = sum(pv(247_250, m) for m in range(1, 25))
    hotel, india = ev.offer("hotel"), ev.offer("india")
    assert hotel.metrics["horizon_cost_per_task"] == pytest.approx(hotel_cost / tasks)
    assert india.metrics["horizon_cost_per_task"] == pytest.approx(india_cost / tasks)
    assert india.metrics["horizon_cost_per_task"] == pytest.approx(247_250 / 7_154_000)  # a flat schedule
    assert india.rank < hotel.rank
    ranked = [o for o in ev.offers if o.acceptable]
    assert [o.rank for o in ranked] == list(range(1, len(ranked) + 1))
    costs = [o.metrics["horizon_cost_per_task"] for o in ranked]
    assert costs == sorted(costs)
    # Without --rank-by horizon the same horizon figures are shown but the snapshot ranks
    plain = horizon_eval(cf, 24)
    assert plain.rank_by == "cost_per_task"
    assert plain.offer("hotel").rank < plain.offer("india").rank
    assert plain.offer("hotel").metrics["horizon_cost_per_task"] == pytest.approx(hotel_cost / tasks)


def test_summary_gap_follows_the_horizon_ranking(cf):
    # Over 12 months india leads on the horizon figure; hotel, runner-up, is cheaper in the snapshot.
    ev = horizon_eval(cf, 12, rank_by_horizon=True)
    assert (ev.summary.recommended, ev.summary.runner_up) == ("india", "hotel")
    assert ev.summary.gap_per_task >= 0
    assert ev.summary.gap_share >= 0


# --- bugs ----------------------------------------------------------------------------------------


def test_commitment_does_not_depend_on_the_horizon(cf):
    # india: 3.20 x 100 x 730 = 233,600 a month for 36 months, no fees
    for months in (12, 24, 30, 36):
        assert plan_of(cf, "india", months).total_commitment == pytest.approx(36 * 233_600), months


def test_an_offer_without_sla_credits_shows_zero_not_negative_zero(cf):
    # india has no credit clause: its expected credits are 0, and JSON must not say -0.0
    plan = plan_of(cf, "india", 36)
    assert plan.sla_credits_expected == 0 and math.copysign(1.0, plan.sla_credits_expected) == 1.0
    assert all(math.copysign(1.0, f.sla_credits) == 1.0 for f in plan.months)
    assert "-0.0" not in plan.model_dump_json()


def test_a_minimum_monthly_bill_binds_the_commitment(cf):
    # india: 3.20 x 100 x 730 = 233,600 of rent a month, no fees; a minimum bill of 300,000 a month tops
    # each of the 36 term months up by 66,400, which is as binding as the rent: 36 x 300,000 = 10,800,000.
    path = cf / "offers" / "india.yaml"
    path.write_text(path.read_text() + "contract:\n  minimum_monthly: 300000\n")
    plan = plan_of(cf, "india", 36)
    assert plan.months[1].fees == pytest.approx(66_400)
    assert plan.total_commitment == pytest.approx(36 * 300_000)


def test_commitment_with_a_ramp_counts_only_the_committed_gpus(cf):
    # Demand of 10,731,000 tasks a month needs 10,731,000 / (98 x 730) = 150 GPUs; delta may bill up to
    # 200 but commits to 100. Ramp 50, 100, then the 150 billed.
    edit(cf / "procure.yaml", "  utilization: 1.0\n", "  utilization: 1.0\n  tasks_per_month: 10731000\n")
    edit(cf / "offers" / "delta.yaml", "gpus: 100\n", "gpus: 100\nmax_gpus: 200\n")
    plan = plan_of(cf, "delta")
    assert [f.gpus for f in plan.months[1:4]] == [50, 100, 150]
    # prepayment (as schedule() computes it, on the billed GPUs): 0.25 x (146,000 + 292,000 + 10 x 438,000
    # + 12 x 451,140) = 2,557,920. Committed rent paid: months 1-2 in full (109,500 + 219,000), then 100 of
    # the 150 GPUs: 2/3 x 328,500 = 219,000 in months 3-12 and 2/3 x 338,355 = 225,570 in 13-24.
    assert plan.months[0].prepayment == pytest.approx(2_557_920)
    # fixed fees 24 x 2,000 and the 0.10 surcharge on the committed hours (36,500 then 23 x 73,000)
    expected = (
        2_557_920
        + 12_000
        + 109_500
        + 219_000
        + 10 * 219_000
        + 12 * 225_570
        + 24 * 2_000
        + 0.10 * (36_500 + 23 * 73_000)
    )
    assert plan.total_commitment == pytest.approx(expected)


def per_token_kilo(cf: Path, fees: str, serving_stack: str | None = None, extra: str = "") -> None:
    """kilo: hotel billed by tokens (10 per million output tokens, no input charge), 12-month term, the
    given fee lines, a million tasks a month; the serving stack stays with the buyer unless told."""
    edit(cf / "procure.yaml", "  utilization: 1.0\n", "  utilization: 1.0\n  tasks_per_month: 1000000\n")
    text = (
        (cf / "offers" / "hotel.yaml")
        .read_text()
        .replace("id: hotel", "id: kilo")
        .replace("gpus: 100\n", "")
        .replace("term_months: 6", "term_months: 12")
        .replace("  gpu_hour: 3.00\n", "  per_mtok: {input: 0.0, output: 10.0}\n  fees:\n" + fees)
        .replace("kind: managed_cluster", "kind: managed_serving")
        .replace("  points: [[100, 100]]\n  points_source: measured\n", "  quality_pass_rate: 1.0\n")
    )
    if serving_stack is not None:
        text = text.replace("  serving_stack: customer", f"  serving_stack: {serving_stack}")
    (cf / "offers" / "kilo.yaml").write_text(text + extra)


def test_per_token_one_off_fee_is_counted_once(cf):
    per_token_kilo(cf, "    - {name: onboarding, once: 12000}\n", serving_stack="provider")
    plan = plan_of(cf, "kilo", 12)
    # 3,600 output tokens x 10 per million = 0.036 a task x 1,000,000 tasks = 36,000 a month; 12,000 once
    assert plan.months[0].total == pytest.approx(12_000)
    assert [f.total for f in plan.months[1:]] == pytest.approx([36_000] * 12)
    assert plan.total_cost == pytest.approx(12_000 + 12 * 36_000)


def test_per_token_escalator_moves_the_token_charges_not_the_fees_or_the_staff(cf):
    # kilo as above, plus support 3,000 a month, the serving stack left to the buyer (one engineer,
    # 10,000 a month) and +10% at the contract's first anniversary. The escalator is the vendor's price
    # for tokens: months 1-12 rent 36,000, fees 3,000, staff 10,000 = 49,000; months 13-24 rent
    # 36,000 x 1.10 = 39,600, fees and staff unchanged = 52,600 (escalating the whole cost per task would
    # say 1.10 x 49,000 = 53,900).
    per_token_kilo(
        cf,
        "    - {name: onboarding, once: 12000}\n    - {name: support, monthly: 3000}\n",
        extra="contract:\n  escalator: 0.10\n",
    )
    plan = plan_of(cf, "kilo", 24)
    assert plan.months[0].total == pytest.approx(12_000)
    assert [v for f in plan.months[1:13] for v in (f.rent, f.fees, f.staff)] == pytest.approx(
        [36_000, 3_000, 10_000] * 12
    )
    assert [v for f in plan.months[13:] for v in (f.rent, f.fees, f.staff)] == pytest.approx(
        [39_600, 3_000, 10_000] * 12
    )
    assert plan.total_cost == pytest.approx(12_000 + 12 * 49_000 + 12 * 52_600)


# --- renewal keeps the offer's basis ---------------------------------------------------------------


def test_renewal_keeps_a_fixed_price_offers_basis(cf):
    edit(cf / "procure.yaml", "  renewal: index\n", "  renewal: basis\n")
    ev = horizon_eval(cf, 24)
    # hotel pays 3.00, the index is 5.00: its basis is -2.00, so with the index unchanged it renews at 3.00
    hotel = ev.offer("hotel").cashflow
    assert [f.rent for f in hotel.months[1:]] == pytest.approx([3.00 * 73_000] * 24)
    assert hotel.renewal == "basis"
    # an index-linked offer keeps its spread, floor and cap: clamp(5.00 + 0.50, 3, 10) = 5.50
    assert [f.rent for f in ev.offer("foxtrot").cashflow.months[13:]] == pytest.approx([5.50 * 73_000] * 12)


def test_renewal_moves_with_the_index_change_the_horizon_assumes(cf):
    edit(cf / "procure.yaml", "  renewal: index\n", "  renewal: basis\n  index_growth: 0.10\n")
    ev = horizon_eval(cf, 12)
    # the index in month m is 5.00 x 1.10^(m/12); hotel renews from month 7 at 3.00 + (that - 5.00)
    hotel = ev.offer("hotel").cashflow
    for m in range(7, 13):
        assert hotel.months[m].rent == pytest.approx((3.00 + 5.00 * (1.10 ** (m / 12) - 1)) * 73_000), m
    assert hotel.months[12].index_level == pytest.approx(5.50)
    # the term is the offer's price, whatever the index does
    assert [f.rent for f in hotel.months[1:7]] == pytest.approx([3.00 * 73_000] * 6)
    # index-linked months follow the assumed index: month 12 is clamp(5.50 + 0.50, 3, 10) = 6.00
    assert ev.offer("foxtrot").cashflow.months[12].rent == pytest.approx(6.00 * 73_000)


def test_one_renewal_rule_for_every_policy():
    # basis: rent + h x change; index: the raw index; escalate: the escalated price; linked: its own clamp
    assert renewal_rent("basis", 4.85, 5.03, 5.53, None) == pytest.approx(5.35)
    assert renewal_rent("basis", 4.85, 5.03, 5.53, None, h=0.8) == pytest.approx(4.85 + 0.8 * 0.50)
    assert renewal_rent("index", 4.85, 5.03, 5.53, None) == pytest.approx(5.53)
    assert renewal_rent("escalate", 4.99, 5.03, 5.53, None) == pytest.approx(4.99)
    from procure.model.inputs import IndexLinked, Pricing
    from procure.model.kinds import kind_of

    pricing = Pricing(currency="USD", index_linked=IndexLinked(spread=-0.30, floor=3.50, cap=6.00))
    linked = partial(kind_of(pricing).index_rent, pricing, fx=1.0)  # the kind's rent at an index level
    assert renewal_rent("basis", 4.73, 5.03, 7.00, linked) == pytest.approx(6.00)  # capped
    assert renewal_rent("index", 4.73, 5.03, 3.00, linked) == pytest.approx(3.50)  # floored


def test_example_horizon_does_not_reverse_on_renewal_pricing_alone():
    # keel (4.85 fixed for 12 months, 0.18 under the 5.03 index) leads the snapshot; repricing it to the raw
    # index after month 12 used to hand the 36-month ranking to corvid (index - 0.30). Renewing at its basis
    # keeps the snapshot's order.
    root = Path(__file__).resolve().parents[1]
    ws = load_workspace(root)
    snapshot = evaluate(ws, AS_OF)
    horizon = evaluate(ws, AS_OF, None, 36, True)
    assert ws.config.horizon.renewal == "basis"
    assert snapshot.summary.recommended == horizon.summary.recommended == "keel-b200-mc"
    raw = evaluate(replace_horizon(ws, renewal="index"), AS_OF, None, 36, True)
    # the raw index reprices keel after month 12 at 5.03 where its basis renews it from its escalated price (4.85 x
    # 1.02 = 4.947 from month 13, x 1.02 again from each renewal's seventh month and at the next: 4.947, 5.046, 5.046,
    # 5.147 a half-year each, 5.0465 on average): its 36-month cost moves, the owned cluster's (which does not follow
    # the index) does not. The owned cluster fails the 98% minimum at the means of its availability factor (97.68%,
    # test_one_estimate), so keel leads under either rule.
    basis_cost, raw_cost = ({o.id: o.metrics["horizon_cost_per_task"] for o in e.offers} for e in (horizon, raw))
    assert raw_cost["keel-b200-mc"] < basis_cost["keel-b200-mc"]
    assert raw_cost["own-b200-colo"] == pytest.approx(basis_cost["own-b200-colo"], rel=1e-12)
    assert not raw.offer("own-b200-colo").acceptable and raw.summary.recommended == "keel-b200-mc"


def replace_horizon(ws, **changes):
    from dataclasses import replace

    config = ws.config.model_copy(update={"horizon": ws.config.horizon.model_copy(update=changes)})
    return replace(ws, config=config)


# --- escalators in the snapshot ----------------------------------------------------------------------


def test_the_snapshot_ranks_on_the_term_average_rent(cf):
    # delta: 3% a contract year over a 24-month term: 4.00 for months 1-12, 4.00 x 1.03 = 4.12 for 13-24, average
    # (12 x 4.00 + 12 x 4.12) / 24 = 4.06. The rent ranked is 4.06; today's list price and rent stay 4.00.
    record = evaluate(load_workspace(cf), AS_OF).offer("delta")
    assert record.metrics["rent"] == pytest.approx(4.06)
    assert (record.metrics["rent_today"], record.metrics["list_price"]) == (pytest.approx(4.00), pytest.approx(4.00))
    assert record.metrics["rent_term_average"] == pytest.approx((12 * 4.00 + 12 * 4.12) / 24)
    # the prepayment is a share of the contract's value, escalated: 0.25 x 4.06 x 0.12 x 24 / 24 = 0.1218
    assert record.metrics["financing"] == pytest.approx(0.1218)
    from procure.model.inputs import ContractTerms

    # +2% from month 7 of a 12-month term: (6 x 4.85 + 6 x 4.947) / 12 = 4.8985
    assert term_average_rent(4.85, ContractTerms(escalator_schedule=[(7, 0.02)]), 12) == pytest.approx(4.8985)


# --- prepayment counterparty risk -------------------------------------------------------------------


def test_vendor_default_rate_prices_the_unearned_prepayment(cf):
    edit(cf / "procure.yaml", "  cost_of_capital: 0.12\n", "  cost_of_capital: 0.12\n  vendor_default_rate: 0.12\n")
    ev = horizon_eval(cf)
    record = ev.offer("delta")
    # snapshot: 0.25 x 4.06 (the term-average rent) x 0.12 x 24 / 24 = 0.1218 per GPU-hour, its own line
    assert record.metrics["prepay_risk"] == pytest.approx(0.1218)
    plan = record.cashflow
    # The prepayment is drawn month by month: 0.25 x rent x GPU-hours = 36,500 in month 1, 73,000 in 2-12,
    # 75,190 in 13-24. A draw d_k stays unearned for k - 1 whole months and half of its own, so the expected
    # loss at 1% a month (12% a year) is 0.01 x sum(d_k x (k - 0.5)).
    draws = [36_500] + [73_000] * 11 + [75_190] * 12
    expected = 0.01 * sum(d * (k - 0.5) for k, d in enumerate(draws, start=1))
    assert plan.prepay_risk == pytest.approx(expected)
    assert plan.total_cost == pytest.approx(DELTA_TOTAL + expected)
    assert any("expected loss on unearned prepayment" in n for n in plan.notes)
    # zero by default
    assert plan_of(load_default(cf), "delta").prepay_risk == 0


def load_default(cf: Path) -> Path:
    edit(cf / "procure.yaml", "  vendor_default_rate: 0.12\n", "")
    return cf


# --- price to tie on the horizon ------------------------------------------------------------------


def test_price_to_tie_solves_the_horizon_figure(cf):
    # Over 24 months india (flat 247,250 a month) leads the horizon. hotel pays (3.00 + d) x 73,000 + 13,650
    # in months 1-6 and renews at the index, 378,650, in 7-24. It ties when its PV cost equals india's
    # (the same PV tasks): d = (PV india - PV renewal - PV(3.00 x 73,000 + 13,650, months 1-6)) / (73,000 x PV(1, months
    # 1-6)).
    ev = horizon_eval(cf, 24, rank_by_horizon=True)
    assert ev.summary.recommended == "india"
    india_pv = sum(pv(247_250, m) for m in range(1, 25))
    renewal_pv = sum(pv(378_650, m) for m in range(7, 25))
    term_pv = sum(pv(3.00 * 73_000 + 13_650, m) for m in range(1, 7))
    d = (india_pv - renewal_pv - term_pv) / (73_000 * sum(pv(1, m) for m in range(1, 7)))
    hotel = ev.offer("hotel")
    assert hotel.metrics["price_to_tie"] == pytest.approx(3.00 + d, rel=1e-9)
    assert 3.00 + d < 3.00  # hotel must cut its price to tie over the horizon, though it leads the snapshot
    assert ev.offer("india").metrics["price_to_tie"] == pytest.approx(3.20)
    assert hotel.metrics["vs_leader"] == pytest.approx(
        hotel.metrics["horizon_cost_per_task"] / ev.offer("india").metrics["horizon_cost_per_task"] - 1
    )


def test_price_to_tie_of_an_index_linked_offer_moves_its_spread(cf):
    # foxtrot: clamp(5.00 + 0.50, 3, 10) = 5.50 for 24 months (its 12-month term, then a renewal that keeps the
    # spread), same throughput, staff and software as india (3.20 flat). The spread that ties india's PV cost per
    # PV task makes every month cost the same as india's: (5.50 + d) x 73,000 + 13,650 = 247,250 -> 5.50 + d = 3.20.
    ev = horizon_eval(cf, 24, rank_by_horizon=True)
    assert ev.offer("foxtrot").metrics["price_to_tie"] == pytest.approx(233_600 / 73_000, rel=1e-9)
    assert ev.offer("golf").metrics["price_to_tie"] is None  # owned: no rental price to negotiate
