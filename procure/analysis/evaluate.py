"""The pipeline: load -> grade -> throughput at the target -> cost -> demand fit -> gates -> rank.

The Evaluation it returns is the one canonical result. Every output (table, JSON, CSV, Markdown,
reports) is rendered from it; no renderer recomputes a figure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from procure import __version__
from procure.analysis.gates import GateResult
from procure.analysis.horizon_flows import HorizonDemand, horizon_demand, horizon_schedule, over_horizon
from procure.analysis.recommendation import Recommendation
from procure.analysis.record import OfferRecord, ThroughputFactor, finite_or_none, frontier_points, offer_record
from procure.analysis.ties import ties_to_leader
from procure.analysis.uncertainty import (
    GAP_COLUMN,
    POINT_COLUMN,
    DrawnOutcome,
    Gates,
    UncertaintyInfo,
    availability_distribution,
    point_throughput_factor,
)
from procure.analysis.verdict import (
    GATE_RISK_PROBABILITY,
    CommonReason,
    GateRisk,
    KnifeEdge,
    common_reasons,
    drawn_gates,
    drawn_outcome,
    gate_risks,
    knife_edges,
)
from procure.errors import InputError, Problem
from procure.io.workspace import IndexLevel, Workspace
from procure.model.costing import (
    AVAILABILITY_POINT,
    INPUT_COLUMNS,
    OWNER_CODES,
    UTILIZATION_POINT,
    CostModel,
    cost_arrays,
    finite,
)
from procure.model.grading import grade_offer
from procure.model.inputs import OPERATING_JOBS, Assumptions, Offer, Policy, Workload
from procure.model.kinds import GPU_HOUR, KINDS, kind_of
from procure.model.performance import ThroughputReading, reading_mean, throughput_at
from procure.model.rating import (
    RATE_BEFORE_SIGNING,
    AvailabilityLayers,
    Rating,
    assign_tiers,
    availability_layers,
    method_text,
    rate_offer,
    reliability_of,
)
from procure.model.units import PerThousand, per_thousand

# 1.1: costs per 1,000 tasks beside the costs per task (envelope.py); 1.2: recommendation.lines[].gpus_committed;
# 1.3: recommendation.deadline_reason (the last day to sign and start on time) and lines[].conditions
SCHEMA_VERSION = "1.3"

# A gate with less relative headroom than this is reported as a risk for the recommendation.
NEAR_GATE_MARGIN = 0.05


class InputRecord(BaseModel):
    path: str
    sha256: str


class GradeInfo(BaseModel):
    id: str
    name: str
    rank: int
    expect: str


def verdict_lines(ev: Evaluation) -> list[str]:
    """What a buyer must know beside the ranking: no acceptable offer and why, unrated offers to rate
    before signing, spot offers kept as burst sources (text for validate and compare)."""
    lines = []
    if not ev.ranked and ev.offers:
        lines.append(f"no offer is acceptable (0 of {len(ev.offers)}); the commonest reasons:")
        for reason in ev.summary.common_reasons:
            count = len(reason.offers)
            lines.append(
                f"  {reason.gate} ({count} offer{'s' if count != 1 else ''}, e.g. {reason.example}): change "
                f"{reason.fields}"
            )
    for risk in ev.summary.gate_risks:
        lines.append(f"risk: {risk.words}")
    unrated = [o.id for o in ev.ranked if o.rating_state == "unrated"]
    if unrated:
        lines.append(
            f"unrated, availability unverified (ranked with the unrated haircut): {', '.join(unrated)}; "
            f"{RATE_BEFORE_SIGNING}"
        )
    burst = [o for o in ev.offers if o.role == "burst"]
    for record in burst:
        usable = all(g.passed for g in record.gates if g.gate not in ("availability", "capacity"))
        restart = record.metrics.get("restart_cost_per_task")
        priced = (
            f", restart cost {per_thousand(restart):.3f} per 1,000 tasks"
            if restart is not None
            else ", restart cost not priced (service.interruptions_per_month not stated)"
        )
        failed = "; ".join(
            g.detail for g in record.gates if not g.passed and g.gate not in ("availability", "capacity")
        )
        lines.append(
            f"secondary source (pay-as-used burst, never the primary offer): {record.id}"
            + (priced if usable else f" (not usable: {failed})")
        )
    return lines


def no_acceptable_offer(ev: Evaluation, command: str, option: str = "", instead: str = "") -> Any:
    """The one problem of a command that works from the acceptable offers (plan, position, hedge, sensitivity,
    whatif --price-to-win) when there is none: exit 2 with the commonest reason, the settings that change it and
    where to read each offer's reasons; `instead` is what the command can do without one (name an offer)."""
    from procure.errors import InputError, Problem

    reason = ev.summary.common_reasons[0] if ev.summary.common_reasons else None
    why = ""
    if reason is not None:
        count = len(reason.offers)
        why = f"; the commonest reason: {reason.gate} ({count} offer{'s' if count != 1 else ''})"
        why += f", changed by {reason.fields}" if reason.fields else ""
    message = (
        f"no acceptable offer as of {ev.as_of} (0 of {len(ev.offers)} pass every requirement{why}); "
        f"`procure compare` gives each offer's reasons{f', or {instead}' if instead else ''}"
    )
    return InputError([Problem(command, None, option, message)])


class Summary(PerThousand):
    """The ranking in figures: leader, runner-up, the gap, and what would change it. What to buy is the
    evaluation's `recommendation` (the plan over the demand scenarios where procure.yaml states one), as `procure
    decide` writes it."""

    recommended: str | None = Field(
        description="the ranking's first offer, the cheapest acceptable one at today's stated demand (a name kept for "
        "scripts); what to buy is `recommendation`, which names this offer only when it is the single-offer answer"
    )
    runner_up: str | None
    gap_per_task: float | None = Field(description="runner-up minus recommended cost per task")
    gap_share: float | None = Field(description="the gap as a share of the recommended cost per task")
    runner_up_price_to_tie: float | None = Field(description="runner-up list price per GPU-hour that ties the leader")
    closest_gate: str | None = Field(description="the recommended offer's gate with the least headroom")
    closest_gate_margin: float | None
    near_gates: list[GateResult] = Field(
        description=f"the recommendation's gates passed with under {NEAR_GATE_MARGIN:.0%} headroom"
    )
    customer_jobs: list[str] = Field(
        description="operating jobs the recommendation leaves with the buyer (customer or shared)"
    )
    acceptable: int
    offers: int
    common_reasons: list[CommonReason] = Field(
        default_factory=list, description="the three gates most offers fail, with the fields that would change each"
    )
    knife_edges: list[KnifeEdge] = Field(
        default_factory=list,
        description="the recommendation's gates passed by less than one standard deviation of its own inputs",
    )
    gate_risks: list[GateRisk] = Field(
        default_factory=list,
        description="the recommendation's drawn gates (availability, capacity) passed in fewer than "
        f"{GATE_RISK_PROBABILITY:.0%} of the draws of its own inputs",
    )


class Evaluation(BaseModel):
    """The canonical, versioned result of one evaluation."""

    schema_version: str = SCHEMA_VERSION
    tool: str = f"procure {__version__}"
    command: str = Field(
        "evaluate", description="the command that wrote it: compare or evaluate (the envelope every JSON output shares)"
    )
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
        None,
        description="what to sign: the plan with `demand:`, else the best acceptable offer (compare, plan, hedge and "
        "the reports; null from evaluate)",
    )
    uncertainty: UncertaintyInfo | None = None
    horizon_months: int | None = None
    horizon_demand: HorizonDemand | None = Field(
        None, description="the demand each month of the horizon's cash flows wants (null: no horizon, or none stated)"
    )
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


def evaluate(
    workspace: Workspace,
    as_of: date | None = None,
    monte_carlo: MonteCarlo | None = None,
    horizon: int | None = None,
    rank_by_horizon: bool = False,
    delivered: bool = True,
) -> Evaluation:
    return evaluate_with_inputs(workspace, as_of, monte_carlo, horizon, rank_by_horizon, delivered)[0]


def _linked_index(workspace: Workspace, offers: list[Offer], day: date) -> IndexLevel | None:
    """The index level on the as-of date; index-linked offers cannot be priced without one (an input error)."""
    index_level = workspace.index_level_on(day)
    if index_level is None and any(kind_of(o.pricing).index_rent for o in offers):
        linked = ", ".join(o.id for o in offers if kind_of(o.pricing).index_rent)
        raise InputError(
            [
                Problem(
                    "market/index.csv",
                    None,
                    "",
                    f"no index level on or before {day} (needed by index-linked offers: {linked})",
                )
            ]
        )
    return index_level


def _cost_columns(
    workspace: Workspace,
    offers: list[Offer],
    readings: list[ThroughputReading | None],
    layers: list[AvailabilityLayers],
    index_level: IndexLevel | None,
) -> dict[str, np.ndarray]:
    """The cost model's inputs as columns, one row per offer, at the point: every drawn factor at its mean
    (docs/uncertainty.md). The stated throughput x the means of its curve, serving stack and benchmark to
    production factors and of its reading between frontier points (docs/interpolation.md); the expected
    availability and the workload's utilization x the means of their factors. The draws replace each mean
    with a draw of its factor, so the point is the centre of its own range."""
    config = workspace.config
    spec = config.uncertainty
    rows = [
        _cost_row(o, r, lay, workspace, index_level.price if index_level else math.nan)
        for o, r, lay in zip(offers, readings, layers)
    ]
    columns = {name: np.array([row[name] for row in rows]) for name in INPUT_COLUMNS}
    columns[GAP_COLUMN] = np.array(
        [r.gap_share if r is not None and spec.readings else 0.0 for r in readings], dtype=float
    )
    columns[POINT_COLUMN] = np.array(
        [point_throughput_factor(o, spec) * reading_mean(g) for o, g in zip(offers, columns[GAP_COLUMN])], dtype=float
    )
    columns["throughput"] = columns["throughput"] * columns[POINT_COLUMN]
    # The factors' means below the cap of 1 on the product (E[min(1, figure x factor)] / figure), as the draws cap them.
    columns[AVAILABILITY_POINT] = np.array(
        [
            availability_distribution(o, spec).capped_mean(1 / lay.costed) if lay.costed > 0 else 1.0
            for o, lay in zip(offers, layers)
        ],
        dtype=float,
    )
    columns[UTILIZATION_POINT] = np.full(
        len(offers), spec.utilization.capped_mean(1 / workspace.config.workload.utilization)
    )
    return columns


def _costs(
    columns: dict[str, np.ndarray], model: CostModel, count: int
) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    """The cost model over every offer at once, as columns and as one dict per offer."""
    outputs = finite(cost_arrays(columns, model))
    return outputs, [{key: values[i] for key, values in outputs.items()} for i in range(count)]


def _delivered(
    workspace: Workspace,
    day: date,
    offers: list[Offer],
    columns: dict[str, np.ndarray],
    model: CostModel,
    outputs: dict[str, np.ndarray],
    costs: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, np.ndarray], list[dict[str, Any]]]:
    """Signed vendors' delivered evidence (actuals/) on the very figures it was measured against (the
    promise as evaluated here, `costs`), and the costs again with it. Only a signed vendor's own row
    changes: every other offer keeps its promised figures to the bit. Without evidence the promised
    columns and costs stand."""
    from procure.analysis.scorecard import apply_evidence, delivered_evidence

    evidence = delivered_evidence(workspace, day, offers, costs)
    if evidence:
        columns = apply_evidence(columns, [evidence.get(o.id) for o in offers])
        outputs, costs = _costs(columns, model, len(offers))
    return evidence, columns, outputs, costs


def throughput_factors(
    offer: Offer, reading: ThroughputReading | None, spec: Any, evidence: Any, source: str | None
) -> list[ThroughputFactor]:
    """The throughput the cost uses, factor by factor (their product is metrics.throughput): the curve's reading at
    the target, the means of the curve's, the serving stack's and benchmark to production's factors and of the
    reading's range between frontier points (docs/interpolation.md), and a signed vendor's delivered ratio."""
    from procure.analysis.uncertainty import throughput_distribution

    if offer.per_token or reading is None or reading.throughput is None:
        return []
    kind = offer.performance.points_source if offer.performance.points else "reference"
    own = spec.offers.get(offer.id)
    curve_setting = (
        f"uncertainty.offers.{offer.id}.throughput"
        if own and own.throughput is not None
        else f"uncertainty.throughput.{kind}"
    )
    found = [
        ThroughputFactor(
            name="curve reading at the target",
            value=reading.throughput,
            source=f"{source or kind} curve" + (f", {reading.note}" if reading.note else ""),
        ),
        ThroughputFactor(
            name=f"{kind.replace('_', ' ')} to true (mean)",
            value=throughput_distribution(offer, spec).mean,
            source=curve_setting,
        ),
        ThroughputFactor(name="serving stack (mean)", value=spec.stack.mean, source="uncertainty.stack"),
        ThroughputFactor(
            name="benchmark to production (mean)", value=spec.production.mean, source="uncertainty.production"
        ),
    ]
    if spec.readings and reading.gap_share > 0:
        found.append(
            ThroughputFactor(
                name="reading between frontier points (mean)",
                value=reading_mean(reading.gap_share),
                source=f"calibrated range, gap {reading.gap_share:.2f} x the target (docs/interpolation.md)",
            )
        )
    if evidence is not None and evidence.throughput_ratio is not None:
        found.append(
            ThroughputFactor(
                name="delivered / promised (posterior median)",
                value=evidence.throughput_ratio,
                source=f"actuals/{offer.id}: {evidence.months} months",
            )
        )
    return found


def _expected(costs: list[dict[str, Any]], drawn: DrawnOutcome) -> None:
    """Each offer's headline made the expected value: `cost_per_task` the mean of its drawn costs per successful task,
    `cost_per_mtok` with it (`expected_rent_per_task` the mean of the drawn rent per task, a per-task source's
    price in the plan); the cost at the typical inputs (every drawn factor at its mean, the
    formula's figure) stays as `point_cost_per_task`, and `costed_capacity_per_gpu_hour` is the capacity at which a
    fully used GPU-hour's cost per task is its expected one (the plan's and the cash flow's delivery)."""
    for i, figures in enumerate(costs):
        point = figures.get("cost_per_task")
        figures["point_cost_per_task"] = point
        mean = finite_or_none(float(drawn.mean_cost_per_task[i]))
        if point is None or mean is None:
            figures["costed_capacity_per_gpu_hour"] = figures.get("capacity_per_gpu_hour")
            continue
        figures["cost_per_task"] = mean
        figures["expected_to_point_ratio"] = mean / point if point > 0 else None
        if figures.get("cost_per_mtok") is not None and point > 0:
            figures["cost_per_mtok"] = figures["cost_per_mtok"] * mean / point
        rent = finite_or_none(float(drawn.mean_rent_per_task[i]))
        figures["expected_rent_per_task"] = rent if figures.get("rent_per_task") is not None else None
        capacity, costed = figures.get("capacity_per_gpu_hour"), finite_or_none(float(drawn.costed_capacity[i]))
        if capacity is not None and costed is not None and abs(costed - capacity) <= 1e-12 * abs(capacity):
            costed = capacity  # no uncertainty: the capacity itself, bit for bit
        figures["costed_capacity_per_gpu_hour"] = costed if capacity is not None else None


def _note_evidence(records: list[OfferRecord], evidence: dict[str, Any]) -> None:
    """Each offer blended with delivered evidence carries it, and a note that says so."""
    for record in records:
        found = evidence.get(record.id)
        if found is not None:
            from procure.analysis.scorecard import evidence_note

            record.evidence = found.model_dump()
            record.notes.append(evidence_note(found))


def _rank(records: list[OfferRecord], rank_key: str) -> list[OfferRecord]:
    """The acceptable offers, cheapest first by `rank_key` (ties by id), numbered from 1."""
    ranked = sorted((r for r in records if r.acceptable), key=lambda r: (r.metrics[rank_key], r.id))
    for position, record in enumerate(ranked, start=1):
        record.rank = position
    return ranked


def _ranges(
    monte_carlo: MonteCarlo, records: list[OfferRecord], inputs: CostInputs, evidence: dict[str, Any], config: Any
) -> UncertaintyInfo:
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
        inputs.columns,
        inputs.model,
        inputs.offers,
        inputs.currencies,
        config.currency,
        acceptable,
        spec,
        draws,
        seed,
        monte_carlo.progress,
        drawn_gates(records, config),
        posteriors,
    )
    for record, found in zip(records, ranges):
        record.uncertainty = found
    return UncertaintyInfo(draws=draws, seed=seed, method=uncertainty_method(spec, draws, seed, posteriors))


def _moved_cost(workspace: Workspace, day: date) -> Callable[[Offer], float | None]:
    """The expected cost per task of one offer, its terms moved, evaluated alone on the workspace's other inputs."""
    return lambda moved: point_costs(replace(workspace, offers=[moved]), day, True)[0].get("cost_per_task")


def point_costs(workspace: Workspace, as_of: date | None = None, expected: bool = False) -> list[dict[str, Any]]:
    """Each offer's figures at the point, as `evaluate` puts them in its metrics (signed vendors' delivered evidence
    blended in), without the gates' odds, the records or the ranking: what a search over one input needs at each of
    its steps (what-if's break-even throughput). `expected`: with the expected figures the draws give (the headline,
    `cost_per_task`), as `evaluate` has them."""
    found = _point(workspace, resolve_as_of(workspace, as_of), True)
    costs = found[8]
    if expected:
        offers, config = workspace.offers, workspace.config
        currencies = [o.pricing.currency or config.currency for o in offers]
        _expected(costs, drawn_outcome(offers, found[5], found[6], found[9], config, currencies))
    return costs


def _point(workspace: Workspace, day: date, delivered: bool) -> tuple[Any, ...]:
    """The cost model at the point over every offer, and what it was built from: (index level, gradings, ratings,
    throughput readings, availability layers, columns, model, outputs, costs per offer, evidence)."""
    config = workspace.config
    offers = workspace.offers
    index_level = _linked_index(workspace, offers, day)
    gradings = [grade_offer(o, workspace.grades) for o in offers]
    ratings = [rate_offer(o, config.rating) for o in offers]
    assign_tiers(ratings, config.rating)
    readings = [_throughput(o, workspace, config.workload.interactivity) for o in offers]
    layers = [offer_availability(o, rt, workspace, day) for o, rt in zip(offers, ratings)]
    columns = _cost_columns(workspace, offers, readings, layers, index_level)
    model = CostModel(config.workload, config.assumptions)
    outputs, costs = _costs(columns, model, len(offers))
    evidence: dict[str, Any] = {}
    if delivered and workspace.actuals:
        evidence, columns, outputs, costs = _delivered(workspace, day, offers, columns, model, outputs, costs)
    return index_level, gradings, ratings, readings, layers, columns, model, outputs, costs, evidence


def evaluate_with_inputs(
    workspace: Workspace,
    as_of: date | None = None,
    monte_carlo: MonteCarlo | None = None,
    horizon: int | None = None,
    rank_by_horizon: bool = False,
    delivered: bool = True,
) -> tuple[Evaluation, CostInputs]:
    """`delivered`: blend the promised figures of signed vendors with their delivered evidence
    (actuals/; procure/analysis/scorecard.py); False gives the promise alone (what the scorecard compares with)."""
    day = resolve_as_of(workspace, as_of)
    config = workspace.config
    offers = workspace.offers
    index_level, gradings, ratings, readings, layers, columns, model, outputs, costs, evidence = _point(
        workspace, day, delivered
    )
    drawn = drawn_outcome(
        offers, columns, model, evidence, config, [o.pricing.currency or config.currency for o in offers]
    )
    _expected(costs, drawn)
    records = [
        offer_record(o, g, rt, r, c, workspace, day, index_level if kind_of(o.pricing).index_rent else None, lay, p)
        for o, g, rt, r, c, lay, p in zip(offers, gradings, ratings, readings, costs, layers, drawn.odds)
    ]
    from procure.analysis.cashflow import term_average_rent

    _note_evidence(records, evidence)
    for record, offer, reading in zip(records, offers, readings):
        record.throughput_factors = throughput_factors(
            offer, reading, config.uncertainty, evidence.get(offer.id), record.points_source
        )
    for record in records:
        # The snapshot ranks on the term-average rent (`rent`); today's rent (`rent_today`) beside it shows
        # what an escalator adds.
        record.metrics["rent_term_average"] = finite_or_none(
            term_average_rent(record.metrics.get("rent_today"), record.terms.contract, record.term_months)
        )
    horizon = horizon or None
    from procure.model.demand import expected_demand

    demand = expected_demand(config, horizon) if horizon else None  # the tasks each month of the horizon wants
    plan_of = horizon_schedule(workspace, day, index_level, horizon, demand)
    if horizon is not None:
        over_horizon(records, horizon, plan_of, workspace, offers, index_level, demand)
    rank_key = "horizon_cost_per_task" if (horizon is not None and rank_by_horizon) else "cost_per_task"
    ranked = _rank(records, rank_key)
    moved_cost = _moved_cost(workspace, day)
    ties_to_leader(records, ranked, rank_key, columns, outputs, config, plan_of, workspace, day, moved_cost)
    rest = sorted((r for r in records if not r.acceptable), key=lambda r: r.id)
    inputs = CostInputs(columns, model, offers, [r.currency for r in records])
    risks = gate_risks(ranked[0], config) if ranked else []
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
        summary=_summary(ranked, len(records), rank_key).model_copy(
            update={
                "common_reasons": common_reasons(records),
                "knife_edges": knife_edges(ranked[0], config) if ranked else [],
                "gate_risks": risks,
            }
        ),
        uncertainty=info,
        horizon_months=horizon,
        horizon_demand=horizon_demand(config, demand),
        rank_by=rank_key,
        offers=ranked + rest,
    )
    return evaluation, inputs


def gates_of(ev: Evaluation, inputs: CostInputs, config: Any) -> Gates:
    """drawn_gates for an evaluation's offers, in the order of its cost inputs."""
    return drawn_gates([ev.offer(o.id) for o in inputs.offers], config)


def offer_sensitivity(
    workspace: Workspace, ev: Evaluation, inputs: CostInputs, followed: list[str], count: int | None = None
) -> Any:
    """Each uncertain input at its low and high value (sensitivity.sensitivity) for the first `count` of the offers
    `followed` (default: all of them); a signed vendor's availability ends come from its delivered evidence."""
    from procure.analysis.sensitivity import sensitivity, top_offer_positions

    top = top_offer_positions(followed, inputs.offers, len(followed) if count is None else count)
    posteriors = None
    if workspace.actuals:
        from procure.analysis.scorecard import evaluation_posteriors

        posteriors = evaluation_posteriors(ev, inputs, workspace.config.uncertainty)
    return sensitivity(
        inputs.columns,
        inputs.model,
        inputs.offers,
        inputs.currencies,
        ev.currency,
        top,
        workspace.config.uncertainty,
        gates_of(ev, inputs, workspace.config),
        posteriors,
    )


def _summary(ranked: list[OfferRecord], count: int, rank_key: str = "cost_per_task") -> Summary:
    leader = ranked[0] if ranked else None
    runner = ranked[1] if len(ranked) > 1 else None
    gap = share = None
    if leader and runner:
        lead_cost, runner_cost = leader.metrics[rank_key], runner.metrics[rank_key]  # the figure the ranking uses
        assert lead_cost is not None and runner_cost is not None  # ranked offers have a cost
        gap = runner_cost - lead_cost
        share = gap / lead_cost if lead_cost > 0 else None  # no relative gap to a leader that costs nothing
    closest = (
        min((g for g in leader.gates if g.margin is not None), key=lambda g: g.margin, default=None) if leader else None
    )
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


def _throughput(offer: Offer, workspace: Workspace, target: float) -> ThroughputReading | None:
    if offer.per_token:
        return None
    return throughput_at(frontier_points(offer, workspace), target, workspace.config.assumptions.interpolation)


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
    from datetime import datetime, time, timedelta

    from procure.analysis.incidents import availability, downtime

    end = datetime.combine(day, time(0), tzinfo=UTC)
    start = end - timedelta(days=spec.days)
    measured = availability(incidents, start, end, spec.components, spec.impacts)
    lost = downtime(incidents, start, end, spec.components, spec.impacts)
    basis = (
        f"status history {spec.file}: {lost.total_seconds() / 60:,.0f} min down in the {spec.days} days before {day}"
    )
    return availability_layers(offer, reliability, assumptions, measured, basis)


def _cost_row(
    offer: Offer,
    reading: ThroughputReading | None,
    layers: AvailabilityLayers,
    workspace: Workspace,
    index_price: float,
) -> dict[str, Any]:
    from procure.analysis.cashflow import term_average_rent

    p = offer.pricing
    nan = math.nan
    stated = kind = kind_of(p)
    fees, demand = p.fees, workspace.config.workload.tasks_per_month is not None
    if offer.on_demand and p.burst is not None and kind.rented:
        kind = GPU_HOUR  # a pure on-demand offer: the burst price is its price
    on_demand_price = p.burst.gpu_hour if offer.on_demand and p.burst is not None else None
    row: dict[str, Any] = {
        "basis": kind.name,
        "fx": workspace.fx_rate(p.currency),
        "gpu_hour": p.gpu_hour if p.gpu_hour is not None else on_demand_price if on_demand_price is not None else nan,
        "discount": p.discount,
        # each kind's own columns, NaN: the offer's kind fills its own below
        **{name: nan for other in KINDS for name in other.columns},
        # billed whether used or not: an offer billed for the time it runs commits none (the kind's committed GPUs)
        "gpus": nan if offer.gpus is None else stated.committed(offer) if offer.usage_billed and demand else offer.gpus,
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
        "reliability_factor": layers.costed
        if offer.owned
        else (layers.costed / offer.service.sla.availability if offer.service.sla else nan),
        "quality_pass_rate": offer.performance.quality_pass_rate,
        # the escalators averaged over the term's months: the cost model ranks on the term-average rent
        "escalation": term_average_rent(1.0, offer.contract, offer.contract_months) or 1.0,
    }
    for job in OPERATING_JOBS:
        row[f"owner_{job}"] = OWNER_CODES[offer.responsibilities.get(job, "customer")]
    if stated.selected(p):  # last: a kind may restate a common column (its price, the GPUs it commits)
        row.update(stated.cost_columns(offer, index_price))
    return row
