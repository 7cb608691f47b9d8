"""The procurement plan: how much to commit, with whom, for how long, under uncertain demand.

A mixed-integer linear program over demand scenarios (sample-average approximation): commitments in
whole nodes per offer, volume/term option and term block (integers), plus pay-as-used sources (an
offer's burst capacity, pure on-demand offers, per-token offers within their rate limits), each
scenario-month one continuous allocation per pay-as-used source. The objective is the expected
present-value cost, plus `plan.cvar_weight` x CVaR of monthly spend in the Rockafellar-Uryasev
linear form (Rockafellar and Uryasev, 2000); `plan.cvar_limit` bounds that CVaR. Solved by SciPy's
`milp` (HiGHS), with the time limit and optimality gap stated in the result.

Every cost figure comes from the Evaluation's cost model: an offer's fixed monthly fees and staff
(`fixed_monthly`) and its cost per GPU-hour that grows with the GPUs (`variable_gpu_hour`);
commitment options and burst prices are priced by the same model on a copy of the offer's inputs.
The reported figures come from dispatching each scenario-month as a buyer would: committed capacity
first, then the cheapest pay-as-used source with room.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from procure.model.units import PerThousand

from procure.model.costing import HOURS_PER_MONTH, cost_arrays
from procure.model.demand import Scenarios, scenarios as demand_scenarios
from procure.errors import InputError, Problem
from procure.analysis.cashflow import UNSERVED_DEFAULT_MULTIPLE
from procure.analysis.evaluate import CostInputs, Evaluation, OfferRecord, evaluate_with_inputs
from procure.model.inputs import Burst, Offer, PlanConfig
from procure.analysis.scenarios import claim_low_end
from procure.io.workspace import Workspace

# Node counts tried per term block for a single offer (beyond it, evenly spaced counts: memory stays bounded).
MAX_GRID = 257
GRID_CELLS = 4_000_000  # scenario-months x node counts evaluated at once
SOLVER = "HiGHS branch-and-cut through scipy.optimize.milp"
# HiGHS settings measured on the example and benchmarks/bench_plan.py (docs/plan.md, "Speed"): the model has few
# integers (node counts and offer switches) and a large continuous dispatch; HiGHS's presolve and its sub-MIP
# heuristics (RINS, RENS) cost most of the time there and neither changes the plan found, so both are off.
# Branch-and-cut, its cuts and the optimality gap are untouched: the result is as proven as before.
FRONTIER_LEVELS = 12  # demand levels a month the frontier's solves start from (the plan itself uses plan.levels)
# Each of the frontier's solves stops at plan.mip_gap (proven, kept in the solve cache like the plan's) or after this
# many branch-and-bound nodes: a count of work, not of seconds, so the same workspace gives the same frontier on any
# machine (a point whose limit the plan found does not keep on every path is left out). plan.time_limit_s stays the
# backstop: a solve stopped by it is machine-dependent and its point is left out too.
FRONTIER_NODES = 500
# The frontier's weights on CVaR (expected cost + w x CVaR, both in money a month): the least-CVaR plan at FRONTIER_SAFEST,
# the points between at weights spread geometrically over FRONTIER_WEIGHTS (on the example the frontier's slope, extra
# expected cost per unit of CVaR saved, runs from about 0.24 near the risk-neutral plan to 2.3 near the least-CVaR one).
FRONTIER_SAFEST = 1000.0
FRONTIER_WEIGHTS = (0.3, 3.0)
HIGHS_OPTIONS: dict[str, object] = {"presolve": False, "mip_heuristic_run_rins": False, "mip_heuristic_run_rens": False}
BAND_TOLERANCE = 1e-3  # demand bands are refined until the banded cost of the chosen plan is within 0.1% of its cost on every scenario
CHECK_TOLERANCE = 1e-6  # the shortlist check looks for a plan cheaper by more than this share (or plan.mip_gap, if larger)
MAX_ROUNDS = 8  # solves of one plan while bands and the CVaR tail are refined


# --- the result ---------------------------------------------------------------------------------


class PlanLine(BaseModel):
    offer: str
    vendor: str
    role: Literal["commit", "pay_as_used"]
    gpus: int | None = Field(description="commit: GPUs committed (whole nodes); pay_as_used: the most GPUs used in any scenario-month")
    term_months: int | None
    price: float | None = Field(description="commit and burst: per GPU-hour (workspace currency); per-token: per successful task")
    price_unit: Literal["gpu_hour", "task"]
    start_month: int | None = Field(None, description="commit: first month of the commitment in the plan")
    end_month: int | None = Field(None, description="commit: last month within the horizon")
    option: str | None = Field(None, description="commit: 'base' (the offer's own terms) or the commit option used")
    expected_tasks_share: float = Field(description="share of the expected served tasks")
    term_end_month: int | None = Field(None, description="commit: last month of the whole term (past the horizon when the term runs beyond it: those months are costed)")


class ScenarioRow(PerThousand):
    name: str
    probability: float
    demand_per_month: float = Field(description="average tasks per month")
    cost_per_task: float | None
    unused_share: float
    pay_as_used_share: float
    max_monthly_spend: float
    unserved_share: float = Field(0.0, description="share of the demand left unserved (priced at the plan's unserved penalty)")


class SingleBest(PerThousand):
    offer: str | None
    expected_cost_per_task: float | None
    plan: list[PlanLine] = Field(default_factory=list)


class FrontierPoint(PerThousand):
    cvar_limit: float | None
    expected_cost_per_task: float
    cvar: float
    p90_monthly_spend: float


class SolverInfo(BaseModel):
    method: str = SOLVER
    time_limit_s: float
    mip_gap: float = Field(description="the relative gap at which the solver may stop")
    status: str
    gap: float | None = Field(description="the gap reached (0: proven optimal)")
    bound_gap: float | None = Field(None, description="with a shortlist of offers: the distance from the linear relaxation's bound over every offer")
    shortlist_check: str | None = Field(None, description="with a shortlist of offers: what the whole program over every offer, with the shortlist's plan as a cutoff, proved (null: every usable offer was in the program)")
    variables: int
    constraints: int
    integers: int
    nonzeros: int


class DemandInfo(BaseModel):
    months: int
    start: float
    growth: float
    volatility: float | None
    scenarios: int
    seed: int | None
    sampled: bool


class PlanCase(PerThousand):
    """The plan's fixed portfolio under one demand case: committed capacity is paid whatever the demand,
    pay-as-used sources cover the rest (the same dispatch as the plan's own figures)."""

    name: str
    demand_factor: float = Field(description="factor on every demand path (1: the paths as planned)")
    probability: float = Field(1.0, description="share of the scenarios the case averages over (a third, the worst 10%, or all)")
    demand_per_month: float = Field(description="expected tasks a month")
    cost_per_task: float | None = Field(description="present value of spend over present value of tasks served")
    monthly_spend: float = Field(description="expected spend a month, averaged over the horizon")
    total_spend: float = Field(description="expected spend over the horizon, undiscounted")
    unused_commitment: float = Field(description="expected money paid for committed capacity left idle over the horizon, undiscounted")
    unused_share: float
    pay_as_used_spend: float = Field(description="expected pay-as-used spend over the horizon, undiscounted")
    pay_as_used_share: float = Field(description="share of the served tasks served pay-as-used")
    unserved_share: float = Field(description="share of the demand no source in the plan can serve")


class VendorStress(BaseModel):
    """What losing one committed vendor costs the plan: its commitments and its pay-as-used capacity gone,
    the rest of the plan's pay-as-used sources serving what they can."""

    vendor: str
    offers: list[str]
    first_month: int = Field(description="the first month of its first commitment in the plan")
    extra_spend: float = Field(description="expected extra spend over the horizon, undiscounted")
    extra_first_month: float = Field(description="expected extra spend in its first committed month: the cost of a month's late delivery")
    unserved_share: float = Field(description="share of the demand left unserved without it (not priced unless plan.unserved_penalty_per_task)")


class PlanStress(BaseModel):
    cases: list[PlanCase] = Field(description="demand -50%, -30%, as planned, +30%, market prices +20%, then the low, base and high thirds (or each explicit path) and the worst 10%")
    vendors: list[VendorStress]
    availability_point: float = Field(description="expected extra spend over the horizon if every GPU-hour serves one point fewer tasks (availability one point lower)")
    claims_low_end: float | None = Field(None, description="expected extra spend over the horizon with vendor-claimed throughput at the low end of its range; null: no offer in the plan relies on a claim")
    claims_factor: float = Field(1.0, description="the low end of the vendor-claim throughput factor (uncertainty.throughput.vendor_claim)")
    pay_as_used_gpu_hours: list[float] = Field(description="expected pay-as-used GPU-hours billed by the GPU-hour, by month")
    pay_as_used_gpu_hour_rent: list[float] = Field(description="expected rent for them at the price billed, by month")
    pay_as_used_task_rent: float = Field(description="expected rent for per-token sources over the horizon at the price billed, undiscounted")


class Bridge(BaseModel):
    """The months before one offer of the plan is delivered: what serves them and what they cost."""

    offer: str
    vendor: str
    delivery_month: int = Field(description="the first month with its capacity (1 = the first month after as-of)")
    served_by: list[str] = Field(description="the plan's offers that serve those months (empty: none, the demand is priced unserved)")
    cost: float = Field(description="expected spend over those months, unserved tasks at the plan's unserved price, undiscounted (in the plan's figures)")
    unserved_share: float = Field(description="share of those months' demand left unserved")


class PlanResult(PerThousand):
    as_of: date
    currency: str
    plan: list[PlanLine]
    expected_cost_per_task: float | None
    p90_monthly_spend: float
    cvar: float
    cvar_alpha: float
    expected_unused_share: float
    pay_as_used_share: float
    expected_monthly_spend: float
    single_best: SingleBest
    saving_per_task: float | None = Field(description="single best minus plan, per task")
    saving_share: float | None
    scenarios: list[ScenarioRow]
    frontier: list[FrontierPoint] | None = None
    demand: DemandInfo
    policy: PlanConfig
    solver: SolverInfo
    candidates: list[str] = Field(description="offers the plan could use")
    excluded: dict[str, str] = Field(description="offers left out, with the reason")
    notes: list[str]
    single_offers: dict[str, float | None] = Field(default_factory=dict, description="each usable offer alone over the same scenarios: expected cost per task (null: it cannot serve every scenario alone)")
    stress: PlanStress | None = Field(None, description="the plan's fixed portfolio under shifted demand, without each committed vendor, at lower availability")
    headline: str | None = Field(None, description="what the buyer must know first (no offer can follow demand; much demand unserved), else null")
    unserved_share: float = Field(0.0, description="expected share of the demand left unserved")
    unserved_penalty_per_task: float | None = Field(None, description="the price of a task left unserved the plan used (workspace currency)")
    unserved_penalty_basis: str = Field("", description="where that price comes from: plan.unserved_penalty_per_task, or the stated default")
    band_gap: float = Field(0.0, description="the chosen plan's cost on every scenario over its cost on the demand bands the solver saw, minus 1")
    bands: int = Field(0, description="demand bands (scenario groups by month) the last solve saw")
    beyond_horizon_cost: float = Field(0.0, description="expected money committed for term months past the horizon, undiscounted, counted in the cost")
    delivery: dict[str, int] = Field(default_factory=dict, description="each candidate's first month with capacity (1 = the first month after as-of)")
    bridge: list[str] = Field(default_factory=list, description="for each offer in the plan delivered after month 1: what serves the months before it, and their cost")
    bridges: list[Bridge] = Field(default_factory=list, description="the same, as figures: each offer in the plan delivered after month 1")

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


# --- candidates ---------------------------------------------------------------------------------


@dataclass
class Commit:
    """One way to commit to an offer: its own terms or a commit option."""

    offer: int  # candidate index
    option: str
    min_nodes: int
    max_nodes: int
    node_gpus: int
    term_months: int
    price: float  # list price per GPU-hour, workspace currency
    cost_node_month: float  # variable cost of one node for one month
    tasks_node_month: float  # successful tasks one node delivers in a month at full use


@dataclass
class Source:
    """A pay-as-used source: burst capacity, a pure on-demand offer, or a per-token offer."""

    offer: int
    price_per_task: float
    cap_month: float  # tasks per month (inf: no stated limit)
    price: float
    price_unit: Literal["gpu_hour", "task"]
    tasks_per_gpu_month: float | None  # to report GPUs used; None for per-token
    term_months: int = 1  # the offer's minimum term: a source with fixed fees is switched on for blocks of it
    spot: bool = False  # spot or preemptible capacity
    share_limit: float = 1.0  # the most of each month's demand it may serve (spot: plan.max_spot_share, all spot sources together)


@dataclass
class Candidate:
    id: str
    vendor: str
    fixed_monthly: float
    commits: list[Commit] = field(default_factory=list)
    source: Source | None = None
    start: int = 0  # first month (0-based) with capacity: the delivery month
    first_share: float = 1.0  # share of that month after the delivery day
    cost_per_task: float | None = None  # the snapshot's full cost per successful task (for the default unserved price)

    def available(self, months: int) -> np.ndarray:
        """Share of each month the offer's capacity exists: 0 before delivery, prorated in the delivery month."""
        out = np.zeros(months)
        if self.start < months:
            out[self.start] = self.first_share
            out[self.start + 1 :] = 1.0
        return out


@dataclass
class Unit:
    """A commitment variable: one commit of one candidate over one term block of months."""

    commit: Commit
    first: int  # month index, 0-based
    last: int  # inclusive, within the horizon
    end: int | None = None  # the term's last month (inclusive), past the horizon when the term runs beyond it

    @property
    def term_end(self) -> int:
        return self.last if self.end is None else self.end

    @property
    def beyond(self) -> int:
        """Months of the term past the horizon's last month (`last` when the term runs past it)."""
        return self.term_end - self.last


def eligible(record: OfferRecord) -> tuple[bool, str]:
    """Acceptable offers, and offers that fail only the capacity gate (too small alone, usable in a portfolio)."""
    failing = [g for g in record.gates if not g.passed]
    # Spot capacity serves only as pay-as-used burst (candidates gives it a source, never a commitment);
    # its interruptions are priced in its capacity, so the availability gate does not bar it.
    burst_ok = getattr(record, "role", "primary") == "burst" and all(g.gate in ("availability", "capacity") for g in failing)
    if record.acceptable or burst_ok or (failing and all(g.gate == "capacity" for g in failing)):
        if record.pricing_basis == "per_token":
            ok = record.metrics.get("rent_per_task") is not None
        else:
            ok = (record.metrics.get("capacity_per_gpu_hour") or 0) > 0 and record.metrics.get("variable_gpu_hour") is not None
        return (True, "") if ok else (False, "no cost per task")
    return False, "; ".join(record.reasons) or "not acceptable"


def _variant_costs(inputs: CostInputs, rows: list[tuple[int, dict[str, object]]]) -> np.ndarray:
    """variable_gpu_hour of copies of offers' input rows with some inputs replaced (the same cost model)."""
    if not rows:
        return np.empty(0)
    cols: dict[str, np.ndarray] = {}
    for name, values in inputs.columns.items():
        picked = [changes.get(name, values[i]) for i, changes in rows]
        cols[name] = np.array(picked, dtype=float) if values.dtype.kind == "f" else np.array(picked, dtype=object if values.dtype.kind in "USO" else values.dtype)
    return cost_arrays(cols, inputs.model, only=("variable_gpu_hour",))["variable_gpu_hour"]


def delivery(promised: date | None, as_of: date, delay_weeks: float) -> tuple[int, float]:
    """The first month (0-based) with capacity and the share of it after the delivery day: the promised date plus
    the expected delay (horizon.expected_delay_weeks), on the calendar of `procure cashflow` (cashflow.delivery_month)."""
    from procure.analysis.cashflow import DAYS_PER_MONTH

    if promised is None:
        return 0, 1.0
    days = (promised + timedelta(weeks=delay_weeks) - as_of).days
    if days <= 0:
        return 0, 1.0
    months = days / DAYS_PER_MONTH
    start = math.floor(months)
    return start, 1.0 - (months - start)


def candidates(
    ev: Evaluation, inputs: CostInputs, fte_cost_year: float, output_tokens: int, success_fallback: float, months: int | None = None, delay_weeks: float = 0.0,
    spot_share: float = 1.0,
) -> tuple[list[Candidate], dict[str, str]]:
    """The offers the plan may use, sorted by id (file order never matters), with their commitments and sources.

    An offer delivered after the last of `months` is not a candidate (with the reason). Spot capacity is a source
    only, serving at most `spot_share` (plan.max_spot_share) of each month's demand."""
    from procure.analysis.cashflow import term_average_rent

    by_id = {o.id: (i, o) for i, o in enumerate(inputs.offers)}
    excluded: dict[str, str] = {}
    found: list[Candidate] = []
    pending: list[tuple[Commit | Source, int, dict[str, object], float]] = []  # (target, input row, changes, capacity)
    for record in sorted(ev.offers, key=lambda r: r.id):
        ok, why = eligible(record)
        if not ok:
            excluded[record.id] = why
            continue
        row, offer = by_id[record.id]
        start, share = delivery(offer.delivery, ev.as_of, delay_weeks)
        if months is not None and start >= months:
            late = f" + {delay_weeks:g} weeks expected delay" if delay_weeks else ""
            excluded[record.id] = f"delivered in month {start + 1} ({offer.delivery}{late}), after the {months}-month horizon"
            continue
        m = record.metrics
        fx = float(inputs.columns["fx"][row])
        cand = Candidate(record.id, record.vendor, float(m["fixed_monthly"] or 0.0), start=start, first_share=share, cost_per_task=m.get("cost_per_task"))
        index = len(found)
        if record.pricing_basis == "per_token":
            cand.source = Source(
                index, float(m["rent_per_task"]), _token_cap(offer, output_tokens, float(m["success_rate"] or success_fallback)), float(m["rent_per_task"]), "task", None,
                max(1, offer.contract_months),
            )
            found.append(cand)
            continue
        node = offer.service.node_gpus
        per_gpu_month = float(m["capacity_per_gpu_hour"]) * HOURS_PER_MONTH
        supply = offer.supply_gpus
        spot = getattr(record, "role", "primary") == "burst"
        if offer.pricing.usage_billed and not offer.on_demand and not spot:
            # A dedicated endpoint billed by the hour, minute or second is paid for the time it runs: a pay-as-used
            # source at the offer's own cost per GPU-hour (rent, per-GPU-hour fees, staff per GPU), up to its GPUs.
            # Like other pay-as-used capacity, at its price as it stands (no escalator averaged over a term).
            cand.source = Source(index, math.nan, supply * per_gpu_month, float(m.get("rent_today", m["rent"]) or 0.0), "gpu_hour", per_gpu_month, max(1, offer.contract_months))
            pending.append((cand.source, row, {"escalation": 1.0}, per_gpu_month))
        elif not offer.on_demand and not spot:
            low = math.ceil(offer.committed_gpus / node)
            high = max(supply // node, low)
            price = float(m.get("rent_today", m["rent"]) or 0.0)  # the price signed; its escalators are in the variable cost
            cand.commits.append(Commit(index, "base", low, high, node, offer.contract_months, price, float(m["variable_gpu_hour"]) * node * HOURS_PER_MONTH, per_gpu_month * node))
        for k, option in enumerate(offer.pricing.commit_options if not spot else []):
            low = math.ceil(option.gpus / node)
            high = max(supply // node, low)
            commit = Commit(index, f"{option.gpus}+ GPUs, {option.term_months} months", low, high, node, option.term_months, option.gpu_hour * fx, math.nan, per_gpu_month * node)
            cand.commits.append(commit)
            # the offer's escalators over the option's own term (a tier of another length averages them differently)
            escalated = term_average_rent(1.0, offer.contract, option.term_months) or 1.0
            pending.append((commit, row, {"basis": "gpu_hour", "gpu_hour": option.gpu_hour, "discount": 0.0, "term_months": option.term_months, "gpus": float(option.gpus), "escalation": escalated}, node))
        burst = offer.pricing.burst
        if burst is None and spot and offer.pricing.gpu_hour is not None:
            burst = Burst(gpu_hour=offer.pricing.gpu_hour, max_gpus=supply)  # spot at its GPU-hour price, up to its supply
        if burst is not None:
            # Spot's restart cost is in per_gpu_month: its capacity carries the interruption share (rating.interruption_share).
            source = Source(index, math.nan, burst.max_gpus * per_gpu_month, burst.gpu_hour * fx, "gpu_hour", per_gpu_month, max(1, offer.contract_months), spot, spot_share if spot else 1.0)
            cand.source = source
            # Billed only as used: no discount, prepayment or fixed fees of its own (those are the offer's, in fixed_monthly).
            pending.append((source, row, {"basis": "gpu_hour", "gpu_hour": burst.gpu_hour, "discount": 0.0, "prepay_fraction": 0.0, "fees_once": 0.0, "fees_monthly": 0.0, "fees_per_tb_month": 0.0, "escalation": 1.0}, per_gpu_month))  # pay-as-used: its price as it stands
        found.append(cand)
    costs = _variant_costs(inputs, [(row, changes) for _, row, changes, _ in pending])
    for (target, _, _, scale), variable in zip(pending, costs):
        if isinstance(target, Commit):
            target.cost_node_month = float(variable) * target.node_gpus * HOURS_PER_MONTH
        else:
            target.price_per_task = float(variable) * HOURS_PER_MONTH / scale
    return found, excluded


def _token_cap(offer: Offer, output_tokens: int, success_rate: float) -> float:
    """Successful tasks a month within a per-token offer's rate limits (read defensively: optional field)."""
    limits = getattr(offer.service, "rate_limits", None)
    if limits is None:
        return math.inf
    minutes = HOURS_PER_MONTH * 60
    caps = []
    rpm = getattr(limits, "requests_per_minute", None)
    otpm = getattr(limits, "output_tokens_per_minute", None)
    if rpm:
        caps.append(rpm * minutes)
    if otpm:
        caps.append(otpm * minutes / output_tokens)
    return min(caps) * success_rate if caps else math.inf


def _units(cands: list[Candidate], months: int) -> list[Unit]:
    """Each commit in blocks of its term from the offer's delivery: a term shorter than the horizon is re-decided at
    each renewal; the last block keeps its whole term, past the horizon if it runs beyond (and is costed in full)."""
    units = []
    for cand in cands:
        for commit in cand.commits:
            term = max(1, commit.term_months)
            for first in range(cand.start, months, term):
                units.append(Unit(commit, first, min(months, first + term) - 1, first + term - 1))
    return units


def pv_months(delta: np.ndarray, first: int, last: int) -> float:
    """Present value of 1 a month over months first..last (0-based, inclusive), past the end of `delta` too:
    delta_m = d^(m + 1) with d = delta[0] (monthly discounting, as `discount_factors`)."""
    if last < first:
        return 0.0
    inside = float(delta[first : min(last, len(delta) - 1) + 1].sum()) if first < len(delta) else 0.0
    if last >= len(delta):
        d = float(delta[0])
        lo = max(first, len(delta))
        inside += sum(d ** (k + 1) for k in range(lo, last + 1))
    return inside


# --- the model ----------------------------------------------------------------------------------


@dataclass
class Model:
    c: np.ndarray
    rows: list[np.ndarray]
    cols: list[np.ndarray]
    vals: list[np.ndarray]
    row_lb: list[float | np.ndarray]
    row_ub: list[float | np.ndarray]
    lb: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    nrows: int
    layout: dict[str, slice]
    units: list[Unit]
    sources: list[Source]
    row_names: list[tuple[int, str]] = field(default_factory=list)  # (first row, constraint name)
    bands: Bands | None = None
    tail: np.ndarray | None = None
    a_index: np.ndarray | None = None  # (fee sources, months) -> switch variable within layout["a"]

    def add(self, r: np.ndarray, c: np.ndarray, v: np.ndarray, count: int, lb: float | np.ndarray, ub: float | np.ndarray, name: str) -> int:
        first = self.nrows
        self.rows.append(np.asarray(r, dtype=np.int64) + first)
        self.cols.append(np.asarray(c, dtype=np.int64))
        self.vals.append(np.asarray(v, dtype=float))
        self.row_lb.append(np.broadcast_to(np.asarray(lb, dtype=float), (count,)))
        self.row_ub.append(np.broadcast_to(np.asarray(ub, dtype=float), (count,)))
        self.row_names.append((first, name))
        self.nrows += count
        return first

    def matrix(self):  # type: ignore[no-untyped-def]
        from scipy.sparse import csr_array

        r = np.concatenate(self.rows) if self.rows else np.empty(0, dtype=np.int64)
        c = np.concatenate(self.cols) if self.cols else np.empty(0, dtype=np.int64)
        v = np.concatenate(self.vals) if self.vals else np.empty(0)
        return csr_array((v, (r, c)), shape=(self.nrows, len(self.c))), np.concatenate(self.row_lb), np.concatenate(self.row_ub)

    @property
    def nonzeros(self) -> int:
        return int(sum(len(v) for v in self.vals))


@dataclass(frozen=True)
class Risk:
    """How the model treats CVaR: off, weighted in the objective, or limited."""

    weight: float = 0.0
    limit: float | None = None

    @property
    def active(self) -> bool:
        return self.weight > 0 or self.limit is not None


def discount_factors(months: int, cost_of_capital: float) -> np.ndarray:
    """Present value of a month-m amount, as in the cash flow: (1 + r)^-(m / 12)."""
    return (1 + cost_of_capital) ** -(np.arange(1, months + 1) / 12)


@dataclass
class Bands:
    """Groups of scenarios by month the solver sees as one demand level each (flat: band j is in month month[j])."""

    month: np.ndarray  # (J,)
    demand: np.ndarray  # (J,) probability-weighted mean demand of the band's scenarios
    weight: np.ndarray  # (J,) the band's probability
    members: list[np.ndarray]  # scenario indices of each band

    def __len__(self) -> int:
        return len(self.month)


def _band(scen: Scenarios, m: int, members: np.ndarray) -> tuple[float, float]:
    p = scen.probability[members]
    w = float(p.sum())
    return (float(p @ scen.demand[members, m]) / w if w > 0 else 0.0), w


def initial_bands(scen: Scenarios, levels: int) -> Bands:
    """Each month's scenarios in at most `levels` equally likely bands (by demand), and the worst scenario of each
    month as a band of its own (with no more scenarios than levels, each is its own: exact). Commitments do not
    depend on the scenario, so within a month only the distribution of demand matters to the solver."""
    S, H = scen.demand.shape
    month, demand, weight, members = [], [], [], []
    for m in range(H):
        order = np.argsort(scen.demand[:, m], kind="stable")
        if S <= levels:
            groups = [order[i : i + 1] for i in range(S)]
        else:
            p = scen.probability[order]
            before = np.cumsum(p) - p
            band = np.minimum((before * levels + 1e-9).astype(int), levels - 1)
            groups = [order[band == k] for k in range(levels) if (band == k).any()]
            top = groups[-1]
            if len(top) > 1:
                groups[-1:] = [top[:-1], top[-1:]]
        for g in groups:
            d, w = _band(scen, m, g)
            month.append(m)
            demand.append(d)
            weight.append(w)
            members.append(g)
    return Bands(np.array(month, dtype=np.int64), np.array(demand), np.array(weight), members)


def split_bands(bands: Bands, scen: Scenarios, breakpoints: list[np.ndarray]) -> Bands | None:
    """Split every band whose scenarios lie on both sides of a breakpoint of its month (where the cost of serving
    one more task changes: the committed capacity, then each pay-as-used source's room). Within a band that
    straddles none, the cost of the chosen plan is linear in demand, so the band's mean gives it exactly.
    None when no band straddles a breakpoint."""
    month, demand, weight, members = [], [], [], []
    changed = False
    for m, g in zip(bands.month, bands.members):
        pieces = [g]
        d = scen.demand[g, m]
        for bp in breakpoints[m]:
            if len(g) > 1 and d.min() < bp * (1 - 1e-9) and d.max() > bp * (1 + 1e-9):
                changed = True
                pieces = [part for piece in pieces for part in (piece[scen.demand[piece, m] <= bp], piece[scen.demand[piece, m] > bp]) if len(part)]
        for piece in pieces:
            dm, w = _band(scen, int(m), piece)
            month.append(int(m))
            demand.append(dm)
            weight.append(w)
            members.append(piece)
    return Bands(np.array(month, dtype=np.int64), np.array(demand), np.array(weight), members) if changed else None


# The most nonzeros a plan's program may have. HiGHS needs about 1.5 kB of memory a nonzero (measured:
# 600,420 nonzeros, 120 months x 1,000 levels x 2 offers with a penalty, peaked at 1.08 GB and took
# 38 s), so this is about 1.5 GB; 120 months x 10,000 levels ended in std::bad_alloc after 40 s.
MAX_NONZEROS = 1_000_000


def model_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> int:
    """The nonzeros of the program `build_model` would write first, counted from its dimensions before anything
    is built: the rows of every band dominate (bands x pay-as-used sources; with CVaR, tail paths x months x
    sources). Every plan prices unserved demand (plan.unserved_penalty_per_task or its default)."""
    H = scen.months
    J = (min(scen.count, policy.levels) + (1 if scen.count > policy.levels else 0)) * H
    P = sum(1 for c in cands if c.source is not None)
    Q = sum(1 for c in cands if c.source is not None and c.fixed_monthly > 0)
    units = _units(cands, H)
    unit_months = sum(u.last - u.first + 1 for u in units)
    total = H + 5 * unit_months + J * (2 + P) + 2 * Q * J + 6 * len(units) + 3 * Q * H + 2 * unit_months
    if policy.max_vendor_share < 1:
        total += P * J + 3 * P + 3 * len(cands) + 2 * (len(units) + Q * H + P) + len(cands)  # with the vendor switches
    spots = sum(1 for c in cands if c.source is not None and c.source.spot)
    if spots > 1:
        total += spots * J
    if risk.active:
        T = min(scen.count, max(1, math.ceil(1.2 * (1 - policy.cvar_alpha) * scen.count)))
        total += 3 * len(units) + Q * H + T * H * (2 + 2 * P + 2 * Q) + 3 * T + (spots * T * H if spots > 1 else 0)
    return total


def check_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> None:
    """Refuse, before building it, a program too large for memory; name the settings that size it."""
    size = model_size(cands, scen, policy, risk)
    if size <= MAX_NONZEROS:
        return
    levels = min(scen.count, policy.levels)
    sources = sum(1 for c in cands if c.source is not None)
    lower = (["plan.levels" + (f" ({policy.levels})" if policy.levels <= scen.count else "")] if scen.count > 2 else []) + (
        [f"demand.scenarios ({scen.count})"] if scen.sampled and scen.count <= policy.levels else []
    ) + [f"demand.months ({scen.months})"]
    raise InputError([Problem(
        "procure.yaml", None, "plan.levels" if policy.levels <= scen.count else ("demand.scenarios" if scen.sampled else "demand.months"),
        f"the plan's program would have about {size:,} nonzeros ({levels:,} demand levels x {scen.months} months x {sources} pay-as-used offers"
        + (", a penalty" if policy.unserved_penalty_per_task is not None else "") + (", CVaR" if risk.active else "")
        + f"), over the {MAX_NONZEROS:,} the solver can take in about 1.5 GB; lower " + ", ".join(lower),
    )])


def build_model(
    cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float,
    penalty: float | None = None, bands: Bands | None = None, tail: np.ndarray | None = None,
) -> Model:
    """Assemble the MILP. Money in units of `money`, tasks in units of `tasks` (for the solver's numerics).

    `bands`: the demand levels the expected cost sees (default `initial_bands`); `tail`: the paths the CVaR sees
    (default every path), each with its own serving variables so that CVaR is taken on whole paths."""
    if penalty is None:
        penalty = policy.unserved_penalty_per_task
    if bands is None:
        bands = initial_bands(scen, policy.levels)
    S, H = scen.demand.shape
    J = len(bands)
    units = _units(cands, H)
    sources = [c.source for c in cands if c.source is not None]
    U, P, I = len(units), len(sources), len(cands)
    # Spot or preemptible capacity serves at most plan.max_spot_share of the demand of each band (and of each tail
    # path-month): each spot source on its bounds, several together in one row per band (spot_rows).
    frac = np.array([s.share_limit for s in sources], dtype=float)
    spots = [p for p, s in enumerate(sources) if s.spot]
    spot_share = min((float(frac[p]) for p in spots), default=1.0)
    avail = np.array([c.available(H) for c in cands]).reshape(I, H)
    fee_sources = [p for p, src in enumerate(sources) if cands[src.offer].fixed_monthly > 0]
    # Fees in the months an offer holds capacity: on its commitment switches (one covers a month at most), or, for an
    # offer whose pay-as-used source also carries them, on g_im >= either switch.
    fee_cands = [sources[p].offer for p in fee_sources]
    F, Q = len(fee_cands), len(fee_sources)
    # A source with fixed fees is switched on (its fees paid) in blocks of its offer's minimum term from delivery.
    a_index = np.zeros((Q, H), dtype=np.int64)
    blocks = 0
    for q, p in enumerate(fee_sources):
        first_month = cands[sources[p].offer].start
        term = max(1, sources[p].term_months)
        for first in range(first_month, H, term):
            a_index[q, first : first + term] = blocks
            blocks += 1
        a_index[q, :first_month] = a_index[q, first_month]
    band_demand = bands.demand / tasks
    band_month = bands.month
    risk_paths = (np.arange(S) if tail is None else np.asarray(tail, dtype=np.int64)) if risk.active else np.zeros(0, dtype=np.int64)
    T = len(risk_paths)

    layout: dict[str, slice] = {}
    unit_month_count = [u.last - u.first + 1 for u in units]
    sizes: list[tuple[str, int]] = [("n", U), ("b", U), ("g", F * H), ("a", blocks), ("cap", H), ("y", sum(unit_month_count)), ("z", P * J)]
    if penalty is not None:
        sizes.append(("u", J))
    vendors = sorted({c.vendor for c in cands})
    share_rows = policy.max_vendor_share < 1 and len(vendors) > 1
    if share_rows:
        sizes += [("e", P), ("x", len(vendors) + 1), ("w", len(vendors))]
    if risk.active:
        sizes += [("k", 1), ("eta", 1), ("xi", T), ("cv", 1), ("zt", P * T * H)]
        if penalty is not None:
            sizes.append(("ut", T * H))
    start = 0
    for name, size in sizes:
        layout[name] = slice(start, start + size)
        start += size
    nvar = start
    c = np.zeros(nvar)
    lb = np.zeros(nvar)
    ub = np.full(nvar, np.inf)
    integrality = np.zeros(nvar, dtype=np.uint8)
    model = Model(c, [], [], [], [], [], lb, ub, integrality, 0, layout, units, sources)
    model.bands = bands
    model.a_index = a_index
    model.tail = risk_paths

    n0, b0, g0, a0, cap0, z0 = (layout[k].start for k in ("n", "b", "g", "a", "cap", "z"))
    fixed = np.array([cand.fixed_monthly for cand in cands]) / money
    unit_cost = np.array([u.commit.cost_node_month for u in units]) / money
    unit_tasks = np.array([u.commit.tasks_node_month for u in units]) / tasks
    unit_offer = np.array([u.commit.offer for u in units], dtype=np.int64)
    # A commitment costs its whole term, past the horizon too; its offer's fixed fees past the horizon ride on its switch.
    unit_pv = np.array([pv_months(delta, u.first, u.term_end) for u in units])
    unit_beyond_pv = np.array([pv_months(delta, u.last + 1, u.term_end) for u in units])
    c[layout["n"]] = unit_cost * unit_pv
    on_switch = np.array([u.commit.offer not in fee_cands for u in units], dtype=bool)
    c[layout["b"]] = fixed[unit_offer] * np.where(on_switch, unit_pv, unit_beyond_pv) if U else 0.0
    # committed tasks of one node in each month it covers (prorated in the delivery month)
    unit_month_tasks = [unit_tasks[j] * avail[u.commit.offer, u.first : u.last + 1] for j, u in enumerate(units)]
    # No more nodes than the highest demand in the unit's months can use (at least the minimum): a tight bound
    # makes the relaxation charge fixed costs and minimums nearly in full, which is what makes the solve fast.
    peak = scen.demand.max(axis=0)
    useful = np.array([
        max(u.commit.min_nodes, min(u.commit.max_nodes, math.ceil(float(peak[u.first : u.last + 1].max()) / u.commit.tasks_node_month - 1e-9)))
        if u.commit.tasks_node_month > 0 else u.commit.max_nodes
        for u in units
    ], dtype=float)
    ub[layout["n"]] = useful
    integrality[layout["n"]] = 1
    ub[layout["b"]] = 1
    integrality[layout["b"]] = 1
    ub[layout["g"]] = 1
    ub[layout["a"]] = 1
    integrality[layout["a"]] = 1
    c[layout["g"]] = (fixed[fee_cands][:, None] * delta[None, :H]).ravel() if F else 0.0

    # z[p, j]: tasks served by source p in band j; at most the source's room in the band's month (0 before delivery).
    price = np.array([s.price_per_task for s in sources]) * tasks / money
    room_month = np.array([
        np.where(avail[src.offer] > 0, np.minimum(src.cap_month * np.where(avail[src.offer] > 0, avail[src.offer], 1.0) / tasks, float(scen.demand.max()) / tasks), 0.0)
        for src in sources
    ]).reshape(P, H)
    bw = bands.weight * delta[band_month]
    c[layout["z"]] = (price[:, None] * bw[None, :]).ravel()
    ub[layout["z"]] = (np.minimum(room_month[:, band_month], frac[:, None] * band_demand[None, :])).ravel() if P else 0.0
    if penalty is not None:
        c[layout["u"]] = penalty * tasks / money * bw

    # (a) committed capacity per month: cap_m - sum(tasks per node x n_u over the units covering m) = 0
    # y_um: the capacity of unit u in month m that can be used, at most its nodes' tasks and at most the month's highest
    # demand while it is in use (y_um <= peak_m b_u): capacity above the peak is never used, so a large minimum
    # commitment cannot be bought by the relaxation as a sliver at a sliver of its fees (the same integer plans).
    y0 = layout["y"].start
    y_first = np.concatenate([[0], np.cumsum(unit_month_count)])[:-1].astype(np.int64) if U else np.zeros(0, dtype=np.int64)
    r_list, c_list, v_list = [np.arange(H)], [cap0 + np.arange(H)], [np.ones(H)]
    for j, u in enumerate(units):
        r_list.append(np.arange(u.first, u.last + 1))
        c_list.append(y0 + y_first[j] + np.arange(unit_month_count[j]))
        v_list.append(-np.ones(unit_month_count[j]))
    model.add(np.concatenate(r_list), np.concatenate(c_list), np.concatenate(v_list), H, 0.0, 0.0, "committed capacity")
    if U:
        Y = int(sum(unit_month_count))
        ry = np.arange(Y)
        y_unit = np.repeat(np.arange(U), unit_month_count)
        y_month = np.concatenate([np.arange(u.first, u.last + 1) for u in units])
        model.add(np.concatenate([ry, ry]), np.concatenate([y0 + ry, n0 + y_unit]), np.concatenate([np.ones(Y), -np.concatenate(unit_month_tasks)]), Y, -np.inf, 0.0, "usable committed capacity")
        model.add(np.concatenate([ry, ry]), np.concatenate([y0 + ry, b0 + y_unit]), np.concatenate([np.ones(Y), -peak[y_month] / tasks]), Y, -np.inf, 0.0, "capacity up to the peak")

    # (b) every band served: cap_m + sum_p z_pj (+ u_j) >= D_j
    jj = np.arange(J)
    r_list = [jj] + [jj for _ in range(P)]
    c_list = [cap0 + band_month] + [z0 + p * J + jj for p in range(P)]
    v_list = [np.ones(J)] + [np.ones(J) for _ in range(P)]
    if penalty is not None:
        r_list.append(jj)
        c_list.append(layout["u"].start + jj)
        v_list.append(np.ones(J))
    model.add(np.concatenate(r_list), np.concatenate(c_list), np.concatenate(v_list), J, band_demand, np.inf, "demand served")

    if penalty is None:
        # (b') the worst scenario of each month fits in the committed capacity plus the room of the pay-as-used sources
        # (a source with fixed fees counts only in the months it is switched on)
        worst = scen.demand.max(axis=0) / tasks
        rr, cc, vv, rhs = [np.arange(H)], [cap0 + np.arange(H)], [np.ones(H)], worst.copy()
        rooms = [np.minimum(room_month[p], frac[p] * worst) for p in range(P)]
        if len(spots) > 1:
            together = sum(rooms[p] for p in spots)
            scale = np.where(together > 0, np.minimum(1.0, spot_share * worst / np.where(together > 0, together, 1.0)), 1.0)
            for p in spots:
                rooms[p] = rooms[p] * scale
        for p, src in enumerate(sources):
            room = rooms[p]
            if p in fee_sources:
                q = fee_sources.index(p)
                rr.append(np.arange(H))
                cc.append(a0 + a_index[q])
                vv.append(room)
            else:
                rhs = rhs - room
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), H, rhs, np.inf, "worst scenario served")
    if U:
        j = np.arange(U)
        # (c) a commitment in use lies between its minimum and maximum nodes
        model.add(np.concatenate([j, j]), np.concatenate([n0 + j, b0 + j]), np.concatenate([np.ones(U), -useful]), U, -np.inf, 0.0, "maximum nodes")
        model.add(np.concatenate([j, j]), np.concatenate([n0 + j, b0 + j]), np.concatenate([np.ones(U), -np.array([u.commit.min_nodes for u in units], dtype=float)]), U, 0.0, np.inf, "minimum commitment")
        # (d) one commitment (base terms or one option) per offer per month
        rr, cc = [], []
        for j2, u in enumerate(units):
            months = np.arange(u.first, u.last + 1)
            rr.append(u.commit.offer * H + months)
            cc.append(np.full(len(months), b0 + j2))
        model.add(np.concatenate(rr), np.concatenate(cc), np.ones(sum(len(x) for x in rr)), I * H, -np.inf, 1.0, "one option per offer")
    if F:
        # (e) fees when used: g_im >= the offer's commitment switch covering month m, and >= its source's switch a_m
        slot = {i: f for f, i in enumerate(fee_cands)}
        rr, cc, vv = [np.arange(F * H)], [g0 + np.arange(F * H)], [np.ones(F * H)]
        for j2, u in enumerate(units):
            if u.commit.offer in slot:
                months = np.arange(u.first, u.last + 1)
                rr.append(slot[u.commit.offer] * H + months)
                cc.append(np.full(len(months), b0 + j2))
                vv.append(-np.ones(len(months)))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), F * H, 0.0, np.inf, "fees while holding capacity")
        if Q:
            rows = np.arange(Q * H)
            gcols = np.concatenate([g0 + slot[sources[p].offer] * H + np.arange(H) for p in fee_sources])
            model.add(np.concatenate([rows, rows]), np.concatenate([gcols, a0 + a_index.ravel()]), np.concatenate([np.ones(Q * H), -np.ones(Q * H)]), Q * H, 0.0, np.inf, "fees while used")
    if Q:
        # (f) a pay-as-used source with fixed fees serves only in the months it is switched on: z_pj <= min(room, D_j) a_pm
        rr, cc, vv = [], [], []
        for q, p in enumerate(fee_sources):
            bound = np.minimum(room_month[p, band_month], frac[p] * band_demand)
            rows = q * J + jj
            rr += [rows, rows]
            cc += [z0 + p * J + jj, a0 + a_index[q, band_month]]
            vv += [np.ones(J), -bound]
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), Q * J, -np.inf, 0.0, "pay-as-used offer in use")
    if len(spots) > 1:
        # (f') spot sources together serve at most plan.max_spot_share of each band's demand
        model.add(np.tile(jj, len(spots)), np.concatenate([z0 + p * J + jj for p in spots]), np.ones(len(spots) * J), J, -np.inf, spot_share * band_demand, "spot share")
    if share_rows:
        # (g) vendor share of expected capacity (tasks): committed capacity over the horizon plus expected pay-as-used tasks
        e0 = layout["e"].start
        rr = np.concatenate([np.repeat(np.arange(P), J), np.arange(P)])
        cc = np.concatenate([z0 + np.arange(P * J), e0 + np.arange(P)])
        vv = np.concatenate([-np.tile(bands.weight, P), np.ones(P)])
        model.add(rr, cc, vv, P, 0.0, 0.0, "expected pay-as-used tasks")
        vendor_of = {v: i for i, v in enumerate(vendors)}
        share = policy.max_vendor_share
        x0, t = layout["x"].start, layout["x"].start + len(vendors)
        # x_v = the vendor's expected capacity (each commitment and source in one row: sparse), t = sum of x_v,
        # and x_v <= share x t: nonzeros grow with offers, not offers x vendors.
        rr2 = [vendor_of[cands[u.commit.offer].vendor] for u in units] + [vendor_of[cands[s.offer].vendor] for s in sources] + list(range(len(vendors)))
        cc2 = [n0 + j2 for j2 in range(U)] + [e0 + p for p in range(P)] + [x0 + v for v in range(len(vendors))]
        vv2 = [-float(unit_month_tasks[j2].sum()) for j2 in range(U)] + [-1.0] * P + [1.0] * len(vendors)
        model.add(np.array(rr2), np.array(cc2), np.array(vv2), len(vendors), 0.0, 0.0, "expected capacity by vendor")
        model.add(np.zeros(len(vendors) + 1, dtype=np.int64), np.array([t] + [x0 + v for v in range(len(vendors))]), np.array([1.0] + [-1.0] * len(vendors)), 1, 0.0, 0.0, "expected capacity")
        v_idx = np.arange(len(vendors))
        model.add(np.concatenate([v_idx, v_idx]), np.concatenate([x0 + v_idx, np.full(len(vendors), t)]), np.concatenate([np.ones(len(vendors)), np.full(len(vendors), -share)]), len(vendors), -np.inf, 0.0, "max_vendor_share")
        # (g') a yes/no switch per vendor: every commitment switch and pay-as-used block of the vendor's offers at most
        # its switch, and at least two vendors switched on. The switches cost nothing (each can always be on), so the
        # integer plans and the relaxation's bound are unchanged; they give the solver one variable to branch on that
        # takes a vendor out of the plan whole, where the share rule otherwise leaves it a fraction of many switches.
        # On the benchmark (50 offers, 20 vendors) this cuts the solve from 17-21 s to 11-14 s of CPU at the same plan.
        w0 = layout["w"].start
        ub[layout["w"]] = 1
        integrality[layout["w"]] = 1
        rr, cc, vv = [], [], []
        for j2, u in enumerate(units):
            rr += [len(rr) // 2] * 2
            cc += [b0 + j2, w0 + vendor_of[cands[u.commit.offer].vendor]]
            vv += [1.0, -1.0]
        for q, p in enumerate(fee_sources):
            for k in np.unique(a_index[q]):
                rr += [len(rr) // 2] * 2
                cc += [a0 + int(k), w0 + vendor_of[cands[sources[p].offer].vendor]]
                vv += [1.0, -1.0]
        for p, src in enumerate(sources):
            if p not in fee_sources:  # expected tasks at most the source's room in every band while its vendor is on
                rr += [len(rr) // 2] * 2
                cc += [e0 + p, w0 + vendor_of[cands[src.offer].vendor]]
                vv += [1.0, -float(bands.weight @ ub[z0 + p * J : z0 + (p + 1) * J])]
        model.add(np.array(rr, dtype=np.int64), np.array(cc, dtype=np.int64), np.array(vv), len(rr) // 2, -np.inf, 0.0, "vendor switched on")
        model.add(np.zeros(len(vendors), dtype=np.int64), w0 + v_idx, np.ones(len(vendors)), 1, 2.0, np.inf, "two vendors at least")
    if risk.active:
        # CVaR of each path's whole cost (Rockafellar-Uryasev): a path's loss is its spend over the horizon plus the
        # committed spend past it, per month of the horizon; each path in `tail` is served by its own variables.
        k0, eta, xi0, cv, zt0 = (layout[k].start for k in ("k", "eta", "xi", "cv", "zt"))
        lb[eta] = -np.inf
        # (h) k = commitments and fees over the whole term, undiscounted: sum cost_u x term months x n_u + fees
        rr, cc, vv = [np.zeros(1, dtype=np.int64)], [np.array([k0])], [np.ones(1)]
        if U:
            rr += [np.zeros(U, dtype=np.int64), np.zeros(U, dtype=np.int64)]
            cc += [n0 + np.arange(U), b0 + np.arange(U)]
            fee_months = np.array([u.term_end - u.first + 1 if on_switch[j] else u.beyond for j, u in enumerate(units)], dtype=float)
            vv += [-unit_cost * np.array([u.term_end - u.first + 1 for u in units], dtype=float), -fixed[unit_offer] * fee_months]
        if F:
            rr.append(np.zeros(F * H, dtype=np.int64))
            cc.append(g0 + np.arange(F * H))
            vv.append(-np.repeat(fixed[fee_cands], H))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), 1, 0.0, 0.0, "commitment spend")
        tm = np.arange(T * H)  # (t, m) flattened
        t_path, t_month = np.repeat(risk_paths, H), np.tile(np.arange(H), T)
        # (i) each tail path served in every month
        rr = [tm] + [tm for _ in range(P)]
        cc = [cap0 + t_month] + [zt0 + p * T * H + tm for p in range(P)]
        vv = [np.ones(T * H)] + [np.ones(T * H) for _ in range(P)]
        if penalty is not None:
            ut0 = layout["ut"].start
            rr.append(tm)
            cc.append(ut0 + tm)
            vv.append(np.ones(T * H))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), T * H, scen.demand[t_path, t_month] / tasks, np.inf, "tail path served")
        if P:
            ub[layout["zt"]] = np.concatenate([np.minimum(room_month[p, t_month], frac[p] * scen.demand[t_path, t_month] / tasks) for p in range(P)])
        if len(spots) > 1:
            model.add(np.tile(tm, len(spots)), np.concatenate([zt0 + p * T * H + tm for p in spots]), np.ones(len(spots) * T * H), T * H, -np.inf, spot_share * scen.demand[t_path, t_month] / tasks, "tail spot share")
        for q, p in enumerate(fee_sources):
            bound = np.minimum(room_month[p, t_month], frac[p] * scen.demand[t_path, t_month] / tasks)
            model.add(np.concatenate([tm, tm]), np.concatenate([zt0 + p * T * H + tm, a0 + a_index[q, t_month]]), np.concatenate([np.ones(T * H), -bound]), T * H, -np.inf, 0.0, "tail pay-as-used in use")
        # (j) xi_t >= loss_t - eta, loss_t = (k + sum_m sum_p price_p zt_ptm (+ penalty ut_tm)) / H
        tt = np.arange(T)
        rr = [tt, tt, tt] + [np.repeat(tt, H) for _ in range(P)]
        cc = [xi0 + tt, np.full(T, k0), np.full(T, eta)] + [zt0 + p * T * H + tm for p in range(P)]
        vv = [np.ones(T), np.full(T, -1.0 / H), np.ones(T)] + [np.full(T * H, -price[p] / H) for p in range(P)]
        if penalty is not None:
            rr.append(np.repeat(tt, H))
            cc.append(layout["ut"].start + tm)
            vv.append(np.full(T * H, -penalty * tasks / money / H))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), T, 0.0, np.inf, "CVaR excess")
        # (k) cv = eta + sum_t p_t xi_t / (1 - alpha)
        tail_w = scen.probability[risk_paths] / (1 - policy.cvar_alpha)
        model.add(np.zeros(T + 2, dtype=np.int64), np.concatenate([[cv, eta], xi0 + tt]), np.concatenate([[1.0, -1.0], -tail_w]), 1, 0.0, 0.0, "CVaR definition")
        c[cv] = risk.weight * float(delta[:H].sum())
        if risk.limit is not None:
            ub[cv] = risk.limit / money
    return model


@dataclass
class Solved:
    nodes: np.ndarray  # per unit
    in_plan: np.ndarray  # (candidates, months) bool: whether the offer's pay-as-used source may serve in the month
    status: str
    gap: float | None
    model: Model
    objective: float | None = None
    eta: float | None = None  # the CVaR threshold the solver found (money units of the model)


def source_months(cands: list[Candidate], months: int, in_plan: np.ndarray) -> np.ndarray:
    """(candidates, months) bool: when each offer's pay-as-used source may serve. A 1-D `in_plan` (offer in the
    plan or not) means every month from its delivery."""
    avail = np.array([c.available(months) for c in cands]).reshape(len(cands), months) > 0
    active = np.asarray(in_plan, dtype=bool)
    if active.ndim == 1:
        active = active[:, None] & avail
    return active & avail


def solve(model: Model, policy: PlanConfig, scen: Scenarios, cands: list[Candidate], node_limit: int | None = None) -> Solved:
    """Run HiGHS; infeasibility and the time limit become clear input errors, never a hang or a traceback.
    `node_limit`: stop after that many branch-and-bound nodes (a deterministic limit; status says so)."""
    from procure.io.solvecache import solve_milp

    A, row_lb, row_ub = model.matrix()
    options = {"time_limit": float(policy.time_limit_s), "mip_rel_gap": float(policy.mip_gap), "disp": False, **HIGHS_OPTIONS}
    if node_limit is not None:
        options["node_limit"] = int(node_limit)
    result = solve_milp(model.c, A, row_lb, row_ub, model.integrality, model.lb, model.ub, options)
    if result.x is None:
        if result.status == 1:
            raise InputError([Problem("procure.yaml", None, "plan.time_limit_s", f"no feasible plan found within {policy.time_limit_s:g} s over {scen.count} scenarios x {scen.months} months; raise plan.time_limit_s or lower demand.scenarios")])
        raise InputError([infeasible_problem(policy, scen, cands)])
    x = result.x
    H = scen.months
    nodes = np.round(x[model.layout["n"]]).astype(int)
    in_plan = np.ones((len(cands), H), dtype=bool)
    a = np.round(x[model.layout["a"]]).astype(bool)
    fee_sources = [p for p, src in enumerate(model.sources) if cands[src.offer].fixed_monthly > 0]
    for q, p in enumerate(fee_sources):
        in_plan[model.sources[p].offer] = a[model.a_index[q]]
    status = "optimal" if result.status == 0 else ("node limit reached: best plan found" if node_limit is not None and result.status == 4 else "time limit reached: best plan found")
    eta = float(x[model.layout["eta"]][0]) if "eta" in model.layout else None
    return Solved(nodes, source_months(cands, H, in_plan), status, result.mip_gap, model, result.fun, eta)


def supply_by_month(cands: list[Candidate], months: int) -> np.ndarray:
    """The most tasks all candidates together can serve each month (nothing before an offer's delivery)."""
    most = np.zeros(months)
    for cand in cands:
        avail = cand.available(months)
        top = max((c.max_nodes * c.tasks_node_month for c in cand.commits), default=0.0)
        if cand.source is not None:
            top += cand.source.cap_month
        most += np.where(avail > 0, top * np.where(avail > 0, avail, 1.0), 0.0)
    return most


def infeasible_problem(policy: PlanConfig, scen: Scenarios, cands: list[Candidate]) -> Problem:
    """Say which constraint, and which scenario, makes the plan impossible."""
    if not cands:
        return Problem("procure.yaml", None, "plan", "no acceptable offer to plan with (see `procure compare` for the reasons)")
    supply = supply_by_month(cands, scen.months)
    if policy.unserved_penalty_per_task is None:
        # months before any offer is delivered are priced unserved, not an error (nothing could serve them)
        short = np.where(supply[None, :] > 0, scen.demand - supply[None, :] * (1 + 1e-9), 0.0)
        if (short > 0).any():
            s, m = np.unravel_index(int(np.argmax(short)), short.shape)
            return Problem(
                "procure.yaml", None, "demand",
                f"scenario {scen.names[s]}, month {m + 1}: demand of {scen.demand[s, m]:,.0f} tasks exceeds the {supply[m]:,.0f} all usable offers can serve; "
                "add capacity (max_gpus, pricing.burst) or set plan.unserved_penalty_per_task",
            )
    vendors = {c.vendor for c in cands}
    if policy.max_vendor_share < 1 and len(vendors) == 1:
        return Problem("procure.yaml", None, "plan.max_vendor_share", f"{policy.max_vendor_share:g} needs at least two vendors; only {next(iter(vendors))} is usable")
    if policy.max_vendor_share < 1 and policy.max_vendor_share * len(vendors) < 1:
        return Problem("procure.yaml", None, "plan.max_vendor_share", f"{policy.max_vendor_share:g} x {len(vendors)} usable vendors is below 1: no split can serve the demand")
    if any(c.source is not None and c.source.spot for c in cands) and spot_limit(cands) < 1:
        return Problem("procure.yaml", None, "plan.max_spot_share", f"spot capacity may serve at most {spot_limit(cands):g} of each month's demand and the other offers cannot serve the rest; add capacity or raise plan.max_spot_share")
    if policy.cvar_limit is not None:
        return Problem("procure.yaml", None, "plan.cvar_limit", f"no plan keeps the CVaR of monthly spend at or below {policy.cvar_limit:,.0f}; raise the limit (see `procure plan --frontier`)")
    return Problem("procure.yaml", None, "plan.max_vendor_share", f"no plan meets the vendor share limit {policy.max_vendor_share:g} with the capacity the offers can supply")


# --- dispatch and figures -----------------------------------------------------------------------


@dataclass
class Outcome:
    """Every scenario-month dispatched: committed first, then the cheapest pay-as-used source with room."""

    capacity: np.ndarray  # (H,) committed tasks a month
    spend: np.ndarray  # (S, H) monthly spend, unserved tasks at the penalty
    served: np.ndarray  # (S, H)
    payg: np.ndarray  # (S, H) tasks served pay-as-used
    by_source: dict[int, np.ndarray]  # candidate -> (S, H) tasks
    by_unit: np.ndarray  # (U,) expected tasks served by each commitment unit
    unserved: np.ndarray
    commit_cost: np.ndarray | None = None  # (H,) what the commitments and their fees cost a month, used or not
    beyond: dict[int, float] = field(default_factory=dict)  # month index past the horizon -> committed spend (whole terms)

    @property
    def beyond_total(self) -> float:
        return float(sum(self.beyond.values()))

    def beyond_pv(self, delta: np.ndarray) -> float:
        return float(sum(amount * pv_months(delta, m, m) for m, amount in self.beyond.items()))


def fixed_spend(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, months: int) -> tuple[np.ndarray, np.ndarray, dict[int, float]]:
    """Committed capacity a month, what commitments and fixed fees cost a month, and committed spend past the horizon.

    An offer's fixed fees and staff are paid in the months it holds committed capacity (its whole term) or its
    pay-as-used source is switched on; a commitment's rent is paid for its whole term."""
    capacity = np.zeros(months)
    commit_cost = np.zeros(months)
    beyond: dict[int, float] = {}
    active = source_months(cands, months, in_plan)
    holds = np.zeros((len(cands), months), dtype=bool)
    for u, n in zip(units, nodes):
        if n <= 0:
            continue
        cand = cands[u.commit.offer]
        capacity[u.first : u.last + 1] += n * u.commit.tasks_node_month * cand.available(months)[u.first : u.last + 1]
        commit_cost[u.first : u.last + 1] += n * u.commit.cost_node_month
        holds[u.commit.offer, u.first : u.last + 1] = True
        for m in range(u.last + 1, u.term_end + 1):
            beyond[m] = beyond.get(m, 0.0) + n * u.commit.cost_node_month + cand.fixed_monthly
    for i, cand in enumerate(cands):
        if cand.fixed_monthly > 0:
            paid = holds[i] | (active[i] if cand.source is not None else False)
            commit_cost += cand.fixed_monthly * paid
    return capacity, commit_cost, beyond


def spot_limit(cands: list[Candidate]) -> float:
    """The most of a month's demand spot sources may serve together (plan.max_spot_share; 1 without spot)."""
    return min((c.source.share_limit for c in cands if c.source is not None and c.source.spot), default=1.0)


def _serve(cands: list[Candidate], active: np.ndarray, rest: np.ndarray, month: np.ndarray, demand: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray], np.ndarray]:
    """Serve `rest` (demand above the committed capacity; any shape whose last axis is indexed by `month`) by the
    cheapest pay-as-used source with room in each month; spot sources together serve at most spot_limit x `demand`
    (the shape of `rest`). Returns spend, tasks served pay-as-used, by source, and the rest."""
    left = spot_limit(cands) * np.asarray(demand, dtype=float)
    spend = np.zeros_like(rest)
    payg = np.zeros_like(rest)
    by_source: dict[int, np.ndarray] = {}
    order = sorted((c.source for c in cands if c.source is not None and active[c.source.offer].any()), key=lambda s: (s.price_per_task, cands[s.offer].id))
    for source in order:
        avail = cands[source.offer].available(active.shape[1])
        with np.errstate(invalid="ignore"):
            room = np.where(active[source.offer] & (avail > 0), source.cap_month * np.where(avail > 0, avail, 1.0), 0.0)[month]
        take = np.minimum(rest, room)
        if source.spot:
            take = np.minimum(take, left)
            left = left - take
        rest = rest - take
        spend = spend + take * source.price_per_task
        payg = payg + take
        by_source[source.offer] = take
    return spend, payg, by_source, rest


def dispatch(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, scen: Scenarios, penalty: float | None) -> Outcome:
    S, H = scen.demand.shape
    capacity, commit_cost, beyond = fixed_spend(cands, units, nodes, in_plan, H)
    active = source_months(cands, H, in_plan)
    demand = scen.demand
    from_commit = np.minimum(demand, capacity[None, :])
    extra, payg, by_source, rest = _serve(cands, active, demand - from_commit, np.arange(H), demand)
    spend = commit_cost[None, :] + extra
    if penalty is not None:
        spend = spend + rest * penalty
    served = demand - rest
    # Committed tasks by unit, in proportion to each unit's share of the month's committed capacity.
    by_unit = np.zeros(len(units))
    expected_commit = scen.probability @ from_commit
    for j, (u, n) in enumerate(zip(units, nodes)):
        months = slice(u.first, u.last + 1)
        own = n * u.commit.tasks_node_month * cands[u.commit.offer].available(H)[months]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(capacity[months] > 0, own / capacity[months], 0.0)
        by_unit[j] = float((share * expected_commit[months]).sum())
    return Outcome(capacity, spend, served, payg, by_source, by_unit, rest, commit_cost, beyond)


def banded_cost(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, bands: Bands, scen: Scenarios, penalty: float | None, delta: np.ndarray) -> float:
    """The present-value cost of a plan as the solver sees it: each band served at its mean demand."""
    H = scen.months
    capacity, commit_cost, beyond = fixed_spend(cands, units, nodes, in_plan, H)
    active = source_months(cands, H, in_plan)
    rest = np.maximum(bands.demand - capacity[bands.month], 0.0)
    extra, _, _, rest = _serve(cands, active, rest, bands.month, bands.demand)
    if penalty is not None:
        extra = extra + rest * penalty
    return float(commit_cost @ delta[:H]) + float((bands.weight * delta[bands.month]) @ extra) + sum(a * pv_months(delta, m, m) for m, a in beyond.items())


def breakpoints(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, months: int) -> list[np.ndarray]:
    """Per month, the demands at which the plan's cost of one more task changes: the committed capacity, then the
    committed capacity plus the room of each pay-as-used source in the order they serve."""
    capacity, _, _ = fixed_spend(cands, units, nodes, in_plan, months)
    active = source_months(cands, months, in_plan)
    order = sorted((c.source for c in cands if c.source is not None), key=lambda s: (s.price_per_task, cands[s.offer].id))
    out = []
    for m in range(months):
        level = float(capacity[m])
        points = [level] if level > 0 else []
        for source in order:
            if active[source.offer, m]:
                level += source.cap_month * cands[source.offer].available(months)[m]
                if math.isfinite(level):
                    points.append(level)
        out.append(np.array(points))
    return out


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return float(values[order][min(int(np.searchsorted(cum, q * cum[-1] - 1e-12)), len(values) - 1)])


def cvar(values: np.ndarray, weights: np.ndarray, alpha: float) -> float:
    """Rockafellar-Uryasev: CVaR = VaR + E[(L - VaR)+] / (1 - alpha), exact on a discrete distribution."""
    var = weighted_quantile(values, weights, alpha)
    return var + float(weights @ np.maximum(values - var, 0.0)) / weights.sum() / (1 - alpha)


@dataclass
class Figures:
    cost_per_task: float | None
    pv_cost: float
    p90: float
    cvar: float
    unused: float
    payg_share: float
    monthly: float
    unserved: float = 0.0
    beyond: float = 0.0


def path_losses(out: Outcome, months: int) -> np.ndarray:
    """Each path's whole cost per month of the horizon: its spend over the horizon plus the committed spend past it
    (the same for every path), over the horizon's months. The loss whose CVaR the plan reports and limits."""
    return (out.spend.sum(axis=1) + out.beyond_total) / months


def figures(out: Outcome, scen: Scenarios, delta: np.ndarray, alpha: float) -> Figures:
    prob = scen.probability
    pv_cost = float(prob @ (out.spend @ delta[: scen.months])) + out.beyond_pv(delta)
    pv_tasks = float(prob @ (out.served @ delta[: scen.months]))
    weights = np.repeat(prob / scen.months, scen.months)
    spend = out.spend.ravel()
    unused = np.maximum(out.capacity[None, :] - scen.demand, 0.0)
    committed = float(out.capacity.sum())
    demand = float(prob @ scen.demand.sum(axis=1))
    return Figures(
        cost_per_task=pv_cost / pv_tasks if pv_tasks > 0 else None,
        pv_cost=pv_cost,
        p90=weighted_quantile(spend, weights, 0.9),
        cvar=cvar(path_losses(out, scen.months), prob, alpha),
        unused=float(prob @ unused.sum(axis=1)) / committed if committed > 0 else 0.0,
        payg_share=float(prob @ out.payg.sum(axis=1)) / max(float(prob @ out.served.sum(axis=1)), 1e-300),
        monthly=float(prob @ out.spend.mean(axis=1)),
        unserved=float(prob @ out.unserved.sum(axis=1)) / demand if demand > 0 else 0.0,
        beyond=out.beyond_total,
    )


def plan_lines(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, out: Outcome, scen: Scenarios) -> list[PlanLine]:
    total = float(scen.probability @ out.served.sum(axis=1)) or 1.0
    lines: list[PlanLine] = []
    for j, (u, n) in enumerate(zip(units, nodes)):
        if n <= 0:
            continue
        cand = cands[u.commit.offer]
        lines.append(PlanLine(
            offer=cand.id, vendor=cand.vendor, role="commit", gpus=int(n) * u.commit.node_gpus, term_months=u.commit.term_months, price=u.commit.price,
            price_unit="gpu_hour", start_month=u.first + 1, end_month=u.last + 1, option=u.commit.option, expected_tasks_share=out.by_unit[j] / total,
            term_end_month=u.term_end + 1,
        ))
    for i, tasks in sorted(out.by_source.items(), key=lambda kv: cands[kv[0]].id):
        if tasks.max() <= 0:
            continue
        source = cands[i].source
        assert source is not None
        gpus = int(math.ceil(float(tasks.max()) / source.tasks_per_gpu_month - 1e-9)) if source.tasks_per_gpu_month else None
        lines.append(PlanLine(
            offer=cands[i].id, vendor=cands[i].vendor, role="pay_as_used", gpus=gpus, term_months=None, price=source.price, price_unit=source.price_unit,
            expected_tasks_share=float(scen.probability @ tasks.sum(axis=1)) / total,
        ))
    return lines


def scenario_picks(out: Outcome, scen: Scenarios, delta: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Low, base and high (the lowest, middle and highest third of sampled paths by total demand, or each explicit path), and the worst 10% by cost per task."""
    pv_cost = out.spend @ delta[: scen.months] + out.beyond_pv(delta)
    pv_tasks = out.served @ delta[: scen.months]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_task = np.where(pv_tasks > 0, pv_cost / pv_tasks, np.nan)
    picks: list[tuple[str, np.ndarray]] = []
    if scen.sampled:
        # Thirds of the sampled paths by total demand: each row is a third of the probability, so a
        # reader sees what a low, a middle and a high outcome cost, not one path of 500.
        order = np.argsort(scen.demand.sum(axis=1), kind="stable")
        picks += list(zip(("low", "base", "high"), np.array_split(order, 3)))
    else:
        picks += [(name, np.array([i])) for i, name in enumerate(scen.names)]
    # The worst 10%: the scenarios with the highest cost per task, up to a tenth of the probability.
    ranking = np.argsort(np.nan_to_num(-per_task, nan=np.inf), kind="stable")
    cum = np.cumsum(scen.probability[ranking])
    picks.append(("worst 10%", ranking[: max(1, int(np.searchsorted(cum, 0.1 - 1e-12)) + 1)]))
    return picks


def scenario_rows(out: Outcome, scen: Scenarios, delta: np.ndarray) -> list[ScenarioRow]:
    """The plan's figures in each of `scenario_picks`."""
    pv_cost = out.spend @ delta[: scen.months] + out.beyond_pv(delta)
    pv_tasks = out.served @ delta[: scen.months]
    committed = out.capacity.sum()
    unused = np.maximum(out.capacity[None, :] - scen.demand, 0.0).sum(axis=1)

    def row(name: str, pick: np.ndarray) -> ScenarioRow:
        w = scen.probability[pick]
        tasks = float(w @ pv_tasks[pick])
        served = float(w @ out.served[pick].sum(axis=1))
        return ScenarioRow(
            name=name, probability=float(w.sum()), demand_per_month=float(w @ scen.demand[pick].mean(axis=1)) / float(w.sum()),
            cost_per_task=float(w @ pv_cost[pick]) / tasks if tasks > 0 else None,
            unused_share=float(w @ unused[pick]) / (committed * float(w.sum())) if committed > 0 else 0.0,
            pay_as_used_share=float(w @ out.payg[pick].sum(axis=1)) / served if served > 0 else 0.0,
            max_monthly_spend=float(out.spend[pick].max()),
            unserved_share=float(w @ out.unserved[pick].sum(axis=1)) / max(float(w @ scen.demand[pick].sum(axis=1)), 1e-300),
        )

    return [row(name, pick) for name, pick in scenario_picks(out, scen, delta)]


# --- the fixed plan under changed inputs --------------------------------------------------------

DEMAND_SHIFTS = ((-0.5, "Demand −50%"), (-0.3, "Demand −30%"), (0.0, "Demand as planned"), (0.3, "Demand +30%"))
PRICE_CASE = (0.2, "Market prices +20%")  # pay-as-used rent and index-linked commitments, as the hedging stress moves the index
AVAILABILITY_POINT = 0.01  # one point less availability: every GPU-hour serves 1% fewer tasks


def _slower(cands: list[Candidate], units: list[Unit], keep: dict[int, float]) -> tuple[list[Candidate], list[Unit]]:
    """The portfolio with candidate i's GPU-hours serving keep[i] of their tasks: commitments deliver less,
    pay-as-used GPU-hours cost more per task (per-token prices do not change)."""
    commits = {id(u.commit): replace(u.commit, tasks_node_month=u.commit.tasks_node_month * keep.get(u.commit.offer, 1.0)) for u in units}
    slow_units = [Unit(commits[id(u.commit)], u.first, u.last, u.end) for u in units]
    slow = []
    for i, c in enumerate(cands):
        k = keep.get(i, 1.0)
        if k != 1.0 and c.source is not None and c.source.price_unit == "gpu_hour":
            c = replace(c, source=replace(c.source, price_per_task=c.source.price_per_task / k, cap_month=c.source.cap_month * k))
        slow.append(c)
    return slow, slow_units


def _dearer(cands: list[Candidate], units: list[Unit], move: float, index_linked: set[str]) -> tuple[list[Candidate], list[Unit]]:
    """Market prices `move` higher: every pay-as-used rent and every index-linked commitment's rent."""
    dear = []
    for c in cands:
        s = c.source
        if s is not None:
            rent_per_task = s.price if s.price_unit == "task" else (s.price * HOURS_PER_MONTH / s.tasks_per_gpu_month if s.tasks_per_gpu_month else 0.0)
            c = replace(c, source=replace(s, price_per_task=s.price_per_task + move * rent_per_task))
        dear.append(c)
    commits = {}
    for u in units:
        cm = u.commit
        rise = move * cm.price * cm.node_gpus * HOURS_PER_MONTH if cands[cm.offer].id in index_linked else 0.0
        commits[id(cm)] = replace(cm, cost_node_month=cm.cost_node_month + rise)
    return dear, [Unit(commits[id(u.commit)], u.first, u.last, u.end) for u in units]


def case_figures(name: str, factor: float, out: Outcome, scen: Scenarios, delta: np.ndarray, cands: list[Candidate], pick: np.ndarray | None = None) -> PlanCase:
    """Expected figures of one dispatch, over every scenario or the ones picked (their probabilities renormalised)."""
    idx = np.arange(scen.count) if pick is None else pick
    p = scen.probability[idx]
    w = p / p.sum()
    demand, spend, served = scen.demand[idx], out.spend[idx], out.served[idx]
    pv_tasks = float(w @ (served @ delta))
    cap = out.capacity
    idle = np.maximum(cap[None, :] - demand, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        idle_share = np.where(cap[None, :] > 0, idle / cap[None, :], 0.0)
    commit_cost = out.commit_cost if out.commit_cost is not None else np.zeros(scen.months)
    payg_spend = sum(float(w @ tasks[idx].sum(axis=1)) * cands[i].source.price_per_task for i, tasks in out.by_source.items() if cands[i].source is not None)
    total_served = float(w @ served.sum(axis=1))
    total_demand = float(w @ demand.sum(axis=1))
    return PlanCase(
        name=name, demand_factor=factor, probability=float(p.sum()), demand_per_month=float(w @ demand.mean(axis=1)),
        cost_per_task=(float(w @ (spend @ delta)) + out.beyond_pv(delta)) / pv_tasks if pv_tasks > 0 else None,
        monthly_spend=float(w @ spend.mean(axis=1)), total_spend=float(w @ spend.sum(axis=1)),
        unused_commitment=float(w @ (idle_share @ commit_cost)), unused_share=float(w @ idle.sum(axis=1)) / float(cap.sum()) if cap.sum() > 0 else 0.0,
        pay_as_used_spend=payg_spend, pay_as_used_share=float(w @ out.payg[idx].sum(axis=1)) / total_served if total_served > 0 else 0.0,
        unserved_share=float(w @ out.unserved[idx].sum(axis=1)) / total_demand if total_demand > 0 else 0.0,
    )


def stress(
    cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, scen: Scenarios, penalty: float | None, delta: np.ndarray,
    index_linked: set[str] | None = None, claims: set[str] | None = None, claims_factor: float = 1.0,
) -> PlanStress:
    """The chosen portfolio held fixed and dispatched again (`dispatch`, the plan's own rule) with one input
    changed: every demand path scaled, market prices 20% higher, each committed vendor gone, availability one
    point lower, vendor-claimed throughput at the low end of its range."""
    base = dispatch(cands, units, nodes, in_plan, scen, penalty)
    prob = scen.probability
    cases = []
    for change, name in DEMAND_SHIFTS:
        shifted = scen if change == 0 else replace(scen, demand=scen.demand * (1 + change))
        out = base if change == 0 else dispatch(cands, units, nodes, in_plan, shifted, penalty)
        cases.append(case_figures(name, 1 + change, out, shifted, delta, cands))
    move, name = PRICE_CASE
    dear, dear_units = _dearer(cands, units, move, index_linked or set())
    cases.append(case_figures(name, 1.0, dispatch(dear, dear_units, nodes, in_plan, scen, penalty), scen, delta, dear))
    cases += [case_figures(name, 1.0, base, scen, delta, cands, pick) for name, pick in scenario_picks(base, scen, delta)]

    def extra(out: Outcome) -> np.ndarray:
        """Expected extra spend by month against the plan."""
        return prob @ (out.spend - base.spend)

    first: dict[str, tuple[int, list[str]]] = {}
    for u, n in sorted(zip(units, nodes), key=lambda un: un[0].first):
        if n > 0:
            cand = cands[u.commit.offer]
            month, offers = first.setdefault(cand.vendor, (u.first, []))
            if cand.id not in offers:
                offers.append(cand.id)
    vendors = []
    demand_total = float(prob @ scen.demand.sum(axis=1)) or 1.0
    for vendor, (month, offers) in sorted(first.items(), key=lambda kv: (kv[1][0], kv[0])):
        gone = np.array([c.vendor == vendor for c in cands])
        kept = np.array([0 if gone[u.commit.offer] else n for u, n in zip(units, nodes)], dtype=int)
        out = dispatch(cands, units, kept, (in_plan & ~gone[:, None]) if np.ndim(in_plan) == 2 else (in_plan & ~gone), scen, penalty)
        more = extra(out)
        vendors.append(VendorStress(
            vendor=vendor, offers=offers, first_month=month + 1, extra_spend=float(more.sum()), extra_first_month=float(more[month]),
            unserved_share=float(prob @ out.unserved.sum(axis=1)) / demand_total,
        ))

    slow_cands, slow_units = _slower(cands, units, {i: 1 - AVAILABILITY_POINT for i in range(len(cands))})
    availability = float(extra(dispatch(slow_cands, slow_units, nodes, in_plan, scen, penalty)).sum())
    used = {cands[u.commit.offer].id for u, n in zip(units, nodes) if n > 0} | {cands[i].id for i, t in base.by_source.items() if t.max() > 0}
    claimed = {i for i, c in enumerate(cands) if c.id in (claims or set()) and c.id in used}
    claims_extra = None
    if claimed and claims_factor < 1:
        claim_cands, claim_units = _slower(cands, units, {i: claims_factor for i in claimed})
        claims_extra = float(extra(dispatch(claim_cands, claim_units, nodes, in_plan, scen, penalty)).sum())

    hours = np.zeros(scen.months)
    gpu_hour_rent = np.zeros(scen.months)
    task_rent = 0.0
    for i, tasks in base.by_source.items():
        source = cands[i].source
        if source is None:
            continue
        expected = prob @ tasks  # (H,) tasks
        if source.price_unit == "gpu_hour" and source.tasks_per_gpu_month:
            gpu_hours = expected / source.tasks_per_gpu_month * HOURS_PER_MONTH
            hours += gpu_hours
            gpu_hour_rent += gpu_hours * source.price
        else:
            task_rent += float(expected.sum()) * source.price
    return PlanStress(
        cases=cases, vendors=vendors, availability_point=availability, claims_low_end=claims_extra, claims_factor=claims_factor, pay_as_used_gpu_hours=[float(h) for h in hours],
        pay_as_used_gpu_hour_rent=[float(r) for r in gpu_hour_rent], pay_as_used_task_rent=task_rent,
    )


# --- single offers ------------------------------------------------------------------------------


def single_offer(cand: Candidate, index: int, scen: Scenarios, delta: np.ndarray, penalty: float | None, before: float | None = None) -> tuple[float, list[Unit], np.ndarray] | None:
    """The best plan with one offer alone (its commitments and its own pay-as-used capacity), risk-neutral.

    Exact by enumeration: per term block from its delivery, every node count and option; blocks are independent.
    The months before its delivery are unserved at `before` (the plan's unserved price). None when the offer alone
    cannot serve every scenario from its delivery (and no unserved penalty is set)."""
    S, H = scen.demand.shape
    prob = scen.probability
    src = cand.source
    avail = cand.available(H)
    start = min(cand.start, H)
    waiting = scen.demand[:, :start]
    if start and before is None and penalty is None:
        return None
    lost = float(prob @ (waiting @ delta[:start])) * (penalty if penalty is not None else before) if start else 0.0  # type: ignore[operator]

    def recourse(short: np.ndarray, share: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Expected cost of a shortfall (any shape ending in (S, months)) met by the own source, then the penalty."""
        room = (src.cap_month * share) if src is not None else np.zeros_like(share)
        if src is not None and src.spot:
            room = np.minimum(room, src.share_limit * d)  # spot serves at most plan.max_spot_share of the demand
        used = np.minimum(short, room)
        cost = used * (src.price_per_task if src is not None else 0.0)
        left = short - used
        if penalty is not None:
            cost = cost + left * penalty
        else:
            cost = np.where(left > 1e-9 * np.maximum(short, 1.0), np.inf, cost)
        return cost

    # Options that cover the horizon with blocks; one option throughout (a subset of what the portfolio may do).
    best: tuple[float, list[Unit], np.ndarray] | None = None
    commits = cand.commits or [None]
    for commit in commits:
        units: list[Unit] = []
        nodes: list[int] = []
        total = lost
        term = max(1, commit.term_months) if commit is not None else H
        for first in range(start, H, term):
            last = min(H, first + term) - 1
            end = first + term - 1 if commit is not None else last
            d = scen.demand[:, first : last + 1]
            w = delta[first : last + 1]
            share = avail[first : last + 1]
            if commit is None:
                grid = np.zeros(1)
            else:
                top = min(commit.max_nodes, math.ceil(float(d.max()) / commit.tasks_node_month) if commit.tasks_node_month > 0 else 0)
                top = max(top, commit.min_nodes) if top > 0 else 0
                grid = np.concatenate([[0], np.arange(commit.min_nodes if commit.min_nodes > 0 else 1, top + 1)]) if top > 0 else np.zeros(1)
                if len(grid) > MAX_GRID:
                    grid = np.unique(np.round(np.linspace(0, top, MAX_GRID)).astype(int))
                    grid = grid[(grid == 0) | (grid >= commit.min_nodes)]
            per_node = commit.tasks_node_month if commit is not None else 0.0
            expected = np.empty(len(grid))
            step = max(1, GRID_CELLS // max(1, d.size))  # node counts per chunk: memory stays bounded
            for lo in range(0, len(grid), step):
                short = np.maximum(d[None, :, :] - grid[lo : lo + step, None, None] * per_node * share[None, None, :], 0.0)
                with np.errstate(invalid="ignore"):
                    expected[lo : lo + step] = np.einsum("gsm,s,m->g", recourse(short, share, d), prob, w)
            # A commitment costs its whole term (past the horizon too); the offer's fees are paid in the months it
            # holds capacity or its own pay-as-used source serves (every month of the block when it has one).
            whole = pv_months(delta, first, end)
            fees_on = cand.fixed_monthly * (whole if commit is not None else 0.0)
            fees_off = cand.fixed_monthly * float(w.sum()) if src is not None else 0.0
            fixed_part = grid * (commit.cost_node_month * whole if commit is not None else 0.0) + np.where(grid > 0, fees_on + (fees_off if commit is None else 0.0), fees_off)
            block = expected + fixed_part
            g = int(np.argmin(block))
            if not math.isfinite(block[g]):
                total = math.inf
                break
            total += float(block[g])
            if commit is not None:
                units.append(Unit(commit, first, last, end))
                nodes.append(int(grid[g]))
        if math.isfinite(total) and (best is None or total < best[0] - 1e-9):
            best = (total, units, np.array(nodes, dtype=int))
    return best


# --- the plan -----------------------------------------------------------------------------------


def _scales(cands: list[Candidate], scen: Scenarios) -> tuple[float, float]:
    tasks = float(scen.demand.mean()) or 1.0
    prices = [s.price_per_task for c in cands if (s := c.source) is not None] + [
        cm.cost_node_month / cm.tasks_node_month for c in cands for cm in c.commits if cm.tasks_node_month > 0
    ]
    price = float(np.median(prices)) if prices else 1.0
    return max(tasks * price, 1e-9), tasks


def _reindexed(cands: list[Candidate], keep: list[int]) -> list[Candidate]:
    """The kept candidates, renumbered (commitments and sources point at their candidate's position)."""
    out = []
    for new, old in enumerate(keep):
        cand = cands[old]
        out.append(replace(cand, commits=[replace(c, offer=new) for c in cand.commits], source=replace(cand.source, offer=new) if cand.source else None))
    return out


def shortlist(
    cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float, penalty: float | None = None,
    alone: list[float | None] | None = None,
) -> tuple[list[int], float | None]:
    """With more offers than plan.max_candidates, keep the ones the linear relaxation uses most, and always the best
    single offers (`alone`: each offer's cost alone; a quarter of the shortlist at least): the relaxation spreads fixed
    fees thinly, so an offer dear by the hour but without fees can look unused there while it is the best alone.

    Returns the kept positions and the relaxation's objective over every offer: a proven lower bound,
    so the distance of the plan from the best plan over all offers can be stated."""
    if len(cands) <= policy.max_candidates:
        return list(range(len(cands))), None
    from scipy.optimize import Bounds, LinearConstraint, milp

    model = build_model(cands, scen, policy, delta, risk, money, tasks, penalty)
    A, row_lb, row_ub = model.matrix()
    from procure.io.solvecache import interruptible

    relaxed = interruptible(lambda: milp(model.c, constraints=LinearConstraint(A, row_lb, row_ub), bounds=Bounds(model.lb, model.ub), options={"time_limit": float(policy.time_limit_s), "disp": False}))
    if relaxed.x is None:
        return list(range(len(cands))), None
    x = relaxed.x
    use = np.zeros(len(cands))
    n_months = [float(cands[u.commit.offer].available(scen.months)[u.first : u.last + 1].sum()) for u in model.units]
    n = x[model.layout["n"]]
    for j, u in enumerate(model.units):
        use[u.commit.offer] += n[j] * u.commit.tasks_node_month * n_months[j]
    z = x[model.layout["z"]].reshape(len(model.sources), -1) if model.sources else np.zeros((0, 1))
    for p, source in enumerate(model.sources):
        use[source.offer] += float(z[p].sum())
    score = [min([c.cost_node_month / c.tasks_node_month for c in cand.commits if c.tasks_node_month > 0] + ([cand.source.price_per_task] if cand.source else [math.inf])) for cand in cands]
    order = sorted(range(len(cands)), key=lambda i: (-use[i], score[i], cands[i].id))
    keep = set(order[: policy.max_candidates])
    if alone is not None:
        best = sorted((a, cands[i].id, i) for i, a in enumerate(alone) if a is not None and math.isfinite(a))
        keep |= {i for _, _, i in best[: max(1, policy.max_candidates // 4)]}
    return sorted(keep), float(relaxed.fun)


def whole_check(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float, penalty: float | None,
                chosen: Chosen) -> tuple[str, bool]:
    """Whether any offer the shortlist left out could enter a better plan: the whole program over every offer, on the
    demand bands and tail paths of the shortlist's last solve, with one more row, objective <= the shortlist plan's
    objective x (1 - plan.mip_gap, at least CHECK_TOLERANCE). Infeasible proves that no plan over all offers is cheaper by more than the gap
    (the shortlist's plan is then within the solver's gap of the whole optimum). Returns what was found and whether a
    better plan exists (then the whole program is solved)."""
    from scipy.sparse import csr_array, vstack

    from procure.io.solvecache import solve_milp

    model = build_model(cands, scen, policy, delta, risk, money, tasks, penalty, chosen.model.bands, chosen.model.tail)
    A, row_lb, row_ub = model.matrix()
    tolerance = max(float(policy.mip_gap), CHECK_TOLERANCE)
    cutoff = float(chosen.solved.objective) - tolerance * abs(float(chosen.solved.objective)) if chosen.solved.objective is not None else math.inf
    A = vstack([A, csr_array(model.c.reshape(1, -1))]).tocsr()
    options = {"time_limit": float(policy.time_limit_s), "mip_rel_gap": float(policy.mip_gap), "disp": False, **HIGHS_OPTIONS}
    result = solve_milp(model.c, A, np.append(row_lb, -np.inf), np.append(row_ub, cutoff), model.integrality, model.lb, model.ub, options)
    n = len(cands)
    if result.x is not None:
        return f"the program over all {n} usable offers has a cheaper plan than the shortlist's: the whole program is solved", True
    if result.status == 2:
        return (f"proven: the program over all {n} usable offers has no plan cheaper than the shortlist's by more than the solver's gap "
                f"({tolerance:.2%}), so no left-out offer can enter a better plan"), False
    return (f"not proven: the program over all {n} usable offers, with the shortlist's plan as a cutoff, did not finish within "
            f"plan.time_limit_s ({policy.time_limit_s:g} s); a left-out offer may improve the plan (raise plan.max_candidates to solve them all)"), False


@dataclass
class Chosen:
    """A plan the solver chose, after refining the demand bands and the CVaR's tail paths."""

    units: list[Unit]
    nodes: np.ndarray
    in_plan: np.ndarray
    solved: Solved
    model: Model
    band_gap: float
    rounds: int
    converged: bool


def initial_tail(scen: Scenarios, alpha: float) -> np.ndarray:
    """The paths the CVaR sees first: those with the most demand, 1.2 times the tail's probability (at least one)."""
    order = np.argsort(-scen.demand.sum(axis=1), kind="stable")
    cum = np.cumsum(scen.probability[order])
    return np.sort(order[: max(1, int(np.searchsorted(cum, min(1.0, 1.2 * (1 - alpha)) - 1e-12)) + 1)])


def solve_plan(
    cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float, penalty: float | None, node_limit: int | None = None,
) -> Chosen:
    """Solve, then refine until the answer holds on every scenario: bands that straddle a breakpoint of the chosen
    plan are split (the banded cost is then exact for it), and paths whose cost exceeds the CVaR threshold join the
    CVaR's paths (the CVaR is then the CVaR on every path, and a limit holds on all of them)."""
    H = scen.months
    bands = initial_bands(scen, policy.levels)
    tail = initial_tail(scen, policy.cvar_alpha) if risk.active else None
    converged = False
    for rounds in range(1, MAX_ROUNDS + 1):
        model = build_model(cands, scen, policy, delta, risk, money, tasks, penalty, bands, tail)
        solved = solve(model, policy, scen, cands, node_limit)
        units, nodes, in_plan = model.units, solved.nodes, solved.in_plan
        out = dispatch(cands, units, nodes, in_plan, scen, penalty)
        true = float(scen.probability @ (out.spend @ delta)) + out.beyond_pv(delta)
        banded = banded_cost(cands, units, nodes, in_plan, bands, scen, penalty, delta)
        gap = max(0.0, true / banded - 1) if banded > 0 else 0.0
        changed = False
        if gap > BAND_TOLERANCE:
            finer = split_bands(bands, scen, breakpoints(cands, units, nodes, in_plan, H))
            if finer is not None:
                bands, changed = finer, True
        if tail is not None and solved.eta is not None and len(tail) < scen.count:
            losses = path_losses(out, H) / money
            missing = np.setdiff1d(np.flatnonzero(losses > solved.eta + 1e-9 * max(1.0, abs(solved.eta))), tail)
            if len(missing):
                tail, changed = np.union1d(tail, missing), True
        if not changed:
            converged = True
            break
    if not risk.active:
        nodes = polish(cands, units, nodes, in_plan, scen, policy, delta, penalty)
    return Chosen(units, nodes, in_plan, solved, model, gap, rounds, converged)


def vendor_shares_ok(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, out: Outcome, scen: Scenarios, share: float) -> bool:
    """The vendor share rule as the program states it: committed capacity over the horizon plus expected pay-as-used tasks."""
    if share >= 1:
        return True
    by_vendor: dict[str, float] = {}
    for u, n in zip(units, nodes):
        cand = cands[u.commit.offer]
        by_vendor[cand.vendor] = by_vendor.get(cand.vendor, 0.0) + n * u.commit.tasks_node_month * float(cand.available(scen.months)[u.first : u.last + 1].sum())
    for i, tasks in out.by_source.items():
        by_vendor[cands[i].vendor] = by_vendor.get(cands[i].vendor, 0.0) + float(scen.probability @ tasks.sum(axis=1))
    total = sum(by_vendor.values())
    return total <= 0 or max(by_vendor.values()) <= share * total * (1 + 1e-9)


def polish(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, scen: Scenarios, policy: PlanConfig, delta: np.ndarray, penalty: float | None) -> np.ndarray:
    """The chosen commitments one node up or down, costed on every scenario, while that lowers the cost: the bands
    are exact within their tolerance, this makes the node counts exact on the scenarios themselves."""

    def cost(trial: np.ndarray) -> float | None:
        out = dispatch(cands, units, trial, in_plan, scen, penalty)
        if penalty is None and (out.unserved > 1e-9 * np.maximum(scen.demand, 1.0)).any():
            return None
        if not vendor_shares_ok(cands, units, trial, out, scen, policy.max_vendor_share):
            return None
        return float(scen.probability @ (out.spend @ delta)) + out.beyond_pv(delta)

    best = nodes.copy()
    best_cost = cost(best)
    if best_cost is None:
        return nodes
    for _ in range(100):
        improved = False
        for j, u in enumerate(units):
            if best[j] <= 0:
                continue
            for step in (-1, 1):
                trial = best.copy()
                trial[j] += step
                if trial[j] < u.commit.min_nodes or trial[j] > u.commit.max_nodes:
                    continue
                found = cost(trial)
                if found is not None and found < best_cost * (1 - 1e-12):
                    best, best_cost, improved = trial, found, True
        if not improved:
            break
    return best


def default_penalty(cands: list[Candidate]) -> float:
    """UNSERVED_DEFAULT_MULTIPLE x the dearest usable way to serve a task (an offer's cost per task, a pay-as-used
    price, a commitment's cost per task)."""
    costs = [c.cost_per_task for c in cands if c.cost_per_task] + [c.source.price_per_task for c in cands if c.source is not None]
    costs += [cm.cost_node_month / cm.tasks_node_month for c in cands for cm in c.commits if cm.tasks_node_month > 0]
    finite = [float(x) for x in costs if x is not None and math.isfinite(x) and x > 0]
    return UNSERVED_DEFAULT_MULTIPLE * max(finite) if finite else 1.0


def follows_demand(offer: Offer) -> bool:
    """Capacity that can follow demand: pay-as-used (burst, on demand, per token, billed by the hour, minute or second)
    or a term of a month."""
    return offer.pricing.burst is not None or offer.pricing.per_mtok is not None or offer.on_demand or offer.pricing.usage_billed or (offer.term_months or 0) == 1


def make_plan(
    ws: Workspace, as_of: date | None = None, frontier: bool = False, scenario_count: int | None = None, evaluation: tuple[Evaluation, CostInputs] | None = None
) -> PlanResult:
    """The plan for a workspace: commitments and pay-as-used sources over the demand scenarios."""
    config = ws.config
    policy = config.plan
    ev, inputs = evaluation or evaluate_with_inputs(ws, as_of)
    wl = config.workload
    scen = demand_scenarios(config, scenario_count)
    cands, excluded = candidates(ev, inputs, config.assumptions.fte_cost_year, wl.output_tokens, wl.success_rate, scen.months, config.horizon.expected_delay_weeks, policy.max_spot_share)
    delta = discount_factors(scen.months, config.assumptions.cost_of_capital)
    notes: list[str] = []
    if not cands:
        raise InputError([infeasible_problem(policy, scen, cands)])
    if policy.unserved_penalty_per_task is None:
        # Demand beyond what every usable offer together can serve once delivered is an error that names the
        # scenario and month (price it with plan.unserved_penalty_per_task to plan anyway); the default unserved
        # price covers the months before delivery and the peaks not worth serving.
        supply = supply_by_month(cands, scen.months)
        if ((scen.demand > supply[None, :] * (1 + 1e-9)) & (supply[None, :] > 0)).any():
            raise InputError([infeasible_problem(policy, scen, cands)])
    vendors = {c.vendor for c in cands}
    if policy.max_vendor_share < 1 and (len(vendors) == 1 or policy.max_vendor_share * len(vendors) < 1):
        raise InputError([infeasible_problem(policy, scen, cands)])
    money, tasks = _scales(cands, scen)
    if policy.unserved_penalty_per_task is not None:
        penalty = float(policy.unserved_penalty_per_task)
        basis = "plan.unserved_penalty_per_task"
    else:
        penalty = default_penalty(cands)
        basis = f"default: {UNSERVED_DEFAULT_MULTIPLE:g}x the dearest usable cost per task (set plan.unserved_penalty_per_task to change it)"

    check_size(cands, scen, policy, Risk(policy.cvar_weight, policy.cvar_limit))  # before anything of that size is computed

    # Single offers: the baseline the plan must beat (each must serve every scenario from its delivery alone).
    singles = [(c.id, single_offer(c, i, scen, delta, policy.unserved_penalty_per_task, penalty)) for i, c in enumerate(cands)]
    best_single = min(((cid, s) for cid, s in singles if s is not None), key=lambda t: (t[1][0], t[0]), default=None)

    risk = Risk(policy.cvar_weight, policy.cvar_limit)
    keep, bound = shortlist(cands, scen, policy, delta, risk, money, tasks, penalty, [found[0] if found is not None else None for _, found in singles])
    plan_cands = _reindexed(cands, keep) if len(keep) < len(cands) else cands
    solver_cands = plan_cands
    chosen = solve_plan(plan_cands, scen, policy, delta, risk, money, tasks, penalty)
    solved, model = chosen.solved, chosen.model
    bound_gap = None
    check = None
    if bound is not None and solved.objective:
        bound_gap = max(0.0, (solved.objective - bound) / abs(solved.objective))
        notes.append(
            f"the solver chose among the {len(keep)} offers the linear relaxation uses most and the best single offers (of {len(cands)} usable, "
            f"plan.max_candidates {policy.max_candidates}); the plan is within {bound_gap:.2%} of the relaxation's bound over all of them"
        )
        check, better = whole_check(cands, scen, policy, delta, risk, money, tasks, penalty, chosen)
        notes.append(check)
        if better:
            plan_cands = solver_cands = cands
            chosen = solve_plan(cands, scen, policy, delta, risk, money, tasks, penalty)
            solved, model = chosen.solved, chosen.model
    units, nodes, in_plan = chosen.units, chosen.nodes, chosen.in_plan
    out = dispatch(plan_cands, units, nodes, in_plan, scen, penalty)
    fig = figures(out, scen, delta, policy.cvar_alpha)

    single_block = SingleBest(offer=None, expected_cost_per_task=None)
    if best_single is not None:
        cid, (_, s_units, s_nodes) = best_single
        index = next(i for i, c in enumerate(cands) if c.id == cid)
        s_in = np.array([i == index for i in range(len(cands))])
        s_out = dispatch(cands, s_units, s_nodes, s_in, scen, penalty)
        s_fig = figures(s_out, scen, delta, policy.cvar_alpha)
        single_block = SingleBest(offer=cid, expected_cost_per_task=s_fig.cost_per_task, plan=plan_lines(cands, s_units, s_nodes, s_in, s_out, scen))
        # A single offer is a portfolio too: when the solver stopped at its gap above it (or the vendor
        # share rule does not bind), the single offer is the plan.
        if not risk.active and policy.max_vendor_share >= 1 and s_fig.pv_cost < fig.pv_cost * (1 - 1e-12):
            units, nodes, in_plan, out, fig, plan_cands = s_units, s_nodes, source_months(cands, scen.months, s_in), s_out, s_fig, cands
            notes.append(f"the best single offer ({cid}) is the plan: no combination the solver found does better")
    if solved.status != "optimal" and float(out.served.sum()) <= 0 < float(scen.demand.sum()):
        # With a penalty, serving nothing is feasible: a solver stopped early may hold nothing better.
        raise InputError([Problem(
            "procure.yaml", None, "plan.time_limit_s",
            f"the solver stopped at its time limit ({policy.time_limit_s:g} s) before finding a plan that serves any demand "
            "(its best leaves every task unserved at plan.unserved_penalty_per_task); raise plan.time_limit_s, or lower plan.levels or demand.scenarios",
        )])
    saving = saving_share = None
    if single_block.expected_cost_per_task is not None and fig.cost_per_task is not None:
        saving = single_block.expected_cost_per_task - fig.cost_per_task
        saving_share = saving / single_block.expected_cost_per_task
        if policy.max_vendor_share < 1 and saving < 0:
            notes.append(f"plan.max_vendor_share {policy.max_vendor_share:g} rules out the single offer; spreading across vendors costs {-saving:.5f} per task")
    lines = plan_lines(plan_cands, units, nodes, in_plan, out, scen)
    if len({line.offer for line in lines}) == 1 and best_single is not None and lines[0].offer == best_single[0]:
        if not any("is the plan" in n for n in notes):
            notes.append(f"the best single offer ({lines[0].offer}) is the plan: no combination does better")
    for line in lines:
        if line.role == "commit" and line.term_end_month and line.end_month and line.term_end_month > line.end_month:
            notes.append(
                f"{line.offer}: the {line.term_months}-month commitment from month {line.start_month} runs to month {line.term_end_month}, past the "
                f"{scen.months}-month horizon; a commitment costs its whole term, so its months {line.end_month + 1}-{line.term_end_month} are counted in full (no residual value)"
            )
    notes.append(
        f"unserved demand is priced at {penalty:.5f} {ev.currency} per task ({basis}); {fig.unserved:.1%} of the expected demand is left unserved"
    )
    if chosen.band_gap > BAND_TOLERANCE or not chosen.converged:
        notes.append(f"after {chosen.rounds} solves the chosen plan costs {chosen.band_gap:.2%} more on every scenario than on the demand bands the solver saw")
    if any(c.source is not None and c.source.cap_month == math.inf for c in cands if c.source and c.source.price_unit == "task"):
        notes.append("per-token offers without service.rate_limits are taken as able to serve any volume")
    deliveries = {c.id: c.start + 1 for c in cands}
    bridges = _bridge(plan_cands, units, nodes, in_plan, out, scen)
    bridge = [
        f"{b.offer} is delivered in month {b.delivery_month}: " + ("month 1 is" if b.delivery_month == 2 else f"months 1-{b.delivery_month - 1} are")
        + f" bridged by {', '.join(b.served_by) or 'nothing'}, {b.cost:,.0f} {ev.currency} expected over them"
        + (f", {b.unserved_share:.1%} of their demand unserved" if b.unserved_share > 0.0005 else "")
        for b in bridges
    ]
    notes += bridge

    headline = None
    offers_by_id = {o.id: o for o in inputs.offers}
    if not any(follows_demand(offers_by_id[c.id]) for c in cands if c.id in offers_by_id):
        would = [f"{oid} ({why})" for oid, why in sorted(excluded.items()) if oid in offers_by_id and follows_demand(offers_by_id[oid])]
        headline = (
            "No acceptable offer can follow demand (pay-as-used, or a one-month term): every commitment is paid whether demand comes or not, "
            f"so the plan leaves {fig.unused:.0%} of the committed capacity idle and {fig.unserved:.1%} of the demand unserved. "
            + ("Offers that would follow demand if they passed their gates: " + "; ".join(would) + "." if would else "No offer received can follow demand.")
        )
    elif fig.unserved > 0.01:
        headline = f"{fig.unserved:.1%} of the expected demand is left unserved: serving it costs more than {penalty:.5f} {ev.currency} per task ({basis})."
    if headline:
        notes.insert(0, headline)

    frontier_points = _frontier(solver_cands, scen, policy, delta, money, tasks, fig, penalty) if frontier else None
    alone: dict[str, float | None] = {}
    for i, (cid, found) in enumerate(singles):
        if found is None:
            alone[cid] = None
            continue
        only = np.array([j == i for j in range(len(cands))])
        alone[cid] = figures(dispatch(cands, found[1], found[2], only, scen, penalty), scen, delta, policy.cvar_alpha).cost_per_task
    return PlanResult(
        as_of=ev.as_of, currency=ev.currency, plan=lines, expected_cost_per_task=fig.cost_per_task, p90_monthly_spend=fig.p90, cvar=fig.cvar,
        cvar_alpha=policy.cvar_alpha, expected_unused_share=fig.unused, pay_as_used_share=fig.payg_share, expected_monthly_spend=fig.monthly,
        single_best=single_block, saving_per_task=saving, saving_share=saving_share, scenarios=scenario_rows(out, scen, delta), frontier=frontier_points,
        demand=DemandInfo(months=scen.months, start=scen.start, growth=scen.growth, volatility=scen.volatility, scenarios=scen.count, seed=scen.seed, sampled=scen.sampled),
        policy=policy,
        solver=SolverInfo(
            time_limit_s=policy.time_limit_s, mip_gap=policy.mip_gap, status=solved.status, gap=solved.gap, bound_gap=bound_gap, shortlist_check=check, variables=len(model.c), constraints=model.nrows,
            integers=int(model.integrality.sum()), nonzeros=model.nonzeros,
        ),
        candidates=[c.id for c in cands], excluded=excluded, notes=notes,
        single_offers=alone,
        stress=stress(
            plan_cands, units, nodes, in_plan, scen, penalty, delta, index_linked={o.id for o in ev.offers if o.pricing_basis == "index"},
            claims={o.id for o in ev.offers if o.points_source == "vendor_claim"}, claims_factor=claim_low_end(ws),
        ),
        headline=headline, unserved_share=fig.unserved, unserved_penalty_per_task=penalty, unserved_penalty_basis=basis, band_gap=chosen.band_gap,
        bands=len(model.bands) if model.bands is not None else 0, beyond_horizon_cost=fig.beyond, delivery=deliveries, bridge=bridge, bridges=bridges,
    )


def _bridge(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, out: Outcome, scen: Scenarios) -> list[Bridge]:
    """For each offer in the plan delivered after month 1: what serves the months before, and what they cost."""
    used = {u.commit.offer for u, n in zip(units, nodes) if n > 0} | {i for i, t in out.by_source.items() if t.max() > 0}
    lines = []
    prob = scen.probability
    for i in sorted(used, key=lambda i: cands[i].id):
        cand = cands[i]
        if cand.start == 0:
            continue
        before = slice(0, cand.start)
        servers = sorted({cands[u.commit.offer].id for u, n in zip(units, nodes) if n > 0 and u.first < cand.start} | {cands[j].id for j, t in out.by_source.items() if t[:, before].max(initial=0) > 0})
        spend = float(prob @ out.spend[:, before].sum(axis=1))
        unserved = float(prob @ out.unserved[:, before].sum(axis=1)) / max(float(prob @ scen.demand[:, before].sum(axis=1)), 1e-300)
        lines.append(Bridge(offer=cand.id, vendor=cand.vendor, delivery_month=cand.start + 1, served_by=servers, cost=spend, unserved_share=unserved))
    return lines


def _frontier(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, money: float, tasks: float, neutral: Figures, penalty: float | None) -> list[FrontierPoint]:
    """Expected cost against CVaR: the risk-neutral plan, the least-CVaR plan, and the plans between them that
    minimise expected cost + w x CVaR for weights w spread between (FRONTIER_WEIGHTS).

    A weighted plan is efficient: no plan has a lower expected cost at its CVaR or less (on the demand bands and
    tail paths it was solved on), so it is the frontier's point at the limit of its own CVaR. Weighted programs have
    no CVaR row to meet and are proven in a few nodes where a limited one may not finish (on the example a limit
    between the two ends did not finish within 60 s; its weighted neighbours are proven in seconds)."""
    # Each point is a whole plan whose figures are computed on every scenario; the solver sees at most
    # FRONTIER_LEVELS demand bands a month for it at first (refined like the plan's), and CVaR on whole paths.
    coarse = policy.model_copy(update={"levels": min(policy.levels, FRONTIER_LEVELS)})

    def run(risk: Risk) -> Figures | None:
        """A whole plan at this risk setting, or None when the solver finds none within its limits."""
        try:
            chosen = solve_plan(cands, scen, coarse, delta, risk, money, tasks, penalty, FRONTIER_NODES)
        except InputError:
            return None
        if chosen.solved.status.startswith("time limit"):
            return None  # stopped by the clock: another machine would find another plan
        return figures(dispatch(cands, chosen.units, chosen.nodes, chosen.in_plan, scen, penalty), scen, delta, policy.cvar_alpha)

    neutral_fig = (run(Risk()) or neutral) if policy.cvar_weight > 0 or policy.cvar_limit is not None else neutral
    points = [FrontierPoint(cvar_limit=None, expected_cost_per_task=neutral_fig.cost_per_task or 0.0, cvar=neutral_fig.cvar, p90_monthly_spend=neutral_fig.p90)]
    safest = run(Risk(weight=FRONTIER_SAFEST))
    if safest is None or safest.cvar > neutral_fig.cvar * (1 - 1e-6):
        return points  # no plan with a lower CVaR on every path was found
    between = []
    for w in np.geomspace(FRONTIER_WEIGHTS[0], FRONTIER_WEIGHTS[1], max(1, policy.frontier_points - 2)):
        f = run(Risk(weight=float(w)))
        # strictly between the two ends, on every path, and not a plan already shown
        if f is not None and safest.cvar * (1 + 1e-6) < f.cvar < neutral_fig.cvar * (1 - 1e-6) and all(abs(f.cvar - g.cvar) > 1e-6 * f.cvar for g in between):
            between.append(f)
    for f in sorted(between, key=lambda f: -f.cvar):
        points.append(FrontierPoint(cvar_limit=f.cvar, expected_cost_per_task=f.cost_per_task or 0.0, cvar=f.cvar, p90_monthly_spend=f.p90))
    points.append(FrontierPoint(cvar_limit=safest.cvar, expected_cost_per_task=safest.cost_per_task or 0.0, cvar=safest.cvar, p90_monthly_spend=safest.p90))
    return points
