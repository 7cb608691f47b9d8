"""Operations what-ifs: is a better serving stack or operating process worth what it costs?

A change (more throughput, a lower price, a better SLA, higher utilization, a smaller commitment)
is applied to one offer, the whole pipeline runs again, and the offer's figures before and after are
compared. The saving is priced at the workload's demand; when the committed GPUs are already partly
idle, more throughput only idles more of them, and the result says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import date

from pydantic import BaseModel, Field

from procure.analysis.evaluate import Evaluation, evaluate, point_costs
from procure.analysis.record import OfferRecord, finite_or_none
from procure.errors import InputError, Problem, unknown_offer
from procure.io.workspace import Workspace
from procure.model.costing import HOURS_PER_MONTH
from procure.model.inputs import Offer
from procure.model.kinds import kind_named, kind_of
from procure.model.units import PerThousand

FIGURES = (
    "cost_per_task",
    "full",
    "rent",
    "throughput",
    "availability",
    "utilization",
    "fill",
    "billed_gpus",
    "gpus_needed",
    "successful_tasks_per_gpu_hour",
    "monthly_spend",
)


def parse_change(text: str, option: str) -> float:
    """'+50%' -> 1.5, '-5%' -> 0.95: a relative change as a factor."""
    match = re.fullmatch(r"\s*([+-]?\d+(?:\.\d+)?)\s*%\s*", text)
    if not match:
        raise InputError([Problem(option, None, "", f"expected a change like +50% or -5% (got {text!r})")])
    factor = 1 + float(match.group(1)) / 100
    if factor <= 0:
        raise InputError([Problem(option, None, "", f"a change of {text} leaves nothing (must be above -100%)")])
    return factor


@dataclass(frozen=True)
class Change:
    throughput: float | None = None  # factor on every throughput point
    price: float | None = None  # factor on the price (GPU-hour, index-linked rent, per-token, owned capex)
    availability: float | None = None  # the SLA availability (owned: self-operated reliability)
    utilization: float | None = None
    gpus: int | None = None  # a different committed GPU count
    one_off: float = 0.0  # what the change costs once, workspace currency
    monthly: float = 0.0  # what it costs every month

    def describe(self) -> list[str]:
        said = []
        if self.throughput is not None:
            said.append(f"throughput {self.throughput - 1:+.0%}")
        if self.price is not None:
            said.append(f"price {self.price - 1:+.0%}")
        if self.availability is not None:
            said.append(f"availability {self.availability:.2%}")
        if self.utilization is not None:
            said.append(f"utilization {self.utilization:.0%}")
        if self.gpus is not None:
            said.append(f"{self.gpus:,} committed GPUs")
        if self.one_off:
            said.append(f"{self.one_off:,.0f} one-off")
        if self.monthly:
            said.append(f"{self.monthly:,.0f} a month")
        return said


class Snapshot(PerThousand):
    rank: int | None
    acceptable: bool
    cost_per_task: float | None
    full: float | None
    rent: float | None
    throughput: float | None
    availability: float | None
    utilization: float | None
    fill: float | None
    billed_gpus: float | None
    gpus_needed: float | None
    successful_tasks_per_gpu_hour: float | None
    monthly_spend: float | None


class WhatIf(BaseModel):
    """Before and after one change to one offer, and whether it pays."""

    offer: str
    vendor: str
    currency: str
    changes: list[str]
    before: Snapshot
    after: Snapshot
    tasks_per_month: float | None = Field(
        description="the demand, or what the committed GPUs deliver before the change"
    )
    tasks_basis: str
    monthly_saving: float | None = Field(description="fall in cost per task x tasks per month")
    monthly_cost: float
    net_monthly: float | None
    one_off: float
    payback_months: float | None = Field(
        description="months until the net monthly saving, discounted at the cost of capital, repays the one-off; null "
        "when it never does"
    )
    payback_simple_months: float | None = Field(
        None, description="one-off / (monthly saving - monthly cost), undiscounted"
    )
    payback_beyond_term: bool = Field(False, description="the payback takes longer than the offer's term")
    term_months: int = Field(0, description="the offer's term")
    break_even_throughput_gain: float | None = Field(
        description="throughput gain alone at which the saving covers the monthly cost and recovers the one-off over "
        "the term at the cost of capital (its discounted payback is then the term)"
    )
    notes: list[str]


def _snapshot(record: OfferRecord) -> Snapshot:
    values = {key: record.metrics.get(key) for key in FIGURES}
    return Snapshot(rank=record.rank, acceptable=record.acceptable, **values)


def _scaled_points(offer: Offer, workspace: Workspace, factor: float) -> list[tuple[float, float]]:
    points = offer.performance.points or workspace.curves[offer.performance.reference].points  # type: ignore[index]
    return [(x, y * factor) for x, y in points]


def apply_change(workspace: Workspace, offer: Offer, change: Change, index_level: float | None) -> Workspace:
    """A copy of the workspace with the change applied to one offer (assumption changes apply to it alone)."""
    updates: dict = {}
    pricing = offer.pricing
    if change.throughput is not None:
        if offer.per_token:
            raise InputError(
                [
                    Problem(
                        f"offers/{offer.id}", None, "--throughput", "a per-token offer has no GPU throughput to change"
                    )
                ]
            )
        updates["performance"] = offer.performance.model_copy(
            update={"points": _scaled_points(offer, workspace, change.throughput)}
        )
    if change.price is not None:
        f = change.price
        kind = kind_of(pricing)  # each kind scales its own price (procure/model/kinds/)
        if kind.scale_price is not None:
            pricing = kind.scale_price(pricing, f, index_level, workspace.fx_rate(pricing.currency))
        updates["pricing"] = pricing
    config = workspace.config
    if change.availability is not None:
        if offer.owned:
            # owned: our host (hardware repair), the counterpart of a provider's SLA (rating.availability_layers)
            jobs = {**config.assumptions.self_operated_jobs, "hardware_repair": change.availability}
            config = config.model_copy(
                update={"assumptions": config.assumptions.model_copy(update={"self_operated_jobs": jobs})}
            )
        elif offer.service.sla is not None:
            updates["service"] = offer.service.model_copy(
                update={"sla": offer.service.sla.model_copy(update={"availability": change.availability})}
            )
    if change.utilization is not None:
        config = config.model_copy(
            update={"workload": config.workload.model_copy(update={"utilization": change.utilization})}
        )
    if change.gpus is not None:
        if offer.per_token:
            raise InputError([Problem(f"offers/{offer.id}", None, "--gpus", "a per-token offer has no GPU commitment")])
        updates["gpus"] = change.gpus
        updates["max_gpus"] = max(change.gpus, offer.supply_gpus)
    changed = offer.model_copy(update=updates)
    offers = [changed if o.id == offer.id else o for o in workspace.offers]
    return replace(workspace, offers=offers, config=config)


def whatif(workspace: Workspace, offer_id: str, change: Change, as_of: date | None = None) -> WhatIf:
    offer = find_offer(workspace, offer_id)
    base = evaluate(workspace, as_of)
    level = workspace.index_level_on(base.as_of)
    changed = evaluate(apply_change(workspace, offer, change, level.price if level else None), base.as_of)
    before, after = base.offer(offer_id), changed.offer(offer_id)
    demand = workspace.config.workload.tasks_per_month
    b, a = _snapshot(before), _snapshot(after)
    notes: list[str] = []
    if demand is not None:
        tasks, basis = demand, "the workload's demand"
    elif (
        before.metrics.get("successful_tasks_per_gpu_hour") is not None
        and before.metrics.get("billed_gpus") is not None
    ):
        tasks = before.metrics["successful_tasks_per_gpu_hour"] * before.metrics["billed_gpus"] * HOURS_PER_MONTH  # type: ignore[operator]
        basis = "what the committed GPUs deliver before the change"
    else:
        tasks, basis = None, "unknown"
    saving = None
    if tasks is not None and b.cost_per_task is not None and a.cost_per_task is not None:
        fall = b.cost_per_task - a.cost_per_task
        saving = 0.0 if abs(fall) <= 1e-12 * b.cost_per_task else fall * tasks  # no float dust as a "saving"
    net = None if saving is None else saving - change.monthly
    rate = workspace.config.assumptions.cost_of_capital
    simple = change.one_off / net if (net is not None and net > 0) else None
    payback = discounted_payback(change.one_off, net, rate) if net is not None else None
    if net is not None and net <= 0 and (change.one_off or change.monthly):
        notes.append("the change never pays back: the monthly saving does not exceed the monthly cost")
    elif simple is not None and payback is None and change.one_off:
        notes.append(
            f"the change never pays back at a {rate:.0%} cost of capital: the discounted savings never reach the "
            "one-off cost"
        )
    term = offer.contract_months
    beyond = (payback is None and bool(change.one_off) and net is not None and net > 0) or (
        payback is not None and term > 0 and payback > term
    )
    if payback is not None and beyond:
        notes.append(f"the payback ({payback:.1f} months, discounted) is longer than the offer's {term}-month term")
    idle_note = _idle_note(before, after, change)
    if idle_note:
        notes.append(idle_note)
    if not after.acceptable and before.acceptable:
        notes.append("after the change the offer fails a gate: " + "; ".join(after.reasons))
    return WhatIf(
        offer=offer_id,
        vendor=offer.vendor,
        currency=base.currency,
        changes=change.describe(),
        before=b,
        after=a,
        tasks_per_month=tasks,
        tasks_basis=basis,
        monthly_saving=saving,
        monthly_cost=change.monthly,
        net_monthly=net,
        one_off=change.one_off,
        payback_months=payback,
        payback_simple_months=simple,
        payback_beyond_term=beyond,
        term_months=term,
        break_even_throughput_gain=break_even_throughput_gain(workspace, offer, base, change, tasks),
        notes=notes,
    )


def discounted_payback(one_off: float, net_monthly: float, cost_of_capital: float) -> float | None:
    """Months n at which the net monthly saving, discounted at the cost of capital, repays the one-off:
    net x (1 - (1 + i)^-n) / i = one_off with i = (1 + r)^(1/12) - 1 (the monthly rate the horizon
    uses), so n = -ln(1 - one_off x i / net) / ln(1 + i). None when it never pays back."""
    if one_off <= 0:
        return 0.0 if net_monthly > 0 else None
    if net_monthly <= 0:
        return None
    monthly = (1 + cost_of_capital) ** (1 / 12) - 1
    if monthly == 0:
        return one_off / net_monthly
    share = one_off * monthly / net_monthly
    if share >= 1:
        return None  # the discounted savings converge below the one-off
    return -math.log(1 - share) / math.log(1 + monthly)


def _idle_note(before: OfferRecord, after: OfferRecord, change: Change) -> str | None:
    fill, fill_after = before.metrics.get("fill"), after.metrics.get("fill")
    # More throughput on a commitment the demand does not fill only idles more of it.
    if (
        change.throughput is None
        or change.throughput <= 1
        or fill is None
        or fill >= 1
        or fill_after is None
        or fill_after >= fill
    ):
        return None
    needed = after.metrics.get("gpus_needed")
    fewer = f" (try --gpus {math.ceil(needed):,})" if needed else ""
    return (
        f"the committed GPUs are already partly idle (fill {fill:.0%}): a faster stack saves nothing until the "
        f"commitment shrinks{fewer} or demand grows"
    )


def break_even_throughput_gain(
    workspace: Workspace, offer: Offer, base: Evaluation, change: Change, tasks: float | None
) -> float | None:
    """The throughput gain alone at which the monthly saving covers the monthly cost plus the one-off
    recovered over the contract term at the cost of capital (the annuity that repays it: one_off x i /
    (1 - (1 + i)^-term), i the monthly rate), so that at this gain the discounted payback is the term.
    None when no gain can (an idle commitment, per-token pricing)."""
    # the expected cost, as what-if's saving is, and as each step's trial below is (point_costs, expected): an offer's
    # draws do not depend on the other offers, so it is its expected cost alone as in the whole workspace
    before = base.offer(offer.id).metrics.get("cost_per_task")
    if offer.per_token or tasks is None or before is None:
        return None
    term = max(1, offer.contract_months)
    monthly_rate = (1 + workspace.config.assumptions.cost_of_capital) ** (1 / 12) - 1
    recovery = (
        change.one_off * monthly_rate / (1 - (1 + monthly_rate) ** -term) if monthly_rate > 0 else change.one_off / term
    )
    target = change.monthly + recovery
    if target <= 0:
        return 0.0
    level = workspace.index_level_on(base.as_of)
    alone = replace(workspace, offers=[offer])  # an offer's cost never depends on the other bids

    def saving(gain: float) -> float:
        # the offer's expected cost per task as evaluate gives it, without the records and the ranking
        trial = point_costs(
            apply_change(alone, offer, Change(throughput=1 + gain), level.price if level else None), base.as_of, True
        )
        after = finite_or_none(trial[0]["cost_per_task"])
        return -math.inf if after is None else (before - after) * tasks

    low, high = 0.0, 10.0  # up to +1,000%
    if saving(high) < target:
        return None
    for _ in range(40):  # bisection: saving rises with throughput
        mid = (low + high) / 2
        if saving(mid) >= target:
            high = mid
        else:
            low = mid
    return high


def find_offer(workspace: Workspace, offer_id: str) -> Offer:
    for offer in workspace.offers:
        if offer.id == offer_id:
            return offer
    raise InputError([unknown_offer(offer_id, [o.id for o in workspace.offers])])


class PriceToWin(PerThousand):
    id: str
    vendor: str
    rank: int
    pricing_basis: str
    cost_per_task: float
    list_price: float | None
    price_to_tie: float | None = Field(
        description="list price per GPU-hour at which the offer ties the leader's cost per task"
    )
    change: float | None = Field(description="price_to_tie / list_price - 1")
    note: str


def price_to_win(ev: Evaluation) -> list[PriceToWin]:
    """For every acceptable offer, the GPU-hour list price that ties the leader (from the Evaluation)."""
    rows = []
    for record in ev.ranked:
        list_price, tie = record.metrics.get("list_price"), record.metrics.get("price_to_tie")
        if record.rank == 1:
            note = "the leader"
        elif tie is None:
            note = (
                "no rental price to negotiate"
                if not kind_named(record.pricing_basis).rented
                else "cannot tie: the index floor holds the price above the tie"
            )
        elif tie <= 0:
            note = "cannot tie by price alone: the other costs already exceed the leader's"
        else:
            note = ""
        rows.append(
            PriceToWin(
                id=record.id,
                vendor=record.vendor,
                rank=record.rank or 0,
                pricing_basis=record.pricing_basis,
                cost_per_task=record.metrics["cost_per_task"] or 0.0,
                list_price=list_price,
                price_to_tie=tie,
                change=(tie / list_price - 1) if (tie is not None and list_price) else None,
                note=note,
            )
        )
    return rows
