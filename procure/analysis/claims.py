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
- the deadline: `claim_window_days` after the month's last day, or, with `claim_window_from: incident`, after
  each counted incident's own end: an incident whose window has closed no longer counts, and what is claimable
  now is the credit at the availability of the incidents still within their windows (the claim's deadline is
  the next of those windows to close; an incident still open at as-of starts no window yet); no window
  stated: none;
- the evidence: only what happened up to the end of the as-of day (an incident that starts later is not cited,
  one still running then is cited as open, its minutes counted up to then);
- why a claim is 0: no credit terms, no SLA, no incident record for the month, availability at or
  above the SLA, below it but above every credit tier, credited automatically, or the window closed.

A claim with no invoice for the month has no amount yet (None), never 0.
"""

from __future__ import annotations

import calendar
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from procure.analysis.scorecard import ScorecardResult, credit_share, month_window, percent_or_no_data

DEGRADED = "minor"  # Statuspage's impact for a degraded but reachable service


class ClaimEvidence(BaseModel):
    start: str
    end: str | None = Field(description="null: still open")
    impact: str
    components: list[str]
    minutes: float = Field(description="minutes of it inside the month (up to the end of the as-of day)")
    name: str = ""
    deadline: date | None = Field(
        default=None, description="the last day to claim it; null: no window stated, or the incident still open"
    )
    lapsed: bool = Field(default=False, description="its claim window closed before as-of: no longer claimable")


class Claim(BaseModel):
    month: str
    availability: float | None = Field(
        description="creditable availability: the incidents the terms count as down time"
    )
    claimable_availability: float | None = Field(
        default=None, description="the availability counting only the incidents still within their claim windows"
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


def incident_deadline(terms: Any, month: str, end: str | None) -> date | None:
    """The last day to claim one incident: claim_window_days after the month's last day, or after the incident's
    own end (`claim_window_from: incident`; an incident still open starts no window yet); None when the terms
    state no window."""
    if terms is None or terms.claim_window_days is None:
        return None
    days = timedelta(days=terms.claim_window_days)
    if terms.claim_window_from == "incident":
        return date.fromisoformat(end[:10]) + days if end is not None else None
    y, m = int(month[:4]), int(month[5:7])
    return date(y, m, calendar.monthrange(y, m)[1]) + days


def claim_deadline(terms: Any, month: str, evidence: list[ClaimEvidence]) -> date | None:
    """The claim's deadline: the next window of its incidents still open to close (the month's end + the window
    when counted from the month's end); when every incident has lapsed, the last one's; None when the terms
    state no window or every counted incident is still open."""
    if terms is None or terms.claim_window_days is None:
        return None
    if terms.claim_window_from != "incident":
        return incident_deadline(terms, month, None)
    live = [e.deadline for e in evidence if e.deadline is not None and not e.lapsed]
    if live:
        return min(live)
    if any(not e.lapsed for e in evidence):
        return None  # the incidents not lapsed are still open: their windows have not started
    closed = [e.deadline for e in evidence if e.deadline is not None]
    return max(closed) if closed else None


def until(incidents: list[Any], cutoff: datetime) -> list[Any]:
    """The incidents as known at `cutoff` (the end of the as-of day): those started by then, each one still
    running then ending there."""
    known = []
    for i in incidents:
        if i.start >= cutoff:
            continue
        known.append(replace(i, end=None) if i.end is not None and i.end > cutoff else i)
    return known


def month_evidence(
    incidents: list[Any],
    month: str,
    impacts: list[str],
    terms: Any = None,
    as_of: date | None = None,
) -> list[ClaimEvidence]:
    """The counted incidents that touch the month, with their minutes inside it (an incident still open counted
    up to the end of the as-of day), each with its own deadline and whether that has passed on as-of."""
    start, end = month_window(month)
    if as_of is not None:
        end = min(end, datetime.combine(as_of + timedelta(days=1), datetime.min.time(), tzinfo=UTC))
    found = []
    for i in sorted(incidents, key=lambda i: i.start):
        stop = i.end or end
        if i.impact not in impacts or stop <= start or i.start >= end:
            continue
        minutes = (min(stop, end) - max(i.start, start)).total_seconds() / 60
        closes = incident_deadline(terms, month, i.end.isoformat() if i.end else None)
        found.append(
            ClaimEvidence(
                start=i.start.isoformat(),
                end=i.end.isoformat() if i.end else None,
                impact=i.impact,
                components=list(i.components),
                minutes=minutes,
                name=i.name,
                deadline=closes,
                lapsed=closes is not None and as_of is not None and as_of > closes,
            )
        )
    return found


def _counted(incidents: list[Any], start: datetime, end: datetime, impacts: list[str]) -> list[Any]:
    """The incidents month_evidence cites for [start, end), in its order."""
    return [
        i
        for i in sorted(incidents, key=lambda i: i.start)
        if i.impact in impacts and (i.end or end) > start and i.start < end
    ]


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
    from procure.analysis.incidents import downtime

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
    cutoff = datetime.combine(as_of + timedelta(days=1), datetime.min.time(), tzinfo=UTC)  # the as-of day's end
    incidents = until(workspace.actuals[vendor.offer].incidents, cutoff)
    claims = []
    for m in vendor.months:
        start, end = month_window(m.month)
        running = end.date() > as_of  # the month of as-of: the scorecard does not score it
        if running and not (terms is not None and terms.claim_window_from == "incident" and incidents):
            continue  # a window from the month's end has not opened: nothing to claim yet
        # the scorecard's incident record covers the month; in the running month, the incidents so far (a window
        # counted from an incident's end can close before the month does)
        covered = m.availability is not None or running
        evidence = month_evidence(incidents, m.month, impacts, terms, as_of) if covered else []
        minutes = (end - start).total_seconds() / 60
        seen = min(end, cutoff)  # an incident still open at as-of counts up to then, not to the month's end
        avail = 1 - downtime(incidents, start, seen, None, impacts).total_seconds() / 60 / minutes if covered else None
        counted = _counted(incidents, start, seen, impacts) if covered else []
        live = [i for i, e in zip(counted, evidence, strict=True) if not e.lapsed]
        open_avail = 1 - downtime(live, start, seen, None, impacts).total_seconds() / 60 / minutes if covered else None
        share = credit_share(avail, sla, terms) if avail is not None and sla is not None and terms is not None else None
        amount = share * m.invoiced if share is not None and m.invoiced is not None else None
        deadline = claim_deadline(terms, m.month, evidence)
        reason = _zero_reason(terms, automatic, sla, avail, share)
        window_open = deadline is None or as_of <= deadline
        open_share = share
        if reason is None and any(e.lapsed for e in evidence):
            reason, open_share = _lapsed(terms, sla, evidence, deadline, window_open, open_avail, share)
        if reason is not None:
            claimable = 0.0
        else:
            claimable = open_share * m.invoiced if open_share is not None and m.invoiced is not None else None
        down = minutes * (1 - avail) if avail is not None else None
        claims.append(
            Claim(
                month=m.month,
                availability=avail,
                claimable_availability=open_avail,
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


def _lapsed(
    terms: Any,
    sla: float | None,
    evidence: list[ClaimEvidence],
    deadline: date | None,
    window_open: bool,
    open_avail: float | None,
    share: float | None,
) -> tuple[str | None, float | None]:
    """A month some of whose incidents' claim windows have closed: why nothing is claimable (the month's window
    closed, or the incidents still in their windows owe no credit), and the credit share those still owe."""
    if not window_open and deadline is not None:
        return (
            f"the claim window closed on {deadline.isoformat()} ({terms.claim_window_days} days from the "
            f"{'month' if terms.claim_window_from == 'month_end' else 'incident'}'s end)"
        ), share
    open_share = credit_share(open_avail, sla, terms)
    if open_share:
        return None, open_share
    lapsed = [e for e in evidence if e.lapsed]
    return (
        f"the claim window of {len(lapsed)} of its {len(evidence)} incidents closed (the last on "
        f"{max(e.deadline for e in lapsed).isoformat()}); the others alone leave availability "
        f"{percent_or_no_data(open_avail, 3)}, which owes no credit"
    ), open_share


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
