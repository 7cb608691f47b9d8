"""The price at which each offer ties the leader: the rent per task that would make its expected cost per task the
leader's, and that rent as a price in the offer's own terms (per GPU-hour, per token, the index floor)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np

from procure.analysis.cashflow import HorizonResult
from procure.analysis.record import OfferRecord, finite_or_none
from procure.io.workspace import Workspace
from procure.model.costing import (
    price_to_tie,
)
from procure.model.inputs import Offer
from procure.model.kinds import kind_named, kind_of


def ties_to_leader(
    records: list[OfferRecord],
    ranked: list[OfferRecord],
    rank_key: str,
    columns: dict[str, np.ndarray],
    outputs: dict[str, np.ndarray],
    config: Any,
    plan_of: Callable[..., HorizonResult],
    workspace: Workspace,
    day: date,
    cost_of: Callable[[Offer], float | None],
) -> None:
    """The negotiator's figure: the list price at which each acceptable offer would tie the leader, and how far
    above the leader it is; ranked over the horizon, the price that ties the leader's PV cost per PV task."""
    if ranked and rank_key == "horizon_cost_per_task":
        from procure.analysis.cashflow import horizon_price_to_tie

        lead_cost = ranked[0].metrics[rank_key]
        for record in ranked:
            if lead_cost:
                tie = (
                    record.metrics["list_price"]
                    if record is ranked[0]
                    else horizon_price_to_tie(
                        record, lead_cost, lambda shift, r=record: plan_of(r, shift).horizon_cost_per_task
                    )
                )
                record.metrics["price_to_tie"] = (
                    finite_or_none(tie) if kind_named(record.pricing_basis).rented else None
                )
                record.metrics["vs_leader"] = record.metrics[rank_key] / lead_cost - 1  # type: ignore[operator]
    elif ranked:
        ties = _expected_ties(records, ranked[0].metrics["cost_per_task"], columns, outputs, config)
        _bounded_ties(records, ties, ranked[0].metrics["cost_per_task"], workspace, day, cost_of)
        lead_cost = ranked[0].metrics["cost_per_task"]
        for record, tie in zip(records, ties):
            if record.acceptable and lead_cost:
                record.metrics["price_to_tie"] = finite_or_none(tie)
                record.metrics["vs_leader"] = record.metrics["cost_per_task"] / lead_cost - 1  # type: ignore[operator]


def _expected_ties(
    records: list[OfferRecord],
    lead: float | None,
    columns: dict[str, np.ndarray],
    outputs: dict[str, np.ndarray],
    config: Any,
) -> np.ndarray:
    """Each offer's list price at which its expected cost ties the leader's. The part of a draw's cost that moves with
    the price is its rent per task times (1 + the financing and prepayment risk per unit of rent), so the expected
    cost moves by that times the mean of the drawn rent per task (`expected_rent_per_task`) for each unit of price
    factor: the tie is today's price x (1 + (lead - expected cost) / (that slope)), exact for a rent proportional to
    its price and, for an index-linked rent, wherever the floor and cap do not bind (the index drawn apart from the
    throughput). The floor of a kind (price_to_tie's check) still applies."""
    a = config.assumptions
    financing = columns["prepay_fraction"] * (a.cost_of_capital + a.vendor_default_rate) * columns["term_months"] / 24
    factor = np.full(len(records), np.nan)
    for i, r in enumerate(records):
        m = r.metrics
        slope = (m.get("expected_rent_per_task") or 0.0) * (1 + float(financing[i]))
        if lead is not None and m.get("cost_per_task") is not None and slope > 0:
            factor[i] = 1 + (lead - m["cost_per_task"]) / slope
    # price_to_tie gives the price at which the point cost is a target; the point's rent per task is proportional to
    # its price, so the target that reaches `factor` x today's price is the point's cost moved by the same share of rent
    point_rent = np.array([r.metrics.get("rent_per_task") or np.nan for r in records], dtype=float)
    point_cost = np.array([r.metrics.get("point_cost_per_task") or np.nan for r in records], dtype=float)
    target = point_cost + (factor - 1) * point_rent * (1 + financing)
    return price_to_tie(columns, outputs, target, a.cost_of_capital, a.vendor_default_rate)


TIE_STEPS = 8  # secant steps on an index-linked offer's own draws


TIE_TOLERANCE = 1e-9  # relative, on the expected cost


def _bounded_ties(
    records: list[OfferRecord],
    ties: np.ndarray,
    lead: float | None,
    ws: Workspace,
    day: date,
    cost_of: Callable[[Offer], float | None],
) -> None:
    """An index-linked rent is clamped to its floor and cap in the draws where the index moves past them, so its
    expected cost is not linear in its price: its tie is refined by the secant method on its own draws (an offer's
    draws do not depend on the other offers), starting from the linear tie, with the spread moved as what-if moves it
    (`Kind.scale_price`); `cost_of` is the expected cost per task of one offer so moved, evaluated alone."""
    if lead is None:
        return
    level = ws.index_level_on(day)
    by_id = {o.id: o for o in ws.offers}  # one look-up per offer: a thousand offers are a thousand records
    for i, record in enumerate(records):
        offer = by_id[record.id]
        kind = kind_of(offer.pricing)
        price = record.metrics.get("list_price")
        if not (
            record.acceptable and kind.index_rent and kind.scale_price and level and price and np.isfinite(ties[i])
        ):
            continue
        scale_price = kind.scale_price

        def expected_at(factor: float, offer: Offer = offer, scale_price: Any = scale_price) -> float:
            moved = offer.model_copy(
                update={"pricing": scale_price(offer.pricing, factor, level.price, ws.fx_rate(offer.pricing.currency))}
            )
            found = cost_of(moved)
            return float("nan") if found is None else float(found) - lead

        k0, k1 = 1.0, float(ties[i]) / price
        f0, f1 = float(record.metrics["cost_per_task"]) - lead, expected_at(k1)
        for _ in range(TIE_STEPS):
            if not np.isfinite(f1) or abs(f1) <= TIE_TOLERANCE * lead or f1 == f0:
                break
            k0, k1, f0 = k1, k1 - f1 * (k1 - k0) / (f1 - f0), f1
            f1 = expected_at(k1)
        # no price ties it (the floor holds its expected cost above the leader's): none. To 12 significant figures,
        # far within the secant's tolerance: the last bits of a draw's cost depend on the size of the block of draws
        # numpy computes it in, and the tie must not
        ties[i] = float(f"{k1 * price:.12g}") if np.isfinite(f1) and abs(f1) <= 1e-6 * lead else np.nan
