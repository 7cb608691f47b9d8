"""What the gates say of the offers beside the ranking: the gates most offers fail and the fields that change them,
and the leader's named risks (drawn gates passed in too few draws) and knife edges (gates passed by less than one
standard deviation of its own inputs), and each offer's chance of passing the gates whose inputs are drawn."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from procure.analysis.gates import GATES
from procure.analysis.record import OfferRecord
from procure.analysis.uncertainty import (
    DrawnOutcome,
    Gates,
    availability_distribution,
)
from procure.model.costing import CostModel
from procure.model.inputs import Offer
from procure.model.kinds import kind_named


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
    "availability": "service.sla.availability, operator.published_tier / operator.evidence / operator.status_history, "
    "the responsibilities, or policy.min_availability",
    "security": "service.attestations, service.tenant_isolation, service.isolated_monitoring, or policy.require_*",
    "region": "region, or policy.allowed_regions",
    "capacity": "max_gpus, pricing.burst or service.rate_limits, or policy.min_demand_coverage",
    "grade": "what `procure grade --offer ID` names as missing, or policy.acceptable_grades",
    "validity": "valid_until, or --as-of",
}


def common_reasons(records: list[OfferRecord], limit: int = 3) -> list[CommonReason]:
    """The gates most offers fail (spot offers counted under `role`), commonest first, with the fields that change
    them."""
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
    ranked = sorted(
        failing.items(), key=lambda item: (-len(item[1]), order.index(item[0]) if item[0] in order else len(order))
    )
    found = []
    for gate_name, offers in ranked[:limit]:
        first = offers[0]
        example = (
            first.reasons[0]
            if gate_name == "role"
            else next(g.detail for g in first.gates if g.gate == gate_name and not g.passed)
        )
        found.append(
            CommonReason(
                gate=gate_name,
                offers=[o.id for o in offers],
                example=f"{first.id}: {example}",
                fields=GATE_FIELDS.get(gate_name, ""),
            )
        )
    return found


# A recommended offer that passes a drawn gate in fewer than this share of its draws carries it as a named risk.
GATE_RISK_PROBABILITY = 0.9


class GateRisk(BaseModel):
    """A drawn gate the recommended offer passes (probability >= policy.gate_confidence) but in fewer than GATE_RISK_PROBABILITY of the draws."""  # noqa: E501

    gate: str
    probability: float = Field(
        description="the share of the uncertainty draws of the offer's own inputs in which the gate passes"
    )
    words: str


class KnifeEdge(BaseModel):
    """A gate the recommendation passes by less than one standard deviation of its own drawn inputs."""

    gate: str
    value: float = Field(
        description="the figure the gate judges, at the point (availability; GPUs the offer can supply)"
    )
    requirement: float = Field(
        description="what the gate asks (policy.min_availability; the GPUs the demand needs x min_demand_coverage)"
    )
    margin: float = Field(description="value minus requirement")
    sd: float = Field(
        description="one standard deviation of the figure the gate compares, from the offer's own uncertain inputs "
        "(uncertainty:)"
    )
    words: str


def gate_risks(leader: OfferRecord, config: Any) -> list[GateRisk]:
    """The recommended offer's drawn gates (availability, capacity) passed in fewer than GATE_RISK_PROBABILITY
    of the draws of its own inputs (their probability is on its gates, drawn_outcome): its named risks."""
    return [
        GateRisk(
            gate=g.gate,
            probability=g.probability,
            words=(
                f"{leader.vendor} ({leader.id}) passes the {g.gate} gate in only {g.probability:.1%} of the "
                f"{config.uncertainty.draws:,} draws of its own inputs ({g.detail})"
            ),
        )
        for g in leader.gates
        if g.passed and g.probability is not None and g.probability < GATE_RISK_PROBABILITY
    ]


def knife_edges(record: OfferRecord, config: Any) -> list[KnifeEdge]:
    """The drawn gates (availability, capacity) an offer passes by less than one standard deviation of its
    own inputs, as the Monte Carlo draws them (docs/uncertainty.md):

    - availability: the expected availability at the mean of its draws, A x mean(f), against policy.min_availability;
      it is drawn as A x f, f the availability factor, so its sd is A x sd(f);
    - capacity: the GPUs it can supply against the GPUs the demand needs x min_demand_coverage, which go
      as demand / (throughput x availability x utilization): their relative sd is, to first order, the
      root of the sum of the squared coefficients of variation of those factors (throughput: the curve's
      residual x the serving stack x benchmark to production, for a GPU-hour offer).
    """
    from procure.analysis.uncertainty import throughput_distribution

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
            sd = value * cv(
                availability_distribution(terms, spec)
            )  # value = A x the factor's mean, the draws A x f: sd A x sd(f)
            words = (
                f"{record.vendor} passes the availability minimum by {(value - minimum) * 100:.2f} points "
                f"({value:.2%} against {minimum:.2%}), "
                f"less than one standard deviation of its own availability ({sd * 100:.2f} points): its "
                "acceptance hangs on that margin"
            )
        elif (
            g.gate == "capacity"
            and record.metrics.get("gpus_needed") is not None
            and config.workload.tasks_per_month is not None
        ):
            supply = float(terms.supply_gpus)
            required = float(record.metrics["gpus_needed"]) * config.policy.min_demand_coverage  # type: ignore[arg-type]
            if terms.per_token or required <= 0:
                continue
            factor = (1 + cv(throughput_distribution(terms, spec)) ** 2) * (1 + cv(spec.stack) ** 2) * (
                1 + cv(spec.production) ** 2
            ) - 1
            rel = (
                factor
                + cv(availability_distribution(terms, spec)) ** 2
                + cv(spec.utilization) ** 2
                + cv(spec.demand) ** 2
            ) ** 0.5
            sd = required * rel
            value, minimum = supply, required
            words = (
                f"{record.vendor} can supply {supply:,.0f} GPUs against the {required:,.1f} the demand "
                f"needs, a margin of {supply - required:,.1f}, "
                f"less than one standard deviation of that need from its own inputs ({sd:,.1f} GPUs): its "
                "acceptance hangs on that margin"
            )
        else:
            continue
        if sd > 0 and value - minimum < sd:
            found.append(
                KnifeEdge(gate=g.gate, value=value, requirement=minimum, margin=value - minimum, sd=sd, words=words)
            )
    return found


def drawn_gates(records: list[OfferRecord], config: Any) -> Gates:
    """What each Monte Carlo draw re-applies (procure.analysis.uncertainty.DRAWN_GATES), from the point's records:
    an offer whose other gates pass (and whose cost can be computed) is judged in every draw on its drawn
    availability and, for a GPU-hour offer with a stated demand, on the GPUs the drawn demand needs."""
    from procure.analysis.uncertainty import DRAWN_GATES

    demand = config.workload.tasks_per_month is not None
    others = [
        not any(
            not g.passed
            for g in r.gates
            if g.gate not in DRAWN_GATES
            or (g.gate == "capacity" and (kind_named(r.pricing_basis).per_task or not demand))
        )
        and r.metrics.get("cost_per_task") is not None
        and all(any(reason == g.detail for g in r.gates) for reason in r.reasons)
        for r in records
    ]
    return Gates(
        others_pass=np.array(others, dtype=bool),
        min_availability=config.policy.min_availability,
        capacity_drawn=np.array([demand and not kind_named(r.pricing_basis).per_task for r in records], dtype=bool),
        supply=np.array([float(r.terms.supply_gpus) for r in records]),
        coverage=config.policy.min_demand_coverage,
    )


def drawn_outcome(
    offers: list[Offer],
    columns: dict[str, np.ndarray],
    model: CostModel,
    evidence: dict[str, Any],
    config: Any,
    currencies: list[str],
) -> DrawnOutcome:
    """Each offer's probability of passing the gates whose inputs are drawn, on the draws `--uncertainty`
    makes (a signed vendor's from its posteriors): what decides those gates (policy.gate_confidence); and its
    expected figures over the same draws (the headline)."""
    from procure.analysis.uncertainty import gate_odds

    posteriors = None
    if evidence:
        from procure.analysis.scorecard import posteriors_for_draws

        posteriors = posteriors_for_draws(evidence, offers, columns, config.uncertainty)
    supply = np.array([float(o.supply_gpus) for o in offers])
    return gate_odds(
        columns,
        model,
        offers,
        currencies,
        config.currency,
        config.uncertainty,
        supply,
        config.policy.min_availability,
        config.policy.min_demand_coverage,
        posteriors,
    )
