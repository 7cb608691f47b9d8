"""The use cases of the commands: each loads the workspace, checks what the command was asked against it,
evaluates and decides, and returns one typed result holding what the command's renderer needs.

The cli parses, calls one of these, renders the result and returns an exit status; these never print. Progress
is reported through a callback: `progress(label, shown)` is a context manager yielding an `advance(done, total)`
callback or None (`shown`: whether the stage is worth a bar at all, e.g. no plan is solved without `demand:`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procure.analysis.evaluate import CostInputs, Evaluation
    from procure.analysis.plan import PlanResult
    from procure.analysis.recommendation import Recommendation
    from procure.io.workspace import Workspace

Progress = Callable[[str, bool], AbstractContextManager[Callable[[int, int], None] | None]]

# The horizon in months when neither --horizon nor horizon.months in procure.yaml gives one.
DEFAULT_HORIZON = 36


@contextlib.contextmanager
def no_progress(label: str, shown: bool) -> Iterator[None]:
    """The progress of a caller that shows none."""
    yield None


def ranks_by_horizon(rank_by_horizon: bool, months: int | None, where: str) -> bool:
    """Ranking by the horizon needs a horizon: else a clear error (exit 2)."""
    if rank_by_horizon and months is None:
        from procure.errors import InputError, Problem

        raise InputError([Problem("--rank-by", None, "", f"ranking by the horizon needs {where}")])
    return rank_by_horizon


def _known_offers(ws: Workspace, named: list[str] | None) -> None:
    """Every offer id named is in the workspace, else one problem each with a "did you mean"."""
    from procure.errors import InputError, unknown_offer

    ids = [o.id for o in ws.offers]
    unknown = [unknown_offer(i, ids) for i in named or [] if i not in set(ids)]
    if unknown:
        raise InputError(unknown)


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
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    _known_offers(ws, offers)
    months = horizon or (ws.config.horizon.months if rank_by_horizon else None)
    by_horizon = ranks_by_horizon(rank_by_horizon, months, "--horizon N (or horizon.months in procure.yaml)")
    if monte_carlo is not None:
        with progress("Monte Carlo", True) as advance:
            ev, inputs = evaluate_with_inputs(ws, as_of, MonteCarlo(*monte_carlo, advance), months, by_horizon)
    else:
        ev, inputs = evaluate_with_inputs(ws, as_of, None, months, by_horizon)
    with progress("the purchase plan", ws.config.demand is not None):
        rec, purchase = recommend(ws, ev, inputs)
    result = Comparison(ws, ev, inputs, rec, purchase)
    if workbook:
        _workbook_sheets(result, as_of)
    return result


def _workbook_sheets(result: Comparison, as_of: date | None) -> None:
    """The workbook's analyses beside the offers: the offers over the horizon (this evaluation's, or one over
    horizon.months, else 36), the sensitivity of the top three."""
    from procure.analysis.evaluate import evaluate_with_inputs, offer_sensitivity

    ws, ev = result.workspace, result.evaluation
    if not ev.horizon_months:
        result.horizon_flows, _ = evaluate_with_inputs(ws, as_of, None, ws.config.horizon.months or DEFAULT_HORIZON)
    if ev.ranked:
        result.sensitivity = offer_sensitivity(ws, ev, result.inputs, [o.id for o in ev.ranked][:3])


@dataclass
class Hedging:
    """What `procure hedge` prints: the hedge, and the recommendation it was drawn from when the offer to hedge was
    neither named nor set in procure.yaml (its plan may have failed, which the caller tells)."""

    evaluation: Evaluation
    recommendation: Recommendation | None
    plan: Any


def hedging(
    workspace: Path, as_of: date | None, offer: str | None = None, index: Path | None = None, rent: Path | None = None
) -> Hedging:
    """The hedge of `offer` (default: hedge.offer in procure.yaml, else the recommendation), against the index
    history `index` and the rent history `rent` when given (else the workspace's market files)."""
    from procure.analysis.decision import recommend
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.hedging import recommended_hedge
    from procure.io.workspace import PriceSeries, load_workspace, read_series

    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, as_of)
    rec, purchase = None, None
    if offer is None and ws.config.hedge.offer is None:
        rec, purchase = recommend(ws, ev, inputs)
    index_rows = read_series(index) if index is not None else None
    series = PriceSeries(rent, str(rent)) if rent is not None else None
    return Hedging(ev, rec, recommended_hedge(ws, ev, purchase, offer, index_rows, series))


@dataclass
class CashFlows:
    """What `procure cashflow` prints: the evaluation over the horizon (each offer's monthly schedule) and the cost
    model's inputs behind it (the workbook's formulas)."""

    evaluation: Evaluation
    inputs: CostInputs


def cash_flows(
    workspace: Path, as_of: date | None, horizon: int | None, offer: str | None, top: int | None
) -> CashFlows:
    """Every offer's schedule over `horizon` months (default: horizon.months in procure.yaml, else 36), ranked over
    it; `offer` must be one of the workspace's, and is not given with `top` (one schedule, or a ranking)."""
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.errors import InputError, Problem, unknown_offer
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    months = horizon or ws.config.horizon.months or DEFAULT_HORIZON
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
class Asked:
    """The change `procure whatif` was asked to try, as given: percentages as text (+50%), shares, amounts."""

    throughput: str | None = None
    price: str | None = None
    availability: float | None = None
    utilization: float | None = None
    gpus: int | None = None
    one_off: float = 0.0
    monthly: float = 0.0

    def empty(self) -> bool:
        values = (self.throughput, self.price, self.availability, self.utilization, self.gpus)
        return all(v is None for v in values) and not self.one_off and not self.monthly


@dataclass
class WhatIfs:
    """What `procure whatif` prints: the changed offer before and after (`whatif`), or with --price-to-win the
    price that ties the leader for every acceptable offer (`price_to_win`, from `evaluation`); `as_of` and `inputs`
    for the envelope."""

    as_of: date
    inputs: Any
    whatif: Any = None
    price_to_win: list[Any] | None = None
    evaluation: Evaluation | None = None


def what_if(
    workspace: Path, as_of: date | None, offer_id: str | None, asked: Asked, price_to_win: bool, top: int | None
) -> WhatIfs:
    """The offer `offer_id` recomputed with the change `asked`, or with `price_to_win` every acceptable offer's price
    to tie the leader (`top` ranks those, and only those)."""
    from procure.analysis.evaluate import evaluate, resolve_as_of
    from procure.errors import InputError, Problem
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    found = WhatIfs(resolve_as_of(ws, as_of), ws.inputs)
    if top is not None and not price_to_win:
        raise InputError([Problem("--top", None, "", "ranks the offers of --price-to-win: add --price-to-win")])
    if price_to_win:
        if offer_id is not None or not asked.empty():
            message = "lists every acceptable offer: give no --offer and no change with it"
            raise InputError([Problem("whatif", None, "--price-to-win", message)])
        from procure.analysis.whatif import price_to_win as compute_price_to_win

        found.evaluation = evaluate(ws, as_of)
        found.price_to_win = compute_price_to_win(found.evaluation)
        return found
    if offer_id is None:
        message = "name the offer to change with --offer ID, or use --price-to-win"
        raise InputError([Problem("whatif", None, "", message)])
    from procure.analysis.whatif import whatif

    found.whatif = whatif(ws, offer_id, _change(asked), as_of)
    return found


def _change(asked: Asked) -> Any:
    """The Change from what was asked; a share out of (0, 1], a negative amount or no change at all is refused."""
    from procure.analysis.whatif import Change, parse_change
    from procure.errors import InputError, Problem

    change = Change(
        throughput=parse_change(asked.throughput, "--throughput") if asked.throughput is not None else None,
        price=parse_change(asked.price, "--price") if asked.price is not None else None,
        availability=_fraction(asked.availability, "--availability"),
        utilization=_fraction(asked.utilization, "--utilization"),
        gpus=asked.gpus,
        one_off=_amount(asked.one_off, "--one-off"),
        monthly=_amount(asked.monthly, "--monthly"),
    )
    if asked.empty():
        message = (
            "no change to try: give --throughput, --price, --availability, --utilization or --gpus (and what it "
            "costs: --one-off, --monthly)"
        )
        raise InputError([Problem("whatif", None, "", message)])
    return change


def _fraction(value: float | None, option: str) -> float | None:
    if value is not None and not 0 < value <= 1:
        from procure.errors import InputError, Problem

        raise InputError([Problem(option, None, "", f"must be a share between 0 and 1, e.g. 0.999 (got {value:g})")])
    return value


def _amount(value: float, option: str) -> float:
    if value < 0 or value != value or value in (float("inf"), float("-inf")):
        from procure.errors import InputError, Problem

        raise InputError([Problem(option, None, "", f"must be an amount of at least 0 (got {value:g})")])
    return value


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
    return Positioning(ev, position(ev, ws.config.market, current, current_offer))


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
        followed = [o.id for o in ev.ranked][: count if count is not None else (top if top is not None else 3)]
    return Sensitivities(ev, followed, offer_sensitivity(ws, ev, inputs, followed))


@dataclass
class Grades:
    """What `procure grade` prints: each offer (the ones named, else all) with its grading, on the day validity is
    judged; for named offers, the evaluation behind their throughput factors, or the problem that stopped it."""

    as_of: date
    inputs: Any
    results: list[tuple[Any, Any]]
    evaluation: Evaluation | None = None
    not_evaluated: Any = None


def grades(workspace: Path, as_of: date | None, named: list[str], factors: bool = False) -> Grades:
    """Every offer graded (the `named` ones, each once, when given: an unknown id is an error); with `factors`, the
    workspace is also evaluated for the throughput factors, and a workspace that cannot be is told, not raised."""
    from procure.analysis.evaluate import evaluate, resolve_as_of
    from procure.errors import InputError, unknown_offer
    from procure.io.workspace import load_workspace
    from procure.model.grading import grade_offer

    ws = load_workspace(workspace)
    day = resolve_as_of(ws, as_of)  # validity: an offer is graded on terms that still hold
    offers = ws.offers
    if named:
        by_id = {o.id: o for o in ws.offers}
        unknown = [unknown_offer(i, list(by_id)) for i in named if i not in by_id]
        if unknown:
            raise InputError(unknown)
        offers = [by_id[i] for i in dict.fromkeys(named)]
    found = Grades(day, ws.inputs, [(o, grade_offer(o, ws.grades)) for o in offers])
    if factors:
        try:
            found.evaluation = evaluate(ws)
        except InputError as exc:  # the grades stand without an evaluation
            found.not_evaluated = exc.problems[0]
    return found


@dataclass
class Validated:
    """What `procure validate` prints: the counts of what was read, the warnings and notes on it, the evaluation."""

    evaluation: Evaluation
    inputs: Any
    counts: dict[str, int]
    warnings: list[str]
    notes: list[str]


def validation(workspace: Path, as_of: date | None) -> Validated:
    """Every file of the workspace checked (a problem raises InputError) and evaluated; the warnings: checklist
    claims the service terms do not back, offers' scope, stale grade files, measured curves and trials against the
    public curves."""
    from procure.analysis.evaluate import evaluate
    from procure.io.grades import stale_grade_warnings
    from procure.io.offer_trials import reference_lines
    from procure.io.workspace import load_workspace
    from procure.model.rating import contradiction_warnings
    from procure.model.scope import offer_warnings

    ws = load_workspace(workspace)
    ev = evaluate(ws, as_of)
    warnings = [
        w
        for offer in ws.offers
        for w in contradiction_warnings(offer, ws.lines[offer.id]) + offer_warnings(offer, ws.lines[offer.id])
    ]
    warnings += stale_grade_warnings(ws.grades, ws.root)
    found, said = reference_lines(ws)  # measured curves and post-signing trials against the public curves
    counts = {
        "offers": len(ws.offers),
        "grades": len(ws.grades),
        "reference_curves": len(ws.curves),
        "index_levels": len(ws.index),
        "acceptable": len(ev.ranked),
    }
    return Validated(ev, ws.inputs, counts, warnings + found, said)
