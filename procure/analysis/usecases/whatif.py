"""The use case of whatif: one offer recomputed with a change, or every acceptable offer's price to win."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procure.analysis.evaluate import Evaluation


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
        if not found.evaluation.ranked:
            from procure.analysis.evaluate import no_acceptable_offer

            raise no_acceptable_offer(found.evaluation, "whatif", "--price-to-win", "try a change with --offer ID")
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
