"""The pipeline: load -> grade -> throughput at the target -> cost -> demand fit -> gates -> rank.

The Evaluation it returns is the one canonical result. Every output (table, JSON, CSV, Markdown,
reports) is rendered from it; no renderer recomputes a figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Any, Callable, Literal

import numpy as np

from pydantic import BaseModel, Field

from procure.model.units import PerThousand

from procure import __version__
from procure.model.costing import INPUT_COLUMNS, OUTPUT_COLUMNS, OWNER_CODES, CostModel, cost_arrays, finite, price_to_tie
from procure.errors import InputError, Problem
from procure.model.grading import GradeResult, grade_offer
from procure.model.inputs import OPERATING_JOBS, Assumptions, Offer, Policy, Workload
from procure.model.performance import ThroughputReading, pareto_frontier, reading_mean, throughput_at, ttft_at
from procure.model.rating import RATE_BEFORE_SIGNING, UNRATED, AvailabilityLayers, Rating, ReliabilityResult, assign_tiers, availability_layers, method_text, published_disagrees, rate_offer, reliability_of
from procure.analysis.cashflow import HorizonResult
from procure.analysis.gates import GATES, GateResult, offer_gates
from procure.analysis.recommendation import Recommendation
from procure.analysis.uncertainty import GAP_COLUMN, POINT_COLUMN, Gates, OfferRange, UncertaintyInfo, point_throughput_factor
from procure.io.workspace import IndexLevel, Workspace

SCHEMA_VERSION = "1.1"  # 1.1: costs per 1,000 tasks beside the costs per task (envelope.py)

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
EXTRA_METRIC_KEYS: tuple[str, ...] = tuple(k for k in OUTPUT_COLUMNS if k not in METRIC_KEYS) + ("price_to_tie", "vs_leader", "rent_term_average", "restart_cost_per_task") + HORIZON_METRIC_KEYS

# Offers that expire within this many days of the as-of date are warned about.
EXPIRY_WARNING_DAYS = 14

# An index level older than this (days before as-of) is flagged on index-linked offers.
STALE_INDEX_DAYS = 31

# A gate with less relative headroom than this is reported as a risk for the recommendation.
NEAR_GATE_MARGIN = 0.05

class RequirementRecord(BaseModel):
    requirement: str
    expected: str
    observed: str
    passed: bool


class GradingRecord(BaseModel):
    grade: str | None
    summary: str
    checked_grade: str | None = Field(description="the grade whose requirements are listed: the assigned one, else the nearest")
    requirements: list[RequirementRecord]


class OfferRecord(PerThousand):
    PER_TASK_DICTS = ('metrics',)

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
    performance_points: list[tuple[float, float]] = Field(description="the Pareto frontier used, [interactivity, output tok/s/GPU]")
    max_interactivity: float | None
    ttft_s: float | None = Field(None, description="time to first token at the target, seconds, where the curve carries it")
    reliability_factor: float | None
    reliability_source: str = Field("unrated", description="where the reliability factor comes from: checklist, published, status_history, unrated or self_operated")
    reliability_basis: str = Field("", description="the reliability factor in words (band, published tier, unrated floor, self-operated)")
    sla_availability: float | None = Field(None, description="the availability the SLA states; metrics.availability is the expected figure (SLA x reliability factor)")
    not_stated: list[str] = Field(default_factory=list, description="gates judged on something the offer does not state (per-token speed, TTFT, rate limits)")
    rating_state: Literal["rated", "unrated", "self_operated"] = Field(
        "rated", description="unrated: no operator evidence, published tier or status history (availability unverified; ranked with the haircut unless policy.unrated: exclude)"
    )
    availability_layers: AvailabilityRecord | None = Field(None, description="the layers of metrics.availability: provider x ours x interruptions")
    role: Literal["primary", "burst"] = Field("primary", description="burst: spot or preemptible capacity, a pay-as-used source only, never ranked as the primary offer")
    actions: list[str] = Field(default_factory=list, description="what to do before signing (rate an unrated operator)")
    index_level: float | None
    index_date: date | None = Field(None, description="the date of the index level used")
    responsibilities: dict[str, str]
    gates: list[GateResult]
    grading: GradingRecord
    rating: RatingRecord
    metrics: dict[str, float | None]
    uncertainty: OfferRange | None = Field(None, description="Monte Carlo range of cost per task (compare --uncertainty)")
    cashflow: HorizonResult | None = Field(None, description="the monthly schedule over the horizon (compare --horizon, cashflow)")
    evidence: dict[str, Any] | None = Field(None, description="a signed vendor's delivered evidence (scorecard.Evidence): the posteriors its throughput, availability and success rate are blended with")
    terms: Offer = Field(description="the offer as read from its file")


class AvailabilityRecord(BaseModel):
    """Expected availability by layer (docs/ratings.md): the gate judges `expected`, the cost `costed`."""

    provider: float | None = Field(description="the provider's layer: SLA x reliability factor, or the incident history's availability; null when owned")
    provider_costed: float | None = Field(description="the provider's layer as costed (an unrated provider's SLA x the unrated haircut)")
    provider_basis: str
    ours: float = Field(description="the product of our factor for each job left to us alone")
    our_jobs: list[str] = Field(description="the jobs in our layer (factor below 1)")
    interruption: float = Field(description="share of billed time not lost to spot interruptions and restarts")
    expected: float
    costed: float
    text: str


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
    operational_score: float | None = Field(None, description="weighted mean of security, lifecycle, reliability and monitoring: sets the reliability factor")
    tier_note: str | None = Field(None, description="why no peer tier is shown (too few peers)")
    contract_overrides: list[str] = Field(default_factory=list, description="checklist claims the service terms do not back (the service terms are used)")
    unanswered: list[str] = Field(description="checklist items without an answer (scored as not met)")


class InputRecord(BaseModel):
    path: str
    sha256: str


class GradeInfo(BaseModel):
    id: str
    name: str
    rank: int
    expect: str


class CommonReason(BaseModel):
    """A gate many offers fail, and the fields that would change it."""

    gate: str
    offers: list[str]
    example: str = Field(description="one offer's reason, in words")
    fields: str = Field(description="the fields (offer or procure.yaml) that would change the verdict")


# The fields that move each gate: what a buyer changes (or asks the vendor for) to change a verdict.
GATE_FIELDS: dict[str, str] = {
    "role": "service.preemptible (spot capacity is a burst source only)",
    "quality": "performance.quality_pass_rate, or workload.min_success_rate",
    "latency": "performance.points (performance.interactivity for a per-token offer), or workload.interactivity",
    "ttft": "performance.ttft_s or a curve with time to first token, workload.max_ttft_s, or policy.ttft_unstated",
    "availability": "service.sla.availability, operator.published_tier / operator.evidence / operator.status_history, the responsibilities, or policy.min_availability",
    "security": "service.attestations, service.tenant_isolation, service.isolated_monitoring, or policy.require_*",
    "region": "region, or policy.allowed_regions",
    "capacity": "max_gpus, pricing.burst or service.rate_limits, or policy.min_demand_coverage",
    "grade": "what `procure grade --offer ID` names as missing, or policy.acceptable_grades",
    "validity": "valid_until, or --as-of",
}


def common_reasons(records: list[OfferRecord], limit: int = 3) -> list[CommonReason]:
    """The gates most offers fail (spot offers counted under `role`), commonest first, with the fields that change them."""
    failing: dict[str, list[OfferRecord]] = {}
    for record in records:
        if record.acceptable:
            continue
        if record.role == "burst":
            failing.setdefault("role", []).append(record)
        for g in record.gates:
            if not g.passed:
                failing.setdefault(g.gate, []).append(record)
    order = ("role",) + GATES
    ranked = sorted(failing.items(), key=lambda item: (-len(item[1]), order.index(item[0]) if item[0] in order else len(order)))
    found = []
    for gate_name, offers in ranked[:limit]:
        first = offers[0]
        example = first.reasons[0] if gate_name == "role" else next(g.detail for g in first.gates if g.gate == gate_name and not g.passed)
        found.append(CommonReason(gate=gate_name, offers=[o.id for o in offers], example=f"{first.id}: {example}", fields=GATE_FIELDS.get(gate_name, "")))
    return found


def verdict_lines(ev: "Evaluation") -> list[str]:
    """What a buyer must know beside the ranking: no acceptable offer and why, unrated offers to rate
    before signing, spot offers kept as burst sources (text for validate and compare)."""
    lines = []
    if not ev.ranked and ev.offers:
        lines.append(f"no offer is acceptable (0 of {len(ev.offers)}); the commonest reasons:")
        for reason in ev.summary.common_reasons:
            count = len(reason.offers)
            lines.append(f"  {reason.gate} ({count} offer{'s' if count != 1 else ''}, e.g. {reason.example}): change {reason.fields}")
    unrated = [o.id for o in ev.ranked if o.rating_state == "unrated"]
    if unrated:
        lines.append(f"unrated, availability unverified (ranked with the unrated haircut): {', '.join(unrated)}; {RATE_BEFORE_SIGNING}")
    burst = [o for o in ev.offers if o.role == "burst"]
    for record in burst:
        usable = all(g.passed for g in record.gates if g.gate not in ("availability", "capacity"))
        restart = record.metrics.get("restart_cost_per_task")
        priced = f", restart cost {restart * 1000:.3f} per 1,000 tasks" if restart is not None else ", restart cost not priced (service.interruptions_per_month not stated)"
        lines.append(
            f"secondary source (pay-as-used burst, never the primary offer): {record.id}"
            + (priced if usable else f" (not usable: {'; '.join(g.detail for g in record.gates if not g.passed and g.gate not in ('availability', 'capacity'))})")
        )
    return lines


class KnifeEdge(BaseModel):
    """A gate the recommendation passes by less than one standard deviation of its own drawn inputs."""

    gate: str
    value: float = Field(description="the figure the gate judges, at the point (availability; GPUs the offer can supply)")
    requirement: float = Field(description="what the gate asks (policy.min_availability; the GPUs the demand needs x min_demand_coverage)")
    margin: float = Field(description="value minus requirement")
    sd: float = Field(description="one standard deviation of the figure the gate compares, from the offer's own uncertain inputs (uncertainty:)")
    words: str


class Summary(PerThousand):
    """The decision in figures: leader, runner-up, the gap, and what would change it."""

    recommended: str | None
    runner_up: str | None
    gap_per_task: float | None = Field(description="runner-up minus recommended cost per task")
    gap_share: float | None = Field(description="the gap as a share of the recommended cost per task")
    runner_up_price_to_tie: float | None = Field(description="runner-up list price per GPU-hour that ties the leader")
    closest_gate: str | None = Field(description="the recommended offer's gate with the least headroom")
    closest_gate_margin: float | None
    near_gates: list[GateResult] = Field(description=f"the recommendation's gates passed with under {NEAR_GATE_MARGIN:.0%} headroom")
    customer_jobs: list[str] = Field(description="operating jobs the recommendation leaves with the buyer (customer or shared)")
    acceptable: int
    offers: int
    common_reasons: list[CommonReason] = Field(default_factory=list, description="the three gates most offers fail, with the fields that would change each")
    knife_edges: list[KnifeEdge] = Field(default_factory=list, description="the recommendation's gates passed by less than one standard deviation of its own inputs")


class Evaluation(BaseModel):
    """The canonical, versioned result of one evaluation."""

    schema_version: str = SCHEMA_VERSION
    tool: str = f"procure {__version__}"
    command: str = Field("evaluate", description="the command that wrote it: compare or evaluate (the envelope every JSON output shares)")
    as_of: date
    currency: str
    inputs: list[InputRecord]
    workload: Workload
    assumptions: Assumptions
    policy: Policy
    grades: list[GradeInfo]
    rating_method: str
    summary: Summary
    recommendation: Recommendation | None = Field(
        None, description="what to sign: the plan with `demand:`, else the best acceptable offer (compare, plan, hedge and the reports; null from evaluate)"
    )
    uncertainty: UncertaintyInfo | None = None
    horizon_months: int | None = None
    rank_by: str = Field("cost_per_task", description="cost_per_task, or horizon_cost_per_task with a horizon")
    offers: list[OfferRecord]

    def offer(self, offer_id: str) -> OfferRecord:
        for record in self.offers:
            if record.id == offer_id:
                return record
        raise KeyError(offer_id)

    @property
    def ranked(self) -> list[OfferRecord]:
        return [o for o in self.offers if o.acceptable]

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def resolve_as_of(workspace: Workspace, as_of: date | None) -> date:
    """--as-of, else procure.yaml's as_of, else today."""
    return as_of or workspace.config.as_of or date.today()


@dataclass(frozen=True)
class MonteCarlo:
    """A request for uncertainty ranges; None fields take procure.yaml's uncertainty settings."""

    draws: int | None = None
    seed: int | None = None
    progress: Callable[[int, int], None] | None = None


@dataclass
class CostInputs:
    """The cost model's inputs, one row per offer in `offers` order: what uncertainty and sensitivity vary."""

    columns: dict[str, np.ndarray]
    model: CostModel
    offers: list[Offer]
    currencies: list[str]


def evaluate(workspace: Workspace, as_of: date | None = None, monte_carlo: MonteCarlo | None = None, horizon: int | None = None, rank_by_horizon: bool = False, delivered: bool = True) -> Evaluation:
    return evaluate_with_inputs(workspace, as_of, monte_carlo, horizon, rank_by_horizon, delivered)[0]


def _linked_index(workspace: Workspace, offers: list[Offer], day: date) -> IndexLevel | None:
    """The index level on the as-of date; index-linked offers cannot be priced without one (an input error)."""
    index_level = workspace.index_level_on(day)
    if index_level is None and any(o.pricing.index_linked for o in offers):
        linked = ", ".join(o.id for o in offers if o.pricing.index_linked)
        raise InputError([Problem("market/index.csv", None, "", f"no index level on or before {day} (needed by index-linked offers: {linked})")])
    return index_level


def _cost_columns(
    workspace: Workspace, offers: list[Offer], readings: list[ThroughputReading | None], layers: list[AvailabilityLayers], index_level: IndexLevel | None,
) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """The cost model's inputs, one row per offer and as columns. A reading between frontier points carries a
    range that follows its gap (docs/interpolation.md): the draws sample it, and the point reads at its mean
    like every other throughput factor."""
    config = workspace.config
    rows = [_cost_row(o, r, lay, workspace, index_level.price if index_level else math.nan) for o, r, lay in zip(offers, readings, layers)]
    columns = {name: np.array([row[name] for row in rows]) for name in INPUT_COLUMNS}
    columns[GAP_COLUMN] = np.array([r.gap_share if r is not None and config.uncertainty.readings else 0.0 for r in readings], dtype=float)
    columns[POINT_COLUMN] = np.array([point_throughput_factor(o, config.uncertainty) * reading_mean(g) for o, g in zip(offers, columns[GAP_COLUMN])], dtype=float)
    columns["throughput"] = columns["throughput"] * columns[POINT_COLUMN]
    return rows, columns


def _costs(columns: dict[str, np.ndarray], model: CostModel, count: int) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    """The cost model over every offer at once, as columns and as one dict per offer."""
    outputs = finite(cost_arrays(columns, model))
    return outputs, [{key: values[i] for key, values in outputs.items()} for i in range(count)]


def _delivered(
    workspace: Workspace, day: date, offers: list[Offer], rows: list[dict[str, Any]], columns: dict[str, np.ndarray], model: CostModel,
    outputs: dict[str, np.ndarray], costs: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, np.ndarray], list[dict[str, Any]]]:
    """Signed vendors' delivered evidence (actuals/) blended into their promised figures, and the costs again
    with it; without evidence the promised columns and costs stand."""
    from procure.analysis.scorecard import apply_evidence, delivered_evidence

    evidence = delivered_evidence(workspace, day, offers, costs)
    if evidence:
        rows = [apply_evidence(row, evidence.get(o.id)) for o, row in zip(offers, rows)]
        columns = {name: np.array([row[name] for row in rows]) for name in INPUT_COLUMNS}
        outputs, costs = _costs(columns, model, len(offers))
    return evidence, columns, outputs, costs


def _note_evidence(records: list[OfferRecord], evidence: dict[str, Any]) -> None:
    """Each offer blended with delivered evidence carries it, and a note that says so."""
    for record in records:
        found = evidence.get(record.id)
        if found is not None:
            from procure.analysis.scorecard import evidence_note

            record.evidence = found.model_dump()
            record.notes.append(evidence_note(found))


def _horizon_schedule(workspace: Workspace, day: date, index_level: IndexLevel | None, horizon: int | None) -> Callable[..., HorizonResult]:
    """The cash flow of one offer over the horizon with the workspace's assumptions, its list price moved by
    `shift` (what the price to tie solves for)."""
    from procure.analysis.cashflow import schedule

    config = workspace.config

    def plan_of(record: OfferRecord, shift: float = 0.0) -> HorizonResult:
        return schedule(
            record, horizon, config.horizon, day, workspace.fx_rate(record.currency), index_level.price if index_level else None,  # type: ignore[arg-type]
            config.assumptions.cost_of_capital, config.assumptions.fte_cost_year, config.workload.tasks_per_month,
            config.assumptions.vendor_default_rate, shift,
        )

    return plan_of


def _over_horizon(records: list[OfferRecord], horizon: int, plan_of: Callable[..., HorizonResult], config: Any) -> None:
    """Each offer's cash flow and horizon metrics; an offer with no successful task within the horizon is not
    acceptable. The months before a late delivery are bridged by the cheapest offer delivered in month 1."""
    from procure.analysis.cashflow import bridge_horizons

    for record in records:
        plan = plan_of(record)
        record.cashflow = plan
        record.metrics.update(total_commitment=plan.total_commitment, total_cost=plan.total_cost, npv_cost=plan.npv_cost, horizon_cost_per_task=plan.horizon_cost_per_task)
        if record.acceptable and plan.horizon_cost_per_task is None:
            record.acceptable = False
            record.reasons.append(f"no successful task within the {horizon}-month horizon")
    bridge_horizons(records, config.workload.tasks_per_month, config.plan.unserved_penalty_per_task, config.currency)


def _rank(records: list[OfferRecord], rank_key: str) -> list[OfferRecord]:
    """The acceptable offers, cheapest first by `rank_key` (ties by id), numbered from 1."""
    ranked = sorted((r for r in records if r.acceptable), key=lambda r: (r.metrics[rank_key], r.id))
    for position, record in enumerate(ranked, start=1):
        record.rank = position
    return ranked


def _ties_to_leader(
    records: list[OfferRecord], ranked: list[OfferRecord], rank_key: str, columns: dict[str, np.ndarray], outputs: dict[str, np.ndarray],
    config: Any, plan_of: Callable[..., HorizonResult],
) -> None:
    """The negotiator's figure: the list price at which each acceptable offer would tie the leader, and how far
    above the leader it is; ranked over the horizon, the price that ties the leader's PV cost per PV task."""
    if ranked and rank_key == "horizon_cost_per_task":
        from procure.analysis.cashflow import horizon_price_to_tie

        lead_cost = ranked[0].metrics[rank_key]
        for record in ranked:
            if lead_cost:
                tie = record.metrics["list_price"] if record is ranked[0] else horizon_price_to_tie(
                    record, lead_cost, lambda shift, r=record: plan_of(r, shift).horizon_cost_per_task
                )
                record.metrics["price_to_tie"] = _clean(tie) if record.pricing_basis in ("gpu_hour", "index") else None
                record.metrics["vs_leader"] = record.metrics[rank_key] / lead_cost - 1  # type: ignore[operator]
    elif ranked:
        ties = price_to_tie(columns, outputs, ranked[0].metrics["cost_per_task"], config.assumptions.cost_of_capital, config.assumptions.vendor_default_rate)
        lead_cost = ranked[0].metrics["cost_per_task"]
        for record, tie in zip(records, ties):
            if record.acceptable and lead_cost:
                record.metrics["price_to_tie"] = _clean(tie)
                record.metrics["vs_leader"] = record.metrics["cost_per_task"] / lead_cost - 1  # type: ignore[operator]


def _ranges(monte_carlo: MonteCarlo, records: list[OfferRecord], inputs: CostInputs, evidence: dict[str, Any], config: Any) -> UncertaintyInfo:
    """Each offer's uncertainty range from Monte Carlo draws of its inputs, with the drawn gates re-applied; a
    signed vendor's inputs are drawn from the posteriors of its delivered evidence."""
    from procure.analysis.uncertainty import method_text as uncertainty_method
    from procure.analysis.uncertainty import monte_carlo as simulate

    spec = config.uncertainty
    posteriors = None
    if evidence:
        from procure.analysis.scorecard import posteriors_for_draws

        posteriors = posteriors_for_draws(evidence, inputs.offers, inputs.columns, spec)
    draws, seed = monte_carlo.draws or spec.draws, monte_carlo.seed if monte_carlo.seed is not None else spec.seed
    acceptable = np.array([r.acceptable for r in records], dtype=bool)
    ranges, _ = simulate(
        inputs.columns, inputs.model, inputs.offers, inputs.currencies, config.currency, acceptable, spec, draws, seed, monte_carlo.progress,
        drawn_gates(records, config), posteriors,
    )
    for record, found in zip(records, ranges):
        record.uncertainty = found
    return UncertaintyInfo(draws=draws, seed=seed, method=uncertainty_method(spec, draws, seed, posteriors))


def evaluate_with_inputs(
    workspace: Workspace, as_of: date | None = None, monte_carlo: MonteCarlo | None = None, horizon: int | None = None, rank_by_horizon: bool = False,
    delivered: bool = True,
) -> tuple[Evaluation, CostInputs]:
    """`delivered`: blend the promised figures of signed vendors with their delivered evidence
    (actuals/; procure/analysis/scorecard.py); False gives the promise alone (what the scorecard compares with)."""
    day = resolve_as_of(workspace, as_of)
    config = workspace.config
    offers = workspace.offers
    index_level = _linked_index(workspace, offers, day)
    gradings = [grade_offer(o, workspace.grades) for o in offers]
    ratings = [rate_offer(o, config.rating) for o in offers]
    assign_tiers(ratings, config.rating)
    readings = [_throughput(o, workspace, config.workload.interactivity) for o in offers]
    layers = [offer_availability(o, rt, workspace, day) for o, rt in zip(offers, ratings)]
    rows, columns = _cost_columns(workspace, offers, readings, layers, index_level)
    model = CostModel(config.workload, config.assumptions)
    outputs, costs = _costs(columns, model, len(offers))
    evidence: dict[str, Any] = {}
    if delivered and workspace.actuals:
        evidence, columns, outputs, costs = _delivered(workspace, day, offers, rows, columns, model, outputs, costs)

    records = [
        _record(o, g, rt, r, c, workspace, day, index_level if o.pricing.index_linked else None, lay)
        for o, g, rt, r, c, lay in zip(offers, gradings, ratings, readings, costs, layers)
    ]
    from procure.analysis.cashflow import term_average_rent

    _note_evidence(records, evidence)
    for record in records:
        # The snapshot ranks on the term-average rent (`rent`); today's rent (`rent_today`) beside it shows
        # what an escalator adds.
        record.metrics["rent_term_average"] = _clean(term_average_rent(record.metrics.get("rent_today"), record.terms.contract, record.term_months))
    horizon = horizon or None
    plan_of = _horizon_schedule(workspace, day, index_level, horizon)
    if horizon is not None:
        _over_horizon(records, horizon, plan_of, config)
    rank_key = "horizon_cost_per_task" if (horizon is not None and rank_by_horizon) else "cost_per_task"
    ranked = _rank(records, rank_key)
    _ties_to_leader(records, ranked, rank_key, columns, outputs, config, plan_of)
    rest = sorted((r for r in records if not r.acceptable), key=lambda r: r.id)
    inputs = CostInputs(columns, model, offers, [r.currency for r in records])
    info = _ranges(monte_carlo, records, inputs, evidence, config) if monte_carlo is not None else None
    evaluation = Evaluation(
        as_of=day,
        currency=config.currency,
        inputs=[InputRecord(path=f.path, sha256=f.sha256) for f in workspace.inputs],
        workload=config.workload,
        assumptions=_resolved_assumptions(config.assumptions),
        policy=config.policy,
        grades=[GradeInfo(id=g.id, name=g.name, rank=g.rank, expect=g.expect) for g in workspace.grades],
        rating_method=method_text(config.rating),
        summary=_summary(ranked, len(records), rank_key).model_copy(update={"common_reasons": common_reasons(records), "knife_edges": knife_edges(ranked[0], config) if ranked else []}),
        uncertainty=info,
        horizon_months=horizon,
        rank_by=rank_key,
        offers=ranked + rest,
    )
    return evaluation, inputs


def knife_edges(record: OfferRecord, config: Any) -> list[KnifeEdge]:
    """The drawn gates (availability, capacity) an offer passes by less than one standard deviation of its
    own inputs, as the Monte Carlo draws them (docs/uncertainty.md):

    - availability: the expected availability A against policy.min_availability; A is drawn as A x f, f the
      availability factor, so its sd is A x sd(f);
    - capacity: the GPUs it can supply against the GPUs the demand needs x min_demand_coverage, which go
      as demand / (throughput x availability x utilization): their relative sd is, to first order, the
      root of the sum of the squared coefficients of variation of those factors (throughput: the curve's
      residual x the serving stack x benchmark to production, for a GPU-hour offer).
    """
    from procure.analysis.uncertainty import availability_distribution, throughput_distribution

    spec = config.uncertainty
    found: list[KnifeEdge] = []
    terms = record.terms

    def cv(d: Any) -> float:
        return d.sd / d.mean if d.mean > 0 else 0.0

    for g in record.gates:
        if not g.passed:
            continue
        if g.gate == "availability" and record.metrics.get("availability") is not None:
            value, minimum = float(record.metrics["availability"]), config.policy.min_availability  # type: ignore[arg-type]
            sd = value * availability_distribution(terms, spec).sd
            if sd > 0 and value - minimum < sd:
                found.append(KnifeEdge(
                    gate="availability", value=value, requirement=minimum, margin=value - minimum, sd=sd,
                    words=(
                        f"{record.vendor} passes the availability minimum by {(value - minimum) * 100:.2f} points ({value:.2%} against {minimum:.2%}), "
                        f"less than one standard deviation of its own availability ({sd * 100:.2f} points): its acceptance hangs on that margin"
                    ),
                ))
        elif g.gate == "capacity" and record.metrics.get("gpus_needed") is not None and config.workload.tasks_per_month is not None:
            supply = float(terms.supply_gpus)
            required = float(record.metrics["gpus_needed"]) * config.policy.min_demand_coverage  # type: ignore[arg-type]
            if terms.per_token or required <= 0:
                continue
            factor = (1 + cv(throughput_distribution(terms, spec)) ** 2) * (1 + cv(spec.stack) ** 2) * (1 + cv(spec.production) ** 2) - 1
            rel = (factor + cv(availability_distribution(terms, spec)) ** 2 + cv(spec.utilization) ** 2 + cv(spec.demand) ** 2) ** 0.5
            sd = required * rel
            if sd > 0 and supply - required < sd:
                found.append(KnifeEdge(
                    gate="capacity", value=supply, requirement=required, margin=supply - required, sd=sd,
                    words=(
                        f"{record.vendor} can supply {supply:,.0f} GPUs against the {required:,.1f} the demand needs, a margin of {supply - required:,.1f}, "
                        f"less than one standard deviation of that need from its own inputs ({sd:,.1f} GPUs): its acceptance hangs on that margin"
                    ),
                ))
    return found


def drawn_gates(records: list[OfferRecord], config: Any) -> Gates:
    """What each Monte Carlo draw re-applies (procure.analysis.uncertainty.DRAWN_GATES), from the point's records:
    an offer whose other gates pass (and whose cost can be computed) is judged in every draw on its drawn
    availability and, for a GPU-hour offer with a stated demand, on the GPUs the drawn demand needs."""
    from procure.analysis.uncertainty import DRAWN_GATES

    demand = config.workload.tasks_per_month is not None
    others = [
        not any(not g.passed for g in r.gates if g.gate not in DRAWN_GATES or (g.gate == "capacity" and (r.pricing_basis == "per_token" or not demand)))
        and r.metrics.get("cost_per_task") is not None
        and all(any(reason == g.detail for g in r.gates) for reason in r.reasons)
        for r in records
    ]
    return Gates(
        others_pass=np.array(others, dtype=bool),
        min_availability=config.policy.min_availability,
        capacity_drawn=np.array([demand and r.pricing_basis != "per_token" for r in records], dtype=bool),
        supply=np.array([float(r.terms.supply_gpus) for r in records]),
        coverage=config.policy.min_demand_coverage,
    )


def gates_of(ev: Evaluation, inputs: CostInputs, config: Any) -> Gates:
    """drawn_gates for an evaluation's offers, in the order of its cost inputs."""
    return drawn_gates([ev.offer(o.id) for o in inputs.offers], config)


def _summary(ranked: list[OfferRecord], count: int, rank_key: str = "cost_per_task") -> Summary:
    leader = ranked[0] if ranked else None
    runner = ranked[1] if len(ranked) > 1 else None
    gap = share = None
    if leader and runner:
        lead_cost, runner_cost = leader.metrics[rank_key], runner.metrics[rank_key]  # the figure the ranking uses
        assert lead_cost is not None and runner_cost is not None  # ranked offers have a cost
        gap = runner_cost - lead_cost
        share = gap / lead_cost if lead_cost > 0 else None  # no relative gap to a leader that costs nothing
    closest = min((g for g in leader.gates if g.margin is not None), key=lambda g: g.margin, default=None) if leader else None
    return Summary(
        recommended=leader.id if leader else None,
        runner_up=runner.id if runner else None,
        gap_per_task=gap,
        gap_share=share,
        runner_up_price_to_tie=runner.metrics.get("price_to_tie") if runner else None,
        closest_gate=closest.gate if closest else None,
        closest_gate_margin=closest.margin if closest else None,
        near_gates=[g for g in leader.gates if g.margin is not None and g.margin < NEAR_GATE_MARGIN] if leader else [],
        customer_jobs=[job for job, owner in leader.responsibilities.items() if owner != "provider"] if leader else [],
        acceptable=len(ranked),
        offers=count,
    )


def _resolved_assumptions(assumptions: Assumptions) -> Assumptions:
    """The assumptions as used: every job's staffing spelled out, defaults included."""
    jobs = {job: assumptions.staffing(job) for job in OPERATING_JOBS}
    return assumptions.model_copy(update={"jobs": jobs})


def _frontier_points(offer: Offer, workspace: Workspace) -> list[tuple[float, ...]]:
    if offer.performance.points:
        return [tuple(p) for p in offer.performance.points]  # type: ignore[misc]
    if offer.performance.reference:
        return list(workspace.curves[offer.performance.reference].points)
    return []


def _curve_source(offer: Offer, workspace: Workspace) -> str:
    """'measured' for an offer on a curve of the buyer's own trial (`perf import` of trial results), else 'reference'."""
    curve = workspace.curves.get(offer.performance.reference or "")
    return curve.points_source if curve is not None else "reference"


def _throughput(offer: Offer, workspace: Workspace, target: float) -> ThroughputReading | None:
    if offer.per_token:
        return None
    return throughput_at(_frontier_points(offer, workspace), target, workspace.config.assumptions.interpolation)


def reliability_factor(offer: Offer, rating: Rating, assumptions: Assumptions) -> float | None:
    """What the provider's SLA figure is worth, by the operator's rating (None: owned)."""
    return reliability_of(offer, rating, assumptions).factor


def offer_availability(offer: Offer, rating: Rating, workspace: Workspace, day: date) -> AvailabilityLayers:
    """The offer's availability layers; a status history is measured over the `days` before `day`."""
    assumptions = workspace.config.assumptions
    reliability = reliability_of(offer, rating, assumptions)
    spec = offer.operator.status_history
    incidents = workspace.histories.get(offer.id)
    if spec is None or incidents is None:
        return availability_layers(offer, reliability, assumptions)
    from datetime import datetime, time, timedelta, timezone

    from procure.io.incidents import availability, downtime

    end = datetime.combine(day, time(0), tzinfo=timezone.utc)
    start = end - timedelta(days=spec.days)
    measured = availability(incidents, start, end, spec.components, spec.impacts)
    lost = downtime(incidents, start, end, spec.components, spec.impacts)
    basis = f"status history {spec.file}: {lost.total_seconds() / 60:,.0f} min down in the {spec.days} days before {day}"
    return availability_layers(offer, reliability, assumptions, measured, basis)


def _cost_row(offer: Offer, reading: ThroughputReading | None, layers: AvailabilityLayers, workspace: Workspace, index_price: float) -> dict[str, Any]:
    from procure.analysis.cashflow import term_average_rent

    p = offer.pricing
    nan = math.nan
    basis = "per_token" if p.per_mtok else "owned" if p.owned else "index" if p.index_linked else "gpu_hour"
    fees = p.fees
    if offer.on_demand and p.burst is not None and basis != "per_token":
        basis = "gpu_hour"  # a pure on-demand offer: the burst price is its price
    on_demand_price = p.burst.gpu_hour if offer.on_demand and p.burst is not None else None
    row: dict[str, Any] = {
        "basis": basis,
        "fx": workspace.fx_rate(p.currency),
        "gpu_hour": p.gpu_hour if p.gpu_hour is not None else on_demand_price if on_demand_price is not None else nan,
        "discount": p.discount,
        "index_level": index_price if p.index_linked else nan,
        "spread": p.index_linked.spread if p.index_linked else nan,
        "floor": p.index_linked.floor if p.index_linked and p.index_linked.floor is not None else nan,
        "cap": p.index_linked.cap if p.index_linked and p.index_linked.cap is not None else nan,
        "per_mtok_input": p.per_mtok.input if p.per_mtok else nan,
        "per_mtok_output": p.per_mtok.output if p.per_mtok else nan,
        "per_mtok_cached_input": p.per_mtok.cached_input if p.per_mtok and p.per_mtok.cached_input is not None else nan,
        "gpus": offer.gpus if offer.gpus is not None else nan,
        "max_gpus": offer.supply_gpus or nan,
        "term_months": offer.contract_months,
        "fees_once": sum(f.once for f in fees if f.once is not None),
        "fees_monthly": sum(f.monthly for f in fees if f.monthly is not None),
        "fees_gpu_hour": sum(f.gpu_hour for f in fees if f.gpu_hour is not None),
        "fees_per_tb_month": sum(f.per_tb * (f.tb_per_month or 0) for f in fees if f.per_tb is not None),
        "prepay_fraction": p.prepay_fraction,
        "software_gpu_hour": p.software_gpu_hour,
        # The stated reading; evaluate_with_inputs puts the point factor on it (POINT_COLUMN).
        "throughput": reading.throughput if reading and reading.throughput is not None else nan,
        "sla_availability": offer.service.sla.availability if offer.service.sla else nan,
        # Every layer in one factor on the SLA (owned: the availability itself), as the cost model takes it.
        "reliability_factor": layers.costed if offer.owned else (layers.costed / offer.service.sla.availability if offer.service.sla else nan),
        "quality_pass_rate": offer.performance.quality_pass_rate,
        # the escalators averaged over the term's months: the cost model ranks on the term-average rent
        "escalation": term_average_rent(1.0, offer.contract, offer.contract_months) or 1.0,
    }
    owned = p.owned
    for name in ("capex_per_gpu", "life_years", "power_kw_per_gpu", "pue", "electricity_kwh", "colo_kw_month"):
        row[name] = getattr(owned, name) if owned else nan
    for job in OPERATING_JOBS:
        row[f"owner_{job}"] = OWNER_CODES[offer.responsibilities.get(job, "customer")]
    return row


def _clean(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


def _reasons(gates: list[GateResult], metrics: dict[str, float | None], rating: Rating) -> list[str]:
    """Why the offer is not acceptable (none: it is), root cause first. Capacity cannot be judged without
    successful tasks; the latency or quality reason already says why."""
    explained = any(g.gate in ("latency", "quality") and not g.passed for g in gates)
    reasons = [g.detail for g in gates if not g.passed and not (explained and g.detail.startswith("capacity not assessed"))]
    if not reasons and metrics["cost_per_task"] is None:
        reasons.append("cost per successful task cannot be computed")
    return _root_cause_first(gates, reasons, rating)


def _reading_notes(offer: Offer, workspace: Workspace, reading: ThroughputReading | None, gates: list[GateResult], rating: Rating) -> list[str]:
    """What the figures rest on, said: a reading in a wide gap between measured points, gates passed by policy
    on what is not stated, and claims the service terms do not promise."""
    notes = _notes(offer, workspace)
    if reading is not None and reading.wide_gap:
        notes.append(
            f"the target {reading.target:g} tok/s/user lies in a gap of {reading.gap:g} between measured points, wider than half the target: "
            f"the reading's P10-P90 is x{reading.low:.2f} to x{reading.high:.2f} (docs/interpolation.md); a point measured at the target would settle it"
        )
    notes += [f"{g.gate} gate passed by policy although {g.detail}" for g in gates if g.passed and "not stated" in g.detail]
    for path in rating.contract_overrides:
        notes.append(f"{path} is claimed but the service terms do not promise it: the service terms are used")
    return notes


def _record_reliability(offer: Offer, rating: Rating, workspace: Workspace, layers: AvailabilityLayers) -> ReliabilityResult:
    """What the provider's SLA figure is worth; a measured incident history sets the provider's layer, shown as
    a factor on the SLA, for the record."""
    reliability = reliability_of(offer, rating, workspace.config.assumptions)
    if layers.measured and layers.provider is not None:
        sla = offer.service.sla.availability if offer.service.sla else None
        reliability = ReliabilityResult(layers.provider / sla if sla else None, "status_history", layers.provider_basis)
    return reliability


def _burst(offer: Offer, layers: AvailabilityLayers, metrics: dict[str, float | None], reasons: list[str], notes: list[str]) -> bool:
    """Spot or preemptible capacity is a pay-as-used burst source, never the primary offer. Its restart cost is
    priced when the interruption rate is stated: cost per task scales as 1 / availability, so the share lost to
    restarts is paid for without output."""
    burst = offer.service.preemptible or bool(offer.service.interruptions_per_month)
    if burst:
        reasons.insert(0, "spot or preemptible capacity (service.preemptible): a pay-as-used burst source, never the primary offer")
        if offer.service.interruptions_per_month is None:
            notes.append("interruption rate not stated (service.interruptions_per_month): the restart cost is not priced")
        elif metrics["cost_per_task"] is not None:
            lost = 1.0 - layers.interruption
            metrics["restart_cost_per_task"] = metrics["cost_per_task"] * lost
            notes.append(
                f"restart cost priced: {offer.service.interruptions_per_month:g} interruptions a node-month x {offer.service.restart_minutes:g} min lost "
                f"= {lost:.3%} of billed time, {metrics['cost_per_task'] * lost * 1000:.3f} per 1,000 tasks"
            )
    return burst


def _dated_notes(offer: Offer, day: date, index_level: IndexLevel | None, notes: list[str]) -> None:
    """An offer about to expire, and an index level older than STALE_INDEX_DAYS, are warned about."""
    left = (offer.valid_until - day).days
    if 0 <= left <= EXPIRY_WARNING_DAYS:
        notes.append(f"expires in {left} day{'s' if left != 1 else ''} (valid until {offer.valid_until})")
    if index_level is not None and (day - index_level.date).days > STALE_INDEX_DAYS:
        notes.append(f"the index level used ({index_level.price:.2f} on {index_level.date}) is {(day - index_level.date).days} days older than {day}")


def _availability_record(layers: AvailabilityLayers) -> AvailabilityRecord:
    """The availability layers as recorded, with the sentence that multiplies them out."""
    return AvailabilityRecord(
        provider=layers.provider, provider_costed=layers.provider_costed, provider_basis=layers.provider_basis, ours=layers.ours,
        our_jobs=list(layers.our_jobs), interruption=layers.interruption, expected=layers.expected, costed=layers.costed, text=layers.text(),
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
        operational_score=rating.operational_score,
        tier_note=rating.tier_note,
        contract_overrides=rating.contract_overrides,
        unanswered=[f"{r.category}.{r.criterion}" for r in rating.results if r.answer is None],
    )


def _record(
    offer: Offer,
    grading: GradeResult,
    rating: Rating,
    reading: ThroughputReading | None,
    cost: dict[str, Any],
    workspace: Workspace,
    day: date,
    index_level: IndexLevel | None,
    layers: AvailabilityLayers,
) -> OfferRecord:
    """One offer's record: its gates and why it is or is not acceptable, its notes, and every figure behind them."""
    metrics = {key: _clean(cost.get(key)) for key in METRIC_KEYS + EXTRA_METRIC_KEYS}  # price_to_tie: set after ranking
    gates = offer_gates(offer, grading, reading, metrics, workspace, day, layers, _frontier_points(offer, workspace) if reading is not None else [])
    reasons = _reasons(gates, metrics, rating)
    notes = _reading_notes(offer, workspace, reading, gates, rating)
    reliability = _record_reliability(offer, rating, workspace, layers)
    actions = []
    if layers.unrated:
        notes.append(f"{UNRATED} ({reliability.basis}); {RATE_BEFORE_SIGNING}")
        actions.append(RATE_BEFORE_SIGNING)
    burst = _burst(offer, layers, metrics, reasons, notes)
    _dated_notes(offer, day, index_level, notes)
    return OfferRecord(
        id=offer.id,
        vendor=offer.vendor,
        grade=grading.grade,
        acceptable=not reasons,
        rating_state="self_operated" if offer.owned else "unrated" if layers.unrated else "rated",
        availability_layers=_availability_record(layers),
        role="burst" if burst else "primary",
        actions=actions,
        rank=None,
        reasons=reasons,
        notes=notes,
        kind=offer.service.kind,
        region=offer.region,
        pricing_basis="per_token" if offer.per_token else "owned" if offer.owned else "index" if offer.pricing.index_linked else "gpu_hour",
        currency=offer.pricing.currency or workspace.config.currency,
        gpus=offer.gpus,
        max_gpus=offer.supply_gpus or None,
        term_months=offer.contract_months,
        valid_until=offer.valid_until,
        stack=offer.performance.stack,
        points_source=None if offer.per_token else (offer.performance.points_source if offer.performance.points else _curve_source(offer, workspace)),
        performance_points=pareto_frontier(_frontier_points(offer, workspace)) if not offer.per_token else [],
        max_interactivity=reading.max_interactivity if reading else None,
        ttft_s=ttft_at(_frontier_points(offer, workspace), workspace.config.workload.interactivity) if not offer.per_token else None,
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


def _notes(offer: Offer, workspace: Workspace) -> list[str]:
    notes = []
    wl = workspace.config.workload
    if offer.per_token and wl.tasks_per_month is None and (offer.pricing.fees or _customer_jobs(offer)):
        notes.append("no tasks_per_month in procure.yaml: fees and staff of a per-token offer are not spread over tasks")
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
    cause = f"{availability.detail} (the lowest reliability band: critical failure {'; '.join(rating.critical_failures)})"
    ordered = [cause if r == availability.detail else r for r in reasons]
    security = failed.get("security")
    if security is not None and security.detail in ordered:
        ordered.remove(security.detail)
        ordered.insert(0, security.detail)
    return ordered
