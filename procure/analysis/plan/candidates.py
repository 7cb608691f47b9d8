"""What can be combined (docs/plan.md, "In plain words" 2 and 3): the usable offers as commitments (whole nodes,
per option) and pay-as-used sources, each from its delivery month, and the commitments in blocks of their term."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

import numpy as np

from procure.analysis.evaluate import CostInputs, Evaluation
from procure.analysis.record import OfferRecord
from procure.model.costing import HOURS_PER_MONTH, cost_arrays
from procure.model.inputs import Burst, Offer


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
    term_months: int = 1  # the offer's minimum term: a source with fixed fees is switched on for blocks of it
    spot: bool = False  # spot or preemptible capacity
    share_limit: float = 1.0  # the most of each month's demand it may serve (spot: plan.max_spot_share, all spot sources together)


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

    def available(self, months: int) -> np.ndarray:
        """Share of each month the offer's capacity exists: 0 before delivery, prorated in the delivery month."""
        out = np.zeros(months)
        if self.start < months:
            out[self.start] = self.first_share
            out[self.start + 1 :] = 1.0
        return out


@dataclass
class Unit:
    """A commitment variable: one commit of one candidate over one term block of months."""

    commit: Commit
    first: int  # month index, 0-based
    last: int  # inclusive, within the horizon
    end: int | None = None  # the term's last month (inclusive), past the horizon when the term runs beyond it

    @property
    def term_end(self) -> int:
        return self.last if self.end is None else self.end

    @property
    def beyond(self) -> int:
        """Months of the term past the horizon's last month (`last` when the term runs past it)."""
        return self.term_end - self.last


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


def delivery(promised: date | None, as_of: date, delay_weeks: float) -> tuple[int, float]:
    """The first month (0-based) with capacity and the share of it after the delivery day: the promised date plus
    the expected delay (horizon.expected_delay_weeks), on the calendar of `procure cashflow` (cashflow.delivery_month)."""
    from procure.analysis.cashflow import DAYS_PER_MONTH

    if promised is None:
        return 0, 1.0
    days = (promised + timedelta(weeks=delay_weeks) - as_of).days
    if days <= 0:
        return 0, 1.0
    months = days / DAYS_PER_MONTH
    start = math.floor(months)
    return start, 1.0 - (months - start)


def candidates(
    ev: Evaluation, inputs: CostInputs, fte_cost_year: float, output_tokens: int, success_fallback: float, months: int | None = None, delay_weeks: float = 0.0,
    spot_share: float = 1.0,
) -> tuple[list[Candidate], dict[str, str]]:
    """The offers the plan may use, sorted by id (file order never matters), with their commitments and sources.

    An offer delivered after the last of `months` is not a candidate (with the reason). Spot capacity is a source
    only, serving at most `spot_share` (plan.max_spot_share) of each month's demand."""
    from procure.analysis.cashflow import term_average_rent

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
        start, share = delivery(offer.delivery, ev.as_of, delay_weeks)
        if months is not None and start >= months:
            late = f" + {delay_weeks:g} weeks expected delay" if delay_weeks else ""
            excluded[record.id] = f"delivered in month {start + 1} ({offer.delivery}{late}), after the {months}-month horizon"
            continue
        m = record.metrics
        fx = float(inputs.columns["fx"][row])
        cand = Candidate(record.id, record.vendor, float(m["fixed_monthly"] or 0.0), start=start, first_share=share, cost_per_task=m.get("cost_per_task"))
        index = len(found)
        if record.pricing_basis == "per_token":
            cand.source = Source(
                index, float(m["rent_per_task"]), _token_cap(offer, output_tokens, float(m["success_rate"] or success_fallback)), float(m["rent_per_task"]), "task", None,
                max(1, offer.contract_months),
            )
            found.append(cand)
            continue
        node = offer.service.node_gpus
        per_gpu_month = float(m["capacity_per_gpu_hour"]) * HOURS_PER_MONTH
        supply = offer.supply_gpus
        spot = getattr(record, "role", "primary") == "burst"
        if offer.usage_billed and not offer.on_demand and not spot:
            # A dedicated endpoint billed by the hour, minute or second is paid for the time it runs: a pay-as-used
            # source at the offer's own cost per GPU-hour (rent, per-GPU-hour fees, staff per GPU), up to its GPUs.
            # Like other pay-as-used capacity, at its price as it stands (no escalator averaged over a term).
            cand.source = Source(index, math.nan, supply * per_gpu_month, float(m.get("rent_today", m["rent"]) or 0.0), "gpu_hour", per_gpu_month, max(1, offer.contract_months))
            pending.append((cand.source, row, {"escalation": 1.0}, per_gpu_month))
        elif not offer.on_demand and not spot:
            low = math.ceil(offer.committed_gpus / node)
            high = max(supply // node, low)
            price = float(m.get("rent_today", m["rent"]) or 0.0)  # the price signed; its escalators are in the variable cost
            cand.commits.append(Commit(index, "base", low, high, node, offer.contract_months, price, float(m["variable_gpu_hour"]) * node * HOURS_PER_MONTH, per_gpu_month * node))
        for k, option in enumerate(offer.pricing.commit_options if not spot else []):
            low = math.ceil(option.gpus / node)
            high = max(supply // node, low)
            commit = Commit(index, f"{option.gpus}+ GPUs, {option.term_months} months", low, high, node, option.term_months, option.gpu_hour * fx, math.nan, per_gpu_month * node)
            cand.commits.append(commit)
            # the offer's escalators over the option's own term (a tier of another length averages them differently)
            escalated = term_average_rent(1.0, offer.contract, option.term_months) or 1.0
            pending.append((commit, row, {"basis": "gpu_hour", "gpu_hour": option.gpu_hour, "discount": 0.0, "term_months": option.term_months, "gpus": float(option.gpus), "escalation": escalated}, node))
        burst = offer.pricing.burst
        if burst is None and spot and offer.pricing.gpu_hour is not None:
            burst = Burst(gpu_hour=offer.pricing.gpu_hour, max_gpus=supply)  # spot at its GPU-hour price, up to its supply
        if burst is not None:
            # Spot's restart cost is in per_gpu_month: its capacity carries the interruption share (rating.interruption_share).
            source = Source(index, math.nan, burst.max_gpus * per_gpu_month, burst.gpu_hour * fx, "gpu_hour", per_gpu_month, max(1, offer.contract_months), spot, spot_share if spot else 1.0)
            cand.source = source
            # Billed only as used: no discount, prepayment or fixed fees of its own (those are the offer's, in fixed_monthly).
            pending.append((source, row, {"basis": "gpu_hour", "gpu_hour": burst.gpu_hour, "discount": 0.0, "prepay_fraction": 0.0, "fees_once": 0.0, "fees_monthly": 0.0, "fees_per_tb_month": 0.0, "escalation": 1.0}, per_gpu_month))  # pay-as-used: its price as it stands
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


def term_units(cands: list[Candidate], months: int) -> list[Unit]:
    """Each commit in blocks of its term from the offer's delivery: a term shorter than the horizon is re-decided at
    each renewal; the last block keeps its whole term, past the horizon if it runs beyond (and is costed in full)."""
    units = []
    for cand in cands:
        for commit in cand.commits:
            term = max(1, commit.term_months)
            for first in range(cand.start, months, term):
                units.append(Unit(commit, first, min(months, first + term) - 1, first + term - 1))
    return units
