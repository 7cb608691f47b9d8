"""Owning and self-operating (`pricing.owned`, with service.kind owned): the GPU-hour is the capital recovered over
the equipment's life at the cost of capital plus power and colocation (docs/cost-model.md, step 1, owned; the
capital recovery factor, as in any engineering-economics text, e.g. Park, Contemporary Engineering Economics,
ch. 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from pydantic import Field

from procure.model.fields import NonNegative, Number, Positive, Strict
from procure.model.kinds.base import (
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    Add,
    Columns,
    Equipment,
    Figure,
    FormulaInputs,
    FormulaLine,
    FormulaLines,
    Kind,
    Parts,
    TermsRow,
    times_fx,
)

if TYPE_CHECKING:
    from procure.model.inputs import Assumptions, Offer, Pricing

COLUMNS = ("capex_per_gpu", "life_years", "power_kw_per_gpu", "pue", "electricity_kwh", "colo_kw_month")


class OwnedCost(Strict):
    """Owning and self-operating: the capital and running costs per GPU."""

    capex_per_gpu: Positive = Field(description="all-in per GPU, host and network share included")
    life_years: Annotated[
        Positive, Field(le=50)
    ]  # a GPU cluster's depreciation life; 50 years is already far beyond any
    power_kw_per_gpu: Positive
    pue: Annotated[Number, Field(ge=1, le=3)]
    electricity_kwh: NonNegative
    colo_kw_month: NonNegative = Field(description="colocation per kW-month, electricity excluded")


def checks(offer: Offer, add: Add, has_index: bool) -> None:
    """Owned pricing goes with service.kind owned and only with it, and its term is the equipment's life."""
    owned = offer.pricing.owned
    if (owned is not None) != (offer.service.kind == "owned"):
        add(("service", "kind"), "pricing.owned goes with service.kind: owned, and only with it")
    if owned is not None and offer.term_months is not None and offer.term_months != round(owned.life_years * 12):
        add(
            ("term_months",),
            f"an owned cluster's term is its life: {round(owned.life_years * 12)} months (life_years x 12), "
            "or leave it out",
        )


def capital_recovery_factor(rate: float | np.ndarray, years: float | np.ndarray) -> np.ndarray:
    """CRF = r / (1 - (1 + r)^-n): the level annual payment that repays one unit over n years at r."""
    rate = np.asarray(rate, dtype=float)
    years = np.asarray(years, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        crf = rate / (1 - (1 + rate) ** -years)
    return np.where(rate == 0, 1 / years, crf)


def rent(col: Columns, fx: np.ndarray, cost_of_capital: float) -> np.ndarray:
    """An owned GPU's hour: capex x CRF / 8,760 + power x PUE x electricity + colocation x power / 730
    (capital is not free: the CRF carries the cost of capital)."""
    crf = capital_recovery_factor(cost_of_capital, col["life_years"])
    return (
        col["capex_per_gpu"] * fx * crf / HOURS_PER_YEAR
        + col["power_kw_per_gpu"] * col["pue"] * col["electricity_kwh"] * fx
        + col["colo_kw_month"] * fx * col["power_kw_per_gpu"] / HOURS_PER_MONTH
    )


def availability(col: Columns, factor: np.ndarray, assumptions: Assumptions) -> np.ndarray:
    """No SLA: the reliability factor alone, by default our host (hardware repair) and our operating jobs,
    self_operated_reliability each (rating.availability_layers)."""
    return np.where(np.isnan(factor), assumptions.self_operated_reliability**2, factor)


def cost_columns(offer: Offer, index_level: float) -> dict[str, float]:
    pricing = offer.pricing
    owned = pricing.owned
    assert owned is not None
    return {name: getattr(owned, name) for name in COLUMNS}


def equipment(offer: Offer, fx: float) -> Equipment:
    """capital = capex per GPU x GPUs; running per GPU-month = power x PUE x electricity x 730 + colocation x power;
    both times `fx` (the offer's currency into the workspace's)."""
    owned = offer.pricing.owned
    assert owned is not None
    running = owned.power_kw_per_gpu * owned.pue * owned.electricity_kwh * HOURS_PER_MONTH
    running += owned.colo_kw_month * owned.power_kw_per_gpu
    return Equipment(owned.capex_per_gpu * fx * (offer.gpus or 0), running * fx, owned.life_years)


def terms_row(pricing: Pricing, currency: str) -> TermsRow:
    """('Owned', '40,000 USD per GPU all-in, 5.0 years, 1.2 kW per GPU, PUE 1.3, 0.1 per kWh, colocation 150.00 per
    kW-month'): the block's figures as stated."""
    o = pricing.owned
    assert o is not None
    return TermsRow(
        "Owned",
        f"{o.capex_per_gpu:,.0f} {currency} per GPU all-in, {o.life_years} years, {o.power_kw_per_gpu} kW per GPU, "
        f"PUE {o.pue}, {o.electricity_kwh} per kWh, colocation {o.colo_kw_month:,.2f} per kW-month",
    )


def memo_price(pricing: Pricing, currency: str, metrics: dict[str, Any], ours: str) -> str:
    """'owned: 48,000 USD per GPU all-in, 1.61 USD per GPU-hour with power and space' (the hour in our currency)."""
    owned = pricing.owned
    assert owned is not None
    return (
        f"owned: {owned.capex_per_gpu:,.0f} {currency} per GPU all-in, {metrics['rent']:.2f} {ours} "
        "per GPU-hour with power and space"
    )


def scale_price(pricing: Pricing, factor: float, index_level: float | None, fx: float) -> Pricing:
    """The capital per GPU times `factor` (power and colocation stay)."""
    owned = pricing.owned
    assert owned is not None
    return pricing.model_copy(
        update={"owned": owned.model_copy(update={"capex_per_gpu": owned.capex_per_gpu * factor})}
    )


def formula_lines(f: FormulaInputs) -> FormulaLines:
    """The list price is the hour `rent` works out: capex x CRF / 8,760 + kW x PUE x electricity + colocation x kW /
    730 (x fx, the offer's amounts in its currency); the rent is that list price (no discount or escalator), and the
    financing is in the capital recovery."""
    o = f.pricing.owned
    assert o is not None
    crf = Figure(float(capital_recovery_factor(f.cost_of_capital, o.life_years)), 5)
    hour: Parts = (
        Figure(o.capex_per_gpu),
        " × ",
        crf,
        " / ",
        Figure(HOURS_PER_YEAR),
        " + ",
        Figure(o.power_kw_per_gpu),
        " × ",
        Figure(o.pue),
        " × ",
        Figure(o.electricity_kwh),
        " + ",
        Figure(o.colo_kw_month),
        " × ",
        Figure(o.power_kw_per_gpu),
        " / ",
        Figure(HOURS_PER_MONTH),
    )
    words = ("capex × CRF / 8,760 + kW × PUE × electricity + colocation × kW / 730, CRF ", crf, ": ")
    price = FormulaLine(words, ("(", *hour, ")", *times_fx(f.fx)) if f.fx != 1.0 else hour)
    return FormulaLines(
        price,
        FormulaLine((), (Figure(f.metrics["list_price"], 3),)),
        FormulaLine(("in the capital recovery: ",), ("0",)),
    )


KIND = Kind(
    name="owned",
    field="owned",
    label="owned",
    board_words="owned",
    block=OwnedCost,
    rented=False,
    columns=COLUMNS,
    checks=checks,
    cost_columns=cost_columns,
    scale_price=scale_price,
    month_rule="equipment",
    prepay_financed=False,
    formula_lines=formula_lines,
    escalates=False,
    equipment=equipment,
    own_rent=rent,
    availability_rule=availability,
    terms_row=terms_row,
    memo_price=memo_price,
    price_words="our own capital, power and colocation",
)
