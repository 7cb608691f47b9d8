"""Pareto frontier of [interactivity, output tok/s/GPU] points and the reading at the target."""

from __future__ import annotations

import math

import pytest

from procure.model import performance
from procure.model.performance import (
    DEFAULT_INTERPOLATION,
    INTERPOLATION_METHODS,
    interpolate,
    pareto_frontier,
    throughput_at,
)

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
    assert throughput_at(CURVE, 75, "linear").throughput == pytest.approx(350)
    assert throughput_at(CURVE, 140, "linear").throughput == pytest.approx(
        300 + (140 - 100) / (150 - 100) * (100 - 300)
    )
    assert throughput_at(CURVE, 140, "linear").throughput == pytest.approx(140)
    assert throughput_at(CURVE, 75, "linear").note == "interpolated (linear) between 50 and 100 tok/s/user"


def test_interpolation_uses_the_frontier_not_dominated_points():
    # (75, 200) is dominated by (100, 300): the reading at 75 still lies on the (50,400)-(100,300) line.
    assert throughput_at(CURVE + [(75, 200)], 75, "linear").throughput == pytest.approx(350)
    assert throughput_at(CURVE + [(75, 200)], 75, "step").throughput == 300


# H200 SGLang TP8 DeepSeek-R1 8k/1k as InferenceX published it (shared reference facts): conc 4, 16,
# 64 at 91.4, 50.0 and 20.3 tok/s per user give 43.12, 93.89 and 150.98 output tok/s/GPU.
H200 = [(20.3, 150.98), (50.0, 93.89), (91.4, 43.12)]


def test_linear_overstates_the_published_h200_point_by_12_8_percent():
    # Leave out conc 16: share = (50 - 20.3) / (91.4 - 20.3) = 29.7 / 71.1 = 0.417722;
    # linear = 150.98 + 0.417722 x (43.12 - 150.98) = 150.98 - 45.0561 = 105.924, 105.924 / 93.89 = 1.1282.
    ends = [H200[0], H200[2]]
    assert throughput_at(ends, 50.0, "linear").throughput == pytest.approx(105.924, abs=1e-3)
    assert throughput_at(ends, 50.0, "linear").throughput / 93.89 - 1 == pytest.approx(0.128, abs=5e-4)
    # log: exp(ln 150.98 + 0.417722 x (ln 43.12 - ln 150.98)) = 150.98 x (43.12 / 150.98) ^ 0.417722
    # = 150.98 x 0.285601 ^ 0.417722; ln 0.285601 = -1.253160, x 0.417722 = -0.523472, e^ = 0.592460 -> 89.450
    assert throughput_at(ends, 50.0, "log").throughput == pytest.approx(89.450, abs=1e-3)
    # step: the next faster point's throughput, conc 4's 43.12: never above what is measured at or beyond the target
    assert throughput_at(ends, 50.0, "step").throughput == 43.12
    # monotone on two points has nothing to bend with: the straight line
    assert throughput_at(ends, 50.0, "monotone").throughput == pytest.approx(105.924, abs=1e-3)


def test_monotone_is_scipy_pchip_through_every_frontier_point():
    # Fritsch-Carlson by hand on (50, 400), (100, 300), (150, 100): slopes d1 = -2, d2 = -4, h = 50 both.
    # Interior derivative: weighted harmonic mean with w1 = 2h2 + h1 = 150, w2 = h2 + 2h1 = 150:
    # m1 = (w1 + w2) / (w1 / d1 + w2 / d2) = 300 / (-75 - 37.5) = -2.666667.
    # End points (three-point formula): m0 = ((2h0 + h1) d1 - h0 d2) / (h0 + h1) = (150 x -2 + 50 x 4) / 100 = -1
    # (same sign as d1, kept); m2 = ((2h1 + h0) d2 - h1 d1) / (h0 + h1) = (150 x -4 + 50 x 2) / 100 = -5.
    # Hermite on [50, 100] at 75 (t = 0.5): h00 = h01 = 0.5, h10 = 0.125, h11 = -0.125:
    # 0.5 x 400 + 0.125 x 50 x -1 + 0.5 x 300 - 0.125 x 50 x -2.666667 = 200 - 6.25 + 150 + 16.6667 = 360.4167.
    assert throughput_at(CURVE, 75, "monotone").throughput == pytest.approx(360.4167, abs=1e-3)


@pytest.mark.parametrize("method", INTERPOLATION_METHODS)
def test_every_method_agrees_on_measured_points_and_stays_between_neighbours(method):
    for x, y in CURVE:
        assert throughput_at(CURVE, x, method).throughput == y
    for target in (51, 75, 99, 101, 125, 149):
        value = throughput_at(CURVE, target, method).throughput
        lower, upper = (400, 300) if target < 100 else (300, 100)
        assert upper <= value <= lower


def test_the_default_is_log_linear_as_measured():
    # docs/interpolation.md: log-linear has the smallest unbiased leave-one-out error (median -0.9%)
    # and does not rank by sampling density; at 75 between (50, 400) and (100, 300):
    # 400 x (300 / 400) ^ 0.5 = 346.41
    assert DEFAULT_INTERPOLATION == "log"
    assert throughput_at(CURVE, 75).throughput == pytest.approx(346.4102, abs=1e-4)


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown interpolation method 'cubic'"):
        interpolate([50, 100], [400, 300], 75, "cubic")


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


# --- the workspace setting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "line", "problem"),
    [
        ("assumptions", "  interpolation: cubic\n", "assumptions.interpolation: "),
        ("policy", "  ttft_unstated: maybe\n", "policy.ttft_unstated: "),
    ],
)
def test_unknown_interpolation_or_ttft_policy_is_refused_with_file_line_and_field(
    workspace_copy, section, line, problem
):
    from tests.clihelp import assert_error, run

    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    text = config.read_text()
    config.write_text(text.replace(f"{section}:\n", f"{section}:\n{line}", 1))
    number = config.read_text().splitlines().index(line.rstrip("\n")) + 1
    stderr = assert_error(run("compare", "-w", ws, "--as-of", "2026-11-29"), f"procure.yaml:{number}: {problem}")
    assert "linear" in stderr or "pass" in stderr  # what was expected is named


def test_the_method_is_in_the_evaluation_and_moves_the_reading(workspace_copy):
    from datetime import date

    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    # bravo's reference curve: (50, 400), (100, 300), (150, 100) (tests/data/basic/performance/test-curve.csv)
    (ws / "performance" / "test-curve.csv").write_text("interactivity,output_tok_s_gpu\n50,400\n120,300\n150,100\n")
    # Throughput read as stated (every throughput factor 1), without the reading's range, to see the method alone
    config.write_text(
        config.read_text() + "  readings: false\n"
    )  # after basic's own uncertainty section (throughput as stated)
    ev = evaluate(load_workspace(ws), date(2026, 11, 29))
    assert ev.assumptions.interpolation == "log"
    # log between (50, 400) and (120, 300) at 100: 400 x 0.75 ^ (50 / 70); ln 0.75 = -0.287682, x 0.714286
    # = -0.205487, e^ = 0.814251 -> 325.700
    assert ev.offer("bravo").metrics["throughput"] == pytest.approx(325.700, abs=1e-3)
    config.write_text(config.read_text().replace("assumptions:\n", "assumptions:\n  interpolation: linear\n", 1))
    linear = evaluate(load_workspace(ws), date(2026, 11, 29))
    # linear between (50, 400) and (120, 300) at 100: 400 - 50 / 70 x 100 = 328.571
    assert linear.offer("bravo").metrics["throughput"] == pytest.approx(328.5714, abs=1e-4)
    config.write_text(config.read_text().replace("interpolation: linear", "interpolation: step", 1))
    assert (
        evaluate(load_workspace(ws), date(2026, 11, 29)).offer("bravo").metrics["throughput"] == 300
    )  # the 120 point's


def test_every_report_states_the_method(workspace_copy, tmp_path):
    from tests.clihelp import run

    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("assumptions:\n", "assumptions:\n  interpolation: log\n", 1))
    comparison, board = tmp_path / "c.html", tmp_path / "b.html"
    assert run("report", "-w", ws, "--as-of", "2026-11-29", "--format", "html", "--out", comparison).exit_code == 0
    assert (
        run("report", "--board", "-w", ws, "--as-of", "2026-11-29", "--format", "html", "--out", board).exit_code == 0
    )
    assert (
        '<td>Throughput between frontier points</td><td class="num">log-linear interpolation</td>'
        in comparison.read_text()
    )
    assert "on a log scale of speed" in board.read_text()  # the board states the method in plain words


def test_sparse_and_dense_samples_of_one_curve_rank_by_price(workspace_copy):
    """One true curve, throughput = 4,000 / (1 + x / 25)^2, measured every 10 tok/s/user for "dense" and
    only at 25, 75, 125, 175 for "sparse", which is priced 10% lower (EUR 2.70 against 3.00, same terms
    as basic's bravo). At the 100 target the truth is 4,000 / 25 = 160 (dense reads it on a point).
    Sparse, between (75, 250) and (125, 111.11), halfway:
      log:  sqrt(250 x 111.11) = 166.67 (+4.2%); step: 111.11 (-30.6%).
    Full cost per GPU-hour: rent x 1.1 USD/EUR + 0.60 serving staff + 0.05 software: dense 3.95, sparse 3.62.
      log:  sparse 3.62 / 166.67 = 0.02172 (times the reading range's mean, above 1: lower still)
            < dense 3.95 / 160 = 0.02469: the cheaper offer leads, as it should;
      step: sparse 3.62 / 111.11 = 0.03258 > dense 0.02469: the sampling, not the price, decides."""
    from datetime import date

    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    def truth(x: float) -> float:
        return 4000 / (1 + x / 25) ** 2

    ws = workspace_copy("basic")
    (ws / "performance" / "dense.csv").write_text(
        "interactivity,output_tok_s_gpu\n" + "".join(f"{x},{truth(x)!r}\n" for x in range(10, 200, 10))
    )
    (ws / "performance" / "sparse.csv").write_text(
        "interactivity,output_tok_s_gpu\n" + "".join(f"{x},{truth(x)!r}\n" for x in (25, 75, 125, 175))
    )
    bravo = (ws / "offers" / "bravo.yaml").read_text()
    (ws / "offers" / "dense.yaml").write_text(
        bravo.replace("id: bravo", "id: dense").replace("reference: test-curve", "reference: dense")
    )
    (ws / "offers" / "sparse.yaml").write_text(
        bravo.replace("id: bravo", "id: sparse")
        .replace("reference: test-curve", "reference: sparse")
        .replace("gpu_hour: 3.00", "gpu_hour: 2.70")
    )
    ev = evaluate(load_workspace(ws), date(2026, 11, 29))
    assert ev.assumptions.interpolation == "log"
    dense, sparse = ev.offer("dense"), ev.offer("sparse")
    assert dense.metrics["throughput"] == pytest.approx(160)
    assert dense.metrics["full"] == pytest.approx(3.95) and sparse.metrics["full"] == pytest.approx(3.62)
    assert sparse.metrics["throughput"] >= 166.67  # the log reading, at its range's mean (above 1)
    assert sparse.rank < dense.rank
    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("assumptions:\n", "assumptions:\n  interpolation: step\n", 1))
    step = evaluate(load_workspace(ws), date(2026, 11, 29))
    assert step.offer("sparse").metrics["throughput"] == pytest.approx(truth(125))
    assert step.offer("dense").rank < step.offer("sparse").rank


def test_a_reading_across_a_gap_wider_than_the_study_keeps_the_widest_calibrated_range():
    # A point at 1,000,000 tok/s per user read at a target of 100: g = 10,000, far beyond the widest
    # gap class of the leave-one-out study (g up to 2). The range of the truth behind the reading is that
    # of g = 2, by hand: the reading's P90 error +0.482 x sqrt 2 is the truth's P10, exp(-0.681651) = 0.505781;
    # its P10 error -0.436 x sqrt 2 the truth's P90, exp(0.616597) = 1.852613.
    low, high = performance.reading_range(999_900.0, 100.0)
    assert low == pytest.approx(0.505781, abs=1e-6)
    assert high == pytest.approx(1.852613, abs=1e-6)
    assert performance.reading_range(200.0, 100.0) == (low, high)
    # The mean factor is finite and that of g = 2 (it overflowed before).
    assert performance.reading_mean(10_000.0) == performance.reading_mean(2.0)
    assert math.isfinite(performance.reading_mean(1e300))


@pytest.mark.parametrize("g", [0.25, 1.0, 2.0])
def test_the_point_of_a_sparse_reading_is_unbiased_for_the_truth_behind_it(g):
    """A known curve read sparsely: the study's error e = ln(read / true) is a two-piece normal with its P10
    at -0.436 sqrt(g) and its P90 at +0.482 sqrt(g) (median 0). Simulated here from that statement alone
    (independently of reading_spread): readings of a true value 1 are exp(e), and the point is each
    reading x reading_mean(g). In expectation over readings the point must give back the truth: E[true /
    point] = E[exp(-e)] / reading_mean(g) = 1. Read in the wrong direction (the truth taken as exp(+e)
    above the reading) the mean factor is E[exp(e)], 1.5% (g 0.25) to 4.7% (g 2) higher."""
    import numpy as np

    rng = np.random.default_rng(5)
    z = rng.standard_normal(2_000_000)
    root = math.sqrt(g)
    e = np.where(z < 0, z * 0.436 * root / 1.2815515655446004, z * 0.482 * root / 1.2815515655446004)
    assert np.quantile(e, 0.9) == pytest.approx(0.482 * root, rel=0.01)
    truth_over_reading = np.exp(-e).mean()
    assert performance.reading_mean(g) == pytest.approx(truth_over_reading, rel=2e-3)
    assert np.exp(e).mean() > truth_over_reading * 1.01  # the old direction was biased high
