"""The owned kind (procure/model/kinds/owned.py): its block, checks, the owned GPU-hour with the capital recovery
factor, and its what-if scaling. Figures worked by hand in the comments."""

from __future__ import annotations

import pytest
from kindrows import TASKS_PER_GPU_HOUR, costs, example_offer, problems
from pydantic import ValidationError

from procure.model.kinds.base import TermsRow
from procure.model.kinds.owned import KIND, OwnedCost, capital_recovery_factor

# capex 40,000 a GPU over 5 years at 10%: CRF = 0.1 / (1 - 1.1^-5) = 0.1 / (1 - 0.620921) = 0.263797;
# 40,000 x 0.263797 / 8,760 = 1.204553 an hour; power 1.2 kW x PUE 1.3 x 0.10 a kWh = 0.156;
# colocation 150 a kW-month x 1.2 kW / 730 = 0.246575; the hour: 1.607128
HOUR = 40000 * 0.263797 / 8760 + 1.2 * 1.3 * 0.10 + 150 * 1.2 / 730
BLOCK = {
    "capex_per_gpu": 40000.0,
    "life_years": 5.0,
    "power_kw_per_gpu": 1.2,
    "pue": 1.3,
    "electricity_kwh": 0.10,
    "colo_kw_month": 150.0,
}


def test_the_block_bounds_life_and_pue():
    assert OwnedCost(**BLOCK).life_years == 5
    with pytest.raises(ValidationError):
        OwnedCost(**{**BLOCK, "pue": 0.9})  # a PUE below 1 is not a data centre
    with pytest.raises(ValidationError):
        OwnedCost(**{**BLOCK, "life_years": 60.0})


def test_capital_recovery_factor_by_hand():
    assert float(capital_recovery_factor(0.10, 5)) == pytest.approx(0.263797, rel=1e-5)
    assert float(capital_recovery_factor(0.0, 4)) == pytest.approx(0.25)  # free capital: straight line


def test_the_owned_gpu_hour_recovers_capital_and_pays_power_and_colocation():
    out = costs(basis="owned", sla_availability=float("nan"), reliability_factor=0.99, **BLOCK)
    assert out["rent"] == pytest.approx(HOUR, rel=1e-5)
    assert out["rent"] == pytest.approx(1.607128, rel=1e-5)
    assert out["financing"] == 0.0  # the cost of capital is in the CRF already
    # availability: the factor itself (0.99), as for the plain offer: per task 1.607128 / 2,566.08
    assert out["cost_per_task"] == pytest.approx(HOUR / TASKS_PER_GPU_HOUR, rel=1e-5)


def test_checks_the_service_kind_and_the_term_against_the_life():
    offer = example_offer("own-b200-colo")
    assert problems(KIND.checks, offer) == []
    life = round(offer.pricing.owned.life_years * 12)
    wrong = offer.model_copy(
        update={"term_months": life + 1, "service": offer.service.model_copy(update={"kind": "bare_metal"})}
    )
    assert problems(KIND.checks, wrong) == [
        (("service", "kind"), "pricing.owned goes with service.kind: owned, and only with it"),
        (
            ("term_months",),
            f"an owned cluster's term is its life: {life} months (life_years x 12), or leave it out",
        ),
    ]


def test_a_what_if_price_change_scales_the_capital_only():
    pricing = example_offer("own-b200-colo").pricing
    scaled = KIND.scale_price(pricing, 0.9, None, 1.0)
    assert scaled.owned.capex_per_gpu == pytest.approx(pricing.owned.capex_per_gpu * 0.9)
    assert scaled.owned.electricity_kwh == pricing.owned.electricity_kwh


def test_its_equipment_is_the_capital_the_running_cost_and_the_life():
    """The cash flow's equipment, by hand on BLOCK with 8 GPUs at 1.1 to the workspace's currency: capital
    40,000 x 8 x 1.1 = 352,000 at signing; running a GPU-month (1.2 x 1.3 x 0.10 x 730 = 113.88 power, 150 x 1.2 = 180
    colocation) x 1.1 = 293.88 x 1.1 = 323.268; replaced after 5 x 12 = 60 months (4.5 years: 54)."""
    offer = example_offer("own-b200-colo")
    offer = offer.model_copy(
        update={"gpus": 8, "pricing": offer.pricing.model_copy(update={"owned": OwnedCost(**BLOCK)})}
    )
    bought = KIND.equipment(offer, 1.1)
    assert bought.capital == pytest.approx(352_000)
    assert bought.running_per_gpu_month == pytest.approx(323.268)
    assert bought.life_months == 60
    half = offer.pricing.model_copy(update={"owned": OwnedCost(**{**BLOCK, "life_years": 4.5})})
    assert KIND.equipment(offer.model_copy(update={"pricing": half}), 1.0).life_months == 54


def test_its_row_in_the_report_states_the_block_as_given():
    """BLOCK in words: 40,000 USD a GPU, the life, power, PUE and electricity as stated, colocation to the cent."""
    pricing = example_offer("own-b200-colo").pricing.model_copy(update={"owned": OwnedCost(**BLOCK)})
    assert pricing.kind_row("USD") == TermsRow(
        "Owned",
        "40,000 USD per GPU all-in, 5.0 years, 1.2 kW per GPU, PUE 1.3, 0.1 per kWh, colocation 150.00 per kW-month",
    )
    # neither a block nor a price per GPU-hour: no row
    assert example_offer("corvid-b200-idx").pricing.model_copy(update={"index_linked": None}).kind_row("USD") is None


def test_its_memo_price_is_the_capital_and_the_owned_hour():
    """BLOCK's 40,000 a GPU in the offer's currency and HOUR (1.607128 -> 1.61) in ours."""
    pricing = example_offer("own-b200-colo").pricing.model_copy(update={"owned": OwnedCost(**BLOCK)})
    assert KIND.memo_price(pricing, "EUR", {"rent": HOUR}, "USD") == (
        "owned: 40,000 EUR per GPU all-in, 1.61 USD per GPU-hour with power and space"
    )
