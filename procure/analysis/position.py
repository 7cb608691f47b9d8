"""Cost position: where a cost per successful task stands against the offers and the competitors.

Improving is not the same as getting ahead: if our cost per task falls from 10 to 8 while a
competitor's falls from 12 to 6, we improved and became the more expensive producer. A position is
always relative, so this module puts our figure on one curve with the evaluated offers and the
competitor benchmarks of procure.yaml (`market.competitors`), and compares histories when several
dates are given.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from pydantic import Field

from procure.analysis.evaluate import Evaluation
from procure.errors import InputError, Problem, unknown_offer
from procure.model.inputs import MarketConfig
from procure.model.units import PerThousand, per_thousand

US = "us"


class CurvePoint(PerThousand):
    name: str
    kind: str = Field(description="us, offer or competitor")
    cost_per_task: float
    date: date
    figure: str = Field(
        "cost",
        description="cost (what serving a task costs its owner: ours, an offer's full cost to us, a competitor's "
        "estimate) or price (a competitor's public price per task)",
    )


class SeriesChange(PerThousand):
    """A competitor's history against ours, first and last dates of each."""

    PER_TASK = (
        "ours_from",
        "ours_to",
        "theirs_from",
        "theirs_to",
    )  # costs per task, each with its figure per 1,000 tasks in JSON

    competitor: str
    ours_from: float
    ours_to: float
    theirs_from: float
    theirs_to: float
    we_were_cheaper: bool
    we_are_cheaper: bool
    sentence: str

    @property
    def ours_change(self) -> float:
        """Our change over the period, a share (+0.05: 5% up)."""
        return self.ours_to / self.ours_from - 1

    @property
    def theirs_change(self) -> float:
        """The competitor's change over the period, a share."""
        return self.theirs_to / self.theirs_from - 1


class Position(PerThousand):
    PER_TASK = ("gap",)  # costs per task, each with its figure per 1,000 tasks in JSON

    label: str = Field(description="what our figure is: given, an offer, or our latest recorded cost")
    cost_per_task: float
    as_of: date
    rank: int = Field(description="1 = cheapest on the curve")
    of: int
    cheapest: CurvePoint
    gap: float = Field(description="our cost per task minus the cheapest")
    gap_share: float = Field(description="the gap as a share of the cheapest")
    curve: list[CurvePoint] = Field(
        description="the latest point of every offer and competitor, and ours, cheapest first"
    )
    history: dict[str, list[CurvePoint]] = Field(description="every dated point by name, ours under 'us'")
    changes: list[SeriesChange]
    sentences: list[str]
    gate_failures: list[str] = Field(
        default_factory=list,
        description="why the placed offer is not acceptable (empty when it is, or when no offer is placed)",
    )


def _word(cheaper: bool) -> str:
    return "cheaper" if cheaper else "more expensive"


def compare_histories(
    ours: list[CurvePoint], theirs: list[CurvePoint], name: str, figure: str = "cost"
) -> SeriesChange:
    """Our first-to-last change against a competitor's, in figures and one sentence; against a competitor's
    price the sentence says whether our cost stays below what it charges (a margin), not who produces cheaper."""
    a0, a1 = ours[0].cost_per_task, ours[-1].cost_per_task
    b0, b1 = theirs[0].cost_per_task, theirs[-1].cost_per_task
    were, are = a0 < b0, a1 < b1
    we_moved = "improved" if a1 < a0 else "got worse" if a1 > a0 else "held still"
    if figure == "price":
        where = {True: "below", False: "above"}
        outcome = (
            f"our cost stays {where[are]} its price"
            if were == are
            else f"our cost was {where[were]} its price and is now {where[are]} it"
        )
        sentence = (
            f"Our cost went from {per_thousand(a0):.2f} to {per_thousand(a1):.2f} per 1,000 tasks "
            f"({a1 / a0 - 1:+.0%}, {we_moved}) "
            f"while {name}'s price went from "
            f"{per_thousand(b0):.2f} to {per_thousand(b1):.2f} ({b1 / b0 - 1:+.0%}): {outcome}."
        )
    else:
        if were == are:
            outcome = f"we were and still are the {_word(are)} producer"
        elif a1 < a0 and not are:
            outcome = "we improved and are now the more expensive producer"
        else:
            outcome = f"we were the {_word(were)} producer and are now the {_word(are)} one"
        sentence = (
            f"We went from {per_thousand(a0):.2f} to {per_thousand(a1):.2f} per 1,000 tasks ({a1 / a0 - 1:+.0%}, "
            f"{we_moved}) while "
            f"{name} went from "
            f"{per_thousand(b0):.2f} to {per_thousand(b1):.2f} ({b1 / b0 - 1:+.0%}): {outcome}."
        )
    return SeriesChange(
        competitor=name,
        ours_from=a0,
        ours_to=a1,
        theirs_from=b0,
        theirs_to=b1,
        we_were_cheaper=were,
        we_are_cheaper=are,
        sentence=sentence,
    )


def _histories(ev: Evaluation, market: MarketConfig) -> dict[str, list[CurvePoint]]:
    """Each competitor's recorded figures and ours, by name: only what was known by the as-of date, as for the index."""
    history: dict[str, list[CurvePoint]] = defaultdict(list)
    for point in (p for p in market.competitors if p.date <= ev.as_of):
        history[point.name].append(
            CurvePoint(
                name=point.name,
                kind="competitor",
                cost_per_task=point.cost_per_task,
                date=point.date,
                figure=point.figure,
            )
        )
    for own in (p for p in market.own if p.date <= ev.as_of):
        history[US].append(CurvePoint(name=US, kind=US, cost_per_task=own.cost_per_task, date=own.date))
    return history


def _our_cost(
    ev: Evaluation, current: float | None, current_offer: str | None, ours: list[CurvePoint]
) -> tuple[float, str, bool, list[str]]:
    """The cost per task to place, what it is, whether it is placed as of the evaluation date beside our recorded
    history, and the gates it fails: --current, an offer's, our latest recorded, or the recommended offer's."""
    placed = True
    failures: list[str] = []
    if current_offer is not None:
        try:
            record = ev.offer(current_offer)
        except KeyError:
            raise InputError([unknown_offer(current_offer, [o.id for o in ev.offers])]) from None
        if record.metrics["cost_per_task"] is None:
            raise InputError(
                [
                    Problem(
                        "offers/",
                        None,
                        "",
                        f"offer '{current_offer}' has no cost per task ({'; '.join(record.reasons)})",
                    )
                ]
            )
        current, label = record.metrics["cost_per_task"], f"offer {current_offer}"
        failures = [] if record.acceptable else list(record.reasons)
    elif current is not None:
        label = "the cost per task given"
    elif ours:
        current, label, placed = ours[-1].cost_per_task, f"our recorded cost on {ours[-1].date}", False
    elif ev.summary.recommended:
        current, label = (
            ev.offer(ev.summary.recommended).metrics["cost_per_task"],
            f"the recommended offer {ev.summary.recommended}",
        )
    else:
        raise InputError([Problem("position", None, "", "no cost per task to place: give --current or --offer")])
    assert current is not None
    if current <= 0:
        raise InputError([Problem("--current", None, "", f"must be greater than 0 (got {current:g})")])
    return current, label, placed, failures


def _cost_curve(ev: Evaluation, history: dict[str, list[CurvePoint]], ours: list[CurvePoint]) -> list[CurvePoint]:
    """The evaluated offers, each competitor's latest figure and our cost, cheapest first."""
    curve = [
        CurvePoint(name=o.id, kind="offer", cost_per_task=o.metrics["cost_per_task"], date=ev.as_of) for o in ev.ranked
    ]  # type: ignore[arg-type]
    for name, points in sorted(history.items()):
        if name != US:
            curve.append(max(points, key=lambda p: p.date))
    curve.append(ours[-1])
    curve.sort(key=lambda p: (p.cost_per_task, p.kind != US, p.name))
    return curve


def _sentences(
    ev: Evaluation,
    curve: list[CurvePoint],
    current: float,
    label: str,
    current_offer: str | None,
    failures: list[str],
    rank: int,
    others: list[CurvePoint],
    cheapest: CurvePoint,
    gap: float,
    changes: list[SeriesChange],
) -> list[str]:
    """The position in words: a failing offer said first (it is no option, however cheap), then our rank among
    the costs, competitors' prices beside them (never ranked as costs), and how each history changed."""
    if failures:
        sentences = [
            f"Offer {current_offer} fails a gate ({'; '.join(failures)}): it is not an acceptable offer, and its place "
            "on the cost curve is for reference only.",
            f"Were it acceptable, at {per_thousand(current):.2f} {ev.currency} per 1,000 successful tasks it "
            f"would rank "
            f"{rank} of {len(others) + 1} costs on the cost curve"
            + (
                " and be the cheapest."
                if rank == 1
                else f"; the cheapest is {cheapest.name} at {per_thousand(cheapest.cost_per_task):.2f}, "
                f"{gap / cheapest.cost_per_task:.0%} less."
            ),
        ]
    else:
        sentences = [
            f"At {per_thousand(current):.2f} {ev.currency} per 1,000 successful tasks ({label}), we rank {rank} of "
            f"{len(others) + 1} costs on the cost curve"
            + (
                " and are the cheapest."
                if rank == 1
                else f"; the cheapest is {cheapest.name} at {per_thousand(cheapest.cost_per_task):.2f}, and we cost "
                f"{gap / cheapest.cost_per_task:.0%} more."
            )
        ]
    prices = [p for p in curve if p.figure == "price"]
    if prices:
        sentences.append(
            "Not ranked with the costs: "
            + "; ".join(
                f"{p.name} charges {per_thousand(p.cost_per_task):.2f} per 1,000 tasks (a price to its "
                f"customers, not its "
                "cost)"
                for p in prices
            )
            + "."
        )
    return sentences + [c.sentence for c in changes]


def position(
    ev: Evaluation, market: MarketConfig, current: float | None = None, current_offer: str | None = None
) -> Position:
    """Place our cost per task (given, an offer's, our latest recorded, or the recommended offer's)."""
    history = _histories(ev, market)
    if current is not None and current_offer is not None:
        raise InputError([Problem("position", None, "", "give --current or --offer, not both")])
    ours = sorted(history[US], key=lambda p: p.date)
    current, label, placed, failures = _our_cost(ev, current, current_offer, ours)
    if placed:
        ours = [p for p in ours if p.date < ev.as_of] + [
            CurvePoint(name=US, kind=US, cost_per_task=current, date=ev.as_of)
        ]
    history[US] = ours
    curve = _cost_curve(ev, history, ours)
    # Costs are ranked with costs; a competitor's price is shown beside them, labelled, never ranked as a cost.
    others = [p for p in curve if p.kind != US and p.figure == "cost"]
    rank = 1 + sum(1 for p in others if p.cost_per_task < current)
    cheapest = others[0] if others and others[0].cost_per_task < current else ours[-1]
    gap = current - cheapest.cost_per_task
    changes = [
        compare_histories(ours, sorted(points, key=lambda p: p.date), name, points[0].figure)
        for name, points in sorted(history.items())
        if name != US and len(points) >= 2 and len(ours) >= 2
    ]
    sentences = _sentences(ev, curve, current, label, current_offer, failures, rank, others, cheapest, gap, changes)
    return Position(
        label=label,
        cost_per_task=current,
        as_of=ev.as_of,
        rank=rank,
        of=len(curve),
        cheapest=cheapest,
        gap=gap,
        gap_share=gap / cheapest.cost_per_task,
        curve=curve,
        history={name: sorted(points, key=lambda p: p.date) for name, points in sorted(history.items())},
        changes=changes,
        sentences=sentences,
        gate_failures=failures,
    )
