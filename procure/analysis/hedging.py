"""Hedging the rental price: exposure, hedge ratio, basis risk, a layered ladder and a stress table.

A cash-settled GPU-hour future pays the change of an index. It offsets what the buyer pays only as
far as the rent tracks the index: the minimum-variance hedge ratio h* = Cov(dS, dF) / Var(dF) is
estimated on aligned period changes (differences, not returns) of the rent S and the index F, with
its correlation, R^2 (the share of rent variance a hedge removes) and the basis volatility (what it
cannot remove). Paying above the index is not by itself a bad hedge: rent = index + a constant gives
h* = 1 and R^2 = 1. What matters is whether the index tracks the rent.

The contract is procure.yaml's `hedge.contract`: its venue, settlement index, settlement and size,
by default CME's B200 futures on Silicon Data's index (model/inputs.py, FuturesContract, with the
sources); every term not confirmed against the exchange's specification is labelled unverified in
every output. Without a rent history the basis is a stated prior (`hedge.basis_prior`), never 0: the
variance of a hedged position, sigma_S^2 + h^2 sigma_F^2 - 2 h rho sigma_S sigma_F (Hull, ch. 3), with
sigma_F the index's own volatility, sigma_S = volatility_ratio x sigma_F and rho the stated correlation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from procure.analysis.cashflow import RENEWAL_RULES, contract_factor, renewal_rent, service_months
from procure.analysis.evaluate import Evaluation
from procure.analysis.hedge_ratio import (
    MIN_CHANGES,
    RATIO_RULE,
    Regression,
    aligned_changes,
    basis_band,
    no_fit,
    prior_basis,
    recommended_ratio,
    regress,
)
from procure.analysis.record import OfferRecord
from procure.errors import InputError, Problem, unknown_offer
from procure.io.workspace import IndexLevel, PriceSeries, Workspace
from procure.model.costing import HOURS_PER_MONTH
from procure.model.inputs import CONTRACT_TERMS, HedgeConfig, HorizonConfig
from procure.model.kinds import kind_named, kind_of

if TYPE_CHECKING:
    from procure.analysis.plan import PlanResult

STRESS_MOVES = (-0.40, -0.20, 0.20, 0.40)
LIMITS = (
    "A rental price hedge offsets changes in the GPU-hour price only: it does not fix a failed deployment, "
    "an operator that underdelivers, or a service that misses its gates.",
    "It does not make a customer pay: revenue risk stays where it is.",
    "Paying above the index is not by itself a bad hedge; what matters is whether changes in the index track "
    "changes in your rent. A breakdown between the two (basis) leaves real price risk, shown here as the basis band.",
    "Futures on GPU-hour indices are new: contract sizes, liquidity and the index methodology can change; "
    "the contract count assumes the size configured in procure.yaml (hedge.contract), and a term not confirmed against "
    "the exchange's contract specification is labelled unverified.",
    "Check that contracts at these tenors exist and trade: a ladder into months no exchange lists, or lists without "
    "buyers and sellers, cannot be built or unwound at a fair price.",
    "h* must be fitted against the index the contract settles on: a ratio fitted on another benchmark (a different "
    "method, mix of quotes or scope) carries that benchmark's basis to yours.",
    "A longer fixed-price term, or a swap with the vendor (a fixed price for the index-linked months), may hedge "
    "better "
    "than futures: it removes the price risk at its source, with no basis and no margin calls.",
)


# What the default contract's public sources leave out (model/inputs.py, FuturesContract).
UNPUBLISHED_TERMS = "tick size and final-settlement averaging not found published"
TERM_WORDS = {"venue": "venue", "index": "settlement index", "settlement": "settlement", "gpu_hours": "contract size"}


class HedgeContract(BaseModel):
    """The contract the ladder counts in, and which of its terms are unverified."""

    venue: str
    index: str
    settlement: str
    gpu_hours: float
    unverified: list[str] = Field(
        description="terms not confirmed against the exchange's contract specification (hedge.contract.confirmed)"
    )
    label: str = Field(description="the contract in words, every unverified term marked: what every output shows")


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
    basis_band: float | None = Field(
        description="+/- 2 sigma of basis over the hedged months (null: the basis is unknown, never 0 for want of a "
        "history)"
    )


class HedgePlan(BaseModel):
    offer: str
    vendor: str
    currency: str
    as_of: date
    horizon_months: int
    period: str
    index_date: date
    index_level: float
    h_star: float | None = Field(description="the fitted minimum-variance hedge ratio; null without a rent history")
    h_star_se: float | None
    h_star_ci95: tuple[float, float] | None
    hedge_ratio: float = Field(description="the recommended ratio the ladder uses (see hedge_ratio_rule)")
    hedge_ratio_rule: str
    stress_level: float = Field(description="the index level the stress moves from: the forward, else today's index")
    stress_reference: str
    renewal: str = Field("", description="the renewal rule for months after the term (horizon.renewal)")
    nothing_to_hedge: str | None = Field(None, description="why nothing floats, when nothing does")
    rho: float | None
    r2: float | None
    basis_volatility: float | None
    band_basis_volatility: float | None = Field(
        0.0,
        description="std of rent changes less the recommended ratio x index changes, per period: the basis of the "
        "hedge recommended, the width of the band",
    )
    regression: Regression
    exposure: list[ExposureMonth]
    floating_gpu_hours: float
    contract_gpu_hours: float
    contract: HedgeContract | None = None
    basis_source: str = Field(
        "fitted", description="fitted (from the rent history) or prior (hedge.basis_prior: no rent history to fit)"
    )
    basis_note: str = Field("", description="where the basis band's volatility comes from, in words")
    ladder: list[LadderRow]
    stress: list[StressRow]
    limits: list[str]
    notes: list[str]

    @property
    def contracts(self) -> int:
        """The contracts the ladder buys, every bucket together: the number a board approves."""
        return sum(r.contracts for r in self.ladder)


def contract_terms(config: HedgeConfig) -> HedgeContract:
    """The configured contract with its unverified terms named (hedge.contract.confirmed), and its label."""
    spec = config.contract
    size = config.contract_size
    unverified = [term for term in CONTRACT_TERMS if term not in spec.confirmed]
    mark = {term: " (unverified)" if term in unverified else "" for term in CONTRACT_TERMS}
    if "gpu_hours" in unverified and spec.gpu_hours is None and size == HOURS_PER_MONTH:
        mark["gpu_hours"] = (
            " (unverified: one GPU for a 730-hour month, inferred from 'each contract represents one month's rent')"
        )
    label = (
        f"{spec.venue}{mark['venue']} futures on {spec.index}{mark['index']}, "
        f"{spec.settlement}-settled{mark['settlement']}, "
        f"{size:,.0f} GPU-hours a contract{mark['gpu_hours']}"
    )
    if unverified:
        label += f"; {UNPUBLISHED_TERMS}: confirm {', '.join(TERM_WORDS[t] for t in unverified)} with the exchange"
    return HedgeContract(
        venue=spec.venue,
        index=spec.index,
        settlement=spec.settlement,
        gpu_hours=size,
        unverified=unverified,
        label=label,
    )


def build_ladder(exposure: list[ExposureMonth], config: HedgeConfig, ratio: float) -> list[LadderRow]:
    """The layered ladder over floating GPU-hours by month: each bucket hedges its share x ratio of the
    floating hours in its months, in whole contracts of hedge.contract's size."""
    ladder = []
    for bucket in sorted(config.ladder, key=lambda b: b.first_month):
        last = min(bucket.last_month, config.horizon_months)
        if bucket.first_month > last:
            continue
        exposed = sum(e.gpu_hours for e in exposure if e.floating and bucket.first_month <= e.month <= last)
        notional = bucket.share * ratio * exposed
        contracts = int(math.floor(notional / config.contract_size + 0.5))
        hedged = contracts * config.contract_size
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
    return ladder


def _latest_index(index: list[IndexLevel], as_of: date) -> IndexLevel:
    """The last index level on or before the as-of date: what a hedge is bought against (none: an input error)."""
    latest = max((p for p in index if p.date <= as_of), key=lambda p: p.date, default=None)
    if latest is None:
        raise InputError(
            [
                Problem(
                    "market/index.csv", None, "", f"no index level on or before {as_of}: hedging needs an index history"
                )
            ]
        )
    return latest


def _stress_reference(config: HedgeConfig, latest: IndexLevel, currency: str) -> tuple[float, str]:
    """The level the stress moves from, in words: the forward when hedge.forward gives one (futures are bought
    at it), else today's index with the assumption of a flat market said."""
    level = config.forward if config.forward is not None else latest.price
    reference = (
        f"the forward {level:.2f} {currency}/GPU-hour (hedge.forward)"
        if config.forward is not None
        else f"today's index {level:.2f} {currency}/GPU-hour on {latest.date}: no forward given (hedge.forward), so "
        "the market is assumed flat"
    )
    return level, reference


def _hedged_offer(ev: Evaluation, config: HedgeConfig, offer_id: str | None) -> OfferRecord:
    """The offer to hedge: --offer, else hedge.offer, else the recommended one; none, or an unknown id, is an input
    error."""
    offer_id = offer_id or config.offer or ev.summary.recommended
    if offer_id is None:
        from procure.analysis.evaluate import no_acceptable_offer

        raise no_acceptable_offer(ev, "hedge", instead="name the offer to hedge with --offer ID")
    try:
        return ev.offer(offer_id)
    except KeyError:
        raise InputError([unknown_offer(offer_id, [o.id for o in ev.offers], field="--offer")]) from None


def _fit_ratio(
    record: OfferRecord,
    config: HedgeConfig,
    history: list[IndexLevel],
    rent: list[IndexLevel] | None,
    rent_source: str,
    as_of: date,
    notes: list[str],
) -> tuple[Regression, float, float | None, str]:
    """Regression of your rent on the index, the recommended ratio and the basis volatility of its band.

    Without a rent history there is no fit, no R^2 and no claim that the rent tracked the index: the ratio
    is 1 by contract (index-linked) or by assumption. The band belongs to the hedge recommended: what rent
    changes leave once the recommended ratio x the index change is taken out (at h* that is the
    regression's residual; at any other ratio it is wider)."""
    if rent:
        regression = regress([p for p in rent if p.date <= as_of], history, config.period, rent_source)
        if regression.insufficient_history:
            notes.append(
                f"insufficient history: {regression.changes} aligned {config.period}ly changes (at least {MIN_CHANGES} "
                "needed for a reliable hedge ratio)"
            )
        if regression.hedge_ratio is None:
            notes.append("the hedge ratio cannot be estimated from this history: the ladder uses 1")
    else:
        regression = no_fit(0, "none")
        if kind_named(record.pricing_basis).index_rent is not None:
            notes.append(
                "no rent history: an index-linked rent is index + spread by contract (within its floor and cap), so "
                "the ladder uses 1; its basis to the settlement index is not measured"
            )
        else:
            notes.append(
                "no rent history (market/rent.csv): no hedge ratio is fitted and no tracking is claimed; the ladder "
                "uses 1 and the basis is not measured"
            )
    ratio = recommended_ratio(regression)
    if regression.h_star_ci95 is not None:
        low, high = regression.h_star_ci95
        verdict = "excludes 1: the ladder uses h*" if ratio != 1.0 else "includes 1: the ladder uses 1"
        notes.append(
            f"h* = {regression.hedge_ratio:.3f} (standard error {regression.h_star_se:.3f}); its 95% interval "
            f"{low:.3f} to {high:.3f} {verdict}"
        )
    if regression.basis_volatility is None:
        # nothing fitted: a stated prior, never 0
        basis, note = prior_basis(history, config, ratio)
        notes.append(note)
        return regression, ratio, basis, "prior"
    basis = regression.basis_volatility
    if rent and regression.hedge_ratio is not None and ratio != regression.hedge_ratio:
        ds, df = aligned_changes([p for p in rent if p.date <= as_of], history, config.period)
        basis = float(np.std(ds - ratio * df, ddof=1))
    return regression, ratio, basis, "fitted"


def _exposure(
    record: OfferRecord, months: list[tuple[int, float, str, int]], horizon: HorizonConfig, notes: list[str]
) -> list[ExposureMonth]:
    """Exposure by month, from delivery and with the ramp: nothing is hedged before the GPUs arrive; a month
    floats when its price moves with the index (index-linked in the term, a renewal at the market). An
    index-linked offer's cap and floor already do part of a hedge's work: said."""
    linked = record.terms.pricing.index_linked
    exposure = []
    kind = kind_named(record.pricing_basis)
    no_rent = not kind.rented
    if no_rent:
        article = "an" if kind.label[0] in "aeiou" else "a"
        notes.append(f"{article} {kind.label} offer pays no GPU-hour rent: nothing to hedge against a rental index")
    for month, gpus, phase, _ in months:
        hours = gpus * HOURS_PER_MONTH
        if no_rent:
            exposure.append(ExposureMonth(month=month, gpu_hours=0.0, floating=False, reason="no rental exposure"))
        elif phase == "before delivery":
            exposure.append(
                ExposureMonth(month=month, gpu_hours=0.0, floating=False, reason="before delivery: nothing to hedge")
            )
        elif phase == "term" and kind.index_rent is not None:
            exposure.append(ExposureMonth(month=month, gpu_hours=hours, floating=True, reason="index-linked price"))
        elif phase == "renewal" and horizon.renewal != "escalate":
            exposure.append(
                ExposureMonth(
                    month=month, gpu_hours=hours, floating=True, reason="after the term: renewal at the market"
                )
            )
        elif phase == "renewal":
            exposure.append(
                ExposureMonth(
                    month=month,
                    gpu_hours=hours,
                    floating=False,
                    reason="after the term: renewal at the escalated price",
                )
            )
        else:
            exposure.append(ExposureMonth(month=month, gpu_hours=hours, floating=False, reason="fixed price"))
    start = next((m for m, _, phase, _ in months if phase != "before delivery"), None)
    if start is not None and start > 1 and not no_rent:
        notes.append(f"delivered in month {start}: the months before are not hedged")
    if linked is not None and linked.cap is not None:
        notes.append(
            f"the offer's cap ({linked.cap:.2f} {record.currency}) already limits the rent above it; a hedge beyond "
            "the cap pays out without a matching cost"
        )
    if linked is not None and linked.floor is not None:
        notes.append(
            f"the offer's floor ({linked.floor:.2f} {record.currency}) keeps the rent from following the index below "
            "it; a hedge then loses without a matching saving"
        )
    return exposure


def _nothing_to_hedge(
    record: OfferRecord,
    exposure: list[ExposureMonth],
    config: HedgeConfig,
    horizon: HorizonConfig,
    floating_hours: float,
) -> str | None:
    """Why nothing floats, when nothing does: no GPU-hour rent, a renewal at the escalated price, or a fixed price
    for the whole hedge horizon (then no ladder and no stress table)."""
    if floating_hours != 0:
        return None
    if not kind_named(record.pricing_basis).rented:
        return (
            "the offer pays no GPU-hour rent (owned or billed per token): a rental price index does not move its cost"
        )
    if horizon.renewal == "escalate" and any(e.reason.startswith("after the term") for e in exposure):
        return (
            f"the price is fixed over the {config.horizon_months} hedged months: fixed for the term, then renewed "
            "at the escalated price (horizon.renewal: escalate)"
        )
    return (
        f"the price is fixed for the whole {config.horizon_months}-month hedge horizon (a "
        f"{record.term_months}-month fixed-price term from delivery): no month floats with the index"
    )


def _hedged_by_month(ladder: list[LadderRow], exposure: list[ExposureMonth]) -> dict[int, float]:
    """Hedged GPU-hours per month: each bucket's contracts spread evenly over its floating months."""
    hedged_by_month: dict[int, float] = {}
    for row in ladder:
        bucket_months = [e.month for e in exposure if e.floating and row.first_month <= e.month <= row.last_month]
        for month in bucket_months:
            hedged_by_month[month] = row.hedged_gpu_hours / len(bucket_months)
    return hedged_by_month


def _stress_row(
    move: float, level: float, unhedged: float, payoff: float, base: float, band: float | None
) -> StressRow:
    """One index move: the unhedged cost, the hedge's payoff and what is left, each against the unmoved cost."""
    return StressRow(
        index_move=move,
        index_level=level * (1 + move),
        unhedged=unhedged,
        hedge_payoff=payoff,
        hedged=unhedged - payoff,
        unhedged_change=unhedged - base,
        hedged_change=unhedged - payoff - base,
        basis_band=band,
    )


def _stress(
    record: OfferRecord,
    exposure: list[ExposureMonth],
    ladder: list[LadderRow],
    months: list[tuple[int, float, str, int]],
    horizon: HorizonConfig,
    fx: float,
    ratio: float,
    index_now: float,
    level: float,
    band: float | None,
) -> list[StressRow]:
    """Stress at the forward: futures are bought at the forward, so the hedge pays the index's move away from
    it; the unhedged cost is what the floating months cost at the moved index, priced by the cash flow's
    renewal rule (at the recommended ratio) or the offer's index link."""
    pricing = record.terms.pricing
    rule = kind_of(pricing).index_rent
    indexed = None if rule is None else partial(rule, pricing, fx=fx)
    rent_now = record.metrics.get("rent_today", record.metrics.get("rent")) or 0.0
    contract = record.terms.contract
    k_of = {month: k for month, _, _, k in months}

    def floating_rent(month: int, reason: str, index_then: float) -> float:
        if reason == "index-linked price" and indexed is not None:
            return indexed(index_then)
        renewed = rent_now * contract_factor(contract, record.term_months, k_of[month])
        return renewal_rent(horizon.renewal, renewed, index_now, index_then, indexed, ratio)

    def floating_cost(move: float) -> float:
        return sum(e.gpu_hours * floating_rent(e.month, e.reason, level * (1 + move)) for e in exposure if e.floating)

    return _stress_table(floating_cost, ladder, level, band)


def _stress_table(
    cost: Callable[[float], float], ladder: list[LadderRow], level: float, band: float | None
) -> list[StressRow]:
    """Each of STRESS_MOVES of the index from `level`: `cost(move)` the floating cost unhedged, the ladder's
    contracts paying their GPU-hours x the index's move."""
    base = cost(0.0)
    hedged = sum(row.hedged_gpu_hours for row in ladder)
    return [_stress_row(move, level, cost(move), hedged * level * move, base, band) for move in STRESS_MOVES]


def _periods_per_month(config: HedgeConfig) -> float:
    return 52 / 12 if config.period == "week" else 1.0


def hedge_plan(
    ev: Evaluation,
    config: HedgeConfig,
    index: list[IndexLevel],
    rent: list[IndexLevel] | None,
    fx: float,
    offer_id: str | None = None,
    rent_source: str = "market/rent.csv",
    horizon: HorizonConfig | None = None,
    demand: list[float] | None = None,
) -> HedgePlan:
    """Exposure from delivery (the GPUs `demand`, the tasks of each month, bills; None: today's), the hedge ratio with
    its precision, the ladder, the stress at the forward."""
    horizon = horizon or HorizonConfig()
    record = _hedged_offer(ev, config, offer_id)
    latest = _latest_index(index, ev.as_of)
    history = [p for p in index if p.date <= ev.as_of]
    notes: list[str] = []
    regression, ratio, basis, basis_source = _fit_ratio(record, config, history, rent, rent_source, ev.as_of, notes)
    basis_note = notes[-1] if basis_source == "prior" else f"fitted on {rent_source}: {basis:.4f} per {config.period}"
    months = service_months(record, config.horizon_months, horizon, ev.as_of, demand)
    exposure = _exposure(record, months, horizon, notes)
    floating_hours = sum(e.gpu_hours for e in exposure if e.floating)
    nothing = _nothing_to_hedge(record, exposure, config, horizon, floating_hours)
    ladder = build_ladder(exposure, config, ratio)
    hedged_by_month = _hedged_by_month(ladder, exposure)
    level, _ = _stress_reference(config, latest, ev.currency)
    band = basis_band(basis, hedged_by_month, _periods_per_month(config))
    stress = (
        _stress(record, exposure, ladder, months, horizon, fx, ratio, latest.price, level, band)
        if nothing is None
        else []
    )
    return _hedge_record(
        ev,
        config,
        latest,
        exposure,
        ladder,
        stress,
        nothing,
        notes,
        regression,
        offer=record.id,
        vendor=record.vendor,
        horizon_months=config.horizon_months,
        hedge_ratio=ratio,
        hedge_ratio_rule=RATIO_RULE,
        renewal=RENEWAL_RULES[horizon.renewal],
        band_basis_volatility=basis,
        basis_source=basis_source,
        basis_note=basis_note,
    )


def _hedge_record(
    ev: Evaluation,
    config: HedgeConfig,
    latest: IndexLevel,
    exposure: list[ExposureMonth],
    ladder: list[LadderRow],
    stress: list[StressRow],
    nothing: str | None,
    notes: list[str],
    regression: Regression,
    **own: Any,
) -> HedgePlan:
    """A hedge plan, an offer's or the procurement plan's: what every hedge states alike (the index today, the stress
    level, the contract, the floating GPU-hours, the ladder unless there is nothing to hedge, the limits, the fit of
    h* and its figures), and `own`: its ratio, its basis and what it hedges."""
    level, reference = _stress_reference(config, latest, ev.currency)
    return HedgePlan(
        currency=ev.currency,
        as_of=ev.as_of,
        period=config.period,
        index_date=latest.date,
        index_level=latest.price,
        stress_level=level,
        stress_reference=reference,
        nothing_to_hedge=nothing,
        exposure=exposure,
        floating_gpu_hours=sum(e.gpu_hours for e in exposure if e.floating),
        contract_gpu_hours=config.contract_size,
        contract=contract_terms(config),
        ladder=ladder if nothing is None else [],
        stress=stress,
        limits=list(LIMITS),
        notes=notes,
        regression=regression,
        h_star=regression.hedge_ratio,
        h_star_se=regression.h_star_se,
        h_star_ci95=regression.h_star_ci95,
        rho=regression.rho,
        r2=regression.r2,
        basis_volatility=regression.basis_volatility,
        **own,
    )


def plan_for_workspace(
    ws: Workspace,
    ev: Evaluation,
    offer: str | None = None,
    index: list[IndexLevel] | None = None,
    rent: PriceSeries | None = None,
) -> HedgePlan:
    """The hedge plan with the workspace's defaults: market/index.csv (`index`: another index's rows), and
    market/rent.csv for an offer priced at the market (an index-linked offer's rent is index + spread by contract;
    a rent history is used for it only when given explicitly as `rent`)."""
    chosen = offer or ws.config.hedge.offer or ev.summary.recommended
    record = next((o for o in ev.offers if o.id == chosen), None)
    fx = ws.fx_rate(record.currency) if record else 1.0
    index_levels = index if index is not None else ws.index
    if rent is None and not (record and kind_named(record.pricing_basis).index_rent is not None):
        rent = ws.rent
    rent_levels, source = (rent.levels(), rent.display) if rent is not None else (None, "")
    from procure.model.demand import expected_demand

    demand = expected_demand(ws.config, ws.config.hedge.horizon_months)
    return hedge_plan(ev, ws.config.hedge, index_levels, rent_levels, fx, chosen, source, ws.config.horizon, demand)


PLAN_HEDGE_ID = "plan"
PLAN_RATIO_RULE = "hedge ratio 1: no rent history exists for the plan's mix of pay-as-used and index-linked capacity"


def plan_floating(plan: PlanResult, ev: Evaluation) -> tuple[list[float], list[float], float]:
    """GPU-hours and rent by month that float with the market in a plan (pay-as-used capacity billed by
    the GPU-hour, index-linked commitments), and the rent of per-token capacity over the horizon."""
    assert plan.stress is not None
    hours = list(plan.stress.pay_as_used_gpu_hours)
    rent = list(plan.stress.pay_as_used_gpu_hour_rent)
    for line in plan.plan:
        # index-linked commitments, and later decisions (priced at the market when they are signed: docs/plan.md)
        if (
            line.role == "commit"
            and (kind_named(ev.offer(line.offer).pricing_basis).index_rent is not None or line.decision == "later")
            and line.start_month
        ):
            for m in range(line.start_month, (line.end_month or line.start_month) + 1):
                hours[m - 1] += (line.gpus or 0) * HOURS_PER_MONTH
                rent[m - 1] += (line.gpus or 0) * HOURS_PER_MONTH * (line.expected_price or line.price or 0)
    return hours, rent, plan.stress.pay_as_used_task_rent


def _plan_exposure(hours: list[float]) -> list[ExposureMonth]:
    """A plan's GPU-hours at market prices by month, from month 1."""
    return [
        ExposureMonth(
            month=m + 1,
            gpu_hours=h,
            floating=h > 0,
            reason="pay-as-used, index-linked or decided later" if h > 0 else "fixed-price commitments only",
        )
        for m, h in enumerate(hours)
    ]


def plan_hedge(ev: Evaluation, config: HedgeConfig, index: list[IndexLevel], plan: PlanResult) -> HedgePlan:
    """The hedge of the procurement plan: what floats in it (pay-as-used GPU-hours, index-linked
    commitments), by month of the plan, laddered as procure.yaml's hedge section says, at ratio 1. Their
    prices are taken to move with the index (list prices of pay-as-used capacity follow the market), so
    the stress moves their rent by the index's move; the hedge pays contracts x the index's move."""
    latest = _latest_index(index, ev.as_of)
    hours, rent, task_rent = plan_floating(plan, ev)
    span = min(config.horizon_months, plan.demand.months)
    linked = [
        line.vendor
        for line in plan.plan
        if line.role == "commit" and kind_named(ev.offer(line.offer).pricing_basis).index_rent is not None
    ]
    exposure = _plan_exposure(hours[:span])
    notes = [
        "the plan's floating GPU-hours are expected, not promised: pay-as-used capacity falls first when demand falls"
    ]
    if task_rent > 0:
        notes.append(
            f"per-token capacity ({task_rent:,.0f} {ev.currency} expected) is priced per token: a GPU-hour index does "
            "not move it"
        )
    nothing = None
    if sum(e.gpu_hours for e in exposure if e.floating) <= 0:
        nothing = (
            "every commitment in the plan is at a fixed price and it buys no GPU-hours at market prices over "
            f"months 1-{span}"
        )
    ladder = build_ladder(exposure, config, 1.0)
    basis, basis_note = prior_basis([p for p in index if p.date <= ev.as_of], config, 1.0)
    notes.append(basis_note.replace("no rent history: ", "no rent history exists for the plan's mix: "))
    band = basis_band(basis, _hedged_by_month(ladder, exposure), _periods_per_month(config))
    level, _ = _stress_reference(config, latest, ev.currency)
    base = sum(rent[:span])
    stress = _stress_table(lambda move: base * (1 + move), ladder, level, band) if nothing is None else []
    vendors = sorted(
        {line.vendor for line in plan.plan if line.role == "pay_as_used" or line.decision == "later"} | set(linked)
    )
    return _hedge_record(
        ev,
        config,
        latest,
        exposure,
        ladder,
        stress,
        nothing,
        notes,
        no_fit(0, "none"),  # no one rent history describes the plan's mix of vendors
        offer=PLAN_HEDGE_ID,
        vendor="the procurement plan" + (f" ({', '.join(vendors)})" if vendors else ""),
        horizon_months=span,
        hedge_ratio=1.0,
        hedge_ratio_rule=PLAN_RATIO_RULE,
        renewal="",
        band_basis_volatility=basis,
        basis_source="prior",
        basis_note=notes[-1],
    )


def recommended_hedge(
    ws: Workspace,
    ev: Evaluation,
    plan: PlanResult | None,
    offer: str | None = None,
    index: list[IndexLevel] | None = None,
    rent: PriceSeries | None = None,
) -> HedgePlan:
    """The hedge of the recommendation: the plan's when the recommendation is a plan (and no offer is
    named by --offer or hedge.offer), else the offer's."""
    rec = ev.recommendation
    if offer is None and ws.config.hedge.offer is None and rec is not None and rec.kind == "plan" and plan is not None:
        if rent is not None:  # asked for, and not what the plan's hedge can use: said, not ignored (exit 2)
            raise InputError(
                [
                    Problem(
                        "--rent",
                        None,
                        "",
                        "the recommendation is the purchase plan, hedged at ratio 1 on its on-demand (pay-as-used) "
                        "and index-linked GPU-hours: no one rent history describes its mix of vendors, so none is "
                        "fitted (docs/hedging.md). To fit h* on this rent, hedge one offer: --offer ID (the plan's: "
                        f"{', '.join(dict.fromkeys(line.offer for line in plan.plan)) or 'none'}) or hedge.offer in "
                        "procure.yaml; else drop --rent",
                    )
                ]
            )
        return plan_hedge(ev, ws.config.hedge, index if index is not None else ws.index, plan)
    return plan_for_workspace(
        ws,
        ev,
        offer or ws.config.hedge.offer or (rec.offer if rec is not None and rec.kind == "offer" else None),
        index,
        rent,
    )
