"""Pareto frontier of [interactivity, output tok/s/GPU] points and the reading at the target."""

from __future__ import annotations

import pytest

from procure.performance import pareto_frontier, throughput_at

CURVE = [(50, 400), (100, 300), (150, 100)]


# --- frontier -------------------------------------------------------------------------------------


def test_frontier_keeps_non_dominated_points_by_rising_interactivity():
    assert pareto_frontier([(150, 100), (50, 400), (100, 300)]) == [(50, 400), (100, 300), (150, 100)]


def test_frontier_drops_dominated_points():
    # (80, 250) is beaten on both axes by (100, 300); (120, 50) by (150, 100).
    assert pareto_frontier(CURVE + [(80, 250), (120, 50)]) == CURVE


def test_frontier_drops_weakly_dominated_points():
    # Same interactivity, less throughput; same throughput, less interactivity.
    assert pareto_frontier(CURVE + [(100, 250), (70, 300)]) == CURVE


def test_frontier_keeps_duplicates_once():
    assert pareto_frontier(CURVE + [(100, 300), (100.0, 300.0)]) == CURVE


def test_frontier_of_a_single_point():
    assert pareto_frontier([(100, 300)]) == [(100.0, 300.0)]


def test_frontier_of_nothing():
    assert pareto_frontier([]) == []


# --- reading at the target ------------------------------------------------------------------------


@pytest.mark.parametrize(("target", "expected"), [(50, 400), (100, 300), (150, 100)])
def test_target_exactly_on_a_point(target, expected):
    reading = throughput_at(CURVE, target)
    assert reading.reachable
    assert reading.throughput == expected
    assert reading.note == "at a measured point"


def test_target_exactly_on_a_point_with_a_fractional_throughput():
    assert throughput_at([(50, 420), (100, 300), (150, 120.3)], 150).throughput == 120.3


def test_target_between_points_interpolates_linearly():
    # Halfway between (50, 400) and (100, 300): 350; 80% of the way from (100, 300) to (150, 100): 140.
    assert throughput_at(CURVE, 75).throughput == pytest.approx(350)
    assert throughput_at(CURVE, 140).throughput == pytest.approx(300 + (140 - 100) / (150 - 100) * (100 - 300))
    assert throughput_at(CURVE, 140).throughput == pytest.approx(140)


def test_interpolation_uses_the_frontier_not_dominated_points():
    # (75, 200) is dominated by (100, 300): the reading at 75 still lies on the (50,400)-(100,300) line.
    assert throughput_at(CURVE + [(75, 200)], 75).throughput == pytest.approx(350)


def test_target_below_the_slowest_point_uses_its_throughput():
    reading = throughput_at(CURVE, 20)
    assert reading.reachable
    assert reading.throughput == 400


def test_target_above_the_fastest_point_is_unreachable():
    reading = throughput_at(CURVE, 151)
    assert not reading.reachable
    assert reading.throughput is None
    assert reading.max_interactivity == 150
    assert "above the fastest point (150)" in reading.note


def test_single_point_curve():
    assert throughput_at([(100, 300)], 100).throughput == 300
    assert throughput_at([(100, 300)], 60).throughput == 300
    assert throughput_at([(100, 300)], 101).throughput is None


def test_no_points():
    reading = throughput_at([], 100)
    assert reading.throughput is None
    assert not reading.reachable
