"""Hedging the rental price: exposure, hedge ratio, basis risk, a layered ladder and a stress table.

A cash-settled GPU-hour future pays the change of an index. It offsets what the buyer pays only as
far as the rent tracks the index: the minimum-variance hedge ratio h* = Cov(dS, dF) / Var(dF) is
estimated on aligned period changes (differences, not returns) of the rent S and the index F, with
its correlation, R^2 (the share of rent variance a hedge removes) and the basis volatility (what it
cannot remove). Paying above the index is not by itself a bad hedge: rent = index + a constant gives
h* = 1 and R^2 = 1. What matters is whether the index tracks the rent.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from procure.costing import HOURS_PER_MONTH, index_linked_rent
from procure.errors import InputError, Problem
from procure.evaluate import Evaluation, OfferRecord
from procure.models import HedgeConfig
from procure.workspace import IndexLevel, Workspace, read_price_series

MIN_CHANGES = 12
STRESS_MOVES = (-0.40, -0.20, 0.20, 0.40)
LIMITS = (
    "A rental price hedge offsets changes in the GPU-hour price only: it does not fix a failed deployment, "
    "an operator that underdelivers, or a service that misses its gates.",
    "It does not make a customer pay: revenue risk stays where it is.",
    "Paying above the index is not by itself a bad hedge; what matters is whether changes in the index track "
    "changes in your rent. A breakdown between the two (basis) leaves real price risk, shown here as the basis band.",
    "Futures on GPU-hour indices are new: contract sizes, liquidity and the index methodology can change; "
    "the contract count assumes the size configured in procure.yaml (hedge.contract_gpu_hours).",
)


class Regression(BaseModel):
    hedge_ratio: float | None
    rho: float | None
    r2: float | None
    basis_volatility: float | None = Field(description="std of the rent changes the index leaves unexplained, per period")
    changes: int = Field(description="aligned period changes used")
    insufficient_history: bool
    source: str


class ExposureMonth(BaseModel):
    month: int
    gpu_hours: float
    floating: bool
    reason: str


class LadderRow(BaseModel):
    months: str
    first_month: int
    last_month: int
    exposed_gpu_hours: float
    share: float
    notional_gpu_hours: float = Field(description="share x hedge ratio x exposed GPU-hours")
    contracts: int
    hedged_gpu_hours: float = Field(description="contracts x contract size")
    hedged_share: float | None = Field(description="hedged GPU-hours / exposed GPU-hours")


class StressRow(BaseModel):
    index_move: float
    index_level: float
    unhedged: float = Field(description="floating cost over the horizon without a hedge")
    hedge_payoff: float
    hedged: float
    unhedged_change: float
    hedged_change: float
    basis_band: float = Field(description="+/- 2 sigma of basis over the hedged months")


class HedgePlan(BaseModel):
    offer: str
    vendor: str
    currency: str
    as_of: date
    horizon_months: int
    period: str
    index_date: date
    index_level: float
    hedge_ratio: float | None
    rho: float | None
    r2: float | None
    basis_volatility: float | None
    regression: Regression
    exposure: list[ExposureMonth]
    floating_gpu_hours: float
    contract_gpu_hours: float
    ladder: list[LadderRow]
    stress: list[StressRow]
    limits: list[str]
    notes: list[str]


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


def regress(rent: list[IndexLevel], index: list[IndexLevel], period: str, source: str) -> Regression:
    """h*, rho, R^2 and basis volatility on aligned period changes of rent and index."""
    s, f = last_per_period(rent, period), last_per_period(index, period)
    common = sorted(set(s) & set(f))
    ds = np.diff([s[k] for k in common])
    df = np.diff([f[k] for k in common])
    n = len(ds)
    if n < 2 or float(np.var(df)) == 0.0:
        return Regression(hedge_ratio=None, rho=None, r2=None, basis_volatility=None, changes=n, insufficient_history=True, source=source)
    cov = np.cov(ds, df, ddof=1)
    h = float(cov[0, 1] / cov[1, 1])
    if cov[0, 0] == 0:  # a rent that never moved: nothing to correlate, no price risk in the history
        return Regression(hedge_ratio=h, rho=None, r2=None, basis_volatility=0.0, changes=n, insufficient_history=n < MIN_CHANGES, source=source)
    rho = float(cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1]))
    residual = (ds - ds.mean()) - h * (df - df.mean())
    basis = float(np.std(residual, ddof=1)) if n > 1 else 0.0
    return Regression(hedge_ratio=h, rho=rho, r2=rho * rho, basis_volatility=basis, changes=n, insufficient_history=n < MIN_CHANGES, source=source)


def _floating_rent(record: OfferRecord, ev: Evaluation, fx: float, index_level: float, h: float, move: float, index_linked_month: bool) -> float:
    """The rent per GPU-hour in a floating month when the index moves by `move`."""
    new_index = index_level * (1 + move)
    terms = record.terms.pricing
    if index_linked_month and terms.index_linked is not None:
        linked = terms.index_linked
        return index_linked_rent(new_index, linked.spread, linked.floor, linked.cap, fx, terms.discount)
    # A renewal reprices with the market: today's rent moved by h* x the index change.
    return (record.metrics["rent"] or 0.0) + h * (new_index - index_level)


def hedge_plan(
    ev: Evaluation,
    config: HedgeConfig,
    index: list[IndexLevel],
    rent: list[IndexLevel] | None,
    fx: float,
    offer_id: str | None = None,
    rent_source: str = "market/rent.csv",
) -> HedgePlan:
    offer_id = offer_id or config.offer or ev.summary.recommended
    if offer_id is None:
        raise InputError([Problem("hedge", None, "--offer", "no acceptable offer to hedge: name one with --offer")])
    try:
        record = ev.offer(offer_id)
    except KeyError:
        raise InputError([Problem("offers/", None, "--offer", f"no offer with id '{offer_id}'")]) from None
    latest = max((p for p in index if p.date <= ev.as_of), key=lambda p: p.date, default=None)
    if latest is None:
        raise InputError([Problem("market/index.csv", None, "", f"no index level on or before {ev.as_of}: hedging needs an index history")])
    history = [p for p in index if p.date <= ev.as_of]
    notes: list[str] = []
    linked = record.terms.pricing.index_linked

    # Regression: your rent against the index.
    if rent:
        regression = regress([p for p in rent if p.date <= ev.as_of], history, config.period, rent_source)
    elif linked is not None:
        implied = [IndexLevel(p.date, p.price + linked.spread * fx) for p in history]
        regression = regress(implied, history, config.period, "index + spread (no rent history)")
        notes.append("no rent history: the rent of an index-linked offer is index + spread, so h* = 1 by construction")
    else:
        regression = Regression(hedge_ratio=1.0, rho=1.0, r2=1.0, basis_volatility=0.0, changes=0, insufficient_history=True, source="assumed")
        notes.append("no rent history (market/rent.csv): assumed the rent moves one for one with the index (h* = 1), no basis measured")
    if regression.insufficient_history:
        notes.append(f"insufficient history: {regression.changes} aligned {config.period}ly changes (at least {MIN_CHANGES} needed for a reliable hedge ratio)")
    if regression.hedge_ratio is None:
        notes.append("the hedge ratio cannot be estimated from this history: the ladder uses h* = 1")
    h = regression.hedge_ratio if regression.hedge_ratio is not None else 1.0
    basis = regression.basis_volatility or 0.0

    # Exposure by month.
    exposure = []
    billed = record.metrics.get("billed_gpus")
    hours = (billed or 0.0) * HOURS_PER_MONTH
    if record.pricing_basis in ("owned", "per_token"):
        kind = "an owned offer" if record.pricing_basis == "owned" else "a per-token offer"
        notes.append(f"{kind} pays no GPU-hour rent: nothing to hedge against a rental index")
        hours = 0.0
    for month in range(1, config.horizon_months + 1):
        if hours == 0.0:
            exposure.append(ExposureMonth(month=month, gpu_hours=0.0, floating=False, reason="no rental exposure"))
        elif linked is not None and month <= record.term_months:
            exposure.append(ExposureMonth(month=month, gpu_hours=hours, floating=True, reason="index-linked price"))
        elif month > record.term_months:
            exposure.append(ExposureMonth(month=month, gpu_hours=hours, floating=True, reason="after the term: renewal at the market"))
        else:
            exposure.append(ExposureMonth(month=month, gpu_hours=hours, floating=False, reason="fixed price"))
    if linked is not None and linked.cap is not None:
        notes.append(f"the offer's cap ({linked.cap:.2f} {record.currency}) already limits the rent above it; a hedge beyond the cap pays out without a matching cost")
    if linked is not None and linked.floor is not None:
        notes.append(f"the offer's floor ({linked.floor:.2f} {record.currency}) keeps the rent from following the index below it; a hedge then loses without a matching saving")

    # Ladder.
    ladder = []
    for bucket in sorted(config.ladder, key=lambda b: b.first_month):
        last = min(bucket.last_month, config.horizon_months)
        if bucket.first_month > last:
            continue
        exposed = sum(e.gpu_hours for e in exposure if e.floating and bucket.first_month <= e.month <= last)
        notional = bucket.share * h * exposed
        contracts = int(math.floor(notional / config.contract_gpu_hours + 0.5))
        hedged = contracts * config.contract_gpu_hours
        ladder.append(
            LadderRow(
                months=f"{bucket.first_month}-{last}",
                first_month=bucket.first_month,
                last_month=last,
                exposed_gpu_hours=exposed,
                share=bucket.share,
                notional_gpu_hours=notional,
                contracts=contracts,
                hedged_gpu_hours=hedged,
                hedged_share=hedged / exposed if exposed else None,
            )
        )

    # Hedged GPU-hours per month: each bucket's contracts spread evenly over its floating months.
    hedged_by_month: dict[int, float] = {}
    for row in ladder:
        months = [e.month for e in exposure if e.floating and row.first_month <= e.month <= row.last_month]
        for month in months:
            hedged_by_month[month] = row.hedged_gpu_hours / len(months)
    periods_per_month = 52 / 12 if config.period == "week" else 1.0

    def floating_cost(move: float) -> float:
        return sum(
            e.gpu_hours * _floating_rent(record, ev, fx, latest.price, h, move, e.reason == "index-linked price") for e in exposure if e.floating
        )

    base = floating_cost(0.0)
    # A band is a width: short hedges (a negative h*) carry basis risk too.
    band = 2 * basis * sum(abs(hours_hedged) * math.sqrt(month * periods_per_month) for month, hours_hedged in hedged_by_month.items())
    stress = []
    for move in STRESS_MOVES:
        unhedged = floating_cost(move)
        payoff = sum(row.hedged_gpu_hours for row in ladder) * latest.price * move
        stress.append(
            StressRow(
                index_move=move,
                index_level=latest.price * (1 + move),
                unhedged=unhedged,
                hedge_payoff=payoff,
                hedged=unhedged - payoff,
                unhedged_change=unhedged - base,
                hedged_change=unhedged - payoff - base,
                basis_band=band,
            )
        )
    return HedgePlan(
        offer=record.id,
        vendor=record.vendor,
        currency=ev.currency,
        as_of=ev.as_of,
        horizon_months=config.horizon_months,
        period=config.period,
        index_date=latest.date,
        index_level=latest.price,
        hedge_ratio=regression.hedge_ratio,
        rho=regression.rho,
        r2=regression.r2,
        basis_volatility=regression.basis_volatility,
        regression=regression,
        exposure=exposure,
        floating_gpu_hours=sum(e.gpu_hours for e in exposure if e.floating),
        contract_gpu_hours=config.contract_gpu_hours,
        ladder=ladder,
        stress=stress,
        limits=list(LIMITS),
        notes=notes,
    )


def load_series(path: Path, display: str | None = None) -> list[IndexLevel]:
    levels, problems = read_price_series(path, display or str(path))
    if problems:
        raise InputError(problems)
    return levels


def plan_for_workspace(ws: Workspace, ev: Evaluation, offer: str | None = None, index: Path | None = None, rent: Path | None = None) -> HedgePlan:
    """The hedge plan with the workspace's defaults: market/index.csv, and market/rent.csv for an offer
    priced at the market (an index-linked offer's rent is index + spread by contract; a rent history
    is used for it only when given explicitly)."""
    chosen = offer or ws.config.hedge.offer or ev.summary.recommended
    record = next((o for o in ev.offers if o.id == chosen), None)
    fx = ws.fx_rate(record.currency) if record else 1.0
    index_levels = load_series(index) if index is not None else ws.index
    default_rent = ws.root / "market" / "rent.csv"
    if rent is not None:
        rent_levels, source = load_series(rent), str(rent)
    elif default_rent.is_file() and not (record and record.pricing_basis == "index"):
        rent_levels, source = load_series(default_rent, "market/rent.csv"), "market/rent.csv"
    else:
        rent_levels, source = None, ""
    return hedge_plan(ev, ws.config.hedge, index_levels, rent_levels, fx, chosen, source)
