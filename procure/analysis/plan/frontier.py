"""The frontier of expected cost against CVaR (`procure plan --frontier`, docs/plan.md "Risk")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from procure.analysis.plan.candidates import Candidate
from procure.analysis.plan.dispatch import dispatch
from procure.analysis.plan.figures import Figures, figures
from procure.analysis.plan.program import Risk, Setting
from procure.analysis.plan.result import FrontierPoint
from procure.analysis.plan.solver import solve_plan
from procure.errors import InputError

FRONTIER_LEVELS = 12  # demand levels a month the frontier's solves start from (the plan itself uses plan.levels)
# Each of the frontier's solves stops at plan.mip_gap (proven, kept in the solve cache like the plan's) or after this
# many branch-and-bound nodes: a count of work, not of seconds, so the same workspace gives the same frontier on any
# machine (a point whose limit the plan found does not keep on every path is left out). plan.time_limit_s stays the
# backstop: a solve stopped by it is machine-dependent and its point is left out too.
FRONTIER_NODES = 500
# The frontier's weights on CVaR (expected cost + w x CVaR, both in money a month): the least-CVaR plan at
# FRONTIER_SAFEST,
# the points between at weights spread geometrically over FRONTIER_WEIGHTS (on the example the frontier's slope, extra
# expected cost per unit of CVaR saved, runs from about 0.24 near the risk-neutral plan to 2.3 near the least-CVaR one).
FRONTIER_SAFEST = 1000.0
FRONTIER_WEIGHTS = (0.3, 3.0)


@dataclass(frozen=True)
class FrontierSolve:
    """One point of the frontier to solve: everything the solver and the figures read, so that it can be solved in
    another process (a report's layout workers) as well as in this one."""

    cands: list[Candidate]
    setting: Setting  # the plan's, with at most FRONTIER_LEVELS demand levels and this point's weight on CVaR


def solve_point(job: FrontierSolve) -> Figures | None:
    """A whole plan at this risk setting, or None when the solver finds none within its limits."""
    try:
        chosen = solve_plan(job.cands, job.setting, FRONTIER_NODES)
    except InputError:
        return None
    if chosen.solved.status.startswith("time limit"):
        return None  # stopped by the clock: another machine would find another plan
    s = job.setting
    return figures(
        dispatch(job.cands, chosen.units, chosen.nodes, chosen.in_plan, s.scen, s.penalty),
        s.scen,
        s.delta,
        s.policy.cvar_alpha,
    )


# How the frontier's solves are run: in order in this process, or spread over processes (a report's layout workers,
# which are idle while the plan is solved). The solves are independent and each is the same program wherever it
# runs, so the frontier is the same either way.
Solves = Callable[[Callable[[FrontierSolve], "Figures | None"], list[FrontierSolve]], list["Figures | None"]]


def in_order(solve: Callable[[FrontierSolve], Figures | None], jobs: list[FrontierSolve]) -> list[Figures | None]:
    return [solve(job) for job in jobs]


def efficient_frontier(
    cands: list[Candidate], setting: Setting, neutral: Figures, solves: Solves | None = None
) -> list[FrontierPoint]:
    """Expected cost against CVaR: the risk-neutral plan, the least-CVaR plan, and the plans between them that
    minimise expected cost + w x CVaR for weights w spread between (FRONTIER_WEIGHTS).

    A weighted plan is efficient: no plan has a lower expected cost at its CVaR or less (on the demand bands and
    tail paths it was solved on), so it is the frontier's point at the limit of its own CVaR. Weighted programs have
    no CVaR row to meet and are proven in a few nodes where a limited one may not finish (on the example a limit
    between the two ends did not finish within 60 s; its weighted neighbours are proven in seconds)."""
    # Each point is a whole plan whose figures are computed on every scenario; the solver sees at most
    # FRONTIER_LEVELS demand bands a month for it at first (refined like the plan's), and CVaR on whole paths.
    policy = setting.policy
    coarse = policy.model_copy(update={"levels": min(policy.levels, FRONTIER_LEVELS)})

    def job(risk: Risk) -> FrontierSolve:
        return FrontierSolve(cands, replace(setting, policy=coarse, risk=risk))

    # Every solve at once (the points between the ends are only kept when the least-CVaR plan lowers the CVaR).
    own_neutral = policy.cvar_weight > 0 or policy.cvar_limit is not None
    weights = [
        float(w) for w in np.geomspace(FRONTIER_WEIGHTS[0], FRONTIER_WEIGHTS[1], max(1, policy.frontier_points - 2))
    ]
    risks = ([Risk()] if own_neutral else []) + [Risk(weight=FRONTIER_SAFEST)] + [Risk(weight=w) for w in weights]
    found = (solves or in_order)(solve_point, [job(r) for r in risks])
    if own_neutral:
        neutral = found.pop(0) or neutral
    safest, *solved_between = found
    points = [
        FrontierPoint(
            cvar_limit=None,
            expected_cost_per_task=neutral.cost_per_task or 0.0,
            cvar=neutral.cvar,
            p90_monthly_spend=neutral.p90,
        )
    ]
    if safest is None or safest.cvar > neutral.cvar * (1 - 1e-6):
        return points  # no plan with a lower CVaR on every path was found
    between: list[Figures] = []
    for f in solved_between:
        # strictly between the two ends, on every path, and not a plan already shown
        if (
            f is not None
            and safest.cvar * (1 + 1e-6) < f.cvar < neutral.cvar * (1 - 1e-6)
            and all(abs(f.cvar - g.cvar) > 1e-6 * f.cvar for g in between)
        ):
            between.append(f)
    for f in sorted(between, key=lambda f: -f.cvar):
        points.append(
            FrontierPoint(
                cvar_limit=f.cvar, expected_cost_per_task=f.cost_per_task or 0.0, cvar=f.cvar, p90_monthly_spend=f.p90
            )
        )
    points.append(
        FrontierPoint(
            cvar_limit=safest.cvar,
            expected_cost_per_task=safest.cost_per_task or 0.0,
            cvar=safest.cvar,
            p90_monthly_spend=safest.p90,
        )
    )
    return points
