"""SLA credit claims (scorecard --claim) as Markdown: per vendor, each month's claim with its evidence and
deadline, and why a claim is 0. They format; the figures are procure/analysis/claims.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from procure.analysis.scorecard import percent_or_no_data

if TYPE_CHECKING:
    from datetime import date

    from procure.analysis.claims import Claim, VendorClaims


def _money(value: float | None, currency: str) -> str:
    return "no invoice" if value is None else f"{value:,.2f} {currency}"


def _deadline(c: Claim, windowed: bool) -> str:
    if c.deadline is None:
        if windowed and any(e.end is None and not e.lapsed for e in c.evidence):
            return "window opens when the incident ends"
        return "no window stated"
    return f"by {c.deadline.isoformat()}" if c.window_open else f"closed {c.deadline.isoformat()}"


def _lapsed_text(c: Claim, currency: str) -> str:
    """What the incidents whose window closed take off the claim, when any did."""
    lapsed = [e for e in c.evidence if e.lapsed]
    if not lapsed:
        return ""
    return (
        f"The claim window of {len(lapsed)} of its {len(c.evidence)} incidents closed (the last on "
        f"{max(e.deadline for e in lapsed if e.deadline).isoformat()}); the others alone leave availability "
        f"{percent_or_no_data(c.claimable_availability, 3)}: {_money(c.claimable, currency)} claimable now. "
    )


def _claim_lines(c: Claim, currency: str) -> list[str]:
    """One claimed month: the figure, the deadline, and the incidents that are its evidence."""
    amount = f"credit {percent_or_no_data(c.credit_share, 1)} of the invoice ({_money(c.invoiced, currency)})"
    unbilled = f"credit {percent_or_no_data(c.credit_share, 1)} of the month invoice (none received)"
    head = f"### {c.month}: {_money(c.claimable, currency) if c.invoiced is not None else unbilled}"
    lines = [
        head,
        "",
        f"Availability delivered {percent_or_no_data(c.availability, 3)} ({c.down_minutes:,.0f} minutes down) against "
        f"the SLA's {percent_or_no_data(c.sla_availability, 2)}: {amount}. "
        + _lapsed_text(c, currency)
        + (
            f"File by {c.deadline.isoformat()}."
            if c.deadline is not None
            else "The terms state no claim window: file promptly."
        ),
        "",
    ]
    if c.evidence:
        from procure.textsafe import markdown_text

        lines += [
            "| incident | start | end | impact | components | minutes in the month | claim by |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in c.evidence:
            by = (
                "-"
                if e.deadline is None
                else f"lapsed {e.deadline.isoformat()}"
                if e.lapsed
                else e.deadline.isoformat()
            )
            lines.append(
                f"| {markdown_text(e.name) or '-'} | {e.start} | {e.end or 'open'} | {e.impact} | "
                f"{markdown_text(', '.join(e.components)) or 'all'} | {e.minutes:,.0f} | {by} |"
            )
        lines.append("")
    return lines


def claims_markdown(vendors: list[VendorClaims], as_of: date) -> str:
    """The claims, one section per signed vendor; every month below the SLA, and why any claim is 0."""
    from procure.textsafe import markdown_text

    lines = [f"# SLA credit claims ({as_of.isoformat()})", ""]
    if not vendors:
        return "\n".join(lines + ["No signed vendor has evidence in actuals/.", ""])
    for v in vendors:
        lines += [
            f"## {markdown_text(v.vendor)}: contract {markdown_text(v.offer)}",
            "",
            f"Terms: {v.terms}.",
            "",
            "| month | availability delivered | SLA | credit | invoice | credit owed | deadline | claimable now |",
            "|---|---|---|---|---|---|---|---|",
        ]
        below = [
            c
            for c in v.claims
            if c.availability is not None and c.sla_availability is not None and c.availability < c.sla_availability
        ]
        windowed = "no claim window stated" not in v.terms
        for c in below:
            owed = "to be applied to the invoice" if c.amount is None else _money(c.amount, v.currency)
            now = c.reason if c.claimable == 0 else _money(c.claimable, v.currency)
            lines.append(
                f"| {c.month} | {percent_or_no_data(c.availability, 3)} | {percent_or_no_data(c.sla_availability, 2)} "
                f"| {percent_or_no_data(c.credit_share, 1)} | "
                f"{_money(c.invoiced, v.currency)} | {owed} | {_deadline(c, windowed)} | {markdown_text(now or '')} |"
            )
        if not below:
            lines.append("| - | no month below the SLA | | | | | | |")
        lines.append("")
        for c in below:
            if c.claimable != 0:
                lines += _claim_lines(c, v.currency)
        zero = [c for c in v.claims if c.claimable == 0]
        if zero:
            lines += ["Nothing to claim:", ""] + [f"- {c.month}: {c.reason}." for c in zero] + [""]
        lines += [f"Total claimable now: {v.total_claimable:,.2f} {v.currency}.", ""]
    return "\n".join(lines)


def claims_text(vendors: list[VendorClaims], as_of: date, fmt: str) -> str:
    """The claims as JSON, or as a letter in Markdown or plain text (a claim is a document: its table is its
    Markdown)."""
    if fmt == "json":
        return claims_json(vendors)
    from procure.render.formats import written

    return written(claims_markdown(vendors, as_of), fmt)


def claims_json(vendors: list[VendorClaims]) -> str:
    """The claims as `procure schema claims` describes them (without the envelope)."""
    import json

    return json.dumps({"vendors": [c.model_dump(mode="json") for c in vendors]}, indent=2) + "\n"
