"""Serving a month (docs/plan.md, "In plain words" 4): every scenario-month dispatched as a buyer would, committed
capacity first, then the cheapest pay-as-used source with room. The plan's reported figures come from it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from procure.analysis.plan.candidates import Candidate, Unit
from procure.analysis.plan.discount import pv_months
from procure.model.demand import Scenarios


def source_months(cands: list[Candidate], months: int, in_plan: np.ndarray) -> np.ndarray:
    """(candidates, months) bool: when each offer's pay-as-used source may serve. A 1-D `in_plan` (offer in the
    plan or not) means every month from its delivery."""
    avail = np.array([c.available(months) for c in cands]).reshape(len(cands), months) > 0
    active = np.asarray(in_plan, dtype=bool)
    if active.ndim == 1:
        active = active[:, None] & avail
    return active & avail


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
    beyond: dict[int, float] = field(
        default_factory=dict
    )  # month index past the horizon -> committed spend (whole terms)
    shortfall: np.ndarray | None = (
        None  # (S, H) unserved tasks at the unserved price: in `spend` (the cost the plan minimises), never cash
    )

    @property
    def cash(self) -> np.ndarray:
        """(S, H) what is paid each month: `spend` without the shortfall's price."""
        return self.spend if self.shortfall is None else self.spend - self.shortfall

    @property
    def beyond_total(self) -> float:
        return float(sum(self.beyond.values()))

    def beyond_pv(self, delta: np.ndarray) -> float:
        return float(sum(amount * pv_months(delta, m, m) for m, amount in self.beyond.items()))


def fixed_spend(
    cands: list[Candidate], units: list[Unit], nodes: np.ndarray, in_plan: np.ndarray, months: int
) -> tuple[np.ndarray, np.ndarray, dict[int, float]]:
    """Committed capacity a month, what commitments and fixed fees cost a month, and committed spend past the horizon.

    An offer's fixed fees and staff are paid in the months it holds committed capacity (its whole term) or its
    pay-as-used source is switched on; a commitment's rent is paid for its whole term."""
    capacity = np.zeros(months)
    commit_cost = np.zeros(months)
    beyond: dict[int, float] = {}
    active = source_months(cands, months, in_plan)
    holds = np.zeros((len(cands), months))  # share of each month an offer holds committed capacity
    for u, n in zip(units, nodes):
        if n <= 0:
            continue
        cand = cands[u.commit.offer]
        held = u.available(cand, months)[u.first : u.last + 1]
        capacity[u.first : u.last + 1] += n * u.commit.tasks_node_month * held
        commit_cost[u.first : u.last + 1] += n * u.cost_node_month * held
        holds[u.commit.offer, u.first : u.last + 1] = np.minimum(
            1.0, holds[u.commit.offer, u.first : u.last + 1] + held
        )
        shares = u.shares()
        for m in range(u.last + 1, u.term_end + 1):
            w = float(shares[m - u.first])
            beyond[m] = beyond.get(m, 0.0) + (n * u.cost_node_month + cand.fixed_monthly) * w
    for i, cand in enumerate(cands):
        if cand.fixed_monthly > 0:
            # fees ride on a monthly switch when the offer's own pay-as-used source carries them (whole months, as
            # the program's g switch); on a commitment alone, on the share of the month it holds
            paid = ((holds[i] > 0) | active[i]).astype(float) if cand.source is not None else holds[i]
            commit_cost += cand.fixed_monthly * paid
    return capacity, commit_cost, beyond


def spot_limit(cands: list[Candidate]) -> float:
    """The most of a month's demand spot sources may serve together (plan.max_spot_share; 1 without spot)."""
    return min((c.source.share_limit for c in cands if c.source is not None and c.source.spot), default=1.0)


def serve_pay_as_used(
    cands: list[Candidate], active: np.ndarray, rest: np.ndarray, month: np.ndarray, demand: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray], np.ndarray]:
    """Serve `rest` (demand above the committed capacity; any shape whose last axis is indexed by `month`) by the
    cheapest pay-as-used source with room in each month; spot sources together serve at most spot_limit x `demand`
    (the shape of `rest`). Returns spend, tasks served pay-as-used, by source, and the rest."""
    left = spot_limit(cands) * np.asarray(demand, dtype=float)
    spend = np.zeros_like(rest)
    payg = np.zeros_like(rest)
    by_source: dict[int, np.ndarray] = {}
    order = sorted(
        (c.source for c in cands if c.source is not None and active[c.source.offer].any()),
        key=lambda s: (s.price_per_task, cands[s.offer].id),
    )
    for source in order:
        avail = cands[source.offer].available(active.shape[1])
        with np.errstate(invalid="ignore"):
            room = np.where(
                active[source.offer] & (avail > 0), source.cap_month * np.where(avail > 0, avail, 1.0), 0.0
            )[month]
        take = np.minimum(rest, room)
        if source.spot:
            take = np.minimum(take, left)
            left = left - take
        rest = rest - take
        spend = spend + take * source.price_per_task
        payg = payg + take
        by_source[source.offer] = take
    return spend, payg, by_source, rest


def dispatch(
    cands: list[Candidate],
    units: list[Unit],
    nodes: np.ndarray,
    in_plan: np.ndarray,
    scen: Scenarios,
    penalty: float | None,
) -> Outcome:
    S, H = scen.demand.shape
    capacity, commit_cost, beyond = fixed_spend(cands, units, nodes, in_plan, H)
    active = source_months(cands, H, in_plan)
    demand = scen.demand
    from_commit = np.minimum(demand, capacity[None, :])
    extra, payg, by_source, rest = serve_pay_as_used(cands, active, demand - from_commit, np.arange(H), demand)
    spend = commit_cost[None, :] + extra
    shortfall = None
    if penalty is not None:
        shortfall = rest * penalty
        spend = spend + shortfall
    served = demand - rest
    # Committed tasks by unit, in proportion to each unit's share of the month's committed capacity.
    by_unit = np.zeros(len(units))
    expected_commit = scen.probability @ from_commit
    for j, (u, n) in enumerate(zip(units, nodes)):
        months = slice(u.first, u.last + 1)
        own = n * u.commit.tasks_node_month * u.available(cands[u.commit.offer], H)[months]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(capacity[months] > 0, own / capacity[months], 0.0)
        by_unit[j] = float((share * expected_commit[months]).sum())
    return Outcome(capacity, spend, served, payg, by_source, by_unit, rest, commit_cost, beyond, shortfall)
