"""The throughput frontiers the comparison report draws: each distinct curve of the offers (an offer's own points, or
its reference curve's), sampled as the cost model reads it between measured points
(procure.model.performance.frontier_line), so the line a reader sees at the target is the figure the costs use. The
chart (render/charts.py) draws these lines; it interpolates nothing itself."""

from __future__ import annotations

from collections.abc import Iterable

from procure.analysis.record import OfferRecord

Curve = tuple[tuple[float, ...], ...]  # a curve's measured points, as an offer record carries them


def frontier_lines(offers: Iterable[OfferRecord], interpolation: str) -> dict[Curve, tuple[list[float], list[float]]]:
    """Each distinct curve of `offers` with performance points: the speeds per user along it and the throughput per
    GPU read there, by `interpolation` (assumptions.interpolation)."""
    from procure.model.performance import frontier_line

    lines: dict[Curve, tuple[list[float], list[float]]] = {}
    for offer in offers:
        points = tuple(map(tuple, offer.performance_points or ()))
        if points and points not in lines:
            lines[points] = frontier_line(points, interpolation)
    return lines
