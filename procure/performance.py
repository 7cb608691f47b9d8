"""Throughput at the workload's interactivity, read off the Pareto frontier of measured points.

InferenceX draws, per hardware and serving stack, an "upper-left" roofline: the points that no other
point beats on both interactivity (output tok/s per user) and throughput (output tok/s per GPU).
A buyer's question is "how much output does one GPU give while every user still sees the target
speed?", which is that frontier read at the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

Point = tuple[float, float]


def pareto_frontier(points: Iterable[Sequence[float]]) -> list[Point]:
    """The non-dominated points, by rising interactivity (and so falling throughput).

    A point is dropped when another is at least as good on both axes and better on one; exact
    duplicates are kept once.
    """
    unique = sorted({(float(p[0]), float(p[1])) for p in points}, key=lambda p: (-p[0], -p[1]))
    frontier: list[Point] = []
    best_throughput = float("-inf")
    # From the highest interactivity down, a point survives only if it beats every faster point's throughput.
    for x, y in unique:
        if y > best_throughput:
            frontier.append((x, y))
            best_throughput = y
    frontier.reverse()
    return frontier


@dataclass(frozen=True)
class ThroughputReading:
    """The frontier read at a target interactivity; throughput None when the target is out of reach."""

    throughput: float | None
    reachable: bool
    max_interactivity: float
    note: str


def throughput_at(points: Iterable[Sequence[float]], target: float) -> ThroughputReading:
    """Linear interpolation on the frontier; no extrapolation above the fastest point."""
    frontier = pareto_frontier(points)
    if not frontier:
        return ThroughputReading(None, False, 0.0, "no performance points")
    xs = [p[0] for p in frontier]
    ys = [p[1] for p in frontier]
    top = xs[-1]
    if target > top:
        return ThroughputReading(None, False, top, f"target {target:g} tok/s/user is above the fastest point ({top:g})")
    if target <= xs[0]:
        note = "at the slowest point's throughput" if target < xs[0] else "at a measured point"
        return ThroughputReading(ys[0], True, top, note)
    for i in range(1, len(xs)):
        if target <= xs[i]:
            x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
            if target == x1:
                return ThroughputReading(y1, True, top, "at a measured point")
            share = (target - x0) / (x1 - x0)
            return ThroughputReading(y0 + share * (y1 - y0), True, top, f"interpolated between {x0:g} and {x1:g} tok/s/user")
    raise AssertionError("unreachable: target within frontier range")


def ttft_at(points: Iterable[Sequence[float]], target: float) -> float | None:
    """Time to first token (seconds) at the target, read like the throughput: on the frontier points
    that carry one (a third value), linearly between them; None when no frontier point carries one or
    the target is out of their range."""
    points = list(points)
    carried = {(float(p[0]), float(p[1])): float(p[2]) for p in points if len(p) > 2}
    timed = [(x, carried[(x, y)]) for x, y in pareto_frontier(points) if (x, y) in carried]
    if not timed or target > timed[-1][0]:
        return None
    if target <= timed[0][0]:
        return timed[0][1]
    for (x0, t0), (x1, t1) in zip(timed, timed[1:]):
        if target <= x1:
            return t1 if target == x1 else t0 + (target - x0) / (x1 - x0) * (t1 - t0)
    return None
