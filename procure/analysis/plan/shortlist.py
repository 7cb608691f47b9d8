"""No offer is dropped unseen (docs/plan.md, "The method"): with more offers than plan.max_candidates, the ones the
linear relaxation uses most and the best single offers, then the check of the whole program against the
shortlist's plan."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from procure.analysis.plan.candidates import Candidate
from procure.analysis.plan.program import Setting, build_model
from procure.analysis.plan.solver import Chosen, program_inputs, solve_model, work_limits

CHECK_TOLERANCE = (
    1e-6  # the shortlist check looks for a plan cheaper by more than this share (or plan.mip_gap, if larger)
)


def reindexed(cands: list[Candidate], keep: list[int]) -> list[Candidate]:
    """The kept candidates, renumbered (commitments and sources point at their candidate's position)."""
    out = []
    for new, old in enumerate(keep):
        cand = cands[old]
        out.append(
            replace(
                cand,
                commits=[replace(c, offer=new) for c in cand.commits],
                source=replace(cand.source, offer=new) if cand.source else None,
            )
        )
    return out


def shortlist(
    cands: list[Candidate], setting: Setting, alone: list[float | None] | None = None
) -> tuple[list[int], float | None]:
    """With more offers than plan.max_candidates, keep the ones the linear relaxation uses most, every offer holding a
    signed contract, and always the best single offers (`alone`: each offer's cost alone; a quarter of the shortlist
    at least): the relaxation spreads fixed fees thinly, so an offer dear by the hour but without fees can look unused
    there while it is the best alone.

    Returns the kept positions and the relaxation's objective over every offer: a proven lower bound,
    so the distance of the plan from the best plan over all offers can be stated."""
    scen, policy = setting.scen, setting.policy
    if len(cands) <= policy.max_candidates:
        return list(range(len(cands))), None
    model = build_model(cands, setting)
    model.integrality = np.zeros(
        len(model.c), dtype=int
    )  # the relaxation: no whole numbers; kept and read back like a plan
    options: dict[str, object] = {"time_limit": float(policy.time_limit_s), "disp": False}
    relaxed = solve_model(model, program_inputs("relaxation", cands, setting), options)
    if relaxed.x is None:
        return list(range(len(cands))), None
    x = relaxed.x
    use = np.zeros(len(cands))
    n_months = [float(u.available(cands[u.commit.offer], scen.months)[u.first : u.last + 1].sum()) for u in model.units]
    n = x[model.layout["n"]]
    for j, u in enumerate(model.units):
        use[u.commit.offer] += n[j] * u.commit.tasks_node_month * n_months[j]
    z = x[model.layout["z"]].reshape(len(model.sources), -1) if model.sources else np.zeros((0, 1))
    for p, source in enumerate(model.sources):
        use[source.offer] += float(z[p].sum())
    score = [
        min(
            [c.cost_node_month / c.tasks_node_month for c in cand.commits if c.tasks_node_month > 0]
            + ([cand.source.price_per_task] if cand.source else [math.inf])
        )
        for cand in cands
    ]
    order = sorted(range(len(cands)), key=lambda i: (-use[i], score[i], cands[i].id))
    keep = set(order[: policy.max_candidates])
    if alone is not None:
        best = sorted((a, cands[i].id, i) for i, a in enumerate(alone) if a is not None and math.isfinite(a))
        keep |= {i for _, _, i in best[: max(1, policy.max_candidates // 4)]}
    # A held contract is money already committed: in every plan, whatever the relaxation makes of it, so the shortlist's
    # program holds what the whole program holds and its bound is a bound on it.
    keep |= {i for i, cand in enumerate(cands) if cand.held}
    return sorted(keep), float(relaxed.fun)


def whole_check(cands: list[Candidate], setting: Setting, chosen: Chosen) -> tuple[str, bool]:
    """Whether any offer the shortlist left out could enter a better plan: the whole program over every offer, on the
    demand bands and tail paths of the shortlist's last solve, with one more row, objective <= the shortlist plan's
    objective x (1 - plan.mip_gap, at least CHECK_TOLERANCE). Infeasible proves that no plan over all offers is cheaper
    by more than the gap
    (the shortlist's plan is then within the solver's gap of the whole optimum). Returns what was found and whether a
    better plan exists (then the whole program is solved)."""
    policy = setting.policy
    model = build_model(cands, setting, chosen.model.bands, chosen.model.tail)
    tolerance = max(float(policy.mip_gap), CHECK_TOLERANCE)
    cutoff = (
        float(chosen.solved.objective) - tolerance * abs(float(chosen.solved.objective))
        if chosen.solved.objective is not None
        else math.inf
    )
    inputs = program_inputs("check", cands, setting, chosen.model.bands, chosen.model.tail)
    result = solve_model(model, inputs, work_limits(policy), cutoff)
    n = len(cands)
    if result.x is not None:
        return (
            f"the program over all {n} usable offers has a cheaper plan than the shortlist's: the whole program is "
            "solved",
            True,
        )
    if result.status == 2:
        return (
            f"proven: the program over all {n} usable offers has no plan cheaper than the shortlist's by more than the "
            "solver's gap "
            f"({tolerance:.2%}), so no left-out offer can enter a better plan"
        ), False
    return (
        f"not proven: the program over all {n} usable offers, with the shortlist's plan as a cutoff, did not finish "
        "within "
        f"plan.node_limit ({policy.node_limit:,} nodes) or the plan.time_limit_s backstop ({policy.time_limit_s:g} s); "
        "a left-out offer may improve the plan (raise plan.max_candidates to solve them all)"
    ), False
