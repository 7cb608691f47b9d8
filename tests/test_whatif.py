"""Operations what-ifs (procure/analysis/whatif.py): a change to one offer, its cost per task before and after,
the monthly saving at the demand, payback and break-even, and the price that ties the leader.

Hand-calculation conventions (tests/data/basic): alpha costs 4.00 rent + 87,600 / (100 x 12 x 730)
= 0.10 fees + (2 + 4 x 0.1) FTE x 219,000 / (100 x 8,760) = 0.60 serving staff + 0.05 software = 4.75
per GPU-hour, 100 GPUs, 12 months; its availability is 0.995 x 0.97 (unrated), success 0.9,
utilization 0.8. One paid GPU-hour delivers throughput x 3,600 / 1,000 x 0.995 x 0.97 x 0.9 x 0.8
successful tasks, x the means of the availability and utilization factors (0.996667 x 0.983333) at the point. A month is
730 hours; the monthly bill is 4.75 x 100 x 730 = 346,750.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest
from pointmeans import AVAILABILITY_MEAN, DELIVERY_MEAN, fixed_at_means

from procure.analysis.evaluate import evaluate
from procure.analysis.whatif import Change, parse_change, price_to_win, whatif
from procure.errors import InputError
from procure.io.workspace import load_workspace

AS_OF = date(2026, 11, 29)
# availability x success x utilization for alpha, unrated; availability and utilization each x the mean of its factor at
# the point (DELIVERY_MEAN = 0.996667 x 0.983333)
SHARE = 0.995 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN
BILL = 4.75 * 100 * 730  # alpha's monthly spend: 346,750


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


@pytest.fixture
def seed(workspace_copy) -> Path:
    """basic with alpha at 200 tok/s/GPU at the target (100 tok/s per user); no demand: fully used."""
    ws = fixed_at_means(workspace_copy("basic"))
    edit(
        ws / "offers" / "alpha.yaml",
        "points: [[50, 400], [100, 300], [150, 100]]",
        "points: [[50, 300], [100, 200], [150, 100]]",
    )
    return ws


@pytest.fixture
def idle(workspace_copy) -> Path:
    """basic with a demand of 20,000,000 tasks a month: alpha's 100 GPUs deliver
    300 x 3.6 x SHARE = 735.53 tasks per GPU-hour x 100 x 730 = 53.7 million, so they are mostly idle."""
    ws = fixed_at_means(workspace_copy("basic"))
    edit(ws / "procure.yaml", "  utilization: 0.8\n", "  utilization: 0.8\n  tasks_per_month: 20000000\n")
    return ws


# --- the seed's case ------------------------------------------------------------------------------


def test_fifty_percent_more_throughput_costs_two_thirds_per_task(seed):
    result = whatif(load_workspace(seed), "alpha", Change(throughput=1.5), AS_OF)
    assert result.before.throughput == 200 and result.after.throughput == 300
    assert result.after.full == result.before.full == pytest.approx(4.75)  # the same hourly bill
    assert result.after.fill == result.before.fill == 1.0
    assert result.before.cost_per_task == pytest.approx(4.75 / (200 * 3.6 * SHARE), rel=1e-12)
    assert result.after.cost_per_task == pytest.approx(4.75 / (300 * 3.6 * SHARE), rel=1e-12)
    assert result.after.cost_per_task / result.before.cost_per_task == pytest.approx(2 / 3, rel=1e-12)
    assert result.changes == ["throughput +50%"]
    assert result.notes == []


def test_saving_without_demand_is_priced_at_what_the_committed_gpus_deliver(seed):
    result = whatif(load_workspace(seed), "alpha", Change(throughput=1.5), AS_OF)
    tasks = 200 * 3.6 * SHARE * 100 * 730  # before the change: tasks per GPU-hour x 100 GPUs x 730 h
    assert result.tasks_per_month == pytest.approx(tasks, rel=1e-12)
    assert result.tasks_basis == "what the committed GPUs deliver before the change"
    # (4.75 / c - 4.75 / 1.5c) x c x 100 x 730 = 346,750 x (1 - 2/3)
    assert result.monthly_saving == pytest.approx(BILL / 3, rel=1e-12)
    assert result.monthly_cost == 0 and result.one_off == 0


def test_payback_by_hand(seed):
    result = whatif(load_workspace(seed), "alpha", Change(throughput=1.5, one_off=200_000, monthly=15_000), AS_OF)
    net = BILL / 3 - 15_000  # 115,583.33 - 15,000
    assert result.net_monthly == pytest.approx(net, rel=1e-12)
    assert result.payback_simple_months == pytest.approx(200_000 / net, rel=1e-12)  # about 1.99 months
    # discounted at 10% a year (monthly i = 1.1^(1/12) - 1): check by the annuity sum it must satisfy,
    # net x (1 - (1 + i)^-n) / i = 200,000, and that whole months bracket it
    i = 1.1 ** (1 / 12) - 1
    n = result.payback_months
    assert net * (1 - (1 + i) ** -n) / i == pytest.approx(200_000, rel=1e-9)
    assert (
        sum(net / (1 + i) ** k for k in range(1, math.floor(n) + 1))
        < 200_000
        <= sum(net / (1 + i) ** k for k in range(1, math.ceil(n) + 1))
    )
    assert result.payback_beyond_term is False and result.term_months == 12
    assert result.changes == ["throughput +50%", "200,000 one-off", "15,000 a month"]


def test_never_pays_back(seed):
    result = whatif(load_workspace(seed), "alpha", Change(throughput=1.5, one_off=50_000, monthly=200_000), AS_OF)
    assert result.monthly_saving == pytest.approx(BILL / 3)
    assert result.net_monthly == pytest.approx(BILL / 3 - 200_000)
    assert result.payback_months is None
    assert any("never pays back" in note for note in result.notes)


def test_break_even_throughput_gain(seed):
    ws = load_workspace(seed)
    result = whatif(ws, "alpha", Change(throughput=1.5, one_off=120_000, monthly=15_000), AS_OF)
    # monthly cost + the annuity that repays the one-off over the 12-month term at 10% a year:
    # i = 1.1^(1/12) - 1 = 0.00797414, 1 - 1.00797414^-12 = 0.0909091 (= 1 - 1/1.1), so the annuity is
    # 120,000 x 0.00797414 / 0.0909091 = 10,525.87 and the target 25,525.87 (not 15,000 + 120,000 / 12)
    i = 1.1 ** (1 / 12) - 1
    target = 15_000 + 120_000 * i / (1 - 1 / 1.1)
    assert target == pytest.approx(25_525.87, abs=0.01)
    # saving at gain g (fully used) = 346,750 x (1 - 1/(1 + g)) = target  =>  g = target / (346,750 - target)
    by_hand = target / (BILL - target)  # 0.0794...
    gain = result.break_even_throughput_gain
    assert gain == pytest.approx(by_hand, rel=1e-6)
    at_gain = whatif(ws, "alpha", Change(throughput=1 + gain), AS_OF)
    assert at_gain.monthly_saving == pytest.approx(target, rel=1e-6)
    # at the break-even gain the one-off pays back, discounted, in exactly the term
    paid = whatif(ws, "alpha", Change(throughput=1 + gain, one_off=120_000, monthly=15_000), AS_OF)
    assert paid.payback_months == pytest.approx(12.0, rel=1e-5)


def test_break_even_without_costs_is_zero(seed):
    result = whatif(load_workspace(seed), "alpha", Change(throughput=1.2), AS_OF)
    assert result.break_even_throughput_gain == 0.0


# --- an idle commitment ---------------------------------------------------------------------------


def test_more_throughput_on_an_idle_commitment_saves_nothing(idle):
    result = whatif(load_workspace(idle), "alpha", Change(throughput=1.5, one_off=10_000, monthly=1_000), AS_OF)
    c = 300 * 3.6 * SHARE  # 735.53 tasks per GPU-hour at full use
    needed = 20_000_000 / (c * 730)  # 36.5 GPUs of the 100 committed
    assert result.before.gpus_needed == pytest.approx(needed, rel=1e-12)
    assert result.before.fill == pytest.approx(needed / 100, rel=1e-12)
    assert result.after.fill == pytest.approx(needed / 1.5 / 100, rel=1e-12)
    assert result.after.billed_gpus == result.before.billed_gpus == 100
    # cost per task = 4.75 x 100 x 730 / 20,000,000 either way: the bill does not move
    assert result.before.cost_per_task == pytest.approx(BILL / 20_000_000, rel=1e-12)
    assert result.after.cost_per_task == pytest.approx(BILL / 20_000_000, rel=1e-12)
    assert result.tasks_per_month == 20_000_000 and result.tasks_basis == "the workload's demand"
    assert result.monthly_saving == pytest.approx(0.0, abs=1e-6)
    assert result.payback_months is None
    assert result.break_even_throughput_gain is None  # no gain can pay for anything
    idle_note = next(note for note in result.notes if "idle" in note)
    assert "saves nothing until the commitment shrinks" in idle_note
    # after the change the demand needs 20,000,000 / (1.5 c x 730) = 24.3 GPUs: ceil -> 25
    assert math.ceil(needed / 1.5) == 25
    assert "--gpus 25" in idle_note


def test_shrinking_the_commitment_then_saves(idle):
    result = whatif(load_workspace(idle), "alpha", Change(throughput=1.5, gpus=40), AS_OF)
    # 40 GPUs: fees 87,600 / (40 x 12 x 730) = 0.25; staff (2 + 4 x 0.04) x 219,000 / (40 x 8,760) = 1.35
    full_after = 4.00 + 0.25 + 1.35 + 0.05  # 5.65
    assert result.after.full == pytest.approx(full_after, rel=1e-12)
    assert result.after.billed_gpus == 40
    assert result.after.fill < 1  # 24.3 of 40 GPUs used
    # with both commitments partly idle, cost per task = monthly bill / demand
    before, after = BILL / 20_000_000, full_after * 40 * 730 / 20_000_000
    assert result.before.cost_per_task == pytest.approx(before, rel=1e-12)
    assert result.after.cost_per_task == pytest.approx(after, rel=1e-12)
    # monthly saving = fall in cost per task x demand = 346,750 - 164,980
    assert result.monthly_saving == pytest.approx((before - after) * 20_000_000, rel=1e-9)
    assert result.monthly_saving == pytest.approx(346_750 - 164_980, rel=1e-9)
    assert not any("idle" in note for note in result.notes)
    assert "40 committed GPUs" in result.changes


def test_a_smaller_commitment_alone_saves_the_bill_difference(idle):
    result = whatif(load_workspace(idle), "alpha", Change(gpus=50), AS_OF)
    # 50 GPUs: fees 87,600 / (50 x 12 x 730) = 0.20; staff (2 + 4 x 0.05) x 219,000 / (50 x 8,760) = 1.10
    full_after = 4.00 + 0.20 + 1.10 + 0.05  # 5.35
    assert result.after.full == pytest.approx(full_after, rel=1e-12)
    assert result.monthly_saving == pytest.approx(BILL - full_after * 50 * 730, rel=1e-9)


# --- price changes --------------------------------------------------------------------------------


def test_five_percent_off_lowers_rent_by_exactly_five_percent(workspace_copy):
    ws = load_workspace(fixed_at_means(workspace_copy("basic")))
    alpha = whatif(ws, "alpha", Change(price=0.95), AS_OF)
    assert alpha.before.rent == 4.00
    assert alpha.after.rent == pytest.approx(4.00 * 0.95, rel=1e-12)
    assert alpha.after.full == pytest.approx(4.75 - 0.20, rel=1e-12)
    bravo = whatif(ws, "bravo", Change(price=parse_change("-5%", "--price")), AS_OF)  # EUR 3.00 x 1.1
    assert bravo.after.rent == pytest.approx(3.00 * 1.1 * 0.95, rel=1e-12)
    assert bravo.after.rent / bravo.before.rent == pytest.approx(0.95, rel=1e-12)


def test_price_change_on_an_index_linked_offer_moves_the_rent_by_the_same_share(data_dir):
    ws = load_workspace(data_dir / "offer_kinds")
    result = whatif(ws, "indexed", Change(price=0.95), AS_OF)
    # index 4.50 (2026-10-31) + spread 0.35 = 4.85, inside [4.00, 6.00], less 10% discount
    assert result.before.rent == pytest.approx(4.85 * 0.9, rel=1e-12)
    assert result.after.rent == pytest.approx(4.85 * 0.95 * 0.9, rel=1e-12)


def test_availability_change_on_a_managed_offer(workspace_copy):
    result = whatif(load_workspace(fixed_at_means(workspace_copy("basic"))), "alpha", Change(availability=0.999), AS_OF)
    # still times the unrated factor, and the availability factor's mean at the point
    assert result.after.availability == pytest.approx(0.999 * 0.97 * AVAILABILITY_MEAN, rel=1e-12)
    assert result.after.cost_per_task == pytest.approx(
        4.75 / (300 * 3.6 * 0.999 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN), rel=1e-12
    )


# --- price to win ---------------------------------------------------------------------------------


def test_price_to_tie_makes_the_runner_up_tie_the_leader(workspace_copy):
    ws_dir = fixed_at_means(workspace_copy("basic"))
    # a discount and a prepayment, so that the price to tie has to undo both
    edit(
        ws_dir / "offers" / "alpha.yaml",
        "  gpu_hour: 4.00\n",
        "  gpu_hour: 4.00\n  discount: 0.10\n  prepay_fraction: 0.25\n",
    )
    ws = load_workspace(ws_dir)
    ev = evaluate(ws, AS_OF)
    rows = {row.id: row for row in price_to_win(ev)}
    assert [row.id for row in price_to_win(ev)] == ["bravo", "alpha"]  # charlie fails a gate
    assert rows["bravo"].note == "the leader"
    # bravo (leader): 3.00 EUR x 1.1 + 0.60 staff + 0.05 software = 3.95 per GPU-hour; 300 tok/s at availability
    # 0.99 x 0.97 (unrated bare metal: basic's haircut) x 0.98 (our eight operating jobs) = 0.941094
    leader = 3.95 / (300 * 3.6 * 0.99 * 0.97 * 0.98 * 0.9 * 0.8 * DELIVERY_MEAN)  # x the factors' means at the point
    assert rows["bravo"].cost_per_task == pytest.approx(leader, rel=1e-12)
    # alpha: full(rent) = rent x (1 + 0.25 x 0.10 x 12 / 24) + 0.10 fees + 0.60 staff + 0.05 software
    # = leader x tasks per GPU-hour; list price = rent / (1 - 0.10)
    tasks = 300 * 3.6 * SHARE
    rent = (leader * tasks - 0.75) / (1 + 0.25 * 0.10 * 12 / 24)
    assert rows["alpha"].list_price == 4.00
    assert rows["alpha"].price_to_tie == pytest.approx(rent / 0.9, rel=1e-12)
    assert rows["alpha"].change == pytest.approx(rent / 0.9 / 4.00 - 1, rel=1e-12)
    # applying that price as a what-if gives exactly the leader's cost per task
    factor = rows["alpha"].price_to_tie / rows["alpha"].list_price
    result = whatif(ws, "alpha", Change(price=factor), AS_OF)
    assert result.after.cost_per_task == pytest.approx(rows["bravo"].cost_per_task, rel=1e-9)


def test_price_to_tie_on_the_rated_fixture_for_every_runner_up(data_dir):
    ws = load_workspace(data_dir / "rated")
    rows = price_to_win(evaluate(ws, AS_OF))
    leader = rows[0]
    assert [r.id for r in rows] == ["bravo", "alpha", "delta", "echo"]
    for row in rows[1:]:
        after = whatif(ws, row.id, Change(price=row.price_to_tie / row.list_price), AS_OF).after
        assert after.cost_per_task == pytest.approx(leader.cost_per_task, rel=1e-9)


def test_price_to_tie_on_an_index_linked_offer_within_its_floor(workspace_copy):
    ws_dir = workspace_copy("offer_kinds")
    edit(ws_dir / "offers" / "indexed.yaml", "floor: 4.00", "floor: 3.00")
    ws = load_workspace(ws_dir)
    rows = {row.id: row for row in price_to_win(evaluate(ws, AS_OF))}
    assert rows["owned"].note == "the leader"
    assert rows["tokens"].price_to_tie is None and rows["tokens"].note == "no rental price to negotiate"
    row = rows["indexed"]
    assert 3.00 < row.price_to_tie < row.list_price
    after = whatif(ws, "indexed", Change(price=row.price_to_tie / row.list_price), AS_OF).after
    assert after.cost_per_task == pytest.approx(rows["owned"].cost_per_task, rel=1e-9)


def test_price_to_tie_is_reachable_under_an_index_floor(data_dir):
    ws = load_workspace(data_dir / "offer_kinds")
    rows = {row.id: row for row in price_to_win(evaluate(ws, AS_OF))}
    row = rows["indexed"]
    if row.price_to_tie is not None and row.price_to_tie > 0:
        after = whatif(ws, "indexed", Change(price=row.price_to_tie / row.list_price), AS_OF).after
        assert after.cost_per_task == pytest.approx(rows["owned"].cost_per_task, rel=1e-9)


# --- parsing and refusals -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "factor"),
    [("+50%", 1.5), ("-5%", 0.95), ("50%", 1.5), ("+0%", 1.0), (" +12.5 % ", 1.125), ("-99%", 0.01), ("+200%", 3.0)],
)
def test_parse_change(text, factor):
    assert parse_change(text, "--throughput") == pytest.approx(factor, rel=1e-12)


def test_parse_change_plus_fifty_is_exactly_one_and_a_half():
    assert parse_change("+50%", "--throughput") == 1.5


@pytest.mark.parametrize("text", ["fast", "+50", "50", "", "%", "+-5%", "1.5x", "-100%", "-150%", "+5e1%", "nan%"])
def test_parse_change_refuses_bad_strings(text):
    with pytest.raises(InputError) as caught:
        parse_change(text, "--throughput")
    assert len(caught.value.problems) == 1
    assert str(caught.value.problems[0]).startswith("--throughput: ")


def test_unknown_offer_is_an_input_error(data_dir):
    with pytest.raises(InputError) as caught:
        whatif(load_workspace(data_dir / "basic"), "zulu", Change(throughput=1.5), AS_OF)
    assert "no offer with id 'zulu'" in str(caught.value)


def test_per_token_offer_has_no_throughput_or_gpus_to_change(data_dir):
    ws = load_workspace(data_dir / "offer_kinds")
    with pytest.raises(InputError):
        whatif(ws, "tokens", Change(throughput=1.5), AS_OF)
    with pytest.raises(InputError):
        whatif(ws, "tokens", Change(gpus=10), AS_OF)
    cheaper = whatif(ws, "tokens", Change(price=0.9), AS_OF)
    assert cheaper.after.cost_per_task < cheaper.before.cost_per_task
    assert cheaper.break_even_throughput_gain is None


def test_payback_beyond_the_term_is_flagged(seed):
    # a one-off of 20 x the net monthly saving: undiscounted 20 months, discounted longer; the term is 12
    net = BILL / 3 - 15_000
    result = whatif(load_workspace(seed), "alpha", Change(throughput=1.5, one_off=20 * net, monthly=15_000), AS_OF)
    i = 1.1 ** (1 / 12) - 1
    assert result.payback_simple_months == pytest.approx(20.0, rel=1e-12)
    assert result.payback_months == pytest.approx(-math.log(1 - 20 * i) / math.log(1 + i), rel=1e-12)  # about 20.8
    assert result.payback_beyond_term is True
    assert any("longer than the offer's 12-month term" in n for n in result.notes)


def test_discounted_payback_never_reached():
    from procure.analysis.whatif import discounted_payback

    # at 10% a year a saving of 100 a month is worth at most 100 / i = about 12,560 in today's money
    i = 1.1 ** (1 / 12) - 1
    assert discounted_payback(100 / i * 0.999, 100, 0.10) is not None
    assert discounted_payback(100 / i * 1.001, 100, 0.10) is None
    assert discounted_payback(1_200, 100, 0.0) == pytest.approx(12.0)
