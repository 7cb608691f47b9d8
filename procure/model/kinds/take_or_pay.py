"""Reserved GPUs with a take-or-pay floor (`pricing.take_or_pay`): `gpus` GPUs are reserved for the term at a rate
per GPU-hour, and at least `floor` of the reserved hours are owed every month, used or not; hours used above the
floor are billed at the rate, up to the reservation.

    monthly bill = rate x max(used GPU-hours, floor x reserved GPU-hours), used at most the reservation

In the cost model this is the GPU-hour rent (the rate, less any discount, times the escalators) on the demand fit's
billed GPUs min(max(needed, floor x gpus), gpus): the floor is the committed part, the reservation the supply. The
cash flow bills that each month; what signing binds is the floor over the term (procure/analysis/commitment.py);
the plan commits to the floor in whole nodes and takes the rest of the reservation as used.

A contract shape, not a price: the market reference (/work/shared/reference/market-2026.md) quotes reserved
rentals of 1-60 months (Silicon Data's index inputs) and FOCUS 1.2 has capacity-reservation and commitment
columns, but no public take-or-pay rate or floor; the figures in tests and docs are illustrative.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import Field

from procure.model.fields import Positive, PositiveFraction, Strict
from procure.model.kinds.base import HOURS_PER_MONTH, Add, Kind, TermsRow

if TYPE_CHECKING:
    from procure.model.inputs import Offer, Pricing


class TakeOrPay(Strict):
    """The offer's `gpus` reserved at a rate per GPU-hour; at least `floor` of the reserved hours owed monthly."""

    gpu_hour: Positive = Field(description="the rate per GPU-hour used, up to the reservation (offer currency)")
    floor: PositiveFraction = Field(description="the share of the reserved GPU-hours owed every month, used or not")


def checks(offer: Offer, add: Add, has_index: bool) -> None:
    """A reservation to put the floor on, billed by the month, with nothing above it."""
    if offer.pricing.take_or_pay is None:  # type: ignore[attr-defined]
        return
    if offer.gpus == 0:
        add(("gpus",), "take-or-pay pricing needs the reserved GPUs: more than 0 (the floor is a share of them)")
    if offer.max_gpus is not None and offer.max_gpus != offer.gpus:
        add(("max_gpus",), f"a take-or-pay reservation is its gpus ({offer.gpus}): leave max_gpus out")
    if offer.pricing.billed_per not in (None, "month"):
        add(("pricing", "billed_per"), "take-or-pay is billed by the month (the floor is owed each month): month")
    if offer.pricing.burst is not None:
        add(("pricing", "burst"), "take-or-pay bills the hours above the floor up to the reservation: no burst")


def committed(offer: Offer) -> float:
    """floor x the reserved GPUs: owed every month of the term."""
    terms = offer.pricing.take_or_pay  # type: ignore[attr-defined]
    return terms.floor * float(offer.gpus or 0)


def cost_columns(offer: Offer, index_level: float) -> dict[str, float]:
    """The rate as the GPU-hour price, the floor's GPUs as the committed ones and the reservation as the most billed."""
    terms = offer.pricing.take_or_pay  # type: ignore[attr-defined]
    return {"gpu_hour": terms.gpu_hour, "gpus": committed(offer), "max_gpus": float(offer.gpus or 0)}


def scale_price(pricing: Pricing, factor: float, index_level: float | None, fx: float) -> Pricing:
    """The rate times `factor` (the floor stays)."""
    terms = pricing.take_or_pay  # type: ignore[attr-defined]
    return pricing.model_copy(update={"take_or_pay": terms.model_copy(update={"gpu_hour": terms.gpu_hour * factor})})


def rate(pricing: Pricing) -> float | None:
    return pricing.take_or_pay.gpu_hour  # type: ignore[attr-defined]


def terms(pricing: Pricing) -> str:
    """'3.10 per GPU-hour used, at least 70% of the reserved GPU-hours owed every month'."""
    top = pricing.take_or_pay  # type: ignore[attr-defined]
    return (
        f"take-or-pay: {top.gpu_hour:,.2f} per GPU-hour used, at least {top.floor:.0%} of the reserved GPU-hours "
        "owed every month"
    )


def reserved_words(offer: Offer, noun: str) -> str:
    """'100 GPUs reserved, 70 owed': the reservation and its floor, both (the floor alone reads as the whole deal)."""
    owed = round(committed(offer), 6)
    return f"{offer.gpus:,} {noun} reserved, {owed:,g} owed"


def memo_price(pricing: Pricing, currency: str, metrics: dict[str, Any], ours: str) -> str:
    return f"{terms(pricing)}, in {currency}"


def terms_row(pricing: Pricing, currency: str) -> TermsRow:
    return TermsRow("Pricing", terms(pricing))


def workbook_values(offer: Offer, metrics: dict[str, Any]) -> dict[str, Any]:
    terms = offer.pricing.take_or_pay  # type: ignore[attr-defined]
    return {"reserved_gpus": offer.gpus, "floor": terms.floor, "gpus_used": metrics.get("gpus_needed")}


def bill(k: Callable[[str], str]) -> str:
    """The month's bill: MAX(used, floor x reserved) x rate x 730, the used GPUs at most the reservation."""
    used = f"MIN({k('reserved_gpus')},N({k('gpus_used')}))"
    return f'IF({k("floor")}="","",MAX({used},{k("floor")}*{k("reserved_gpus")})*{k("rent")}*{HOURS_PER_MONTH:g})'


KIND = Kind(
    name="take_or_pay",
    field="take_or_pay",
    label="take-or-pay",
    block=TakeOrPay,
    checks=checks,
    cost_columns=cost_columns,
    scale_price=scale_price,
    template_flow=True,
    price_words="a reserved GPU-hour rate with a take-or-pay floor",
    committed=committed,
    billed_monthly=True,
    as_used_above_commitment=True,
    workbook_columns=(
        ("reserved_gpus", "Reserved GPUs", None),
        ("floor", "Take-or-pay floor", None),
        ("gpus_used", "GPUs used (as evaluated)", None),
        ("take_or_pay_bill", "Take-or-pay bill/month", bill),
    ),
    workbook_values=workbook_values,
    rate=rate,
    reserved_words=reserved_words,
    terms_row=terms_row,
    memo_price=memo_price,
)
