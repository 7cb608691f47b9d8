"""Operator rating: how well an operator runs a managed service, from its checklist evidence.

The same B200 yields very different useful output depending on who operates it. Each managed offer
answers a checklist in ten categories (as ClusterMAX rates operators); answers become a score of 0
to 100 per category and overall. Two numbers come out, on purpose kept apart:

- the absolute operational score (security, lifecycle, reliability, monitoring: the categories that
  measure how the service is run), which sets the reliability factor on SLA availability, so a
  rating moves an offer's cost per task and adding or removing another bid never does; pricing,
  partnerships or capacity stay in the overall score and the tier but cannot move cost;
- the displayed tier, relative to the peers in this evaluation (percentile among rated offers), as
  ClusterMAX tiers are, shown only among enough peers (`rating.min_peers`); a critical failure is
  Underperform whatever the score.

Without a checklist, a published tier (ClusterMAX) sets the factor of a managed cluster through
`assumptions.reliability.published` (ClusterMAX rates managed clusters only: on bare metal, endpoints
and token APIs a tier is shown, never used, and its absence never counts against them,
procure/model/scope.py); with neither (nor an incident history), an offer is unrated:
its SLA is judged and costed at the one stated haircut, `assumptions.reliability.unrated` (default
the factor of the lowest published tier short of Underperform, the Participation Ribbon's), and flagged
"rate before signing". Owned offers have no provider: the host (hardware repair) and the operating jobs
are the buyer's, at self_operated_reliability each.

Where the checklist claims what the service terms do not promise (an attestation, isolated
monitoring, health checks), the service terms are used: the contract is what the buyer can enforce.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from procure.errors import Problem, format_field_path
from procure.model.inputs import (
    OPERATING_JOBS,
    PUBLISHED_TIERS,
    RATING_CATEGORIES,
    Assumptions,
    Criterion,
    Offer,
    RatingConfig,
    Reliability,
)
from procure.model.scope import tier_applies

TIERS = ("platinum", "gold", "silver", "bronze")
UNDERPERFORM = "underperform"
NOT_RATED_SELF_OPERATED = "not rated: the operating work is yours"
NOT_RATED_NO_EVIDENCE = "not rated: no operator evidence"
NOT_RATED_PUBLISHED = "not rated here: no checklist; its published tier sets the reliability factor"
TOO_FEW_PEERS = "too few peers"

# The categories that measure how a service is operated: only they set the reliability factor.
OPERATIONAL_CATEGORIES: tuple[str, ...] = ("security", "lifecycle", "reliability", "monitoring")

# Where an offer's reliability factor comes from (the Evaluation's `reliability_source`).
RELIABILITY_SOURCES: tuple[str, ...] = ("checklist", "published", "status_history", "unrated", "self_operated")


@dataclass(frozen=True)
class CriterionResult:
    category: str
    criterion: str
    answer: Any  # None when not answered
    met: float  # share of the criterion's points, 0 to 1


@dataclass
class Rating:
    """One offer's rating. `score` is None when the offer is not rated."""

    offer_id: str
    rated: bool
    note: str
    score: float | None = None
    categories: dict[str, float] = field(default_factory=dict)
    results: list[CriterionResult] = field(default_factory=list)
    critical_failures: list[str] = field(default_factory=list)
    published_tier: str | None = None
    tier: str | None = None  # set by assign_tiers: relative to the peers
    percentile: float | None = None
    operational_score: float | None = None  # weighted mean of OPERATIONAL_CATEGORIES: sets the factor
    tier_note: str | None = None  # e.g. "too few peers (3 rated, 5 needed)" when no peer tier is shown
    contract_overrides: list[str] = field(default_factory=list)  # checklist claims the service terms do not back
    published_applies: bool = True  # the published tier rates this kind of offer (a managed cluster)

    @property
    def critical(self) -> bool:
        return bool(self.critical_failures)

    @property
    def disagrees(self) -> bool:
        """A published tier that differs from the computed peer tier (only where a tier rates the offer's kind)."""
        return (
            self.published_applies
            and self.published_tier is not None
            and self.tier is not None
            and self.published_tier != self.tier
        )


# Checklist answers the service terms also state: (category, criterion) -> the service field, in words.
CONTRACT_FIELDS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("security", "soc2_type2"): (("service", "attestations"), "SOC 2 Type II"),
    ("security", "iso27001"): (("service", "attestations"), "ISO 27001"),
    ("security", "fabric_tenant_isolation"): (("service", "tenant_isolation"), "tenant isolation"),
    ("monitoring", "tenant_isolated"): (("service", "isolated_monitoring"), "isolated monitoring"),
    ("reliability", "passive_health_checks"): (("service", "health_checks", "passive"), "passive health checks"),
    ("reliability", "active_health_checks"): (("service", "health_checks", "active"), "active health checks"),
    ("reliability", "automatic_sla_credits"): (("service", "sla", "automatic_credits"), "automatic SLA credits"),
}


def service_answers(offer: Offer) -> dict[str, dict[str, Any]]:
    """The checklist answers the offer's service terms (the contract) give."""
    service = offer.service
    sla = service.sla
    implied: dict[str, dict[str, Any]] = {
        "security": {
            "soc2_type2": "soc2_type2" in service.attestations,
            "iso27001": "iso27001" in service.attestations,
            "fabric_tenant_isolation": service.tenant_isolation,
        },
        "monitoring": {"tenant_isolated": service.isolated_monitoring},
        "reliability": {
            "passive_health_checks": service.health_checks.passive,
            "active_health_checks": service.health_checks.active != "none",
            "automatic_sla_credits": bool(sla and sla.automatic_credits),
        },
    }
    if sla is not None and sla.node_replacement_hours is not None:
        implied["reliability"]["node_replacement_hours"] = sla.node_replacement_hours
    return implied


def contract_overrides(offer: Offer) -> list[tuple[str, str, tuple[str, ...], str]]:
    """Checklist claims the service terms do not back: (category, criterion, service field, what).

    A claim of true where the contract says false (or does not list it) is a contradiction; the
    contract wins in the rating and the gates, because only what is signed can be enforced.
    """
    terms = service_answers(offer)
    found = []
    for category, answers in offer.operator.evidence.items():
        for key, value in answers.items():
            spec = CONTRACT_FIELDS.get((category, key))
            if spec is not None and value is True and terms.get(category, {}).get(key) is False:
                found.append((category, key, spec[0], spec[1]))
    return found


def evidence_with_service(offer: Offer) -> dict[str, dict[str, Any]]:
    """The offer's evidence with its service terms' answers in place of the checklist's for what
    the contract states (attestations, isolation, monitoring, health checks, credits: the contract
    wins), and filled in where the checklist is silent (node replacement hours)."""
    merged = {category: dict(answers) for category, answers in service_answers(offer).items()}
    for category, answers in offer.operator.evidence.items():
        merged.setdefault(category, {}).update(answers)
    terms = service_answers(offer)
    for category, key in CONTRACT_FIELDS:
        merged[category][key] = terms[category][key]
    return merged


def score_criterion(criterion: Criterion, answers: dict[str, Any], name: str) -> tuple[Any, float]:
    """(the answer, the share of the criterion met)."""
    if criterion.any_of:
        given = {key: answers[key] for key in criterion.any_of if key in answers}
        if not given:
            return None, 0.0
        return given, 1.0 if any(v is True for v in given.values()) else 0.0
    if name not in answers:
        return None, 0.0
    value = answers[name]
    if criterion.at_least is not None:
        return value, max(0.0, min(1.0, float(value) / criterion.at_least))
    if criterion.at_most is not None:
        return value, 1.0 if float(value) <= criterion.at_most else criterion.at_most / float(value)
    return value, 1.0 if value is True else 0.0


def rate_offer(offer: Offer, config: RatingConfig) -> Rating:
    """The absolute rating of one offer (no tier: tiers need the peers)."""
    rating = _rate_checklist(offer, config)
    rating.published_applies = tier_applies(offer)
    return rating


def _rate_checklist(offer: Offer, config: RatingConfig) -> Rating:
    published = offer.operator.published_tier
    counted = published if tier_applies(offer) else None  # ClusterMAX rates managed clusters only (model/scope.py)
    if offer.service.kind == "owned":
        return Rating(offer.id, False, NOT_RATED_SELF_OPERATED, published_tier=published)
    if offer.service.kind == "bare_metal":
        # The checklist measures a managed service, and ClusterMAX rates none of bare metal: a bare-metal
        # provider's only layer (the hardware) is judged by its incident history and SLA (reliability_of).
        return Rating(offer.id, False, NOT_RATED_NO_EVIDENCE, published_tier=published)
    evidence = evidence_with_service(offer)
    overrides = [f"operator.evidence.{c}.{k}" for c, k, _, _ in contract_overrides(offer)]
    if not offer.operator.evidence:
        # No checklist answers: not rated, unless the service terms already show a critical failure,
        # so that a vendor never fares better by leaving the checklist blank.
        failures = critical_failures(evidence, config)
        if failures:
            return Rating(
                offer.id,
                True,
                NOT_RATED_NO_EVIDENCE.replace("not rated", "critical failure in its service terms"),
                None,
                {},
                [],
                failures,
                published,
            )
        note = NOT_RATED_PUBLISHED if counted is not None else NOT_RATED_NO_EVIDENCE
        return Rating(offer.id, False, note, published_tier=published)
    results: list[CriterionResult] = []
    categories: dict[str, float] = {}
    for category in RATING_CATEGORIES:
        spec = config.category(category)
        answers = evidence.get(category, {})
        points = total = 0.0
        for name, criterion in spec.criteria.items():
            answer, met = score_criterion(criterion, answers, name)
            results.append(CriterionResult(category, name, answer, met))
            points += criterion.weight * met
            total += criterion.weight
        # Rounded to 1e-9: a score exactly on a band or tier boundary must not fall below it by float dust.
        categories[category] = round(100.0 * points / total, 9) if total else 0.0
    weights = {c: config.category(c).weight for c in RATING_CATEGORIES}
    weight_sum = sum(weights.values())
    overall = round(sum(categories[c] * weights[c] for c in RATING_CATEGORIES) / weight_sum, 9) if weight_sum else 0.0
    rating = Rating(
        offer.id, True, "rated", overall, categories, results, critical_failures(evidence, config), published
    )
    rating.operational_score = operational_score(categories, config)
    rating.contract_overrides = overrides
    return rating


def operational_score(categories: dict[str, float], config: RatingConfig) -> float:
    """Weighted mean of the operational categories (their own weights): what sets the reliability factor."""
    weights = {c: config.category(c).weight for c in OPERATIONAL_CATEGORIES}
    total = sum(weights.values())
    if not total:
        return 0.0
    return round(sum(categories.get(c, 0.0) * w for c, w in weights.items()) / total, 9)


def critical_failures(evidence: dict[str, dict[str, Any]], config: RatingConfig) -> list[str]:
    """Each critical group of which no answer is true."""
    return [
        " or ".join(group) + ": not met"
        for group in config.critical
        if not any(_answer(evidence, path) is True for path in group)
    ]


def _answer(evidence: dict[str, dict[str, Any]], path: str) -> Any:
    category, _, key = path.partition(".")
    return evidence.get(category, {}).get(key)


def percentile_ranks(scores: list[float]) -> list[float]:
    """Mid-rank percentiles: 0 for the lowest score, 1 for the highest; ties share a percentile;
    a single offer, or a field of equal scores, sits at 0.5 (no peer to be above or below)."""
    n = len(scores)
    if n == 1:
        return [0.5]
    return [(sum(1 for t in scores if t < s) + 0.5 * (sum(1 for t in scores if t == s) - 1)) / (n - 1) for s in scores]


def tier_for(percentile: float, config: RatingConfig) -> str:
    thresholds = config.tiers
    if percentile >= thresholds.platinum:
        return "platinum"
    if percentile >= thresholds.gold:
        return "gold"
    if percentile >= thresholds.silver:
        return "silver"
    return "bronze"


def assign_tiers(ratings: list[Rating], config: RatingConfig) -> None:
    """Peer-relative tiers among the rated offers; a critical failure is Underperform.

    A percentile among a handful of offers says little (the worse of two strong operators would be
    "Bronze" at 90/100), so with fewer than `min_peers` rated offers no peer tier is given: the
    tier note reads "too few peers" and the absolute band is shown instead.
    """
    for rating in ratings:
        if rating.rated and rating.critical:
            rating.tier = UNDERPERFORM
    peers = [r for r in ratings if r.rated and not r.critical]
    if not peers:
        return
    if len(peers) < config.min_peers:
        for rating in peers:
            rating.tier = None
            rating.percentile = None
            rating.tier_note = f"{TOO_FEW_PEERS} ({len(peers)} rated, {config.min_peers} needed)"
        return
    for rating, percentile in zip(peers, percentile_ranks([r.score or 0.0 for r in peers])):
        rating.percentile = percentile
        rating.tier = tier_for(percentile, config)


def _bands(reliability: Reliability) -> list[tuple[float, float]]:
    return sorted(reliability.bands, key=lambda band: band[0], reverse=True)


def lowest_factor(reliability: Reliability) -> float:
    """The factor of the lowest score band: what the worst-rated operator gets."""
    return min(f for _, f in reliability.bands)


def published_factor(reliability: Reliability, tier: str) -> float:
    """The factor of a published tier: procure.yaml's `assumptions.reliability.published`, else the built-in one."""
    return reliability.published[tier] if tier in reliability.published else _published_default(tier)  # type: ignore[index]


# The tier ClusterMAX gives an operator it rated without a medal and without a critical failure: the lowest tier an
# operator nothing is known about can plausibly hold. ClusterMAX 3.0 (SemiAnalysis, 2026-09-23,
# newsletter.semianalysis.com/p/clustermax-30-the-industry-standard, read through secondary copies) rated 77 of the 323
# providers it tracked, gave 15 the new Participation Ribbon between Bronze and Underperform, and a medal (Platinum to
# Bronze) to a minority: only 19 neoclouds. Underperform is a finding (a failed audit), not a default.
LOWEST_UNMEDALLED_TIER = "participation_ribbon"


def unrated_default(reliability: Reliability) -> float:
    """The unrated haircut when procure.yaml states none: the factor of the lowest published tier short of
    Underperform (the Participation Ribbon's, 0.965 by default), or any better tier's if a table puts it lower, and
    never above the middle score band. Most operators hold no medal, so no evidence is taken as no medal: an untiered
    copy of a Bronze (or Ribbon) offer never costs less than the rated one. Derived from the tables, so changing
    `published` or `bands` keeps the rule."""
    tiers = PUBLISHED_TIERS[: PUBLISHED_TIERS.index(LOWEST_UNMEDALLED_TIER) + 1]
    return min(min(published_factor(reliability, t) for t in tiers), middle_factor(reliability))


def unrated_factor(reliability: Reliability) -> float:
    """The unrated haircut on an SLA, in the gate and the cost alike: `unrated` as stated, else the default
    (`unrated_default`: no better than the lowest published tier short of Underperform; the workspace check
    refuses a stated haircut above the middle band, so no evidence never beats a median operator)."""
    return reliability.unrated if reliability.unrated is not None else unrated_default(reliability)


def band_of(score: float, reliability: Reliability) -> tuple[float, float]:
    """(minimum score, factor) of the band a score falls in."""
    bands = _bands(reliability)
    for minimum, factor in bands:
        if score >= minimum:
            return minimum, factor
    return bands[-1]


def middle_factor(reliability: Reliability) -> float:
    """The factor of the middle band (of five: the third). Of an even number, the lower of the two middle bands:
    an operator nothing is known about is not given the better of two medians."""
    bands = _bands(reliability)
    return bands[len(bands) // 2][1]


def reliability_from_score(rating: Rating, reliability: Reliability) -> float:
    """The factor on SLA availability from the absolute operational score (critical failure: the
    lowest band; not rated: the unrated factor)."""
    if rating.rated and rating.critical:
        return _bands(reliability)[-1][1]
    if not rating.rated or rating.score is None:
        return unrated_factor(reliability)
    score = rating.operational_score if rating.operational_score is not None else rating.score
    return band_of(score, reliability)[1]


@dataclass(frozen=True)
class ReliabilityResult:
    """The factor on the provider's SLA (None: owned, no provider), where it comes from, and in words."""

    factor: float | None
    source: str  # one of RELIABILITY_SOURCES
    basis: str

    @property
    def unrated(self) -> bool:
        return self.source == "unrated"


def reliability_of(offer: Offer, rating: Rating, assumptions: Assumptions) -> ReliabilityResult:
    """What the provider's SLA figure is worth (the provider's layer of cost model step 8).

    Checklist (operational score band; critical failure: the lowest band), else published tier,
    else unrated: `factor` is then the stated haircut (`assumptions.reliability.unrated`, default
    `unrated_default`) that the gate and the cost both use while the availability stays
    unverified. Bare metal is judged the same way: its provider still repairs the hardware. Owned:
    no provider.
    """
    rel = assumptions.reliability
    kind = offer.service.kind
    if kind == "owned":
        return ReliabilityResult(None, "self_operated", "owned: no provider; every job you run is in your layer")
    if rating.rated and rating.critical:
        return ReliabilityResult(_bands(rel)[-1][1], "checklist", "critical failure: the lowest band")
    if rating.rated and rating.score is not None:
        score = rating.operational_score if rating.operational_score is not None else rating.score
        minimum, factor = band_of(score, rel)
        return ReliabilityResult(factor, "checklist", f"operational score {score:.1f} in the {minimum:g}+ band")
    if offer.operator.published_tier is not None and tier_applies(offer):
        tier = offer.operator.published_tier
        factor = published_factor(rel, tier)
        return ReliabilityResult(factor, "published", f"published tier {tier.replace('_', ' ').title()}")
    factor = unrated_factor(rel)
    why = " (the default: no better than the lowest published tier)" if rel.unrated is None else ""
    return ReliabilityResult(
        factor,
        "unrated",
        f"no {evidence_fields(offer)}: the SLA is unverified, judged and costed at the unrated haircut x {factor:g}"
        + why,
    )


UNRATED = "unrated: availability unverified"
RATE_BEFORE_SIGNING = (
    "rate before signing: add the evidence its kind can have (operator.evidence, "
    "operator.status_history; operator.published_tier for a managed cluster)"
)


def evidence_fields(offer: Offer) -> str:
    """The rating evidence this kind of offer can have, in words: a published tier only for a managed cluster
    (ClusterMAX rates nothing else), a checklist for managed offers, an incident history for any."""
    fields = []
    if tier_applies(offer):
        fields.append("operator.published_tier")
    if offer.service.kind in ("managed_cluster", "managed_serving"):
        fields.append("operator.evidence (the operator checklist)")
    fields.append("operator.status_history")
    return ", ".join(fields[:-1]) + " or " + fields[-1] if len(fields) > 1 else fields[0]


def rate_before_signing(offer: Offer) -> str:
    """The action for an unrated offer, naming only the evidence its kind can have (never a tier it cannot get)."""
    return f"rate before signing: add {evidence_fields(offer)}"


# The jobs that keep the machines and the platform up. Two layers, as the typical split of a GPU cloud has them
# (SemiAnalysis ClusterMAX criteria, "Operators": the provider owns facility, hardware repair and replacement;
# on bare metal the operating work falls to the customer): the host, whose job is hardware repair, and the eight
# operating jobs above it. Each layer we run counts at self_operated_reliability: the host as one job (what a
# bare-metal provider's SLA x rating stands for), the operating work spread evenly over its eight jobs. The serving
# jobs above them default to 1: their failures show in the success rate (release_validation), the demand fit
# (capacity_planning) and the serving curve.
INFRASTRUCTURE_JOBS: tuple[str, ...] = OPERATING_JOBS[: OPERATING_JOBS.index("incident_response") + 1]
HOST_JOB = "hardware_repair"
OPERATING_LAYER: tuple[str, ...] = tuple(job for job in INFRASTRUCTURE_JOBS if job != HOST_JOB)


def self_operated_factors(assumptions: Assumptions) -> dict[str, float]:
    """Each operating job's factor on availability when we run it: `assumptions.self_operated_jobs`,
    else self_operated_reliability for the host (hardware repair) and self_operated_reliability^(1/8)
    for each of the eight operating jobs above it (running all of them gives self_operated_reliability
    again), else 1."""
    r = assumptions.self_operated_reliability
    share = 1.0 / len(OPERATING_LAYER)
    factors = {job: (r if job == HOST_JOB else r**share if job in OPERATING_LAYER else 1.0) for job in OPERATING_JOBS}
    factors.update({job: f for job, f in assumptions.self_operated_jobs.items() if job in factors})
    return factors


@dataclass(frozen=True)
class AvailabilityLayers:
    """Expected availability built from who does which job (cost model step 8).

    provider: SLA x reliability factor, or the availability a published incident history shows
    (None: owned, there is no provider); it is the host's layer when the provider repairs the hardware.
    ours: the product of our factor for each job the responsibility matrix leaves to us alone
    (`customer`; a `shared` job has the provider doing its part under its SLA); a rented offer whose
    hardware we repair has a host no better than the weaker of the provider's layer and our repairs.
    Spot capacity loses the interrupted and restarted time on top.
    """

    provider: float | None  # the provider's layer as judged and costed (unrated: the SLA x the unrated haircut)
    provider_costed: float | None  # the same figure (kept for the record's provider_costed field)
    provider_basis: str
    ours: float
    our_jobs: tuple[str, ...]
    interruption: float  # share of billed time not lost to interruptions (1 unless spot)
    unrated: bool
    measured: bool = False  # the provider's layer is an incident history's availability

    @property
    def expected(self) -> float:
        """The availability the gate judges."""
        return (1.0 if self.provider is None else self.provider) * self.ours * self.interruption

    @property
    def costed(self) -> float:
        """The availability the cost uses: the same as the gate's."""
        return (1.0 if self.provider_costed is None else self.provider_costed) * self.ours * self.interruption

    def text(self) -> str:
        parts = [] if self.provider is None else [f"provider {self.provider:.4%} ({self.provider_basis})"]
        counted = [job for job in self.our_jobs]
        parts.append(
            f"ours {self.ours:.4%} ({len(counted)} job{'s' if len(counted) != 1 else ''} self-operated)"
            if counted
            else "ours 100% (no job left to us alone)"
        )
        if self.interruption < 1:
            parts.append(f"interruptions {self.interruption:.4%}")
        return " x ".join(parts)


def interruption_share(offer: Offer) -> float:
    """Spot: 1 - interruptions per node-month x restart minutes / (730 h x 60) of the billed time."""
    service = offer.service
    if not service.interruptions_per_month:
        return 1.0
    return max(0.0, 1.0 - service.interruptions_per_month * service.restart_minutes / (730.0 * 60.0))


def availability_layers(
    offer: Offer,
    reliability: ReliabilityResult,
    assumptions: Assumptions,
    history: float | None = None,
    history_basis: str = "",
) -> AvailabilityLayers:
    """The layers of one offer's expected availability (`history`: the availability its incident
    history shows over its window, which replaces SLA x factor as the provider's layer)."""
    factors = self_operated_factors(assumptions)
    owned = offer.service.kind == "owned"
    ours_jobs = tuple(
        job for job in OPERATING_JOBS if owned or offer.responsibilities.get(job, "customer") == "customer"
    )
    r = assumptions.self_operated_reliability
    # The operating jobs at the default factor as one power (all eight ours: exactly self_operated_reliability),
    # the host (hardware repair) and those set in self_operated_jobs multiplied in.
    default_share = sum(
        1 for job in ours_jobs if job in OPERATING_LAYER and job not in assumptions.self_operated_jobs
    ) / len(OPERATING_LAYER)
    ours = r**default_share
    for job in ours_jobs:
        if job in assumptions.self_operated_jobs:
            ours *= assumptions.self_operated_jobs[job]
        elif job == HOST_JOB:
            ours *= r
    counted = tuple(job for job in ours_jobs if factors[job] < 1.0)
    if owned:
        provider = None
        basis = ""
    elif history is not None:
        provider = history
        basis = history_basis
    else:
        sla = offer.service.sla.availability if offer.service.sla else 0.0
        factor = reliability.factor if reliability.factor is not None else 1.0
        provider = sla * factor
        if reliability.unrated:
            # Unverified: judged and costed at the one stated haircut (assumptions.reliability.unrated).
            basis = f"SLA {sla:.2%} unverified x the unrated haircut {factor:g}"
        else:
            basis = f"SLA {sla:.2%} x reliability {factor:.4g}"
    if provider is not None and HOST_JOB in ours_jobs:
        # We repair the provider's hardware: the host is no better than the weaker of the provider's layer and our
        # repairs (our host factor is in `ours`), so the provider's layer counts only where it is below it.
        provider = min(1.0, provider / factors[HOST_JOB]) if provider < factors[HOST_JOB] else 1.0
        basis = f"{basis}, with our hardware repair at {factors[HOST_JOB]:.4g}: the weaker counts"
    return AvailabilityLayers(
        provider,
        provider,
        basis,
        ours,
        counted,
        interruption_share(offer),
        reliability.unrated and history is None,
        history is not None,
    )


def _published_default(tier: str) -> float:
    from procure.model.inputs import _published_bands

    return _published_bands()[tier]


def published_disagrees(rating: Rating, offer: Offer, assumptions: Assumptions) -> bool:
    """A published tier that the checklist contradicts: a different peer tier, or (without peer
    tiers) a checklist band with a different factor from the published tier's."""
    if rating.published_tier is None or not rating.rated or not tier_applies(offer):
        return False
    if rating.tier is not None:
        return rating.published_tier != rating.tier
    rel = assumptions.reliability
    return reliability_from_score(rating, rel) != published_factor(rel, rating.published_tier)


def method_text(config: RatingConfig) -> str:
    weights = ", ".join(f"{c} {config.category(c).weight:g}" for c in RATING_CATEGORIES)
    t = config.tiers
    return (
        "Each category scores the share of its checklist met (numbers scaled against their threshold, "
        f"unanswered items count as not met), 0-100; overall = weighted mean ({weights}). "
        "Critical failure (" + "; ".join(" or ".join(g) for g in config.critical) + " not true) is Underperform. "
        f"Other tiers rank rated offers against each other by mid-rank percentile of the overall score: "
        f"Platinum at least {t.platinum:g}, Gold at least {t.gold:g}, Silver at least {t.silver:g}, else Bronze; "
        f"with fewer than {config.min_peers} rated offers no peer tier is shown ('too few peers'), only the absolute "
        "band. "
        "The reliability factor on SLA availability comes from the absolute operational score ("
        + ", ".join(OPERATIONAL_CATEGORIES)
        + "), not the tier; without a checklist from the published tier; with neither, the unrated haircut "
        "(assumptions.reliability.unrated, by default the lowest published tier short of Underperform, the "
        "Participation Ribbon's factor: no evidence never counts better than a published tier)."
    )


def evidence_problems(offer: Offer, config: RatingConfig, display: str, line_of: Any) -> list[Problem]:
    """Evidence names a known category and criterion, with a true/false or number as the criterion needs."""
    problems = []
    for category, answers in offer.operator.evidence.items():
        loc: tuple = ("operator", "evidence", category)
        if category not in RATING_CATEGORIES:
            problems.append(
                Problem(
                    display,
                    line_of(loc),
                    format_field_path(loc),
                    f"unknown rating category (expected one of: {', '.join(RATING_CATEGORIES)})",
                )
            )
            continue
        spec = config.category(category).criteria
        numeric = {name for name, c in spec.items() if c.at_least is not None or c.at_most is not None}
        known = set(spec) - {n for n, c in spec.items() if c.any_of} | {
            k for c in spec.values() for k in (c.any_of or [])
        }
        for key, value in answers.items():
            at = loc + (key,)
            if key not in known:
                problems.append(
                    Problem(
                        display,
                        line_of(at),
                        format_field_path(at),
                        f"unknown {category} criterion (expected one of: {', '.join(sorted(known))})",
                    )
                )
            elif key in numeric and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value
            ):
                problems.append(
                    Problem(
                        display, line_of(at), format_field_path(at), f"must be a number of at least 0 (got {value!r})"
                    )
                )
            elif key not in numeric and not isinstance(value, bool):
                problems.append(
                    Problem(display, line_of(at), format_field_path(at), f"must be true or false (got {value!r})")
                )
    return problems


def contradiction_warnings(offer: Offer, doc: Any) -> list[Problem]:
    """One warning per checklist claim the service terms do not back, naming both places (`doc`:
    the offer's yamlsafe Document, for the lines)."""
    warnings = []
    exact = doc.lines.lines
    for category, key, service_path, what in contract_overrides(offer):
        at = ("operator", "evidence", category, key)
        line = exact.get(tuple(service_path))
        where = format_field_path(service_path) + (f", line {line}" if line is not None else ": not stated")
        warnings.append(
            doc.problem(
                at,
                f"claims {what}, but the service terms ({where}) do not promise it; the rating and the gates use the "
                "service terms",
            )
        )
    return warnings
