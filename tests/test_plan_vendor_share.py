"""A vendor share the plan's figures break is said, never claimed kept: with plan.max_vendor_share 0.7 and two
on-demand offers from two vendors (5 and 6 a GPU-hour, both with room), the figures serve every task from the
cheaper, 100% of the expected tasks, and the plan says so instead of calling that offer the plan no combination
beats (the program keeps the share on its own split of the pay-as-used tasks; the figures route them cheapest first).
"""

from __future__ import annotations

from datetime import date

import pytest
from planws import config, offer, write

from procure.analysis.plan import make_plan
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


def _plan(tmp_path, share: float):  # type: ignore[no-untyped-def]
    cfg = config(plan={"max_vendor_share": share, "mip_gap": 0.0})
    offers = [
        offer("cheap", gpus=0, burst={"gpu_hour": 5.0, "max_gpus": 1000}),
        offer("dear", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    return make_plan(load_workspace(write(tmp_path, cfg, offers)), AS_OF)


def test_a_vendor_above_the_share_is_named(tmp_path):
    result = _plan(tmp_path, 0.7)
    served = {line.vendor: line.expected_tasks_share for line in result.plan}
    assert served == {"Vendor cheap": pytest.approx(1.0)}
    assert any(
        n.startswith("Vendor cheap serves 100% of the expected tasks, above plan.max_vendor_share 0.7")
        for n in result.notes
    )
    assert not any("is the plan" in n for n in result.notes)


def test_without_a_share_the_single_offer_is_the_plan(tmp_path):
    result = _plan(tmp_path, 1.0)
    assert not any("above plan.max_vendor_share" in n for n in result.notes)
    assert any("the best single offer (cheap) is the plan" in n for n in result.notes)
