"""The gates an offer must pass to be acceptable, in the order they are reported: quality, latency, time to
first token, availability, security, region, capacity, grade and validity.

Each gate judges one requirement of procure.yaml (workload, policy) against what the offer states or what
the evaluation derived for it (the throughput reading at the target, the availability layers, the GPUs
the demand needs), and says why in words; a gate with a measure carries its relative headroom (`margin`),
which the recommendation reports when it is thin. What the offer does not state fails unless a policy
accepts it.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from procure.io.workspace import Workspace
from procure.model.grading import GradeResult
from procure.model.inputs import Offer, Policy, Workload
from procure.model.kinds.base import HOURS_PER_MONTH
from procure.model.performance import ThroughputReading, ttft_at
from procure.model.rating import UNRATED, AvailabilityLayers

GATES: tuple[str, ...] = (
    "quality",
    "latency",
    "ttft",
    "availability",
    "security",
    "region",
    "capacity",
    "grade",
    "validity",
)

ATTESTATION_NAMES = {"soc2_type2": "SOC 2 Type II", "iso27001": "ISO 27001"}


class GateResult(BaseModel):
    gate: str
    passed: bool
    detail: str
    margin: float | None = Field(
        None, description="relative headroom over the requirement (0.05 = 5% to spare); null for yes/no gates"
    )
    probability: float | None = Field(
        None,
        description="the share of the uncertainty draws in which the gate passes (availability, capacity); the verdict "
        "is probability >= policy.gate_confidence",
    )


def _result(gate: str, passed: bool, detail: str, margin: float | None = None) -> GateResult:
    """One gate's verdict, its margin always set (null for a yes/no gate)."""
    return GateResult(gate=gate, passed=passed, detail=detail, margin=margin)


def _pct(value: float) -> str:
    return f"{value:.2%}"


def offer_gates(
    offer: Offer,
    grading: GradeResult,
    reading: ThroughputReading | None,
    metrics: dict[str, float | None],
    workspace: Workspace,
    day: date,
    layers: AvailabilityLayers,
    frontier: list[tuple[float, ...]],
    odds: dict[str, float] | None = None,
) -> list[GateResult]:
    """Every gate of one offer, in the order of GATES (the time to first token only with workload.max_ttft_s).
    `frontier` is the offer's measured (or reference) points, which the time to first token is read from.
    `odds`: the probability of passing each gate whose inputs are drawn (uncertainty.gate_odds), which
    decides it against policy.gate_confidence."""
    odds = odds or {}
    config = workspace.config
    policy, wl = config.policy, config.workload
    results = [_quality_gate(metrics, wl), _latency_gate(offer, reading, wl)]
    if wl.max_ttft_s is not None:
        results.append(_ttft_gate(offer, reading, wl, policy, frontier))
    results += [
        _odds(
            _availability_gate(offer, layers, policy, metrics.get("availability")),
            None if layers.unrated and policy.unrated == "exclude" else odds.get("availability"),
            policy,
            "the availability it delivers",
        ),
        _security_gate(offer, policy),
        _region_gate(offer, policy),
        _odds(
            _capacity_gate(offer, metrics, wl, policy),
            odds.get("capacity"),
            policy,
            "its throughput at the target, availability, utilization and demand",
        ),
        _grade_gate(grading, policy),
        _validity_gate(offer, day),
    ]
    return results


def _quality_gate(metrics: dict[str, float | None], wl: Workload) -> GateResult:
    """The share of tasks that succeed against workload.min_success_rate."""
    success = metrics["success_rate"] or 0.0
    return _result(
        gate="quality",
        passed=success >= wl.min_success_rate,
        detail=f"success rate {_pct(success)} {'meets' if success >= wl.min_success_rate else 'is below'} the "
        f"{_pct(wl.min_success_rate)} minimum",
        margin=success / wl.min_success_rate - 1 if wl.min_success_rate > 0 else None,
    )


def _latency_gate(offer: Offer, reading: ThroughputReading | None, wl: Workload) -> GateResult:
    """Whether the offer reaches the target speed per user: on its throughput curve, or (a per-token offer) by
    the speed per user it states; stating none is no pass."""
    perf = offer.performance
    if reading is None:
        if perf.interactivity is None:
            return _result(
                gate="latency",
                passed=False,
                detail=f"speed per user not stated (performance.interactivity; the target is {wl.interactivity:g} "
                "tok/s per user)",
            )
        ok = perf.interactivity >= wl.interactivity
        return _result(
            gate="latency",
            passed=ok,
            detail=f"states {perf.interactivity:g} tok/s per user (P50){'' if ok else ','} "
            f"{'meeting' if ok else 'below'} the {wl.interactivity:g} target",
            margin=perf.interactivity / wl.interactivity - 1,
        )
    if reading.reachable:
        return _result(
            gate="latency",
            passed=True,
            detail=f"reaches {wl.interactivity:g} tok/s per user (fastest point {reading.max_interactivity:g})",
            margin=reading.max_interactivity / wl.interactivity - 1,
        )
    return _result(
        gate="latency",
        passed=False,
        detail=f"cannot reach {wl.interactivity:g} tok/s per user: {reading.note}",
        margin=reading.max_interactivity / wl.interactivity - 1,
    )


def _ttft_gate(
    offer: Offer, reading: ThroughputReading | None, wl: Workload, policy: Policy, frontier: list[tuple[float, ...]]
) -> GateResult:
    """The time to first token at the target against workload.max_ttft_s: read on the curve, or as the offer
    states it. A curve without a time to first token at the target (an InferenceX row may omit it) does not
    show the bound is met: it fails unless policy.ttft_unstated accepts what is not stated."""
    assert wl.max_ttft_s is not None
    perf = offer.performance
    ttft = ttft_at(frontier, wl.interactivity) if reading is not None else None
    if reading is None:
        if perf.ttft_s is None:
            unstated_ok = policy.ttft_unstated == "pass"
            return _result(
                gate="ttft",
                passed=unstated_ok,
                detail=f"time to first token not stated (performance.ttft_s; the maximum is {wl.max_ttft_s:g} s)"
                + ("; passed by policy.ttft_unstated" if unstated_ok else ""),
            )
        ok = perf.ttft_s <= wl.max_ttft_s
        return _result(
            gate="ttft",
            passed=ok,
            detail=f"states time to first token {perf.ttft_s:.2f} s, {'within' if ok else 'above'} the "
            f"{wl.max_ttft_s:g} s maximum",
            margin=wl.max_ttft_s / perf.ttft_s - 1,
        )
    if ttft is None:
        unstated = policy.ttft_unstated == "pass"
        return _result(
            gate="ttft",
            passed=unstated,
            detail=f"time to first token not stated at {wl.interactivity:g} tok/s per user (max_ttft_s "
            f"{wl.max_ttft_s:g} s)" + ("; passed by policy.ttft_unstated" if unstated else ""),
        )
    ok = ttft <= wl.max_ttft_s
    return _result(
        gate="ttft",
        passed=ok,
        detail=f"time to first token {ttft:.2f} s {'within' if ok else 'above'} the {wl.max_ttft_s:g} s maximum",
        margin=wl.max_ttft_s / ttft - 1,
    )


def _odds(result: GateResult, probability: float | None, policy: Policy, decided_by: str) -> GateResult:
    """A gate whose inputs are drawn, decided by its probability of passing against policy.gate_confidence:
    the figure at the means of the draws says how far it is from the requirement, the probability whether
    it is acceptable. A gate failed on what is stated (not a figure) stays failed."""
    if probability is None or result.margin is None:
        return result
    ok = probability >= policy.gate_confidence - 1e-12
    detail = f"{result.detail}; passes in {probability:.1%} of the draws, " + (
        f"at least policy.gate_confidence {policy.gate_confidence:.0%}"
        if ok
        else f"under policy.gate_confidence {policy.gate_confidence:.0%} (decided by {decided_by})"
    )
    return _result(gate=result.gate, passed=ok, detail=detail, margin=result.margin).model_copy(
        update={"probability": probability}
    )


def _availability_gate(
    offer: Offer, layers: AvailabilityLayers, policy: Policy, at_means: float | None = None
) -> GateResult:
    """The expected availability built from the layers (provider x ours x interruptions), at the mean of its
    drawn factor (`at_means`, the cost model's availability), against policy.min_availability. An unrated
    provider's SLA is judged unverified (the cost carries the haircut, the record says "rate before
    signing"); policy.unrated: exclude turns it away instead."""
    expected = layers.expected if at_means is None else at_means
    drawn = at_means is not None and abs(at_means - layers.expected) > 5e-7
    label = _availability_label(offer, layers, "stated" if drawn else "expected")
    if drawn:  # the stated figure, then the one the gate and the cost use: the mean of its draws
        label += f", {_pct(at_means)} expected at the mean of its draws"
    ok = expected >= policy.min_availability - 1e-12
    detail = f"{label} {'meets' if ok else 'is below'} the {_pct(policy.min_availability)} minimum"
    if offer.owned and not ok:  # no SLA or rating to change: our own reliability is the setting
        detail += " (set by assumptions.self_operated_reliability, or assumptions.self_operated_jobs per job)"
    if layers.unrated and policy.unrated == "exclude":
        ok = False
        detail = (
            f"{UNRATED} (no operator.evidence, operator.published_tier or operator.status_history), excluded by "
            f"policy.unrated: exclude; {detail}"
        )
    elif layers.unrated:
        detail = f"{UNRATED}: {detail}"
    return _result(
        gate="availability",
        passed=ok,
        detail=detail,
        margin=expected / policy.min_availability - 1 if policy.min_availability > 0 else None,
    )


def _availability_label(offer: Offer, layers: AvailabilityLayers, word: str = "expected") -> str:
    """'expected availability 98.23% (SLA 99.00% x reliability 0.99 x ours 0.9922 for 7 jobs)'; `word` is
    "stated" when a drawn factor moves the expectation away from the layers' product."""
    if offer.owned:
        return f"self-operated availability {_pct(layers.expected)}"
    parts = [layers.provider_basis]
    if layers.our_jobs:
        jobs = len(layers.our_jobs)
        parts.append(f"ours {layers.ours:.4g} for {jobs} job{'s' if jobs != 1 else ''}")
    if layers.interruption < 1:
        parts.append(f"interruptions {layers.interruption:.4g}")
    return f"{word} availability {_pct(layers.expected)} ({' x '.join(parts)})"


def _security_gate(offer: Offer, policy: Policy) -> GateResult:
    """The attestations, tenant isolation and monitoring isolation the policy requires; owned equipment answers
    for its own controls."""
    if offer.owned:
        return _result(gate="security", passed=True, detail="owned and self-operated: you answer for your own controls")
    service = offer.service
    missing = []
    if policy.require_attestation_any and not set(policy.require_attestation_any) & set(service.attestations):
        names = " or ".join(ATTESTATION_NAMES.get(a, a) for a in policy.require_attestation_any)
        missing.append(f"no {names} attestation")
    if policy.require_tenant_isolation and not service.tenant_isolation:
        missing.append("no tenant isolation")
    if policy.require_isolated_monitoring and not service.isolated_monitoring:
        missing.append("monitoring is not isolated between tenants")
    return _result(
        gate="security",
        passed=not missing,
        detail="security: " + "; ".join(missing) if missing else "meets the security policy",
    )


def _region_gate(offer: Offer, policy: Policy) -> GateResult:
    """The offer's region among policy.allowed_regions (any region without the list)."""
    if policy.allowed_regions is None or offer.region in policy.allowed_regions:
        return _result(gate="region", passed=True, detail=f"region {offer.region} allowed")
    return _result(
        gate="region",
        passed=False,
        detail=f"region {offer.region} is not among the allowed regions ({', '.join(policy.allowed_regions)})",
    )


def _capacity_gate(offer: Offer, metrics: dict[str, float | None], wl: Workload, policy: Policy) -> GateResult:
    """Whether the offer can supply the GPUs the demand needs (x policy.min_demand_coverage); a per-token offer
    is judged on its rate limits; without a demand the committed GPUs are taken as fully used."""
    needed = metrics["gpus_needed"]
    if offer.per_token:
        return _rate_limit_gate(offer, wl, policy)
    if wl.tasks_per_month is None:
        return _result(
            gate="capacity", passed=True, detail="no demand stated: the committed GPUs are taken as fully used"
        )
    if needed is None:
        why = "no throughput at the target" if metrics["throughput"] is None else "no successful tasks"
        return _result(gate="capacity", passed=False, detail=f"capacity not assessed: {why}")
    supply = offer.supply_gpus
    required = needed * policy.min_demand_coverage
    ok = supply >= required
    return _result(
        gate="capacity",
        passed=ok,
        detail=f"can supply {supply:,} GPUs; the demand needs {required:,.1f}" + ("" if ok else " (short)"),
        margin=supply / required - 1,
    )


def peak_per_minute(wl: Workload) -> float | None:
    """Tasks per minute at the peak: workload.peak_factor x the month's average (HOURS_PER_MONTH x 60 min)."""
    if wl.tasks_per_month is None:
        return None
    return wl.peak_factor * wl.tasks_per_month / (HOURS_PER_MONTH * 60)


def _rate_limit_gate(offer: Offer, wl: Workload, policy: Policy) -> GateResult:
    """Capacity of a per-token offer: its rate limits against the workload's peak (one request per
    task; output tokens = tasks x output_tokens), times policy.min_demand_coverage."""
    peak = peak_per_minute(wl)
    if peak is None:
        return _result(gate="capacity", passed=True, detail="no demand stated: per-token capacity not assessed")
    limits = offer.service.rate_limits
    need_requests = peak * policy.min_demand_coverage
    need_tokens = need_requests * wl.output_tokens
    stated = [
        (name, limit, need)
        for name, limit, need in (
            ("requests/min", limits.requests_per_minute if limits else None, need_requests),
            ("output tokens/min", limits.output_tokens_per_minute if limits else None, need_tokens),
        )
    ]
    unstated = [name for name, limit, _ in stated if limit is None]
    checked = [(name, limit, need) for name, limit, need in stated if limit is not None]
    short = [f"{limit:,.0f} {name} < {need:,.0f} needed" for name, limit, need in checked if limit < need]
    parts = [f"{limit:,.0f} {name} for {need:,.0f} at the peak" for name, limit, need in checked if limit >= need]
    margin = min((limit / need - 1 for _, limit, need in checked), default=None)
    if short:
        return _result(
            gate="capacity", passed=False, detail="rate limits short of the peak: " + "; ".join(short), margin=margin
        )
    if unstated:
        ok = policy.rate_limits_unstated == "pass"
        said = (
            f"rate limits not stated (service.rate_limits: {', '.join(unstated)}); the peak is {need_requests:,.0f} "
            "requests/min"
        )
        return _result(
            gate="capacity", passed=ok, detail=said + ("; " + "; ".join(parts) if parts else ""), margin=margin
        )
    return _result(
        gate="capacity", passed=True, detail="rate limits cover the peak: " + "; ".join(parts), margin=margin
    )


def _grade_gate(grading: GradeResult, policy: Policy) -> GateResult:
    """The offer's grade among policy.acceptable_grades; an offer that meets no grade fails with why."""
    acceptable_grades = policy.acceptable_grades
    if grading.grade is None:
        return _result(gate="grade", passed=False, detail=grading.summary)
    if acceptable_grades is not None and grading.grade not in acceptable_grades:
        return _result(
            gate="grade",
            passed=False,
            detail=f"grade {grading.grade} is not among the acceptable grades ({', '.join(acceptable_grades)})",
        )
    return _result(gate="grade", passed=True, detail=f"grade {grading.grade}")


def _validity_gate(offer: Offer, day: date) -> GateResult:
    """The offer is still open on the as-of date."""
    ok = offer.valid_until >= day
    return _result(
        gate="validity",
        passed=ok,
        detail=f"valid until {offer.valid_until}" if ok else f"expired on {offer.valid_until} (as of {day})",
    )
