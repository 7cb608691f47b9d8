"""What the use cases share: the progress callback, the default horizon, and the checks of what a command names."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from procure.io.workspace import Workspace

Progress = Callable[[str, bool], AbstractContextManager[Callable[[int, int], None] | None]]


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


def known_offers(ws: Workspace, named: list[str] | None) -> None:
    """Every offer id named is in the workspace, else one problem each with a "did you mean"."""
    from procure.errors import InputError, unknown_offer

    ids = [o.id for o in ws.offers]
    unknown = [unknown_offer(i, ids) for i in named or [] if i not in set(ids)]
    if unknown:
        raise InputError(unknown)
