"""What the solver sees of the scenarios (docs/plan.md, "Tails: demand bands refined until exact" and "CVaR on
whole paths"): each month's scenarios in demand bands, split where the chosen plan's cost bends, and the paths the
CVaR sees first."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from procure.analysis.plan.candidates import Candidate, Unit
from procure.analysis.plan.discount import pv_months
from procure.analysis.plan.dispatch import fixed_spend, serve_pay_as_used, source_months
from procure.model.demand import Scenarios

# demand bands are refined until the banded cost of the chosen plan is within 0.1% of its cost on every scenario
BAND_TOLERANCE = 1e-3


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
                pieces = [
                    part
                    for piece in pieces
                    for part in (piece[scen.demand[piece, m] <= bp], piece[scen.demand[piece, m] > bp])
                    if len(part)
                ]
        for piece in pieces:
            dm, w = _band(scen, int(m), piece)
            month.append(int(m))
            demand.append(dm)
            weight.append(w)
            members.append(piece)
    return Bands(np.array(month, dtype=np.int64), np.array(demand), np.array(weight), members) if changed else None


def banded_cost(
    cands: list[Candidate],
    units: list[Unit],
    nodes: np.ndarray,
    in_plan: np.ndarray,
    bands: Bands,
    scen: Scenarios,
    penalty: float | None,
    delta: np.ndarray,
) -> float:
    """The present-value cost of a plan as the solver sees it: each band served at its mean demand."""
    H = scen.months
    capacity, commit_cost, beyond = fixed_spend(cands, units, nodes, in_plan, H)
    active = source_months(cands, H, in_plan)
    rest = np.maximum(bands.demand - capacity[bands.month], 0.0)
    extra, _, _, rest = serve_pay_as_used(cands, active, rest, bands.month, bands.demand)
    if penalty is not None:
        extra = extra + rest * penalty
    return (
        float(commit_cost @ delta[:H])
        + float((bands.weight * delta[bands.month]) @ extra)
        + sum(a * pv_months(delta, m, m) for m, a in beyond.items())
    )


def breakpoints(
    cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, months: int
) -> list[np.ndarray]:
    """Per month, the demands at which the plan's cost of one more task changes: the committed capacity, then the
    committed capacity plus the room of each pay-as-used source in the order they serve."""
    capacity, _, _ = fixed_spend(cands, units, nodes, in_plan, months)
    active = source_months(cands, months, in_plan)
    order = sorted(
        (c.source for c in cands if c.source is not None), key=lambda s: (s.price_per_task, cands[s.offer].id)
    )
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


def initial_tail(scen: Scenarios, alpha: float) -> np.ndarray:
    """The paths the CVaR sees first: those with the most demand, 1.2 times the tail's probability (at least one)."""
    order = np.argsort(-scen.demand.sum(axis=1), kind="stable")
    cum = np.cumsum(scen.probability[order])
    return np.sort(order[: max(1, int(np.searchsorted(cum, min(1.0, 1.2 * (1 - alpha)) - 1e-12)) + 1)])
