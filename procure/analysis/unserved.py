"""The price of a task the plan's sources do not serve (docs/plan.md, "In plain words" 4): by default, what the
market sells it for. A task no offer in the plan serves is bought where the market sells GPU-hours on demand, so
its price is the cost per task of on-demand capacity at the workspace's market price, times `plan.unserved_premium`.

Nothing in it depends on which offers pass a gate: the market price is the rental index (market/index.csv, its
latest level on or before the as-of date, as index-linked offers read it) or, without an index, the dearest
on-demand list price any offer states (`pricing.burst.gpu_hour`, or the GPU-hour price of an offer billed by the
hour, minute or second; spot aside); the throughput is the median of every offer's reading at the workload's
interactivity, whatever its gates; availability, success and utilization are the policy's and the workload's. So an
offer that passes or fails a gate moves the plan only by what it offers, never by the price of what is left unserved.
`plan.unserved_penalty_per_task` overrides it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from procure.io.workspace import IndexLevel
from procure.model.inputs import Offer, WorkspaceConfig
from procure.model.kinds import kind_of

# Without an index or any on-demand price there is no market price to start from: a task is then worth at least the
# dearest cost per task the buyer was offered (any offer, whatever its gates, so that no gate moves it), and three
# times it keeps every task the offers can serve at a sensible price served while the plan stops committing for a
# peak used a third of the time or less (the rule this default replaced, kept for a workspace with no market data).
NO_MARKET_MULTIPLE = 3.0


@dataclass(frozen=True)
class UnservedPrice:
    """The price of an unserved task and the sentence that says where it comes from."""

    per_task: float
    basis: str
    gpu_hour: float | None = None  # the market price per GPU-hour it starts from (None: a per-task price)
    tasks_per_gpu_hour: float | None = None  # the throughput basis: successful tasks a market GPU-hour delivers


def _finite(value: Any) -> float | None:
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    return found if math.isfinite(found) and found > 0 else None


def on_demand_prices(offers: Sequence[Offer], fx: dict[str, float], currency: str) -> list[tuple[float, str]]:
    """Every on-demand list price per GPU-hour the offers state, in the workspace currency, with the offer: a
    burst price (pay-as-used above a commitment, or a pure on-demand offer), or the GPU-hour price of an offer
    billed for the time it runs. Whatever the offer's gates; spot or preemptible capacity aside (it can be taken
    back)."""
    found: list[tuple[float, str]] = []
    for offer in offers:
        if offer.service.preemptible or offer.service.interruptions_per_month:
            continue  # spot capacity can be taken back: not a price to buy a task at for sure
        rate = 1.0 if offer.pricing.currency in (None, currency) else fx.get(offer.pricing.currency or "", math.nan)
        if offer.pricing.burst is not None:
            price = offer.pricing.burst.gpu_hour * rate
        elif offer.usage_billed and kind_of(offer.pricing).rented and offer.pricing.gpu_hour is not None:
            price = offer.pricing.gpu_hour * rate
        else:
            continue
        if math.isfinite(price) and price > 0:
            found.append((price, offer.id))
    return found


def market_unserved_price(
    config: WorkspaceConfig,
    offers: Sequence[Offer],
    metrics: Sequence[dict[str, Any]],
    index: IndexLevel | None,
) -> UnservedPrice:
    """The default price of an unserved task: the market's price per GPU-hour x `plan.unserved_premium` over the
    successful tasks a market GPU-hour delivers.

    The price per GPU-hour: the index level `index` (the latest on or before the as-of date), else the dearest
    on-demand list price among the offers. Tasks per GPU-hour: the median throughput (output tokens per second per
    GPU at the workload's interactivity) over every offer with a reading, x 3,600 / workload.output_tokens x
    policy.min_availability (the least the buyer accepts of any capacity) x workload.success_rate x
    workload.utilization, the capacity formula of the cost model (step 11) with the policy's availability in place of
    an offer's. `metrics` are the offers' evaluated metrics, in the order of `offers`.

    Without a reading or a price per GPU-hour, the dearest per-token price per successful task any offer states, x
    the premium; with none of these, NO_MARKET_MULTIPLE x the dearest full cost per task of any offer."""
    wl = config.workload
    premium = config.plan.unserved_premium
    readings = [t for m in metrics if (t := _finite(m.get("throughput"))) is not None]
    if readings:
        throughput = statistics.median(readings)
        per_gpu_hour = (
            throughput * 3600 / wl.output_tokens * config.policy.min_availability * wl.success_rate * wl.utilization
        )
        basis_tasks = (
            f"{per_gpu_hour:,.1f} successful tasks a GPU-hour: the median throughput of the {len(readings)} offers "
            f"with a reading at {wl.interactivity:g} tok/s per user ({throughput:,.1f} output tok/s per GPU, whatever "
            f"their gates) at policy.min_availability {config.policy.min_availability:g}, success "
            f"{wl.success_rate:g} and utilization {wl.utilization:g}"
        )
        stated = on_demand_prices(offers, config.assumptions.fx, config.currency)
        if index is not None:
            gpu_hour = index.price
            where = f"the rental index's {index.price:.2f} {config.currency} per GPU-hour on {index.date}"
        elif stated:
            gpu_hour, offer_id = max(stated, key=lambda t: (t[0], t[1]))
            where = f"the dearest on-demand list price, {gpu_hour:.2f} {config.currency} per GPU-hour ({offer_id})"
        else:
            gpu_hour = None
        if gpu_hour is not None:
            return UnservedPrice(
                gpu_hour * premium / per_gpu_hour,
                f"default: bought on demand at the market price, {where}, x plan.unserved_premium {premium:g}, over "
                f"{basis_tasks}",
                gpu_hour,
                per_gpu_hour,
            )
    dearest = _dearest(offers, metrics, "rent_per_task", lambda offer: kind_of(offer.pricing).per_task)
    if dearest:
        price, offer_id = dearest
        return UnservedPrice(
            price * premium,
            f"default: bought per token at the dearest per-token price, {price:.5f} {config.currency} per successful "
            f"task ({offer_id}), x plan.unserved_premium {premium:g}",
        )
    dearest = _dearest(offers, metrics, "cost_per_task", lambda offer: True)
    if dearest:
        price, offer_id = dearest
        return UnservedPrice(
            price * NO_MARKET_MULTIPLE,
            f"default: no index or on-demand price to price the market by; {NO_MARKET_MULTIPLE:g}x the dearest full "
            f"cost per task of any offer, {price:.5f} {config.currency} ({offer_id}), whatever its gates",
        )
    return UnservedPrice(1.0, "default: nothing to price the market by; 1 per task")


def _dearest(
    offers: Sequence[Offer], metrics: Sequence[dict[str, Any]], key: str, counts: Callable[[Offer], bool]
) -> tuple[float, str] | None:
    """The dearest finite, positive figure `key` among the offers `counts` admits, with its offer (ties: last id)."""
    found = [(t, o.id) for o, m in zip(offers, metrics) if counts(o) and (t := _finite(m.get(key))) is not None]
    return max(found, default=None)
