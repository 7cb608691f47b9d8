"""FOCUS billing exports into the month's invoice (procure/io/focus.py, `procure actuals import FILE.csv`).
The specification's own sample is in tests/data/focus/ (SOURCES.md there); figures are worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from procure.cli import app
from procure.io.workspace import load_workspace

FOCUS = Path(__file__).parent / "data" / "focus"
runner = CliRunner()

HEADER = (
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ConsumedQuantity,"
    "ConsumedUnit,InvoiceId,CommitmentDiscountId,CommitmentDiscountStatus,BillingCurrency"
)


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def invoices(ws: Path) -> list[str]:
    return (ws / "actuals" / "alpha" / "invoices.csv").read_text().splitlines()


def test_the_specifications_sample_is_one_month_of_invoice(workspace_copy):
    ws = workspace_copy("basic")
    result = run(
        "actuals", "import", FOCUS / "focus_1.2_commitment_flexibility_2_resources.csv", "--offer", "alpha", "-w", ws
    )
    assert result.exit_code == 0, result.output
    # billed: the commitment's hourly fee 2.00 (Purchase) + two VM_MEDIUM hours covered by it (Usage, 0.00 each);
    # hours: ConsumedQuantity 1.00 Hour on each Usage row; effective: 0 + 1.00 + 1.00 (the fee spread over the usage)
    assert invoices(ws) == ["month,gpu_hours,output_tokens,amount,invoice_id", "2023-01,2,,2,FOCUS"]
    assert "2023-01: billed 2.00 for 2 GPU-hours; effective cost 2.00" in result.output
    assert not (ws / "actuals" / "alpha" / "credits.csv").exists()  # no Credit row: nothing credited


def test_credits_tax_and_invoices_are_kept_apart(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                HEADER,
                "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,29200.00,29200.00,7300,Hours,INV-10,null,null,USD",
                "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,12.50,12.50,250,GB-Month,INV-10,,,USD",
                "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Tax,2336.00,2336.00,,,INV-10,,,USD",
                "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,28800.00,28800.00,7200,GPU-Hours,INV-11,,,USD",
                "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Purchase,1000.00,0,,,INV-11,CD-1,,USD",
                "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,0,250.00,,,INV-11,CD-1,Unused,USD",
                "2026-11-01T00:00:00Z,2026-11-10T00:00:00Z,2026-11-11T00:00:00Z,Credit,-1460.00,-1460.00,,,INV-11,,,USD",
                "2026-11-01T00:00:00Z,2026-11-30T00:00:00Z,2026-12-01T00:00:00Z,Adjustment,40.00,40.00,,,,,,USD",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    # October: 29,200 for 7,300 hours + 12.50 of storage (not hours); the tax 2,336 is not counted: 29,212.50
    # November: usage 28,800 + the commitment's purchase 1,000 + the unused commitment 0 + the adjustment 40 = 29,840;
    # the credit (billed -1,460) is kept apart, as 1,460 credited
    assert invoices(ws)[1:] == ["2026-10,7300,,29212.5,FOCUS", "2026-11,7200,,29840,FOCUS"]
    assert (ws / "actuals" / "alpha" / "credits.csv").read_text().splitlines() == [
        "month,credits,invoices",
        "2026-11,1460,INV-11",
    ]
    out = result.output
    assert (
        "2026-10: billed 29,212.50 USD for 7,300 GPU-hours" in out
        and "tax 2,336.00 (not counted" in out
        and "usage in GB-Month not counted" in out
    )
    assert (
        "credits 1,460.00 (kept apart" in out
        and "unused commitment 250.00" in out
        and "1 charge(s) on no invoice yet" in out
    )
    loaded = load_workspace(ws)
    assert loaded.actuals["alpha"].credits == {"2026-11": (1460.0, "INV-11")}
    assert loaded.actuals["alpha"].invoices["2026-11"].amount == 29840
    assert "actuals/alpha/credits.csv" in {f.path for f in loaded.inputs}


@pytest.mark.parametrize(
    "row, where, message",
    [
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Refund,-5,-5,,,,,,USD",
            ":3: ChargeCategory",
            "must be one of Usage, Purchase, Tax, Credit, Adjustment (got 'Refund')",
        ),
        # the hour 30 is one the specification's own commitment_discount_purchase_scenario_3.csv writes
        (
            "2026-11-01T00:00:00Z,2026-11-01T20:00:00Z,2026-12-01T30:00:00Z,Purchase,0.50,0,,,,,,USD",
            ":3: ChargePeriodEnd",
            "must be a UTC date-time like 2026-11-01T00:00:00Z (got '2026-12-01T30:00:00Z')",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,2026-11-01T00:00:00Z,Usage,1,1,1,Hour,,,,USD",
            ":3: ChargePeriodEnd",
            "must be after ChargePeriodStart (2026-11-02T00:00:00Z)",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,null,1,1,Hour,,,,USD",
            ":3: BilledCost",
            "required: a number",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,abc,1,1,Hour,,,,USD",
            ":3: BilledCost",
            "must be a number (got 'abc')",
        ),
        (
            "2026-11-01,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,1,Hour,,,,USD",
            ":3: BillingPeriodStart",
            "must be a UTC date-time",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00+01:00,2026-12-01T00:00:00Z,Usage,1,1,1,Hour,,,,USD",
            ":3: ChargePeriodStart",
            "must be a UTC date-time",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,-30,Hour,,,,USD",
            ":3: ConsumedQuantity",
            "2026-11: the month's hours net to -5: more usage reversed than used",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,1,,,,,USD",
            ":3: ConsumedUnit",
            "required where ConsumedQuantity is stated",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,1,Hour,,,,EUR",
            ":3: BillingCurrency",
            "'EUR', but the file's first charge is billed in 'USD'",
        ),
        ("2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1", ":3", "5 fields, the header has 12"),
    ],
)
def test_a_bad_row_names_file_line_and_field_and_nothing_is_written(workspace_copy, tmp_path, row, where, message):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    good = "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,100,100,25,Hour,INV-1,,,USD"
    bill.write_text(f"{HEADER}\n{good}\n{row}\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"focus.csv{where}: {message}" in result.output
    assert not (ws / "actuals").exists()


def test_a_bill_in_another_currency_than_the_offers_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")  # alpha is priced in the workspace's USD
    bill = tmp_path / "focus.csv"
    bill.write_text(
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,100,100,25,Hour,INV-1,,,EUR\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert (
        result.exit_code == 2 and "focus.csv:2: BillingCurrency: 'EUR', but the offer is priced in USD" in result.output
    )
    assert not (ws / "actuals").exists()


def test_a_month_without_hours_or_a_missing_column_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Purchase,100,0,,,INV-1,CD-1,,USD\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "ConsumedQuantity: 2026-11: no Usage charge in hours" in result.output
    bill.write_text("BilledCost,ChargeCategory,ChargePeriodStart\n1,Usage,2026-11-01T00:00:00Z\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert (
        result.exit_code == 2
        and (
            "focus.csv:1: a FOCUS file needs the columns BilledCost, ChargeCategory, ChargePeriodStart,"
            " ChargePeriodEnd: missing ChargePeriodEnd"
        )
        in result.output
    )
    assert not (ws / "actuals").exists()


def test_a_month_in_a_focus_file_and_an_invoices_sheet_is_invoiced_twice(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    sheet = tmp_path / "invoices.csv"
    sheet.write_text("month,gpu_hours,output_tokens,amount\n2023-01,2,,2\n")
    result = run(
        "actuals",
        "import",
        sheet,
        FOCUS / "focus_1.2_commitment_flexibility_2_resources.csv",
        "--offer",
        "alpha",
        "-w",
        ws,
    )
    assert result.exit_code == 2 and "2023-01 is invoiced twice (also in" in result.output
    assert not (ws / "actuals").exists()


def test_a_focus_month_replaces_the_kept_invoices_of_that_month_and_the_next_export_replaces_it(
    workspace_copy, tmp_path
):
    ws = workspace_copy("basic")
    sheet = tmp_path / "invoices.csv"
    sheet.write_text(
        "month,gpu_hours,output_tokens,amount,invoice_id\n2026-11,7000,,28000,A-1\n2026-11,100,,400,A-2\n2026-10,7300,,29200,A-0\n"
    )
    assert run("actuals", "import", sheet, "--offer", "alpha", "-w", ws).exit_code == 0
    bill = tmp_path / "focus.csv"
    bill.write_text(
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,28000,28000,7000,Hours,,,,USD\n"
    )
    first = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert first.exit_code == 0, first.output
    # November's two invoices give way to the export (never 28,400 + 28,000); October's stays
    assert (
        "invoice 2026-11 A-1: replaced by this import's FOCUS export" in first.output
        and "invoice 2026-11 A-2: replaced" in first.output
    )
    assert invoices(ws)[1:] == ["2026-10,7300,,29200,A-0", "2026-11,7000,,28000,FOCUS"]
    # the next export of November: its charges now invoiced, 200 hours more, a credit
    bill.write_text(
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,28800,28800,7200,Hours,INV-11,,,USD\n"
        "2026-11-01T00:00:00Z,2026-11-10T00:00:00Z,2026-11-11T00:00:00Z,Credit,-500,-500,,,INV-11,,,USD\n"
    )
    second = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert second.exit_code == 0 and "invoice 2026-11 FOCUS: replaced by this import" in second.output
    assert invoices(ws)[1:] == ["2026-10,7300,,29200,A-0", "2026-11,7200,,28800,FOCUS"]
    assert load_workspace(ws).actuals["alpha"].invoices["2026-11"].amount == 28800
    assert load_workspace(ws).actuals["alpha"].credits == {"2026-11": (500.0, "INV-11")}


def _quoted(lines: list[str]) -> str:
    """The rows as an export that quotes every field writes them (csv.QUOTE_ALL), with CRLF line ends."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    for line in lines:
        writer.writerow(line.split(","))
    return buffer.getvalue()


NOVEMBER = [
    HEADER,
    "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,28800.00,28800.00,7200,GPU-Hours,INV-11,,,USD",
    "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Tax,100,100,,,INV-11,,,USD",
]


@pytest.mark.parametrize("name", ["focus.csv", "focus.csv.gz", "export-00001"])
def test_a_quoted_export_with_a_bom_and_crlf_plain_or_gzip_reaches_the_focus_reader(workspace_copy, tmp_path, name):
    import gzip

    ws = workspace_copy("basic")
    bill = tmp_path / name
    text = "\ufeff" + _quoted(NOVEMBER)
    assert text.startswith('\ufeff"BillingPeriodStart","ChargePeriodStart"')
    data = text.encode("utf-8")
    # a plain .csv; a .csv.gz as AWS Data Exports write it; gzip known by its bytes alone, whatever the name
    bill.write_bytes(data if name == "focus.csv" else gzip.compress(data))
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    # 28,800 for 7,200 hours; the tax (100) is not counted
    assert invoices(ws)[1:] == ["2026-11,7200,,28800,FOCUS"]


def test_a_gzip_file_that_is_not_focus_or_a_contract_commitment_file_is_refused_clearly(workspace_copy, tmp_path):
    import gzip

    ws = workspace_copy("basic")
    sheet = tmp_path / "invoices.csv.gz"
    sheet.write_bytes(gzip.compress(b"month,gpu_hours,output_tokens,amount\n2026-11,1,,4\n"))
    result = run("actuals", "import", sheet, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "invoices.csv.gz: compressed with gzip: procure reads a FOCUS export compressed" in result.output
    broken = tmp_path / "focus.csv.gz"
    broken.write_bytes(gzip.compress(_quoted(NOVEMBER).encode())[:-30])  # cut short: no end of stream
    result = run("actuals", "import", broken, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "focus.csv.gz: not a readable gzip file" in result.output
    # FOCUS 1.3's contract commitment dataset: quoted as the exports write it
    terms = tmp_path / "commitments.csv"
    terms.write_text(
        '"ContractCommitmentId","ContractCommitmentCost","ContractCommitmentCategory","BillingCurrency"\n'
        '"CC-1","120000","Spend","USD"\n'
    )
    result = run("actuals", "import", terms, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert "commitments.csv:1: a FOCUS contract commitment file" in result.output
    assert not (ws / "actuals").exists()


def test_a_quoted_invoice_sheet_is_an_invoice_sheet(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    sheet = tmp_path / "invoices.csv"
    sheet.write_text(
        '"month","gpu_hours","output_tokens","amount","invoice_id"\r\n"2026-11","7000","","28000","A-1"\r\n'
    )
    result = run("actuals", "import", sheet, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2026-11,7000,,28000,A-1"]


def test_a_usage_reversal_nets_within_its_month(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                HEADER,
                "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,400,400,100,Hours,INV-11,,,USD",
                # the vendor takes back 25 hours it metered twice (FOCUS allows any decimal quantity)
                "2026-11-01T00:00:00Z,2026-11-20T00:00:00Z,2026-11-21T00:00:00Z,Usage,-100,-100,-25,Hours,INV-11,,,USD",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    # 100 - 25 = 75 hours; 400 - 100 = 300 billed
    assert invoices(ws)[1:] == ["2026-11,75,,300,FOCUS"]
    assert "25 GPU-hours reversed (negative ConsumedQuantity), netted" in result.output


CORRECTED = [
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,BilledCost,ConsumedQuantity,ConsumedUnit",
    "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,,29200,7300,Hours",
    "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,,28800,7200,Hours",
    # billed with November, correcting October: 10 hours were over-metered (and their 40 refunded)
    "2026-11-01T00:00:00Z,2026-10-05T00:00:00Z,2026-10-06T00:00:00Z,Usage,Correction,-40,-10,Hours",
    # a correction of the price alone: no quantity (FOCUS allows a null ConsumedQuantity on a correction)
    "2026-11-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Adjustment,Correction,15,,",
]


def test_a_correction_is_applied_to_the_month_it_corrects(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text("\n".join(CORRECTED) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    # October: 7,300 - 10 = 7,290 hours, 29,200 - 40 + 15 = 29,175; November as billed
    assert invoices(ws)[1:] == ["2026-10,7290,,29175,FOCUS", "2026-11,7200,,28800,FOCUS"]
    assert "2 correction(s) billed in 2026-11 applied to 2026-10 (ChargeClass Correction): -25.00, -10 GPU-hours" in (
        result.output
    )


def test_a_file_holding_only_the_corrections_of_a_month_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                CORRECTED[0],
                CORRECTED[2],
                CORRECTED[3],
                "2026-11-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,Invoice,1,1,Hours",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "focus.csv:4: ChargeClass: must be Correction or null (got 'Invoice')" in result.output
    bill.write_text("\n".join(CORRECTED[:1] + CORRECTED[2:]) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert (
        "focus.csv:4: ChargeClass: 2026-10: the file corrects this month (ChargeClass Correction, billed in 2026-11) "
        "but holds none of its charges: import the export of 2026-10 with it"
    ) in result.output
    assert not (ws / "actuals").exists()


def test_a_date_time_without_its_zone_is_one_problem_per_column(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    # the FOCUS-Sample-Data 1.0 files' form: no 'T', no 'Z'
    row = (
        '"2024-09-01 00:00:00","2024-09-{d:02d} 22:00:00","2024-09-{d:02d} 23:00:00",'
        '"Usage","1","1","1","Hours",,,,"USD"'
    )
    bill.write_text(HEADER + "\n" + "\n".join(row.format(d=d) for d in range(1, 6)) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    # five rows, three date columns: three problems, each at the first row that has it
    assert "3 problems found; nothing was written." in result.output
    assert (
        "focus.csv:2: ChargePeriodStart: must be a UTC date-time like 2026-11-01T00:00:00Z (got '2024-09-01 22:00:00') "
        "(no time zone: FOCUS's Date/Time Format requires the 'T' and the 'Z' of UTC"
    ) in result.output
    assert "4 more row(s) after it write the column so" in result.output
    assert "focus.csv:2: BillingPeriodStart:" in result.output and "focus.csv:2: ChargePeriodEnd:" in result.output
    assert not (ws / "actuals").exists()
