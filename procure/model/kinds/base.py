"""What an offer kind declares: its block of `pricing`, its checks, its cost columns and its price scaling.

A kind is the way an offer is priced (docs/cost-model.md, "Offer kinds"). The rest of procure asks the kind
(`procure.model.kinds.kind_of`) instead of testing which pricing field an offer fills in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from procure.model.inputs import Assumptions, Offer, Pricing, Workload

HOURS_PER_MONTH = 730.0
HOURS_PER_YEAR = 8760.0

# Where a problem is (a field path) and what is wrong: io/workspace.py locates it in the offer's file.
Add = Callable[[tuple[Any, ...], str], None]
Columns = dict[str, np.ndarray]


def no_checks(offer: Offer, add: Add, has_index: bool) -> None:
    """A kind whose fields need nothing beyond their own types."""


def no_columns(offer: Offer, index_level: float) -> dict[str, float]:
    return {}


def no_rate(pricing: Pricing) -> float | None:
    return None


def committed_gpus(offer: Offer) -> float:
    """The GPUs paid every month of the term whether used or not: the offer's `gpus`, none when its billing says it is
    paid for the time it runs (`Offer.usage_billed`: billed by the hour, minute or second; its `gpus` is then what
    it provides, and the plan takes it pay-as-used), so that every surface reads one rule."""
    return 0.0 if offer.usage_billed else float(offer.gpus or 0)


class TermsRow(NamedTuple):
    """A kind's row of the report's offer table: its label, its terms in words, and whether they are a figure (set
    right-aligned, as a price is)."""

    label: str
    words: str
    numeric: bool = False


class Figure(NamedTuple):
    """A figure inside a printed formula: its value and the decimals it is written with (None: up to six significant
    digits). The kind gives the number, the report writes it (`render/formats.plain`, the templates' `g`)."""

    value: float | None
    digits: int | None = None


# A formula's text and figures in the order they are printed
Parts = tuple["str | Figure", ...]


class FormulaLine(NamedTuple):
    """One row of the report's formula box: `words`, what the row computes (empty: the expression says it), then
    `expr`, the expression with this offer's figures, which gives the figure printed beside it
    (tests/test_report_formulas.py evaluates it); `step`, the row's name where the kind names it (a per-task row)."""

    words: Parts
    expr: Parts
    step: str = ""


class FormulaLines(NamedTuple):
    """The rows of the report's formula box a kind writes: priced per GPU-hour, its list price, its rent and its
    financing; priced per task, `per_task`, its own charges per 1,000 successful tasks in place of all three."""

    list_price: FormulaLine | None = None
    rent: FormulaLine | None = None
    financing: FormulaLine | None = None
    per_task: FormulaLine | None = None


@dataclass(frozen=True)
class FormulaInputs:
    """What a kind's formula rows read of one offer (`OfferRecord.formula_lines`): its pricing and currency, the
    exchange rate into the workspace's currency, its stated price per GPU-hour (`Kind.rate`), the index it was
    priced at, the cost of capital, its term, its cost-model metrics, whether its escalators move its term's average
    price, and the workload."""

    pricing: Pricing
    currency: str
    fx: float
    rate: float | None
    index_level: float | None
    index_date: date | None
    cost_of_capital: float
    term_months: int
    metrics: dict[str, float | None]
    escalated: bool
    workload: Workload


def times_fx(fx: float) -> Parts:
    """' × fx' after an amount in the offer's currency; nothing when the offer is priced in the workspace's."""
    return (" × ", Figure(fx)) if fx != 1.0 else ()


def stated_price_line(f: FormulaInputs, words: str = "") -> FormulaLine:
    """The list price a kind states per GPU-hour (`Kind.rate`), in the workspace's currency."""
    words += f"price in {f.currency} × exchange rate: " if f.fx != 1.0 else ""
    return FormulaLine((words,) if words else (), (Figure(f.rate, 4), *times_fx(f.fx)))


def rent_line(f: FormulaInputs) -> FormulaLine:
    """rent = list x (1 - discount) x the term's average escalator (when the escalators move it)."""
    escalation: Parts = (" × ", Figure(f.metrics["escalation"], 6)) if f.escalated else ()
    words = f"list × (1 − discount) × the escalators averaged over the {f.term_months}-month term: "
    return FormulaLine(
        (words,) if f.escalated else (),
        (Figure(f.metrics["list_price"], 3), " × (1 − ", Figure(f.pricing.discount, 4), ")", *escalation),
    )


def financing_line(f: FormulaInputs) -> FormulaLine:
    """financing = prepaid share x rent x cost of capital x months / 24 (the prepayment's average balance)."""
    return FormulaLine(
        ("prepaid × rent × cost of capital × months / 24: ",),
        (
            Figure(f.pricing.prepay_fraction, 4),
            " × ",
            Figure(f.metrics["rent"], 3),
            " × ",
            Figure(f.cost_of_capital, 4),
            f" × {f.term_months} / 24",
        ),
    )


def gpu_hour_lines(f: FormulaInputs) -> FormulaLines:
    """A price per GPU-hour as stated, its rent and its financing."""
    return FormulaLines(stated_price_line(f), rent_line(f), financing_line(f))


@dataclass(frozen=True)
class Equipment:
    """Equipment an offer's kind has us buy and run: its capital at signing (offer's GPUs, workspace currency), its
    running cost per GPU-month (power and colocation) and its life, after which it is replaced."""

    capital: float
    running_per_gpu_month: float
    life_years: float

    @property
    def life_months(self) -> int:
        return max(1, round(self.life_years * 12))


class TaskCosts(NamedTuple):
    """A per-task kind's figures per successful task (`Kind.task_costs`; NaN where no offer is priced per task)."""

    rent: np.ndarray | float  # its charges for the work itself (per-token: the token charges)
    fees: np.ndarray | float
    ops: np.ndarray | float
    total: np.ndarray | float
    mtok: np.ndarray | float  # every charge per million delivered output tokens


NO_TASK_COSTS = TaskCosts(np.nan, np.nan, np.nan, np.nan, np.nan)

# The cost model's hooks (procure/model/costing.py), each vectorised: called with every offer's columns (one value
# per offer, or per draw and offer in the Monte Carlo) and applied where the offer is of the kind.
ListPrice = Callable[[Columns, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray | float]]
OwnRent = Callable[[Columns, np.ndarray, float], np.ndarray]
AvailabilityRule = Callable[[Columns, np.ndarray, "Assumptions"], np.ndarray]
PriceFloor = Callable[[Columns], np.ndarray]
TaskCostsRule = Callable[
    [
        Columns,
        "Workload",
        np.ndarray,
        np.ndarray,
        np.ndarray,
        np.ndarray,
        np.ndarray,
        "np.ndarray | float",
        "np.ndarray | float",
    ],
    TaskCosts,
]


def no_reservation(offer: Offer, noun: str) -> None:
    """A kind whose commitment is its GPUs: nothing reserved beyond what is owed."""
    return None


@dataclass(frozen=True)
class Kind:
    """One pricing kind, declared in one module of procure/model/kinds/.

    name: the cost model's `basis` column (and the workbook's "Pricing basis"); field: the key under `pricing`
    that selects it; block: the pydantic model of that key (None: a plain price per GPU-hour); label: how
    messages name it; rented: GPU-hours rented from a provider, which take a discount, a burst price, commit
    options and a billing unit; columns: the cost model's input columns it fills (`cost_columns` gives their
    values for one offer, NaN elsewhere); checks: its workspace problems; scale_price: its price times a
    factor (what-if); workbook_cost: its own cost-per-task formula in the workbook, None for the GPU-hour one;
    template_flow: the offer template writes its block on one line; committed: the GPUs owed every month of the
    term, used or not (the cash flow's commitment and the plan's committed part); billed_monthly: billed by the
    month whatever the service kind (a commitment, never pay-as-used by default); as_used_above_commitment: the plan
    takes the GPUs between the commitment and the supply as pay-as-used at the offer's own price;
    workbook_columns / workbook_values: cells of its own on the workbook's Offers sheet, shown when an offer of the
    kind is in the sheet: (key, header, None) a value that workbook_values gives for one offer and its metrics,
    (key, header, formula) a formula over the row's cells (formula(k): k(key) names a cell of the row);
    workbook_inputs: the cells its workbook_cost reads, (key, header, number format), on every row of the Offers sheet
    (every row's cost formula names them), which workbook_values fills for its own offers and leaves blank elsewhere;
    month_rule: what a served month of its cash flow pays (procure/analysis/cashflow.py): rent on the billed
    GPU-hours with fees, staff, software and SLA credits; the token charges on the month's tasks; or owned
    equipment's running costs, with its capital at signing and at each replacement; rate: the price per GPU-hour
    the offer states (None: the report derives it: index, owned); reserved_words: the GPUs reserved and
    the part of them owed, in words ('100 B200 GPUs reserved, 70 owed'), for a kind that reserves more than it owes
    (None: its GPUs are its commitment); per_task: the plan takes it as a pay-as-used source priced per task, never
    as GPUs: it has no GPU-hour (the per-token kind); equipment: the equipment an offer of the kind buys at an
    exchange rate (its capital, running cost and life: the cash flow's capital, replacements and running costs; None:
    nothing is bought);
    board_words: how the board memo's options table names its price (empty: its label); index_rent: for a kind
    priced off the index, its rent per GPU-hour at an index level (pricing, level, fx, shift:
    the price per GPU-hour moved by `shift` in the workspace's currency), in the term and at renewal (None: its price
    does not follow the index by contract); terms_row: the report's offer-table row for its price, a TermsRow given the
    offer's currency (None: no row); memo_price: the board
    memo's price line (pricing, the offer's currency, its cost-model metrics, the workspace's currency);
    prepay_financed: a prepayment to the vendor is financed at the cost of capital and at risk of the vendor's default
    (steps 2-3 of the cost model; False: the kind's hour is its own capital recovered, which already carries the cost
    of capital: owned); escalates: its price moves by the offer's escalators over the term (False: owned, whose hour
    is its capital and running costs); formula_lines: its rows of the report's formula box, words and the expression
    with the offer's figures (FormulaLines; default: the stated price per GPU-hour, its rent and financing), which
    the template prints as given. The workbook's formulas ask these: a per_task kind has no GPU-hour, so its cost
    per GPU-hour cells are blank; a kind whose prepay is not financed has none to finance.

    The cost model's own formulas for a kind (procure/model/costing.py, vectorised over the offers' columns, applied
    where an offer is of the kind; None: the GPU-hour formula): list_price: today's price per GPU-hour before the
    discount and its rent at a cap (col, fx, discount -> (price, rent at the cap or NaN); index-linked: clamp(index +
    spread, floor, cap)), the discount and escalators then applied as for a fixed price; own_rent: an hour that
    replaces the rent, before and after the discount and escalators (col, fx, cost of capital; owned: its capital
    recovered and its running costs); availability_rule: the expected availability before the point and drawn
    factors, in place of SLA x reliability factor (col, the reliability factor, assumptions; owned: the factor
    alone, self_operated_reliability squared where absent); price_floor: the lowest list price its contract allows,
    workspace currency, NaN for none (col; a price to tie below it is out of reach); task_costs: for a per_task kind,
    its figures per successful task (TaskCosts) from col, workload, fx, term, escalation, success rate, the fixed
    staff, the staff cost a year and the month's tasks, in place of every GPU-hour figure."""

    name: str
    field: str
    label: str
    block: type | None = None
    rented: bool = True
    columns: tuple[str, ...] = ()
    checks: Callable[[Offer, Add, bool], None] = no_checks
    cost_columns: Callable[[Offer, float], dict[str, float]] = no_columns
    scale_price: Callable[[Pricing, float, float | None, float], Pricing] | None = None
    workbook_cost: Callable[[Callable[[str], str], Callable[[str], str]], str] | None = None
    template_flow: bool = False
    price_words: str = ""
    committed: Callable[[Offer], float] = committed_gpus
    billed_monthly: bool = False
    as_used_above_commitment: bool = False
    workbook_columns: tuple[tuple[str, str, Callable[[Callable[[str], str]], str] | None], ...] = ()
    workbook_inputs: tuple[tuple[str, str, str], ...] = ()
    month_rule: Literal["rent", "tokens", "equipment"] = "rent"
    rate: Callable[[Pricing], float | None] = no_rate
    workbook_values: Callable[[Offer, dict[str, Any]], dict[str, Any]] | None = None
    reserved_words: Callable[[Offer, str], str | None] = no_reservation
    per_task: bool = False
    board_words: str = ""
    equipment: Callable[[Offer, float], Equipment] | None = None
    index_rent: Callable[[Pricing, float, float, float], float] | None = None
    terms_row: Callable[[Pricing, str], TermsRow | None] | None = None
    memo_price: Callable[[Pricing, str, dict[str, Any], str], str] | None = None
    prepay_financed: bool = True
    escalates: bool = True
    list_price: ListPrice | None = None
    own_rent: OwnRent | None = None
    availability_rule: AvailabilityRule | None = None
    price_floor: PriceFloor | None = None
    task_costs: TaskCostsRule | None = None
    formula_lines: Callable[[FormulaInputs], FormulaLines] = gpu_hour_lines

    def selected(self, pricing: Pricing) -> bool:
        """The offer states this kind's field."""
        return getattr(pricing, self.field, None) is not None
