"""`diff` explains each moved offer: the input figures that changed (old -> new) and the share of
the move in cost per task each explains; the shares add up to the whole move."""

from __future__ import annotations

import json

import pytest
from clihelp import AS_OF, edit, run


@pytest.fixture
def two_runs(workspace_copy):
    """basic (alpha at 4.00 USD per GPU-hour, no prepayment, no demand: fill 1), saved; then changed."""
    ws = workspace_copy("basic")
    assert run("evaluate", "--save", "--as-of", AS_OF, "-w", ws).exit_code == 0
    return ws


def alpha_move(ws):
    assert run("evaluate", "--save", "--as-of", AS_OF, "-w", ws).exit_code == 0
    result = run("diff", "-f", "json", "-w", ws)
    assert result.exit_code == 0, result.stderr
    return next(o for o in json.loads(result.stdout)["offers"] if o["id"] == "alpha")


def test_a_price_rise_is_explained_by_the_price(two_runs):
    edit(two_runs, "offers/alpha.yaml", "gpu_hour: 4.00", "gpu_hour: 4.40")
    alpha = alpha_move(two_runs)
    # only the rent moved (no prepayment, no fee depending on it): the list price explains it all
    assert [(d["field"], d["before"], d["after"]) for d in alpha["explained_by"]] == [("metrics.list_price", 4.0, 4.4)]
    assert alpha["explained_by"][0]["share"] == pytest.approx(1.0)
    # the whole move: 0.40 more per GPU-hour over the same successful tasks per GPU-hour
    assert alpha["explained_by"][0]["contribution"] == pytest.approx(alpha["cost_change"])
    table = run("diff", "-w", two_runs)
    assert "alpha: cost per 1,000 tasks" in table.stdout and "list price/GPU-h 4 -> 4.4 (100%)" in table.stdout


def alpha_metrics(ws):
    doc = json.loads(run("compare", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    return next(o for o in doc["offers"] if o["id"] == "alpha")["metrics"]


def test_a_price_and_a_throughput_change_share_the_move(two_runs):
    before = alpha_metrics(two_runs)
    tasks_before = before["successful_tasks_per_gpu_hour"]
    edit(two_runs, "offers/alpha.yaml", "gpu_hour: 4.00", "gpu_hour: 4.40")
    edit(two_runs, "offers/alpha.yaml", "[100, 300]", "[100, 360]")  # throughput at the target +20%
    after = alpha_metrics(two_runs)
    alpha = alpha_move(two_runs)
    drivers = {d["field"]: d for d in alpha["explained_by"]}
    assert set(drivers) == {"metrics.list_price", "metrics.throughput"}
    assert (drivers["metrics.throughput"]["before"], drivers["metrics.throughput"]["after"]) == (300, 360)
    # by hand: 0.40 more per GPU-hour over the mean of 1/tasks before and after (x 1.2 with the throughput), at the
    # typical inputs; the headline (the mean of the draws) moved by a different amount, and each part with it
    scale = alpha["cost_change"] / (after["point_cost_per_task"] - before["point_cost_per_task"])
    price = 0.40 * (1 / tasks_before + 1 / (1.2 * tasks_before)) / 2 * scale
    assert drivers["metrics.list_price"]["contribution"] == pytest.approx(price, rel=1e-9)
    # the rest of the move is the throughput's: the parts add up to the move, the shares to 1
    assert drivers["metrics.throughput"]["contribution"] == pytest.approx(alpha["cost_change"] - price, rel=1e-9)
    assert sum(d["share"] for d in drivers.values()) == pytest.approx(1.0)
    assert drivers["metrics.throughput"]["share"] > 1  # it more than undoes the price rise: the cost fell
    assert alpha["cost_change"] < 0


def test_an_offer_that_only_changed_rank_is_said_to_have_been_passed(two_runs):
    # bravo (3.00, first) becomes dearer than alpha: alpha's rank moves, its own cost does not
    edit(two_runs, "offers/bravo.yaml", "gpu_hour: 3.00", "gpu_hour: 9.00")
    assert run("evaluate", "--save", "--as-of", AS_OF, "-w", two_runs).exit_code == 0
    text = run("diff", "-w", two_runs).stdout
    assert "alpha: rank 2 -> 1 with the same cost per task: other offers moved" in text
    assert "bravo: cost per 1,000 tasks" in text and "list price/GPU-h 3.3 -> 9.9 (100%)" in text  # EUR at 1.10 USD
