"""One offer's record: the verdict of its gates and why it is or is not acceptable, its notes, and every
figure behind them (metrics, availability layers, grading, the operator's rating, the terms as read).

The Evaluation (evaluate.py) holds one record per offer, built here from what the pipeline derived for it
(grading, rating, the throughput reading at the target, the cost model's figures, the availability layers);
ranking, the horizon and the uncertainty ranges are added to it there.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from procure.analysis.cashflow import HorizonResult
from procure.analysis.gates import GateResult, offer_gates
from procure.analysis.uncertainty import OfferRange, availability_distribution
from procure.io.workspace import IndexLevel, Workspace
from procure.model.costing import OUTPUT_COLUMNS
from procure.model.grading import GradeResult
from procure.model.inputs import OPERATING_JOBS, Assumptions, Offer, Workload
from procure.model.kinds import kind_named, kind_of
from procure.model.kinds.base import FormulaInputs, FormulaLines
from procure.model.performance import ThroughputReading, pareto_frontier, ttft_at
from procure.model.rating import (
    UNRATED,
    AvailabilityLayers,
    Rating,
    ReliabilityResult,
    published_disagrees,
    rate_before_signing,
    reliability_of,
)
from procure.model.units import PerThousand

# The metrics every offer carries (null where a figure cannot be computed); names are a contract.
METRIC_KEYS: tuple[str, ...] = (
    "rent",
    "fees",
    "financing",
    "ops",
    "software",
    "full",
    "throughput",
    "availability",
    "success_rate",
    "utilization",
    "fill",
    "successful_tasks_per_gpu_hour",
    "cost_per_task",
    "rent_per_task",
    "cost_per_mtok",
    "gpus_needed",
    "monthly_spend",
)
HORIZON_METRIC_KEYS: tuple[str, ...] = ("total_commitment", "total_cost", "npv_cost", "horizon_cost_per_task")
EXTRA_METRIC_KEYS: tuple[str, ...] = (
    tuple(k for k in OUTPUT_COLUMNS if k not in METRIC_KEYS)
    + ("price_to_tie", "vs_leader", "rent_term_average", "restart_cost_per_task")
    # the cost at the typical inputs (every drawn factor at its mean; cost_per_task is the mean of the draws), and the
    # capacity at which a fully used GPU-hour costs its expected cost per task
    + ("point_cost_per_task", "expected_to_point_ratio", "expected_rent_per_task", "costed_capacity_per_gpu_hour")
    + HORIZON_METRIC_KEYS
)

# Offers that expire within this many days of the as-of date are warned about.
EXPIRY_WARNING_DAYS = 14

# An index level older than this (days before as-of) is flagged on index-linked offers.
STALE_INDEX_DAYS = 31


class RequirementRecord(BaseModel):
    requirement: str
    expected: str
    observed: str
    passed: bool


class GradingRecord(BaseModel):
    grade: str | None
    summary: str
    checked_grade: str | None = Field(
        description="the grade whose requirements are listed: the assigned one, else the nearest"
    )
    requirements: list[RequirementRecord]


class OfferRecord(PerThousand):
    PER_TASK_DICTS = ("metrics",)

    id: str
    vendor: str
    grade: str | None
    acceptable: bool
    rank: int | None
    reasons: list[str]
    notes: list[str]
    kind: str
    region: str
    pricing_basis: str
    currency: str
    gpus: int | None
    max_gpus: int | None
    term_months: int
    valid_until: date
    stack: str | None
    points_source: str | None
    performance_points: list[tuple[float, float]] = Field(
        description="the Pareto frontier used, [interactivity, output tok/s/GPU]"
    )
    max_interactivity: float | None
    ttft_s: float | None = Field(
        None, description="time to first token at the target, seconds, where the curve carries it"
    )
    reliability_factor: float | None
    reliability_source: str = Field(
        "unrated",
        description="where the reliability factor comes from: checklist, published, status_history, unrated or "
        "self_operated",
    )
    reliability_basis: str = Field(
        "", description="the reliability factor in words (band, published tier, unrated floor, self-operated)"
    )
    sla_availability: float | None = Field(
        None,
        description="the availability the SLA states; metrics.availability is the expected figure (SLA x reliability "
        "factor)",
    )
    not_stated: list[str] = Field(
        default_factory=list,
        description="gates judged on something the offer does not state (per-token speed, TTFT, rate limits)",
    )
    rating_state: Literal["rated", "unrated", "self_operated"] = Field(
        "rated",
        description="unrated: no operator evidence, published tier or status history (availability unverified; ranked "
        "with the haircut unless policy.unrated: exclude)",
    )
    availability_layers: AvailabilityRecord | None = Field(
        None, description="the layers of metrics.availability: provider x ours x interruptions"
    )
    role: Literal["primary", "burst"] = Field(
        "primary",
        description="burst: spot or preemptible capacity, a pay-as-used source only, never ranked as the primary offer",
    )
    actions: list[str] = Field(default_factory=list, description="what to do before signing (rate an unrated operator)")
    index_level: float | None
    index_date: date | None = Field(None, description="the date of the index level used")
    responsibilities: dict[str, str]
    gates: list[GateResult]
    grading: GradingRecord
    rating: RatingRecord
    metrics: dict[str, float | None]
    uncertainty: OfferRange | None = Field(
        None, description="Monte Carlo range of cost per task (compare --uncertainty)"
    )
    cashflow: HorizonResult | None = Field(
        None, description="the monthly schedule over the horizon (compare --horizon, cashflow)"
    )
    throughput_factors: list[ThroughputFactor] = Field(
        default_factory=list,
        description="metrics.throughput as the curve's reading at the target x each factor on it, with its source "
        "(GPU-hour offers)",
    )
    evidence: dict[str, Any] | None = Field(
        None,
        description="a signed vendor's delivered evidence (scorecard.Evidence): the posteriors its throughput, "
        "availability and success rate are blended with",
    )
    terms: Offer = Field(description="the offer as read from its file")

    # What the report's pages show of the offer, worked out here so that its templates format values and compute
    # nothing (tests/test_templates_plain.py).

    def formula_lines(self, fx: float, assumptions: Assumptions, workload: Workload) -> FormulaLines:
        """The rows of the report's formula box this offer's kind writes (`Kind.formula_lines`), at the exchange rate
        `fx` from its currency into the workspace's."""
        kind = kind_named(self.pricing_basis)
        pricing = self.terms.pricing
        found = FormulaInputs(
            pricing=pricing,
            currency=self.currency,
            fx=fx,
            rate=kind.rate(pricing),
            index_level=self.index_level,
            index_date=self.index_date,
            cost_of_capital=assumptions.cost_of_capital,
            term_months=self.term_months,
            metrics=self.metrics,
            escalated=self.escalated,
            workload=workload,
        )
        return kind.formula_lines(found)

    @property
    def operated_by_us(self) -> bool:
        """Bare metal or an owned cluster (its service kind): every operating job above the hardware is ours, so no
        operator's tier speaks for it."""
        return self.kind in ("bare_metal", "owned")

    @property
    def per_task(self) -> bool:
        """Priced per successful task (per token): no GPUs to staff or fill."""
        return kind_named(self.pricing_basis).per_task

    @property
    def exit_costs(self) -> float | None:
        """Offboarding plus data egress (egress TB x price per TB), in the offer's currency; None: no exit terms."""
        found = self.terms.contract.exit
        return None if found is None else found.offboarding + found.egress_tb * found.egress_per_tb

    @property
    def escalated(self) -> bool:
        """The escalators move the term's average price (metrics.escalation, the term's average factor, is not 1)."""
        factor = self.metrics.get("escalation")
        return bool(factor) and abs(factor - 1) > 1e-9  # type: ignore[operator]

    @property
    def transfer_per_month(self) -> float:
        """The per-TB fees a month: price per TB x TB a month, summed (the offer's currency)."""
        total: float = 0
        for fee in self.terms.pricing.fees:
            if fee.per_tb:
                total = total + fee.per_tb * (fee.tb_per_month or 0)
        return total

    @property
    def rent_today_differs(self) -> bool:
        """Today's rent differs from the term's average (the escalators) by more than half a tenth of a cent."""
        today, rent = self.metrics.get("rent_today"), self.metrics.get("rent")
        return today is not None and rent is not None and abs(today - rent) > 0.0005


class ThroughputFactor(BaseModel):
    """One factor of the throughput the cost uses: the curve's reading at the target, then each factor on it."""

    name: str
    value: float = Field(description="the reading (tok/s/GPU) for the first, a factor for the rest")
    source: str = Field(
        description="where it comes from: the curve, or the procure.yaml setting or evidence that sets it"
    )


class AvailabilityRecord(BaseModel):
    """Expected availability by layer (docs/ratings.md): the gate judges `expected`, the cost `costed`."""

    provider: float | None = Field(
        description="the provider's layer: SLA x reliability factor, or the incident history's availability; null when "
        "owned"
    )
    provider_costed: float | None = Field(
        description="the provider's layer as costed (an unrated provider's SLA x the unrated haircut)"
    )
    provider_basis: str
    ours: float = Field(description="the product of our factor for each job left to us alone")
    our_jobs: list[str] = Field(description="the jobs in our layer (factor below 1)")
    interruption: float = Field(description="share of billed time not lost to spot interruptions and restarts")
    expected: float
    costed: float
    text: str
    drawn_mean: float = Field(
        1.0,
        description="the mean of the drawn availability factor (uncertainty.availability) the point multiplies "
        "`costed` by; 1 on a delivered posterior",
    )


class RatingRecord(BaseModel):
    """The operator rating: absolute score (sets the reliability factor) and peer-relative tier."""

    rated: bool
    note: str
    score: float | None
    tier: str | None = Field(description="platinum, gold, silver, bronze or underperform; null when not rated")
    percentile: float | None
    categories: dict[str, float]
    critical_failures: list[str]
    published_tier: str | None
    disagrees: bool = Field(description="a published tier differs from the computed one")
    published_applies: bool = Field(
        True,
        description="the published tier rates this kind of offer (ClusterMAX rates managed clusters only); false: "
        "shown, not used",
    )
    operational_score: float | None = Field(
        None,
        description="weighted mean of security, lifecycle, reliability and monitoring: sets the reliability factor",
    )
    tier_note: str | None = Field(None, description="why no peer tier is shown (too few peers)")
    contract_overrides: list[str] = Field(
        default_factory=list, description="checklist claims the service terms do not back (the service terms are used)"
    )
    unanswered: list[str] = Field(description="checklist items without an answer (scored as not met)")


def frontier_points(offer: Offer, workspace: Workspace) -> list[tuple[float, ...]]:
    """The offer's performance points: its own, else its reference curve's (none for a per-token offer without them)."""
    if offer.performance.points:
        return [tuple(p) for p in offer.performance.points]  # type: ignore[misc]
    if offer.performance.reference:
        return list(workspace.curves[offer.performance.reference].points)
    return []


def _curve_source(offer: Offer, workspace: Workspace) -> str:
    """'measured' for an offer on a curve of the buyer's own trial (`perf import` of trial results), else
    'reference'."""
    curve = workspace.curves.get(offer.performance.reference or "")
    return curve.points_source if curve is not None else "reference"


def finite_or_none(value: Any) -> float | None:
    """A figure as recorded: a finite float, else None (no figure)."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


def _reasons(gates: list[GateResult], metrics: dict[str, float | None], rating: Rating) -> list[str]:
    """Why the offer is not acceptable (none: it is), root cause first. Capacity cannot be judged without
    successful tasks; the latency or quality reason already says why."""
    explained = any(g.gate in ("latency", "quality") and not g.passed for g in gates)
    reasons = [
        g.detail for g in gates if not g.passed and not (explained and g.detail.startswith("capacity not assessed"))
    ]
    if not reasons and metrics["cost_per_task"] is None:
        reasons.append("cost per successful task cannot be computed")
    return _root_cause_first(gates, reasons, rating)


def _reading_notes(
    offer: Offer, workspace: Workspace, reading: ThroughputReading | None, gates: list[GateResult], rating: Rating
) -> list[str]:
    """What the figures rest on, said: a reading in a wide gap between measured points, gates passed by policy
    on what is not stated, and claims the service terms do not promise."""
    notes = _notes(offer, workspace)
    if reading is not None and reading.wide_gap:
        notes.append(
            f"the target {reading.target:g} tok/s/user lies in a gap of {reading.gap:g} between measured points, wider "
            "than half the target: "
            f"the reading's P10-P90 is x{reading.low:.2f} to x{reading.high:.2f} (docs/interpolation.md); a point "
            "measured at the target would settle it"
        )
    notes += [
        f"{g.gate} gate passed by policy although {g.detail}" for g in gates if g.passed and "not stated" in g.detail
    ]
    for path in rating.contract_overrides:
        notes.append(f"{path} is claimed but the service terms do not promise it: the service terms are used")
    notes += [
        f"acceptance rests on an unconfirmed input: {c.text} (decides its {c.gates}); a condition of signing "
        "(conditions:)"
        for c in offer.open_conditions
    ]
    return notes


def _record_reliability(
    offer: Offer, rating: Rating, workspace: Workspace, layers: AvailabilityLayers
) -> ReliabilityResult:
    """What the provider's SLA figure is worth; a measured incident history sets the provider's layer, shown as
    a factor on the SLA, for the record."""
    reliability = reliability_of(offer, rating, workspace.config.assumptions)
    if layers.measured and layers.provider is not None:
        sla = offer.service.sla.availability if offer.service.sla else None
        reliability = ReliabilityResult(layers.provider / sla if sla else None, "status_history", layers.provider_basis)
    return reliability


def _burst(
    offer: Offer, layers: AvailabilityLayers, metrics: dict[str, float | None], reasons: list[str], notes: list[str]
) -> bool:
    """Spot or preemptible capacity is a pay-as-used burst source, never the primary offer. Its restart cost is
    priced when the interruption rate is stated: cost per task scales as 1 / availability, so the share lost to
    restarts is paid for without output."""
    burst = offer.service.preemptible or bool(offer.service.interruptions_per_month)
    if burst:
        reasons.insert(
            0, "spot or preemptible capacity (service.preemptible): a pay-as-used burst source, never the primary offer"
        )
        if offer.service.interruptions_per_month is None:
            notes.append(
                "interruption rate not stated (service.interruptions_per_month): the restart cost is not priced"
            )
        elif metrics["cost_per_task"] is not None:
            lost = 1.0 - layers.interruption
            metrics["restart_cost_per_task"] = metrics["cost_per_task"] * lost
            notes.append(
                f"restart cost priced: {offer.service.interruptions_per_month:g} interruptions a node-month x "
                f"{offer.service.restart_minutes:g} min lost "
                f"= {lost:.3%} of billed time, {metrics['cost_per_task'] * lost * 1000:.3f} per 1,000 tasks"
            )
    return burst


def _dated_notes(offer: Offer, day: date, index_level: IndexLevel | None, notes: list[str]) -> None:
    """An offer about to expire, and an index level older than STALE_INDEX_DAYS, are warned about."""
    left = (offer.valid_until - day).days
    if 0 <= left <= EXPIRY_WARNING_DAYS:
        notes.append(f"expires in {left} day{'s' if left != 1 else ''} (valid until {offer.valid_until})")
    if index_level is not None and (day - index_level.date).days > STALE_INDEX_DAYS:
        notes.append(
            f"the index level used ({index_level.price:.2f} on {index_level.date}) is {(day - index_level.date).days} "
            f"days older than {day}"
        )


def _availability_record(layers: AvailabilityLayers, drawn_mean: float) -> AvailabilityRecord:
    """The availability layers as recorded, with the sentence that multiplies them out."""
    return AvailabilityRecord(
        provider=layers.provider,
        provider_costed=layers.provider_costed,
        provider_basis=layers.provider_basis,
        ours=layers.ours,
        our_jobs=list(layers.our_jobs),
        interruption=layers.interruption,
        expected=layers.expected,
        costed=layers.costed,
        text=layers.text(),
        drawn_mean=drawn_mean,
    )


def _grading_record(grading: GradeResult) -> GradingRecord:
    """The grade and the requirements checked: of the grade assigned, else of the nearest grade missed."""
    shown = grading.assigned or grading.nearest
    return GradingRecord(
        grade=grading.grade,
        summary=grading.summary,
        checked_grade=shown.grade.id if shown else None,
        requirements=[RequirementRecord(**r.__dict__) for r in (shown.results if shown else [])],
    )


def _rating_record(rating: Rating, offer: Offer, workspace: Workspace) -> RatingRecord:
    """The operator's rating as recorded, with whether it disagrees with a published tier and what is unanswered."""
    return RatingRecord(
        rated=rating.rated,
        note=rating.note,
        score=rating.score,
        tier=rating.tier,
        percentile=rating.percentile,
        categories=rating.categories,
        critical_failures=rating.critical_failures,
        published_tier=rating.published_tier,
        disagrees=published_disagrees(rating, offer, workspace.config.assumptions),
        published_applies=rating.published_applies,
        operational_score=rating.operational_score,
        tier_note=rating.tier_note,
        contract_overrides=rating.contract_overrides,
        unanswered=[f"{r.category}.{r.criterion}" for r in rating.results if r.answer is None],
    )


def offer_record(
    offer: Offer,
    grading: GradeResult,
    rating: Rating,
    reading: ThroughputReading | None,
    cost: dict[str, Any],
    workspace: Workspace,
    day: date,
    index_level: IndexLevel | None,
    layers: AvailabilityLayers,
    odds: dict[str, float] | None = None,
) -> OfferRecord:
    """One offer's record: its gates and why it is or is not acceptable, its notes, and every figure behind them.
    `odds`: the probability of passing each drawn gate (procure.analysis.uncertainty.gate_odds)."""
    metrics = {
        key: finite_or_none(cost.get(key)) for key in METRIC_KEYS + EXTRA_METRIC_KEYS
    }  # price_to_tie: set after ranking
    gates = offer_gates(
        offer,
        grading,
        reading,
        metrics,
        workspace,
        day,
        layers,
        frontier_points(offer, workspace) if reading is not None else [],
        odds,
    )
    reasons = _reasons(gates, metrics, rating)
    notes = _reading_notes(offer, workspace, reading, gates, rating)
    reliability = _record_reliability(offer, rating, workspace, layers)
    actions = []
    if layers.unrated:
        notes.append(f"{UNRATED} ({reliability.basis}); {rate_before_signing(offer)}")
        actions.append(rate_before_signing(offer))
    burst = _burst(offer, layers, metrics, reasons, notes)
    _dated_notes(offer, day, index_level, notes)
    return OfferRecord(
        id=offer.id,
        vendor=offer.vendor,
        grade=grading.grade,
        acceptable=not reasons,
        rating_state="self_operated" if offer.owned else "unrated" if layers.unrated else "rated",
        availability_layers=_availability_record(
            layers, availability_distribution(offer, workspace.config.uncertainty).mean
        ),
        role="burst" if burst else "primary",
        actions=actions,
        rank=None,
        reasons=reasons,
        notes=notes,
        kind=offer.service.kind,
        region=offer.region,
        pricing_basis=kind_of(offer.pricing).name,
        currency=offer.pricing.currency or workspace.config.currency,
        gpus=offer.gpus,
        max_gpus=offer.supply_gpus or None,
        term_months=offer.contract_months,
        valid_until=offer.valid_until,
        stack=offer.performance.stack,
        **_curve_fields(offer, workspace, reading),
        reliability_factor=reliability.factor,
        reliability_source=reliability.source,
        reliability_basis=reliability.basis,
        sla_availability=offer.service.sla.availability if offer.service.sla else None,
        not_stated=[f"{g.gate}: {g.detail}" for g in gates if "not stated" in g.detail],
        index_level=index_level.price if index_level else None,
        index_date=index_level.date if index_level else None,
        responsibilities={job: offer.responsibilities.get(job, "customer") for job in OPERATING_JOBS},
        gates=gates,
        grading=_grading_record(grading),
        rating=_rating_record(rating, offer, workspace),
        metrics=metrics,
        terms=offer,
    )


def _curve_fields(offer: Offer, workspace: Workspace, reading: ThroughputReading | None) -> dict[str, Any]:
    """Where the offer's throughput curve comes from, its frontier, its reach and its time to first token (none for a
    per-token offer)."""
    reach = reading.max_interactivity if reading else None
    if offer.per_token:
        return {"points_source": None, "performance_points": [], "ttft_s": None, "max_interactivity": reach}
    points = frontier_points(offer, workspace)
    return {
        "points_source": offer.performance.points_source
        if offer.performance.points
        else _curve_source(offer, workspace),
        "performance_points": pareto_frontier(points),
        "max_interactivity": reach,
        "ttft_s": ttft_at(points, workspace.config.workload.interactivity),
    }


def _notes(offer: Offer, workspace: Workspace) -> list[str]:
    notes = []
    wl = workspace.config.workload
    if offer.per_token and wl.tasks_per_month is None and (offer.pricing.fees or _customer_jobs(offer)):
        notes.append(
            "no tasks_per_month in procure.yaml: fees and staff of a per-token offer are not spread over tasks"
        )
    if offer.performance.points_source == "vendor_claim" and offer.performance.points and not offer.per_token:
        notes.append("throughput is the vendor's claim, not a measurement")
    return notes


def _customer_jobs(offer: Offer) -> list[str]:
    return [job for job, owner in offer.responsibilities.items() if owner != "provider"]


def _root_cause_first(gates: list[GateResult], reasons: list[str], rating: Rating) -> list[str]:
    """The reason shown first is the root cause: an availability below the minimum because the operator's
    checklist has a critical failure (which sets the lowest reliability band) comes after the failure itself
    (the security gate's reason when it fails too), and says what caused it."""
    failed = {g.gate: g for g in gates if not g.passed}
    availability = failed.get("availability")
    if availability is None or not rating.critical_failures or availability.detail not in reasons:
        return reasons
    cause = (
        f"{availability.detail} (the lowest reliability band: critical failure {'; '.join(rating.critical_failures)})"
    )
    ordered = [cause if r == availability.detail else r for r in reasons]
    security = failed.get("security")
    if security is not None and security.detail in ordered:
        ordered.remove(security.detail)
        ordered.insert(0, security.detail)
    return ordered
