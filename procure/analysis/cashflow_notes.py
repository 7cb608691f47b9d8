"""What the cash flow's figures alone do not say, in words: the renewal rule in force, a late delivery, the SLA
credits and whether they are counted, the expected loss on prepayment, and why a horizon's total is below the
commitment. `offer` is the cash flow's offer on its calendar (procure.analysis.cashflow._Offer), `months` its
MonthFlow rows."""

from __future__ import annotations

from typing import Any

from procure.model.kinds import kind_named

RENEWAL_RULES = {
    "basis": "the price its escalators reach in the month after the term before, its escalators again within it, "
    "moved by the index change since the as-of date (index-linked: its spread, floor and cap)",
    "index": "the raw index (index-linked: plus its spread, within its floor and cap)",
    "escalate": "the price its escalators reach in the month after the term before, its escalators again within it, "
    "whatever the index does",
}


def horizon_notes(
    offer: Any, months: list[Any], horizon: int, vendor_default_rate: float, notes: list[str]
) -> tuple[float, float]:
    """What the figures alone do not say: a late delivery, the renewal rule after the term, the expected SLA
    credits (and whether they are counted), the expected loss on prepayment. Returns the SLA credits and that
    loss over the horizon (both positive)."""
    record, config, start, term = offer.record, offer.config, offer.start, offer.term
    if start > 1:
        notes.append(f"delivered in month {start}: nothing to serve before")
    if horizon > start - 1 + term and kind_named(record.pricing_basis).rented:
        notes.append(
            f"after its {term}-month term the offer renews at {RENEWAL_RULES[config.renewal]} (horizon.renewal: "
            f"{config.renewal})"
        )
    sla_total = 0.0 - sum(f.sla_credits for f in months)  # 0.0 - 0.0 is 0.0, where -(0.0) would print as -0.0
    if sla_total > 0:
        notes.append(
            f"expected SLA credits {sla_total:,.0f}: "
            + (
                "counted in the cost (horizon.count_sla_credits: true)"
                if config.count_sla_credits
                else "shown, not counted: a remedy, not a saving"
            )
        )
    risk_total = sum(f.prepay_risk for f in months)
    if risk_total > 0:
        notes.append(
            f"expected loss on unearned prepayment {risk_total:,.0f} at a vendor default rate of "
            f"{vendor_default_rate:.1%} a year"
        )
    return sla_total, risk_total


def below_commitment(
    offer: Any, total: float, commitment: float, horizon: int, months: list[Any], residual: float
) -> str:
    """Why the horizon's total is below what the contract binds the buyer to: said, not left to guess."""
    record, start, term, ramp = offer.record, offer.start, offer.term, offer.ramp
    billed = record.metrics.get("billed_gpus") or 0.0
    committed = kind_named(record.pricing_basis).committed(record.terms)
    reasons = []
    last = start - 1 + term  # the term's last month on the horizon's calendar
    if last > horizon:
        late = f" (delivery in month {start})" if start > 1 else ""
        reasons.append(
            f"the term runs to month {last}{late}, past the {horizon}-month horizon: its last {last - horizon} months "
            "are committed but not in the total"
        )
    if billed < committed:
        reasons.append(
            f"the demand bills {billed:,.0f} of the {committed:,.0f} committed GPUs; the commitment counts them all"
        )
    if ramp is not None and any(g < committed for g in ramp):
        reasons.append(f"a ramp delivers fewer GPUs in the first {len(ramp)} months")
    credits = -sum(f.credits for f in months)
    if credits > 0.5:
        reasons.append(f"expected credits take {credits:,.0f} off the total")
    if residual > 0.5:
        reasons.append(f"the equipment's residual value ({residual:,.0f}) is credited at the horizon")
    why = "; ".join(reasons) if reasons else "the horizon ends before the commitment is spent"
    return f"the total ({total:,.0f}) is below the commitment ({commitment:,.0f}): {why}"
