"""One estimate everywhere: delivered evidence moves only its own vendor, on the figure it was measured
against, and every surface starts from the same evaluated figures."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from procure.analysis.evaluate import evaluate_with_inputs, gates_of
from procure.analysis.sensitivity import sensitivity, top_offer_positions
from procure.io.workspace import load_workspace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_PARTS = ("procure.yaml", "offers", "performance", "grades", "market", "actuals", "benchmarks")


def example(tmp_path: Path) -> Path:
    """A copy of the example workspace at the repository's root."""
    target = tmp_path / "example"
    target.mkdir()
    for name in EXAMPLE_PARTS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.exists():
            shutil.copy(source, target / name)
    return target


def real_with_actuals(tmp_path: Path) -> tuple[Path, str]:
    """tests/data/real_offers with the example's delivered months filed under its first GPU-hour offer that
    ranks (the months are the example's; what matters is that they belong to one vendor)."""
    target = tmp_path / "real"
    shutil.copytree(ROOT / "tests" / "data" / "real_offers", target)
    ev, _ = evaluate_with_inputs(load_workspace(target))
    signed = next(o.id for o in ev.ranked if o.pricing_basis == "gpu_hour")
    shutil.copytree(ROOT / "actuals" / "keel-b200-mc", target / "actuals" / signed)
    return target, signed


def figures(root: Path) -> dict[str, dict]:
    ev, _ = evaluate_with_inputs(load_workspace(root))
    return {o.id: o for o in ev.offers}


# Figures measured against the leader: they move with the leader's cost, which is the signed vendor's
# own when it leads (the offer's own figures do not).
AGAINST_THE_LEADER = ("price_to_tie", "vs_leader")


def same(a: dict, b: dict) -> bool:
    """Every metric of the offer's own equal to the bit (None where a figure cannot be computed)."""
    keys = [k for k in a if k not in AGAINST_THE_LEADER]
    return a.keys() == b.keys() and all(
        (x is None and y is None) or (x is not None and y is not None and (x == y or (math.isnan(x) and math.isnan(y))))
        for x, y in ((a[k], b[k]) for k in keys)
    )


def scale_delivered_tokens(folder: Path, factor: float) -> None:
    """The signed vendor's metrics with every month's output tokens x factor (a changed delivery)."""
    path = folder / "metrics.csv"
    lines = path.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("month,"))
    column = lines[header].split(",").index("output_tokens")
    for i in range(header + 1, len(lines)):
        cells = lines[i].split(",")
        cells[column] = repr(float(cells[column]) * factor)
        lines[i] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("workspace", ["example", "real_offers"])
def test_one_vendors_actuals_leave_every_other_offer_bit_identical(tmp_path, workspace):
    if workspace == "example":
        root, signed = example(tmp_path), "keel-b200-mc"
    else:
        root, signed = real_with_actuals(tmp_path)
    with_actuals = figures(root)
    scale_delivered_tokens(root / "actuals" / signed, 0.8)  # changed
    changed = figures(root)
    shutil.rmtree(root / "actuals")  # removed
    without = figures(root)
    assert with_actuals[signed].evidence and changed[signed].evidence and not without[signed].evidence
    assert with_actuals[signed].metrics["cost_per_task"] != without[signed].metrics["cost_per_task"]
    for offer_id, record in without.items():
        if offer_id == signed:
            continue
        for other in (with_actuals, changed):
            assert same(other[offer_id].metrics, record.metrics), offer_id
            assert [g.model_dump() for g in other[offer_id].gates] == [g.model_dump() for g in record.gates], offer_id
    # The delivered ratio multiplies the promise it was measured against (the throughput evaluated without the
    # evidence: the stated reading x the point's factors). These months have no utilization telemetry, so
    # tokens per billed GPU-hour (the buyer's own traffic) leave the throughput at the promise, even when the
    # delivered tokens fall by a fifth.
    assert (
        with_actuals[signed].evidence["throughput_ratio"] is None
        and changed[signed].evidence["throughput_ratio"] is None
    )
    assert (
        with_actuals[signed].metrics["throughput"]
        == changed[signed].metrics["throughput"]
        == without[signed].metrics["throughput"]
    )


def test_the_example_reads_every_other_offer_at_its_own_point_with_actuals_present(tmp_path):
    """halvard's curve reads 300 tok/s at the target; the point takes the mean of its reference curve's factor
    (triangular 0.85 / 0.95 / 1.05: 0.95) x benchmark to production ((0.85 + 0.95 + 1.0) / 3 = 0.933333):
    300 x 0.95 x 0.933333 = 266.0, whether or not another vendor's actuals are present."""
    found = figures(example(tmp_path))
    assert found["halvard-b200-ms"].metrics["throughput"] == pytest.approx(
        300 * 0.95 * (0.85 + 0.95 + 1.0) / 3, rel=1e-9
    )


@pytest.mark.parametrize("workspace", ["example", "example without actuals", "real_offers", "real_offers with actuals"])
def test_the_sensitivity_baseline_and_whatifs_starting_point_are_the_evaluated_cost(tmp_path, workspace):
    if workspace.startswith("example"):
        root = example(tmp_path)
        if "without" in workspace:
            shutil.rmtree(root / "actuals")
    elif "with actuals" in workspace:
        root, _ = real_with_actuals(tmp_path)
    else:
        root = ROOT / "tests" / "data" / "real_offers"
    ws = load_workspace(root)
    ev, inputs = evaluate_with_inputs(ws)
    top = top_offer_positions([o.id for o in ev.ranked], inputs.offers, 5)
    from procure.analysis.scorecard import evaluation_posteriors

    result = sensitivity(
        inputs.columns,
        inputs.model,
        inputs.offers,
        inputs.currencies,
        ev.currency,
        top,
        ws.config.uncertainty,
        gates_of(ev, inputs, ws.config),
        evaluation_posteriors(ev, inputs, ws.config.uncertainty),
    )
    for offer_id, cost in result.baseline.items():  # the typical inputs, from which one input moves at a time
        assert cost == pytest.approx(ev.offer(offer_id).metrics["point_cost_per_task"], rel=1e-12), offer_id
    # whatif starts from the same evaluation: the leader's figure before a change is compare's
    from procure.analysis.whatif import Change, whatif

    leader = ev.ranked[0].id
    assert whatif(ws, leader, Change(throughput=1.0)).before.cost_per_task == pytest.approx(
        ev.offer(leader).metrics["cost_per_task"], rel=1e-12
    )


@pytest.mark.parametrize("workspace", ["example", "real_offers"])
def test_every_throughput_factor_is_shown_and_their_product_is_the_throughput_used(tmp_path, workspace):
    root = example(tmp_path) if workspace == "example" else ROOT / "tests" / "data" / "real_offers"
    ev, _ = evaluate_with_inputs(load_workspace(root))
    shown = [o for o in ev.offers if o.throughput_factors]
    assert shown and all(o.pricing_basis != "per_token" for o in shown)
    for o in shown:
        assert math.prod(f.value for f in o.throughput_factors) == pytest.approx(o.metrics["throughput"], rel=1e-12), (
            o.id
        )
        assert all(f.source for f in o.throughput_factors)


def test_grade_offer_shows_the_reading_and_each_factor_with_its_source():
    """keel: its measured curve reads 310 at the target; measured (0.95 + 1.0 + 1.03) / 3 = 0.993333, stack 1,
    production (0.85 + 0.95 + 1.0) / 3 = 0.933333, and its delivered ratio; halvard on the real market-free
    example: 300 x 0.95 x 1 x 0.933333 = 266.0 (the figure compare shows)."""
    from typer.testing import CliRunner

    from procure.cli import app

    result = CliRunner().invoke(
        app, ["grade", "--offer", "halvard-b200-ms", "--workspace", str(ROOT)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    text = result.output
    assert "throughput at the target, factor by factor" in text
    assert "300.0 tok/s/GPU" in text and "x 0.9500" in text and "x 0.9333" in text and "uncertainty.production" in text
    assert "product: 266.0 tok/s/GPU" in text


def test_the_report_appendix_lists_the_factors(tmp_path):
    from procure.render.documents import render_html

    ev, _ = evaluate_with_inputs(load_workspace(example(tmp_path)))
    charts = dict.fromkeys(
        (
            "benchmark",
            "breakdown",
            "cash",
            "cost_curve",
            "football",
            "hedge",
            "plan_frontier",
            "position",
            "ranges",
            "responsibilities",
            "throughput",
            "tornado",
        ),
        "",
    )
    html = " ".join(render_html(ev, "comparison", charts=charts).split())
    assert "Throughput at the target, factor by factor" in html
    # halvard: 300 x 0.95 x 1 x 0.933333 = 266.0
    row = html[html.index('<td class="mono">halvard-b200-ms</td><td>300.0</td>') :]
    row = row[: row.index("</tr>")]
    assert (
        "x 0.9500 reference to true (mean) (uncertainty.throughput.reference)" in row
        and "x 0.9333 benchmark to production (mean)" in row
        and "<td>266.0</td>" in row
    )


def test_a_recommended_offer_passing_a_gate_in_under_90_percent_of_draws_carries_it_as_a_named_risk(workspace_copy):
    """The tornado case with only availability drawn (triangular 0.99 / 1 / 1) against a 0.99 minimum: floaty
    (the cheapest) at an SLA of 0.995 passes at the point; it fails when f < 0.99 / 0.995, P = ((0.99 / 0.995 -
    0.99) / 0.01)^2 = 0.2475 (the triangular's CDF below its mode at the top), so it passes in 75.25% of the
    draws: a named risk in compare's lines, the summary, the report and the memo. anchor (SLA 1.0) would pass always."""
    from procure.analysis.evaluate import evaluate, verdict_lines
    from procure.render.board import knife_edge_words

    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    path.write_text(path.read_text().replace("  min_availability: 0.9\n", "  min_availability: 0.99\n"))
    text = path.read_text().split("\nuncertainty:", 1)[0]
    one = "{triangular: [1.0, 1.0, 1.0]}"
    path.write_text(
        text
        + f"\nuncertainty:\n  draws: 40000\n  throughput: {{measured: {one}, vendor_claim: {one}, reference: {one}}}\n "
        f" availability: {{triangular: [0.99, 1.0, 1.0]}}\n"
        f"  utilization: {one}\n  fte_cost: {one}\n  index: {one}\n  fx: {one}\n  production: {one}\n  stack: {one}\n  "
        f"demand: {one}\n"
    )
    floaty = root / "offers" / "floaty.yaml"
    floaty.write_text(floaty.read_text().replace("availability: 1.0", "availability: 0.995"))
    ev = evaluate(load_workspace(root))
    assert ev.summary.recommended == "floaty"
    [risk] = ev.summary.gate_risks
    passes = 1 - ((0.99 / 0.995 - 0.99) / 0.01) ** 2
    assert risk.gate == "availability" and risk.probability == pytest.approx(passes, abs=0.01)
    gate = next(g for g in ev.offer("floaty").gates if g.gate == "availability")
    assert gate.passed and gate.probability == risk.probability
    assert any(
        line.startswith("risk: Floaty Compute (floaty) passes the availability gate in only 75.")
        for line in verdict_lines(ev)
    )
    assert "Named risk: " + risk.words in knife_edge_words(ev)
    # without uncertainty the drawn figure never moves: no probability, the point decides, no risk
    path.write_text(path.read_text().replace("availability: {triangular: [0.99, 1.0, 1.0]}", f"availability: {one}"))
    quiet = evaluate(load_workspace(root))
    assert (
        quiet.summary.gate_risks == []
        and next(g for g in quiet.offer("floaty").gates if g.gate == "availability").probability is None
    )


@pytest.mark.parametrize("workspace", ["example", "example without actuals", "real_offers", "real_offers with actuals"])
def test_every_headline_lies_inside_its_own_p10_p90(tmp_path, workspace):
    """The point is the centre of its draws: with the evidence kept to its own vendor, every offer's cost per task
    (the headline) lies between its own P10 and P90, with and without actuals, on the example and the real
    market (before, with actuals present, six of the example's eleven headlines sat below their P10)."""
    from procure.analysis.evaluate import MonteCarlo, evaluate

    if workspace.startswith("example"):
        root = example(tmp_path)
        if "without" in workspace:
            shutil.rmtree(root / "actuals")
    elif "with actuals" in workspace:
        root, _ = real_with_actuals(tmp_path)
    else:
        root = ROOT / "tests" / "data" / "real_offers"
    ev = evaluate(load_workspace(root), None, MonteCarlo(draws=2000, seed=7))
    checked = [
        o
        for o in ev.offers
        if o.metrics.get("cost_per_task") is not None and o.uncertainty and o.uncertainty.p10 is not None
    ]
    assert len(checked) >= 8
    for o in checked:
        assert o.uncertainty.p10 <= o.metrics["cost_per_task"] <= o.uncertainty.p90, o.id


def test_a_gate_passed_at_the_stated_figure_fails_when_it_fails_in_most_draws(tmp_path):
    """own-b200-colo is self-operated at reliability 0.99 squared = 98.01% against the example's 98% minimum.
    Its availability is drawn as 0.9801 x f, f triangular 0.99 / 1 / 1 (mode at the top, CDF ((x - 0.99) /
    0.01)^2 below it), so it passes when f >= 0.98 / 0.9801: P = 1 - ((0.98 / 0.9801 - 0.99) / 0.01)^2 =
    1 - 0.989797^2 = 0.0203. Under policy.gate_confidence 0.5 it fails, naming the probability and the input;
    at gate_confidence 0.02 it passes. Its point availability is 0.9801 x the factor's mean (0.99 + 1 + 1) / 3
    = 0.97683."""
    root = example(tmp_path)
    ev, _ = evaluate_with_inputs(load_workspace(root))
    own = next(o for o in ev.offers if o.id == "own-b200-colo")
    gate = next(g for g in own.gates if g.gate == "availability")
    passes = 1 - ((0.98 / 0.9801 - 0.99) / 0.01) ** 2
    assert not gate.passed and not own.acceptable and gate.probability == pytest.approx(passes, abs=0.006)
    assert (
        f"passes in {gate.probability:.1%} of the draws, under policy.gate_confidence 50% (decided by the availability "
        "it delivers)" in gate.detail
    )
    assert "97.68% expected at the mean of its draws" in gate.detail and own.metrics["availability"] == pytest.approx(
        0.9801 * (0.99 + 1 + 1) / 3, rel=1e-9
    )
    path = root / "procure.yaml"
    # at a confidence three standard errors below the hand figure (sqrt(0.0203 x 0.9797 / 10,000) = 0.0014) it passes
    path.write_text(path.read_text().replace("policy:\n", "policy:\n  gate_confidence: 0.016\n", 1))
    ev, _ = evaluate_with_inputs(load_workspace(root))
    gate = next(g for g in next(o for o in ev.offers if o.id == "own-b200-colo").gates if g.gate == "availability")
    assert gate.passed and "at least policy.gate_confidence 2%" in gate.detail  # printed to the percent


def test_a_workspace_without_uncertainty_decides_its_gates_at_the_point(workspace_copy):
    """Every factor fixed at 1: the point is the stated figure (no mean moves it), no gate carries a probability
    or mentions draws, and an offer 0.01 point above the availability minimum passes as it did. floaty's cost at
    the stated figures by a second method: the cost model on the stated columns without the point factors."""
    import numpy as np

    from procure.model.costing import AVAILABILITY_POINT, UTILIZATION_POINT, cost_arrays

    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    path.write_text(path.read_text().replace("  min_availability: 0.9\n", "  min_availability: 0.99\n"))
    text = path.read_text().split("\nuncertainty:", 1)[0]
    one = "{triangular: [1.0, 1.0, 1.0]}"
    path.write_text(
        text
        + f"\nuncertainty:\n  throughput: {{measured: {one}, vendor_claim: {one}, reference: {one}}}\n  availability: "
        f"{one}\n"
        f"  utilization: {one}\n  fte_cost: {one}\n  index: {one}\n  fx: {one}\n  production: {one}\n  stack: {one}\n  "
        f"demand: {one}\n"
    )
    floaty = root / "offers" / "floaty.yaml"
    floaty.write_text(floaty.read_text().replace("availability: 1.0", "availability: 0.9901"))
    ev, inputs = evaluate_with_inputs(load_workspace(root))
    for o in ev.offers:
        for g in o.gates:
            assert g.probability is None and "draws" not in g.detail, (o.id, g.detail)
    gate = next(g for g in ev.offer("floaty").gates if g.gate == "availability")
    assert gate.passed and ev.offer("floaty").metrics["availability"] == pytest.approx(0.9901)
    assert set(inputs.columns[AVAILABILITY_POINT]) == {1.0} and set(inputs.columns[UTILIZATION_POINT]) == {1.0}
    stated = {k: v for k, v in inputs.columns.items() if k not in (AVAILABILITY_POINT, UTILIZATION_POINT)}
    i = [o.id for o in inputs.offers].index("floaty")
    assert ev.offer("floaty").metrics["cost_per_task"] == pytest.approx(
        float(np.asarray(cost_arrays(stated, inputs.model)["cost_per_task"])[i]), rel=1e-12
    )


@pytest.mark.parametrize(
    ("bounds", "cap"),
    [
        ((0.85, 1.0, 1.1), 1.0),
        ((0.85, 1.0, 1.1), 0.9),
        ((0.85, 1.0, 1.1), 0.8),
        ((0.85, 1.0, 1.1), 1.25),
        ((0.99, 1.0, 1.0), 1 / 0.9801),
        ((0.9, 0.9, 1.2), 1.0),
        ((0.9, 1.2, 1.2), 0.95),
    ],
)
def test_the_point_takes_a_capped_factor_at_the_mean_of_its_capped_draws(bounds, cap):
    """Availability and utilization are at most 1, so the draws cap u x f at 1 and their mean is E[min(1, u x f)],
    not min(1, u x E[f]). By hand for utilization 1 with the default triangular 0.85 / 1 / 1.1: E[f] = 0.983333 less
    E[max(f - 1, 0)] = integral from 1 to 1.1 of (x - 1) x 80 (1.1 - x) dx = 80 x 0.1^3 / 6 = 0.013333: 0.97. Here by a
    second method: the midpoint rule on the triangular density, 200,000 slices."""
    import numpy as np

    from procure.model.inputs import Distribution

    low, mode, high = bounds
    x = low + (np.arange(200_000) + 0.5) * (high - low) / 200_000
    density = np.where(
        x < mode,
        2 * (x - low) / ((high - low) * max(mode - low, 1e-300)),
        2 * (high - x) / ((high - low) * max(high - mode, 1e-300)),
    )
    integral = float(np.sum(np.minimum(x, cap) * density) * (high - low) / 200_000)
    assert Distribution(triangular=bounds).capped_mean(cap) == pytest.approx(integral, abs=1e-7)
    if bounds == (0.85, 1.0, 1.1) and cap == 1.0:
        assert Distribution(triangular=bounds).capped_mean(cap) == pytest.approx(0.97, abs=1e-12)
    assert Distribution(uniform=(low, high)).capped_mean(cap) == pytest.approx(
        float(np.mean(np.minimum(x, cap))), abs=1e-7
    )
