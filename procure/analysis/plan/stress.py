"""The plan under stress (docs/plan.md, "The plan under stress"): the chosen portfolio held fixed and dispatched
again with one input changed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from procure.analysis.plan.candidates import Candidate, Unit
from procure.analysis.plan.dispatch import Outcome, dispatch
from procure.analysis.plan.figures import scenario_picks
from procure.analysis.plan.result import PlanCase, PlanStress, VendorStress
from procure.model.costing import HOURS_PER_MONTH
from procure.model.demand import Scenarios

DEMAND_SHIFTS = ((-0.5, "Demand −50%"), (-0.3, "Demand −30%"), (0.0, "Demand as planned"), (0.3, "Demand +30%"))
PRICE_CASE = (
    0.2,
    "Market prices +20%",
    # pay-as-used rent, index-linked commitments and later decisions (priced at market then), as the hedging stress
    # moves
    # the index
)
AVAILABILITY_POINT = 0.01  # one point less availability: every GPU-hour serves 1% fewer tasks


def _slower(cands: list[Candidate], units: list[Unit], keep: dict[int, float]) -> tuple[list[Candidate], list[Unit]]:
    """The portfolio with candidate i's GPU-hours serving keep[i] of their tasks: commitments deliver less,
    pay-as-used GPU-hours cost more per task (per-token prices do not change)."""
    commits = {
        id(u.commit): replace(u.commit, tasks_node_month=u.commit.tasks_node_month * keep.get(u.commit.offer, 1.0))
        for u in units
    }
    slow_units = [replace(u, commit=commits[id(u.commit)]) for u in units]
    slow = []
    for i, c in enumerate(cands):
        k = keep.get(i, 1.0)
        if k != 1.0 and c.source is not None and c.source.price_unit == "gpu_hour":
            c = replace(
                c,
                source=replace(c.source, price_per_task=c.source.price_per_task / k, cap_month=c.source.cap_month * k),
            )
        slow.append(c)
    return slow, slow_units


def _dearer(
    cands: list[Candidate], units: list[Unit], move: float, index_linked: set[str]
) -> tuple[list[Candidate], list[Unit]]:
    """Market prices `move` higher: every pay-as-used rent, every index-linked commitment's rent, and the rent of every
    commitment decided later (after the decision window: priced at the market then). Commitments signed now at a fixed
    price, and held ones, do not move."""
    dear = []
    for c in cands:
        s = c.source
        if s is not None:
            rent_per_task = (
                s.price
                if s.price_unit == "task"
                else (s.price * HOURS_PER_MONTH / s.tasks_per_gpu_month if s.tasks_per_gpu_month else 0.0)
            )
            c = replace(c, source=replace(s, price_per_task=s.price_per_task + move * rent_per_task))
        dear.append(c)
    moved = []
    for u in units:
        cm = u.commit
        if cands[cm.offer].id in index_linked and not cm.held:
            rise = move * cm.price * cm.node_gpus * HOURS_PER_MONTH
        elif u.later:
            rise = (
                move * u.market * cm.renewal_step**u.renewal * cm.rent_node_month
            )  # a later decision is priced at market then
        else:
            rise = 0.0
        moved.append(replace(u, commit=replace(cm, cost_node_month=cm.cost_node_month + rise)))
    return dear, moved


def case_figures(
    name: str,
    factor: float,
    out: Outcome,
    scen: Scenarios,
    delta: np.ndarray,
    cands: list[Candidate],
    pick: np.ndarray | None = None,
) -> PlanCase:
    """Expected figures of one dispatch, over every scenario or the ones picked (their probabilities renormalised)."""
    idx = np.arange(scen.count) if pick is None else pick
    p = scen.probability[idx]
    w = p / p.sum()
    demand, spend, served = scen.demand[idx], out.cash[idx], out.served[idx]
    shortfall = float(w @ out.shortfall[idx].sum(axis=1)) if out.shortfall is not None else 0.0
    pv_tasks = float(w @ (served @ delta))
    cap = out.capacity
    idle = np.maximum(cap[None, :] - demand, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        idle_share = np.where(cap[None, :] > 0, idle / cap[None, :], 0.0)
    commit_cost = out.commit_cost if out.commit_cost is not None else np.zeros(scen.months)
    payg_spend = sum(
        float(w @ tasks[idx].sum(axis=1)) * cands[i].source.price_per_task
        for i, tasks in out.by_source.items()
        if cands[i].source is not None
    )
    total_served = float(w @ served.sum(axis=1))
    total_demand = float(w @ demand.sum(axis=1))
    return PlanCase(
        name=name,
        demand_factor=factor,
        probability=float(p.sum()),
        demand_per_month=float(w @ demand.mean(axis=1)),
        cost_per_task=(float(w @ (spend @ delta)) + out.beyond_pv(delta)) / pv_tasks if pv_tasks > 0 else None,
        monthly_spend=float(w @ spend.mean(axis=1)),
        total_spend=float(w @ spend.sum(axis=1)),
        unused_commitment=float(w @ (idle_share @ commit_cost)),
        unused_share=float(w @ idle.sum(axis=1)) / float(cap.sum()) if cap.sum() > 0 else 0.0,
        pay_as_used_spend=payg_spend,
        pay_as_used_share=float(w @ out.payg[idx].sum(axis=1)) / total_served if total_served > 0 else 0.0,
        unserved_share=float(w @ out.unserved[idx].sum(axis=1)) / total_demand if total_demand > 0 else 0.0,
        unserved_tasks=float(w @ out.unserved[idx].sum(axis=1)),
        shortfall_cost=shortfall,
    )


@dataclass(frozen=True)
class Fixed:
    """The chosen portfolio held fixed (its offers, blocks, node counts and the months its sources serve) and what it
    is dispatched on: the demand scenarios and the price of an unserved task."""

    cands: list[Candidate]
    units: list[Unit]
    nodes: np.ndarray
    in_plan: np.ndarray
    scen: Scenarios
    penalty: float | None

    def dispatch(self, **changes: Any) -> Outcome:
        """`dispatch`, the plan's own rule, on this portfolio with the fields named in `changes` replaced."""
        f = replace(self, **changes) if changes else self
        return dispatch(f.cands, f.units, f.nodes, f.in_plan, f.scen, f.penalty)


def stress(
    fixed: Fixed,
    delta: np.ndarray,
    index_linked: set[str] | None = None,
    claims: set[str] | None = None,
    claims_factor: float = 1.0,
) -> PlanStress:
    """The chosen portfolio held fixed and dispatched again (`dispatch`, the plan's own rule) with one input
    changed: every demand path scaled, market prices 20% higher, each committed vendor gone, availability one
    point lower, vendor-claimed throughput at the low end of its range."""
    cands, units, nodes, scen = fixed.cands, fixed.units, fixed.nodes, fixed.scen
    base = fixed.dispatch()
    cases = _cases(base, fixed, delta, index_linked or set())

    vendors = _vendors(base, fixed)
    slow_cands, slow_units = _slower(cands, units, {i: 1 - AVAILABILITY_POINT for i in range(len(cands))})
    slow_out = fixed.dispatch(cands=slow_cands, units=slow_units)
    availability = float(_extra(slow_out, base, scen).sum())
    availability_short = float(_short(slow_out, base, scen).sum())
    used = {cands[u.commit.offer].id for u, n in zip(units, nodes) if n > 0} | {
        cands[i].id for i, t in base.by_source.items() if t.max() > 0
    }
    claimed = {i for i, c in enumerate(cands) if c.id in (claims or set()) and c.id in used}
    claims_extra = claims_short = None
    if claimed and claims_factor < 1:
        claim_cands, claim_units = _slower(cands, units, {i: claims_factor for i in claimed})
        claim_out = fixed.dispatch(cands=claim_cands, units=claim_units)
        claims_extra = float(_extra(claim_out, base, scen).sum())
        claims_short = float(_short(claim_out, base, scen).sum())

    hours, gpu_hour_rent, task_rent = _pay_as_used_rent(base, cands, scen)
    return PlanStress(
        cases=cases,
        vendors=vendors,
        availability_point=availability,
        availability_shortfall=availability_short,
        claims_low_end=claims_extra,
        claims_shortfall=claims_short,
        claims_factor=claims_factor,
        pay_as_used_gpu_hours=[float(h) for h in hours],
        pay_as_used_gpu_hour_rent=[float(r) for r in gpu_hour_rent],
        pay_as_used_task_rent=task_rent,
    )


def _cases(base: Outcome, fixed: Fixed, delta: np.ndarray, index_linked: set[str]) -> list[PlanCase]:
    """The plan's figures with every demand path scaled, with market prices 20% higher, and on the scenarios
    `scenario_picks` names."""
    cands, scen = fixed.cands, fixed.scen
    cases = []
    for change, name in DEMAND_SHIFTS:
        shifted = scen if change == 0 else replace(scen, demand=scen.demand * (1 + change))
        out = base if change == 0 else fixed.dispatch(scen=shifted)
        cases.append(case_figures(name, 1 + change, out, shifted, delta, cands))
    move, name = PRICE_CASE
    dear, dear_units = _dearer(cands, fixed.units, move, index_linked)
    cases.append(case_figures(name, 1.0, fixed.dispatch(cands=dear, units=dear_units), scen, delta, dear))
    cases += [
        case_figures(name, 1.0, base, scen, delta, cands, pick) for name, pick in scenario_picks(base, scen, delta)
    ]
    return cases


def _pay_as_used_rent(base: Outcome, cands: list[Candidate], scen: Scenarios) -> tuple[np.ndarray, np.ndarray, float]:
    """The plan's expected pay-as-used GPU-hours and their rent by month, and the rent of what is billed per task."""
    prob = scen.probability
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
    return hours, gpu_hour_rent, task_rent


def _extra(out: Outcome, base: Outcome, scen: Scenarios) -> np.ndarray:
    """Expected extra cash by month against the plan (the shortfall's price apart: `_short`)."""
    return scen.probability @ (out.cash - base.cash)


def _short(out: Outcome, base: Outcome, scen: Scenarios) -> np.ndarray:
    """Expected extra shortfall by month against the plan: the tasks it leaves unserved at the unserved price, not
    cash."""
    if out.shortfall is None or base.shortfall is None:
        return np.zeros(scen.months)
    return scen.probability @ (out.shortfall - base.shortfall)


def _vendors(base: Outcome, fixed: Fixed) -> list[VendorStress]:
    """Each committed vendor gone, in the order of its first commitment: what the plan then pays and leaves
    unserved more."""
    cands, units, nodes, in_plan, scen = fixed.cands, fixed.units, fixed.nodes, fixed.in_plan, fixed.scen
    first: dict[str, tuple[int, list[str]]] = {}
    for u, n in sorted(zip(units, nodes), key=lambda un: un[0].first):
        if n > 0:
            cand = cands[u.commit.offer]
            month, offers = first.setdefault(cand.vendor, (u.first, []))
            if cand.id not in offers:
                offers.append(cand.id)
    vendors = []
    prob = scen.probability
    demand_total = float(prob @ scen.demand.sum(axis=1)) or 1.0
    for vendor, (month, offers) in sorted(first.items(), key=lambda kv: (kv[1][0], kv[0])):
        gone = np.array([c.vendor == vendor for c in cands])
        kept = np.array([0 if gone[u.commit.offer] else n for u, n in zip(units, nodes)], dtype=int)
        out = fixed.dispatch(
            nodes=kept, in_plan=(in_plan & ~gone[:, None]) if np.ndim(in_plan) == 2 else (in_plan & ~gone)
        )
        more, lost = _extra(out, base, scen), _short(out, base, scen)
        vendors.append(
            VendorStress(
                vendor=vendor,
                offers=offers,
                first_month=month + 1,
                extra_spend=float(more.sum()),
                extra_first_month=float(more[month]),
                unserved_share=float(prob @ out.unserved.sum(axis=1)) / demand_total,
                extra_shortfall=float(lost.sum()),
                extra_shortfall_first_month=float(lost[month]),
            )
        )
    return vendors
