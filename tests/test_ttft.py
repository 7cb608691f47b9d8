"""Time to first token: carried by curve points, interpolated at the target, gated by workload.max_ttft_s."""

from datetime import date

import pytest

from procure.evaluate import evaluate
from procure.performance import ttft_at
from procure.workspace import load_workspace

AS_OF = date(2026, 11, 29)


def test_ttft_interpolates_on_the_frontier():
    points = [(50, 400, 2.0), (100, 300, 1.0), (150, 100, 0.5), (100, 250, 9.0)]  # the last is dominated
    assert ttft_at(points, 100) == 1.0  # on a point
    assert ttft_at(points, 75) == pytest.approx(1.5)  # halfway between 2.0 and 1.0
    assert ttft_at(points, 40) == 2.0  # below the slowest point: its value
    assert ttft_at(points, 160) is None  # beyond the fastest point: out of reach
    assert ttft_at([(50, 400), (100, 300)], 75) is None  # no point carries a time to first token


def with_ttft(workspace_copy, max_ttft: float):
    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("  utilization: 0.8\n", f"  utilization: 0.8\n  max_ttft_s: {max_ttft}\n"))
    # bravo reads the reference curve: give it a time to first token column
    (ws / "performance" / "test-curve.csv").write_text("interactivity,output_tok_s_gpu,ttft_s\n50,400,3.0\n100,300,1.6\n150,100,0.9\n")
    return ws


def test_ttft_gate_passes_and_fails_by_the_interpolated_value(workspace_copy):
    ws = with_ttft(workspace_copy, 2.0)
    ev = evaluate(load_workspace(ws), AS_OF)
    bravo = ev.offer("bravo")
    gate = next(g for g in bravo.gates if g.gate == "ttft")
    assert gate.passed and bravo.ttft_s == 1.6
    assert gate.margin == pytest.approx(2.0 / 1.6 - 1)
    # alpha's own points carry no time to first token: it cannot show it meets the bound
    alpha = ev.offer("alpha")
    assert not alpha.acceptable
    assert "no time-to-first-token data at 100 tok/s per user (max_ttft_s 2 s)" in alpha.reasons

    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("max_ttft_s: 2.0", "max_ttft_s: 1.5"))
    strict = evaluate(load_workspace(ws), AS_OF).offer("bravo")
    assert not strict.acceptable
    assert "time to first token 1.60 s above the 1.5 s maximum" in strict.reasons


def test_points_with_a_third_value_carry_the_time_to_first_token(workspace_copy):
    ws = with_ttft(workspace_copy, 2.0)
    alpha = ws / "offers" / "alpha.yaml"
    alpha.write_text(alpha.read_text().replace("points: [[50, 400], [100, 300], [150, 100]]", "points: [[50, 400, 2.5], [100, 300, 1.2], [150, 100, 0.8]]"))
    record = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert record.ttft_s == 1.2 and record.acceptable
