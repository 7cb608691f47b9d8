"""One renewal rule: `procure cashflow` and the plan price the same renewal of the same offer alike.

A renewal repeats the offer's terms from the price the term before ended at: the k-th renewal starts at the price the
escalators reach in the month after the term, to the power k, and its own escalators run again within it. Worked by
hand on the small plan workspaces (tests/planws.py: a GPU-hour costs exactly its price, demand 100 or 200 GPUs).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from planws import config, offer, write

from procure.analysis.evaluate import evaluate
from procure.analysis.plan import make_plan
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


def workspace(root: Path, contract: dict, months: int) -> Path:
    cfg = config()
    cfg["demand"]["months"] = months
    cfg["horizon"] = {"months": months}
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, term_months=12, valid_until="2029-12-31"),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}, valid_until="2029-12-31"),
    ]
    offers[0]["contract"] = contract
    return write(root, cfg, offers)


def cash_prices(root: Path, months: int) -> list[float]:
    """The cash flow's rent per GPU-hour in months 1..months (150 GPUs billed: the expected demand of the paths 1x and
    2x of 100 GPUs' tasks, half likely each, the demand the plan is solved over)."""
    flow = evaluate(load_workspace(root), AS_OF, None, months).offer("commit").cashflow
    assert flow.months[1].gpus == pytest.approx(150)
    return [f.rent / (f.gpus * 730) for f in flow.months[1:]]


def plan_block_prices(root: Path) -> dict[int, float]:
    """The price per GPU-hour the plan costs each block of the commitment from, by its first month."""
    result = make_plan(load_workspace(root), AS_OF)
    return {x.start_month: x.expected_price for x in result.plan if x.role == "commit" and x.offer == "commit"}


def test_a_yearly_escalator_renews_alike_in_the_cash_flow_and_the_plan(tmp_path):
    # +10% a contract year on a 12-month term: 4.00 in months 1-12, the first renewal from 4.00 x 1.10 = 4.40 in
    # months 13-24, the second from 4.40 x 1.10 = 4.84 in months 25-36 (no longer the first year's 4.00 for ever)
    root = workspace(tmp_path, {"escalator": 0.10}, 36)
    assert cash_prices(root, 36) == pytest.approx([4.00] * 12 + [4.40] * 12 + [4.84] * 6 + [4.84] * 6)
    blocks = plan_block_prices(root)
    assert blocks[1] == pytest.approx(4.00)
    assert blocks[13] == pytest.approx(4.40)
    assert blocks[25] == pytest.approx(4.84)


def test_a_step_within_the_term_repeats_in_each_renewal(tmp_path):
    # +2% from the seventh month (as the example's Keel): 4.00 in months 1-6, 4.08 in 7-12; the renewal starts where
    # the term ended, 4.08 (months 13-18), and its own seventh month adds 2% again: 4.08 x 1.02 = 4.1616 (19-24).
    # The plan costs the block from its first price, 4.08, with the same step: on average (4.08 + 4.1616) / 2.
    root = workspace(tmp_path, {"escalator_schedule": [[7, 0.02]]}, 24)
    prices = cash_prices(root, 24)
    assert prices == pytest.approx([4.00] * 6 + [4.08] * 6 + [4.08] * 6 + [4.1616] * 6)
    blocks = plan_block_prices(root)
    assert blocks[13] == pytest.approx(prices[12])
    assert sum(prices[12:]) / 12 == pytest.approx((4.08 + 4.1616) / 2)


def test_renewal_at_the_list_price_restarts_the_terms(tmp_path):
    # contract.renewal_price: list: every renewal starts again at 4.00, its step from month 7 included
    root = workspace(tmp_path, {"escalator_schedule": [[7, 0.02]], "renewal_price": "list"}, 24)
    assert cash_prices(root, 24) == pytest.approx([4.00] * 6 + [4.08] * 6 + [4.00] * 6 + [4.08] * 6)
    assert plan_block_prices(root)[13] == pytest.approx(4.00)
