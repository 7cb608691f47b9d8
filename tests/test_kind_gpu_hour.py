"""The fixed GPU-hour kind (procure/model/kinds/gpu_hour.py): what it is chosen for, its rent and cost per task,
and its what-if price scaling. Figures worked by hand in the comments (tests/kindrows.py: the plain offer)."""

from __future__ import annotations

import pytest
from kindrows import TASKS_PER_GPU_HOUR, costs, example_offer

from procure.model.kinds import GPU_HOUR, KINDS, kind_named, kind_of
from procure.model.kinds.gpu_hour import KIND


def test_a_gpu_hour_price_and_a_pure_on_demand_offer_are_the_gpu_hour_kind():
    fixed = example_offer("northwind-b200-mc")
    on_demand = example_offer("petrel-b200-ondemand")  # gpus: 0, only pricing.burst: its burst price is its price
    assert kind_of(fixed.pricing) is KIND is GPU_HOUR
    assert kind_of(on_demand.pricing) is KIND
    assert kind_named("gpu_hour") is KIND
    assert KINDS[0] is KIND  # listed first: what an offer without another kind is priced by


def test_rent_is_the_list_price_less_the_discount_times_the_escalators():
    # 4.00 x (1 - 0.10) = 3.60 today; escalators averaging 1.05 over the term: 3.60 x 1.05 = 3.78 ranked
    out = costs(gpu_hour=4.0, discount=0.10, escalation=1.05)
    assert out["list_price"] == pytest.approx(4.0)
    assert out["rent_today"] == pytest.approx(3.60)
    assert out["rent"] == pytest.approx(3.78)
    # no fees, staff, software or prepayment: full = rent; per task 3.78 / 2,566.08 = 0.00147305
    assert out["full"] == pytest.approx(3.78)
    assert out["cost_per_task"] == pytest.approx(3.78 / TASKS_PER_GPU_HOUR)
    assert out["cost_per_task"] == pytest.approx(0.00147305, rel=1e-5)


def test_the_demand_fit_bills_at_least_the_committed_gpus():
    # demand 1,000,000 tasks a month needs 1e6 / (2,566.08 x 730) = 0.5338 GPUs; 100 committed are billed,
    # fill 0.5338 / 100 = 0.005338: the month's spend is 4.00 x 100 x 730 = 292,000 whatever is used
    out = costs(tasks_per_month=1_000_000, gpu_hour=4.0)
    assert out["gpus_needed"] == pytest.approx(1e6 / (TASKS_PER_GPU_HOUR * 730))
    assert out["billed_gpus"] == pytest.approx(100)
    assert out["monthly_spend"] == pytest.approx(292_000)


def test_a_what_if_price_change_scales_the_list_price():
    offer = example_offer("northwind-b200-mc")
    scaled = KIND.scale_price(offer.pricing, 1.10, None, 1.0)
    assert scaled.gpu_hour == pytest.approx(offer.pricing.gpu_hour * 1.10)
    # a pure on-demand offer has no list price of its own: it keeps its burst price
    on_demand = example_offer("petrel-b200-ondemand").pricing
    assert KIND.scale_price(on_demand, 1.10, None, 1.0) is on_demand


def test_it_is_rented_and_has_the_workbook_gpu_hour_formula():
    assert KIND.rented  # a discount, a burst price, commit options and a billing unit go with it
    assert KIND.workbook_cost is None  # full / tasks per GPU-hour, the sheet's own formula
    assert KIND.block is None and KIND.columns == ()


def test_its_memo_price_is_the_list_price_with_its_discount_or_the_on_demand_price():
    """halvard: 6.40 USD with 5% off; brightwater (no discount): 2.95 alone; on demand only (no list price, a burst
    price of 7.10): billed as used."""
    from procure.model.inputs import Burst

    halvard = example_offer("halvard-b200-ms").pricing
    assert KIND.memo_price(halvard, "USD", {}, "USD") == "6.40 USD per GPU-hour, 5% discount"
    assert KIND.memo_price(example_offer("brightwater-b200-bm").pricing, "USD", {}, "USD") == "2.95 USD per GPU-hour"
    on_demand = halvard.model_copy(update={"gpu_hour": None, "burst": Burst(gpu_hour=7.10, max_gpus=16)})
    assert KIND.memo_price(on_demand, "EUR", {}, "USD") == "7.10 EUR per GPU-hour on demand, billed as used"
