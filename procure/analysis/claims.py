"""SLA credit claims with their evidence and deadlines (`scorecard --claim`, `reevaluate`).

Credits are claimed, not given: public SLA comparisons of GPU clouds (2026-07-03, nine providers) find no provider that
credits automatically, claim windows of
about 10 to 14 days (CoreWeave 10 days, Nebius 14 days of the month's end; Google 60 days, Azure two
months) and caps of 10-50%, and a degraded but reachable GPU is usually not down time. So each month
of a signed vendor's scorecard becomes a claim:

- the creditable availability: the month's incident record (procure/io/incidents.py) with the impacts
  the scorecard counts as down time (`actuals.down_impacts`), less `minor` (a degraded but reachable
  GPU) unless the terms say degraded GPUs count (`contract.sla_credits.degraded_counts`), plus it
  when they do;
- the credit the terms owe at it (the scorecard's `credit_share`: tiers or rate per point, capped at
  `cap`) times the month's invoice;
- the deadline: `claim_window_days` after the month's last day, or after the first counted incident's
  end (`claim_window_from: incident`, the first incident lapses first); no window stated: none;
- why a claim is 0: no credit terms, no SLA, no incident record for the month, availability at or
  above the SLA, below it but above every credit tier, credited automatically, or the window closed.

A claim with no invoice for the month has no amount yet (None), never 0.
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel, Field

from procure.analysis.scorecard import ScorecardResult, credit_share, month_window, percent_or_no_data

DEGRADED = "minor"  # Statuspage's impact for a degraded but reachable service


class ClaimEvidence(BaseModel):
    start: str
    end: str | None = Field(description="null: still open")
    impact: str
    components: list[str]
    minutes: float = Field(description="minutes of it inside the month")
    name: str = ""


class Claim(BaseModel):
    month: str
    availability: float | None = Field(
        description="creditable availability: the incidents the terms count as down time"
    )
    sla_availability: float | None
    down_minutes: float | None
    credit_share: float | None
    invoiced: float | None
    amount: float | None = Field(
        description="credit_share x the month's invoice, offer currency; null without an invoice"
    )
    deadline: date | None = Field(description="the last day to file the claim; null: the terms state no window")
    window_open: bool
    claimable: float | None = Field(
        description="what can still be claimed: the amount while the window is open, else 0; null without an invoice"
    )
    reason: str | None = Field(description="why nothing can be claimed, when nothing can")
    evidence: list[ClaimEvidence] = Field(default_factory=list)


class VendorClaims(BaseModel):
    offer: str
    vendor: str
    currency: str
    terms: str = Field(description="the credit terms in words")
    claims: list[Claim]
    total_claimable: float


def terms_text(terms: Any, sla: float | None) -> str:
    """The contract's credit terms in words, as a claim cites them."""
    if terms is None:
        return "the contract states no SLA credit terms (contract.sla_credits)"
    if terms.tiers:
        scale = "; ".join(f"{t.credit:.0%} below {t.below:.2%}" for t in sorted(terms.tiers, key=lambda t: -t.below))
    else:
        scale = f"{terms.rate_per_point:.0%} of the month's fee per percentage point below the SLA"
    window = (
        "no claim window stated"
        if terms.claim_window_days is None
        else (
            f"claims within {terms.claim_window_days} days of the "
            + ("month's end" if terms.claim_window_from == "month_end" else "incident's end")
        )
    )
    degraded = (
        "degraded but reachable GPUs count as down time"
        if terms.degraded_counts
        else "degraded but reachable GPUs do not count as down time"
    )
    return f"SLA {percent_or_no_data(sla, 2)}; credits {scale}, capped at {terms.cap:.0%}; {window}; {degraded}"


def claim_impacts(down_impacts: list[str], terms: Any) -> list[str]:
    """The impacts a claim counts as down time: the scorecard's, with degraded (`minor`) as the terms say."""
    counted = [i for i in down_impacts if i != DEGRADED]
    return counted + [DEGRADED] if terms is not None and terms.degraded_counts else counted


def claim_deadline(terms: Any, month: str, evidence: list[ClaimEvidence]) -> date | None:
    """The last day to file: claim_window_days after the month's last day, or after the first counted incident's
    end (an incident still open starts no window yet); None when the terms state no window."""
    if terms is None or terms.claim_window_days is None:
        return None
    days = timedelta(days=terms.claim_window_days)
    if terms.claim_window_from == "incident":
        ends = [date.fromisoformat(e.end[:10]) for e in evidence if e.end is not None]
        return min(ends) + days if ends else None
    y, m = int(month[:4]), int(month[5:7])
    return date(y, m, calendar.monthrange(y, m)[1]) + days


def month_evidence(incidents: list[Any], month: str, impacts: list[str]) -> list[ClaimEvidence]:
    """The counted incidents that touch the month, with their minutes inside it."""
    start, end = month_window(month)
    found = []
    for i in sorted(incidents, key=lambda i: i.start):
        stop = i.end or end
        if i.impact not in impacts or stop <= start or i.start >= end:
            continue
        minutes = (min(stop, end) - max(i.start, start)).total_seconds() / 60
        found.append(
            ClaimEvidence(
                start=i.start.isoformat(),
                end=i.end.isoformat() if i.end else None,
                impact=i.impact,
                components=list(i.components),
                minutes=minutes,
                name=i.name,
            )
        )
    return found


def _zero_reason(
    terms: Any, automatic: bool, sla: float | None, availability: float | None, share: float | None
) -> str | None:
    """Why the terms owe nothing this month (None: they owe a credit)."""
    if terms is None:
        return "the contract states no SLA credit terms (contract.sla_credits): nothing to claim"
    if sla is None:
        return "the offer states no SLA availability"
    if availability is None:
        return "no incident record covers the month"
    if availability >= sla:
        return (
            f"availability {percent_or_no_data(availability, 3)} is at or above the SLA's {percent_or_no_data(sla, 2)}"
        )
    if not share:
        return (
            f"availability {percent_or_no_data(availability, 3)} is below the SLA's {percent_or_no_data(sla, 2)} "
            "but above every credit tier's threshold"
        )
    if automatic:
        return "the terms credit automatically: no claim to file (check the invoice)"
    return None


def vendor_claims(workspace: Any, vendor: Any, as_of: date) -> VendorClaims:
    """One signed vendor's claims, month by month of its scorecard."""
    from procure.analysis.incidents import availability as availability_of

    offer = next(o for o in workspace.offers if o.id == vendor.offer)
    terms = offer.contract.sla_credits
    sla = offer.service.sla.availability if offer.service.sla else None
    automatic = bool(
        terms is not None
        and (
            terms.automatic
            if terms.automatic is not None
            else offer.service.sla and offer.service.sla.automatic_credits
        )
    )
    impacts = claim_impacts(list(workspace.config.actuals.down_impacts), terms)
    incidents = workspace.actuals[vendor.offer].incidents
    claims = []
    for m in vendor.months:
        start, end = month_window(m.month)
        running = end.date() > as_of  # the month of as-of: the scorecard does not score it
        if running and not (terms is not None and terms.claim_window_from == "incident" and incidents):
            continue  # a window from the month's end has not opened: nothing to claim yet
        # the scorecard's incident record covers the month; in the running month, the incidents so far (a window
        # counted from an incident's end can close before the month does)
        covered = m.availability is not None or running
        avail = availability_of(incidents, start, end, None, impacts) if covered else None
        evidence = month_evidence(incidents, m.month, impacts) if covered else []
        share = credit_share(avail, sla, terms) if avail is not None and sla is not None and terms is not None else None
        amount = share * m.invoiced if share is not None and m.invoiced is not None else None
        deadline = claim_deadline(terms, m.month, evidence)
        reason = _zero_reason(terms, automatic, sla, avail, share)
        window_open = deadline is None or as_of <= deadline
        if reason is None and not window_open:
            reason = (
                f"the claim window closed on {deadline.isoformat()} ({terms.claim_window_days} days from the "
                f"{'month' if terms.claim_window_from == 'month_end' else 'incident'}'s end)"
            )
        claimable = 0.0 if reason is not None else amount
        down = (end - start).total_seconds() / 60 * (1 - avail) if avail is not None else None
        claims.append(
            Claim(
                month=m.month,
                availability=avail,
                sla_availability=sla,
                down_minutes=down,
                credit_share=share,
                invoiced=m.invoiced,
                amount=amount,
                deadline=deadline,
                window_open=window_open,
                claimable=claimable,
                reason=reason,
                evidence=evidence,
            )
        )
    return VendorClaims(
        offer=vendor.offer,
        vendor=vendor.vendor,
        currency=vendor.currency,
        terms=terms_text(terms, sla),
        claims=claims,
        total_claimable=sum(c.claimable or 0.0 for c in claims),
    )


def draft_claims(workspace: Any, result: ScorecardResult, as_of: date) -> list[VendorClaims]:
    """Every signed vendor's claims, for the months of its scorecard."""
    return [vendor_claims(workspace, v, as_of) for v in result.vendors]


def claim_breaches(
    workspace: Any, claims: list[VendorClaims], as_of: date, warning_days: int, min_amount: float
) -> list[tuple[str, str]]:
    """What makes `reevaluate` exit 3: a claim still open, worth more than `min_amount` (workspace currency), whose
    deadline falls within `warning_days` of as-of."""
    found = []
    for vendor in claims:
        fx = workspace.fx_rate(vendor.currency)
        for c in vendor.claims:
            if not c.claimable or c.deadline is None or c.claimable * fx <= min_amount:
                continue
            left = (c.deadline - as_of).days
            if 0 <= left <= warning_days:
                found.append(
                    (
                        "claim-deadline",
                        f"{vendor.offer}: the {c.month} SLA credit claim of {c.claimable:,.2f} {vendor.currency} "
                        f"lapses on {c.deadline.isoformat()} "
                        f"({left} day{'s' if left != 1 else ''} left): file it (procure scorecard --claim)",
                    )
                )
    return found
