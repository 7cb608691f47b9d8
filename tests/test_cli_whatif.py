"""`procure whatif` (and `--price-to-win`) on tests/data/rated in every format, and its refusals.

Hand figures (tests/data/rated, no demand: every offer fully used): alpha costs 4.75 per GPU-hour
(4.00 rent + 0.10 fees + 0.60 serving staff + 0.05 software), 100 GPUs, 12 months, availability
0.995 x 1.0 (operator score 100), success 0.9, utilization 0.8: 300 tok/s x 3.6 x 0.995 x 0.72
successful tasks per GPU-hour, x the means of the availability and utilization factors (0.996667 x 0.983333). Monthly
bill 4.75 x 100 x 730 = 346,750. +50% throughput cuts the cost
per task to two thirds, so the saving is a third of the bill.

The changed offer's figures in JSON, CSV and Markdown and the prices to win are rendered in process from the
analysis; one JSON run, the tables and the refusals through the command.
"""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import date

import pytest
from clihelp import AS_OF, run
from pointmeans import DELIVERY_MEAN
from refusals import refused

# alpha, before the change; availability and utilization each x the mean of its factor at the point
# (tests/pointmeans.py)
TASKS_PER_HOUR = 300 * 3.6 * 0.995 * 1.0 * 0.9 * 0.8 * DELIVERY_MEAN
BEFORE = 4.75 / TASKS_PER_HOUR
AFTER = 4.75 / (1.5 * TASKS_PER_HOUR)
BILL = 4.75 * 100 * 730
SAVING = BILL / 3  # 115,583.33
SIMPLE_PAYBACK = 120_000 / (SAVING - 15_000)
# Discounted at the 10% cost of capital, monthly i = 1.1^(1/12) - 1: the n with
# net x (1 - (1 + i)^-n) / i = 120,000, i.e. n = -ln(1 - 120,000 i / net) / ln(1 + i)
MONTHLY = 1.1 ** (1 / 12) - 1
PAYBACK = -math.log(1 - 120_000 * MONTHLY / (SAVING - 15_000)) / math.log(1 + MONTHLY)
# Break-even: the saving covers the 15,000 a month and the annuity that repays 120,000 over the 12-month
# term at 10%: 120,000 x i / (1 - 1.1^-1) = 10,525.87, so the target is 25,525.87; saving(g) = BILL x g / (1 + g)
BREAK_EVEN_TARGET = 15_000 + 120_000 * MONTHLY / (1 - 1 / 1.1)
BREAK_EVEN = BREAK_EVEN_TARGET / (BILL - BREAK_EVEN_TARGET)
CHANGE = ("alpha", "--throughput", "+50%", "--one-off", "120000", "--monthly", "15000")


def whatif(data_dir, *args):
    return run("whatif", "-w", data_dir / "rated", "--as-of", AS_OF, *args)


def changed(data_dir, fmt: str, offer: str = "alpha", **asked) -> str:  # type: ignore[no-untyped-def]
    """`procure whatif OFFER --throughput/--price/--one-off/--monthly ... -f fmt` rendered in process from the
    analysis (procure/analysis/usecases/whatif.py what_if, procure/render/whatif.py whatif_text); `asked` as the
    options are given (percentages as text, amounts as numbers)."""
    from procure.analysis.usecases import Asked, what_if
    from procure.render.whatif import whatif_text

    found = what_if(data_dir / "rated", date.fromisoformat(AS_OF), offer, Asked(**asked), False, None)
    return whatif_text(found.whatif, fmt)


def to_win(workspace, fmt: str) -> str:  # type: ignore[no-untyped-def]
    """`procure whatif --price-to-win -f fmt` rendered in process (procure/render/whatif.py price_to_win_text)."""
    from procure.analysis.usecases import Asked, what_if
    from procure.render.whatif import price_to_win_text

    found = what_if(workspace, date.fromisoformat(AS_OF), None, Asked(), True, None)
    return price_to_win_text(found.price_to_win, found.evaluation.currency, fmt)


ASKED = {"throughput": "+50%", "one_off": 120_000.0, "monthly": 15_000.0}  # CHANGE's options


def test_json(data_dir):
    result = whatif(data_dir, *CHANGE, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    payload = json.loads(result.stdout)
    assert {"before", "after", "monthly_saving", "payback_months", "break_even_throughput_gain"} <= set(payload)
    assert payload["offer"] == "alpha" and payload["currency"] == "USD"
    assert payload["before"]["cost_per_task"] == pytest.approx(BEFORE, rel=1e-12)
    assert payload["after"]["cost_per_task"] == pytest.approx(AFTER, rel=1e-12)
    assert payload["after"]["cost_per_task"] / payload["before"]["cost_per_task"] == pytest.approx(2 / 3, rel=1e-12)
    assert payload["before"]["throughput"] == 300 and payload["after"]["throughput"] == 450
    assert payload["tasks_per_month"] == pytest.approx(
        TASKS_PER_HOUR * 100 * 730, rel=1e-12
    )  # 56,480,976 x 0.980056 = 55,354,494
    assert payload["monthly_saving"] == pytest.approx(SAVING, rel=1e-12)
    assert payload["monthly_cost"] == 15_000 and payload["one_off"] == 120_000
    assert payload["net_monthly"] == pytest.approx(SAVING - 15_000, rel=1e-12)
    assert payload["payback_months"] == pytest.approx(PAYBACK, rel=1e-12)
    assert payload["payback_simple_months"] == pytest.approx(SIMPLE_PAYBACK, rel=1e-12)
    assert PAYBACK > SIMPLE_PAYBACK and payload["payback_beyond_term"] is False
    assert payload["break_even_throughput_gain"] == pytest.approx(BREAK_EVEN, rel=1e-6)
    assert payload["before"]["rank"] == 2  # bravo leads


def test_json_never_pays_back_is_null(data_dir):
    payload = json.loads(changed(data_dir, "json", throughput="+50%", monthly=500_000.0))
    assert payload["payback_months"] is None
    assert payload["net_monthly"] == pytest.approx(SAVING - 500_000, rel=1e-12)
    assert any("never pays back" in n for n in payload["notes"])


def test_table(data_dir):
    result = whatif(data_dir, *CHANGE)
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "What if: alpha" in text
    row = next(line for line in text.splitlines() if "Cost per 1,000 successful tasks" in line)
    assert [c.strip() for c in row.strip("│").split("│")] == [
        "Cost per 1,000 successful tasks",
        f"{BEFORE * 1000:.2f}",
        f"{AFTER * 1000:.2f}",
    ]
    assert "Alpha Cloud (alpha) with throughput +50%, 120,000 one-off, 15,000 a month:" in text
    assert f"monthly saving {SAVING:,.0f} USD" in text
    assert f"payback of 120,000 USD: {PAYBACK:.1f} months (discounted)." in text
    assert f"break-even throughput gain (alone): {BREAK_EVEN:+.1%}." in text


def test_csv(data_dir):
    rows = {r["figure"]: r for r in csv.DictReader(io.StringIO(changed(data_dir, "csv", **ASKED)))}
    assert float(rows["cost_per_task"]["before"]) == pytest.approx(BEFORE, rel=1e-12)
    assert float(rows["cost_per_task"]["after"]) == pytest.approx(AFTER, rel=1e-12)
    assert float(rows["throughput"]["after"]) == 450
    assert float(rows["monthly_saving"]["after"]) == pytest.approx(SAVING, rel=1e-12)
    assert float(rows["payback_months"]["after"]) == pytest.approx(PAYBACK, rel=1e-12)
    assert float(rows["break_even_throughput_gain"]["after"]) == pytest.approx(BREAK_EVEN, rel=1e-6)
    assert rows["gpus_needed"]["before"] == ""  # no demand stated


def test_markdown(data_dir):
    text = changed(data_dir, "markdown", **ASKED)
    assert text.startswith("# What if: alpha\n")
    assert f"| Cost per 1,000 successful tasks | {BEFORE * 1000:.2f} | {AFTER * 1000:.2f} |" in text
    assert "| Output tok/s/GPU at the target | 300.0 | 450.0 |" in text
    assert f"monthly saving {SAVING:,.0f} USD" in text


def test_price_change_json(data_dir):
    payload = json.loads(changed(data_dir, "json", "delta", price="-5%"))
    assert payload["before"]["rent"] == 4.20
    assert payload["after"]["rent"] == pytest.approx(4.20 * 0.95, rel=1e-12)
    assert payload["changes"] == ["price -5%"]


# --- price to win --------------------------------------------------------------------------------

# bravo (leader): 3.00 EUR x 1.1 + 0.60 staff + 0.05 software = 3.95 over 1,080 x availability x 0.72, the
# availability of unrated bare metal: SLA 0.99 x haircut 0.97 (the rated fixture's stated one) x our eight
# operating jobs 0.98
LEADER = 3.95 / (300 * 3.6 * 0.99 * 0.97 * 0.98 * 0.9 * 0.8 * DELIVERY_MEAN)
ALPHA_TIE = LEADER * TASKS_PER_HOUR - 0.75  # rent that ties: no discount, no prepayment


def test_price_to_win_json(data_dir):
    payload = json.loads(to_win(data_dir / "rated", "json"))
    assert payload["currency"] == "USD"
    rows = {r["id"]: r for r in payload["offers"]}
    assert [r["id"] for r in payload["offers"]] == ["bravo", "alpha", "delta", "echo"]
    assert [r["rank"] for r in payload["offers"]] == [1, 2, 3, 4]
    assert rows["bravo"]["note"] == "the leader"
    assert rows["bravo"]["cost_per_task"] == pytest.approx(LEADER, rel=1e-12)
    assert rows["alpha"]["list_price"] == 4.0
    assert rows["alpha"]["price_to_tie"] == pytest.approx(ALPHA_TIE, rel=1e-12)
    assert rows["alpha"]["change"] == pytest.approx(ALPHA_TIE / 4.0 - 1, rel=1e-12)


def test_price_to_win_table_csv_markdown(data_dir):
    table = whatif(data_dir, "--price-to-win")
    assert table.exit_code == 0, table.stderr
    assert "Price to win" in table.stdout
    alpha = next(line for line in table.stdout.splitlines() if "│ alpha " in line)
    assert f"{ALPHA_TIE:.3f}" in alpha
    rows = list(csv.DictReader(io.StringIO(whatif(data_dir, "--price-to-win", "-f", "csv").stdout)))
    assert [r["id"] for r in rows] == ["bravo", "alpha", "delta", "echo"]
    assert float(rows[1]["price_to_tie"]) == pytest.approx(ALPHA_TIE, rel=1e-12)
    markdown = whatif(data_dir, "--price-to-win", "-f", "markdown")
    assert markdown.exit_code == 0
    assert markdown.stdout.startswith("# Price to win\n")
    assert f"| 2 | alpha | Alpha Cloud | {BEFORE * 1000:.2f} | 4.000 | {ALPHA_TIE:.3f} |" in markdown.stdout


def test_price_to_win_for_owned_and_per_token_offers(data_dir):
    rows = {r["id"]: r for r in json.loads(to_win(data_dir / "offer_kinds", "json"))["offers"]}
    assert rows["owned"]["note"] == "the leader"
    assert rows["tokens"]["price_to_tie"] is None and rows["tokens"]["note"] == "no rental price to negotiate"


# --- refusals ------------------------------------------------------------------------------------


def problem_lines(result) -> list[str]:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == "1 problem found; nothing was written."
    return result.stderr.splitlines()[:-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("zulu", "--throughput", "+50%"),
            "offers/: no offer with id 'zulu' (known: alpha, bravo, charlie, delta, echo)",
        ),
        (("alpha", "--throughput", "fast"), "--throughput: expected a change like +50% or -5% (got 'fast')"),
        (("alpha", "--price", "cheaper"), "--price: expected a change like +50% or -5% (got 'cheaper')"),
        (("alpha", "--throughput", "-100%"), "--throughput: a change of -100% leaves nothing (must be above -100%)"),
        (("alpha", "--availability", "1.5"), "--availability: must be a share between 0 and 1, e.g. 0.999 (got 1.5)"),
        (("alpha", "--utilization", "0"), "--utilization: must be a share between 0 and 1, e.g. 0.999 (got 0)"),
        (("alpha", "--one-off", "-1"), "--one-off: must be an amount of at least 0 (got -1)"),
        ((), "whatif: name the offer to change with --offer ID, or use --price-to-win"),
    ],
)
def test_bad_input_exits_2_with_one_line(data_dir, args, message):
    assert problem_lines(whatif(data_dir, *args)) == [message]


def asked_refused(ws, offer, asked, *needles: str, as_of: str = AS_OF, price_to_win: bool = False) -> str:  # type: ignore[no-untyped-def]
    """`procure whatif` refused at its use case (procure/analysis/usecases/whatif.py what_if), in process: the
    problems, one line each."""
    from procure.analysis.usecases import what_if

    return refused(lambda: what_if(ws, date.fromisoformat(as_of), offer, asked, price_to_win, None), *needles)


def test_per_token_offer_has_no_throughput_to_change(data_dir):
    from procure.analysis.usecases import Asked

    [line] = asked_refused(data_dir / "offer_kinds", "tokens", Asked(throughput="+50%")).splitlines()
    assert "per-token offer has no GPU throughput to change" in line


def test_zero_gpus_is_a_usage_error(data_dir):
    result = whatif(data_dir, "alpha", "--gpus", "0")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_no_change_given_is_refused(data_dir):
    from procure.analysis.usecases import Asked

    asked_refused(data_dir / "basic", "alpha", Asked(), "whatif: no change to try")


def test_a_change_that_changes_nothing_says_so(data_dir):
    # basic's workload utilization is 0.8: setting it to 0.8 changes no figure
    result = run("whatif", "--offer", "alpha", "--utilization", "0.8", "-w", data_dir / "basic", "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    assert "no figure changes" in result.stdout


def test_price_to_win_without_an_acceptable_offer_says_so(data_dir):
    # every offer of the fixture has expired by 2030 (valid_until in 2027): no leader, no price to win
    from procure.analysis.usecases import Asked

    asked_refused(
        data_dir / "rated",
        None,
        Asked(),
        "whatif: --price-to-win: no acceptable offer as of 2030-01-01",
        "--offer ID",
        as_of="2030-01-01",
        price_to_win=True,
    )
