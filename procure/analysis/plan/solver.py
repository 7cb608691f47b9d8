"""Solving the program with HiGHS and refining what it sees until the answer holds on every scenario (docs/plan.md,
"The method"); infeasible programs and time limits become located input errors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from procure.analysis.plan.bands import (
    BAND_TOLERANCE,
    banded_cost,
    breakpoints,
    initial_bands,
    initial_tail,
    split_bands,
)
from procure.analysis.plan.candidates import Candidate, Unit
from procure.analysis.plan.dispatch import Outcome, dispatch, source_months, spot_limit
from procure.analysis.plan.figures import path_losses
from procure.analysis.plan.program import Model, Setting, build_model
from procure.errors import InputError, Problem
from procure.model.demand import Scenarios
from procure.model.inputs import PlanConfig

# HiGHS settings measured on the example, tests/data/real_offers, the 50-offer workspace and 1,000 generated offers
# (docs/plan.md, "Speed"): the model has few integers (node counts and offer switches) and a large continuous
# dispatch. Almost all of a solve is HiGHS's root node: its rounds of cuts (path aggregation, about 0.1 s a round on
# the example, as many rounds as its integers allow) and its sub-MIP heuristics (RINS, RENS, the root reduced-cost
# search). With presolve on and the three sub-MIPs off, the cut rounds work on a smaller program and no sub-MIP is
# solved: the same plans in a quarter less CPU on the example, the 1,000-offer shortlist's plan in half and its check
# (an infeasibility proof) in a twentieth. Branch-and-cut and the stopping gap are untouched: every plan is proven to
# plan.mip_gap as before (several now to a smaller gap than before).


HIGHS_OPTIONS: dict[str, object] = {
    "presolve": True,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
}


def work_limits(policy: PlanConfig, node_limit: int | None = None) -> dict[str, object]:
    """HiGHS's options for one solve: it stops at plan.mip_gap or after plan.node_limit branch-and-bound nodes (or
    `node_limit`, when lower), a count of work, so an idle and a loaded machine return the same plan; plan.time_limit_s
    is only a backstop (a solve it stops says so in its status)."""
    nodes = int(policy.node_limit) if node_limit is None else min(int(node_limit), int(policy.node_limit))
    return {
        "time_limit": float(policy.time_limit_s),
        "mip_rel_gap": float(policy.mip_gap),
        "node_limit": nodes,
        "disp": False,
        **HIGHS_OPTIONS,
    }


MAX_ROUNDS = 8  # solves of one plan while bands and the CVaR tail are refined


def program_inputs(tag: str, cands: list[Candidate], setting: Setting, *extra: object) -> tuple[object, ...]:
    """What a program is built from, as the solve cache keys it (procure/io/solvecache.py): every argument of
    `build_model` (the setting's fields in their order), the policy's time limit aside (a proven result holds whatever
    it was)."""
    s = setting
    policy = {k: getattr(s.policy, k) for k in type(s.policy).model_fields if k != "time_limit_s"}
    return (tag, cands, s.scen, policy, s.delta, s.risk, s.money, s.tasks, s.penalty, *extra)


def solve_model(model: Model, inputs: tuple[object, ...], options: dict[str, object], cutoff: float | None = None):  # type: ignore[no-untyped-def]
    """HiGHS on `model`, or its kept result: the key is `inputs`, so a kept result is read without writing the
    program's rows or importing SciPy. `cutoff`: one more row, objective <= cutoff (the shortlist check)."""
    from procure.analysis.milp import solve_built

    def rows():  # type: ignore[no-untyped-def]
        A, row_lb, row_ub = model.matrix()
        if cutoff is None:
            return A, row_lb, row_ub
        from scipy.sparse import csr_array, vstack

        return (
            vstack([A, csr_array(model.c.reshape(1, -1))]).tocsr(),
            np.append(row_lb, -np.inf),
            np.append(row_ub, cutoff),
        )

    return solve_built((*inputs, cutoff), options, model.c, model.integrality, model.lb, model.ub, rows)


@dataclass
class Solved:
    nodes: np.ndarray  # per unit
    in_plan: np.ndarray  # (candidates, months) bool: whether the offer's pay-as-used source may serve in the month
    status: str
    gap: float | None
    model: Model
    objective: float | None = None
    eta: float | None = None  # the CVaR threshold the solver found (money units of the model)


def solve(
    model: Model,
    policy: PlanConfig,
    scen: Scenarios,
    cands: list[Candidate],
    node_limit: int | None = None,
    inputs: tuple[object, ...] = (),
) -> Solved:
    """Run HiGHS; infeasibility and the time limit become clear input errors, never a hang or a traceback.
    `node_limit`: stop after that many branch-and-bound nodes (a deterministic limit; status says so).
    `inputs`: what `model` was built from (`program_inputs`), the key its result is kept under."""
    options = work_limits(policy, node_limit)
    result = solve_model(model, inputs, options)
    if result.x is None:
        if result.status == 1:
            raise InputError(
                [
                    Problem(
                        "procure.yaml",
                        None,
                        "plan.time_limit_s",
                        f"no feasible plan found within {policy.time_limit_s:g} s (the backstop) over {scen.count} "
                        f"scenarios x {scen.months} months; raise plan.time_limit_s or lower demand.scenarios",
                    )
                ]
            )
        if result.status == 4:
            raise InputError(
                [
                    Problem(
                        "procure.yaml",
                        None,
                        "plan.node_limit",
                        f"no feasible plan found within {options['node_limit']:,} branch-and-bound nodes over "
                        f"{scen.count} scenarios x {scen.months} months; raise plan.node_limit or lower "
                        "demand.scenarios",
                    )
                ]
            )
        raise InputError([infeasible_problem(policy, scen, cands)])
    x = result.x
    H = scen.months
    nodes = np.round(x[model.layout["n"]]).astype(int)
    in_plan = np.ones((len(cands), H), dtype=bool)
    a = np.round(x[model.layout["a"]]).astype(bool)
    fee_sources = [p for p, src in enumerate(model.sources) if cands[src.offer].fixed_monthly > 0]
    for q, p in enumerate(fee_sources):
        in_plan[model.sources[p].offer] = a[model.a_index[q]]
    status = (
        "optimal"
        if result.status == 0
        else ("time limit reached: best plan found" if result.status == 1 else "node limit reached: best plan found")
    )
    eta = float(x[model.layout["eta"]][0]) if "eta" in model.layout else None
    return Solved(nodes, source_months(cands, H, in_plan), status, result.mip_gap, model, result.fun, eta)


@dataclass
class Shortfall:
    """Demand no plan over these offers can serve, per scenario and month once an offer is delivered: beyond every
    offer together (`beyond_all`), and beyond what may serve it (`beyond_may`), the other offers plus at most
    plan.max_spot_share of the month's demand from spot sources. `rest` and `spot` are the most tasks a month the
    offers other than spot, and the spot sources, can serve (nothing before delivery). Reported beside the plan's
    shortfall (what no offer could serve, apart from what the plan chose to leave), never refused."""

    rest: np.ndarray
    spot: np.ndarray
    beyond_all: np.ndarray
    beyond_may: np.ndarray

    def any(self) -> bool:
        return bool((self.beyond_all > 0).any() or (self.beyond_may > 0).any())


def shortfall(cands: list[Candidate], scen: Scenarios) -> Shortfall:
    rest, spot = np.zeros(scen.months), np.zeros(scen.months)
    for cand in cands:
        avail = cand.available(scen.months)
        delivered = np.where(avail > 0, avail, 0.0)
        rest += max((c.max_nodes * c.tasks_node_month for c in cand.commits if not c.held), default=0.0) * delivered
        for t in cand.held:
            held = next(c for c in cand.commits if c.held and c.node_gpus == t.gpus)
            rest[t.first : t.last + 1] += held.tasks_node_month * t.within()
        if cand.source is not None and cand.source.spot:
            spot += cand.source.cap_month * delivered
        elif cand.source is not None:
            rest += cand.source.cap_month * delivered
    served = (rest + spot)[None, :] > 0
    may = rest[None, :] + np.minimum(spot[None, :], spot_limit(cands) * scen.demand)
    return Shortfall(
        rest,
        spot,
        np.where(served, scen.demand - (rest + spot)[None, :] * (1 + 1e-9), 0.0),
        np.where(served, scen.demand - may * (1 + 1e-9), 0.0),
    )


def infeasible_problem(policy: PlanConfig, scen: Scenarios, cands: list[Candidate]) -> Problem:
    """Say which constraint makes the plan impossible. Capacity never does: every plan prices what its sources cannot
    serve (the unserved price), so demand beyond the offers, or beyond plan.max_spot_share of spot, is a shortfall
    reported with its price, not an error."""
    if not cands:
        return Problem(
            "procure.yaml", None, "plan", "no acceptable offer to plan with (see `procure compare` for the reasons)"
        )
    vendors = {c.vendor for c in cands}
    if policy.max_vendor_share < 1 and len(vendors) == 1:
        return Problem(
            "procure.yaml",
            None,
            "plan.max_vendor_share",
            f"{policy.max_vendor_share:g} needs at least two vendors; only {next(iter(vendors))} is usable",
        )
    if policy.max_vendor_share < 1 and policy.max_vendor_share * len(vendors) < 1:
        return Problem(
            "procure.yaml",
            None,
            "plan.max_vendor_share",
            f"{policy.max_vendor_share:g} x {len(vendors)} usable vendors is below 1: no split can serve the demand",
        )
    if policy.cvar_limit is not None:
        return Problem(
            "procure.yaml",
            None,
            "plan.cvar_limit",
            f"no plan keeps the CVaR of monthly spend at or below {policy.cvar_limit:,.0f}; raise the limit (see "
            "`procure plan --frontier`)",
        )
    return Problem(
        "procure.yaml",
        None,
        "plan.max_vendor_share",
        f"no plan meets the vendor share limit {policy.max_vendor_share:g} with the capacity the offers can supply",
    )


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


def solve_plan(cands: list[Candidate], setting: Setting, node_limit: int | None = None) -> Chosen:
    """Solve, then refine until the answer holds on every scenario: bands that straddle a breakpoint of the chosen
    plan are split (the banded cost is then exact for it), and paths whose cost exceeds the CVaR threshold join the
    CVaR's paths (the CVaR is then the CVaR on every path, and a limit holds on all of them)."""
    s = setting
    scen, policy, delta, risk, money, penalty = s.scen, s.policy, s.delta, s.risk, s.money, s.penalty
    H = scen.months
    bands = initial_bands(scen, policy.levels)
    tail = initial_tail(scen, policy.cvar_alpha) if risk.active else None
    converged = False
    for rounds in range(1, MAX_ROUNDS + 1):  # noqa: B007 (the rounds taken are reported after the loop)
        model = build_model(cands, setting, bands, tail)
        solved = solve(model, policy, scen, cands, node_limit, program_inputs("plan", cands, setting, bands, tail))
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


def vendor_shares_ok(
    cands: list[Candidate], units: list[Unit], nodes: np.ndarray, out: Outcome, scen: Scenarios, share: float
) -> bool:
    """The vendor share rule as the program states it: committed capacity over the horizon plus expected pay-as-used
    tasks."""
    if share >= 1:
        return True
    by_vendor: dict[str, float] = {}
    for u, n in zip(units, nodes):
        cand = cands[u.commit.offer]
        if u.held:
            continue  # the vendor share governs what the plan adds
        by_vendor[cand.vendor] = by_vendor.get(cand.vendor, 0.0) + n * u.commit.tasks_node_month * float(
            u.available(cand, scen.months)[u.first : u.last + 1].sum()
        )
    for i, tasks in out.by_source.items():
        by_vendor[cands[i].vendor] = by_vendor.get(cands[i].vendor, 0.0) + float(scen.probability @ tasks.sum(axis=1))
    total = sum(by_vendor.values())
    return total <= 0 or max(by_vendor.values()) <= share * total * (1 + 1e-9)


def polish(
    cands: list[Candidate],
    units: list[Unit],
    nodes: np.ndarray,
    in_plan: np.ndarray,
    scen: Scenarios,
    policy: PlanConfig,
    delta: np.ndarray,
    penalty: float | None,
) -> np.ndarray:
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
            for step in (-1, 1) if not u.held else ():
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
