"""The hedge ratio and the basis: h* = Cov(dS, dF) / Var(dF) fitted on aligned period changes of the rent S and the
index F, with its correlation, R^2 and basis volatility; without a rent history, the basis a stated prior (Hull, ch.
3); the ratio recommended; and the band the basis leaves around a hedged position (procure/analysis/hedging.py uses
them)."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
from pydantic import BaseModel, Field

from procure.io.workspace import IndexLevel
from procure.model.inputs import HedgeConfig

MIN_CHANGES = 12  # aligned period changes below which the history is insufficient to fit h*
# The recommended ratio: 1 unless the fitted h* differs from 1 significantly (its 95% interval leaves 1 out).
RATIO_RULE = "hedge ratio 1 unless the 95% interval of the fitted h* excludes 1, then h*"


class Regression(BaseModel):
    hedge_ratio: float | None = Field(description="the fitted h* (OLS slope of rent changes on index changes)")
    h_star_se: float | None = Field(None, description="standard error of h* (OLS, n - 2 degrees of freedom)")
    h_star_ci95: tuple[float, float] | None = Field(
        None, description="95% interval of h* (Student t, n - 2 degrees of freedom)"
    )
    rho: float | None
    r2: float | None
    basis_volatility: float | None = Field(
        description="std of the rent changes the index leaves unexplained, per period"
    )
    changes: int = Field(description="aligned period changes used")
    insufficient_history: bool
    source: str


def period_key(day: date, period: str) -> tuple[int, int]:
    if period == "week":
        year, week, _ = day.isocalendar()
        return (year, week)
    return (day.year, day.month)


def last_per_period(series: list[IndexLevel], period: str) -> dict[tuple[int, int], float]:
    found: dict[tuple[int, int], float] = {}
    for point in sorted(series, key=lambda p: p.date):
        found[period_key(point.date, period)] = point.price
    return found


def aligned_changes(rent: list[IndexLevel], index: list[IndexLevel], period: str) -> tuple[np.ndarray, np.ndarray]:
    """Period changes of the rent and of the index over the periods both have (each period's last value)."""
    s, f = last_per_period(rent, period), last_per_period(index, period)
    common = sorted(set(s) & set(f))
    return np.diff([s[k] for k in common]), np.diff([f[k] for k in common])


def no_fit(changes: int, source: str) -> Regression:
    """No h* fitted: too few aligned changes (`changes`), or no rent history at all (source "none")."""
    return Regression(
        hedge_ratio=None,
        rho=None,
        r2=None,
        basis_volatility=None,
        changes=changes,
        insufficient_history=True,
        source=source,
    )


def regress(rent: list[IndexLevel], index: list[IndexLevel], period: str, source: str) -> Regression:
    """h*, rho, R^2 and basis volatility on aligned period changes of rent and index."""
    ds, df = aligned_changes(rent, index, period)
    n = len(ds)
    if n < 2 or float(np.var(df)) == 0.0:
        return no_fit(n, source)
    cov = np.cov(ds, df, ddof=1)
    h = float(cov[0, 1] / cov[1, 1])
    residual = (ds - ds.mean()) - h * (df - df.mean())
    se, ci = _slope_interval(residual, df, h)
    if cov[0, 0] == 0:  # a rent that never moved: nothing to correlate, no price risk in the history
        return Regression(
            hedge_ratio=h,
            h_star_se=se,
            h_star_ci95=ci,
            rho=None,
            r2=None,
            basis_volatility=0.0,
            changes=n,
            insufficient_history=n < MIN_CHANGES,
            source=source,
        )
    rho = float(cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1]))
    basis = float(np.std(residual, ddof=1)) if n > 1 else 0.0
    return Regression(
        hedge_ratio=h,
        h_star_se=se,
        h_star_ci95=ci,
        rho=rho,
        r2=rho * rho,
        basis_volatility=basis,
        changes=n,
        insufficient_history=n < MIN_CHANGES,
        source=source,
    )


def _slope_interval(residual: np.ndarray, df: np.ndarray, h: float) -> tuple[float | None, tuple[float, float] | None]:
    """The OLS standard error of the slope, sqrt(sum e^2 / (n - 2) / sum (dF - mean)^2), and its 95%
    interval with Student's t at n - 2 degrees of freedom (none with fewer than 3 changes)."""
    n = len(df)
    if n < 3:
        return None, None
    from scipy.special import stdtrit  # Student's t quantile (scipy.stats.t.ppf, without importing scipy.stats: 1 s)

    spread = float(((df - df.mean()) ** 2).sum())
    se = math.sqrt(float((residual**2).sum()) / (n - 2) / spread)
    half = float(stdtrit(n - 2, 0.975)) * se
    return se, (h - half, h + half)


def prior_basis(history: list[IndexLevel], config: HedgeConfig, ratio: float) -> tuple[float | None, str]:
    """The basis volatility per period assumed without a rent history, and how it was formed: the standard deviation
    of rent changes less `ratio` x index changes when rent changes have volatility_ratio x the index's own and
    correlation rho with it, sigma_F x sqrt(k^2 + h^2 - 2 h rho k) (Hull, ch. 3). None: fewer than 3 index levels
    in the history, so not even the index's volatility is known."""
    levels = last_per_period(history, config.period)
    changes = np.diff([levels[k] for k in sorted(levels)])
    prior = config.basis_prior
    if len(changes) < 2:
        return (
            None,
            f"no rent history and too short an index history ({len(changes)} {config.period}ly changes) to state a "
            "basis prior: the basis is unknown",
        )
    sigma_f = float(np.std(changes, ddof=1))
    k, rho = prior.volatility_ratio, prior.correlation
    basis = sigma_f * math.sqrt(max(0.0, k * k + ratio * ratio - 2 * ratio * rho * k))
    note = (
        f"no rent history: the basis is a stated prior (hedge.basis_prior), not a fit: rent changes taken at {k:g} x "
        "the index's "
        f"volatility ({sigma_f:.4f} per {config.period}, {len(changes)} changes of the index) with correlation {rho:g} "
        "to it "
        "(default 0.928: Hull's cross-hedge example, jet fuel on heating oil futures), so the basis volatility at "
        "ratio "
        f"{ratio:g} is {sigma_f:.4f} x sqrt({k:g}^2 + {ratio:g}^2 - 2 x {ratio:g} x {rho:g} x {k:g}) = {basis:.4f} per "
        f"{config.period}"
    )
    return basis, note


def recommended_ratio(regression: Regression) -> float:
    """1 unless the fitted h* differs from 1 significantly (its 95% interval excludes 1), then h*.

    A hedge ratio is a noisy estimate; a one-for-one hedge of a rent that moves with the index is
    the robust default, and only a history that clearly says otherwise moves it."""
    h, ci = regression.hedge_ratio, regression.h_star_ci95
    if h is None or ci is None:
        return 1.0
    return h if (ci[0] > 1.0 or ci[1] < 1.0) else 1.0


def basis_band(basis: float | None, hedged_by_month: dict[int, float], periods_per_month: float) -> float | None:
    """+/- 2 x the basis volatility x each month's hedged GPU-hours x the square root of its periods ahead (None: the
    basis is unknown). A band is a width: short hedges (a negative h*) carry basis risk too."""
    if basis is None:
        return None
    return (
        2
        * basis
        * sum(
            abs(hours_hedged) * math.sqrt(month * periods_per_month) for month, hours_hedged in hedged_by_month.items()
        )
    )
