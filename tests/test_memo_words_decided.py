"""What the board memo states is decided in analysis (procure/analysis/memo.py) and only worded in render: a plan's
cons on the options' first row, and the demand a plan-wide risk leaves unserved."""

from __future__ import annotations

from types import SimpleNamespace

from procure.analysis.memo import Fact, plan_cons, stated_shortfall
from procure.render.board_plan import PLAN_CON_WORDS


def _plan(unused: float, on_demand: float) -> SimpleNamespace:
    return SimpleNamespace(expected_unused_share=unused, pay_as_used_share=on_demand)


def test_a_share_that_would_read_zero_percent_is_not_a_con():
    # 0.4% would print as "0% of the commitment idle": not stated; 0.6% prints as 1% and is
    assert plan_cons(_plan(0.004, 0.0)) == []
    assert plan_cons(_plan(0.006, 0.25)) == [Fact("idle", 0.006), Fact("on_demand", 0.25)]
    words = [PLAN_CON_WORDS[f.name](f.value) for f in plan_cons(_plan(0.006, 0.25))]
    assert words == ["1% of the commitment idle", "25% of tasks on demand"]


def test_a_shortfall_under_half_a_unit_of_money_is_rounding_not_unserved_demand():
    assert stated_shortfall(None) is None
    assert stated_shortfall(0.0) is None
    assert stated_shortfall(0.49) is None
    assert stated_shortfall(1250.0) == 1250.0
