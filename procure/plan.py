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
from datetime import date
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from procure.costing import HOURS_PER_MONTH, cost_arrays
from procure.demand import Scenarios, scenarios as demand_scenarios
from procure.errors import InputError, Problem
from procure.evaluate import CostInputs, Evaluation, OfferRecord, evaluate_with_inputs
from procure.models import Burst, Offer, PlanConfig
from procure.scenarios import claim_low_end
from procure.workspace import Workspace

# Node counts tried per term block for a single offer (beyond it, evenly spaced counts: memory stays bounded).
MAX_GRID = 257
GRID_CELLS = 4_000_000  # scenario-months x node counts evaluated at once
SOLVER = "HiGHS branch-and-cut through scipy.optimize.milp"
# HiGHS settings measured on the example and benchmarks/bench_plan.py (docs/plan.md, "Speed"): the model has few
# integers (node counts and offer switches) and a large continuous dispatch; HiGHS's presolve and its sub-MIP
# heuristics (RINS, RENS) cost most of the time there and neither changes the plan found, so both are off.
# Branch-and-cut, its cuts and the optimality gap are untouched: the result is as proven as before.
FRONTIER_LEVELS = 12  # demand levels a month the frontier's solves see (the plan itself uses plan.levels)
HIGHS_OPTIONS: dict[str, object] = {"presolve": False, "mip_heuristic_run_rins": False, "mip_heuristic_run_rens": False}


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


class ScenarioRow(BaseModel):
    name: str
    probability: float
    demand_per_month: float = Field(description="average tasks per month")
    cost_per_task: float | None
    unused_share: float
    pay_as_used_share: float
    max_monthly_spend: float


class SingleBest(BaseModel):
    offer: str | None
    expected_cost_per_task: float | None
    plan: list[PlanLine] = Field(default_factory=list)


class FrontierPoint(BaseModel):
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


class PlanCase(BaseModel):
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


class PlanResult(BaseModel):
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


@dataclass
class Candidate:
    id: str
    vendor: str
    fixed_monthly: float
    commits: list[Commit] = field(default_factory=list)
    source: Source | None = None


@dataclass
class Unit:
    """A commitment variable: one commit of one candidate over one term block of months."""

    commit: Commit
    first: int  # month index, 0-based
    last: int  # inclusive


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


def candidates(ev: Evaluation, inputs: CostInputs, fte_cost_year: float, output_tokens: int, success_fallback: float) -> tuple[list[Candidate], dict[str, str]]:
    """The offers the plan may use, sorted by id (file order never matters), with their commitments and sources."""
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
        m = record.metrics
        fx = float(inputs.columns["fx"][row])
        cand = Candidate(record.id, record.vendor, float(m["fixed_monthly"] or 0.0))
        index = len(found)
        if record.pricing_basis == "per_token":
            cand.source = Source(index, float(m["rent_per_task"]), _token_cap(offer, output_tokens, float(m["success_rate"] or success_fallback)), float(m["rent_per_task"]), "task", None)
            found.append(cand)
            continue
        node = offer.service.node_gpus
        per_gpu_month = float(m["capacity_per_gpu_hour"]) * HOURS_PER_MONTH
        supply = offer.supply_gpus
        spot = getattr(record, "role", "primary") == "burst"
        if not offer.on_demand and not spot:
            low = math.ceil(offer.committed_gpus / node)
            high = max(supply // node, low)
            price = float(m["rent"] or 0.0)
            cand.commits.append(Commit(index, "base", low, high, node, offer.contract_months, price, float(m["variable_gpu_hour"]) * node * HOURS_PER_MONTH, per_gpu_month * node))
        for k, option in enumerate(offer.pricing.commit_options if not spot else []):
            low = math.ceil(option.gpus / node)
            high = max(supply // node, low)
            commit = Commit(index, f"{option.gpus}+ GPUs, {option.term_months} months", low, high, node, option.term_months, option.gpu_hour * fx, math.nan, per_gpu_month * node)
            cand.commits.append(commit)
            pending.append((commit, row, {"basis": "gpu_hour", "gpu_hour": option.gpu_hour, "discount": 0.0, "term_months": option.term_months, "gpus": float(option.gpus)}, node))
        burst = offer.pricing.burst
        if burst is None and spot and offer.pricing.gpu_hour is not None:
            burst = Burst(gpu_hour=offer.pricing.gpu_hour, max_gpus=supply)  # spot at its GPU-hour price, up to its supply
        if burst is not None:
            source = Source(index, math.nan, burst.max_gpus * per_gpu_month, burst.gpu_hour * fx, "gpu_hour", per_gpu_month)
            cand.source = source
            # Billed only as used: no discount, prepayment or fixed fees of its own (those are the offer's, in fixed_monthly).
            pending.append((source, row, {"basis": "gpu_hour", "gpu_hour": burst.gpu_hour, "discount": 0.0, "prepay_fraction": 0.0, "fees_once": 0.0, "fees_monthly": 0.0, "fees_per_tb_month": 0.0}, per_gpu_month))
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


def _unit_terms(units: list[Unit], n0: int, coefs: np.ndarray, rows: list, cols: list, values: list) -> None:
    """Append, for each commitment unit, its coefficient on its node count in every month it covers."""
    for j, u in enumerate(units):
        months = np.arange(u.first, u.last + 1)
        rows.append(months)
        cols.append(np.full(len(months), n0 + j))
        values.append(np.full(len(months), coefs[j]))


def _units(cands: list[Candidate], months: int) -> list[Unit]:
    """Each commit in blocks of its term: a term shorter than the horizon is re-decided at each renewal."""
    units = []
    for cand in cands:
        for commit in cand.commits:
            term = max(1, commit.term_months)
            for first in range(0, months, term):
                units.append(Unit(commit, first, min(months, first + term) - 1))
    return units


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


def demand_levels(scen: Scenarios, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Each month's demand as at most `levels` equally likely bands of scenarios: (K, H) demand and weights.

    Commitments do not depend on the scenario, so within a month only the distribution of demand
    matters to the solver: each band is one continuous allocation at its probability-weighted mean.
    With no more scenarios than levels, every scenario is its own level (exact)."""
    S, H = scen.demand.shape
    if S <= levels:
        return scen.demand.copy(), np.repeat(scen.probability[:, None], H, axis=1)
    out = np.zeros((levels, H))
    weights = np.zeros((levels, H))
    for m in range(H):
        order = np.argsort(scen.demand[:, m], kind="stable")
        p = scen.probability[order]
        before = np.cumsum(p) - p
        band = np.minimum((before * levels + 1e-9).astype(int), levels - 1)
        weights[:, m] = np.bincount(band, weights=p, minlength=levels)
        sums = np.bincount(band, weights=p * scen.demand[order, m], minlength=levels)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[:, m] = np.where(weights[:, m] > 0, sums / weights[:, m], 0.0)
    return out, weights


# The most nonzeros a plan's program may have. HiGHS needs about 1.5 kB of memory a nonzero (measured:
# 600,420 nonzeros, 120 months x 1,000 levels x 2 offers with a penalty, peaked at 1.08 GB and took
# 38 s), so this is about 1.5 GB; 120 months x 10,000 levels ended in std::bad_alloc after 40 s.
MAX_NONZEROS = 1_000_000


def model_size(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, risk: Risk) -> int:
    """The nonzeros of the program `build_model` would write, counted from its dimensions before
    anything is built: the rows of every scenario-month dominate (levels x months x pay-as-used sources)."""
    S, H = min(scen.count, policy.levels), scen.months
    P = sum(1 for c in cands if c.source is not None)
    penalty = policy.unserved_penalty_per_task is not None
    unit_months = sum(u.last - u.first + 1 for u in _units(cands, H))
    total = H + unit_months + S * H * (1 + P + penalty) + 2 * P * S * H + 6 * len(_units(cands, H)) + len(cands) * H
    if not penalty:
        total += H * (1 + P)
    if policy.max_vendor_share < 1:
        total += P * S * H + 3 * P + 3 * len(cands)
    if risk.active:
        total += H + unit_months + len(cands) * H + S * H * (4 + P + penalty)
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


def build_model(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float) -> Model:
    """Assemble the MILP. Money in units of `money`, tasks in units of `tasks` (for the solver's numerics)."""
    levels, level_weights = demand_levels(scen, policy.levels)
    S, H = levels.shape  # S: demand levels per month (the scenarios themselves when few)
    units = _units(cands, H)
    sources = [c.source for c in cands if c.source is not None]
    U, P, I = len(units), len(sources), len(cands)
    penalty = policy.unserved_penalty_per_task
    demand = levels / tasks
    sum_delta = float(delta.sum())

    layout: dict[str, slice] = {}
    sizes: list[tuple[str, int]] = [("n", U), ("b", U), ("y", I), ("cap", H), ("z", P * S * H)]
    if penalty is not None:
        sizes.append(("u", S * H))
    share_rows = policy.max_vendor_share < 1 and len({c.vendor for c in cands}) > 1
    if share_rows:
        sizes += [("e", P), ("x", len({c.vendor for c in cands}) + 1)]
    if risk.active:
        sizes += [("k", H), ("eta", 1), ("xi", S * H), ("cv", 1)]
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

    n0, b0, y0, cap0, z0 = layout["n"].start, layout["b"].start, layout["y"].start, layout["cap"].start, layout["z"].start
    unit_cost = np.array([u.commit.cost_node_month for u in units]) / money
    unit_tasks = np.array([u.commit.tasks_node_month for u in units]) / tasks
    unit_pv = np.array([delta[u.first : u.last + 1].sum() for u in units])
    unit_months = np.array([u.last - u.first + 1 for u in units], dtype=float)
    c[layout["n"]] = unit_cost * unit_pv
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
    ub[layout["y"]] = 1
    integrality[layout["y"]] = 1
    fixed = np.array([cand.fixed_monthly for cand in cands]) / money
    c[layout["y"]] = fixed * sum_delta

    # z[p, s, m]: tasks served by source p in scenario s, month m; at most the source's monthly room.
    weights = (level_weights * delta[None, :]).ravel()  # (S*H,)
    price = np.array([s.price_per_task for s in sources]) * tasks / money
    c[layout["z"]] = (price[:, None] * weights[None, :]).ravel()
    room = np.array([min(s.cap_month / tasks, float(demand.max())) for s in sources])
    ub[layout["z"]] = np.repeat(room, S * H)
    if penalty is not None:
        c[layout["u"]] = penalty * tasks / money * weights

    # (a) committed capacity per month: cap_m - sum(tasks per node x n_u over the units covering m) = 0
    r_list, c_list, v_list = [np.arange(H)], [cap0 + np.arange(H)], [np.ones(H)]
    _unit_terms(units, n0, -unit_tasks, r_list, c_list, v_list)
    model.add(np.concatenate(r_list), np.concatenate(c_list), np.concatenate(v_list), H, 0.0, 0.0, "committed capacity")

    # (b) every scenario-month served: cap_m + sum_p z_psm (+ u_sm) >= D_sm
    sm = np.arange(S * H)
    r_list = [sm]
    c_list = [cap0 + np.tile(np.arange(H), S)]
    v_list = [np.ones(S * H)]
    for p in range(P):
        r_list.append(sm)
        c_list.append(z0 + p * S * H + sm)
        v_list.append(np.ones(S * H))
    if penalty is not None:
        r_list.append(sm)
        c_list.append(layout["u"].start + sm)
        v_list.append(np.ones(S * H))
    model.add(np.concatenate(r_list), np.concatenate(c_list), np.concatenate(v_list), S * H, demand.ravel(), np.inf, "demand served")

    if penalty is None:
        # (b') the worst scenario of each month fits in the committed capacity plus the room of the pay-as-used
        # sources in the plan (the levels average scenarios; this keeps every single scenario served)
        worst = scen.demand.max(axis=0) / tasks
        rr = [np.arange(H)] + [np.arange(H) for _ in sources]
        cc = [cap0 + np.arange(H)] + [np.full(H, y0 + s.offer) for s in sources]
        vv = [np.ones(H)] + [np.full(H, min(s.cap_month / tasks, float(worst.max()))) for s in sources]
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), H, worst, np.inf, "worst scenario served")
    if U:
        j = np.arange(U)
        # (c) a commitment in use lies between its minimum and maximum nodes
        model.add(np.concatenate([j, j]), np.concatenate([n0 + j, b0 + j]), np.concatenate([np.ones(U), -useful]), U, -np.inf, 0.0, "maximum nodes")
        model.add(np.concatenate([j, j]), np.concatenate([n0 + j, b0 + j]), np.concatenate([np.ones(U), -np.array([u.commit.min_nodes for u in units], dtype=float)]), U, 0.0, np.inf, "minimum commitment")
        # (e) a commitment puts its offer in the plan (its fixed fees and staff)
        model.add(np.concatenate([j, j]), np.concatenate([b0 + j, y0 + np.array([u.commit.offer for u in units])]), np.concatenate([np.ones(U), -np.ones(U)]), U, -np.inf, 0.0, "offer in the plan")
        # (d) one commitment (base terms or one option) per offer per month
        rr, cc = [], []
        for j2, u in enumerate(units):
            months = np.arange(u.first, u.last + 1)
            rr.append(u.commit.offer * H + months)
            cc.append(np.full(len(months), b0 + j2))
        model.add(np.concatenate(rr), np.concatenate(cc), np.ones(sum(len(x) for x in rr)), I * H, -np.inf, 1.0, "one option per offer")
    if P:
        # (f) a pay-as-used source is used only when its offer is in the plan: z_psm <= min(room, demand_sm) x y_i,
        # one row per level and month (the tight form; an aggregate row would let the relaxation skip fixed costs)
        rows = np.arange(P * S * H)
        bound = np.minimum(room[:, None], demand.ravel()[None, :]).ravel()
        model.add(np.concatenate([rows, rows]), np.concatenate([z0 + rows, y0 + np.repeat(np.array([s.offer for s in sources]), S * H)]), np.concatenate([np.ones(P * S * H), -bound]), P * S * H, -np.inf, 0.0, "pay-as-used offer in the plan")
    if share_rows:
        # (g) vendor share of expected capacity (tasks): committed capacity over the horizon plus expected pay-as-used tasks
        e0 = layout["e"].start
        rr = np.concatenate([np.repeat(np.arange(P), S * H), np.arange(P)])
        cc = np.concatenate([z0 + np.arange(P * S * H), e0 + np.arange(P)])
        vv = np.concatenate([-np.tile(level_weights.ravel(), P), np.ones(P)])
        model.add(rr, cc, vv, P, 0.0, 0.0, "expected pay-as-used tasks")
        vendors = sorted({c.vendor for c in cands})
        vendor_of = {v: i for i, v in enumerate(vendors)}
        share = policy.max_vendor_share
        x0, t = layout["x"].start, layout["x"].start + len(vendors)
        # x_v = the vendor's expected capacity (each commitment and source in one row: sparse), t = sum of x_v,
        # and x_v <= share x t: nonzeros grow with offers, not offers x vendors.
        rr2 = [vendor_of[cands[u.commit.offer].vendor] for u in units] + [vendor_of[cands[s.offer].vendor] for s in sources] + list(range(len(vendors)))
        cc2 = [n0 + j2 for j2 in range(U)] + [e0 + p for p in range(P)] + [x0 + v for v in range(len(vendors))]
        vv2 = [-unit_tasks[j2] * unit_months[j2] for j2 in range(U)] + [-1.0] * P + [1.0] * len(vendors)
        model.add(np.array(rr2), np.array(cc2), np.array(vv2), len(vendors), 0.0, 0.0, "expected capacity by vendor")
        model.add(np.zeros(len(vendors) + 1, dtype=np.int64), np.array([t] + [x0 + v for v in range(len(vendors))]), np.array([1.0] + [-1.0] * len(vendors)), 1, 0.0, 0.0, "expected capacity")
        v_idx = np.arange(len(vendors))
        model.add(np.concatenate([v_idx, v_idx]), np.concatenate([x0 + v_idx, np.full(len(vendors), t)]), np.concatenate([np.ones(len(vendors)), np.full(len(vendors), -share)]), len(vendors), -np.inf, 0.0, "max_vendor_share")
    if risk.active:
        k0, eta, xi0, cv = layout["k"].start, layout["eta"].start, layout["xi"].start, layout["cv"].start
        lb[eta] = -np.inf
        # (h) monthly spend of the commitments and fixed costs: k_m = sum cost_u n_u + sum fixed_i y_i
        rr, cc, vv = [np.arange(H)], [k0 + np.arange(H)], [np.ones(H)]
        _unit_terms(units, n0, -unit_cost, rr, cc, vv)
        for i in range(I):
            rr.append(np.arange(H))
            cc.append(np.full(H, y0 + i))
            vv.append(np.full(H, -fixed[i]))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), H, 0.0, 0.0, "monthly commitment spend")
        # (i) Rockafellar-Uryasev: xi_sm >= loss_sm - eta, loss = k_m + sum_p price_p z_psm (+ penalty u_sm)
        rr = [sm, sm, sm]
        cc = [xi0 + sm, k0 + np.tile(np.arange(H), S), np.full(S * H, eta)]
        vv = [np.ones(S * H), -np.ones(S * H), np.ones(S * H)]
        for p in range(P):
            rr.append(sm)
            cc.append(z0 + p * S * H + sm)
            vv.append(np.full(S * H, -price[p]))
        if penalty is not None:
            rr.append(sm)
            cc.append(layout["u"].start + sm)
            vv.append(np.full(S * H, -penalty * tasks / money))
        model.add(np.concatenate(rr), np.concatenate(cc), np.concatenate(vv), S * H, 0.0, np.inf, "CVaR excess")
        # (j) cv = eta + sum p_s / H / (1 - alpha) xi_sm
        tail = (level_weights.ravel() / H) / (1 - policy.cvar_alpha)
        model.add(np.zeros(S * H + 2, dtype=np.int64), np.concatenate([[cv, eta], xi0 + sm]), np.concatenate([[1.0, -1.0], -tail]), 1, 0.0, 0.0, "CVaR definition")
        c[cv] = risk.weight * sum_delta
        if risk.limit is not None:
            ub[cv] = risk.limit / money
    return model


@dataclass
class Solved:
    nodes: np.ndarray  # per unit
    in_plan: np.ndarray  # per candidate, bool
    status: str
    gap: float | None
    model: Model
    objective: float | None = None


def solve(model: Model, policy: PlanConfig, scen: Scenarios, cands: list[Candidate]) -> Solved:
    """Run HiGHS; infeasibility and the time limit become clear input errors, never a hang or a traceback."""
    from procure.solvecache import solve_milp

    A, row_lb, row_ub = model.matrix()
    options = {"time_limit": float(policy.time_limit_s), "mip_rel_gap": float(policy.mip_gap), "disp": False, **HIGHS_OPTIONS}
    result = solve_milp(model.c, A, row_lb, row_ub, model.integrality, model.lb, model.ub, options)
    if result.x is None:
        if result.status == 1:
            raise InputError([Problem("procure.yaml", None, "plan.time_limit_s", f"no feasible plan found within {policy.time_limit_s:g} s over {scen.count} scenarios x {scen.months} months; raise plan.time_limit_s or lower demand.scenarios")])
        raise InputError([infeasible_problem(policy, scen, cands)])
    x = result.x
    nodes = np.round(x[model.layout["n"]]).astype(int)
    in_plan = np.round(x[model.layout["y"]]).astype(bool)
    status = "optimal" if result.status == 0 else "time limit reached: best plan found"
    return Solved(nodes, in_plan, status, result.mip_gap, model, result.fun)


def supply_by_month(cands: list[Candidate], months: int) -> np.ndarray:
    """The most tasks all candidates together can serve each month."""
    most = 0.0
    for cand in cands:
        most += max((c.max_nodes * c.tasks_node_month for c in cand.commits), default=0.0)
        if cand.source is not None:
            most += cand.source.cap_month
    return np.full(months, most)


def infeasible_problem(policy: PlanConfig, scen: Scenarios, cands: list[Candidate]) -> Problem:
    """Say which constraint, and which scenario, makes the plan impossible."""
    if not cands:
        return Problem("procure.yaml", None, "plan", "no acceptable offer to plan with (see `procure compare` for the reasons)")
    supply = supply_by_month(cands, scen.months)
    if policy.unserved_penalty_per_task is None:
        short = scen.demand - supply[None, :]
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
    commit_cost: np.ndarray | None = None  # (H,) what the commitments cost a month, used or not


def dispatch(cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, scen: Scenarios, penalty: float | None) -> Outcome:
    S, H = scen.demand.shape
    capacity = np.zeros(H)
    commit_cost = np.zeros(H)
    for u, n in zip(units, nodes):
        capacity[u.first : u.last + 1] += n * u.commit.tasks_node_month
        commit_cost[u.first : u.last + 1] += n * u.commit.cost_node_month
    fixed = sum(c.fixed_monthly for c, used in zip(cands, in_plan) if used)
    demand = scen.demand
    from_commit = np.minimum(demand, capacity[None, :])
    rest = demand - from_commit
    spend = np.broadcast_to(commit_cost + fixed, (S, H)).copy()
    payg = np.zeros((S, H))
    by_source: dict[int, np.ndarray] = {}
    order = sorted((c.source for c, used in zip(cands, in_plan) if used and c.source is not None), key=lambda s: (s.price_per_task, cands[s.offer].id))
    for source in order:
        take = np.minimum(rest, source.cap_month)
        rest = rest - take
        spend += take * source.price_per_task
        payg += take
        by_source[source.offer] = take
    if penalty is not None:
        spend += rest * penalty
    served = demand - rest
    # Committed tasks by unit, in proportion to each unit's share of the month's committed capacity.
    by_unit = np.zeros(len(units))
    expected_commit = scen.probability @ from_commit
    for j, (u, n) in enumerate(zip(units, nodes)):
        months = slice(u.first, u.last + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(capacity[months] > 0, n * u.commit.tasks_node_month / capacity[months], 0.0)
        by_unit[j] = float((share * expected_commit[months]).sum())
    return Outcome(capacity, spend, served, payg, by_source, by_unit, rest, commit_cost)


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


def figures(out: Outcome, scen: Scenarios, delta: np.ndarray, alpha: float) -> Figures:
    prob = scen.probability
    pv_cost = float(prob @ (out.spend @ delta))
    pv_tasks = float(prob @ (out.served @ delta))
    weights = np.repeat(prob / scen.months, scen.months)
    spend = out.spend.ravel()
    unused = np.maximum(out.capacity[None, :] - scen.demand, 0.0)
    committed = float(out.capacity.sum())
    return Figures(
        cost_per_task=pv_cost / pv_tasks if pv_tasks > 0 else None,
        pv_cost=pv_cost,
        p90=weighted_quantile(spend, weights, 0.9),
        cvar=cvar(spend, weights, alpha),
        unused=float(prob @ unused.sum(axis=1)) / committed if committed > 0 else 0.0,
        payg_share=float(prob @ out.payg.sum(axis=1)) / max(float(prob @ out.served.sum(axis=1)), 1e-300),
        monthly=float(prob @ out.spend.mean(axis=1)),
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
    pv_cost = out.spend @ delta
    pv_tasks = out.served @ delta
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
    pv_cost = out.spend @ delta
    pv_tasks = out.served @ delta
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
    slow_units = [Unit(commits[id(u.commit)], u.first, u.last) for u in units]
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
    return dear, [Unit(commits[id(u.commit)], u.first, u.last) for u in units]


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
        cost_per_task=float(w @ (spend @ delta)) / pv_tasks if pv_tasks > 0 else None,
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
        out = dispatch(cands, units, kept, in_plan & ~gone, scen, penalty)
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


def single_offer(cand: Candidate, index: int, scen: Scenarios, delta: np.ndarray, penalty: float | None) -> tuple[float, list[Unit], np.ndarray] | None:
    """The best plan with one offer alone (its commitments and its own pay-as-used capacity), risk-neutral.

    Exact by enumeration: per term block, every node count and option; blocks are independent.
    None when the offer alone cannot serve every scenario (and no unserved penalty is set)."""
    S, H = scen.demand.shape
    prob = scen.probability
    src = cand.source

    def recourse(short: np.ndarray) -> np.ndarray:
        """Expected cost of a shortfall (any shape ending in (S, months)) met by the own source, then the penalty."""
        room = src.cap_month if src is not None else 0.0
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
        total = cand.fixed_monthly * float(delta.sum())
        term = max(1, commit.term_months) if commit is not None else H
        for first in range(0, H, term):
            last = min(H, first + term) - 1
            d = scen.demand[:, first : last + 1]
            w = delta[first : last + 1]
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
                short = np.maximum(d[None, :, :] - grid[lo : lo + step, None, None] * per_node, 0.0)
                with np.errstate(invalid="ignore"):
                    expected[lo : lo + step] = np.einsum("gsm,s,m->g", recourse(short), prob, w)
            fixed_part = grid * (commit.cost_node_month if commit is not None else 0.0) * w.sum()
            block = expected + fixed_part
            g = int(np.argmin(block))
            if not math.isfinite(block[g]):
                total = math.inf
                break
            total += float(block[g])
            if commit is not None:
                units.append(Unit(commit, first, last))
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


def shortlist(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, risk: Risk, money: float, tasks: float) -> tuple[list[int], float | None]:
    """With more offers than plan.max_candidates, keep the ones the linear relaxation uses most.

    Returns the kept positions and the relaxation's objective over every offer: a proven lower bound,
    so the distance of the plan from the best plan over all offers can be stated."""
    if len(cands) <= policy.max_candidates:
        return list(range(len(cands))), None
    from scipy.optimize import Bounds, LinearConstraint, milp

    model = build_model(cands, scen, policy, delta, risk, money, tasks)
    A, row_lb, row_ub = model.matrix()
    from procure.solvecache import interruptible

    relaxed = interruptible(lambda: milp(model.c, constraints=LinearConstraint(A, row_lb, row_ub), bounds=Bounds(model.lb, model.ub), options={"time_limit": float(policy.time_limit_s), "disp": False}))
    if relaxed.x is None:
        return list(range(len(cands))), None
    x = relaxed.x
    use = np.zeros(len(cands))
    n = x[model.layout["n"]]
    for j, u in enumerate(model.units):
        use[u.commit.offer] += n[j] * u.commit.tasks_node_month * (u.last - u.first + 1)
    z = x[model.layout["z"]].reshape(len(model.sources), -1) if model.sources else np.zeros((0, 1))
    for p, source in enumerate(model.sources):
        use[source.offer] += float(z[p].sum())
    score = [min([c.cost_node_month / c.tasks_node_month for c in cand.commits if c.tasks_node_month > 0] + ([cand.source.price_per_task] if cand.source else [math.inf])) for cand in cands]
    order = sorted(range(len(cands)), key=lambda i: (-use[i], score[i], cands[i].id))
    return sorted(order[: policy.max_candidates]), float(relaxed.fun)


def make_plan(
    ws: Workspace, as_of: date | None = None, frontier: bool = False, scenario_count: int | None = None, evaluation: tuple[Evaluation, CostInputs] | None = None
) -> PlanResult:
    """The plan for a workspace: commitments and pay-as-used sources over the demand scenarios."""
    config = ws.config
    policy = config.plan
    ev, inputs = evaluation or evaluate_with_inputs(ws, as_of)
    wl = config.workload
    cands, excluded = candidates(ev, inputs, config.assumptions.fte_cost_year, wl.output_tokens, wl.success_rate)
    scen = demand_scenarios(config, scenario_count)
    delta = discount_factors(scen.months, config.assumptions.cost_of_capital)
    notes: list[str] = []
    if not cands:
        raise InputError([infeasible_problem(policy, scen, cands)])
    if policy.unserved_penalty_per_task is None:
        supply = supply_by_month(cands, scen.months)
        if (scen.demand > supply[None, :] * (1 + 1e-9)).any():
            raise InputError([infeasible_problem(policy, scen, cands)])
    vendors = {c.vendor for c in cands}
    if policy.max_vendor_share < 1 and (len(vendors) == 1 or policy.max_vendor_share * len(vendors) < 1):
        raise InputError([infeasible_problem(policy, scen, cands)])
    money, tasks = _scales(cands, scen)
    penalty = policy.unserved_penalty_per_task

    check_size(cands, scen, policy, Risk(policy.cvar_weight, policy.cvar_limit))  # before anything of that size is computed

    # Single offers: the baseline the plan must beat.
    singles = [(c.id, single_offer(c, i, scen, delta, penalty)) for i, c in enumerate(cands)]
    best_single = min(((cid, s) for cid, s in singles if s is not None), key=lambda t: (t[1][0], t[0]), default=None)

    risk = Risk(policy.cvar_weight, policy.cvar_limit)
    keep, bound = shortlist(cands, scen, policy, delta, risk, money, tasks)
    plan_cands = _reindexed(cands, keep) if len(keep) < len(cands) else cands
    solver_cands = plan_cands
    model = build_model(plan_cands, scen, policy, delta, risk, money, tasks)
    solved = solve(model, policy, scen, plan_cands)
    bound_gap = None
    if bound is not None and solved.objective:
        bound_gap = max(0.0, (solved.objective - bound) / abs(solved.objective))
        notes.append(
            f"the solver chose among the {len(keep)} offers the linear relaxation uses most (of {len(cands)} usable, plan.max_candidates); "
            f"the plan is within {bound_gap:.2%} of the relaxation's bound over all of them"
        )
    units, nodes, in_plan = model.units, solved.nodes, solved.in_plan
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
            units, nodes, in_plan, out, fig, plan_cands = s_units, s_nodes, s_in, s_out, s_fig, cands
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
    beyond = [line for line in lines if line.role == "commit" and line.term_months and (line.start_month or 1) - 1 + line.term_months > scen.months]
    for line in beyond:
        notes.append(f"{line.offer}: the {line.term_months}-month commitment from month {line.start_month} runs past the {scen.months}-month horizon; the months after it are not counted")
    if any(c.source is not None and c.source.cap_month == math.inf for c in cands if c.source and c.source.price_unit == "task"):
        notes.append("per-token offers without service.rate_limits are taken as able to serve any volume")

    frontier_points = _frontier(solver_cands, scen, policy, delta, money, tasks, fig) if frontier else None
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
            time_limit_s=policy.time_limit_s, mip_gap=policy.mip_gap, status=solved.status, gap=solved.gap, bound_gap=bound_gap, variables=len(model.c), constraints=model.nrows,
            integers=int(model.integrality.sum()), nonzeros=model.nonzeros,
        ),
        candidates=[c.id for c in cands], excluded=excluded, notes=notes,
        single_offers=alone,
        stress=stress(
            plan_cands, units, nodes, in_plan, scen, penalty, delta, index_linked={o.id for o in ev.offers if o.pricing_basis == "index"},
            claims={o.id for o in ev.offers if o.points_source == "vendor_claim"}, claims_factor=claim_low_end(ws),
        ),
    )


def _frontier(cands: list[Candidate], scen: Scenarios, policy: PlanConfig, delta: np.ndarray, money: float, tasks: float, neutral: Figures) -> list[FrontierPoint]:
    """Expected cost against CVaR: the risk-neutral plan, the least-CVaR plan, and limits evenly between."""
    penalty = policy.unserved_penalty_per_task
    # Each point is a whole plan whose figures are computed on every scenario; the solver sees at most
    # FRONTIER_LEVELS demand bands a month for it (a CVaR-limited solve costs a few times the plan's).
    coarse = policy.model_copy(update={"levels": min(policy.levels, FRONTIER_LEVELS)})

    def run(risk: Risk) -> Figures:
        model = build_model(cands, scen, coarse, delta, risk, money, tasks)
        solved = solve(model, coarse, scen, cands)
        return figures(dispatch(cands, model.units, solved.nodes, solved.in_plan, scen, penalty), scen, delta, policy.cvar_alpha)

    neutral_fig = run(Risk()) if policy.cvar_weight > 0 or policy.cvar_limit is not None else neutral
    safest = run(Risk(weight=1000.0))
    points = [FrontierPoint(cvar_limit=None, expected_cost_per_task=neutral_fig.cost_per_task or 0.0, cvar=neutral_fig.cvar, p90_monthly_spend=neutral_fig.p90)]
    count = policy.frontier_points
    if neutral_fig.cvar > safest.cvar * (1 + 1e-6):
        for t in np.linspace(1, 0, count)[1:-1]:
            limit = safest.cvar + t * (neutral_fig.cvar - safest.cvar)
            f = run(Risk(limit=float(limit)))
            points.append(FrontierPoint(cvar_limit=float(limit), expected_cost_per_task=f.cost_per_task or 0.0, cvar=f.cvar, p90_monthly_spend=f.p90))
    points.append(FrontierPoint(cvar_limit=safest.cvar, expected_cost_per_task=safest.cost_per_task or 0.0, cvar=safest.cvar, p90_monthly_spend=safest.p90))
    return points
