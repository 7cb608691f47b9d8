"""`procure compare --format xlsx --out f.xlsx`: a workbook whose numbers are numbers, equal to the JSON.

openpyxl writes a float with 16 significant digits ("%.16g"), Excel keeps 15: a value can come back
one unit in the 17th digit away from the JSON's shortest repr, so values are compared to 1e-15.

The basic workspace's workbook and JSON are rendered in process from the analysis (tests of their sheets, cells and
numbers); the command's writing of the file, its refusals and the other workspaces' workbooks through it.
"""

from __future__ import annotations

import io
import json
from datetime import date, datetime

import pytest
from clihelp import AS_OF, run

from procure.analysis.record import EXTRA_METRIC_KEYS, METRIC_KEYS

openpyxl = pytest.importorskip("openpyxl")

SAME = {"rel": 1e-15, "abs": 0}


def workbook_bytes(workspace) -> bytes:  # type: ignore[no-untyped-def]
    """What `procure compare --format xlsx --out FILE` writes, rendered in process from the analysis
    (procure/analysis/usecases/compare.py comparison with the workbook's sheets, procure/render/workbook.py)."""
    from procure.analysis.usecases import comparison
    from procure.render.workbook import to_xlsx

    found = comparison(workspace, date.fromisoformat(AS_OF), workbook=True)
    rec = found.recommendation
    return to_xlsx(
        found.evaluation, found.inputs, found.purchase, found.horizon_flows, found.sensitivity, rec.plan_failed
    )


def cashflow_json(workspace) -> dict:  # type: ignore[no-untyped-def]
    """`procure cashflow -f json`'s document, rendered in process (procure/render/cashflow.py)."""
    from procure.analysis.usecases import cash_flows
    from procure.render.cashflow import cashflow_text

    return json.loads(
        cashflow_text(cash_flows(workspace, date.fromisoformat(AS_OF), None, None, None).evaluation, None, "json")
    )


def sensitivity_json(workspace) -> dict:  # type: ignore[no-untyped-def]
    """`procure sensitivity -f json`'s document, rendered in process (procure/render/sensitivity.py)."""
    from procure.analysis.usecases import sensitivities
    from procure.render.sensitivity import sensitivity_text

    found = sensitivities(workspace, date.fromisoformat(AS_OF), None, None, None)
    return json.loads(sensitivity_text(found.result, found.evaluation.currency, "json"))


@pytest.fixture
def workbook_and_json(data_dir):
    from procure.analysis.usecases import comparison
    from procure.render.ranking import ranking_text

    ev = comparison(data_dir / "basic", date.fromisoformat(AS_OF)).evaluation
    as_json = json.loads(ranking_text(ev.model_copy(update={"command": "compare"}), "json"))
    return openpyxl.load_workbook(io.BytesIO(workbook_bytes(data_dir / "basic"))), as_json


def test_the_command_writes_the_workbook_and_says_so(data_dir, tmp_path):
    target = tmp_path / "out" / "f.xlsx"
    result = run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "--format", "xlsx", "--out", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"wrote {target}\n"
    assert target.read_bytes() == workbook_bytes(data_dir / "basic")  # the workbook the tests below read


def sheet_rows(sheet):
    rows = list(sheet.iter_rows())
    headers = [c.value for c in rows[0]]
    return headers, [dict(zip(headers, r)) for r in rows[1:]]


def test_workbook_sheets(workbook_and_json):
    book, _ = workbook_and_json
    # the live sheets a spreadsheet user works in, then the figures as evaluated (JSON names)
    # then one sheet per analysis with a table (no demand: here, so no plan)
    assert book.sheetnames == [
        "Offers",
        "Assumptions",
        "Comparison",
        "Gates",
        "Ratings",
        "Horizon",
        "Sensitivity",
        "Inputs",
    ]


def test_comparison_numbers_are_numbers_equal_to_the_json_metrics(workbook_and_json):
    book, ev = workbook_and_json
    headers, rows = sheet_rows(book["Comparison"])
    assert headers == [
        "rank",
        "id",
        "vendor",
        "grade",
        "acceptable",
        "kind",
        "pricing_basis",
        *METRIC_KEYS,
        *EXTRA_METRIC_KEYS,
        "reasons",
    ]
    assert [r["id"].value for r in rows] == [o["id"] for o in ev["offers"]] == ["bravo", "alpha", "charlie"]
    checked = 0
    for cells, offer in zip(rows, ev["offers"]):
        # JSON adds beside each cost per task its figure per 1,000 tasks; the sheet keeps the JSON names of the metrics
        companions = {k for k in offer["metrics"] if k.endswith("_per_1000_tasks")}
        assert set(offer["metrics"]) - companions == set(METRIC_KEYS + EXTRA_METRIC_KEYS)
        assert companions == {
            k.replace("_per_task", "_per_1000_tasks")
            for k in METRIC_KEYS + EXTRA_METRIC_KEYS
            if k.endswith("_per_task")
        }
        for key, value in offer["metrics"].items():
            if key in companions:
                continue
            cell = cells[key]
            if value is None:
                assert cell.value is None, (offer["id"], key)
                continue
            assert cell.data_type == "n", (offer["id"], key, cell.value)
            assert isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool)
            assert cell.value == pytest.approx(value, **SAME), (offer["id"], key)
            checked += 1
        assert cells["acceptable"].value is offer["acceptable"] and cells["acceptable"].data_type == "b"
        assert cells["rank"].value == offer["rank"]
        assert cells["reasons"].value in ("; ".join(offer["reasons"]), None)
    assert checked > 60
    # by hand (tests/test_cli_compare.py): alpha costs 4.75 per GPU-hour in full, 1,080 x 0.995 x 0.97 x 0.9 x 0.8
    # tasks,
    # x the means of the availability and utilization factors at the point
    from pointmeans import DELIVERY_MEAN

    alpha = rows[1]
    assert (alpha["rank"].value, alpha["rank"].data_type) == (2, "n")
    assert alpha["full"].value == pytest.approx(4.75, **SAME)
    assert alpha["point_cost_per_task"].value == pytest.approx(4.75 / (1080 * 0.995 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN))
    assert rows[2]["rank"].value is None  # charlie is not ranked


def test_gates_and_inputs_sheets(workbook_and_json):
    book, ev = workbook_and_json
    headers, gates = sheet_rows(book["Gates"])
    assert headers == ["id", "gate", "passed", "headroom", "detail"]
    expected = [(o["id"], g) for o in ev["offers"] for g in o["gates"]]
    assert len(gates) == len(expected)
    for cells, (offer_id, gate) in zip(gates, expected):
        assert (cells["id"].value, cells["gate"].value, cells["passed"].value, cells["detail"].value) == (
            offer_id,
            gate["gate"],
            gate["passed"],
            gate["detail"],
        )
        if gate["margin"] is None:
            assert cells["headroom"].value is None
        else:
            assert cells["headroom"].data_type == "n" and cells["headroom"].value == pytest.approx(
                gate["margin"], **SAME
            )
    inputs = [[c.value for c in r] for r in book["Inputs"].iter_rows()]
    assert inputs[:4] == [["as_of", AS_OF], ["currency", "USD"], ["rank_by", "cost_per_task"], ["path", "sha256"]]
    assert inputs[4:] == [[i["path"], i["sha256"]] for i in ev["inputs"]]


def test_uncertainty_sheet_when_computed(data_dir, tmp_path):
    target = tmp_path / "u.xlsx"
    result = run(
        "compare",
        "-w",
        data_dir / "basic",
        "--as-of",
        AS_OF,
        "-f",
        "xlsx",
        "-o",
        target,
        "--uncertainty",
        "--draws",
        "200",
        "--seed",
        "3",
    )
    assert result.exit_code == 0, result.stderr
    ev = json.loads(
        run(
            "compare",
            "-w",
            data_dir / "basic",
            "--as-of",
            AS_OF,
            "-f",
            "json",
            "--uncertainty",
            "--draws",
            "200",
            "--seed",
            "3",
        ).stdout
    )
    book = openpyxl.load_workbook(target)
    assert book.sheetnames == [
        "Offers",
        "Assumptions",
        "Comparison",
        "Gates",
        "Ratings",
        "Uncertainty",
        "Horizon",
        "Sensitivity",
        "Inputs",
    ]
    headers, rows = sheet_rows(book["Uncertainty"])
    assert headers == ["id", "p10", "p50", "p90", "prob_cheapest"]
    for cells, offer in zip(rows, ev["offers"]):
        for key in ("p10", "p50", "p90", "prob_cheapest"):
            value = (offer["uncertainty"] or {}).get(key)
            if value is None:
                assert cells[key].value is None
            else:
                assert cells[key].data_type == "n" and cells[key].value == pytest.approx(value, **SAME)


def test_xlsx_needs_out(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, "--format", "xlsx")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--format xlsx: a workbook is written to a file: add --out comparison.xlsx" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_workbook_times_are_the_as_of_date(workbook_and_json):
    book, _ = workbook_and_json
    assert book.properties.created == datetime(2026, 11, 29)
    assert book.properties.modified == datetime(2026, 11, 29)


def test_the_offers_sheet_has_units_formats_a_frozen_header_filters_and_formulas(workbook_and_json):
    book, ev = workbook_and_json
    sheet = book["Offers"]
    headers = [c.value for c in sheet[1]]
    # units in the headers (the basic workspace is in USD)
    for header in (
        "List price USD/GPU-h",
        "Rent USD/GPU-h",
        "Staff USD/GPU-h",
        "Full USD/GPU-h",
        "Throughput tok/s/GPU",
        "USD/task",
        "USD per 1,000 tasks",
        "Rank",
    ):
        assert header in headers
    assert sheet.freeze_panes == "B2"  # the header row and the offer column stay in view
    assert sheet.auto_filter.ref == f"A1:{sheet.cell(row=1, column=len(headers)).column_letter}{len(ev['offers']) + 1}"
    row = {h: c for h, c in zip(headers, sheet[2])}
    assert row["Offer"].value == ev["offers"][0]["id"]
    assert row["USD/task"].data_type == "f" and row["USD/task"].value.startswith("=")  # a formula, not a number
    assert row["Rank"].value.startswith("=IF(") and "SUMPRODUCT(" in row["Rank"].value
    assert row["Rent USD/GPU-h"].value.startswith("=")
    assert row["USD/task"].number_format == "0.000000" and row["Discount"].number_format == "0.0%"
    assert row["List price USD/GPU-h"].font.color.rgb.endswith("1F4E9A")  # an input: blue
    # the staff formula refers to the Assumptions sheet's cells, which hold procure.yaml's values
    assert "Assumptions!$B$2" in row["Staff USD/GPU-h"].value
    assumptions = book["Assumptions"]
    assert (
        assumptions["A2"].value == "Staff cost per FTE-year"
        and assumptions["B2"].value == ev["assumptions"]["fte_cost_year"]
    )
    assert assumptions["C2"].value == "USD/year" and assumptions.freeze_panes is not None
    for name in ("Comparison", "Gates", "Ratings"):
        assert book[name].freeze_panes == "B2" and book[name].auto_filter.ref


def analysis_sheet(book, name):
    """An analysis sheet: units in the headers, a bold frozen header row, filters over every row."""
    sheet = book[name]
    headers, rows = sheet_rows(sheet)
    assert sheet.freeze_panes == "B2" and all(c.font.bold for c in sheet[1])
    assert sheet.auto_filter.ref == f"A1:{sheet.cell(row=1, column=len(headers)).column_letter}{len(rows) + 1}"
    return headers, rows


def test_the_horizon_sheet_is_the_cashflow_commands_table_with_units(workbook_and_json, data_dir):
    book, ev = workbook_and_json
    headers, rows = analysis_sheet(book, "Horizon")
    assert headers == [
        "Rank",
        "Offer",
        "Term months",
        "Delivery month",
        "Commitment USD",
        "Total USD",
        "NPV USD",
        "USD/task over 36 months",
        "USD/task today",
    ]
    flows = cashflow_json(data_dir / "basic")  # 36 months: no horizon.months in basic
    by_id = {o["id"]: o for o in flows["offers"]}
    assert [r["Offer"].value for r in rows] == [o["id"] for o in ev["offers"]]  # the comparison's order and ranks
    for cells, offer in zip(rows, ev["offers"]):
        assert cells["Rank"].value == offer["rank"] and cells["USD/task today"].value == pytest.approx(
            offer["metrics"]["cost_per_task"], **SAME
        )
        for header, key in (
            ("Commitment USD", "total_commitment"),
            ("Total USD", "total_cost"),
            ("NPV USD", "npv_cost"),
            ("USD/task over 36 months", "horizon_cost_per_task"),
        ):
            value = by_id[offer["id"]][key]
            assert cells[header].value is None if value is None else cells[header].value == pytest.approx(value, **SAME)
    assert rows[0]["Total USD"].data_type == "n" and rows[0]["Total USD"].number_format == "#,##0"
    assert rows[0]["USD/task over 36 months"].number_format == "0.000000"


def test_with_a_horizon_every_offers_months_get_a_sheet(data_dir, tmp_path):
    target = tmp_path / "h.xlsx"
    assert (
        run(
            "compare", "--horizon", "12", "-f", "xlsx", "-o", target, "--as-of", AS_OF, "-w", data_dir / "basic"
        ).exit_code
        == 0
    )
    book = openpyxl.load_workbook(target)
    headers, rows = analysis_sheet(book, "Cash flow")
    assert (
        headers[:4] == ["Offer", "Month", "Phase", "GPUs"]
        and "Total USD" in headers
        and headers[-1] == "Successful tasks"
    )
    flows = json.loads(
        run("cashflow", "--horizon", "12", "-f", "json", "--as-of", AS_OF, "-w", data_dir / "basic").stdout
    )
    expected = [(o["id"], m["month"], m["total"]) for o in flows["offers"] for m in o["cashflow"]["months"]]
    assert sorted((r["Offer"].value, r["Month"].value, r["Total USD"].value) for r in rows) == sorted(
        (i, m, pytest.approx(t, **SAME)) for i, m, t in expected
    )


def test_the_sensitivity_sheet_is_the_sensitivity_commands_table(workbook_and_json, data_dir):
    book, _ = workbook_and_json
    headers, rows = analysis_sheet(book, "Sensitivity")
    result = sensitivity_json(data_dir / "basic")
    assert headers[:3] == ["Input", "Low factor", "High factor"] and f"{result['offers'][0]} USD/task at low" in headers
    assert [r["Input"].value for r in rows] == [r["input"] for r in result["rows"]]
    for cells, row in zip(rows, result["rows"]):
        assert cells["Low factor"].value == row["low"] and cells["High factor"].value == row["high"]
        for offer in result["offers"]:
            for end in ("low", "high"):
                value, cell = row[f"costs_{end}"][offer], cells[f"{offer} USD/task at {end}"]
                assert cell.value is None if value is None else cell.value == pytest.approx(value, **SAME)
        assert cells["Ranking flips"].value == ("yes" if row["flips"] else "no")
    assert rows[0][f"{result['offers'][0]} USD/task at low"].number_format == "0.000000"


def test_with_demand_the_plan_and_its_scenarios_get_sheets(tmp_path):
    from planws import config, offer, write

    ws = write(
        tmp_path / "ws",
        config(),
        [
            offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, vendor="=Commit Co"),
            offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
        ],
    )
    target = tmp_path / "plan.xlsx"
    result = run("compare", "-f", "xlsx", "-o", target, "--as-of", AS_OF, "-w", ws)
    assert result.exit_code == 0, result.stderr
    book = openpyxl.load_workbook(target)
    assert book.sheetnames[5:7] == ["Plan", "Plan scenarios"]
    plan = json.loads(run("plan", "-f", "json", "--as-of", AS_OF, "-w", ws).stdout)
    headers, rows = analysis_sheet(book, "Plan")
    assert headers == [
        "Offer",
        "Vendor",
        "Role",
        "Decision",
        "GPUs",
        "Term months",
        "First month",
        "Last month",
        "First day",
        "Last day",
        "Price USD/GPU-h",
        "Price USD/task",
        "Share of tasks",
    ]
    assert [(r["Offer"].value, r["Role"].value, r["GPUs"].value) for r in rows] == [
        (ln["offer"], ln["role"].replace("_", "-"), ln["gpus"]) for ln in plan["plan"]
    ]
    commit = next(r for r in rows if r["Role"].value == "commit")
    # 100 GPUs serve the low path's 100 GPU-months of demand every month (planws: 788,400 tasks a GPU-month)
    assert commit["GPUs"].value == 100 and commit["Price USD/GPU-h"].value == 4.0
    assert commit["Vendor"].data_type == "s" and commit["Vendor"].value == "=Commit Co"  # text, never a formula
    assert commit["Share of tasks"].number_format == "0.0%"
    headers, rows = analysis_sheet(book, "Plan scenarios")
    assert [r["Scenario"].value for r in rows] == [s["name"] for s in plan["scenarios"]] == ["low", "high", "worst 10%"]
    for cells, scenario in zip(rows, plan["scenarios"]):
        assert cells["USD/task"].value == pytest.approx(scenario["cost_per_task"], **SAME)
        assert cells["USD per 1,000 tasks"].value == pytest.approx(scenario["cost_per_task"] * 1000, **SAME)


def test_a_plan_that_cannot_be_solved_leaves_a_plan_sheet_saying_why(tmp_path):
    """decisionws with plan.max_vendor_share 0.4: two vendors at 0.4 each cannot hold the demand, so no plan
    (tests/test_decision.py): the workbook's Plan sheet states that, instead of being absent."""
    import decisionws

    root = decisionws.write(tmp_path / "ws", vendor_share=0.4)
    target = tmp_path / "f.xlsx"
    result = run("compare", "-w", root, "--as-of", AS_OF, "--out", target)
    assert result.exit_code == 0, result.stderr
    book = openpyxl.load_workbook(target)
    assert "Plan" in book.sheetnames and "Plan scenarios" not in book.sheetnames
    [note] = [r for r in book["Plan"].iter_rows(min_row=2, values_only=True)]
    assert note[0].startswith("The purchase plan could not be solved (")
    assert "(0.4 x 2 usable vendors is below 1: no split can serve the demand)" in note[0]
    assert note[0].endswith("; the best single offer is recommended instead.")
