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
from typing import TYPE_CHECKING

import numpy as np

from procure.model.inputs import OPERATING_JOBS, Assumptions, Workload

if TYPE_CHECKING:  # pandas is imported where costs are computed, not at start-up
    import pandas as pd

HOURS_PER_MONTH = 730.0
HOURS_PER_YEAR = 8760.0
OWNER_WEIGHT_KEYS = ("provider", "shared", "customer")

BASES = ("gpu_hour", "index", "per_token", "owned")

# One row per offer. Amounts in the offer's currency unless the name says otherwise; NaN = absent.
INPUT_COLUMNS: tuple[str, ...] = (
    "basis",  # one of BASES
    "fx",  # workspace currency per unit of the offer's currency
    "gpu_hour",
    "discount",
    "index_level",  # workspace currency, latest level on or before as-of
    "spread",
    "floor",
    "cap",
    "capex_per_gpu",
    "life_years",
    "power_kw_per_gpu",
    "pue",
    "electricity_kwh",
    "colo_kw_month",
    "per_mtok_input",
    "per_mtok_output",
    "per_mtok_cached_input",  # NaN: cached input tokens are billed at the input price
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
    "variable_gpu_hour",  # the rest of `full`, per GPU-hour: full x billed x 730 = variable x billed x 730 + fixed_monthly
)


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


def capital_recovery_factor(rate: float | np.ndarray, years: float | np.ndarray) -> np.ndarray:
    """CRF = r / (1 - (1 + r)^-n): the level annual payment that repays one unit over n years at r."""
    rate = np.asarray(rate, dtype=float)
    years = np.asarray(years, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        crf = rate / (1 - (1 + rate) ** -years)
    return np.where(rate == 0, 1 / years, crf)


OWNER_CODES = {"provider": 0, "shared": 1, "customer": 2}


def owner_codes(owners: np.ndarray) -> np.ndarray:
    """Owners as codes 0 provider, 1 shared, 2 customer (names are accepted and converted)."""
    if owners.dtype.kind in "iu":
        return owners
    return np.select([owners == "customer", owners == "shared"], [2, 1], 0)


def index_linked_rent(index_level: float, spread: float, floor: float | None, cap: float | None, fx: float, discount: float) -> float:
    """One index-linked rent per GPU-hour: clamp(index + spread, floor, cap) x (1 - discount), the
    offer's amounts in its currency (x fx), the index in the workspace's (step 1, for one figure)."""
    price = index_level + spread * fx
    if floor is not None:
        price = max(price, floor * fx)
    if cap is not None:
        price = min(price, cap * fx)
    return price * (1 - discount)


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


@dataclass(frozen=True)
class Variation:
    """Draws of the inputs that are not per-offer columns, broadcast against them (shape (draws, 1))."""

    availability_factor: np.ndarray | float = 1.0  # on the availability, which stays at most 1
    utilization: np.ndarray | float | None = None  # replaces the workload's
    fte_cost_year: np.ndarray | float | None = None  # replaces the assumption
    tasks_per_month: np.ndarray | float | None = None  # replaces the workload's demand (a drawn demand factor)


def cost_arrays(col: dict[str, np.ndarray], model: CostModel, varied: Variation = Variation(), only: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The cost model on arrays: one value per offer (shape (n,)) or per draw and offer ((draws, n)).

    Text columns (basis, owners) are per offer; numeric columns and the Variation broadcast, so the
    same formulas serve the deterministic evaluation and the Monte Carlo.
    """
    wl, a = model.workload, model.assumptions
    fte_cost_year = a.fte_cost_year if varied.fte_cost_year is None else varied.fte_cost_year
    demand = wl.tasks_per_month if varied.tasks_per_month is None or wl.tasks_per_month is None else varied.tasks_per_month
    basis = col["basis"]
    fx = col["fx"].astype(float)
    is_index = basis == "index"
    is_owned = basis == "owned"
    is_token = basis == "per_token"
    gpus = col["gpus"].astype(float)
    max_gpus = col["max_gpus"].astype(float)
    term = col["term_months"].astype(float)
    discount = col["discount"].astype(float)
    n = len(basis)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # 1. rent per GPU-hour (a price basis that no offer uses is skipped: it would be all NaN)
        list_price = col["gpu_hour"] * fx
        rent_at_cap: np.ndarray | float = np.nan
        if is_index.any():
            floor = np.where(np.isnan(col["floor"]), -np.inf, col["floor"] * fx)
            cap = np.where(np.isnan(col["cap"]), np.inf, col["cap"] * fx)
            index_price = np.clip(col["index_level"] + col["spread"] * fx, floor, cap)
            list_price = np.where(is_index, index_price, list_price)
            rent_at_cap = np.where(is_index & np.isfinite(cap), cap * (1 - discount), np.nan)
        # The rent ranked is the term's average: today's rent times the escalators averaged over the
        # term's months (cashflow.term_average_rent); a 3% rise in the second year is not free.
        found = col.get("escalation")
        escalation = np.ones(n) if found is None else np.where(np.isnan(found.astype(float)), 1.0, found.astype(float))
        rent_today = list_price * (1 - discount)
        rent = rent_today * escalation
        if is_owned.any():
            crf = capital_recovery_factor(a.cost_of_capital, col["life_years"])
            owned_rent = (
                col["capex_per_gpu"] * fx * crf / HOURS_PER_YEAR
                + col["power_kw_per_gpu"] * col["pue"] * col["electricity_kwh"] * fx
                + col["colo_kw_month"] * fx * col["power_kw_per_gpu"] / HOURS_PER_MONTH
            )
            list_price = np.where(is_owned, owned_rent, list_price)
            rent = np.where(is_owned, owned_rent, rent)
            rent_today = np.where(is_owned, owned_rent, rent_today)

        # 7-10. throughput, availability, success rate, utilization
        throughput = col["throughput"].astype(float)
        # Expected availability = SLA x factor, the factor carrying every layer (evaluate.py builds it:
        # the provider's rating, the jobs left to us, spot interruptions); owned: the factor alone, by default our
        # host (hardware repair) and our operating jobs, self_operated_reliability each (rating.availability_layers).
        factor = col["reliability_factor"].astype(float)
        availability = col["sla_availability"] * factor
        availability = np.where(is_owned, np.where(np.isnan(factor), a.self_operated_reliability**2, factor), availability)
        availability = np.minimum(1.0, availability * varied.availability_factor)
        success_rate = wl.success_rate * col["quality_pass_rate"]
        utilization = np.minimum(1.0, np.asarray(wl.utilization if varied.utilization is None else varied.utilization, dtype=float))

        # 11. demand fit
        capacity = throughput * 3600 / wl.output_tokens * availability * success_rate * utilization
        if demand is not None:
            gpus_needed = demand / (capacity * HOURS_PER_MONTH)
            billed = np.minimum(np.maximum(gpus_needed, gpus), max_gpus)
            fill = np.minimum(1.0, gpus_needed / billed)
        else:
            gpus_needed = np.full_like(capacity, np.nan)
            billed = np.broadcast_to(gpus, capacity.shape).astype(float)
            fill = np.ones_like(capacity)

        # 2. fees per GPU-hour, fixed amounts spread over the billed GPUs (the committed ones unless the
        # demand needs more: spreading a fixed monthly fee over fewer GPUs than are billed would count
        # it several times over in the monthly spend)
        spread = np.where(np.isfinite(billed), billed, gpus)
        gpu_hours_month = spread * HOURS_PER_MONTH
        fee_once = col["fees_once"] * fx / (gpu_hours_month * term)
        fee_monthly = col["fees_monthly"] * fx / gpu_hours_month
        fee_gpu_hour = col["fees_gpu_hour"] * fx
        fee_per_tb = col["fees_per_tb_month"] * fx / gpu_hours_month
        fees = fee_once + fee_monthly + fee_gpu_hour + fee_per_tb

        # 3. financing of the prepayment (owned: capital is already in the CRF)
        financing = np.where(is_owned, 0.0, col["prepay_fraction"] * rent * a.cost_of_capital * term / 24)
        # 3b. the expected loss on unearned prepayment if the vendor fails: annual default rate x the
        # average unearned balance (half the prepayment) x the term in years; zero by default
        prepay_risk = np.where(is_owned, 0.0, col["prepay_fraction"] * rent * a.vendor_default_rate * term / 24)

        # 4. the buyer's operating staff, by who owns each job
        owners = np.column_stack([col[f"owner_{job}"] for job in OPERATING_JOBS]) if n else np.empty((0, len(OPERATING_JOBS)))
        weights = owner_weights(owners, a.shared_weight)
        fte_fixed = weights @ model.staffing_fixed
        fte_scaling = weights @ model.staffing_per_gpu
        ops_fte = fte_fixed + fte_scaling * spread
        ops = ops_fte * fte_cost_year / (spread * HOURS_PER_YEAR)

        # 5. software: serving software for whoever runs the serving stack, plus the offer's own
        serving_weight = weights[:, OPERATING_JOBS.index("serving_stack")] if n else np.empty(0)
        software = serving_weight * a.software_gpu_hour + col["software_gpu_hour"] * fx

        # 6. full cost per paid GPU-hour
        full = rent + fees + financing + prepay_risk + ops + software
        # The same money split by what grows with the GPUs and what does not (what a plan that sizes
        # the commitment needs): fixed fees and the fixed core of the buyer's staff, per month.
        once_monthly = np.where(term > 0, col["fees_once"] / term, 0.0)
        fixed_monthly = (once_monthly + col["fees_monthly"] + col["fees_per_tb_month"]) * fx + fte_fixed * fte_cost_year / 12
        variable_gpu_hour = rent + financing + prepay_risk + software + fee_gpu_hour + fte_scaling * fte_cost_year / HOURS_PER_YEAR

        # 12. per successful task
        tasks_per_gpu_hour = capacity * fill
        cost_per_task = full / tasks_per_gpu_hour

        # Per-token offers: tokens billed per task, divided by the share of tasks that succeed; fees
        # and the fixed staff of the jobs left to the buyer spread over the month's tasks.
        tasks = demand if demand is not None else np.nan
        token_rent = token_fees = token_ops = token_total = token_mtok = np.nan
        if is_token.any():
            # s = workload.cached_input_share of the input tokens is served from the provider's prompt
            # cache at pricing.per_mtok.cached_input (absent: the input price).
            s = wl.cached_input_share
            cached = col.get("per_mtok_cached_input")
            cached = col["per_mtok_input"] if cached is None else np.where(np.isnan(cached.astype(float)), col["per_mtok_input"], cached)
            input_price = (1 - s) * col["per_mtok_input"] + s * cached
            token_cost = (wl.input_tokens * input_price + wl.output_tokens * col["per_mtok_output"]) * fx / 1e6 * escalation
            token_rent = token_cost / success_rate
            month_term = np.where(term > 0, term, np.nan)
            token_fees = (col["fees_once"] / month_term + col["fees_monthly"] + col["fees_per_tb_month"]) * fx / tasks
            token_ops = fte_fixed * fte_cost_year / 12 / tasks
            token_fees = np.where(np.isfinite(token_fees), token_fees, 0.0)
            token_ops = np.where(np.isfinite(token_ops), token_ops, 0.0)
            token_total = token_rent + token_fees + token_ops
            # Per million delivered output tokens, all charges included (input tokens, fees, staff), so that
            # per-token offers compare with GPU-hour ones, whose figure carries prefill and overheads too.
            token_mtok = token_total * success_rate * 1e6 / wl.output_tokens

    any_token = bool(is_token.any())

    def pick(gpu_value: np.ndarray | float, token_value: np.ndarray | float) -> np.ndarray:
        return np.where(is_token, token_value, gpu_value) if any_token else np.asarray(gpu_value, dtype=float) + np.zeros(np.shape(is_token))

    outputs = {
        "list_price": lambda: pick(list_price, np.nan),
        "rent": lambda: pick(rent, np.nan),
        "rent_today": lambda: pick(rent_today, np.nan),
        "escalation": lambda: np.asarray(escalation, dtype=float) + np.zeros(np.shape(is_token)),
        "rent_at_cap": lambda: pick(rent_at_cap, np.nan),
        "fees": lambda: pick(fees, np.nan),
        "fee_once": lambda: pick(fee_once, np.nan),
        "fee_monthly": lambda: pick(fee_monthly, np.nan),
        "fee_gpu_hour": lambda: pick(fee_gpu_hour, np.nan),
        "fee_per_tb": lambda: pick(fee_per_tb, np.nan),
        "financing": lambda: pick(financing, np.nan),
        "prepay_risk": lambda: pick(prepay_risk, np.nan),
        "ops": lambda: pick(ops, np.nan),
        "ops_fte": lambda: pick(ops_fte, fte_fixed),
        "software": lambda: pick(software, np.nan),
        "full": lambda: pick(full, np.nan),
        "throughput": lambda: pick(throughput, np.nan),
        "availability": lambda: availability,
        "success_rate": lambda: success_rate,
        "utilization": lambda: pick(utilization, np.nan),
        "capacity_per_gpu_hour": lambda: pick(capacity, np.nan),
        "gpus_needed": lambda: pick(gpus_needed, np.nan),
        "billed_gpus": lambda: pick(billed, np.nan),
        "fill": lambda: pick(fill, np.nan),
        "successful_tasks_per_gpu_hour": lambda: pick(tasks_per_gpu_hour, np.nan),
        "cost_per_task": lambda: pick(cost_per_task, token_total),
        "rent_per_task": lambda: pick(rent / tasks_per_gpu_hour, token_rent),
        "ops_per_task": lambda: pick(ops / tasks_per_gpu_hour, token_ops),
        "fees_per_task": lambda: pick(fees / tasks_per_gpu_hour, token_fees),
        "cost_per_mtok": lambda: pick(full / (throughput * 3600 * availability * utilization * fill) * 1e6, token_mtok),
        "monthly_spend": lambda: pick(full * billed * HOURS_PER_MONTH, token_total * tasks),
        "fixed_monthly": lambda: fixed_monthly + np.zeros(np.shape(is_token)),
        "variable_gpu_hour": lambda: pick(variable_gpu_hour, np.nan),
    }
    # Each output is formed only when asked for: the Monte Carlo needs one of them, on large arrays.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return {key: make() for key, make in outputs.items() if only is None or key in only}


def price_to_tie(inputs: dict[str, np.ndarray], costs: dict[str, np.ndarray], target_cost_per_task: float, cost_of_capital: float, vendor_default_rate: float = 0.0) -> np.ndarray:
    """The list price per GPU-hour (workspace currency) at which each offer's cost per task equals the target.

    Solves full = target x successful tasks per GPU-hour for the rent, with financing moving with
    the rent (financing = prepay x rent x r x term / 24), then undoes the discount. Owned and
    per-token offers have no rental price to negotiate: NaN.
    """
    basis = inputs["basis"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        target_full = target_cost_per_task * costs["successful_tasks_per_gpu_hour"]
        others = costs["fees"] + costs["ops"] + costs["software"]
        financing_per_rent = inputs["prepay_fraction"] * (cost_of_capital + vendor_default_rate) * inputs["term_months"] / 24
        rent = (target_full - others) / (1 + financing_per_rent)
        found = inputs.get("escalation")
        escalation = 1.0 if found is None else np.where(np.isnan(found.astype(float)), 1.0, found.astype(float))
        price = rent / ((1 - inputs["discount"]) * escalation)  # today's list price whose term average ties
        # An index-linked price cannot go below its floor: a tie under the floor is out of reach.
        floor = inputs["floor"] * inputs["fx"]
        below_floor = (basis == "index") & ~np.isnan(floor) & (price < floor)
    return np.where(((basis == "gpu_hour") | (basis == "index")) & ~below_floor, price, np.nan)
