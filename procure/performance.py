"""Throughput at the workload's interactivity, read off the Pareto frontier of measured points.

InferenceX draws, per hardware and serving stack, an "upper-left" roofline: the points that no other
point beats on both interactivity (output tok/s per user) and throughput (output tok/s per GPU).
A buyer's question is "how much output does one GPU give while every user still sees the target
speed?", which is that frontier read at the target.
"""

from __future__ import annotations

import math
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


# How throughput is read between two frontier points (`assumptions.interpolation`). Throughput falls
# convexly with interactivity, so a straight line between two points overstates what lies between
# them; docs/interpolation.md measures each method on real InferenceX curves and picks the default.
INTERPOLATION_METHODS: tuple[str, ...] = ("linear", "log", "step", "monotone")
DEFAULT_INTERPOLATION = "step"  # models.Assumptions.interpolation's default


def interpolate(xs: Sequence[float], ys: Sequence[float], target: float, method: str = DEFAULT_INTERPOLATION) -> float:
    """Throughput at `target` strictly inside the frontier xs (rising) / ys (falling), by `method`:

    - linear: the straight line between the two neighbouring points;
    - log: linear in log throughput (a constant rate of decline between the two points);
    - step: the next faster point's throughput (never more than what is measured at or above the target);
    - monotone: the monotone cubic through every frontier point (Fritsch-Carlson / PCHIP, SciPy's
      PchipInterpolator), which keeps the curve's bend and never overshoots a point.
    """
    if method not in INTERPOLATION_METHODS:
        raise ValueError(f"unknown interpolation method {method!r}: expected one of {', '.join(INTERPOLATION_METHODS)}")
    i = next(k for k in range(1, len(xs)) if target <= xs[k])
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    if target == x1:
        return float(y1)
    share = (target - x0) / (x1 - x0)
    if method == "linear" or (method == "monotone" and len(xs) < 3):
        return y0 + share * (y1 - y0)
    if method == "log":
        return math.exp(math.log(y0) + share * (math.log(y1) - math.log(y0)))
    if method == "step":
        return float(y1)
    from scipy.interpolate import PchipInterpolator  # heavy: only when a curve is read this way

    return float(PchipInterpolator(list(xs), list(ys))(target))


def throughput_at(points: Iterable[Sequence[float]], target: float, method: str = DEFAULT_INTERPOLATION) -> ThroughputReading:
    """Throughput on the frontier at the target, interpolated by `method`; no extrapolation above the
    fastest point."""
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
    if target in xs:
        return ThroughputReading(ys[xs.index(target)], True, top, "at a measured point")
    i = next(k for k in range(1, len(xs)) if target < xs[k])
    value = interpolate(xs, ys, target, method)
    return ThroughputReading(value, True, top, f"interpolated ({method}) between {xs[i - 1]:g} and {xs[i]:g} tok/s/user")


def ttft_at(points: Iterable[Sequence[float]], target: float) -> float | None:
    """Time to first token (seconds) at the target, read on the frontier like the throughput: a
    point's own value, linearly between the two frontier points around the target when both carry
    one (a third value), the slowest point's value below it; None where the frontier point or
    segment at the target carries none, or the target is out of reach."""
    points = list(points)
    carried = {(float(p[0]), float(p[1])): float(p[2]) for p in points if len(p) > 2 and p[2] is not None}
    frontier = pareto_frontier(points)
    if not frontier or target > frontier[-1][0]:
        return None
    if target <= frontier[0][0]:
        return carried.get(frontier[0])
    for lower, upper in zip(frontier, frontier[1:]):
        if target == upper[0]:
            return carried.get(upper)
        if target < upper[0]:
            if lower not in carried or upper not in carried:
                return None
            t0, t1 = carried[lower], carried[upper]
            return t0 + (target - lower[0]) / (upper[0] - lower[0]) * (t1 - t0)
    return None
