"""The use case of report: the workspace evaluated for the comparison or the board memo (with Monte Carlo ranges,
over horizon.months), and what the document shows beside the evaluation, computed when the document asks for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from procure.analysis.usecases.base import ranks_by_horizon

if TYPE_CHECKING:
    from procure.analysis.evaluate import CostInputs, Evaluation
    from procure.analysis.plan.frontier import Solves
    from procure.analysis.report import ReportExtras
    from procure.io.workspace import Workspace

# stage(what, done=None, total=None): the stage the work is in, with a count where one is known (cli/output.py)
Stage = Callable[..., None]


def _no_stage(what: str, done: int | None = None, total: int | None = None) -> None:
    """The stages of a caller that shows none."""


@dataclass
class Reporting:
    """A report's evaluation, and the figures it prints beside it (`extras`, computed when the document asks: the
    offer pages do without them); `gathered` keeps those computed, the recommendation among them."""

    workspace: Workspace
    evaluation: Evaluation
    inputs: CostInputs
    board: bool = False
    frontier: bool = False
    stage: Stage = _no_stage
    gathered: list[ReportExtras] = field(default_factory=list)

    def extras(self, solves: Solves | None = None) -> ReportExtras:
        """Sensitivity, position, hedge, benchmark and the purchase plan; `solves` runs the frontier's solves."""
        from procure.analysis.report import gather_extras

        self.stage("sensitivity, position, hedge, benchmark and the purchase plan")
        found = gather_extras(
            self.workspace, self.evaluation, self.inputs, board=self.board, frontier=self.frontier, solves=solves
        )
        self.gathered.append(found)
        return found

    @property
    def recommendation(self) -> Any:
        """The recommendation of the figures last computed (None before any)."""
        return self.gathered[-1].recommendation if self.gathered else None


def reporting(
    workspace: Path,
    as_of: date | None,
    *,
    rank_by_horizon: bool = False,
    board: bool = False,
    frontier: bool = False,
    stage: Stage = _no_stage,
    loaded: Callable[[], Any] | None = None,
) -> Reporting:
    """The workspace evaluated as of `as_of` with Monte Carlo ranges over horizon.months (ranked over them with
    `rank_by_horizon`) for the board memo (`board`) or the comparison (with the efficient frontier: `frontier`).
    `loaded()` is called once the workspace is read, before the evaluation (the layout can start meanwhile)."""
    from procure.analysis.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.io.workspace import load_workspace

    stage("loading the workspace")
    ws = load_workspace(workspace)
    if loaded is not None:
        loaded()
    from procure.model.demand import surface_horizon

    months = surface_horizon(ws.config)
    by_horizon = ranks_by_horizon(rank_by_horizon, months, "horizon.months in procure.yaml")
    progress = MonteCarlo(progress=lambda done, total: stage("Monte Carlo draws", done, total))
    ev, inputs = evaluate_with_inputs(ws, as_of, progress, months, by_horizon)
    return Reporting(ws, ev, inputs, board, frontier, stage)
