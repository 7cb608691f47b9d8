"""The use cases of compare, evaluate and sensitivity: the offers ranked by expected full cost per successful task,
with the recommendation, an evaluation kept in the history, and the assumptions that move the ranking."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procure.analysis.usecases.base import Progress, known_offers, no_progress, ranks_by_horizon

if TYPE_CHECKING:
    from procure.analysis.evaluate import CostInputs, Evaluation
    from procure.analysis.plan import PlanResult
    from procure.analysis.recommendation import Recommendation
    from procure.io.workspace import Workspace


@dataclass
class Comparison:
    """What `procure compare` prints: the evaluation, the recommendation with its purchase plan, and for the
    workbook the offers over the horizon (when the evaluation has none) and the sensitivity of the top three."""

    workspace: Workspace
    evaluation: Evaluation
    inputs: CostInputs
    recommendation: Recommendation
    purchase: PlanResult | None
    horizon_flows: Evaluation | None = None
    sensitivity: Any = None
    warnings: list[Any] = field(default_factory=list)  # offers' own points far above the public curves


def comparison(
    workspace: Path,
    as_of: date | None,
    *,
    offers: list[str] | None = None,
    monte_carlo: tuple[int | None, int | None] | None = None,
    horizon: int | None = None,
    rank_by_horizon: bool = False,
    workbook: bool = False,
    progress: Progress = no_progress,
) -> Comparison:
    """Rank the offers by expected full cost per successful task and recommend. `offers`: the ids the caller will
    show, told at once when unknown (before the evaluation and the plan); `monte_carlo`: (draws, seed) for
    uncertainty ranges (None fields take procure.yaml's); `horizon`: months to add; `workbook`: also compute the
    workbook's extra sheets."""
    from procure.analysis.decision import recommend
    from procure.analysis.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.io.offer_trials import offer_point_lines
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    known_offers(ws, offers)
    from procure.model.demand import surface_horizon

    months = horizon or (surface_horizon(ws.config) if rank_by_horizon else None)
    by_horizon = ranks_by_horizon(rank_by_horizon, months, "--horizon N (or horizon.months in procure.yaml)")
    if monte_carlo is not None:
        with progress("Monte Carlo", True) as advance:
            ev, inputs = evaluate_with_inputs(ws, as_of, MonteCarlo(*monte_carlo, advance), months, by_horizon)
    else:
        ev, inputs = evaluate_with_inputs(ws, as_of, None, months, by_horizon)
    with progress("the purchase plan", ws.config.demand is not None):
        rec, purchase = recommend(ws, ev, inputs)
    result = Comparison(ws, ev, inputs, rec, purchase)
    result.warnings = offer_point_lines(ws)[0]
    if workbook:
        _workbook_sheets(result, as_of)
    return result


def _workbook_sheets(result: Comparison, as_of: date | None) -> None:
    """The workbook's analyses beside the offers: the offers over the horizon (this evaluation's, or one over
    cash_horizon's), the sensitivity of the top three."""
    from procure.analysis.evaluate import evaluate_with_inputs, offer_sensitivity

    ws, ev = result.workspace, result.evaluation
    if not ev.horizon_months:
        from procure.model.demand import cash_horizon

        result.horizon_flows, _ = evaluate_with_inputs(ws, as_of, None, cash_horizon(ws.config))
    if ev.ranked:
        result.sensitivity = offer_sensitivity(ws, ev, result.inputs, [o.id for o in ev.ranked][:3])


@dataclass
class Evaluated:
    """An evaluation, and the id of the history run it was saved as (None when not saved)."""

    evaluation: Evaluation
    run_id: int | None = None


def evaluation(workspace: Path, as_of: date | None, save: bool = False, label: str | None = None) -> Evaluated:
    """The workspace evaluated as of `as_of`; with `save`, stored in its history under `label`."""
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    found = Evaluated(evaluate(ws, as_of))
    if save:
        from procure.analysis.history import save_run

        found.run_id = save_run(ws.root, found.evaluation, label)
    return found


@dataclass
class Sensitivities:
    """What `procure sensitivity` prints: the offers followed and each uncertain input's swing of their cost."""

    evaluation: Evaluation
    followed: list[str]
    result: Any


def sensitivities(
    workspace: Path, as_of: date | None, offers: list[str] | None, top: int | None, count: int | None
) -> Sensitivities:
    """Each uncertain input at its low and high value for the acceptable offers named (`offers`), else the first
    `count` (or `top`, default 3) of the ranking."""
    from procure.analysis.evaluate import evaluate_with_inputs, offer_sensitivity
    from procure.errors import InputError, Problem, unknown_offer
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, as_of)
    if offers and (top is not None or count is not None):
        message = "follows the top-ranked offers, --offer the offers it names: give one of them"
        raise InputError([Problem("--top", None, "", message)])
    if offers:
        known, acceptable = {o.id for o in ev.offers}, [o.id for o in ev.ranked]
        unknown = [unknown_offer(i, [o.id for o in ev.offers]) for i in offers if i not in known]
        failing = [
            Problem(
                "--offer",
                None,
                "",
                f"offer '{i}' fails a gate ({'; '.join(ev.offer(i).reasons)}): only acceptable offers are followed",
            )
            for i in offers
            if i in known and i not in acceptable
        ]
        if unknown or failing:
            raise InputError(unknown + failing)
        followed = list(dict.fromkeys(offers))
    else:
        if not ev.ranked:
            from procure.analysis.evaluate import no_acceptable_offer

            raise no_acceptable_offer(ev, "sensitivity")
        followed = [o.id for o in ev.ranked][: count if count is not None else (top if top is not None else 3)]
    return Sensitivities(ev, followed, offer_sensitivity(ws, ev, inputs, followed))
