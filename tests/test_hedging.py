"""Hedging (procure/analysis/hedging.py): the hedge ratio on aligned changes, exposure, the ladder, the stress
table and the basis band.

Expected values are worked out by hand or by a second method (numpy's least squares); the code's
helpers are never used for an expected value. The fixture workspace tests/data/market_ws (as of
2026-11-29, index 5.00 on 2026-11-27) has:
- `fixed`: 10 GPUs at 4.00 for 2 months -> 7,300 GPU-hours a month, months 1-2 fixed, 3+ renewals;
- `indexed`: 20 GPUs, index + 0.50 with floor 4.00 and cap 6.00, for 4 months -> 14,600 GPU-hours
  a month, months 1-4 index-linked (rent 5.50 today), 5+ renewals;
- `owned` and `tokens` (per-token): no GPU-hour rent.
"""

from __future__ import annotations

import calendar
import math
from datetime import date, timedelta

import numpy as np
import pytest

from procure.analysis.evaluate import evaluate
from procure.analysis.hedging import hedge_plan, regress
from procure.errors import InputError
from procure.io.workspace import IndexLevel, load_workspace
from procure.model.inputs import HedgeConfig, LadderBucket

AS_OF = date(2026, 11, 29)
MOVES = (-0.40, -0.20, 0.20, 0.40)


@pytest.fixture(scope="module")
def ev(data_dir):
    return evaluate(load_workspace(data_dir / "market_ws"), AS_OF)


def month_ends(values, first=(2024, 1)) -> list[IndexLevel]:
    """One level per month, dated the month's last day, from `first` on."""
    year, month = first
    out = []
    for value in values:
        out.append(IndexLevel(date(year, month, calendar.monthrange(year, month)[1]), float(value)))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def index_to_as_of(n: int = 14, seed: int | None = None) -> list[IndexLevel]:
    """n month-end levels ending with 5.00 in November 2026 (the latest on or before AS_OF)."""
    if seed is None:
        values = [5.0 + 0.1 * ((k * 7) % 5) for k in range(n - 1)] + [5.0]
    else:
        steps = np.random.default_rng(seed).normal(0, 0.15, n - 1)
        values = list(5.0 - np.cumsum(steps[::-1])[::-1]) + [5.0]
    first_month = 11 - (n - 1)
    year = 2026 + (first_month - 1) // 12
    month = (first_month - 1) % 12 + 1
    levels = month_ends(values, (year, month))
    levels[-1] = IndexLevel(date(2026, 11, 27), 5.0)
    return levels


def config(**changes) -> HedgeConfig:
    base = dict(
        horizon_months=6,
        period="month",
        contract_gpu_hours=730,
        ladder=[
            LadderBucket(first_month=1, last_month=3, share=0.5),
            LadderBucket(first_month=4, last_month=6, share=0.25),
        ],
    )
    base.update(changes)
    return HedgeConfig(**base)


# --- the hedge ratio ------------------------------------------------------------------------------


def test_rent_equal_to_index_plus_a_premium_gives_h_one_and_r2_one():
    rng = np.random.default_rng(11)
    index = month_ends(5 + np.cumsum(rng.normal(0, 0.2, 24)))
    rent = [IndexLevel(p.date, p.price + 0.80) for p in index]
    reg = regress(rent, index, "month", "rent")
    assert reg.hedge_ratio == pytest.approx(1.0, abs=1e-9)
    assert reg.rho == pytest.approx(1.0, abs=1e-9)
    assert reg.r2 == pytest.approx(1.0, abs=1e-9)
    assert reg.basis_volatility == pytest.approx(0.0, abs=1e-9)
    assert reg.changes == 23 and reg.insufficient_history is False


def test_hedge_ratio_matches_numpy_least_squares_on_a_noisy_series():
    rng = np.random.default_rng(20261129)
    f = 6.0 + np.cumsum(rng.normal(0, 0.25, 36))
    s = 7.0 + np.cumsum(0.85 * np.diff(f, prepend=f[0]) + rng.normal(0, 0.08, 36))
    reg = regress(month_ends(s), month_ends(f), "month", "rent")

    df, ds = np.diff(f), np.diff(s)
    slope, intercept = np.polyfit(df, ds, 1)
    residual = ds - (slope * df + intercept)
    assert reg.changes == 35 and reg.insufficient_history is False
    assert reg.hedge_ratio == pytest.approx(slope, rel=1e-9)
    # rho two ways: numpy's correlation and the sums by hand
    x, y = df - df.mean(), ds - ds.mean()
    rho_by_hand = (x * y).sum() / math.sqrt((x * x).sum() * (y * y).sum())
    assert reg.rho == pytest.approx(np.corrcoef(df, ds)[0, 1], rel=1e-9)
    assert reg.rho == pytest.approx(rho_by_hand, rel=1e-9)
    # R^2 = rho^2 = 1 - SS_residual / SS_total of the regression with intercept
    assert reg.r2 == pytest.approx(rho_by_hand**2, rel=1e-9)
    assert reg.r2 == pytest.approx(1 - (residual**2).sum() / (y * y).sum(), rel=1e-9)
    # basis volatility: std (ddof=1) of the residuals of that regression
    assert reg.basis_volatility == pytest.approx(np.std(residual, ddof=1), rel=1e-9)
    assert reg.basis_volatility == pytest.approx(math.sqrt((residual**2).sum() / 34), rel=1e-9)
    assert 0 < reg.r2 < 1


@pytest.mark.parametrize("months, changes, insufficient", [(12, 11, True), (13, 12, False)])
def test_fewer_than_twelve_aligned_changes_is_insufficient_history(months, changes, insufficient):
    rng = np.random.default_rng(3)
    f = 5 + np.cumsum(rng.normal(0, 0.2, months))
    s = f + 0.5 + rng.normal(0, 0.05, months)
    reg = regress(month_ends(s), month_ends(f), "month", "rent")
    assert reg.changes == changes
    assert reg.insufficient_history is insufficient
    assert reg.hedge_ratio == pytest.approx(np.polyfit(np.diff(f), np.diff(s), 1)[0], rel=1e-9)


def test_one_common_period_gives_no_ratio():
    reg = regress(month_ends([5.0]), month_ends([4.0]), "month", "rent")
    assert reg.hedge_ratio is None and reg.changes == 0 and reg.insufficient_history is True


def test_alignment_by_month_uses_each_month_s_last_value_and_only_common_months():
    index = [
        IndexLevel(date(2026, 1, 26), 11.0),  # last of January (listed first, out of order on purpose)
        IndexLevel(date(2026, 1, 5), 10.0),
        IndexLevel(date(2026, 2, 9), 12.0),
        IndexLevel(date(2026, 2, 23), 14.0),  # last of February
        IndexLevel(date(2026, 4, 6), 13.0),
        IndexLevel(date(2026, 4, 27), 15.0),  # last of April (no March in the index)
        IndexLevel(date(2026, 5, 31), 18.0),
        IndexLevel(date(2026, 6, 30), 99.0),  # no June rent: not aligned
    ]
    rent = [
        IndexLevel(date(2026, 1, 31), 20.0),
        IndexLevel(date(2026, 2, 28), 23.0),
        IndexLevel(date(2026, 3, 31), 25.0),  # no March index: not aligned
        IndexLevel(date(2026, 4, 15), 21.0),
        IndexLevel(date(2026, 4, 30), 24.0),  # last of April
        IndexLevel(date(2026, 5, 15), 30.0),
    ]
    reg = regress(rent, index, "month", "rent")
    # Common months Jan, Feb, Apr, May: F 11, 14, 15, 18 -> dF 3, 1, 3; S 20, 23, 24, 30 -> dS 3, 1, 6.
    # Deviations dF 2/3, -4/3, 2/3 and dS -1/3, -7/3, 8/3: Cov = (-2 + 28 + 16) / 9 / 2, Var = 24 / 9 / 2,
    # h* = 42 / 24 = 1.75.
    assert reg.changes == 3
    assert reg.hedge_ratio == pytest.approx(1.75)
    assert reg.insufficient_history is True


def test_alignment_by_week_uses_each_iso_week_s_last_value():
    index = [
        IndexLevel(date(2026, 11, 2), 5.0),  # Mon, week 45
        IndexLevel(date(2026, 11, 6), 5.2),  # Fri, week 45: last
        IndexLevel(date(2026, 11, 13), 5.6),  # week 46
        IndexLevel(date(2026, 11, 16), 5.4),  # week 47 (no rent that week)
        IndexLevel(date(2026, 11, 22), 5.3),
        IndexLevel(date(2026, 11, 23), 5.9),  # Mon, week 48
    ]
    rent = [
        IndexLevel(date(2026, 11, 4), 6.0),
        IndexLevel(date(2026, 11, 11), 6.3),
        IndexLevel(date(2026, 11, 29), 6.9),
    ]  # 11-29 is the Sunday of week 48
    reg = regress(rent, index, "week", "rent")
    # Weeks 45, 46, 48: dF 0.4, 0.3 and dS 0.3, 0.6: deviations (0.05, -0.05) and (-0.15, 0.15) -> h* = -0.015 / 0.005 =
    # -3
    assert reg.changes == 2
    assert reg.hedge_ratio == pytest.approx(-3.0)
    assert reg.rho == pytest.approx(-1.0)
    assert reg.basis_volatility == pytest.approx(0.0, abs=1e-9)


def test_a_constant_rent_is_not_reported_as_perfectly_correlated():
    index = month_ends([5.0, 5.3, 5.1, 5.6, 5.2, 5.4, 5.0, 4.8, 5.1, 5.5, 5.3, 5.2, 5.4, 5.0])
    rent = [IndexLevel(p.date, 6.0) for p in index]
    reg = regress(rent, index, "month", "rent")
    assert reg.hedge_ratio == pytest.approx(0.0)
    # A rent that never moves is not correlated with the index: rho = 1 (and "R^2 = 1, the hedge removes all
    # the rent's variance") together with h* = 0 contradict each other.
    assert reg.rho is None or reg.rho == pytest.approx(0.0)
    assert reg.r2 is None or reg.r2 == pytest.approx(0.0)


# --- exposure -------------------------------------------------------------------------------------


def test_exposure_of_a_fixed_price_offer(ev):
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "fixed")
    assert [(e.month, e.gpu_hours, e.floating) for e in plan.exposure] == [(m, 7300.0, m > 2) for m in range(1, 7)]
    assert [e.reason for e in plan.exposure][:3] == [
        "fixed price",
        "fixed price",
        "after the term: renewal at the market",
    ]
    assert plan.floating_gpu_hours == pytest.approx(4 * 7300)


def test_exposure_of_an_index_linked_offer(ev):
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "indexed")
    assert [(e.month, e.gpu_hours, e.floating) for e in plan.exposure] == [(m, 14600.0, True) for m in range(1, 7)]
    assert [e.reason for e in plan.exposure] == ["index-linked price"] * 4 + [
        "after the term: renewal at the market"
    ] * 2
    assert plan.floating_gpu_hours == pytest.approx(6 * 14600)


def test_a_term_beyond_the_horizon_leaves_nothing_floating(ev):
    plan = hedge_plan(ev, config(horizon_months=2), index_to_as_of(), None, 1.0, "fixed")
    assert [e.floating for e in plan.exposure] == [False, False]
    assert plan.floating_gpu_hours == 0
    assert plan.ladder == [] and plan.stress == []


@pytest.mark.parametrize("offer", ["owned", "tokens"])
def test_owned_and_per_token_offers_have_nothing_to_hedge(ev, offer):
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, offer)
    assert all(e.gpu_hours == 0 and not e.floating for e in plan.exposure)
    assert plan.floating_gpu_hours == 0
    assert plan.ladder == [] and plan.stress == []
    assert "pays no GPU-hour rent" in plan.nothing_to_hedge
    assert any("nothing to hedge" in n for n in plan.notes)


# --- ladder ---------------------------------------------------------------------------------------


def test_ladder_notional_and_contracts_rounded_to_the_nearest(ev):
    # No rent history for a fixed-price offer: h* = 1 assumed. Floating: months 3-6, 7,300 GPU-hours each.
    cfg = config(
        contract_gpu_hours=1000,
        ladder=[
            LadderBucket(first_month=1, last_month=2, share=1.0),
            LadderBucket(first_month=3, last_month=4, share=0.5),
            LadderBucket(first_month=5, last_month=6, share=0.75),
        ],
    )
    plan = hedge_plan(ev, cfg, index_to_as_of(), None, 1.0, "fixed")
    assert plan.hedge_ratio == 1.0
    fixed_months, down, up = plan.ladder
    # months 1-2 do not float: nothing to hedge
    assert (fixed_months.exposed_gpu_hours, fixed_months.contracts, fixed_months.hedged_share) == (0, 0, None)
    # 0.5 x 1 x 14,600 = 7,300 GPU-hours = 7.3 contracts -> 7 (rounded down)
    assert (down.exposed_gpu_hours, down.notional_gpu_hours, down.contracts, down.hedged_gpu_hours) == (
        14600,
        pytest.approx(7300),
        7,
        7000,
    )
    assert down.hedged_share == pytest.approx(7000 / 14600)
    # 0.75 x 1 x 14,600 = 10,950 GPU-hours = 10.95 contracts -> 11 (rounded up)
    assert (up.exposed_gpu_hours, up.notional_gpu_hours, up.contracts, up.hedged_gpu_hours) == (
        14600,
        pytest.approx(10950),
        11,
        11000,
    )
    assert up.hedged_share == pytest.approx(11000 / 14600)


def test_ladder_notional_scales_with_the_hedge_ratio(ev):
    # rent = 0.5 + 1.2 x index exactly: h* = 1.2 (no basis)
    index = index_to_as_of(seed=5)
    rent = [IndexLevel(p.date, 0.5 + 1.2 * p.price) for p in index]
    cfg = config(
        contract_gpu_hours=1000,
        ladder=[
            LadderBucket(first_month=3, last_month=4, share=0.5),
            LadderBucket(first_month=5, last_month=6, share=0.25),
        ],
    )
    plan = hedge_plan(ev, cfg, index, rent, 1.0, "fixed")
    assert plan.hedge_ratio == pytest.approx(1.2)
    up, down = plan.ladder
    # 0.5 x 1.2 x 14,600 = 8,760 -> 8.76 contracts -> 9; 0.25 x 1.2 x 14,600 = 4,380 -> 4.38 -> 4
    assert (up.notional_gpu_hours, up.contracts, up.hedged_gpu_hours) == (pytest.approx(8760), 9, 9000)
    assert (down.notional_gpu_hours, down.contracts, down.hedged_gpu_hours) == (pytest.approx(4380), 4, 4000)


def test_a_ladder_bucket_is_cut_at_the_horizon(ev):
    cfg = config(
        horizon_months=6,
        ladder=[
            LadderBucket(first_month=3, last_month=12, share=0.5),
            LadderBucket(first_month=7, last_month=9, share=0.5),
        ],
    )
    plan = hedge_plan(ev, cfg, index_to_as_of(), None, 1.0, "fixed")
    [row] = plan.ladder
    assert (row.months, row.first_month, row.last_month, row.exposed_gpu_hours) == ("3-6", 3, 6, 4 * 7300)
    assert row.contracts == 20  # 0.5 x 29,200 / 730


# --- stress table ---------------------------------------------------------------------------------


def test_stress_table_of_an_index_linked_offer_by_hand(ev):
    # Index 5.00. Months 1-4: clamp(index x (1 + move) + 0.50, 4.00, 6.00); months 5-6 renew keeping the spread,
    # floor and cap (horizon.renewal: basis, the cash flow's rule), so the same clamp. 14,600 GPU-hours a month.
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "indexed")
    assert plan.index_level == 5.0 and plan.index_date == date(2026, 11, 27)
    assert plan.hedge_ratio == pytest.approx(1.0)
    linked = {-0.40: 4.00, -0.20: 4.50, 0.20: 6.00, 0.40: 6.00}  # 3.50 floored; 6.50 and 7.50 capped
    renewal = linked
    base = 14600 * 6 * 5.50  # 481,800
    # Ladder: months 1-3, 0.5 x 43,800 = 21,900 = 30 contracts; months 4-6, 0.25 x 43,800 = 10,950 = 15 contracts.
    assert [(r.contracts, r.hedged_gpu_hours) for r in plan.ladder] == [(30, 21900), (15, 10950)]
    hedged_hours = 21900 + 10950
    assert [s.index_move for s in plan.stress] == list(MOVES)
    for row in plan.stress:
        move = row.index_move
        unhedged = 14600 * (4 * linked[move] + 2 * renewal[move])
        payoff = hedged_hours * 5.0 * move
        assert row.index_level == pytest.approx(5.0 * (1 + move))
        assert row.unhedged == pytest.approx(unhedged)
        assert row.hedge_payoff == pytest.approx(payoff)
        assert row.hedged == pytest.approx(unhedged - payoff)
        assert row.unhedged_change == pytest.approx(unhedged - base)
        assert row.hedged_change == pytest.approx(unhedged - payoff - base)
    assert [round(s.unhedged) for s in plan.stress] == [350400, 394200, 525600, 525600]
    assert [round(s.hedge_payoff) for s in plan.stress] == [-65700, -32850, 32850, 65700]


def test_stress_table_of_renewals_moves_by_h_times_the_index_change(ev):
    # Fixed at 4.00; months 3-6 renew at 4.00 + 1.2 x (5.00 x move); h* = 1.2 from rent = 0.5 + 1.2 x index.
    index = index_to_as_of(seed=8)
    rent = [IndexLevel(p.date, 0.5 + 1.2 * p.price) for p in index]
    plan = hedge_plan(ev, config(), index, rent, 1.0, "fixed")
    # Ladder: month 3, 0.5 x 1.2 x 7,300 = 4,380 = 6 contracts; months 4-6, 0.25 x 1.2 x 21,900 = 6,570 = 9 contracts.
    assert [(r.contracts, r.hedged_gpu_hours) for r in plan.ladder] == [(6, 4380), (9, 6570)]
    for row in plan.stress:
        unhedged = 4 * 7300 * (4.00 + 1.2 * 5.0 * row.index_move)
        payoff = (4380 + 6570) * 5.0 * row.index_move
        assert row.unhedged == pytest.approx(unhedged)
        assert row.hedge_payoff == pytest.approx(payoff)
        assert row.hedged == pytest.approx(unhedged - payoff)
        assert row.unhedged_change == pytest.approx(4 * 7300 * 1.2 * 5.0 * row.index_move)
        assert row.basis_band == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("period, periods_per_month", [("month", 1.0), ("week", 52 / 12)])
def test_basis_band_is_two_sigma_times_hedged_hours_times_root_periods_ahead(ev, period, periods_per_month):
    rng = np.random.default_rng(99)
    n = 60
    if period == "month":
        dates = [p.date for p in index_to_as_of(n)]
    else:
        dates = [date(2026, 11, 27) - timedelta(days=7 * k) for k in range(n)][::-1]
    f = 5.0 + np.cumsum(rng.normal(0, 0.1, n))
    f += 5.0 - f[-1]
    s = 0.8 + f + np.cumsum(rng.normal(0, 0.03, n))
    index = [IndexLevel(d, float(v)) for d, v in zip(dates, f)]
    rent = [IndexLevel(d, float(v)) for d, v in zip(dates, s)]
    plan = hedge_plan(ev, config(period=period), index, rent, 1.0, "fixed")

    df, ds = np.diff(f), np.diff(s)
    h, a = np.polyfit(df, ds, 1)
    sigma = np.std(ds - (h * df + a), ddof=1)
    assert plan.h_star == pytest.approx(h, rel=1e-9)
    assert plan.basis_volatility == pytest.approx(sigma, rel=1e-9)
    # The recommended ratio: 1 unless scipy's regression interval (t at n - 2) leaves 1 out.
    from scipy import stats

    fit = stats.linregress(df, ds)
    half = stats.t.ppf(0.975, len(df) - 2) * fit.stderr
    h = fit.slope if abs(fit.slope - 1) > half else 1.0
    assert plan.hedge_ratio == pytest.approx(h, rel=1e-9)
    # Ladder by hand: month 3 floats in bucket 1-3; months 4-6 in bucket 4-6; contracts of 730 rounded to the nearest.
    first = math.floor(0.5 * h * 7300 / 730 + 0.5) * 730
    second = math.floor(0.25 * h * 21900 / 730 + 0.5) * 730
    assert [r.hedged_gpu_hours for r in plan.ladder] == [first, second]
    per_month = {3: first, 4: second / 3, 5: second / 3, 6: second / 3}
    # the band is the basis of the hedge recommended: rent changes less h x index changes (at h* the
    # regression's residual)
    sigma_h = np.std(ds - h * df, ddof=1)
    assert plan.band_basis_volatility == pytest.approx(sigma_h, rel=1e-9)
    band = 2 * sigma_h * sum(hours * math.sqrt(m * periods_per_month) for m, hours in per_month.items())
    assert band > 0
    for row in plan.stress:
        assert row.basis_band == pytest.approx(band, rel=1e-9)


def test_the_basis_band_belongs_to_the_recommended_ratio_not_to_h_star(ev):
    # Six monthly changes, index dF = 1, -1, 1, -1, 1, -1 (mean 0, sum of squares 6) and rent
    # dS = dF + e with e = 0.5, 0.5, 0.5, -0.5, -0.5, -0.5 (sum e x dF = 1). h* = 1 + 1 / 6 = 1.1667; its
    # residual e - dF / 6 = 1/3, 2/3, 1/3, -1/3, -2/3, -1/3 (sum of squares 4/3), so the basis volatility is
    # sqrt(4/3 / 5) = 0.5164, se = sqrt(4/3 / 4 / 6) = 0.2357 and t(0.975, 4) = 2.776: the 95% interval
    # 0.513 to 1.821 includes 1, so the ladder uses 1. The hedge then leaves dS - dF = e, whose standard
    # deviation is sqrt(6 x 0.25 / 5) = sqrt(0.3) = 0.5477: the band uses that, not 0.5164.
    index = month_ends([5, 6, 5, 6, 5, 6, 5], (2026, 5))
    index[-1] = IndexLevel(date(2026, 11, 27), 5.0)
    rent = month_ends([6, 7.5, 7.0, 8.5, 7.0, 7.5, 6.0], (2026, 5))
    rent[-1] = IndexLevel(date(2026, 11, 27), 6.0)  # on or before the as-of date, as the index
    plan = hedge_plan(ev, config(), index, rent, 1.0, "fixed")
    assert plan.h_star == pytest.approx(7 / 6)
    assert plan.basis_volatility == pytest.approx(math.sqrt(4 / 3 / 5))
    assert plan.hedge_ratio == 1.0
    assert plan.band_basis_volatility == pytest.approx(math.sqrt(0.3))
    # month 3 floats (bucket 1-3, 0.5 x 7,300 = 3,650 = 5 contracts); months 4-6 (0.25 x 21,900 = 5,475:
    # 7.5 contracts, rounded to 8 = 5,840, spread 5,840 / 3 a month)
    band = 2 * math.sqrt(0.3) * (3_650 * math.sqrt(3) + 5_840 / 3 * (math.sqrt(4) + math.sqrt(5) + math.sqrt(6)))
    assert [row.basis_band for row in plan.stress] == pytest.approx([band] * 4)


# --- where the hedge ratio comes from -------------------------------------------------------------


def test_index_linked_without_rent_history_claims_no_fit(ev):
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "indexed")
    # by contract the rent is index + spread: the ladder uses 1, but nothing was fitted, so no R^2 is claimed
    assert plan.hedge_ratio == 1.0
    assert (plan.h_star, plan.h_star_se, plan.h_star_ci95, plan.rho, plan.r2, plan.basis_volatility) == (
        None,
        None,
        None,
        None,
        None,
        None,
    )
    assert any("by contract" in n and "basis to the settlement index is not measured" in n for n in plan.notes)


def test_without_rent_history_the_basis_band_is_a_stated_prior_never_zero(ev):
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "indexed")
    # the index's monthly changes: +0.2 eight times, -0.3 four times, -0.4 once; mean 0, sum of squares
    # 8 x 0.04 + 4 x 0.09 + 0.16 = 0.84, sd = sqrt(0.84 / 12) = 0.264575. Prior (Hull's cross hedge, rho 0.928, the
    # rent as volatile as the index), at ratio 1: 0.264575 x sqrt(1 + 1 - 2 x 0.928) = 0.264575 x 0.379473 = 0.100399
    sigma_f = math.sqrt(0.84 / 12)
    assert plan.basis_source == "prior"
    assert plan.band_basis_volatility == pytest.approx(sigma_f * math.sqrt(2 - 2 * 0.928), rel=1e-9)
    assert plan.band_basis_volatility == pytest.approx(0.100399, abs=1e-6)
    assert "stated prior" in plan.basis_note and "0.928" in plan.basis_note
    # the band: 2 x basis x each floating month's hedged GPU-hours (its bucket's contracts spread evenly) x sqrt(month)
    floating = {e.month for e in plan.exposure if e.floating}
    band = 0.0
    for row in plan.ladder:
        months = [m for m in range(row.first_month, row.last_month + 1) if m in floating]
        band += sum(2 * plan.band_basis_volatility * row.hedged_gpu_hours / len(months) * math.sqrt(m) for m in months)
    assert band > 0 and all(r.basis_band == pytest.approx(band) for r in plan.stress)
    # a stated correlation of 1 with the index's volatility: no basis at ratio 1, said as the prior's result
    exact = hedge_plan(ev, config(basis_prior={"correlation": 1.0}), index_to_as_of(), None, 1.0, "indexed")
    assert exact.band_basis_volatility == pytest.approx(0.0, abs=1e-12)


def test_the_contract_terms_come_from_procure_yaml_with_every_unconfirmed_term_labelled(ev):
    from procure.render.hedge import hedge_text

    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "indexed")
    contract = plan.contract
    # CME / Silicon Data B200 by default; the 730 GPU-hours a contract is an inference, not a published term
    assert (contract.venue, contract.settlement, contract.gpu_hours, contract.unverified) == (
        "CME Group",
        "cash",
        730,
        ["gpu_hours"],
    )
    assert "730 GPU-hours a contract (unverified" in contract.label and "Silicon Data" in contract.label
    for fmt in ("table", "markdown", "json"):
        text = (
            hedge_text(plan, fmt)
            if fmt != "table"
            else "\n".join(__import__("procure.render.hedge", fromlist=["hedge_summary"]).hedge_summary(plan))
        )
        assert "unverified" in text, fmt
    csv_rows = hedge_text(plan, "csv").splitlines()
    assert csv_rows[0].endswith("contract_gpu_hours,contract_unverified") and all(
        r.endswith(",730.0,gpu_hours") for r in csv_rows[1:]
    )
    # ICE on Ornn's OCPI, 100 GPU-hours a contract, every term confirmed: the ladder counts in 100s, nothing is labelled
    ice = config(
        contract={
            "venue": "ICE",
            "index": "Ornn OCPI B200",
            "gpu_hours": 100,
            "confirmed": ["venue", "index", "settlement", "gpu_hours"],
        }
    )
    plan = hedge_plan(ev, ice, index_to_as_of(), None, 1.0, "indexed")
    assert plan.contract.unverified == [] and "unverified" not in plan.contract.label
    assert all(r.hedged_gpu_hours == r.contracts * 100 for r in plan.ladder) and plan.contract_gpu_hours == 100
    assert all(r.contracts == math.floor(r.notional_gpu_hours / 100 + 0.5) for r in plan.ladder)


def test_index_linked_with_rent_history_uses_it(ev):
    index = index_to_as_of(seed=4)
    rent = [IndexLevel(p.date, 0.5 + 0.9 * p.price) for p in index]
    plan = hedge_plan(ev, config(), index, rent, 1.0, "indexed")
    # an exact fit: standard error 0, so the interval [0.9, 0.9] leaves 1 out and the ladder uses 0.9
    assert plan.h_star == pytest.approx(0.9)
    assert plan.h_star_se == pytest.approx(0.0, abs=1e-9)
    assert plan.hedge_ratio == pytest.approx(0.9)


def test_a_fixed_price_offer_without_rent_history_claims_no_tracking(ev):
    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "fixed")
    assert plan.hedge_ratio == 1.0
    assert (plan.h_star, plan.rho, plan.r2, plan.basis_volatility) == (None, None, None, None)
    assert plan.regression.source == "none"
    assert any("no tracking is claimed" in n and "basis is not measured" in n for n in plan.notes)


def test_standard_error_and_interval_of_h_star_against_scipy():
    # A noisy rent: h* is the OLS slope; its standard error and 95% interval must match scipy's linregress
    # (t with n - 2 degrees of freedom), a second implementation.
    from scipy import stats

    index = index_to_as_of(n=30, seed=21)
    noise = np.random.default_rng(3).normal(0, 0.05, len(index))
    rent = [IndexLevel(p.date, 0.4 + 0.7 * p.price + float(e)) for p, e in zip(index, noise)]
    fit = regress(rent, index, "month", "test")
    ds = np.diff([p.price for p in rent])
    df = np.diff([p.price for p in index])
    ref = stats.linregress(df, ds)
    half = stats.t.ppf(0.975, len(df) - 2) * ref.stderr
    assert fit.hedge_ratio == pytest.approx(ref.slope, rel=1e-9)
    assert fit.h_star_se == pytest.approx(ref.stderr, rel=1e-9)
    assert fit.h_star_ci95 == pytest.approx((ref.slope - half, ref.slope + half), rel=1e-9)


@pytest.mark.parametrize("slope, noise, expected_is_h", [(1.05, 0.10, False), (0.5, 0.01, True)])
def test_recommended_ratio_is_one_unless_h_star_differs_significantly(ev, slope, noise, expected_is_h):
    index = index_to_as_of(n=30, seed=11)
    eps = np.random.default_rng(5).normal(0, noise, len(index))
    rent = [IndexLevel(p.date, slope * p.price + float(e)) for p, e in zip(index, eps)]
    plan = hedge_plan(ev, config(), index, rent, 1.0, "fixed")
    low, high = plan.h_star_ci95
    assert (low > 1 or high < 1) is expected_is_h
    assert plan.hedge_ratio == (plan.h_star if expected_is_h else 1.0)
    assert plan.hedge_ratio_rule.startswith("hedge ratio 1 unless the 95% interval")


def test_exposure_starts_at_delivery_and_follows_the_ramp(ev):
    # indexed delivered in month 3 with a ramp of 5 then 10 GPUs (of its 20): nothing before delivery,
    # then 5 x 730 = 3,650 and 10 x 730 = 7,300 GPU-hours, then 14,600; its 4-month term runs months 3-6.
    record = ev.offer("indexed")
    from procure.model.inputs import ContractTerms, Ramp

    # January 2027 is month 3 when month 1 is the as-of month, November 2026
    terms = record.terms.model_copy(
        update={"delivery": date(2027, 1, 20), "contract": ContractTerms(ramp=Ramp(gpus_by_month=[5, 10]))}
    )
    moved = ev.model_copy(
        update={"offers": [record.model_copy(update={"terms": terms}) if o.id == "indexed" else o for o in ev.offers]}
    )
    plan = hedge_plan(moved, config(), index_to_as_of(), None, 1.0, "indexed")
    assert [(e.month, e.gpu_hours, e.floating) for e in plan.exposure] == [
        (1, 0.0, False),
        (2, 0.0, False),
        (3, 3650.0, True),
        (4, 7300.0, True),
        (5, 14600.0, True),
        (6, 14600.0, True),
    ]
    assert plan.exposure[0].reason == "before delivery: nothing to hedge"
    assert any("delivered in month 3" in n for n in plan.notes)


def test_stress_at_the_forward(ev):
    # hedge.forward 5.50: the index moves from 5.50, futures bought at 5.50 pay hedged hours x 5.50 x move.
    # fixed (4.00, 2 months) renews at basis: 4.00 + (5.50 x (1 + move) - 5.00) in months 3-6.
    plan = hedge_plan(ev, config(forward=5.50), index_to_as_of(), None, 1.0, "fixed")
    assert plan.stress_level == 5.50 and "forward 5.50" in plan.stress_reference
    hedged = sum(r.hedged_gpu_hours for r in plan.ladder)
    base = 4 * 7300 * (4.00 + 0.50)
    for row in plan.stress:
        assert row.index_level == pytest.approx(5.50 * (1 + row.index_move))
        assert row.unhedged == pytest.approx(4 * 7300 * (4.00 + 5.50 * (1 + row.index_move) - 5.00))
        assert row.hedge_payoff == pytest.approx(hedged * 5.50 * row.index_move)
        assert row.unhedged_change == pytest.approx(row.unhedged - base)
    # no forward: today's index, and it says so
    flat = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "fixed")
    assert flat.stress_level == 5.0 and "no forward given" in flat.stress_reference


def test_nothing_floating_says_so_instead_of_an_empty_table(ev):
    plan = hedge_plan(ev, config(horizon_months=2), index_to_as_of(), None, 1.0, "fixed")
    assert plan.floating_gpu_hours == 0
    assert plan.nothing_to_hedge and "fixed for the whole 2-month hedge horizon" in plan.nothing_to_hedge
    assert plan.stress == [] and plan.ladder == []


def test_index_and_rent_after_the_as_of_date_are_ignored(ev):
    index = index_to_as_of() + [IndexLevel(date(2026, 12, 31), 50.0)]
    rent = [IndexLevel(p.date, p.price + 0.8) for p in index_to_as_of()] + [IndexLevel(date(2026, 12, 31), 1.0)]
    plan = hedge_plan(ev, config(), index, rent, 1.0, "fixed")
    assert (plan.index_date, plan.index_level) == (date(2026, 11, 27), 5.0)
    assert plan.regression.changes == 13
    assert plan.hedge_ratio == pytest.approx(1.0)


def test_no_index_level_on_or_before_the_as_of_date_is_an_input_error(ev):
    with pytest.raises(InputError) as caught:
        hedge_plan(ev, config(), [IndexLevel(date(2026, 12, 31), 5.0)], None, 1.0, "fixed")
    assert "2026-11-29" in str(caught.value)


def test_an_unknown_offer_is_an_input_error(ev):
    with pytest.raises(InputError) as caught:
        hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "nope")
    assert "nope" in str(caught.value)


def test_the_limits_are_stated(ev):
    limits = " ".join(hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "fixed").limits)
    assert "failed deployment" in limits and "customer pay" in limits and "basis" in limits
    assert (
        "tenors exist and trade" in limits
        and "index the contract settles on" in limits
        and "longer fixed-price term" in limits
        and "swap" in limits
    )


def test_the_hedge_and_the_cash_flow_renew_by_the_same_rule(ev):
    # fixed: 4.00 for 2 months, index 5.00, basis renewal. The hedge's +20% stress prices months 3-6 at
    # 4.00 + 1 x (6.00 - 5.00) = 5.00 a GPU-hour; the cash flow with the index at 6.00 must agree.
    from procure.analysis.cashflow import schedule
    from procure.model.inputs import HorizonConfig

    plan = hedge_plan(ev, config(), index_to_as_of(), None, 1.0, "fixed")
    up = next(r for r in plan.stress if r.index_move == pytest.approx(0.20))
    assert up.unhedged == pytest.approx(4 * 7300 * 5.00)
    # an index growing 20% a year stands at 5.00 x 1.2 = 6.00 in month 12, a renewal month of the cash flow
    flow = schedule(ev.offer("fixed"), 12, HorizonConfig(index_growth=0.20), AS_OF, 1.0, 5.0, 0.1, 100_000, None)
    assert flow.months[12].index_level == pytest.approx(6.00)
    assert flow.months[12].phase == "renewal"
    assert flow.months[12].rent == pytest.approx(5.00 * 7300)


def test_too_short_an_index_for_a_prior_leaves_the_basis_unknown_not_zero(ev):
    from procure.render.hedge import hedge_text

    plan = hedge_plan(ev, config(), index_to_as_of(n=2), None, 1.0, "indexed")
    # one index change: no volatility to scale a prior from
    assert plan.band_basis_volatility is None and all(r.basis_band is None for r in plan.stress)
    assert any("too short an index history" in n for n in plan.notes)
    assert "| unknown |" in hedge_text(plan, "markdown") and "+/- 0" not in hedge_text(plan, "markdown")
