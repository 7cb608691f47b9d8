"""The index-linked kind (procure/model/kinds/index_linked.py): its block, checks, rent, what-if scaling and its
columns. Figures worked by hand in the comments (tests/kindrows.py: the plain offer)."""

from __future__ import annotations

import pytest
from kindrows import TASKS_PER_GPU_HOUR, costs, example_offer, problems
from pydantic import ValidationError

from procure.model.kinds.base import TermsRow
from procure.model.kinds.index_linked import KIND, IndexLinked, index_linked_rent


def test_the_block_takes_a_spread_and_an_optional_floor_and_cap():
    assert IndexLinked(spread=-0.30).floor is None
    with pytest.raises(ValidationError):
        IndexLinked(spread=0.1, cap=0.0)  # a cap must be positive
    with pytest.raises(ValidationError):
        IndexLinked(spread=0.1, ceiling=5.0)  # an unknown key is an error, not ignored


def test_checks_a_floor_above_the_cap_and_a_missing_index():
    offer = example_offer("corvid-b200-idx")
    assert problems(KIND.checks, offer) == []
    pricing = offer.pricing.model_copy(update={"index_linked": IndexLinked(spread=0.2, floor=6.0, cap=5.0)})
    bad = offer.model_copy(update={"pricing": pricing})
    assert problems(KIND.checks, bad, has_index=False) == [
        (("pricing", "index_linked", "floor"), "floor 6.0 is above cap 5.0"),
        (("pricing", "index_linked"), "index-linked pricing needs market/index.csv (date, price)"),
    ]
    # a fixed-price offer is none of its business
    assert problems(KIND.checks, example_offer("northwind-b200-mc"), has_index=False) == []


def test_one_rent_is_the_clamped_index_plus_spread_less_the_discount():
    # index 3.00 + spread 0.50 = 3.50, inside [3.00, 6.00]; less 10%: 3.15
    assert index_linked_rent(3.0, 0.5, 3.0, 6.0, 1.0, 0.10) == pytest.approx(3.15)
    # below the floor 4.00: the floor; the offer in EUR at 1.10 USD: spread and floor x 1.10 -> 4.40
    assert index_linked_rent(3.0, 0.5, 4.0, None, 1.10, 0.0) == pytest.approx(4.40)
    # above the cap 3.20: the cap
    assert index_linked_rent(3.0, 0.5, None, 3.2, 1.0, 0.0) == pytest.approx(3.2)


def test_the_cost_model_prices_it_at_the_clamped_index_with_the_rent_at_its_cap():
    # clamp(3.00 + 0.50, 4.00, 6.00) = 4.00 list; less 5%: 3.80; at the cap 6.00 x 0.95 = 5.70
    out = costs(basis="index", index_level=3.0, spread=0.5, floor=4.0, cap=6.0, discount=0.05)
    assert out["list_price"] == pytest.approx(4.0)
    assert out["rent"] == pytest.approx(3.80)
    assert out["rent_at_cap"] == pytest.approx(5.70)
    assert out["cost_per_task"] == pytest.approx(3.80 / TASKS_PER_GPU_HOUR)


def test_its_cost_columns_carry_the_index_and_its_terms():
    offer = example_offer("corvid-b200-idx")
    linked = offer.pricing.index_linked
    columns = KIND.cost_columns(offer, 3.25)
    assert columns["index_level"] == 3.25 and columns["spread"] == linked.spread
    assert set(columns) == set(KIND.columns)


def test_a_what_if_price_change_moves_the_rent_by_the_same_share():
    # index 3.00 (workspace currency, fx 1) + spread 0.50 = 3.50; x 1.20 = 4.20, so the spread becomes
    # 0.50 + 0.20 x 3.50 = 1.20
    offer = example_offer("corvid-b200-idx")
    pricing = offer.pricing.model_copy(update={"index_linked": IndexLinked(spread=0.5)})
    scaled = KIND.scale_price(pricing, 1.20, 3.0, 1.0)
    assert scaled.index_linked.spread == pytest.approx(1.20)
    # without an index level the price cannot be moved
    assert KIND.scale_price(pricing, 1.20, None, 1.0) is pricing


def test_its_rent_at_an_index_level_is_the_clamped_link_less_the_discount():
    """What the cash flow and the hedge ask the kind in the term and at renewal. Spread 0.5, floor 3, cap 6, discount
    10%, fx 1: at 4.0, (4.0 + 0.5) x 0.9 = 4.05; at 7.0, the cap 6 x 0.9 = 5.40; moved by 0.2 (the price to tie, in
    the workspace's currency) at fx 1.1: (4.0 + 0.5 x 1.1 + 0.2) x 0.9 = 4.275."""
    from procure.model.inputs import Pricing

    pricing = Pricing(currency="USD", discount=0.10, index_linked=IndexLinked(spread=0.5, floor=3.0, cap=6.0))
    assert KIND.index_rent(pricing, 4.0, 1.0) == pytest.approx(4.05)
    assert KIND.index_rent(pricing, 7.0, 1.0) == pytest.approx(5.40)
    assert KIND.index_rent(pricing, 4.0, 1.1, 0.2) == pytest.approx(4.275)
    # only this kind's price follows the index by contract
    from procure.model.kinds import KINDS

    assert [k.name for k in KINDS if k.index_rent is not None] == ["index"]


def test_its_row_in_the_report_states_the_spread_floor_and_cap():
    """The example's corvid offer: spread -0.30, floor 3.50, cap 6.00 (USD); without a floor or cap only the spread."""
    pricing = example_offer("corvid-b200-idx").pricing
    assert pricing.kind_row("USD") == TermsRow("Index-linked", "index -0.30, floor 3.50, cap 6.00 USD")
    bare = pricing.model_copy(update={"index_linked": IndexLinked(spread=0.25)})
    assert bare.kind_row("EUR") == TermsRow("Index-linked", "index +0.25 EUR")


def test_its_memo_price_is_the_link_and_todays_rent():
    """corvid: index -0.30 USD, floor 3.50, cap 6.00; today's rent as the cost model found it (4.7349 -> 4.73)."""
    pricing = example_offer("corvid-b200-idx").pricing
    assert KIND.memo_price(pricing, "USD", {"rent_today": 4.7349, "rent": 9.0}, "USD") == (
        "index -0.30 USD per GPU-hour (floor 3.50, cap 6.00), 4.73 today"
    )
    bare = pricing.model_copy(update={"index_linked": IndexLinked(spread=0.25)})
    assert KIND.memo_price(bare, "USD", {"rent": 5.0}, "USD") == "index +0.25 USD per GPU-hour, 5.00 today"
