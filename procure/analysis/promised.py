"""Delivered against promised: the evaluation of the promise alone (no delivered evidence blended in), then every
signed vendor's months scored against it. `procure scorecard`, `procure reevaluate`'s delivered thresholds and the
report's scorecard chapter all start here, so that the three set the same months against the same promise.

It lives beside the scorecard rather than in it: the evaluation blends the scorecard's evidence into its figures
(procure/analysis/evaluate.py imports procure/analysis/scorecard.py), so the scorecard cannot call the evaluation.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from procure.analysis.evaluate import Evaluation, evaluate
from procure.analysis.scorecard import ScorecardResult, scorecard


def scored_promise(
    ws: Any, as_of: date | None, offer: str | None = None, months: int | None = None
) -> tuple[Evaluation, ScorecardResult]:
    """The promise as of `as_of` (default: the workspace's as_of, else today) and the signed vendors' scorecard
    against it; `offer` and `months` as `scorecard` takes them."""
    promise = evaluate(ws, as_of, delivered=False)
    return promise, scorecard(ws, promise, promise.as_of, offer, months)
