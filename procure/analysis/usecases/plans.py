"""The use cases of plan, cashflow and position: the purchase plan over the demand scenarios, every offer's
schedule over a horizon, and our cost placed among the offers and the market."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procure.analysis.evaluate import CostInputs, Evaluation
    from procure.analysis.plan import PlanResult


@dataclass
class CashFlows:
    """What `procure cashflow` prints: the evaluation over the horizon (each offer's monthly schedule) and the cost
    model's inputs behind it (the workbook's formulas)."""

    evaluation: Evaluation
    inputs: CostInputs


def cash_flows(
    workspace: Path, as_of: date | None, horizon: int | None, offer: str | None, top: int | None
) -> CashFlows:
    """Every offer's schedule over `horizon` months (default: model/demand.py's cash_horizon, the plan's horizon where
    demand: is stated, else horizon.months, else 36), ranked over it; `offer` must be one of the workspace's, and is
    not given with `top` (one schedule, or a ranking)."""
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.errors import InputError, Problem, unknown_offer
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    from procure.model.demand import cash_horizon

    months = horizon or cash_horizon(ws.config)
    ev, inputs = evaluate_with_inputs(ws, as_of, None, months, True)
    if offer is not None and offer not in {o.id for o in ev.offers}:
        raise InputError([unknown_offer(offer, [o.id for o in ev.offers])])
    if offer is not None and top is not None:
        message = "ranks the offers, --offer shows one offer's schedule: give one of them"
        raise InputError([Problem("--top", None, "", message)])
    return CashFlows(ev, inputs)


@dataclass
class Planning:
    """What `procure plan` prints: the plan and the workspace's input files; with `headline`, the recommendation's
    headline and its usage lines (the single offer's when procure.yaml has no demand:, the plan then being over
    default demand scenarios)."""

    plan: PlanResult
    inputs: Any
    headline: str = ""
    usage: list[str] | None = None


def planning(workspace: Path, as_of: date | None, frontier: bool = False, headline: bool = False) -> Planning:
    """The purchase plan over the demand scenarios, with the efficient frontier when asked."""
    from procure.analysis.decision import decide
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.plan import make_plan
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, as_of)
    if not ev.ranked:
        from procure.analysis.evaluate import no_acceptable_offer

        raise no_acceptable_offer(ev, "plan")
    result = Planning(make_plan(ws, ev.as_of, frontier=frontier, evaluation=(ev, inputs)), ws.inputs)
    if not headline:
        return result
    if ws.config.demand is None:  # the recommendation is the single offer until demand: is stated (decision.recommend)
        result.headline = (
            decide(ev).headline
            + " The plan below is over default demand scenarios (procure.yaml has no demand:), so it is not the "
            "recommendation; state demand: to make it one."
        )
    else:
        result.headline = decide(ev, result.plan).headline
    result.usage = decide(ev, result.plan).usage if ws.config.demand is not None else []
    return result


@dataclass
class Positioning:
    """What `procure position` prints: the cost position, and the evaluation it was placed from."""

    evaluation: Evaluation
    position: Any


def positioning(workspace: Path, as_of: date | None, current: float | None, current_offer: str | None) -> Positioning:
    """Our cost per task (`current`, else `current_offer`'s, else our latest recorded or the recommended offer's)
    placed on the curve of the acceptable offers and the competitor benchmarks."""
    from procure.analysis.evaluate import evaluate
    from procure.analysis.position import position
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    ev = evaluate(ws, as_of)
    if not ev.ranked and current is None and current_offer is None and not ws.config.market.own:
        from procure.analysis.evaluate import no_acceptable_offer

        raise no_acceptable_offer(ev, "position", instead="place a figure with --current or an offer with --offer")
    return Positioning(ev, position(ev, ws.config.market, current, current_offer))
