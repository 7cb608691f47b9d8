"""Managed serving billed by tokens (`pricing.per_mtok`): the tokens a task uses at the prices per million, over the
share of tasks that succeed, plus fixed fees and staff spread over the month's tasks (docs/cost-model.md,
"Per-token offers"). It has no GPU-hour: no GPU commitment, throughput or demand fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from procure.model.fields import NonNegative, Positive, Strict
from procure.model.kinds.base import (
    Add,
    Columns,
    Figure,
    FormulaInputs,
    FormulaLine,
    FormulaLines,
    Kind,
    Parts,
    TaskCosts,
    TermsRow,
    times_fx,
)

if TYPE_CHECKING:
    from procure.model.inputs import Offer, Pricing, Workload


class PerMtok(Strict):
    """Managed serving billed by tokens, per million."""

    input: NonNegative
    output: Positive
    cached_input: NonNegative | None = Field(
        None, description="per million input tokens served from the prompt cache (default: the input price)"
    )


def checks(offer: Offer, add: Add, has_index: bool) -> None:
    """Per-token pricing is managed serving, a cache hit costs less than a miss, and only a per-token offer states
    its speed and capacity (a GPU-hour offer's come from its points and GPUs)."""
    per_mtok = offer.pricing.per_mtok
    if per_mtok is not None and offer.service.kind != "managed_serving":
        add(("service", "kind"), "per-token pricing (pricing.per_mtok) needs service.kind: managed_serving")
    if per_mtok is not None and per_mtok.cached_input is not None and per_mtok.cached_input > per_mtok.input:
        add(
            ("pricing", "per_mtok", "cached_input"),
            f"must not exceed the input price {per_mtok.input:g} (got {per_mtok.cached_input:g}): "
            "a cache hit costs less than a miss",
        )
    if per_mtok is None:
        for loc, value in (
            (("performance", "interactivity"), offer.performance.interactivity),
            (("performance", "ttft_s"), offer.performance.ttft_s),
            (("service", "rate_limits"), offer.service.rate_limits),
        ):
            if value is not None:
                add(
                    loc,
                    "only for per-token offers (pricing.per_mtok); a GPU-hour offer's speed and capacity come from "
                    "its points and GPUs",
                )


def cost_columns(offer: Offer, index_level: float) -> dict[str, float]:
    pricing = offer.pricing
    per_mtok = pricing.per_mtok
    assert per_mtok is not None
    return {
        "per_mtok_input": per_mtok.input,
        "per_mtok_output": per_mtok.output,
        "per_mtok_cached_input": per_mtok.cached_input if per_mtok.cached_input is not None else float("nan"),
    }


def costs(
    col: Columns,
    wl: Workload,
    fx: np.ndarray,
    term: np.ndarray,
    escalation: np.ndarray,
    success_rate: np.ndarray,
    fte_fixed: np.ndarray,
    fte_cost_year: np.ndarray | float,
    tasks: np.ndarray | float,
) -> TaskCosts:
    """Per-token offers: the tokens billed per task divided by the share of tasks that succeed, plus fees
    and the fixed staff of the jobs left to the buyer spread over the month's tasks.

    s = workload.cached_input_share of the input tokens is served from the provider's prompt cache at
    pricing.per_mtok.cached_input (absent: the input price). The cost per million delivered output
    tokens includes every charge (input tokens, fees, staff), so that per-token offers compare with
    GPU-hour ones, whose figure carries prefill and overheads too."""
    s = wl.cached_input_share
    cached = col.get("per_mtok_cached_input")
    cached = (
        col["per_mtok_input"]
        if cached is None
        else np.where(np.isnan(cached.astype(float)), col["per_mtok_input"], cached)
    )
    input_price = (1 - s) * col["per_mtok_input"] + s * cached
    token_cost = (wl.input_tokens * input_price + wl.output_tokens * col["per_mtok_output"]) * fx / 1e6 * escalation
    token_rent = token_cost / success_rate
    month_term = np.where(term > 0, term, np.nan)
    token_fees = (col["fees_once"] / month_term + col["fees_monthly"] + col["fees_per_tb_month"]) * fx / tasks
    token_ops = fte_fixed * fte_cost_year / 12 / tasks
    token_fees = np.where(np.isfinite(token_fees), token_fees, 0.0)
    token_ops = np.where(np.isfinite(token_ops), token_ops, 0.0)
    token_total = token_rent + token_fees + token_ops
    token_mtok = token_total * success_rate * 1e6 / wl.output_tokens
    return TaskCosts(token_rent, token_fees, token_ops, token_total, token_mtok)


def scale_price(pricing: Pricing, factor: float, index_level: float | None, fx: float) -> Pricing:
    """Both token prices times `factor` (the cached-input price, when stated, stays)."""
    per_mtok = pricing.per_mtok
    assert per_mtok is not None
    return pricing.model_copy(
        update={
            "per_mtok": per_mtok.model_copy(
                update={"input": per_mtok.input * factor, "output": per_mtok.output * factor}
            )
        }
    )


def workbook_cost(k: Callable[[str], str], ref: Callable[[str], str]) -> str:
    """The workbook's cost per task: (input tokens x ((1 - s) x input + s x cached) + output tokens x output) x fx x
    escalators / 1e6 / (success rate x quality) + (fixed fees + staff per month) / tasks per month."""
    return (
        f"({ref('input_tokens')}*((1-{ref('cached_input_share')})*{k('per_mtok_input')}+{ref('cached_input_share')}"
        f"*{k('per_mtok_cached')})+{ref('output_tokens')}*{k('per_mtok_output')})*{k('fx')}*{k('escalation')}/1000000"
        f"/({ref('success_rate')}*{k('quality')})"
        f"+IF(N({ref('tasks_per_month')})=0,0,({k('fixed_fees_month')}+({k('fte_yours')}+{ref('shared_weight')}"
        f"*{k('fte_shared')})*{ref('fte_cost_year')}/12)/{ref('tasks_per_month')})"
    )


def workbook_values(offer: Offer, metrics: dict[str, Any]) -> dict[str, Any]:
    """The prices its workbook formula reads, in the offer's currency; the cached input at the input price when the
    offer states none."""
    prices = offer.pricing.per_mtok
    assert prices is not None
    cached = prices.cached_input if prices.cached_input is not None else prices.input
    return {"per_mtok_input": prices.input, "per_mtok_cached": cached, "per_mtok_output": prices.output}


def terms_row(pricing: Pricing, currency: str) -> TermsRow:
    """('Per million tokens', '1.20 input, 4.80 output USD')."""
    prices = pricing.per_mtok
    assert prices is not None
    return TermsRow("Per million tokens", f"{prices.input:,.2f} input, {prices.output:,.2f} output {currency}")


def memo_price(pricing: Pricing, currency: str, metrics: dict[str, Any], ours: str) -> str:
    """'0.90 input and 4.40 output USD per million tokens'."""
    prices = pricing.per_mtok
    assert prices is not None
    return f"{prices.input:.2f} input and {prices.output:.2f} output {currency} per million tokens"


def formula_lines(f: FormulaInputs) -> FormulaLines:
    """Its charges per 1,000 successful tasks: the tokens a task uses at the prices per million (a cached share of
    the input at the cached price), x fx, x the term's average escalator, over the share of tasks that succeed."""
    prices = f.pricing.per_mtok
    assert prices is not None
    wl, share = f.workload, f.workload.cached_input_share or 0
    words: Parts = ()
    input_price: Parts = (Figure(prices.input),)
    if share:
        words = (
            "input tokens × ((1 − cached share) × input price + cached share × cached price) + output tokens × "
            "output price: ",
        )
        cached = prices.cached_input if prices.cached_input is not None else prices.input
        input_price = ("((1 − ", Figure(share, 4), ") × ", *input_price, " + ", Figure(share, 4), " × ")
        input_price += (Figure(cached), ")")
    escalation: Parts = (" × ", Figure(f.metrics["escalation"], 6)) if f.escalated else ()
    expr = ("(", Figure(wl.input_tokens), " × ", *input_price, " + ", Figure(wl.output_tokens), " × ")
    expr += (Figure(prices.output), ") / 1,000,000", *times_fx(f.fx), *escalation)
    expr += (" / ", Figure(f.metrics["success_rate"], 4), " × 1,000")
    return FormulaLines(per_task=FormulaLine(words, expr, "Tokens per 1,000 successful tasks"))


KIND = Kind(
    name="per_token",
    field="per_mtok",
    label="per-token",
    board_words="per token",
    block=PerMtok,
    rented=False,
    columns=("per_mtok_input", "per_mtok_output", "per_mtok_cached_input"),
    checks=checks,
    cost_columns=cost_columns,
    scale_price=scale_price,
    workbook_cost=workbook_cost,
    workbook_inputs=(
        ("per_mtok_input", "Input per Mtok (offer currency)", "#,##0.00"),
        ("per_mtok_cached", "Cached input per Mtok (offer currency)", "#,##0.00"),
        ("per_mtok_output", "Output per Mtok (offer currency)", "#,##0.00"),
    ),
    workbook_values=workbook_values,
    month_rule="tokens",
    per_task=True,
    task_costs=costs,
    terms_row=terms_row,
    memo_price=memo_price,
    formula_lines=formula_lines,
    template_flow=True,
    price_words="a price per million input and output tokens",
)
