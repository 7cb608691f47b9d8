"""Expected means expected: every offer's headline cost per successful task is the mean of its drawn costs, not the
cost at the typical inputs. Cost per task goes as one over throughput and committed GPUs idle in low-demand draws,
so the mean lies above the point; ranking on the point favoured GPU-hour offers over token APIs by that gap.

The check is a second estimate: the Monte Carlo run with another seed and four times the draws (its own code path,
`uncertainty.monte_carlo`, not the evaluation's), each headline within five standard errors of the difference of two
independent means."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import yaml

from procure.analysis.evaluate import MonteCarlo, evaluate
from procure.io.workspace import load_workspace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_PARTS = ("procure.yaml", "offers", "performance", "grades", "market", "actuals")
HEADLINE_DRAWS = 10_000  # procure.yaml's uncertainty.draws default (model/inputs.py UncertaintyConfig)
CHECK_DRAWS, CHECK_SEED = 40_000, 123
P10_P90_IN_SDS = 2 * 1.2816  # a normal's P10 to P90 in standard deviations: the draws' sd from their spread


def example(tmp_path: Path, actuals: bool = True) -> Path:
    target = tmp_path / "example"
    target.mkdir()
    for name in EXAMPLE_PARTS:
        if name == "actuals" and not actuals:
            continue
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.exists():
            shutil.copy(source, target / name)
    return target


def workspace_root(tmp_path: Path, which: str) -> Path:
    if which == "real_offers":
        return ROOT / "tests" / "data" / "real_offers"
    return example(tmp_path, actuals=which == "example")


def tolerance(check) -> float:
    """Five standard errors of the difference between the headline's mean and the check's, the draws' sd taken
    from the check's P10-P90 (the costs are near normal over most of their range; five errors cover the rest)."""
    sd = (check.p90 - check.p10) / P10_P90_IN_SDS
    return 5 * sd * math.sqrt(1 / HEADLINE_DRAWS + 1 / CHECK_DRAWS) + 1e-12


@pytest.mark.parametrize("which", ["example", "example without actuals", "real_offers"])
def test_every_headline_is_the_mean_of_its_draws(tmp_path, which):
    root = workspace_root(tmp_path, which)
    ws = load_workspace(root)
    headline = evaluate(ws)
    check = evaluate(ws, None, MonteCarlo(draws=CHECK_DRAWS, seed=CHECK_SEED))
    checked = apart = 0
    for o in headline.offers:
        drawn = check.offer(o.id).uncertainty
        cost = o.metrics.get("cost_per_task")
        if cost is None or drawn is None or drawn.mean is None or drawn.p10 is None:
            continue
        checked += 1
        assert cost == pytest.approx(drawn.mean, abs=tolerance(drawn)), o.id
        # the cost at the typical inputs is kept beside it, and is what the headline used to be
        point = o.metrics["point_cost_per_task"]
        assert point is not None and o.metrics["expected_to_point_ratio"] == pytest.approx(cost / point, rel=1e-12)
        apart += abs(point - drawn.mean) > tolerance(drawn)
    assert checked >= 7
    # the check can fail: on each workspace some offer's cost at the typical inputs is not its mean
    assert apart >= 1


def test_the_mean_lies_above_the_point_where_costs_go_as_one_over_throughput(tmp_path):
    """E[1/X] > 1/E[X] (Jensen): a GPU-hour offer whose throughput is drawn costs more on average than at its
    typical throughput; on the real market every GPU-hour offer's mean is above its point."""
    ev = evaluate(load_workspace(workspace_root(tmp_path, "real_offers")))
    gpu_hour = [o for o in ev.offers if o.pricing_basis == "gpu_hour" and o.metrics.get("cost_per_task")]
    assert len(gpu_hour) >= 4
    for o in gpu_hour:
        assert o.metrics["cost_per_task"] > o.metrics["point_cost_per_task"], o.id


def test_a_token_offer_and_a_gpu_hour_offer_with_the_same_mean_tie(tmp_path):
    """Lumen Forge's token price set so that its cost per task (fixed: no fees, no staff of ours) is Keel's mean cost
    as a second Monte Carlo estimates it: the two tie within sampling error, while Keel's cost at its typical inputs
    sits several standard errors below (ranked on it, Keel would lead by that gap)."""
    root = example(tmp_path, actuals=False)
    keel = evaluate(load_workspace(root), None, MonteCarlo(draws=CHECK_DRAWS, seed=CHECK_SEED)).offer("keel-b200-mc")
    target = keel.uncertainty.mean
    path = root / "offers" / "lumen-forge-tokens.yaml"
    offer = yaml.safe_load(path.read_text())
    offer["pricing"]["fees"] = []
    offer["responsibilities"] = {job: "provider" for job in offer["responsibilities"]}
    # cost per task = (8,192 x input + 1,024 x output) / 1e6 / (0.97 x 0.98): at input 0.30, the output price that
    # makes it `target`
    success = 0.97 * 0.98
    offer["pricing"]["per_mtok"] = {"input": 0.30, "output": (target * success * 1e6 - 8192 * 0.30) / 1024}
    path.write_text(yaml.safe_dump(offer, sort_keys=False))
    ev = evaluate(load_workspace(root))
    lumen, keel_now = ev.offer("lumen-forge-tokens"), ev.offer("keel-b200-mc")
    assert lumen.metrics["cost_per_task"] == pytest.approx(target, rel=1e-9)  # the hand formula above
    assert lumen.metrics["point_cost_per_task"] == pytest.approx(target, rel=1e-9)  # nothing drawn moves it
    allowed = tolerance(keel.uncertainty)
    assert keel_now.metrics["cost_per_task"] == pytest.approx(lumen.metrics["cost_per_task"], abs=allowed)
    assert lumen.metrics["cost_per_task"] - keel_now.metrics["point_cost_per_task"] > allowed


def test_no_uncertainty_leaves_the_point_as_it_was(tmp_path):
    """With every factor fixed the draws are the point itself: the headline equals the cost at the typical inputs
    to the bit, and nothing is drawn."""
    root = ROOT / "tests" / "data" / "uncertainty_zero"
    ev = evaluate(load_workspace(root))
    costed = [o for o in ev.offers if o.metrics.get("cost_per_task") is not None]
    assert costed
    for o in costed:
        assert o.metrics["cost_per_task"] == o.metrics["point_cost_per_task"]
        assert o.metrics["expected_to_point_ratio"] == 1.0
