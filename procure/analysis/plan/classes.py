"""Near-copies (docs/plan.md, "Near-copies"): offers identical in every field the plan's program reads but their money
figures, their capacities, id and vendor form a class; the program keeps, of each class, only the members that fewer
than `keep` others undercut (no dearer in every money figure, no less capacity in every capacity figure)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from procure.analysis.plan.candidates import Candidate, term_units
from procure.analysis.plan.program import useful_nodes
from procure.model.demand import Scenarios
from procure.model.inputs import PlanConfig


@dataclass
class Reduction:
    """The candidates the program keeps (positions in the full list, in order) and what was left out: per class, its
    size and how many it keeps."""

    keep: list[int]
    classes: list[tuple[int, int]]  # (members, kept) of each class that lost a member
    kept: list[list[int]] = field(default_factory=list)  # the kept members of each class that lost a member
    scale: int = 1  # K of every class times this (doubled while a plan uses every kept member of a class)
    # the most a kept member's capacity exceeds a member's of its class, as a share (0: capacities equal in each class)
    spread: float = 0.0
    exact: bool = False  # capacities part of the class (equal within it), never compared

    def saturated(self, used: set[int]) -> bool:
        """Whether a plan uses every kept member of a class (positions in the full list)."""
        return any(set(members) <= used for members in self.kept)

    @property
    def dropped(self) -> int:
        return sum(size - kept for size, kept in self.classes)


def class_key(cand: Candidate, scen: Scenarios, exact: bool = False) -> tuple[object, ...] | None:
    """Everything the program reads of a candidate but its money figures, its capacities (`capacity_figures`), id and
    vendor; None for a candidate that is never reduced: one holding a signed contract (money already committed: in
    every plan). Spot capacity is reduced like any source: the spot sources share one row per band (together at
    most plan.max_spot_share of its demand), whose sum a member's part moved onto another keeps, and whether a source
    is spot and its share are in the key. The most nodes each term block can use (`useful_nodes`, read from the
    capacity) are in the key. `exact`: the capacities too."""
    if cand.held or any(c.held for c in cand.commits):
        return None
    src = cand.source
    peak = scen.demand.max(axis=0) if scen.demand.size else np.zeros(scen.months)
    return (
        cand.start,
        cand.first_share,
        cand.now_until,
        cand.market_growth,
        cand.new_commits,
        cand.fixed_monthly > 0,
        tuple((c.option, c.min_nodes, c.max_nodes, c.node_gpus, c.term_months, c.renewal_step) for c in cand.commits),
        tuple(useful_nodes(u, peak) for u in term_units([cand], scen.months)),
        None
        if src is None
        else (src.price_unit, src.term_months, src.spot, src.share_limit, src.cap_month == math.inf),
        tuple(capacity_figures(cand)) if exact else None,
    )


def capacity_figures(cand: Candidate) -> list[float]:
    """Every capacity figure of a candidate, in one order for every member of its class: the successful tasks a node
    of each commitment delivers in a month, and its pay-as-used room and tasks per GPU-month."""
    out = [c.tasks_node_month for c in cand.commits]
    if cand.source is not None:
        out += [cand.source.cap_month, cand.source.tasks_per_gpu_month or 0.0]
    return out


def money_figures(cand: Candidate, months: int) -> list[float]:
    """Every money figure the program reads of a candidate, in one order for every member of its class: the fixed
    monthly fees, each commitment's cost and rent of a node-month and its price, the cost of a node-month of each of
    its term blocks (renewals and later decisions priced apart), the pay-as-used price per task and its list price."""
    out = [cand.fixed_monthly]
    for c in cand.commits:
        out += [c.cost_node_month, c.rent_node_month, c.price]
    out += [u.cost_node_month for u in term_units([cand], months)]
    if cand.source is not None:
        out += [cand.source.price_per_task, cand.source.price]
    return out


def capacity_month(cand: Candidate) -> float:
    """The most successful tasks a candidate can serve in a month: its largest commitment at its most nodes plus its
    pay-as-used room."""
    committed = max((c.max_nodes * c.tasks_node_month for c in cand.commits), default=0.0)
    return committed + (cand.source.cap_month if cand.source is not None else 0.0)


def class_keep(cand: Candidate, peak: float, share: float) -> int:
    """How many members of a class the program keeps: k, the fewest members that carry the most demand of any
    scenario-month (`peak`) when each carries at most its capacity and at most plan.max_vendor_share of that peak,
    and one more as margin."""
    carry = min(capacity_month(cand), share * peak)
    if not carry > 0 or not math.isfinite(peak):
        return 0  # 0: keep every member
    return math.ceil(peak / carry - 1e-9) + 1


def undercut_counts(figures: np.ndarray, ids: list[str]) -> np.ndarray:
    """For each member, how many others are no higher in every figure (rows of `figures`: money figures and negated
    capacities): strictly lower in one of them, or equal in all and earlier by id (so that equal members are counted
    once each way, never both)."""
    n = len(ids)
    counts = np.zeros(n, dtype=np.int64)
    rank = np.argsort(np.array(ids, dtype=object), kind="stable")
    order = np.empty(n, dtype=np.int64)
    order[rank] = np.arange(n)
    for b in range(n):
        le = (figures <= figures[b]).all(axis=1)
        lt = (figures < figures[b]).any(axis=1)
        before = le & (lt | (order < order[b]))
        before[b] = False
        counts[b] = int(before.sum())
    return counts


def reduce_near_copies(
    cands: list[Candidate], scen: Scenarios, policy: PlanConfig, scale: int = 1, exact: bool = False
) -> Reduction:
    """The candidates the plan's program needs: every one, but of each class of near-copies only the members fewer
    than `class_keep` others undercut (no dearer in every money figure, no less in every capacity figure). A held
    contract and an offer whose vendor has another offer are never left out (a vendor's share is read
    over all of its offers). `scale` multiplies what each class keeps; `exact`: capacities equal within a class."""
    vendors: dict[str, int] = {}
    for cand in cands:
        vendors[cand.vendor] = vendors.get(cand.vendor, 0) + 1
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, cand in enumerate(cands):
        key = class_key(cand, scen, exact) if vendors[cand.vendor] == 1 else None
        if key is not None:
            groups.setdefault(key, []).append(i)
    peak = float(scen.demand.max()) if scen.demand.size else 0.0
    dropped: set[int] = set()
    classes = []
    kept = []
    spread = 0.0
    for members in groups.values():
        keep = max(class_keep(cands[i], peak, float(policy.max_vendor_share)) for i in members) * scale
        if keep == 0 or len(members) <= keep:
            continue
        figures = np.array([money_figures(cands[i], scen.months) for i in members], dtype=float)
        capacity = np.array([capacity_figures(cands[i]) for i in members], dtype=float)
        if figures.ndim != 2 or not np.isfinite(figures).all() or capacity.shape[0] != len(members):
            continue
        counts = undercut_counts(np.hstack([figures, -capacity]), [cands[i].id for i in members])
        out = [i for i, c in zip(members, counts) if c >= keep]
        if out:
            dropped.update(out)
            classes.append((len(members), len(members) - len(out)))
            kept.append([i for i, c in zip(members, counts) if c < keep])
            spread = max(spread, capacity_spread(capacity))
    return Reduction([i for i in range(len(cands)) if i not in dropped], classes, kept, scale, spread, exact)


def capacity_spread(capacity: np.ndarray) -> float:
    """The most one member's capacity figure exceeds another's of its class (rows of `capacity`), as a share of the
    lower: 0 when they are equal (an unlimited room equal to an unlimited room)."""
    finite = np.isfinite(capacity).all(axis=0)
    if not (finite | (capacity == math.inf).all(axis=0)).all():
        return math.inf
    low, high = capacity[:, finite].min(axis=0), capacity[:, finite].max(axis=0)
    if (low <= 0).any() and (high > low).any():
        return math.inf
    return float(np.max(high / np.where(low > 0, low, 1.0) - 1.0, initial=0.0))


def share_allowed(policy: PlanConfig, reduction: Reduction) -> PlanConfig:
    """The policy the reduced program is solved under: with a vendor share rule and capacities that differ within a
    class, its share raised by their spread (docs/plan.md, "Near-copies", point 2), so that every plan over every
    offer, moved onto the kept members, is one of its plans; the plan it finds is taken only where it keeps the
    share itself (`solve_reduced`)."""
    if policy.max_vendor_share >= 1 or not reduction.dropped or reduction.spread <= 0:
        return policy
    return policy.model_copy(update={"max_vendor_share": min(1.0, policy.max_vendor_share * (1 + reduction.spread))})


Found = TypeVar("Found")


def solve_reduced(
    cands: list[Candidate],
    scen: Scenarios,
    policy: PlanConfig,
    reduction: Reduction,
    notes: list[str],
    solve: Callable[[Reduction, list[str], PlanConfig], Found],
    used: Callable[[Found], set[str]],
    shares_kept: Callable[[Found], bool],
) -> Found:
    """`solve` over the candidates `reduction` keeps, under `share_allowed`; while its plan uses every kept member of
    a class (ids `used`), what each class keeps is doubled and the program solved again (docs/plan.md, "Near-copies",
    point 4). A plan found under a raised vendor share that breaks the share itself (`shares_kept`) is not taken: the
    classes are formed again with capacities equal within each, and the program solved under the share as stated."""
    ids = {c.id: i for i, c in enumerate(cands)}
    while True:
        start = len(notes)
        if reduction.dropped:
            notes.append(reduction_note(reduction, len(cands)))
        allowed = share_allowed(policy, reduction)
        found = solve(reduction, notes, allowed)
        if allowed is not policy and not shares_kept(found):
            del notes[start:]
            reduction = reduce_near_copies(cands, scen, policy, reduction.scale, exact=True)
            continue
        if not reduction.dropped or not reduction.saturated({ids[i] for i in used(found)}):
            return found
        del notes[start:]
        reduction = reduce_near_copies(cands, scen, policy, reduction.scale * 2, reduction.exact)


def reduction_note(reduction: Reduction, usable: int) -> str:
    """The reduction in words: how many offers the program left out as near-copies of cheaper ones."""
    kept = sum(k for _, k in reduction.classes)
    members = sum(n for n, _ in reduction.classes)
    return (
        f"{members:,} of the {usable:,} usable offers are near-copies in {len(reduction.classes):,} "
        f"class{'es' if len(reduction.classes) != 1 else ''} (the same terms from other vendors, at other prices): the "
        f"program keeps the {kept:,} of them that fewer than as many others as it could use are cheaper than in every "
        f"money figure{' and no less in capacity' if reduction.spread > 0 else ''}, {len(reduction.keep):,} offers in "
        "all; an offer it leaves out cannot make a plan cheaper "
        '(docs/plan.md, "Near-copies")'
    )
