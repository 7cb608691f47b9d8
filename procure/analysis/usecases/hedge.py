"""The use case of hedge: the hedge of one offer against the index and rent histories."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procure.analysis.evaluate import Evaluation
    from procure.analysis.recommendation import Recommendation


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
    if offer is None and ws.config.hedge.offer is None and not ev.ranked:
        from procure.analysis.evaluate import no_acceptable_offer

        raise no_acceptable_offer(ev, "hedge", instead="name the offer to hedge with --offer ID")
    if offer is None and ws.config.hedge.offer is None:
        rec, purchase = recommend(ws, ev, inputs)
    index_rows = read_series(index) if index is not None else None
    series = PriceSeries(rent, str(rent)) if rent is not None else None
    return Hedging(ev, rec, recommended_hedge(ws, ev, purchase, offer, index_rows, series))
