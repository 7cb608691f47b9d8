"""Throughput at the workload's interactivity, read off the Pareto frontier of measured points.

InferenceX draws, per hardware and serving stack, an "upper-left" roofline: the points that no other
point beats on both interactivity (output tok/s per user) and throughput (output tok/s per GPU).
A buyer's question is "how much output does one GPU give while every user still sees the target
speed?", which is that frontier read at the target.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
    """The frontier read at a target interactivity; throughput None when the target is out of reach.

    `gap` is the width (tok/s per user) of the frontier gap the target was read in, None on a
    measured point or outside the frontier; `low` and `high` are the reading's P10 and P90 as factors
    on it (1 on a measured point), from `reading_range`."""

    throughput: float | None
    reachable: bool
    max_interactivity: float
    note: str
    gap: float | None = None
    low: float = 1.0
    high: float = 1.0
    target: float = 0.0

    @property
    def gap_share(self) -> float:
        """The gap as a share of the target, when the reading carries a range (0 otherwise)."""
        return self.gap / self.target if self.gap is not None and self.target > 0 and self.high > 1.0 else 0.0

    @property
    def wide_gap(self) -> bool:
        """The target lies in a gap between measured points wider than half the target."""
        return self.gap is not None and self.gap > WIDE_GAP_SHARE * self.target


# How throughput is read between two frontier points (`assumptions.interpolation`). Throughput falls
# convexly with interactivity, so a straight line between two points overstates what lies between
# them; docs/interpolation.md measures each method on real InferenceX curves and picks the default.
INTERPOLATION_METHODS: tuple[str, ...] = ("linear", "log", "step", "monotone")
DEFAULT_INTERPOLATION = "log"  # models.Assumptions.interpolation's default

# The range of a reading between points, calibrated on the leave-one-out errors of log-linear reading
# on real InferenceX curves (docs/interpolation.md, benchmarks/interpolation_loo.py --ranges): with
# g = gap / target, ln(reading / measured) has its P10 at -RANGE_LOW x sqrt(g) and its P90 at
# +RANGE_HIGH x sqrt(g): the truth behind a reading, ln(true / read), is its mirror image (289 points; 80% inside in
# each gap class: 75% below g = 0.5, 80% in 0.5-1,
# 82% in 1-2). A gap wider than WIDE_GAP_SHARE of the target is flagged on the offer.
RANGE_LOW = 0.436
RANGE_HIGH = 0.482
WIDE_GAP_SHARE = 0.5
# The widest gap class the study holds (g up to 2): a reading across a wider gap carries the range at
# g = 2, not one extrapolated past the evidence (which would grow without bound: a point at 1,000,000
# tok/s per user read at a target of 100 gave g = 10,000 and an overflowing mean); such a target is
# flagged as a wide gap anyway ("measure at the target").
MAX_GAP_SHARE = 2.0


Z90 = 1.2815515655446004  # the standard normal's 90th percentile


def reading_range(gap: float, target: float) -> tuple[float, float]:
    """(P10, P90) of the true throughput behind a reading in a frontier gap of `gap` tok/s per user at
    `target`, as factors on the reading. The study measures ln(read / measured): its P90 (a reading
    RANGE_HIGH above the truth) is the truth's P10 below the reading, and its P10 the truth's P90."""
    if gap <= 0 or target <= 0:
        return 1.0, 1.0
    root = math.sqrt(min(gap / target, MAX_GAP_SHARE))
    return math.exp(-RANGE_HIGH * root), math.exp(RANGE_LOW * root)


def reading_spread(gap_share: float) -> tuple[float, float]:
    """The scales of ln(true / read) below and above 0 for a reading in a gap of `gap_share` x the
    target: a two-piece normal whose P10 and P90 are reading_range's ends and whose median is 0
    (ln(true / read) = -ln(read / measured), so the study's upper tail is the truth's lower one)."""
    root = math.sqrt(min(max(gap_share, 0.0), MAX_GAP_SHARE))
    return RANGE_HIGH * root / Z90, RANGE_LOW * root / Z90


def reading_mean(gap_share: float) -> float:
    """E[true / read] under reading_spread: e^(s^2/2) Phi(s) above plus e^(r^2/2) Phi(-r) below (1 on a point)."""
    below, above = reading_spread(gap_share)

    def phi(x: float) -> float:
        return 0.5 * (1 + math.erf(x / math.sqrt(2)))

    return math.exp(above**2 / 2) * phi(above) + math.exp(below**2 / 2) * phi(-below)


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


FRONTIER_STEPS = 24  # points a drawn frontier line takes between two measured speeds


def frontier_line(
    points: Iterable[Sequence[float]], method: str = DEFAULT_INTERPOLATION, steps: int = FRONTIER_STEPS
) -> tuple[list[float], list[float]]:
    """The frontier as the cost model reads it between points (`interpolate` by `method`), sampled `steps` times
    between each two measured speeds and through each of them: what a chart draws, so the line a reader sees at the
    target is the figure the costs use."""
    frontier = pareto_frontier(points)
    fx = [p[0] for p in frontier]
    fy = [p[1] for p in frontier]
    xs, ys = [fx[0]], [fy[0]]
    for left, right in zip(fx, fx[1:]):
        for k in range(1, steps + 1):
            x = left + (right - left) * k / steps
            xs.append(x)
            ys.append(interpolate(fx, fy, x, method))
    return xs, ys


def throughput_at(
    points: Iterable[Sequence[float]], target: float, method: str = DEFAULT_INTERPOLATION
) -> ThroughputReading:
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
    gap = xs[i] - xs[i - 1]
    # The range is calibrated on log-linear readings; the other methods are a deliberate choice whose
    # own bias the study shows (step: a floor, linear and monotone: above the curve), read without one.
    low, high = reading_range(gap, target) if method == "log" else (1.0, 1.0)
    note = f"interpolated ({method}) between {xs[i - 1]:g} and {xs[i]:g} tok/s/user"
    return ThroughputReading(value, True, top, note, gap=gap, low=low, high=high, target=target)


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
