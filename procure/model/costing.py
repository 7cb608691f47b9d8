"""The cost model: every offer to the expected full cost per successful task.

Vectorized over offers: one row per offer in a table of inputs, each formula step a numpy
expression over whole columns (no per-offer Python loop), so a market scan of thousands of offers
costs about as much as the arithmetic itself. Money is in the workspace currency throughout; the
steps are numbered as in the README's cost model.

Units: 730 hours a month, 8,760 a year; throughput in output tokens per second per GPU at the
workload's interactivity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from procure.model.inputs import OPERATING_JOBS, Assumptions, Workload
from procure.model.kinds import KINDS
from procure.model.kinds.base import HOURS_PER_MONTH, HOURS_PER_YEAR, NO_TASK_COSTS, TaskCosts

if TYPE_CHECKING:  # pandas is imported where costs are computed, not at start-up
    import pandas as pd

OWNER_WEIGHT_KEYS = ("provider", "shared", "customer")

BASES = tuple(kind.name for kind in KINDS)

# One row per offer. Amounts in the offer's currency unless the name says otherwise; NaN = absent.
INPUT_COLUMNS: tuple[str, ...] = (
    "basis",  # one of BASES: the offer kind's name
    "fx",  # workspace currency per unit of the offer's currency
    "gpu_hour",
    "discount",
    # each kind's own columns (procure/model/kinds/): index-linked index_level (workspace currency, latest level on
    # or before as-of), spread, floor, cap; per-token prices per million tokens (per_mtok_cached_input NaN: billed at
    # the input price); owned capital and running costs
    *(name for kind in KINDS for name in kind.columns),
    "gpus",
    "max_gpus",
    "term_months",
    "fees_once",
    "fees_monthly",
    "fees_gpu_hour",
    "fees_per_tb_month",  # sum of per_tb x tb_per_month
    "prepay_fraction",
    "software_gpu_hour",
    "throughput",  # output tok/s/GPU at the target; NaN when out of reach
    "sla_availability",  # NaN when there is no SLA (owned)
    "reliability_factor",
    "quality_pass_rate",
    "escalation",  # the price factor averaged over the term's months (escalators); NaN or absent: 1
) + tuple(f"owner_{job}" for job in OPERATING_JOBS)  # 0 provider, 1 shared, 2 customer (or those names)

OUTPUT_COLUMNS: tuple[str, ...] = (
    "list_price",
    "rent",
    "rent_today",
    "escalation",
    "rent_at_cap",
    "fees",
    "fee_once",
    "fee_monthly",
    "fee_gpu_hour",
    "fee_per_tb",
    "financing",
    "prepay_risk",
    "ops",
    "ops_fte",
    "software",
    "full",
    "throughput",
    "availability",
    "success_rate",
    "utilization",
    "capacity_per_gpu_hour",
    "gpus_needed",
    "billed_gpus",
    "fill",
    "successful_tasks_per_gpu_hour",
    "cost_per_task",
    "rent_per_task",
    "ops_per_task",
    "fees_per_task",
    "cost_per_mtok",
    "monthly_spend",
    "fixed_monthly",  # fees and staff that do not grow with the GPUs: once / term + monthly + per_tb + fixed staff
    # the rest of `full`, per GPU-hour: full x billed x 730 = variable x billed x 730 + fixed_monthly
    "variable_gpu_hour",
)
# The outputs of steps 7-11 (what a GPU-hour delivers and the GPUs the demand needs), which need no price: asked for
# alone (the gates' odds over every draw), cost_arrays forms nothing else.
DELIVERY_OUTPUTS = frozenset(OUTPUT_COLUMNS[OUTPUT_COLUMNS.index("throughput") : OUTPUT_COLUMNS.index("fill") + 1])


@dataclass(frozen=True)
class CostModel:
    """The workload and assumptions the formulas need."""

    workload: Workload
    assumptions: Assumptions
    staffing_fixed: np.ndarray = field(init=False)
    staffing_per_gpu: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        fixed = [self.assumptions.staffing(job).fte_fixed for job in OPERATING_JOBS]
        per_gpu = [self.assumptions.staffing(job).fte_per_1000_gpus / 1000 for job in OPERATING_JOBS]
        object.__setattr__(self, "staffing_fixed", np.array(fixed))
        object.__setattr__(self, "staffing_per_gpu", np.array(per_gpu))


OWNER_CODES = {"provider": 0, "shared": 1, "customer": 2}


def owner_codes(owners: np.ndarray) -> np.ndarray:
    """Owners as codes 0 provider, 1 shared, 2 customer (names are accepted and converted)."""
    if owners.dtype.kind in "iu":
        return owners
    return np.select([owners == "customer", owners == "shared"], [2, 1], 0)


def owner_weights(owners: np.ndarray, shared_weight: float) -> np.ndarray:
    """provider 0, shared `shared_weight`, customer 1 (shared never counts as provider-owned)."""
    return np.array([0.0, shared_weight, 1.0])[owner_codes(owners)]


def compute_costs(inputs: pd.DataFrame, model: CostModel) -> pd.DataFrame:
    """Apply the cost model to every row of `inputs` (INPUT_COLUMNS); returns OUTPUT_COLUMNS."""
    import pandas as pd

    out = finite(cost_arrays({name: inputs[name].to_numpy() for name in INPUT_COLUMNS}, model))
    return pd.DataFrame(out, index=inputs.index, columns=list(OUTPUT_COLUMNS))


def finite(outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A figure that cannot be computed (no throughput, zero success) is missing, never infinite."""
    return {key: np.where(np.isinf(value), np.nan, value) for key, value in outputs.items()}


# The point evaluation's expected factors on availability and utilization (the means of their drawn
# factors, procure.analysis.uncertainty): optional columns beside INPUT_COLUMNS, 1 where absent. A draw
# replaces them with its own factors (Variation), so the point is the cost at the draws' own means.
AVAILABILITY_POINT = "availability_point_factor"
UTILIZATION_POINT = "utilization_point_factor"


@dataclass(frozen=True)
class Variation:
    """Draws of the inputs that are not per-offer columns, broadcast against them (shape (draws, 1))."""

    availability_factor: np.ndarray | float = 1.0  # on the availability, which stays at most 1
    utilization: np.ndarray | float | None = None  # replaces the workload's
    fte_cost_year: np.ndarray | float | None = None  # replaces the assumption
    tasks_per_month: np.ndarray | float | None = None  # replaces the workload's demand (a drawn demand factor)


class Rent(NamedTuple):
    """Step 1: the rent per GPU-hour and the figures shown beside it."""

    list_price: np.ndarray  # today's price before the discount (a kind with its own rent: that rent)
    rent_today: np.ndarray  # after the discount, before escalators
    rent: np.ndarray  # the term's average: what is ranked
    rent_at_cap: np.ndarray | float  # from a kind's list price (index-linked with a cap), else NaN
    escalation: np.ndarray  # the price factor averaged over the term


def _term_escalation(col: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The escalators averaged over the term's months (cashflow.term_average_rent), 1 where absent:
    the rent ranked is the term's average, and a 3% rise in the second year is not free."""
    found = col.get("escalation")
    return np.ones(n) if found is None else np.where(np.isnan(found.astype(float)), 1.0, found.astype(float))


def _kind_hooks(basis: np.ndarray, hook: str) -> list[tuple[Any, np.ndarray]]:
    """(formula, mask of its offers) for each kind that declares the cost model's `hook` (a `Kind` field) and has an
    offer here, in registry order: a kind's own formula is applied only where it has offers (elsewhere it is NaN)."""
    found = [(getattr(kind, hook), basis == kind.name) for kind in KINDS if getattr(kind, hook) is not None]
    return [(formula, mask) for formula, mask in found if mask.any()]


def _rent(col: dict[str, np.ndarray], fx: np.ndarray, discount: np.ndarray, cost_of_capital: float) -> Rent:
    """Step 1, rent per GPU-hour: the list price (fixed, or the kind's own: `Kind.list_price`) less the discount,
    times the term's escalation; a kind with an hour of its own (`Kind.own_rent`: owned) has it in place of all three.
    """
    list_price = col["gpu_hour"] * fx
    rent_at_cap: np.ndarray | float = np.nan
    for own_list_price, mask in _kind_hooks(col["basis"], "list_price"):
        price, at_cap = own_list_price(col, fx, discount)
        list_price = np.where(mask, price, list_price)
        rent_at_cap = np.where(mask, at_cap, rent_at_cap)
    escalation = _term_escalation(col, len(col["basis"]))
    rent_today = list_price * (1 - discount)
    rent = rent_today * escalation
    for own_rent, mask in _kind_hooks(col["basis"], "own_rent"):
        own = own_rent(col, fx, cost_of_capital)
        list_price = np.where(mask, own, list_price)
        rent = np.where(mask, own, rent)
        rent_today = np.where(mask, own, rent_today)
    return Rent(list_price, rent_today, rent, rent_at_cap, escalation)


class Delivery(NamedTuple):
    """Steps 7-10: what one paid GPU-hour delivers."""

    throughput: np.ndarray  # output tok/s/GPU at the target interactivity
    availability: np.ndarray
    success_rate: np.ndarray
    utilization: np.ndarray


def _delivery(col: dict[str, np.ndarray], model: CostModel, varied: Variation) -> Delivery:
    """Steps 7-10, throughput, availability, success rate and utilization: a GPU-hour is an input, and
    these turn it into useful output.

    Expected availability = SLA x factor, the factor carrying every layer (evaluate.py builds it: the
    provider's rating, the jobs left to us, spot interruptions); a kind with its own rule
    (`Kind.availability_rule`; owned: the factor alone) has it in place of SLA x factor."""
    wl, a = model.workload, model.assumptions
    throughput = col["throughput"].astype(float)
    factor = col["reliability_factor"].astype(float)
    availability = col["sla_availability"] * factor
    for rule, mask in _kind_hooks(col["basis"], "availability_rule"):
        availability = np.where(mask, rule(col, factor, a), availability)
    availability = np.minimum(1.0, availability * col.get(AVAILABILITY_POINT, 1.0) * varied.availability_factor)
    success_rate = wl.success_rate * col["quality_pass_rate"]
    utilization = np.asarray(wl.utilization if varied.utilization is None else varied.utilization, dtype=float)
    utilization = np.minimum(1.0, utilization * col.get(UTILIZATION_POINT, 1.0))
    return Delivery(throughput, availability, success_rate, utilization)


class DemandFit(NamedTuple):
    """Step 11: how many GPUs the demand needs and how full the billed ones are."""

    capacity: np.ndarray  # successful tasks per GPU-hour at full use
    gpus_needed: np.ndarray
    billed: np.ndarray
    fill: np.ndarray


def _demand_fit(
    delivered: Delivery, output_tokens: int, demand: np.ndarray | float | None, gpus: np.ndarray, max_gpus: np.ndarray
) -> DemandFit:
    """Step 11, demand fit: capacity c = throughput x 3600 / output_tokens x availability x success x
    utilization; gpus_needed = demand / (c x 730); billed = min(max(needed, gpus), max_gpus); fill =
    needed / billed at most 1. Without a demand every committed GPU is taken as fully used."""
    capacity = (
        delivered.throughput
        * 3600
        / output_tokens
        * delivered.availability
        * delivered.success_rate
        * delivered.utilization
    )
    if demand is not None:
        gpus_needed = demand / (capacity * HOURS_PER_MONTH)
        billed = np.minimum(np.maximum(gpus_needed, gpus), max_gpus)
        fill = np.minimum(1.0, gpus_needed / billed)
    else:
        gpus_needed = np.full_like(capacity, np.nan)
        billed = np.broadcast_to(gpus, capacity.shape).astype(float)
        fill = np.ones_like(capacity)
    return DemandFit(capacity, gpus_needed, billed, fill)


class Fees(NamedTuple):
    """Step 2: the fees per GPU-hour, by kind."""

    once: np.ndarray
    monthly: np.ndarray
    gpu_hour: np.ndarray
    per_tb: np.ndarray
    total: np.ndarray


def _fees(col: dict[str, np.ndarray], fx: np.ndarray, term: np.ndarray, spread: np.ndarray) -> Fees:
    """Step 2, fees per GPU-hour: once / (G x term x 730) + monthly / (G x 730) + per GPU-hour + per_tb x
    tb_per_month / (G x 730), G the GPUs the fixed amounts are spread over (the billed ones)."""
    gpu_hours_month = spread * HOURS_PER_MONTH
    fee_once = col["fees_once"] * fx / (gpu_hours_month * term)
    fee_monthly = col["fees_monthly"] * fx / gpu_hours_month
    fee_gpu_hour = col["fees_gpu_hour"] * fx
    fee_per_tb = col["fees_per_tb_month"] * fx / gpu_hours_month
    return Fees(fee_once, fee_monthly, fee_gpu_hour, fee_per_tb, fee_once + fee_monthly + fee_gpu_hour + fee_per_tb)


def _financing(
    col: dict[str, np.ndarray], rent: np.ndarray, unfinanced: np.ndarray, term: np.ndarray, a: Assumptions
) -> tuple[np.ndarray, np.ndarray]:
    """Step 3, financing of the prepayment: prepay_fraction x rent x cost_of_capital x term / 24 (drawn
    down evenly, so half of it is outstanding on average), none where the kind's prepay is not financed
    (`unfinanced`, `Kind.prepay_financed`; owned: capital is already in the CRF).

    Beside it, the expected loss on unearned prepayment if the vendor fails: annual default rate x the
    average unearned balance (half the prepayment) x the term in years; zero by default."""
    financing = np.where(unfinanced, 0.0, col["prepay_fraction"] * rent * a.cost_of_capital * term / 24)
    prepay_risk = np.where(unfinanced, 0.0, col["prepay_fraction"] * rent * a.vendor_default_rate * term / 24)
    return financing, prepay_risk


class Staff(NamedTuple):
    """Step 4: the buyer's operating staff."""

    weights: np.ndarray  # per offer and job: 0 provider, shared_weight shared, 1 customer
    fte_fixed: np.ndarray  # the staff that does not grow with the GPUs
    fte_scaling: np.ndarray  # staff per GPU
    ops_fte: np.ndarray
    ops: np.ndarray  # per GPU-hour


def _ops(col: dict[str, np.ndarray], model: CostModel, spread: np.ndarray, fte_cost_year: np.ndarray | float) -> Staff:
    """Step 4, ops: for each job left (wholly or in part) to the buyer, w(owner) x (fte_fixed +
    fte_per_1000_gpus x G / 1000) x fte_cost_year / (G x 8,760): the operating work an offer leaves
    with the buyer is part of its cost."""
    n = len(col["basis"])
    owners = (
        np.column_stack([col[f"owner_{job}"] for job in OPERATING_JOBS]) if n else np.empty((0, len(OPERATING_JOBS)))
    )
    weights = owner_weights(owners, model.assumptions.shared_weight)
    fte_fixed = weights @ model.staffing_fixed
    fte_scaling = weights @ model.staffing_per_gpu
    ops_fte = fte_fixed + fte_scaling * spread
    ops = ops_fte * fte_cost_year / (spread * HOURS_PER_YEAR)
    return Staff(weights, fte_fixed, fte_scaling, ops_fte, ops)


def _software(col: dict[str, np.ndarray], fx: np.ndarray, weights: np.ndarray, software_gpu_hour: float) -> np.ndarray:
    """Step 5, software: serving software paid by whoever runs the serving stack, plus the offer's own."""
    serving_weight = weights[:, OPERATING_JOBS.index("serving_stack")] if len(col["basis"]) else np.empty(0)
    return serving_weight * software_gpu_hour + col["software_gpu_hour"] * fx


def _fixed_and_variable(
    col: dict[str, np.ndarray],
    fx: np.ndarray,
    term: np.ndarray,
    rent: np.ndarray,
    financing: np.ndarray,
    prepay_risk: np.ndarray,
    software: np.ndarray,
    fees: Fees,
    staff: Staff,
    fte_cost_year: np.ndarray | float,
) -> tuple[np.ndarray, np.ndarray]:
    """The full cost split by what grows with the GPUs and what does not, which a plan that sizes the
    commitment needs: fixed fees and the fixed core of the buyer's staff per month, and the rest per
    GPU-hour (full x billed x 730 = variable x billed x 730 + fixed_monthly)."""
    once_monthly = np.where(term > 0, col["fees_once"] / term, 0.0)
    fixed_monthly = (
        once_monthly + col["fees_monthly"] + col["fees_per_tb_month"]
    ) * fx + staff.fte_fixed * fte_cost_year / 12
    variable_gpu_hour = (
        rent + financing + prepay_risk + software + fees.gpu_hour + staff.fte_scaling * fte_cost_year / HOURS_PER_YEAR
    )
    return fixed_monthly, variable_gpu_hour


class GpuHourCost(NamedTuple):
    """Every figure of a GPU-hour offer, steps 1-12, for the outputs to pick from."""

    rent: Rent
    delivered: Delivery
    fit: DemandFit
    fees: Fees
    financing: np.ndarray
    prepay_risk: np.ndarray
    staff: Staff
    software: np.ndarray
    full: np.ndarray
    fixed_monthly: np.ndarray
    variable_gpu_hour: np.ndarray
    tasks_per_gpu_hour: np.ndarray
    cost_per_task: np.ndarray


def cost_arrays(
    col: dict[str, np.ndarray], model: CostModel, varied: Variation = Variation(), only: tuple[str, ...] | None = None
) -> dict[str, np.ndarray]:
    """The cost model on arrays: one value per offer (shape (n,)) or per draw and offer ((draws, n)).

    Text columns (basis, owners) are per offer; numeric columns and the Variation broadcast, so the
    same formulas serve the deterministic evaluation and the Monte Carlo. The steps run in the order
    their inputs exist: the demand fit (step 11) needs what a GPU-hour delivers (7-10), and the fees
    and staff (2 and 4) are spread over the GPUs it bills.
    """
    wl, a = model.workload, model.assumptions
    fte_cost_year = a.fte_cost_year if varied.fte_cost_year is None else varied.fte_cost_year
    demand = (
        wl.tasks_per_month if varied.tasks_per_month is None or wl.tasks_per_month is None else varied.tasks_per_month
    )
    basis = col["basis"]
    fx = col["fx"].astype(float)
    gpus = col["gpus"].astype(float)
    max_gpus = col["max_gpus"].astype(float)
    term = col["term_months"].astype(float)
    discount = col["discount"].astype(float)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        delivered = _delivery(col, model, varied)
        fit = _demand_fit(delivered, wl.output_tokens, demand, gpus, max_gpus)
        if only is not None and DELIVERY_OUTPUTS.issuperset(only):
            # what the gates' odds draw (availability, GPUs needed): no price is needed for them, and the prices are
            # most of the work on the draws' arrays
            per_task = np.zeros(len(basis), dtype=bool)
            for _, mask in _kind_hooks(basis, "task_costs"):
                per_task = per_task | mask
            return _outputs(per_task, delivered, fit, None, NO_TASK_COSTS, np.nan, only)
        rent = _rent(col, fx, discount, a.cost_of_capital)
        # Fixed fees and staff are spread over the billed GPUs (the committed ones unless the demand needs
        # more: spreading a fixed monthly fee over fewer GPUs than are billed would count it several times
        # over in the monthly spend).
        spread = np.where(np.isfinite(fit.billed), fit.billed, gpus)
        fees = _fees(col, fx, term, spread)
        unfinanced = np.isin(basis, [kind.name for kind in KINDS if not kind.prepay_financed])
        financing, prepay_risk = _financing(col, rent.rent, unfinanced, term, a)
        staff = _ops(col, model, spread, fte_cost_year)
        software = _software(col, fx, staff.weights, a.software_gpu_hour)
        # 6. full cost per paid GPU-hour
        full = rent.rent + fees.total + financing + prepay_risk + staff.ops + software
        fixed_monthly, variable_gpu_hour = _fixed_and_variable(
            col, fx, term, rent.rent, financing, prepay_risk, software, fees, staff, fte_cost_year
        )
        # 12. per successful task
        tasks_per_gpu_hour = fit.capacity * fit.fill
        cost_per_task = full / tasks_per_gpu_hour
        tasks = demand if demand is not None else np.nan
        # a kind priced per task (`Kind.task_costs`: per-token) has its own figures in place of the GPU-hour ones
        per_task = np.zeros(len(basis), dtype=bool)
        task_costs = NO_TASK_COSTS
        for own_costs, mask in _kind_hooks(basis, "task_costs"):
            found = own_costs(
                col, wl, fx, term, rent.escalation, delivered.success_rate, staff.fte_fixed, fte_cost_year, tasks
            )
            task_costs = (
                found if not per_task.any() else TaskCosts(*(np.where(mask, *pair) for pair in zip(found, task_costs)))
            )
            per_task = per_task | mask

    figures = GpuHourCost(
        rent,
        delivered,
        fit,
        fees,
        financing,
        prepay_risk,
        staff,
        software,
        full,
        fixed_monthly,
        variable_gpu_hour,
        tasks_per_gpu_hour,
        cost_per_task,
    )
    return _outputs(per_task, delivered, fit, figures, task_costs, tasks, only)


def _outputs(
    per_task: np.ndarray,
    d: Delivery,
    fit: DemandFit,
    g: GpuHourCost | None,
    costs: TaskCosts,
    tasks: np.ndarray | float,
    only: tuple[str, ...] | None,
) -> dict[str, np.ndarray]:
    """OUTPUT_COLUMNS, each offer's GPU-hour figure or, for a kind priced per task (`per_task`), its own one
    (GPU-hour figures of such an offer are NaN). Each output is formed only when asked for: the Monte Carlo
    needs one of them, on large arrays. Without the prices (`g` None) only DELIVERY_OUTPUTS can be asked for."""
    any_per_task = bool(per_task.any())

    def pick(gpu_value: np.ndarray | float, task_value: np.ndarray | float) -> np.ndarray:
        return (
            np.where(per_task, task_value, gpu_value)
            if any_per_task
            else np.asarray(gpu_value, dtype=float) + np.zeros(np.shape(per_task))
        )

    delivery = {
        "throughput": lambda: pick(d.throughput, np.nan),
        "availability": lambda: d.availability,
        "success_rate": lambda: d.success_rate,
        "utilization": lambda: pick(d.utilization, np.nan),
        "capacity_per_gpu_hour": lambda: pick(fit.capacity, np.nan),
        "gpus_needed": lambda: pick(fit.gpus_needed, np.nan),
        "billed_gpus": lambda: pick(fit.billed, np.nan),
        "fill": lambda: pick(fit.fill, np.nan),
    }
    if g is None:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return {key: make() for key, make in delivery.items() if only is None or key in only}
    r, fees, staff = g.rent, g.fees, g.staff
    outputs = {
        "list_price": lambda: pick(r.list_price, np.nan),
        "rent": lambda: pick(r.rent, np.nan),
        "rent_today": lambda: pick(r.rent_today, np.nan),
        "escalation": lambda: np.asarray(r.escalation, dtype=float) + np.zeros(np.shape(per_task)),
        "rent_at_cap": lambda: pick(r.rent_at_cap, np.nan),
        "fees": lambda: pick(fees.total, np.nan),
        "fee_once": lambda: pick(fees.once, np.nan),
        "fee_monthly": lambda: pick(fees.monthly, np.nan),
        "fee_gpu_hour": lambda: pick(fees.gpu_hour, np.nan),
        "fee_per_tb": lambda: pick(fees.per_tb, np.nan),
        "financing": lambda: pick(g.financing, np.nan),
        "prepay_risk": lambda: pick(g.prepay_risk, np.nan),
        "ops": lambda: pick(staff.ops, np.nan),
        "ops_fte": lambda: pick(staff.ops_fte, staff.fte_fixed),
        "software": lambda: pick(g.software, np.nan),
        "full": lambda: pick(g.full, np.nan),
        **delivery,
        "successful_tasks_per_gpu_hour": lambda: pick(g.tasks_per_gpu_hour, np.nan),
        "cost_per_task": lambda: pick(g.cost_per_task, costs.total),
        "rent_per_task": lambda: pick(r.rent / g.tasks_per_gpu_hour, costs.rent),
        "ops_per_task": lambda: pick(staff.ops / g.tasks_per_gpu_hour, costs.ops),
        "fees_per_task": lambda: pick(fees.total / g.tasks_per_gpu_hour, costs.fees),
        "cost_per_mtok": lambda: pick(
            g.full / (d.throughput * 3600 * d.availability * d.utilization * fit.fill) * 1e6, costs.mtok
        ),
        "monthly_spend": lambda: pick(g.full * fit.billed * HOURS_PER_MONTH, costs.total * tasks),
        "fixed_monthly": lambda: g.fixed_monthly + np.zeros(np.shape(per_task)),
        "variable_gpu_hour": lambda: pick(g.variable_gpu_hour, np.nan),
    }
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return {key: make() for key, make in outputs.items() if only is None or key in only}


def price_to_tie(
    inputs: dict[str, np.ndarray],
    costs: dict[str, np.ndarray],
    target_cost_per_task: float | np.ndarray,
    cost_of_capital: float,
    vendor_default_rate: float = 0.0,
) -> np.ndarray:
    """The list price per GPU-hour (workspace currency) at which each offer's cost per task equals the target (one
    for all offers, or one per offer).

    Solves full = target x successful tasks per GPU-hour for the rent, with financing moving with
    the rent (financing = prepay x rent x r x term / 24), then undoes the discount. Owned and
    per-token offers have no rental price to negotiate: NaN.
    """
    basis = inputs["basis"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        target_full = target_cost_per_task * costs["successful_tasks_per_gpu_hour"]
        others = costs["fees"] + costs["ops"] + costs["software"]
        financing_per_rent = (
            inputs["prepay_fraction"] * (cost_of_capital + vendor_default_rate) * inputs["term_months"] / 24
        )
        rent = (target_full - others) / (1 + financing_per_rent)
        found = inputs.get("escalation")
        escalation = 1.0 if found is None else np.where(np.isnan(found.astype(float)), 1.0, found.astype(float))
        price = rent / ((1 - inputs["discount"]) * escalation)  # today's list price whose term average ties
        # A price cannot go below its kind's floor (`Kind.price_floor`, index-linked): a tie under it is out of reach.
        below_floor = np.zeros(len(basis), dtype=bool)
        for price_floor, mask in _kind_hooks(basis, "price_floor"):
            floor = price_floor(inputs)
            below_floor = below_floor | (mask & ~np.isnan(floor) & (price < floor))
    rented = np.isin(basis, [kind.name for kind in KINDS if kind.rented])
    return np.where(rented & ~below_floor, price, np.nan)
