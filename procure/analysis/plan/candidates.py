"""What can be combined (docs/plan.md, "In plain words" 2 and 3): the usable offers as commitments (whole nodes,
per option) and pay-as-used sources, each from its delivery month, and the commitments in blocks of their term."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal, NamedTuple

import numpy as np

from procure.analysis.evaluate import CostInputs, Evaluation
from procure.analysis.record import OfferRecord
from procure.model.calendar import month_index, share_through, starts_from
from procure.model.costing import HOURS_PER_MONTH, cost_arrays
from procure.model.inputs import Burst, Offer
from procure.model.kinds import kind_of


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
    # the part of cost_node_month that is rent (escalators averaged over the term): what renewals and the market move
    rent_node_month: float = 0.0
    # the price a renewal starts from, over the term's first price (cashflow.renewal_step: the escalators one month on)
    renewal_step: float = 1.0
    held: bool = False  # a contract already signed (contract.signed): its nodes are fixed, never chosen


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
    share_limit: float = (
        1.0  # the most of each month's demand it may serve (spot: plan.max_spot_share, all spot sources together)
    )


class Tranche(NamedTuple):
    """A signed tranche (contract.signed) in plan months, 0-based: its first (0 when it began before the as-of month),
    its last within the horizon and the last of its term, its GPUs, and the shares of its first and last months it
    covers (a tranche from 15 May holds 17/31 of May)."""

    first: int
    last: int
    end: int
    gpus: int
    first_share: float = 1.0
    last_share: float = 1.0

    def within(self) -> np.ndarray:
        """The share of each plan month first..last (within the horizon) the tranche holds."""
        out = np.ones(self.last - self.first + 1)
        out[0] *= self.first_share
        if self.last == self.end:
            out[-1] *= self.last_share
        return out


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
    # the last month (0-based) a commitment may start in and be signed now (-1: none: the offer expired or delivers
    # after the window)
    now_until: int = -1
    market_growth: float = 0.0  # the index change a year later decisions are priced at (horizon.index_growth)
    held: list[Tranche] = field(default_factory=list)  # signed tranches (held_months)
    new_commits: bool = True  # False: a held contract on an offer the plan may not add to (it fails a gate)

    def available(self, months: int) -> np.ndarray:
        """Share of each month the offer's capacity exists: 0 before delivery, prorated in the delivery month."""
        out = np.zeros(months)
        if self.start < months:
            out[self.start] = self.first_share
            out[self.start + 1 :] = 1.0
        return out


@dataclass
class Unit:
    """A commitment variable: one commit of one candidate over one term block of months.

    Months are calendar months (procure.model.calendar): a block that starts within a month holds `first_share` of it
    and, its term being N calendar months from that day, `last_share` (the rest) of the month N later. Capacity and
    charge both follow those shares, so a partly delivered month is paid for what it delivers."""

    commit: Commit
    first: int  # month index, 0-based
    last: int  # inclusive, within the horizon
    end: int | None = None  # the term's last month (inclusive), past the horizon when the term runs beyond it
    renewal: int = 0  # how many terms of this commit ran before this block (0: the first)
    later: bool = (
        False  # starts after the decision window: an intention priced at the expected future price, not signed now
    )
    market: float = 1.0  # the expected market move of its rent by its start (later blocks only)
    first_share: float = 1.0  # share of the first month the block holds (from its first day)
    last_share: float = 1.0  # share of the term's last month it holds (to its last day)

    @property
    def term_end(self) -> int:
        return self.last if self.end is None else self.end

    @property
    def cost_node_month(self) -> float:
        """A node-month of this block: a renewal starts from the escalated price of the term before
        (contract.renewal_price), compounded per renewal; a later decision at the market's expected move."""
        factor = self.commit.renewal_step**self.renewal * self.market
        return self.commit.cost_node_month + self.commit.rent_node_month * (factor - 1.0)

    @property
    def held(self) -> bool:
        return self.commit.held

    def shares(self) -> np.ndarray:
        """The share of each month of the whole term (first..term_end) the block holds and is charged for."""
        out = np.ones(self.term_end - self.first + 1)
        out[0] *= self.first_share
        out[-1] *= self.last_share
        return out

    def available(self, cand: Candidate, months: int) -> np.ndarray:
        """Share of each plan month the block's capacity exists (0 outside the block)."""
        out = np.zeros(months)
        if self.first < months:
            inside = self.shares()[: min(self.last, months - 1) - self.first + 1]
            out[self.first : self.first + len(inside)] = inside
        return out

    def charged_months(self, first: int | None = None, last: int | None = None) -> float:
        """Months of rent the block pays over months first..last (default: its whole term), its shares counted."""
        lo = self.first if first is None else max(first, self.first)
        hi = self.term_end if last is None else min(last, self.term_end)
        return float(self.shares()[lo - self.first : hi - self.first + 1].sum()) if hi >= lo else 0.0

    @property
    def beyond(self) -> int:
        """Months of the term past the horizon's last month (`last` when the term runs past it)."""
        return self.term_end - self.last


def eligible(record: OfferRecord) -> tuple[bool, str]:
    """Acceptable offers, and offers that fail only the capacity gate (too small alone, usable in a portfolio)."""
    failing = [g for g in record.gates if not g.passed]
    # Spot capacity serves only as pay-as-used burst (candidates gives it a source, never a commitment);
    # its interruptions are priced in its capacity, so the availability gate does not bar it.
    burst_ok = getattr(record, "role", "primary") == "burst" and all(
        g.gate in ("availability", "capacity") for g in failing
    )
    if record.acceptable or burst_ok or (failing and all(g.gate == "capacity" for g in failing)):
        if kind_of(record.terms.pricing).per_task:
            ok = record.metrics.get("rent_per_task") is not None
        else:
            ok = (record.metrics.get("capacity_per_gpu_hour") or 0) > 0 and record.metrics.get(
                "variable_gpu_hour"
            ) is not None
        return (True, "") if ok else (False, "no cost per task")
    return False, "; ".join(record.reasons) or "not acceptable"


def _variant_costs(inputs: CostInputs, rows: list[tuple[int, dict[str, object]]]) -> np.ndarray:
    """variable_gpu_hour of copies of offers' input rows with some inputs replaced (the same cost model)."""
    if not rows:
        return np.empty(0)
    cols: dict[str, np.ndarray] = {}
    for name, values in inputs.columns.items():
        picked = [changes.get(name, values[i]) for i, changes in rows]
        cols[name] = (
            np.array(picked, dtype=float)
            if values.dtype.kind == "f"
            else np.array(picked, dtype=object if values.dtype.kind in "USO" else values.dtype)
        )
    return cost_arrays(cols, inputs.model, only=("variable_gpu_hour",))["variable_gpu_hour"]


def delivery(promised: date | None, as_of: date, delay_weeks: float) -> tuple[int, float]:
    """The first plan month (0-based) with capacity and the share of it from the delivery day on: the promised date
    plus the expected delay (horizon.expected_delay_weeks), on the plan's calendar (procure.model.calendar)."""
    if promised is None:
        return 0, 1.0
    return starts_from(as_of, promised + timedelta(weeks=delay_weeks))


def decision_window(ev: Evaluation, inputs: CostInputs, decide_within: date | None = None) -> date:
    """The end of the decision window (plan.decide_within): by default the earliest expiry (valid_until) of the offers
    still valid at the as-of date that pass their gates, after which today's quotes can no longer be signed."""
    if decide_within is not None:
        return decide_within
    usable = {r.id for r in ev.offers if eligible(r)[0]}
    ends = [o.valid_until for o in inputs.offers if o.id in usable and o.valid_until >= ev.as_of]
    return min(ends, default=ev.as_of)


def now_until(offer: Offer, as_of: date, start: int, delay_weeks: float, window: date) -> int:
    """The last month (0-based) a commitment to `offer` may start in and still be signed now: the offer valid at the
    as-of date, and the block's first day (the delivery for the first block, else in the month) within the window.
    -1: nothing of it can be signed now."""
    if offer.valid_until < as_of:
        return -1
    arrives = (offer.delivery + timedelta(weeks=delay_weeks)) if offer.delivery is not None else as_of
    if arrives > window:
        return -1
    return max(start, month_index(as_of, window) - 1)


def held_months(offer: Offer, as_of: date, months: int | None) -> list[Tranche]:
    """Each signed tranche still running (contract.signed) as plan months. A tranche signed after the as-of date is not
    held then (not_yet_signed says so)."""
    out = []
    for c in offer.contract.signed or []:
        if c.end < as_of or c.date > as_of:
            continue
        first, first_share = starts_from(as_of, c.start)
        last = month_index(as_of, c.end) - 1
        if months is not None and first >= months:
            continue
        out.append(
            Tranche(
                first,
                last if months is None else min(last, months - 1),
                last,
                c.gpus,
                first_share,
                share_through(c.end),
            )
        )
    return out


def not_yet_signed(offers: list[Offer], as_of: date) -> list[str]:
    """A note for each tranche (contract.signed) whose signing date is after the as-of date: not held then."""
    return [
        f"{o.id}: the contract of {c.gpus:,} GPUs signed {c.date} (contract.signed) is after the as-of date "
        f"{as_of}: not held in the plan as of then"
        for o in offers
        for c in o.contract.signed or []
        if c.date > as_of and c.end >= as_of
    ]


def _costed(record: OfferRecord) -> bool:
    """The cost model gave the offer a cost per GPU-hour and a capacity: a held contract on it can be costed."""
    m = record.metrics
    return (
        not kind_of(record.terms.pricing).per_task
        and (m.get("capacity_per_gpu_hour") or 0) > 0
        and m.get("variable_gpu_hour") is not None
    )


def _renewal_step(offer: Offer, term: int) -> float:
    """The price a renewal starts from, over the term's first price: the cash flow's renewal rule
    (cashflow.renewal_step), compounded per renewal by `Unit.cost_node_month` as cashflow.contract_factor does."""
    from procure.analysis.cashflow import renewal_step

    return renewal_step(offer.contract, term)


def _rent(price: float, offer: Offer, term: int, node: int) -> float:
    """The rent of one node-month over a term, its escalators averaged (cashflow.term_average_rent): the part of the
    cost a renewal and the market move."""
    from procure.analysis.cashflow import term_average_rent

    return float(term_average_rent(price, offer.contract, term) or 0.0) * node * HOURS_PER_MONTH


def candidates(
    ev: Evaluation,
    inputs: CostInputs,
    fte_cost_year: float,
    output_tokens: int,
    success_fallback: float,
    months: int | None = None,
    delay_weeks: float = 0.0,
    spot_share: float = 1.0,
    window: date | None = None,
    market_growth: float = 0.0,
) -> tuple[list[Candidate], dict[str, str]]:
    """The offers the plan may use, sorted by id (file order never matters), with their commitments and sources.

    An offer delivered after the last of `months` is not a candidate (with the reason). Spot capacity is a source
    only, serving at most `spot_share` (plan.max_spot_share) of each month's demand. `window`: the end of the decision
    window (default `decision_window`); `market_growth`: the index change a year later decisions are priced at.
    A signed contract (contract.signed) is a held commitment, fixed, even on an offer that no longer passes its
    gates."""
    by_id = {o.id: (i, o) for i, o in enumerate(inputs.offers)}
    excluded: dict[str, str] = {}
    found: list[Candidate] = []
    pending: list[tuple[Commit | Source, int, dict[str, object], float]] = []  # (target, input row, changes, capacity)
    window = window or decision_window(ev, inputs)
    for record in sorted(ev.offers, key=lambda r: r.id):
        ok, why = eligible(record)
        row, offer = by_id[record.id]
        tranches = held_months(offer, ev.as_of, months)
        if not ok and not (tranches and _costed(record)):
            excluded[record.id] = why
            continue
        start, share = delivery(offer.delivery, ev.as_of, delay_weeks)
        if months is not None and start >= months and not tranches:
            late = f" + {delay_weeks:g} weeks expected delay" if delay_weeks else ""
            excluded[record.id] = (
                f"delivered in month {start + 1} ({offer.delivery}{late}), after the {months}-month horizon"
            )
            continue
        m = record.metrics
        cand = Candidate(
            record.id,
            record.vendor,
            float(m["fixed_monthly"] or 0.0),
            start=start,
            first_share=share,
            cost_per_task=m.get("cost_per_task"),
            now_until=now_until(offer, ev.as_of, start, delay_weeks, window),
            market_growth=market_growth,
            held=tranches,
            new_commits=ok and (months is None or start < months),
        )
        if not cand.new_commits:
            excluded[record.id] = (
                f"held only (contract.signed): {why or 'delivered after the horizon'}; nothing more is added to it"
            )
        index = len(found)
        if tranches and not kind_of(record.terms.pricing).per_task:
            _held_commits(cand, index, offer, m, tranches)
        if not cand.new_commits:
            found.append(cand)
            continue
        if kind_of(record.terms.pricing).per_task:
            cand.source = _per_task_source(index, offer, m, output_tokens, success_fallback)
            found.append(cand)
            continue
        _gpu_hour_terms(cand, index, record, offer, row, float(inputs.columns["fx"][row]), spot_share, pending)
        found.append(cand)
    costs = _variant_costs(inputs, [(row, changes) for _, row, changes, _ in pending])
    for (target, _, _, scale), variable in zip(pending, costs):
        if isinstance(target, Commit):
            target.cost_node_month = float(variable) * target.node_gpus * HOURS_PER_MONTH
        else:
            target.price_per_task = float(variable) * HOURS_PER_MONTH / scale
    return found, excluded


def _per_task_source(
    index: int, offer: Offer, m: dict[str, Any], output_tokens: int, success_fallback: float
) -> Source:
    """An offer priced per token: a pay-as-used source at the mean of its drawn rent per task, up to its token
    capacity."""
    per_task = float(m.get("expected_rent_per_task") or m["rent_per_task"])  # the mean of its draws
    return Source(
        index,
        per_task,
        _token_cap(offer, output_tokens, float(m["success_rate"] or success_fallback)),
        per_task,
        "task",
        None,
        max(1, offer.contract_months),
    )


def _held_commits(cand: Candidate, index: int, offer: Offer, m: dict[str, Any], tranches: list[Tranche]) -> None:
    """What a signed contract holds (contract.signed): one commitment of each GPU count held, fixed."""
    per_gpu = costed_capacity(m) * HOURS_PER_MONTH
    for gpus in sorted({t[3] for t in tranches}):
        # one "node" of every GPU held: its count is fixed at 1 (program.py bounds held blocks to exactly that)
        cand.commits.append(
            Commit(
                index,
                f"held: {gpus} GPUs",
                1,
                1,
                gpus,
                offer.contract_months,
                float(m.get("rent_today", m["rent"]) or 0.0),
                float(m["variable_gpu_hour"]) * gpus * HOURS_PER_MONTH,
                per_gpu * gpus,
                held=True,
            )
        )


def _gpu_hour_terms(
    cand: Candidate,
    index: int,
    record: OfferRecord,
    offer: Offer,
    row: int,
    fx: float,
    spot_share: float,
    pending: list[tuple[Commit | Source, int, dict[str, object], float]],
) -> None:
    """An offer billed by the GPU-hour: its own terms (a commitment, or a source when billed for the time it runs),
    its commit options, the GPUs above a take-or-pay floor, and its burst or spot capacity. What the cost model
    prices later (a variant of the offer's inputs) joins `pending`."""
    m = record.metrics
    per_gpu_month = costed_capacity(m) * HOURS_PER_MONTH
    spot = getattr(record, "role", "primary") == "burst"
    node = offer.service.node_gpus
    supply = offer.supply_gpus
    if offer.usage_billed and not offer.on_demand and not spot:
        # A dedicated endpoint billed by the hour, minute or second is paid for the time it runs: a pay-as-used
        # source at the offer's own cost per GPU-hour (rent, per-GPU-hour fees, staff per GPU), up to its GPUs.
        # Like other pay-as-used capacity, at its price as it stands (no escalator averaged over a term).
        cand.source = Source(
            index,
            math.nan,
            supply * per_gpu_month,
            float(m.get("rent_today", m["rent"]) or 0.0),
            "gpu_hour",
            per_gpu_month,
            max(1, offer.contract_months),
        )
        pending.append((cand.source, row, {"escalation": 1.0}, per_gpu_month))
    elif not offer.on_demand and not spot:
        kind = kind_of(offer.pricing)
        low = math.ceil(kind.committed(offer) / node)
        high = low if kind.as_used_above_commitment else max(supply // node, low)
        price = float(
            m.get("rent_today", m["rent"]) or 0.0
        )  # the price signed; its escalators are in the variable cost
        cand.commits.append(
            Commit(
                index,
                "base",
                low,
                high,
                node,
                offer.contract_months,
                price,
                float(m["variable_gpu_hour"]) * node * HOURS_PER_MONTH,
                per_gpu_month * node,
                _rent(price, offer, offer.contract_months, node),
                _renewal_step(offer, offer.contract_months),
            )
        )
    if not spot:
        _commit_options(cand, index, offer, fx, row, per_gpu_month, pending)
    committed = sum(c.max_nodes * c.node_gpus for c in cand.commits if c.option == "base")
    if kind_of(offer.pricing).as_used_above_commitment and cand.source is None and supply > committed:
        # the GPUs between the commitment and the supply, paid for the hours used at the offer's own cost per
        # GPU-hour (procure/model/kinds/: a take-or-pay reservation above its floor)
        cand.source = Source(
            index,
            math.nan,
            (supply - committed) * per_gpu_month,
            float(m.get("rent_today", m["rent"]) or 0.0),
            "gpu_hour",
            per_gpu_month,
            max(1, offer.contract_months),
        )
        pending.append((cand.source, row, {}, per_gpu_month))
    _burst_source(cand, index, offer, fx, row, per_gpu_month, spot, spot_share, pending)


def _commit_options(
    cand: Candidate,
    index: int,
    offer: Offer,
    fx: float,
    row: int,
    per_gpu_month: float,
    pending: list[tuple[Commit | Source, int, dict[str, object], float]],
) -> None:
    """A commitment for each of the offer's commit options (pricing.commit_options), each at its own price and
    term."""
    from procure.analysis.cashflow import term_average_rent

    node = offer.service.node_gpus
    supply = offer.supply_gpus
    for option in offer.pricing.commit_options:
        low = math.ceil(option.gpus / node)
        high = max(supply // node, low)
        commit = Commit(
            index,
            f"{option.gpus}+ GPUs, {option.term_months} months",
            low,
            high,
            node,
            option.term_months,
            option.gpu_hour * fx,
            math.nan,
            per_gpu_month * node,
            _rent(option.gpu_hour * fx, offer, option.term_months, node),
            _renewal_step(offer, option.term_months),
        )
        cand.commits.append(commit)
        # the offer's escalators over the option's own term (a tier of another length averages them differently)
        escalated = term_average_rent(1.0, offer.contract, option.term_months) or 1.0
        pending.append(
            (
                commit,
                row,
                {
                    "basis": "gpu_hour",
                    "gpu_hour": option.gpu_hour,
                    "discount": 0.0,
                    "term_months": option.term_months,
                    "gpus": float(option.gpus),
                    "escalation": escalated,
                },
                node,
            )
        )


def _burst_source(
    cand: Candidate,
    index: int,
    offer: Offer,
    fx: float,
    row: int,
    per_gpu_month: float,
    spot: bool,
    spot_share: float,
    pending: list[tuple[Commit | Source, int, dict[str, object], float]],
) -> None:
    """The offer's burst capacity, or spot capacity at its GPU-hour price up to its supply: a pay-as-used source."""
    supply = offer.supply_gpus
    burst = offer.pricing.burst
    if burst is None and spot and offer.pricing.gpu_hour is not None:
        burst = Burst(gpu_hour=offer.pricing.gpu_hour, max_gpus=supply)  # spot at its GPU-hour price, up to its supply
    if burst is not None:
        # Spot's restart cost is in per_gpu_month: its capacity carries the interruption share
        # (rating.interruption_share).
        source = Source(
            index,
            math.nan,
            burst.max_gpus * per_gpu_month,
            burst.gpu_hour * fx,
            "gpu_hour",
            per_gpu_month,
            max(1, offer.contract_months),
            spot,
            spot_share if spot else 1.0,
        )
        cand.source = source
        # Billed only as used: no discount, prepayment or fixed fees of its own (those are the offer's, in
        # fixed_monthly).
        pending.append(
            (
                source,
                row,
                {
                    "basis": "gpu_hour",
                    "gpu_hour": burst.gpu_hour,
                    "discount": 0.0,
                    "prepay_fraction": 0.0,
                    "fees_once": 0.0,
                    "fees_monthly": 0.0,
                    "fees_per_tb_month": 0.0,
                    "escalation": 1.0,
                },
                per_gpu_month,
            )
        )  # pay-as-used: its price as it stands


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


def term_units(cands: list[Candidate], months: int) -> list[Unit]:
    """Each commit in blocks of its term from the offer's delivery: a term shorter than the horizon is re-decided at
    each renewal; the last block keeps its whole term, past the horizon if it runs beyond (and is costed in full).

    The k-th block of a commit is its k-th renewal, priced from the escalated price of the term before
    (`Unit.cost_node_month`); after a held contract's end, its offer's commits also start a grid of blocks the day
    after it (the renewal of what we hold, at the escalated price). A block whose start lies after the decision window
    (`Candidate.now_until`) is a later decision, at the market's expected move by then. Held contracts are one block
    each, their nodes fixed. A term starting within a month runs N calendar months from that day: it touches N + 1
    months, the first and the last in part, and the next block starts where it ends (procure.model.calendar)."""
    units = []
    for cand in cands:
        # a renewal of a held tranche starts the day after it ends: the next month, or within its last month
        held_ends = sorted({(t.end + 1, 1.0) if t.last_share >= 1 else (t.end, 1.0 - t.last_share) for t in cand.held})
        for commit in cand.commits:
            if commit.held:
                units += [
                    Unit(commit, t.first, t.last, t.end, first_share=t.first_share, last_share=t.last_share)
                    for t in cand.held
                    if t.gpus == commit.node_gpus
                ]
                continue
            term = max(1, commit.term_months)
            grids = [(cand.start, cand.first_share, 0)] + [
                (h, share, 1) for h, share in held_ends if cand.start < h < months
            ]
            seen: set[int] = set()
            for origin, share, renewed in grids:
                stub = 1 if share < 1 else 0  # the term's last, partial month
                for k, first in enumerate(range(origin, months, term)):
                    if first in seen:
                        continue
                    later = first > cand.now_until
                    market = (1 + cand.market_growth) ** (first / 12) if later else 1.0
                    end = first + term - 1 + stub
                    units.append(
                        Unit(
                            commit,
                            first,
                            min(months - 1, end),
                            end,
                            renewal=k + renewed,
                            later=later,
                            market=market,
                            first_share=share,
                            last_share=1.0 - share if stub else 1.0,
                        )
                    )
                    seen.add(first)
    return units


def costed_capacity(metrics: dict[str, Any]) -> float:
    """Successful tasks per GPU-hour at full use at which a GPU-hour's cost per task is its expected one (the harmonic
    mean of the drawn capacity: cost per task goes as one over it), else the capacity at the typical inputs."""
    found = metrics.get("costed_capacity_per_gpu_hour")
    return float(found if found is not None else metrics["capacity_per_gpu_hour"])
