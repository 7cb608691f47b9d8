"""The take-or-pay kind (procure/model/kinds/take_or_pay.py): reserved GPUs at a rate per GPU-hour with a floor
share of the reserved hours owed every month. Its block, checks, the bill rate x max(used, floor x reserved) in the
cost model, the cash flow and the commitment, the plan's committed part and the workbook formula, with figures
worked by hand; end to end on tests/data/take_or_pay (one offer, 100 GPUs reserved at 3.10, floor 0.7)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from kindrows import TASKS_PER_GPU_HOUR, costs, example_offer, problems
from pydantic import ValidationError

from procure.analysis.commitment import offer_commitment
from procure.analysis.evaluate import evaluate, evaluate_with_inputs
from procure.io.importers import COLUMNS, NUMBER
from procure.io.workspace import load_workspace
from procure.model.kinds import KINDS
from procure.model.kinds.base import TermsRow
from procure.model.kinds.take_or_pay import KIND, TakeOrPay, bill

DATA = Path(__file__).parent / "data" / "take_or_pay"
AS_OF = date(2026, 11, 29)
# The workspace's offer: 300 tok/s/GPU at the target; availability 0.995 x 0.97 (unrated) = 0.96515; success 0.9,
# utilization 0.8: 300 x 3600 / 1000 x 0.96515 x 0.9 x 0.8 = 750.50064 successful tasks a GPU-hour.
CAPACITY = 300 * 3.6 * 0.96515 * 0.9 * 0.8
# 30,000,000 tasks a month need 30e6 / (750.50064 x 730) = 54.758 GPUs, under the floor's 0.7 x 100 = 70:
# the month's bill is 3.10 x 70 x 730 = 158,410, and a task costs 158,410 / 30,000,000 = 0.00528033.
BILL = 3.10 * 70 * 730


def test_the_block_is_a_rate_and_a_floor_share():
    assert TakeOrPay(gpu_hour=3.10, floor=0.7).floor == 0.7
    with pytest.raises(ValidationError):
        TakeOrPay(gpu_hour=3.10, floor=1.2)  # a share: at most 1
    with pytest.raises(ValidationError):
        TakeOrPay(gpu_hour=3.10, floor=0.0)  # a floor of nothing is a plain usage price


def test_its_offers_are_billed_monthly_and_owe_the_floor():
    offer = load_workspace(DATA).offers[0]
    assert offer.billing_unit == "month"  # a commitment, even on a managed-serving endpoint
    assert KIND.committed(offer) == pytest.approx(70)


def test_checks_the_reservation_and_what_does_not_go_with_it():
    offer = load_workspace(DATA).offers[0]
    assert problems(KIND.checks, offer) == []
    pricing = offer.pricing.model_copy(update={"billed_per": "hour"})
    bad = offer.model_copy(update={"gpus": 0, "max_gpus": 120, "pricing": pricing})
    assert [loc for loc, _ in problems(KIND.checks, bad)] == [("gpus",), ("max_gpus",), ("pricing", "billed_per")]
    assert problems(KIND.checks, example_offer("northwind-b200-mc")) == []  # not its business


def test_the_bill_is_the_rate_on_the_floor_or_on_what_is_used():
    # the plain offer of tests/kindrows.py: 2,566.08 successful tasks a GPU-hour; 100 GPUs reserved, floor 0.7
    reserved = {"basis": "take_or_pay", "gpu_hour": 3.10, "gpus": 70.0, "max_gpus": 100.0}
    month = TASKS_PER_GPU_HOUR * 730  # one GPU's month: 1,873,238.4 tasks
    # 50 GPUs' worth used: the floor's 70 are billed, 3.10 x 70 x 730 = 158,410 over 50 GPUs' tasks
    low = costs(tasks_per_month=50 * month, **reserved)
    assert low["billed_gpus"] == pytest.approx(70)
    assert low["monthly_spend"] == pytest.approx(158_410)
    assert low["cost_per_task"] == pytest.approx(158_410 / (50 * month))
    # 85 GPUs' worth: above the floor, billed as used: 3.10 x 85 x 730 = 192,355, 3.10 / 2,566.08 a task
    mid = costs(tasks_per_month=85 * month, **reserved)
    assert mid["monthly_spend"] == pytest.approx(192_355)
    assert mid["cost_per_task"] == pytest.approx(3.10 / TASKS_PER_GPU_HOUR)
    # 120 GPUs' worth: the reservation (100) is the most billed; the rest is unserved (the capacity gate's)
    high = costs(tasks_per_month=120 * month, **reserved)
    assert high["billed_gpus"] == pytest.approx(100)
    assert high["gpus_needed"] == pytest.approx(120)


def test_end_to_end_the_cost_per_task_is_the_floor_bill_over_the_tasks():
    ev = evaluate(load_workspace(DATA), AS_OF)
    record = ev.offer("tollgate")
    m = record.metrics
    assert record.pricing_basis == "take_or_pay" and record.acceptable
    assert m["gpus_needed"] == pytest.approx(30e6 / (CAPACITY * 730))  # 54.758
    assert m["billed_gpus"] == pytest.approx(70)
    assert m["monthly_spend"] == pytest.approx(BILL)  # 158,410
    assert m["cost_per_task"] == pytest.approx(BILL / 30e6)  # 0.00528033
    assert m["cost_per_task"] == pytest.approx(0.00528033, rel=1e-5)


def test_end_to_end_the_cash_flow_pays_the_bill_monthly_and_signing_binds_the_floor():
    ev = evaluate(load_workspace(DATA), AS_OF, None, 12)
    record = ev.offer("tollgate")
    flow = record.cashflow
    served = [month for month in flow.months if month.month >= 1]
    assert len(served) == 12
    assert all(month.rent == pytest.approx(BILL) for month in served)
    # the floor over the term: 0.7 x 100 GPUs x 730 hours x 3.10 x 12 months = 1,900,920
    assert flow.total_commitment == pytest.approx(70 * 730 * 3.10 * 12)
    assert flow.total_commitment == pytest.approx(1_900_920)
    # without a horizon the commitment rule gives the same figure
    assert offer_commitment(evaluate(load_workspace(DATA), AS_OF).offer("tollgate")) == pytest.approx(1_900_920)


def test_the_plan_commits_to_the_floor_and_uses_the_rest_as_needed():
    from procure.analysis.plan.candidates import candidates
    from procure.analysis.plan.notes import follows_demand

    ev, inputs = evaluate_with_inputs(load_workspace(DATA), AS_OF)
    found, excluded = candidates(ev, inputs, 219_000, 1000, 0.9)
    cand = next(c for c in found if c.id == "tollgate")
    # the floor's 70 GPUs in whole 8-GPU nodes: 9 nodes (72 GPUs), fixed; the other 28 reserved GPUs pay-as-used
    (base,) = cand.commits
    assert (base.min_nodes, base.max_nodes, base.node_gpus) == (9, 9, 8)
    assert base.price == pytest.approx(3.10)
    assert cand.source is not None and cand.source.price == pytest.approx(3.10)
    assert cand.source.cap_month == pytest.approx(28 * CAPACITY * 730)
    # so the offer can follow demand above its floor
    assert follows_demand(load_workspace(DATA).offers[0])


def test_the_report_shows_its_rate_and_terms():
    pricing = load_workspace(DATA).offers[0].pricing
    assert pricing.rate == 3.10
    assert pricing.kind_row("USD") == TermsRow(
        "Pricing",
        "take-or-pay: 3.10 per GPU-hour used, at least 70% of the reserved GPU-hours owed every month",
    )


def test_a_what_if_price_change_scales_the_rate():
    pricing = load_workspace(DATA).offers[0].pricing
    assert KIND.scale_price(pricing, 1.10, None, 1.0).take_or_pay.gpu_hour == pytest.approx(3.41)


def test_the_offer_template_and_the_workbook_formula():
    assert ("pricing.take_or_pay.gpu_hour", NUMBER) in COLUMNS
    assert ("pricing.take_or_pay.floor", NUMBER) in COLUMNS
    formula = bill(lambda key: f"<{key}>")
    # MAX(used, floor x reserved) x rate x 730, the used GPUs at most the reservation
    assert formula == ('IF(<floor>="","",MAX(MIN(<reserved_gpus>,N(<gpus_used>)),<floor>*<reserved_gpus>)*<rent>*730)')


def test_the_board_memo_words_its_terms_and_names_its_kind(tmp_path, monkeypatch):
    """The memo's price line is the kind's own terms with the currency, and the options table names the kind by its
    label, never by the cost model's identifier."""
    from procure.analysis.report import gather_extras
    from procure.render.board import board_memo

    monkeypatch.setenv("PROCURE_CACHE_DIR", str(tmp_path))
    ws = load_workspace(DATA)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    memo = board_memo(ev, gather_extras(ws, ev, inputs, board=True).memo)
    assert memo.terms.price == (
        "take-or-pay: 3.10 per GPU-hour used, at least 70% of the reserved GPU-hours owed every month, in USD"
    )
    assert [o.price_basis for o in memo.options] == ["take-or-pay"]
    # 100 GPUs reserved, 0.7 x 100 = 70 owed: the headline names both, never the floor alone as the commitment
    assert "commitment of 100 B200 GPUs reserved, 70 owed, with Tollgate Compute" in memo.headline


def test_the_ask_line_names_the_reservation_and_what_is_owed_as_the_headline_does(tmp_path, monkeypatch):
    """The memo's ask line reads '100 GPUs reserved, 70 owed' (the headline's words), not the floor's 70 alone; the
    line still bills 70 GPUs (0.7 x 100; the demand needs 54.76), so nothing claims the 100 reserved as billed, and
    the JSON keeps its figures only."""
    from procure.analysis.decision import decide
    from procure.analysis.report import gather_extras
    from procure.render.board import board_memo

    monkeypatch.setenv("PROCURE_CACHE_DIR", str(tmp_path))
    ws = load_workspace(DATA)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    memo = board_memo(ev, gather_extras(ws, ev, inputs, board=True).memo)
    (ask,) = memo.ask
    assert ask.lines == ["100 GPUs reserved, 70 owed, months 1–12, 3.10 USD per GPU-hour"]
    assert "100 B200 GPUs reserved, 70 owed," in memo.headline
    (line,) = decide(ev).lines
    assert (line.gpus, line.gpus_committed, line.reserved) == (70, None, "100 GPUs reserved, 70 owed")
    assert "reserved" not in line.model_dump_json()  # the JSON keeps the figures: gpus 70


def test_the_ask_line_says_what_the_demand_bills_above_what_is_owed(tmp_path, monkeypatch):
    """45,000,000 tasks a month need 45e6 / (750.50064 x 730) = 82.14 GPUs: 83 billed (whole GPUs), above the 70
    owed (what the commitment prices) and within the 100 reserved. The ask line and the headline both say so."""
    from procure.analysis.decision import decide
    from procure.analysis.report import gather_extras
    from procure.render.board import board_memo

    monkeypatch.setenv("PROCURE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "ws"
    shutil.copytree(DATA, folder)
    config = folder / "procure.yaml"
    config.write_text(config.read_text().replace("tasks_per_month: 30000000", "tasks_per_month: 45000000"))
    ws = load_workspace(folder)
    ev, inputs = evaluate_with_inputs(ws, AS_OF, None, ws.config.horizon.months)
    assert ev.offer("tollgate").metrics["billed_gpus"] == pytest.approx(45e6 / (CAPACITY * 730))  # 82.137
    (line,) = decide(ev).lines
    assert (line.gpus, line.gpus_committed) == (83, 70)
    memo = board_memo(ev, gather_extras(ws, ev, inputs, board=True).memo)
    assert memo.ask[0].lines == [
        "100 GPUs reserved, 70 owed (83 billed at today's demand), months 1–12, 3.10 USD per GPU-hour"
    ]
    assert "100 B200 GPUs reserved, 70 owed, with Tollgate Compute, " in memo.headline
    assert "(83 GPUs billed at today's demand)" in memo.headline


def test_its_words_name_the_reservation_and_what_is_owed():
    """100 reserved at floor 0.7 owe 70; 10 reserved at floor 0.75 owe 7.5 (a share of a GPU is still owed)."""
    offer = load_workspace(DATA).offers[0]
    assert KIND.reserved_words(offer, "GPUs") == "100 GPUs reserved, 70 owed"
    small = offer.model_copy(
        update={
            "gpus": 10,
            "pricing": offer.pricing.model_copy(update={"take_or_pay": TakeOrPay(gpu_hour=3.1, floor=0.75)}),
        }
    )
    assert KIND.reserved_words(small, "B200 GPUs") == "10 B200 GPUs reserved, 7.5 owed"
    # every other kind's GPUs are its commitment: no words of its own
    assert [k.name for k in KINDS if k.reserved_words(offer, "GPUs")] == ["take_or_pay"]


def test_a_commitment_in_another_currency_is_converted(tmp_path):
    """Priced in EUR at 1.1 USD per EUR, with a support fee of 0.05 EUR a GPU-hour: the floor's 1,900,920 EUR and the
    fee on its 613,200 GPU-hours (70 x 730 x 12), 30,660 EUR, bind us to (1,900,920 + 30,660) x 1.1 = 2,124,738 USD."""
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(DATA, ws)
    offer = ws / "offers" / "tollgate.yaml"
    offer.write_text(
        offer.read_text().replace("currency: USD", "currency: EUR\n  fees: [{name: support, gpu_hour: 0.05}]")
    )
    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("assumptions:\n", "assumptions:\n  fx: {EUR: 1.1}\n", 1))
    assert offer_commitment(evaluate(load_workspace(ws), AS_OF).offer("tollgate")) == pytest.approx(2_124_738)
