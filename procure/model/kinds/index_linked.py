"""An index-linked rent (`pricing.index_linked`): clamp(index + spread, floor, cap) per GPU-hour, the index being
market/index.csv (docs/cost-model.md, step 1; the hedge and the cash flow move it with the index)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from procure.model.fields import NonNegative, Number, Positive, Strict
from procure.model.kinds.base import (
    Add,
    Columns,
    Figure,
    FormulaInputs,
    FormulaLine,
    FormulaLines,
    Kind,
    TermsRow,
    financing_line,
    rent_line,
    times_fx,
)

if TYPE_CHECKING:
    from procure.model.inputs import Offer, Pricing


class IndexLinked(Strict):
    """Rent = clamp(index + spread, floor, cap), the index being market/index.csv."""

    spread: Number
    floor: NonNegative | None = None
    cap: Positive | None = None


def checks(offer: Offer, add: Add, has_index: bool) -> None:
    """A floor at most the cap, and an index to link to."""
    linked = offer.pricing.index_linked
    if linked is None:
        return
    if linked.floor is not None and linked.cap is not None and linked.floor > linked.cap:
        add(("pricing", "index_linked", "floor"), f"floor {linked.floor} is above cap {linked.cap}")
    if not has_index:
        add(("pricing", "index_linked"), "index-linked pricing needs market/index.csv (date, price)")


def index_linked_rent(
    index_level: float, spread: float, floor: float | None, cap: float | None, fx: float, discount: float
) -> float:
    """One index-linked rent per GPU-hour: clamp(index + spread, floor, cap) x (1 - discount), the
    offer's amounts in its currency (x fx), the index in the workspace's (step 1, for one figure)."""
    price = index_level + spread * fx
    if floor is not None:
        price = max(price, floor * fx)
    if cap is not None:
        price = min(price, cap * fx)
    return price * (1 - discount)


def index_rent(pricing: Pricing, index_level: float, fx: float, shift: float = 0.0) -> float:
    """The offer's rent at `index_level`, its spread moved by `shift` (workspace currency, so shift / fx in the
    offer's): clamp(index + spread x fx + shift, floor x fx, cap x fx) x (1 - discount)."""
    linked = pricing.index_linked
    assert linked is not None
    return index_linked_rent(index_level, linked.spread + shift / fx, linked.floor, linked.cap, fx, pricing.discount)


def terms_row(pricing: Pricing, currency: str) -> TermsRow:
    """('Index-linked', 'index -0.30, floor 3.50, cap 6.00 USD')."""
    linked = pricing.index_linked
    assert linked is not None
    words = f"index {linked.spread:+.2f}"
    if linked.floor is not None:
        words += f", floor {linked.floor:,.2f}"
    if linked.cap is not None:
        words += f", cap {linked.cap:,.2f}"
    return TermsRow("Index-linked", f"{words} {currency}")


def memo_price(pricing: Pricing, currency: str, metrics: dict[str, Any], ours: str) -> str:
    """'index -0.30 USD per GPU-hour (floor 3.50, cap 6.00), 4.73 today' (today: the rent the cost model found)."""
    linked = pricing.index_linked
    assert linked is not None
    bounds = ", ".join(
        x
        for x in (
            f"floor {linked.floor:.2f}" if linked.floor is not None else "",
            f"cap {linked.cap:.2f}" if linked.cap is not None else "",
        )
        if x
    )
    return (
        f"index {linked.spread:+.2f} {currency} per GPU-hour"
        + (f" ({bounds})" if bounds else "")
        + f", {metrics.get('rent_today', metrics['rent']):.2f} today"
    )


def list_price(col: Columns, fx: np.ndarray, discount: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """clamp(index + spread, floor, cap), and the rent at the cap (NaN without one): the offer's spread, floor and cap
    are in its currency (x fx), the index in the workspace's."""
    floor = np.where(np.isnan(col["floor"]), -np.inf, col["floor"] * fx)
    cap = np.where(np.isnan(col["cap"]), np.inf, col["cap"] * fx)
    index_price = np.clip(col["index_level"] + col["spread"] * fx, floor, cap)
    return index_price, np.where(np.isfinite(cap), cap * (1 - discount), np.nan)


def price_floor(col: Columns) -> np.ndarray:
    """The floor in the workspace's currency (NaN without one): the price cannot go below it."""
    return col["floor"] * col["fx"]


def cost_columns(offer: Offer, index_level: float) -> dict[str, float]:
    pricing = offer.pricing
    linked = pricing.index_linked
    assert linked is not None
    nan = float("nan")
    return {
        "index_level": index_level,
        "spread": linked.spread,
        "floor": linked.floor if linked.floor is not None else nan,
        "cap": linked.cap if linked.cap is not None else nan,
    }


def scale_price(pricing: Pricing, factor: float, index_level: float | None, fx: float) -> Pricing:
    """Move the rent by the same share: shift the spread by (factor - 1) x today's index + spread (the index in the
    offer's currency). Without an index level the price stays."""
    linked = pricing.index_linked
    if linked is None or index_level is None:
        return pricing
    current = index_level / fx + linked.spread
    return pricing.model_copy(
        update={"index_linked": linked.model_copy(update={"spread": linked.spread + (factor - 1) * current})}
    )


def formula_lines(f: FormulaInputs) -> FormulaLines:
    """Today's list price: index + spread (x fx), or the floor or the cap (x fx) when index + spread lies beyond it;
    its rent and financing as for any price per GPU-hour."""
    linked = f.pricing.index_linked
    assert linked is not None
    raw = (f.index_level or 0.0) + linked.spread * f.fx
    words = f"index on {f.index_date} + spread, within floor and cap: "
    if linked.floor is not None and raw < linked.floor * f.fx:
        price = FormulaLine((words, "at the floor "), (Figure(linked.floor, 4), *times_fx(f.fx)))
    elif linked.cap is not None and raw > linked.cap * f.fx:
        price = FormulaLine((words, "at the cap "), (Figure(linked.cap, 4), *times_fx(f.fx)))
    else:
        sign = " − " if linked.spread < 0 else " + "  # a discount to the index reads as one: 5.03 − 0.30, not + -0.30
        price = FormulaLine((words,), (Figure(f.index_level, 4), sign, Figure(abs(linked.spread), 4), *times_fx(f.fx)))
    return FormulaLines(price, rent_line(f), financing_line(f))


KIND = Kind(
    name="index",
    field="index_linked",
    label="index-linked",
    board_words="follows the index",
    block=IndexLinked,
    columns=("index_level", "spread", "floor", "cap"),
    checks=checks,
    cost_columns=cost_columns,
    scale_price=scale_price,
    index_rent=index_rent,
    list_price=list_price,
    price_floor=price_floor,
    terms_row=terms_row,
    memo_price=memo_price,
    template_flow=True,
    formula_lines=formula_lines,
    price_words="the market index plus a spread, between a floor and a cap",
)
