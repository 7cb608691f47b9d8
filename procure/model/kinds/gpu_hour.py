"""A fixed price per GPU-hour (`pricing.gpu_hour`): the rent is the list price less the discount, times the term's
escalators (docs/cost-model.md, step 1).

Its variants are not kinds of their own, since each is priced by the same rent: billed by the hour, minute or
second (`pricing.billed_per`, pay-as-used in the plan), on-demand (`gpus: 0` with `pricing.burst`: the burst price
is its price) and spot (`service.preemptible`: a burst source with interruptions, priced per GPU-hour).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from procure.model.kinds.base import (
    FormulaInputs,
    FormulaLines,
    Kind,
    TermsRow,
    financing_line,
    rent_line,
    stated_price_line,
)

if TYPE_CHECKING:
    from procure.model.inputs import Pricing


def scale_price(pricing: Pricing, factor: float, index_level: float | None, fx: float) -> Pricing:
    """The list price times `factor` (an on-demand offer without one keeps its burst price)."""
    if pricing.gpu_hour is None:
        return pricing
    return pricing.model_copy(update={"gpu_hour": pricing.gpu_hour * factor})


def rate(pricing: Pricing) -> float | None:
    """The stated price per GPU-hour, or a pure on-demand offer's burst price."""
    if pricing.gpu_hour is not None:
        return pricing.gpu_hour
    return pricing.burst.gpu_hour if pricing.burst is not None else None


def terms_row(pricing: Pricing, currency: str) -> TermsRow | None:
    """('Price per GPU-hour', '3.95 USD'), a figure; none for an on-demand offer that states only its burst price."""
    if pricing.gpu_hour is None:
        return None
    return TermsRow("Price per GPU-hour", f"{round(pricing.gpu_hour, 2) + 0.0:,.2f} {currency}", numeric=True)


def memo_price(pricing: Pricing, currency: str, metrics: dict[str, Any], ours: str) -> str:
    """'5.20 USD per GPU-hour, 10% discount'; a pure on-demand offer: its burst price, billed as used."""
    if pricing.gpu_hour is None and pricing.burst is not None:  # on demand only: billed as used, nothing committed
        return f"{pricing.burst.gpu_hour:.2f} {currency} per GPU-hour on demand, billed as used"
    discount = f", {pricing.discount:.0%} discount" if pricing.discount else ""
    return f"{pricing.gpu_hour:.2f} {currency} per GPU-hour{discount}"


def formula_lines(f: FormulaInputs) -> FormulaLines:
    """The stated price per GPU-hour (an on-demand offer's: its pay-as-used price), its rent and financing."""
    on_demand = f.pricing.gpu_hour is None and f.pricing.burst is not None
    return FormulaLines(
        stated_price_line(f, "pay-as-used price: " if on_demand else ""), rent_line(f), financing_line(f)
    )


KIND = Kind(
    name="gpu_hour",
    field="gpu_hour",
    label="GPU-hour",
    board_words="fixed price",
    scale_price=scale_price,
    rate=rate,
    memo_price=memo_price,
    terms_row=terms_row,
    formula_lines=formula_lines,
    price_words="a fixed price per GPU-hour",
)
