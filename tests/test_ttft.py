"""Time to first token: carried by curve points, interpolated at the target, gated by workload.max_ttft_s."""

from datetime import date

import pytest

from procure.analysis.evaluate import evaluate
from procure.io.workspace import load_workspace
from procure.model.performance import ttft_at

AS_OF = date(2026, 11, 29)


def test_ttft_interpolates_on_the_frontier():
    points = [(50, 400, 2.0), (100, 300, 1.0), (150, 100, 0.5), (100, 250, 9.0)]  # the last is dominated
    assert ttft_at(points, 100) == 1.0  # on a point
    assert ttft_at(points, 75) == pytest.approx(1.5)  # halfway between 2.0 and 1.0
    assert ttft_at(points, 40) == 2.0  # below the slowest point: its value
    assert ttft_at(points, 160) is None  # beyond the fastest point: out of reach
    assert ttft_at([(50, 400), (100, 300)], 75) is None  # no point carries a time to first token


def test_ttft_is_not_stated_where_the_frontier_point_or_segment_has_none():
    # (100, 300) carries none (an InferenceX row without median_ttft): nothing is read at it, nor
    # between it and a neighbour; the other segment ends are not bridged over it.
    points = [(50, 400, 2.0), (100, 300, None), (150, 100, 0.5)]
    assert ttft_at(points, 100) is None
    assert ttft_at(points, 75) is None and ttft_at(points, 125) is None
    assert ttft_at(points, 50) == 2.0 and ttft_at(points, 150) == 0.5
    assert ttft_at([(50, 400), (100, 300, 1.0)], 40) is None  # the slowest point states none


def with_ttft(workspace_copy, max_ttft: float):
    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    config.write_text(
        config.read_text().replace("  utilization: 0.8\n", f"  utilization: 0.8\n  max_ttft_s: {max_ttft}\n")
    )
    # bravo reads the reference curve: give it a time to first token column
    (ws / "performance" / "test-curve.csv").write_text(
        "interactivity,output_tok_s_gpu,ttft_s\n50,400,3.0\n100,300,1.6\n150,100,0.9\n"
    )
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
    assert "time to first token not stated at 100 tok/s per user (max_ttft_s 2 s)" in alpha.reasons

    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("max_ttft_s: 2.0", "max_ttft_s: 1.5"))
    strict = evaluate(load_workspace(ws), AS_OF).offer("bravo")
    assert not strict.acceptable
    assert "time to first token 1.60 s above the 1.5 s maximum" in strict.reasons


def test_points_with_a_third_value_carry_the_time_to_first_token(workspace_copy):
    ws = with_ttft(workspace_copy, 2.0)
    alpha = ws / "offers" / "alpha.yaml"
    alpha.write_text(
        alpha.read_text().replace(
            "points: [[50, 400], [100, 300], [150, 100]]", "points: [[50, 400, 2.5], [100, 300, 1.2], [150, 100, 0.8]]"
        )
    )
    record = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert record.ttft_s == 1.2 and record.acceptable


def test_unstated_ttft_passes_only_by_policy(workspace_copy):
    ws = with_ttft(workspace_copy, 2.0)
    config = ws / "procure.yaml"
    text = config.read_text()
    assert "policy:\n" in text
    config.write_text(text.replace("policy:\n", "policy:\n  ttft_unstated: pass\n", 1))
    alpha = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    gate = next(g for g in alpha.gates if g.gate == "ttft")
    assert gate.passed
    assert (
        gate.detail
        == "time to first token not stated at 100 tok/s per user (max_ttft_s 2 s); passed by policy.ttft_unstated"
    )


def test_a_curve_imported_from_a_row_without_ttft_fails_the_gate_as_not_stated(workspace_copy, tmp_path):
    import json

    from procure.io.inferencex import import_curves

    ws = with_ttft(workspace_copy, 2.0)
    row = {
        "hw": "b200",
        "framework": "x",
        "precision": "fp8",
        "isl": 8000,
        "osl": 1000,
        "conc": 4,
        "median_intvty": 100.0,
        "output_tput_per_gpu": 300.0,
    }
    source = tmp_path / "ix.json"
    source.write_text(
        json.dumps([row, {**row, "conc": 8, "median_intvty": 50.0, "output_tput_per_gpu": 400.0, "median_ttft": 1.0}])
    )
    import_curves(source, ws / "performance", 8000, 1000)
    bravo = ws / "offers" / "bravo.yaml"
    bravo.write_text(bravo.read_text().replace("reference: test-curve", "reference: b200-x-fp8"))
    record = evaluate(load_workspace(ws), AS_OF).offer("bravo")
    assert record.ttft_s is None and not record.acceptable
    assert "time to first token not stated at 100 tok/s per user (max_ttft_s 2 s)" in record.reasons
