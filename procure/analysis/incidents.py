"""The availability an incident history leaves over a window (the incidents are read by
procure/io/incidents.py).

The availability over a window is 1 - (time covered by the union of counted incidents) / window;
an open incident runs to the window's end; an incident that names no component affects every
component. By default `major` and `critical` count as down time (`DOWN_IMPACTS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from procure.io.incidents import DOWN_IMPACTS, Incident


def downtime(
    incidents: Iterable[Incident],
    start: datetime,
    end: datetime,
    components: Iterable[str] | None = None,
    impacts: Iterable[str] = DOWN_IMPACTS,
) -> timedelta:
    """Time within [start, end) covered by the union of the counted incidents (overlaps once)."""
    counted = set(impacts)
    wanted = list(components) if components is not None else None
    spans = sorted(
        (max(i.start, start), min(i.end or end, end)) for i in incidents if i.impact in counted and i.affects(wanted)
    )
    total = timedelta(0)
    current: tuple[datetime, datetime] | None = None
    for lo, hi in spans:
        if hi <= lo:
            continue
        if current is None or lo > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = (lo, hi)
        else:
            current = (current[0], max(current[1], hi))
    if current is not None:
        total += current[1] - current[0]
    return total


def availability(
    incidents: Iterable[Incident],
    start: datetime,
    end: datetime,
    components: Iterable[str] | None = None,
    impacts: Iterable[str] = DOWN_IMPACTS,
) -> float:
    """1 - downtime / window over [start, end): the share of the window no counted incident covered."""
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("availability needs timezone-aware start and end")
    if end <= start:
        raise ValueError("availability needs a window that ends after it starts")
    window = (end - start).total_seconds()
    return 1.0 - downtime(incidents, start, end, components, impacts).total_seconds() / window
