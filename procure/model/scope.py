"""What applies to which kind of offer: published tiers, billing units and grade requirements.

Published tiers. ClusterMAX (SemiAnalysis) rates managed GPU clusters only. Its 3.0 edition
(2026-09-23, newsletter.semianalysis.com/p/clustermax-30-the-industry-standard and clustermax.ai; the
public preview was read through a translated copy and a podcast summary, so the tiers below are
secondary) rated 77 providers and tracked 323; it excludes powered shells, bare metal sold to frontier
labs, token APIs and inference endpoints, and added the Participation Ribbon tier between Bronze and
Underperform. ClusterMAX 2.0 was published 2025-11-06
(newsletter.semianalysis.com/p/clustermax-20-the-industry-standard). So a published tier sets the
reliability factor of a managed cluster only; bare metal, endpoints and token APIs are judged by their
own evidence (a checklist, an incident history, their SLA) and never failed for lacking a tier.

Billing units. A GPU-hour price says what an hour costs, not whether the hours are committed: an
offer that leaves `pricing.billed_per` out is taken as billed by the hour when it is a managed-serving
endpoint (billed for the time it runs: pay-as-used), else by the month (its GPUs committed for the
term), and `validate` warns naming the assumption.

Grade requirements. A requirement that cannot apply to a kind of offer is not asked of it: a token API
(priced per million tokens) has no nodes of the buyer's to replace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from procure.errors import Problem
from procure.model.inputs import Offer
from procure.model.kinds import kind_of

# ClusterMAX editions: the edition's number and its publication date.
# 1.0: "The GPU Cloud ClusterMAX Rating System | How to Rent GPUs", SemiAnalysis, 2025-03-26 (as the 2.0 article lists
# it).
CLUSTERMAX_EDITIONS: dict[str, date] = {"1.0": date(2025, 3, 26), "2.0": date(2025, 11, 6), "3.0": date(2026, 9, 23)}
CURRENT_EDITION = "3.0"
# The kinds of offer a ClusterMAX tier rates.
TIER_KINDS: tuple[str, ...] = ("managed_cluster",)
NOT_TESTED = "not tested"


@dataclass(frozen=True)
class PublishedRating:
    provider: str
    aliases: tuple[str, ...]  # vendor names that mean this provider, compared without case or punctuation
    tier: str | None  # None: listed but not tested
    note: str = ""


# ClusterMAX 3.0's medals as reported (secondary, see the module docstring; SemiAnalysis, 2026-09-23,
# newsletter.semianalysis.com/p/clustermax-30-the-industry-standard):
# Platinum CoreWeave, Nebius (new); Gold Google Cloud, Oracle; Silver Azure (down), Lambda, Firmus, TensorWave, GMI
# (up); Bronze AWS, Crusoe (down); Fluidstack "unable to test". Only providers named by those sources are listed.
CLUSTERMAX_3_0: tuple[PublishedRating, ...] = (
    PublishedRating("CoreWeave", ("coreweave",), "platinum"),
    PublishedRating("Nebius", ("nebius",), "platinum", "up from Gold"),
    PublishedRating("Google Cloud", ("googlecloud", "gcp", "googlecloudplatform"), "gold"),
    PublishedRating("Oracle", ("oracle", "oci", "oraclecloudinfrastructure", "oraclecloud"), "gold"),
    PublishedRating("Microsoft Azure", ("azure", "microsoftazure"), "silver", "down"),
    PublishedRating("Lambda", ("lambda", "lambdalabs"), "silver"),
    PublishedRating("Firmus", ("firmus",), "silver"),
    PublishedRating("TensorWave", ("tensorwave",), "silver"),
    PublishedRating("GMI Cloud", ("gmi", "gmicloud"), "silver", "up"),
    PublishedRating("Amazon Web Services", ("aws", "amazonwebservices", "amazon"), "bronze", "down from Silver"),
    PublishedRating("Crusoe", ("crusoe", "crusoecloud"), "bronze", "down"),
    PublishedRating("Fluidstack", ("fluidstack",), None, "unable to test"),
)


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.casefold())


def current_rating(vendor: str) -> PublishedRating | None:
    """The vendor's entry in the current edition (ClusterMAX 3.0), matched by name without case or punctuation."""
    key = _key(vendor)
    return next((r for r in CLUSTERMAX_3_0 if key in r.aliases), None)


def tier_applies(offer: Offer) -> bool:
    """A published tier rates this kind of offer (a managed cluster)."""
    return offer.service.kind in TIER_KINDS


def tier_name(tier: str | None) -> str:
    return NOT_TESTED if tier is None else tier.replace("_", " ").title()


def _edition_order(edition: str) -> tuple[int, ...]:
    return tuple(int(part) for part in edition.split("."))


def published_warnings(offer: Offer) -> list[tuple[tuple[str, ...], str]]:
    """(field path, message) for a published tier that names an older edition, names none and differs from
    the current edition's, or sits on a kind of offer ClusterMAX does not rate."""
    tier, edition = offer.operator.published_tier, offer.operator.published_edition
    if tier is None:
        return []
    found = []
    current = current_rating(offer.vendor)
    latest = f"ClusterMAX {CURRENT_EDITION} ({CLUSTERMAX_EDITIONS[CURRENT_EDITION]})"
    if current is None:
        newer = f"{latest} does not list {offer.vendor} among the tiers procure knows: check clustermax.ai"
    elif current.tier is None:
        newer = f"{latest} could not test {current.provider} ({current.note}): no current tier"
    else:
        newer = f"{latest} rates {current.provider} {tier_name(current.tier)}"
    if edition is not None and _edition_order(edition) < _edition_order(CURRENT_EDITION):
        published = CLUSTERMAX_EDITIONS.get(edition)
        when = f" ({published})" if published is not None else ""
        found.append(
            (
                ("operator", "published_edition"),
                f"{tier_name(tier)} is from ClusterMAX {edition}{when}; {newer}: update operator.published_tier and "
                "operator.published_edition",
            )
        )
    elif edition is None and current is not None and current.tier != tier:
        found.append(
            (
                ("operator", "published_tier"),
                f"{tier_name(tier)} names no edition (operator.published_edition), and {newer}: state the edition the "
                "tier comes from",
            )
        )
    if not tier_applies(offer):
        found.append(
            (
                ("operator", "published_tier"),
                f"ClusterMAX rates managed clusters only; this is a {offer.service.kind.replace('_', ' ')} offer, so "
                "the tier is shown but does not set "
                "its reliability factor: its own evidence does (operator.evidence, operator.status_history, its SLA)",
            )
        )
    return found


def billing_warning(offer: Offer) -> str | None:
    """The assumption made for an offer billed by the GPU-hour that leaves `pricing.billed_per` out (None: stated,
    per token, owned or on demand, whose capacity is pay-as-used by construction, or of a kind billed by the month
    whatever its service: `Kind.billed_monthly`)."""
    if offer.pricing.billed_per is not None or offer.billing_unit is None or offer.on_demand:
        return None
    if kind_of(offer.pricing).billed_monthly:
        return None
    if offer.billing_unit == "hour":
        return (
            "not stated: taken as hour, as a managed-serving endpoint priced per GPU-hour is billed for the time it "
            "runs (pay-as-used in the plan); state billed_per: month if its GPUs are committed month by month"
        )
    return (
        "not stated: taken as month, the committed GPUs billed every month of the term (a commitment in the plan); "
        "state billed_per: hour, minute or second if it is billed for the time it runs"
    )


def offer_warnings(offer: Offer, doc: Any) -> list[Problem]:
    """`validate`'s warnings about what an offer leaves implicit or out of date (`doc`: its yamlsafe Document, for the
    lines)."""
    warnings = [doc.problem(path, message) for path, message in published_warnings(offer)]
    billing = billing_warning(offer)
    if billing is not None:
        warnings.append(Problem(doc.display, doc.lines.line_of(("pricing",)), "pricing.billed_per", billing))
    return sorted(warnings, key=lambda w: w.line or 0)


# Grade requirements that cannot apply to a kind of offer, and why.
def requirement_exemption(requirement: str, offer: Offer) -> str | None:
    """Why a grade requirement is not asked of this offer (None: it applies)."""
    if requirement == "node replacement" and offer.per_token:
        return "not applicable: a token API has no nodes of yours to replace"
    return None
