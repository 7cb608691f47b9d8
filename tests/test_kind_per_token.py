"""The per-token kind (procure/model/kinds/per_token.py): its block, checks, cost per task, what-if scaling and
workbook formula. Figures worked by hand in the comments (tests/kindrows.py: 8,000 input and 1,000 output tokens a
task, half the input from the prompt cache, success 0.9)."""

from __future__ import annotations

import pytest
from kindrows import costs, example_offer, problems

from procure.model.inputs import RateLimits
from procure.model.kinds.base import TermsRow
from procure.model.kinds.per_token import KIND, PerMtok

# input 1.00, cached 0.50, output 10.00 per million:
# 8,000 x (0.5 x 1.00 + 0.5 x 0.50) + 1,000 x 10.00 = 6,000 + 10,000 = 16,000 per million = 0.016 a task,
# over success 0.9: 0.0177778 per successful task
TOKEN_COST = 0.016 / 0.9


def test_checks_service_kind_cache_price_and_the_fields_only_it_may_state():
    offer = example_offer("lumen-forge-tokens")
    assert problems(KIND.checks, offer) == []
    pricing = offer.pricing.model_copy(update={"per_mtok": PerMtok(input=1.0, output=4.0, cached_input=1.5)})
    service = offer.service.model_copy(update={"kind": "managed_cluster"})
    bad = offer.model_copy(update={"pricing": pricing, "service": service})
    assert problems(KIND.checks, bad) == [
        (("service", "kind"), "per-token pricing (pricing.per_mtok) needs service.kind: managed_serving"),
        (
            ("pricing", "per_mtok", "cached_input"),
            "must not exceed the input price 1 (got 1.5): a cache hit costs less than a miss",
        ),
    ]
    gpu_hour = example_offer("northwind-b200-mc")
    limited = gpu_hour.model_copy(
        update={"service": gpu_hour.service.model_copy(update={"rate_limits": RateLimits(requests_per_minute=10)})}
    )
    assert [loc for loc, _ in problems(KIND.checks, limited)] == [("service", "rate_limits")]


def test_cost_per_task_is_the_tokens_over_the_success_rate():
    out = costs(basis="per_token", per_mtok_input=1.0, per_mtok_output=10.0, per_mtok_cached_input=0.5)
    assert out["cost_per_task"] == pytest.approx(TOKEN_COST)
    # every charge per million delivered output tokens: 0.0177778 x 0.9 x 1e6 / 1,000 = 16.00
    assert out["cost_per_mtok"] == pytest.approx(16.0)
    assert out["rent"] != out["rent"]  # no GPU-hour: NaN


def test_fixed_fees_are_spread_over_the_months_tasks():
    # 12,000 a month over 1,000,000 tasks: 0.012 a task on top of the tokens
    out = costs(
        tasks_per_month=1_000_000,
        basis="per_token",
        per_mtok_input=1.0,
        per_mtok_output=10.0,
        per_mtok_cached_input=0.5,
        fees_monthly=12_000.0,
    )
    assert out["cost_per_task"] == pytest.approx(TOKEN_COST + 0.012)
    assert out["monthly_spend"] == pytest.approx((TOKEN_COST + 0.012) * 1_000_000)


def test_a_what_if_price_change_scales_both_token_prices():
    pricing = example_offer("lumen-forge-tokens").pricing  # input 0.90, output 4.40
    scaled = KIND.scale_price(pricing, 0.5, None, 1.0)
    assert (scaled.per_mtok.input, scaled.per_mtok.output) == pytest.approx((0.45, 2.20))


def test_its_workbook_formula_is_the_token_formula_on_the_rows_cells():
    formula = KIND.workbook_cost(lambda key: f"<{key}>", lambda name: f"[{name}]")
    assert formula.startswith(
        "([input_tokens]*((1-[cached_input_share])*<per_mtok_input>+[cached_input_share]*<per_mtok_cached>)"
        "+[output_tokens]*<per_mtok_output>)*<fx>*<escalation>/1000000/([success_rate]*<quality>)"
    )
    assert "/[tasks_per_month])" in formula


def test_its_workbook_inputs_are_its_stated_prices_the_cache_hit_at_the_input_price_when_unstated():
    """Lumen Forge states 0.90 input and 4.40 output per million and no cached price: the cached input cell holds 0.90
    (docs/cost-model.md, per-token offers); stated at 0.45, it holds 0.45."""
    offer = example_offer("lumen-forge-tokens")
    assert KIND.workbook_values(offer, {}) == {"per_mtok_input": 0.90, "per_mtok_cached": 0.90, "per_mtok_output": 4.40}
    cached = offer.pricing.model_copy(update={"per_mtok": PerMtok(input=0.90, output=4.40, cached_input=0.45)})
    assert KIND.workbook_values(offer.model_copy(update={"pricing": cached}), {})["per_mtok_cached"] == 0.45
    assert [key for key, _, _ in KIND.workbook_inputs] == ["per_mtok_input", "per_mtok_cached", "per_mtok_output"]


def test_the_plan_takes_it_per_task_never_as_gpus():
    """Only the per-token kind is priced per task: the plan gives it a pay-as-used source (no GPUs, no commitment),
    the capacity gate draws no GPUs for it, and it follows demand."""
    from procure.analysis.plan.notes import follows_demand
    from procure.model.kinds import KINDS

    assert [k.name for k in KINDS if k.per_task] == ["per_token"]
    assert follows_demand(example_offer("lumen-forge-tokens"))


def test_its_row_in_the_report_states_both_token_prices():
    """The example's lumen-forge offer: 0.90 input and 4.40 output USD per million tokens."""
    pricing = example_offer("lumen-forge-tokens").pricing
    assert pricing.kind_row("USD") == TermsRow("Per million tokens", "0.90 input, 4.40 output USD")


def test_its_memo_price_is_both_token_prices():
    pricing = example_offer("lumen-forge-tokens").pricing
    assert KIND.memo_price(pricing, "USD", {}, "USD") == "0.90 input and 4.40 output USD per million tokens"
