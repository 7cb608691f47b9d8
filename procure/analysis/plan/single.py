"""Each offer alone (docs/plan.md, "The method": the best single offer): the baseline the plan must beat, found by
enumeration."""

from __future__ import annotations

import math

import numpy as np

from procure.analysis.plan.candidates import Candidate, Commit, Source, Unit
from procure.analysis.plan.discount import pv_shares
from procure.model.demand import Scenarios

# Node counts tried per term block for a single offer (beyond it, evenly spaced counts: memory stays bounded).
MAX_GRID = 257
GRID_CELLS = 4_000_000  # scenario-months x node counts evaluated at once


def single_offer(
    cand: Candidate, index: int, scen: Scenarios, delta: np.ndarray, penalty: float | None, before: float | None = None
) -> tuple[float, list[Unit], np.ndarray] | None:
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

    # Options that cover the horizon with blocks; one option throughout (a subset of what the portfolio may do).
    best: tuple[float, list[Unit], np.ndarray] | None = None
    commits = [c for c in cand.commits if not c.held] or [None]
    for commit in commits:
        units: list[Unit] = []
        nodes: list[int] = []
        total = lost
        term = max(1, commit.term_months) if commit is not None else H
        # a term from within a month runs N calendar months: it ends within the month N later, where the next starts
        stub = 1 if commit is not None and cand.first_share < 1 else 0
        for k, first in enumerate(range(start, H, term)):
            last = min(H - 1, first + term - 1 + stub)
            end = first + term - 1 + stub if commit is not None else last
            unit = _block_unit(cand, commit, k, first, last, end, stub) if commit is not None else None
            w = delta[first : last + 1]
            if unit is None:
                share = avail[first : last + 1]
                d = scen.demand[:, first : last + 1]
            else:
                # where two blocks meet within a month each serves its share of the month's demand; the first block
                # also meets the demand before the delivery day (its own source is not there yet either)
                share = unit.shares()[: last - first + 1]
                portion = share.copy()
                if k == 0:
                    portion[0] = 1.0
                d = scen.demand[:, first : last + 1] * portion[None, :]
            grid = np.zeros(1) if commit is None else _node_grid(commit, d)
            per_node = commit.tasks_node_month if commit is not None else 0.0
            if penalty is None:  # the most nodes leave a shortfall unserved: fewer nodes leave more, none serves
                most = d[None, :, :] - grid[-1:, None, None] * per_node * share[None, None, :]
                if np.isinf(_recourse(np.maximum(most, 0.0, out=most), share, d, src, penalty)).any():
                    total = math.inf
                    break
            expected = _expected_recourse(grid, per_node, share, d, prob, w, src, penalty)
            # A commitment costs its whole term (past the horizon too); the offer's fees are paid in the months it
            # holds capacity or its own pay-as-used source serves (every month of the block when it has one).
            whole = pv_shares(delta, first, unit.shares()) if unit is not None else 0.0
            fees_on = cand.fixed_monthly * whole
            fees_off = (
                cand.fixed_monthly * float(w @ (portion if unit is not None else np.ones(len(w))))
                if src is not None
                else 0.0
            )
            fixed_part = grid * (unit.cost_node_month * whole if unit is not None else 0.0) + np.where(
                grid > 0, fees_on + (fees_off if commit is None else 0.0), fees_off
            )
            block = expected + fixed_part
            g = int(np.argmin(block))
            if not math.isfinite(block[g]):
                total = math.inf
                break
            total += float(block[g])
            if unit is not None:
                units.append(unit)
                nodes.append(int(grid[g]))
        if math.isfinite(total) and (best is None or total < best[0] - 1e-9):
            best = (total, units, np.array(nodes, dtype=int))
    return best


def _block_unit(cand: Candidate, commit: Commit, k: int, first: int, last: int, end: int, stub: int) -> Unit:
    """The k-th term block of `commit` from `first`: renewals at the escalated price, later decisions at the market's
    expected move (candidates.term_units)."""
    later = first > cand.now_until
    return Unit(
        commit,
        first,
        last,
        end,
        renewal=k,
        later=later,
        market=(1 + cand.market_growth) ** (first / 12) if later else 1.0,
        first_share=cand.first_share,
        last_share=1.0 - cand.first_share if stub else 1.0,
    )


def _node_grid(commit: Commit, d: np.ndarray) -> np.ndarray:
    """The node counts tried for one block: none, or from the minimum to the most the block's highest demand `d`
    can use (at most MAX_GRID of them, evenly spaced beyond it)."""
    top = min(
        commit.max_nodes,
        math.ceil(float(d.max()) / commit.tasks_node_month) if commit.tasks_node_month > 0 else 0,
    )
    top = max(top, commit.min_nodes) if top > 0 else 0
    grid = (
        np.concatenate([[0], np.arange(commit.min_nodes if commit.min_nodes > 0 else 1, top + 1)])
        if top > 0
        else np.zeros(1)
    )
    if len(grid) > MAX_GRID:
        grid = np.unique(np.round(np.linspace(0, top, MAX_GRID)).astype(int))
        grid = grid[(grid == 0) | (grid >= commit.min_nodes)]
    return grid


def _recourse(
    short: np.ndarray, share: np.ndarray, d: np.ndarray, src: Source | None, penalty: float | None
) -> np.ndarray:
    """Expected cost of a shortfall (any shape ending in (S, months)) met by the own source, then the penalty.
    `short` is overwritten: each step writes into an array it already holds (node counts x scenario-months
    each), the same operations in the same order, so the same figures."""
    room = (src.cap_month * share) if src is not None else np.zeros_like(share)
    if src is not None and src.spot:
        room = np.minimum(room, src.share_limit * d)  # spot serves at most plan.max_spot_share of the demand
    used = np.minimum(short, room)
    if penalty is not None:
        left = np.subtract(short, used, out=short)
        cost = np.multiply(used, src.price_per_task if src is not None else 0.0, out=used)
        return np.add(cost, np.multiply(left, penalty, out=left), out=cost)
    left = short - used
    cost = np.multiply(used, src.price_per_task if src is not None else 0.0, out=used)
    limit = np.multiply(np.maximum(short, 1.0, out=short), 1e-9, out=short)  # 1e-9 x max(short, 1)
    np.copyto(cost, np.inf, where=np.greater(left, limit, out=np.empty(left.shape, dtype=bool)))
    return cost  # infinite where the shortfall is left unserved


def _expected_recourse(
    grid: np.ndarray,
    per_node: float,
    share: np.ndarray,
    d: np.ndarray,
    prob: np.ndarray,
    w: np.ndarray,
    src: Source | None,
    penalty: float | None,
) -> np.ndarray:
    """The expected, discounted cost of the shortfall left by each node count of `grid` (`_recourse`), computed in
    chunks of node counts so that memory stays bounded."""
    expected = np.empty(len(grid))
    step = max(1, GRID_CELLS // max(1, d.size))  # node counts per chunk: memory stays bounded
    for lo in range(0, len(grid), step):
        short = d[None, :, :] - grid[lo : lo + step, None, None] * per_node * share[None, None, :]
        np.maximum(short, 0.0, out=short)
        with np.errstate(invalid="ignore"):
            expected[lo : lo + step] = np.einsum("gsm,s,m->g", _recourse(short, share, d, src, penalty), prob, w)
    return expected
