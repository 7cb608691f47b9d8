"""Operator rating: how well an operator runs a managed service, from its checklist evidence.

The same B200 yields very different useful output depending on who operates it. Each managed offer
answers a checklist in ten categories (as ClusterMAX rates operators); answers become a score of 0
to 100 per category and overall. Two numbers come out, on purpose kept apart:

- the absolute overall score, which sets the reliability factor on SLA availability (so a rating
  moves an offer's cost per task, and adding or removing another bid never does);
- the displayed tier, relative to the peers in this evaluation (percentile among rated offers), as
  ClusterMAX tiers are; a critical failure is Underperform whatever the score.

Bare metal and owned offers are not rated: the operating work is the buyer's, and its cost is in
their operating staff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from procure.errors import Problem, format_field_path
from procure.models import RATING_CATEGORIES, Criterion, Offer, RatingConfig, Reliability

TIERS = ("platinum", "gold", "silver", "bronze")
UNDERPERFORM = "underperform"
NOT_RATED_SELF_OPERATED = "not rated: the operating work is yours"
NOT_RATED_NO_EVIDENCE = "not rated: no operator evidence"


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

    @property
    def critical(self) -> bool:
        return bool(self.critical_failures)

    @property
    def disagrees(self) -> bool:
        """A published tier that differs from the computed one."""
        return self.published_tier is not None and self.tier is not None and self.published_tier != self.tier


def evidence_with_service(offer: Offer) -> dict[str, dict[str, Any]]:
    """The offer's evidence, with answers its service terms already give filled in where missing."""
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
    merged = {category: dict(answers) for category, answers in implied.items()}
    for category, answers in offer.operator.evidence.items():
        merged.setdefault(category, {}).update(answers)
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
    published = offer.operator.published_tier
    if offer.service.kind in ("bare_metal", "owned"):
        return Rating(offer.id, False, NOT_RATED_SELF_OPERATED, published_tier=published)
    evidence = evidence_with_service(offer)
    if not offer.operator.evidence:
        # No checklist answers: not rated, unless the service terms already show a critical failure,
        # so that a vendor never fares better by leaving the checklist blank.
        failures = critical_failures(evidence, config)
        if failures:
            return Rating(offer.id, True, NOT_RATED_NO_EVIDENCE.replace("not rated", "critical failure in its service terms"), None, {}, [], failures, published)
        return Rating(offer.id, False, NOT_RATED_NO_EVIDENCE, published_tier=published)
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
    return Rating(offer.id, True, "rated", overall, categories, results, critical_failures(evidence, config), published)


def critical_failures(evidence: dict[str, dict[str, Any]], config: RatingConfig) -> list[str]:
    """Each critical group of which no answer is true."""
    return [" or ".join(group) + ": not met" for group in config.critical if not any(_answer(evidence, path) is True for path in group)]


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
    """Peer-relative tiers among the rated offers; a critical failure is Underperform."""
    for rating in ratings:
        if rating.rated and rating.critical:
            rating.tier = UNDERPERFORM
    peers = [r for r in ratings if r.rated and not r.critical]
    if not peers:
        return
    for rating, percentile in zip(peers, percentile_ranks([r.score or 0.0 for r in peers])):
        rating.percentile = percentile
        rating.tier = tier_for(percentile, config)


def reliability_from_score(rating: Rating, reliability: Reliability) -> float:
    """The factor on SLA availability from the absolute score (critical failure: the lowest band)."""
    if not rating.rated or rating.score is None:
        return reliability.unrated
    bands = sorted(reliability.bands, key=lambda band: band[0], reverse=True)
    if rating.critical:
        return bands[-1][1]
    for minimum, factor in bands:
        if rating.score >= minimum:
            return factor
    return bands[-1][1]


def method_text(config: RatingConfig) -> str:
    weights = ", ".join(f"{c} {config.category(c).weight:g}" for c in RATING_CATEGORIES)
    t = config.tiers
    return (
        "Each category scores the share of its checklist met (numbers scaled against their threshold, "
        f"unanswered items count as not met), 0-100; overall = weighted mean ({weights}). "
        "Critical failure (" + "; ".join(" or ".join(g) for g in config.critical) + " not true) is Underperform. "
        f"Other tiers rank rated offers against each other by mid-rank percentile of the overall score: "
        f"Platinum at least {t.platinum:g}, Gold at least {t.gold:g}, Silver at least {t.silver:g}, else Bronze. "
        "The reliability factor on SLA availability comes from the absolute overall score, not the tier."
    )


def evidence_problems(offer: Offer, config: RatingConfig, display: str, line_of: Any) -> list[Problem]:
    """Evidence names a known category and criterion, with a true/false or number as the criterion needs."""
    problems = []
    for category, answers in offer.operator.evidence.items():
        loc: tuple = ("operator", "evidence", category)
        if category not in RATING_CATEGORIES:
            problems.append(Problem(display, line_of(loc), format_field_path(loc), f"unknown rating category (expected one of: {', '.join(RATING_CATEGORIES)})"))
            continue
        spec = config.category(category).criteria
        numeric = {name for name, c in spec.items() if c.at_least is not None or c.at_most is not None}
        known = set(spec) - {n for n, c in spec.items() if c.any_of} | {k for c in spec.values() for k in (c.any_of or [])}
        for key, value in answers.items():
            at = loc + (key,)
            if key not in known:
                problems.append(Problem(display, line_of(at), format_field_path(at), f"unknown {category} criterion (expected one of: {', '.join(sorted(known))})"))
            elif key in numeric and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value):
                problems.append(Problem(display, line_of(at), format_field_path(at), f"must be a number of at least 0 (got {value!r})"))
            elif key not in numeric and not isinstance(value, bool):
                problems.append(Problem(display, line_of(at), format_field_path(at), f"must be true or false (got {value!r})"))
    return problems

