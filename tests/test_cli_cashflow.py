"""`procure cashflow` in every format and `compare --horizon / --rank-by horizon` (tests/data/cashflow_basic):
the figures and rankings read from the analysis's evaluation in process, the table, the workbook, the options and
the refusals through the command.

Figures by hand are those of tests/test_cashflow.py: delta's month 1 costs 127,475 (net rent 109,500, fees
6,150, staff 10,000, software 1,825; SLA credits shown, not counted), its 30 months 9,874,145, its commitment 7,198,670
(fixed fees and the per-GPU-hour surcharge on committed hours).
"""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, header_cells, run

HORIZON_KEYS = ("total_commitment", "total_cost", "npv_cost", "horizon_cost_per_task")
OFFERS = {"delta", "foxtrot", "golf", "hotel", "india"}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


@pytest.fixture
def ws(data_dir) -> Path:
    return data_dir / "cashflow_basic"


def cashflow(ws: Path, *args: str):
    return run("cashflow", "-w", ws, "--as-of", AS_OF, *args)


def flows(ws: Path, fmt: str, offer: str | None = None, horizon: int | None = None) -> str:
    """`procure cashflow --format fmt [--offer ID] [--horizon N]` as rendered in process from the analysis's
    evaluation (procure/analysis/usecases/plans.py cash_flows, procure/render/cashflow.py); the command's own
    options, screens and exit codes are tested through it below."""
    from procure.analysis.usecases import cash_flows
    from procure.render.cashflow import cashflow_text

    return cashflow_text(cash_flows(ws, date.fromisoformat(AS_OF), horizon, offer, None).evaluation, offer, fmt)


def compared(ws: Path, horizon: int | None = None, rank_by_horizon: bool = False):
    """The evaluation `procure compare [--horizon N] [--rank-by horizon]` ranks, computed in process."""
    from procure.analysis.usecases import comparison

    return comparison(ws, date.fromisoformat(AS_OF), horizon=horizon, rank_by_horizon=rank_by_horizon).evaluation


# --- cashflow ------------------------------------------------------------------------------------


def test_table_of_every_offer_ranked_by_the_horizon(ws):
    result = cashflow(ws)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "Over the horizon" in out
    # horizon.months of procure.yaml (30) and the renewal rule are stated
    words = " ".join(out.split())  # the caption wraps at the terminal width
    assert "Horizon 30 months from 2026-11-29" in words
    assert "renews at the raw index" in words and "(horizon.renewal: index)" in words
    lines = out.splitlines()
    delta = next(line for line in lines if "│ delta" in line)
    cells = [c.strip() for c in delta.split("│")[1:-1]]
    assert cells[1:5] == ["delta", "24 mo", "1", "7,198,670"]
    assert cells[5] == "9,874,145"
    # ranked by the horizon figure: india (flat 3.20) first, then delta, hotel, foxtrot; golf is not acceptable
    ranks = {c[1]: c[0] for c in ([x.strip() for x in line.split("│")[1:-1]] for line in lines if line.startswith("│"))}
    assert ranks == {"india": "1", "delta": "2", "hotel": "3", "foxtrot": "4", "golf": "—"}


def test_table_of_one_offer_shows_each_month_and_the_notes(ws):
    result = cashflow(ws, "--offer", "delta")
    assert result.exit_code == 0, result.stderr
    assert "Cash flow: delta (Delta Compute)" in result.stdout
    month1 = next(line for line in result.stdout.splitlines() if line.startswith("│     1 "))
    cells = [c.strip() for c in month1.split("│")[1:-1]]
    # the expected SLA credit after the total, not in it: 0.0950213 x 146,000 = 13,873
    assert cells == [
        "1",
        "term",
        "50",
        "0",
        "109,500",
        "6,150",
        "10,000",
        "1,825",
        "0",
        "0",
        "0",
        "0",
        "0",
        "127,475",
        "-13,873",
        "3,577,000",
    ]
    assert "note: after its 24-month term the offer renews at the raw index" in " ".join(result.stdout.split())


def test_top_with_one_offers_schedule_is_refused_not_ignored(ws):
    assert_error(cashflow(ws, "--offer", "delta", "--top", "2"), "--top", "--offer shows one offer's schedule")


def test_json_carries_the_figures_and_the_schedule(ws):
    payload = json.loads(flows(ws, "json"))
    assert payload["as_of"] == AS_OF and payload["horizon_months"] == 30 and payload["currency"] == "USD"
    assert payload["rank_by"] == "horizon_cost_per_task"
    offers = {o["id"]: o for o in payload["offers"]}
    assert set(offers) == OFFERS
    delta = offers["delta"]
    assert delta["total_commitment"] == pytest.approx(7_198_670)
    assert delta["total_cost"] == pytest.approx(9_874_145)
    assert len(delta["cashflow"]["months"]) == 31
    assert delta["cashflow"]["months"][1]["total"] == pytest.approx(127_475)
    assert delta["cashflow"]["renewal"] == "index"
    ranked = sorted((o for o in payload["offers"] if o["rank"]), key=lambda o: o["rank"])
    assert [o["id"] for o in ranked] == ["india", "delta", "hotel", "foxtrot"]

    one = json.loads(flows(ws, "json", "golf", 12))
    assert [o["id"] for o in one["offers"]] == ["golf"] and one["horizon_months"] == 12
    assert len(one["offers"][0]["cashflow"]["months"]) == 13


def test_csv_of_every_offer_and_of_one(ws):
    rows = list(csv.DictReader(io.StringIO(flows(ws, "csv"))))
    assert list(rows[0]) == [
        "rank",
        "id",
        "term_months",
        "total_commitment",
        "total_cost",
        "npv_cost",
        "horizon_cost_per_task",
        "cost_per_task",
    ]
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == OFFERS
    assert float(by_id["delta"]["total_commitment"]) == pytest.approx(7_198_670)
    assert float(by_id["delta"]["total_cost"]) == pytest.approx(9_874_145)
    assert by_id["golf"]["rank"] == "" and by_id["india"]["rank"] == "1"

    one = list(csv.DictReader(io.StringIO(flows(ws, "csv", "delta"))))
    assert len(one) == 31
    assert [one[1][k] for k in ("month", "phase")] == ["1", "term"]
    assert float(one[1]["total"]) == pytest.approx(127_475)
    assert float(one[30]["exit"]) == pytest.approx(7_000)
    assert one[25]["phase"] == "renewal" and float(one[25]["rent"]) == pytest.approx(365_000)


def test_markdown(ws):
    text = flows(ws, "markdown")
    assert text.startswith("# Cash flow over 30 months")
    assert "ranked by horizon cost per task" in text
    assert "| delta |" in text and "7,198,670" in text
    one = flows(ws, "markdown", "delta")
    assert "| 1 | term |" in one and "127,475" in one


def test_xlsx_with_out(ws, tmp_path):
    from openpyxl import load_workbook

    out = tmp_path / "sub" / "cashflow.xlsx"
    result = cashflow(ws, "--format", "xlsx", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    book = load_workbook(out)
    assert "Cash flow" in book.sheetnames
    flows = list(book["Cash flow"].iter_rows(values_only=True))
    header = flows[0]
    assert header[:4] == ("Offer", "Month", "Phase", "GPUs")
    assert len(flows) == 1 + 5 * 31
    delta1 = next(r for r in flows[1:] if r[0] == "delta" and r[1] == 1)
    total = delta1[header.index("Total USD")]
    assert isinstance(total, (int, float)) and total == pytest.approx(127_475)  # a number, not text
    comparison = list(book["Comparison"].iter_rows(values_only=True))
    keys = comparison[0]
    delta = next(r for r in comparison[1:] if r[1] == "delta")
    assert delta[keys.index("total_commitment")] == pytest.approx(7_198_670)


def test_xlsx_without_out_exits_2(ws):
    result = cashflow(ws, "--format", "xlsx")
    assert result.exit_code == 2
    assert "--out" in result.stderr
    assert result.stdout == ""


def test_unknown_offer_exits_2(ws):
    result = cashflow(ws, "--offer", "zulu")
    assert result.exit_code == 2
    assert "no offer with id 'zulu'" in result.stderr and "delta" in result.stderr
    assert result.stdout == ""


def test_horizon_option_replaces_procure_yaml(ws):
    payload = json.loads(flows(ws, "json", horizon=24))
    assert payload["horizon_months"] == 24
    delta = next(o for o in payload["offers"] if o["id"] == "delta")
    # 24 months: no renewal, the exit costs in month 24
    assert delta["total_cost"] == pytest.approx(1_753_780 + 127_475 + 11 * 242_450 + 12 * 249_020 + 7_000)


# --- compare --horizon / --rank-by horizon -------------------------------------------------------


def test_compare_ranks_by_the_horizon_figure(ws):
    ev = compared(ws, 24, rank_by_horizon=True)
    assert ev.horizon_months == 24 and ev.rank_by == "horizon_cost_per_task"
    for offer in ev.offers:
        assert set(HORIZON_KEYS) <= offer.metrics.keys()
        assert all(offer.metrics[k] is not None for k in HORIZON_KEYS), offer.id
        assert offer.cashflow.horizon_months == 24
    ranked = [o for o in ev.offers if o.rank is not None]
    assert [o.rank for o in ranked] == [1, 2, 3, 4]
    costs = [o.metrics["horizon_cost_per_task"] for o in ranked]
    assert costs == sorted(costs)
    assert [o.id for o in ranked] == ["india", "delta", "hotel", "foxtrot"]
    # the snapshot ranks hotel first
    snapshot = compared(ws)
    assert [o.id for o in snapshot.offers if o.rank] == ["hotel", "india", "delta", "foxtrot"]
    assert snapshot.rank_by == "cost_per_task"


def test_compare_with_a_horizon_but_the_snapshot_ranking(ws):
    ev = compared(ws, 24)
    assert ev.rank_by == "cost_per_task"
    assert [o.id for o in ev.offers if o.rank] == ["hotel", "india", "delta", "foxtrot"]
    assert all(set(HORIZON_KEYS) <= o.metrics.keys() for o in ev.offers)
    delta = next(o for o in ev.offers if o.id == "delta")
    assert delta.metrics["total_commitment"] == pytest.approx(7_198_670)


def test_rank_by_horizon_takes_horizon_months_from_procure_yaml(ws):
    ev = compared(ws, rank_by_horizon=True)
    assert ev.horizon_months == 30 and ev.rank_by == "horizon_cost_per_task"


def test_rank_by_horizon_without_a_horizon_exits_2(data_dir):
    # tests/data/basic has no horizon.months
    result = run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "--rank-by", "horizon")
    assert result.exit_code == 2
    assert "--rank-by: ranking by the horizon needs --horizon N" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("old", "new", "line", "problem"),
    [
        ("  escalator: 0.03\n", "  escalator: -0.6\n", 21, "contract.escalator: must be at least -0.5 (got -0.6)"),
        (
            "  ramp: {gpus_by_month: [50, 100]}\n",
            "  ramp: {gpus_by_month: [50, -10]}\n",
            22,
            "contract.ramp.gpus_by_month[1]: must be at least 0 (got -10)",
        ),
        (
            "rate_per_point: 0.05, cap: 0.30,",
            "rate_per_point: 0.05, cap: 1.5,",
            23,
            "contract.sla_credits.cap: must be at most 1 (got 1.5)",
        ),
    ],
)
@pytest.mark.parametrize("command", [("cashflow",), ("compare", "--horizon", "24")])
def test_bad_contract_terms_exit_2_with_file_line_field(workspace_copy, old, new, line, problem, command):
    root = workspace_copy("cashflow_basic")
    offer = root / "offers" / "delta.yaml"
    edit(offer, old, new)
    assert new.strip() in offer.read_text().splitlines()[line - 1]  # the line the problem names
    result = run(*command, "-w", root, "--as-of", AS_OF)
    assert result.exit_code == 2
    assert f"offers/delta.yaml:{line}: {problem}" in result.stderr.splitlines()
    assert result.stdout == ""


def test_every_bad_contract_term_is_reported_at_once(workspace_copy):
    root = workspace_copy("cashflow_basic")
    offer = root / "offers" / "delta.yaml"
    edit(offer, "  escalator: 0.03\n", "  escalator: -0.6\n")
    edit(offer, "[50, 100]", "[50, -10]")
    edit(offer, "cap: 0.30,", "cap: 1.5,")
    result = run("validate", "-w", root)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert "offers/delta.yaml:21: contract.escalator: must be at least -0.5 (got -0.6)" in lines
    assert "offers/delta.yaml:22: contract.ramp.gpus_by_month[1]: must be at least 0 (got -10)" in lines
    assert "offers/delta.yaml:23: contract.sla_credits.cap: must be at most 1 (got 1.5)" in lines


def test_compare_ranked_by_the_horizon_shows_the_sort_column_in_every_format(ws):
    args = ("compare", "-w", ws, "--as-of", AS_OF, "--horizon", "24", "--rank-by", "horizon")
    ev = json.loads(run(*args, "--format", "json").stdout)
    figures = {o["id"]: o["metrics"]["horizon_cost_per_task"] for o in ev["offers"]}
    table = run(*args).stdout
    assert "USD/1k tasks 24 mo" in header_cells(table)  # USD per 1,000 tasks over 24 months
    assert "Ranked by the cost per successful task over 24 months" in " ".join(table.split())
    india_row = next(line for line in table.splitlines() if "india" in line)
    assert f"{figures['india'] * 1000:.2f}" in india_row
    markdown = run(*args, "--format", "markdown").stdout
    assert "USD/1k tasks 24 mo" in markdown and f"{figures['india'] * 1000:.2f}" in markdown
    rows = list(csv.DictReader(io.StringIO(run(*args, "--format", "csv").stdout)))
    assert {r["rank_by"] for r in rows} == {"horizon_cost_per_task"}
    assert float(next(r for r in rows if r["id"] == "india")["horizon_cost_per_task"]) == pytest.approx(
        figures["india"]
    )
    # ranked by the snapshot, --horizon still shows the horizon figures (beside, not as the sort key);
    # without --horizon there is no horizon column
    snapshot = run("compare", "-w", ws, "--as-of", AS_OF, "--horizon", "24").stdout
    assert "USD/1k tasks 24 mo" in header_cells(
        snapshot
    ) and "Ranked by the cost per successful task over" not in " ".join(snapshot.split())
    assert "USD/1k tasks 24 mo" not in header_cells(run("compare", "-w", ws, "--as-of", AS_OF).stdout)


def test_a_total_below_the_commitment_is_explained(ws):
    """india: a 36-month term from month 1 on a 30-month horizon: 6 committed months fall outside."""
    data = json.loads(cashflow(ws, "--format", "json").stdout)
    india = next(o for o in data["offers"] if o["id"] == "india")["cashflow"]
    assert india["total_cost"] < india["total_commitment"]
    note = "the term runs to month 36, past the 30-month horizon: its last 6 months are committed but not in the total"
    assert any(note in n for n in india["notes"])
    assert note in " ".join(cashflow(ws, "--offer", "india").stdout.split())
    overview = " ".join(cashflow(ws).stdout.split())
    assert "india: the total (7,417,500) is below the commitment (8,409,600)" in overview
    # an offer whose total exceeds its commitment (delta renews after 24 months) gets no such note
    delta = next(o for o in data["offers"] if o["id"] == "delta")["cashflow"]
    assert delta["total_cost"] > delta["total_commitment"]
    assert not any(n.startswith("the total (") for n in delta["notes"])
