"""The plan's notes in words, in their order: the headline first, the decisions to take and
by when, each line's reason, the figures against the best single offer, the bridges between them, and what a price
rise does."""

from __future__ import annotations

import math
from datetime import date
from typing import TYPE_CHECKING

from procure.analysis.plan.bands import BAND_TOLERANCE
from procure.analysis.plan.candidates import Candidate, not_yet_signed
from procure.analysis.plan.decisions import MIN_BAND_CHANGES, TOO_LITTLE_HISTORY
from procure.analysis.plan.figures import Figures, bridge_figures, shortfall_months
from procure.analysis.plan.result import Bridge, HeldContract, PlanLine, PlanStress, ShortfallMonth
from procure.analysis.plan.solver import Chosen, shortfall
from procure.analysis.plan.stress import DEMAND_SHIFTS, PRICE_CASE
from procure.model.demand import Scenarios
from procure.model.inputs import Offer
from procure.model.kinds import kind_of

if TYPE_CHECKING:
    from procure.analysis.plan.make import SolvedPlan


def follows_demand(offer: Offer) -> bool:
    """Capacity that can follow demand: pay-as-used (burst, on demand, per token, billed by the hour, minute or second,
    a kind whose supply above its commitment is used as needed) or a term of a month."""
    return (
        offer.pricing.burst is not None
        or kind_of(offer.pricing).as_used_above_commitment
        or kind_of(offer.pricing).per_task
        or offer.on_demand
        or offer.usage_billed
        or (offer.term_months or 0) == 1
    )


def plan_notes(
    s: SolvedPlan, lines: list[PlanLine], held: list[HeldContract], index_changes: int, max_vendor_share: float = 1.0
) -> tuple[list[Bridge], list[str], list[ShortfallMonth], str | None]:
    """The plan's notes, in their order (the headline first), with the bridges from the best single offer and the
    shortfall by month they read."""
    ev, scen, cands, pick, notes, penalty = s.ev, s.scen, s.cands, s.pick, s.notes, s.penalty
    decision_notes(lines, held, s.window, ev.currency, notes, index_changes)
    notes.extend(not_yet_signed(s.inputs.offers, ev.as_of))
    line_notes(lines, s.best_single, scen, notes, max_vendor_share)
    figure_notes(cands, s.found.chosen, pick.fig, penalty, s.basis, ev.currency, notes)
    bridges = bridge_figures(pick.cands, pick.units, pick.nodes, pick.in_plan, pick.out, scen)
    bridge = bridge_notes(bridges, ev.currency)
    notes += bridge
    by_month = shortfall_months(pick.out, scen, s.delta, penalty, shortfall(cands, scen).beyond_may)
    headline = headline_of(
        cands,
        s.excluded,
        s.inputs.offers,
        pick.fig,
        penalty,
        s.basis,
        ev.currency,
        sum(m.beyond_offers_tasks for m in by_month),
    )
    if headline:
        notes.insert(0, headline)
    return bridges, bridge, by_month, headline


def line_notes(
    lines: list[PlanLine],
    best_single: tuple[str, object] | None,
    scen: Scenarios,
    notes: list[str],
    max_vendor_share: float = 1.0,
) -> None:
    """Notes on the plan's lines: a vendor serving more than plan.max_vendor_share of the expected tasks says so; a
    plan of the best single offer alone says so; a commitment whose term runs past the horizon says its months
    beyond are costed in full."""
    served: dict[str, float] = {}
    for line in lines:
        served[line.vendor] = served.get(line.vendor, 0.0) + line.expected_tasks_share
    over = {vendor: share for vendor, share in served.items() if share > max_vendor_share + 1e-9}
    for vendor, share in over.items():
        # The program holds the share on its own split of the pay-as-used tasks; the figures serve pay-as-used
        # demand from the cheapest source with room first, which can put one vendor above it.
        notes.append(
            f"{vendor} serves {share:.0%} of the expected tasks, above plan.max_vendor_share {max_vendor_share:g}: "
            "the plan's figures serve pay-as-used demand from the cheapest source with room, which the share does "
            "not limit, so they understate what keeping to the share costs"
        )
    if (
        not over
        and len({line.offer for line in lines}) == 1
        and best_single is not None
        and lines[0].offer == best_single[0]
    ):
        if not any("is the plan" in n for n in notes):
            notes.append(f"the best single offer ({lines[0].offer}) is the plan: no combination does better")
    for line in lines:
        if line.role == "commit" and line.term_end_month and line.end_month and line.term_end_month > line.end_month:
            notes.append(
                f"{line.offer}: the {line.term_months}-month commitment from month {line.start_month} runs to month "
                f"{line.term_end_month}, past the "
                f"{scen.months}-month horizon; a commitment costs its whole term, so its months "
                f"{line.end_month + 1}-{line.term_end_month} are counted in full (no residual value)"
            )


def price_note(stressed: PlanStress, notes: list[str]) -> None:
    """Say why the market-price case costs what the plan costs, when it does: nothing in the plan is bought at
    market."""
    cases = {c.name: c for c in stressed.cases}
    base, dear = cases.get(DEMAND_SHIFTS[2][1]), cases.get(PRICE_CASE[1])
    if (
        base is not None
        and dear is not None
        and abs(dear.total_spend - base.total_spend) <= 1e-9 * max(1.0, base.total_spend)
    ):
        notes.append(
            f"{PRICE_CASE[1]} costs what the plan costs: every commitment is signed now at a fixed price or held, and "
            "nothing is bought "
            "pay-as-used, index-linked or decided later at the market's price"
        )


def decision_notes(
    lines: list[PlanLine],
    held: list[HeldContract],
    window: date,
    currency: str,
    notes: list[str],
    index_changes: int = 0,
) -> None:
    """What is signed now, what is decided later and at what expected price, and what is held."""
    for h in held:
        notes.append(
            f"held: {h.gpus:,} GPUs with {h.vendor} ({h.offer}) from {h.start} to {h.end}, signed {h.signed}: fixed in "
            f"the plan, {h.cost_in_horizon:,.0f} {currency} over the horizon paid whatever it does"
        )
    for line in lines:
        if line.decision == "later":
            notes.append(
                f"{line.offer}: {line.gpus:,} GPUs from month {line.start_month} ({line.start_date}) is a later "
                f"decision, after the decision window ({window}): "
                f"an intention to re-plan, costed at {line.expected_price:.2f} {currency}/GPU-h expected then (today's "
                f"{line.price:.2f}"
                + (
                    f", escalated over {line.renewal} term{'s' if line.renewal > 1 else ''}"
                    if line.renewal and abs((line.expected_price or 0) - (line.price or 0)) > 1e-9
                    else ""
                )
                + (
                    f"; {line.price_p10:.2f}-{line.price_p90:.2f} from the 10th to the 90th percentile of the index's "
                    "moves by then"
                    if line.price_p10 is not None and line.price_p90 is not None
                    else f"; {TOO_LITTLE_HISTORY} ({index_changes} monthly index changes, {MIN_BAND_CHANGES} needed)"
                )
                + "), not asked for today"
            )


def figure_notes(
    cands: list[Candidate], chosen: Chosen, fig: Figures, penalty: float, basis: str, currency: str, notes: list[str]
) -> None:
    """Notes on how far the figures can be taken: the unserved price and share, a band gap left, per-token offers
    without rate limits."""
    left = (
        "none of the expected demand is left unserved"
        if fig.unserved_tasks <= 0
        else f"{fig.unserved:.1%} of the expected demand is left unserved"
        if fig.unserved >= 0.001
        else f"{fig.unserved:.2%} of the expected demand is left unserved"
    )
    notes.append(f"unserved demand is priced at {penalty:.5f} {currency} per task ({basis}); {left}")
    if chosen.band_gap > BAND_TOLERANCE or not chosen.converged:
        notes.append(
            f"after {chosen.rounds} solves the chosen plan costs {chosen.band_gap:.2%} more on every scenario than on "
            "the demand bands the solver saw"
        )
    if any(
        c.source is not None and c.source.cap_month == math.inf
        for c in cands
        if c.source and c.source.price_unit == "task"
    ):
        notes.append("per-token offers without service.rate_limits are taken as able to serve any volume")


def bridge_notes(bridges: list[Bridge], currency: str) -> list[str]:
    """Each late delivery in words: what serves the months before it, and what they cost."""
    return [
        f"{b.offer} is delivered in month {b.delivery_month}: "
        + ("month 1 is" if b.delivery_month == 2 else f"months 1-{b.delivery_month - 1} are")
        + f" bridged by {', '.join(b.served_by) or 'nothing'}, {b.cost:,.0f} {currency} expected over them"
        + (
            f", {b.unserved_share:.1%} of their demand unserved ({b.shortfall_cost:,.0f} {currency} at the unserved "
            "price, apart)"
            if b.unserved_share > 0.0005
            else ""
        )
        for b in bridges
    ]


def headline_of(
    cands: list[Candidate],
    excluded: dict[str, str],
    offers: list[Offer],
    fig: Figures,
    penalty: float,
    basis: str,
    currency: str,
    beyond: float = 0.0,
) -> str | None:
    """What the buyer must know first: no usable offer can follow demand, or much of the demand is left unserved
    (`beyond`: the expected tasks over the horizon beyond what every usable offer together can serve)."""
    offers_by_id = {o.id: o for o in offers}
    if not any(follows_demand(offers_by_id[c.id]) for c in cands if c.id in offers_by_id):
        would = [
            f"{oid} ({why})"
            for oid, why in sorted(excluded.items())
            if oid in offers_by_id and follows_demand(offers_by_id[oid])
        ]
        return (
            "No acceptable offer can follow demand (pay-as-used, or a one-month term): every commitment is paid "
            "whether demand comes or not, "
            f"so the plan leaves {fig.unused:.0%} of the committed capacity idle and {fig.unserved:.1%} of the demand "
            "unserved. "
            + (
                "Offers that would follow demand if they passed their gates: " + "; ".join(would) + "."
                if would
                else "No offer received can follow demand."
            )
        )
    if fig.unserved > 0.01:
        demand = fig.unserved_tasks / fig.unserved if fig.unserved > 0 else 0.0
        beyond_share = beyond / demand if demand > 0 else 0.0
        if beyond_share > 0.0005:
            return (
                f"{fig.unserved:.1%} of the expected demand is left unserved, priced at {penalty:.5f} {currency} per "
                f"task ({basis}): {beyond_share:.1%} is beyond what every usable offer together can serve, the rest "
                "costs more to serve from them than that price."
            )
        return (
            f"{fig.unserved:.1%} of the expected demand is left unserved: serving it costs more than {penalty:.5f} "
            f"{currency} per task ({basis})."
        )
    return None
