"""FOCUS billing exports into the month's invoice (procure/io/focus.py, `procure actuals import FILE.csv`).
The specification's own sample is in tests/data/focus/ (SOURCES.md there); figures are worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from importhelp import run

from procure.io.workspace import load_workspace

FOCUS = Path(__file__).parent / "data" / "focus"

HEADER = (
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ConsumedQuantity,"
    "ConsumedUnit,InvoiceId,CommitmentDiscountId,CommitmentDiscountStatus,BillingCurrency"
)


def invoices(ws: Path) -> list[str]:
    return (ws / "actuals" / "alpha" / "invoices.csv").read_text().splitlines()


def test_the_specifications_sample_is_one_month_of_invoice(workspace_copy):
    ws = workspace_copy("basic")
    sample = FOCUS / "focus_1.2_commitment_flexibility_2_resources.csv"
    # its usage is in plain hours of a made-up VM_MEDIUM: no GPU-hours until the rows are named
    refused = run("actuals", "import", sample, "--offer", "alpha", "-w", ws)
    assert (
        refused.exit_code == 2
        and "focus_1.2_commitment_flexibility_2_resources.csv:4: ConsumedUnit: 2023-01: no GPU-hours"
        in (refused.output)
    )
    assert not (ws / "actuals").exists()
    result = run("actuals", "import", sample, "--gpu-filter", "SkuId=vm_medium", "--offer", "alpha", "-w", ws)
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
                "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,29200.00,29200.00,7300,GPU-Hours,INV-10,null,null,USD",
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
    # October: 29,200 for 7,300 hours; 12.50 of storage (GB-Month, not GPU capacity) is other spend, stated and
    # left out of the amount; the tax 2,336 is not counted: 29,200
    # November: usage 28,800 + the commitment's purchase 1,000 + the unused commitment 0 + the adjustment 40 = 29,840;
    # the credit (billed -1,460) is kept apart, as 1,460 credited
    assert invoices(ws)[1:] == ["2026-10,7300,,29200,FOCUS", "2026-11,7200,,29840,FOCUS"]
    assert (ws / "actuals" / "alpha" / "credits.csv").read_text().splitlines() == [
        "month,credits,invoices",
        "2026-11,1460,INV-11",
    ]
    out = result.output
    assert (
        "2026-10: billed 29,200.00 USD for 7,300 GPU-hours" in out
        and "tax 2,336.00 (not counted" in out
        and "other spend 12.50 (effective 12.50; not GPU capacity, not in the amount: 250 GB-Month)" in out
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
            "2026-11-01T00:00:00Z,2026-11-02T00:00:00Z,2026-11-01T00:00:00Z,Usage,1,1,1,GPU-Hour,,,,USD",
            ":3: ChargePeriodEnd",
            "must be after ChargePeriodStart (2026-11-02T00:00:00Z)",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,null,1,1,GPU-Hour,,,,USD",
            ":3: BilledCost",
            "required: a number",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,abc,1,1,GPU-Hour,,,,USD",
            ":3: BilledCost",
            "must be a number (got 'abc')",
        ),
        (
            "2026-11-01,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,1,GPU-Hour,,,,USD",
            ":3: BillingPeriodStart",
            "must be a UTC date-time",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00+01:00,2026-12-01T00:00:00Z,Usage,1,1,1,GPU-Hour,,,,USD",
            ":3: ChargePeriodStart",
            "must be a UTC date-time",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,-30,GPU-Hour,,,,USD",
            ":3: ConsumedQuantity",
            "2026-11: the month's hours net to -5: more usage reversed than used",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,1,,,,,USD",
            ":3: ConsumedUnit",
            "required where ConsumedQuantity is stated",
        ),
        (
            "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1,1,1,GPU-Hour,,,,EUR",
            ":3: BillingCurrency",
            "'EUR', but the file's first charge is billed in 'USD'",
        ),
        ("2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,1", ":3", "5 fields, the header has 12"),
    ],
)
def test_a_bad_row_names_file_line_and_field_and_nothing_is_written(workspace_copy, tmp_path, row, where, message):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    good = "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,100,100,25,GPU-Hour,INV-1,,,USD"
    bill.write_text(f"{HEADER}\n{good}\n{row}\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert f"focus.csv{where}: {message}" in result.output
    assert not (ws / "actuals").exists()


def test_a_bill_in_another_currency_than_the_offers_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")  # alpha is priced in the workspace's USD
    bill = tmp_path / "focus.csv"
    bill.write_text(
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,100,100,25,GPU-Hour,INV-1,,,EUR\n"
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
    assert result.exit_code == 2 and "focus.csv:2: ConsumedUnit: 2026-11: no GPU-hours: no Usage row" in result.output
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
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,28000,28000,7000,GPU-Hours,,,,USD\n"
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
        f"{HEADER}\n2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,28800,28800,7200,GPU-Hours,INV-11,,,USD\n"
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
    assert result.exit_code == 2
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
                "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,400,400,100,GPU-Hours,INV-11,,,USD",
                # the vendor takes back 25 hours it metered twice (FOCUS allows any decimal quantity)
                "2026-11-01T00:00:00Z,2026-11-20T00:00:00Z,2026-11-21T00:00:00Z,Usage,-100,-100,-25,GPU-Hours,INV-11,,,USD",
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
    "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,,29200,7300,GPU-Hours",
    "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,,28800,7200,GPU-Hours",
    # billed with November, correcting October: 10 hours were over-metered (and their 40 refunded)
    "2026-11-01T00:00:00Z,2026-10-05T00:00:00Z,2026-10-06T00:00:00Z,Usage,Correction,-40,-10,GPU-Hours",
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


def test_a_file_holding_only_the_corrections_of_a_month_corrects_the_invoice_imported_before(workspace_copy, tmp_path):
    from procure.io.actuals import read_invoices

    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                CORRECTED[0],
                CORRECTED[2],
                CORRECTED[3],
                "2026-11-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,Invoice,1,1,GPU-Hours",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert "focus.csv:4: ChargeClass: must be Correction or null (got 'Invoice')" in result.output
    # November's export, which carries corrections of October: with no October kept there is nothing to correct
    november = tmp_path / "november.csv"
    november.write_text("\n".join(CORRECTED[:1] + CORRECTED[2:]) + "\n")
    result = run("actuals", "import", november, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert (
        "november.csv: ChargeClass: 2026-10: the file holds only corrections of this month (ChargeClass Correction, "
        "billed in 2026-11) and no invoice of 2026-10 is kept to correct: import the export of 2026-10 first, or "
        "with it"
    ) in result.output
    assert result.problems == 1
    assert not (ws / "actuals").exists()
    october = tmp_path / "october.csv"
    october.write_text("\n".join(CORRECTED[:2]) + "\n")
    assert run("actuals", "import", october, "--offer", "alpha", "-w", ws).exit_code == 0
    for _ in range(2):  # the same export imported twice corrects once
        result = run("actuals", "import", november, "--offer", "alpha", "-w", ws)
        assert result.exit_code == 0, result.output
        assert invoices(ws) == [
            "month,gpu_hours,output_tokens,amount,invoice_id",
            "2026-10,7300,,29200,FOCUS",
            "2026-10,-10,,-25,FOCUS correction 2026-11",
            "2026-11,7200,,28800,FOCUS",
        ]
    assert (
        "november.csv 2026-10: only corrections, billed later, of the month's invoice imported before: -25.00 and "
        "-10 GPU-hours added to it"
    ) in " ".join(result.output.split())
    # October as the scorecard reads it: 7,300 - 10 = 7,290 hours; 29,200 - 40 + 15 = 29,175
    problems: list = []
    months = read_invoices(ws / "actuals" / "alpha" / "invoices.csv", "invoices.csv", problems)
    assert problems == []
    assert (months["2026-10"].gpu_hours, months["2026-10"].amount) == (7290, 29175)
    # October's export imported again keeps November's corrections of it
    assert run("actuals", "import", october, "--offer", "alpha", "-w", ws).exit_code == 0
    assert "2026-10,-10,,-25,FOCUS correction 2026-11" in invoices(ws)


def test_a_date_time_without_its_zone_is_read_as_utc_with_a_note(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    # the FOCUS-Sample-Data 1.0 files' form: no 'T', no 'Z'; FOCUS's date-times are all UTC
    row = (
        '"2024-09-01 00:00:00","2024-09-{d:02d} 22:00:00","2024-09-{d:02d} 23:00:00",'
        '"Usage","1","1","1","GPU-Hours",,,,"USD"'
    )
    bill.write_text(HEADER + "\n" + "\n".join(row.format(d=d) for d in range(1, 6)) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2024-09,5,,5,FOCUS"]  # five rows of 1 GPU-hour at 1
    said = " ".join(result.output.split())
    assert (
        "focus.csv: date-times without a time zone read as UTC, as FOCUS requires every date-time to be (FOCUS 1.2 "
        "specification/attributes/datetime_format.md): ChargePeriodStart (5 row(s) from line 2, '2024-09-01 "
        "22:00:00'), ChargePeriodEnd (5 row(s) from line 2, '2024-09-01 23:00:00'), BillingPeriodStart (5 row(s) "
        "from line 2, '2024-09-01 00:00:00')"
    ) in said


def test_a_date_time_in_another_zone_is_one_problem_per_column(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    row = (
        '"2024-09-01T00:00:00+02:00","2024-09-{d:02d}T22:00:00+02:00","2024-09-{d:02d}T23:00:00+02:00",'
        '"Usage","1","1","1","GPU-Hours",,,,"USD"'
    )
    bill.write_text(HEADER + "\n" + "\n".join(row.format(d=d) for d in range(1, 6)) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    # five rows, three date columns: three problems, each at the first row that has it
    assert result.problems == 3
    assert (
        "focus.csv:2: ChargePeriodStart: must be a UTC date-time like 2026-11-01T00:00:00Z (got "
        "'2024-09-01T22:00:00+02:00'); 4 more row(s) after it write the column so"
    ) in " ".join(result.output.split())
    assert "focus.csv:2: BillingPeriodStart:" in result.output and "focus.csv:2: ChargePeriodEnd:" in result.output
    assert not (ws / "actuals").exists()


WIDE = (
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ConsumedQuantity,"
    "ConsumedUnit,PricingQuantity,PricingUnit,CommitmentDiscountStatus,SkuId,SkuMeter,ChargeDescription,x_UsageType"
)
NOV = "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z"


def test_only_gpu_capacity_gives_gpu_hours_and_the_rest_is_other_spend(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                WIDE,
                # AWS: 10 instance-hours of an 8-GPU p6-b200.48xlarge, named by the usage type: 80 GPU-hours
                f"{NOV},Usage,1000,1000,10,Hours,10,Hours,,SKU1,,,USW2-BoxUsage:p6-b200.48xlarge",
                # the same machine named only in the description: 2 hours, 16 GPU-hours
                f"{NOV},Usage,200,200,2,Hrs,2,Hrs,,SKU2,,$100 per On Demand Linux p6-b200.48xlarge Instance Hour,",
                # Azure: 5 hours of a 4-GPU ND GB200 v6 VM, its meter written with spaces: 20 GPU-hours
                f"{NOV},Usage,300,300,5,1 Hour,5,1 Hour,,SKU3,ND128isr NDR GB200 v6,,",
                # Lambda: 3 hours of gpu_8x_b200_sxm6: 24 GPU-hours
                f"{NOV},Usage,120,120,3,Hours,3,Hours,,gpu_8x_b200_sxm6,,,",
                # stated in GPU-hours: 6 GPU-hours as they are
                f"{NOV},Usage,30,30,6,GPU-Hours,6,GPU-Hours,,SKU5,,,",
                # hours that are not GPU-hours: other spend 1+2+3+4+5+6 = 21
                f"{NOV},Usage,1,1,7,LCU-Hours,7,LCU-Hours,,SKU6,,,",
                f"{NOV},Usage,2,2,9,vCPU-Hours,9,vCPU-Hours,,SKU7,,,",
                f"{NOV},Usage,3,3,11,GB Hours,11,GB Hours,,SKU8,,,",
                f"{NOV},Usage,4,4,13,OCPU Hours,13,OCPU Hours,,SKU9,,,",
                f"{NOV},Usage,5,5,720,Hours,720,Hours,,SKU10,,$0.045 per NAT Gateway Hour,USW2-NatGateway-Hours",
                f"{NOV},Usage,6,6,720,Hours,720,Hours,,SKU11,,,USW2-PublicIPv4:InUseAddress",
                # no ConsumedQuantity: its PricingQuantity counts (1 hour of the 8-GPU machine)
                f"{NOV},Usage,100,100,,,1,Hours,,SKU12,,,BoxUsage:p6-b200.48xlarge",
                # an unused commitment: its 4 hours of the 8-GPU machine were paid, not used: 32 GPU-hours unused
                f"{NOV},Usage,0,400,,,4,Hours,Unused,SKU13,,,BoxUsage:p6-b200.48xlarge",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    # GPU-hours 80 + 16 + 20 + 24 + 6 + 8 = 154; amount 1000 + 200 + 300 + 120 + 30 + 100 + 0 = 1750
    assert invoices(ws)[1:] == ["2026-11,154,,1750,FOCUS"]
    out = result.output
    assert "billed 1,750.00 for 154 GPU-hours; effective cost 2,150.00" in out  # 1750 + the unused 400
    assert (
        "GPU-hours from the hours of ND128isr_NDR_GB200_v6 (4 GPUs), gpu_8x_b200 (8 GPUs), p6-b200.48xlarge (8 GPUs)"
        in out
    )
    assert "2 row(s) without ConsumedQuantity counted by PricingQuantity" in out
    assert "unused commitment 400.00 (32 GPU-hours committed, not used)" in out
    assert (
        "other spend 21.00 (effective 21.00; not GPU capacity, not in the amount: 11 GB Hours, 1,440 Hours, "
        "7 LCU-Hours, 13 OCPU Hours, 9 vCPU-Hours)"
    ) in out


def test_gpu_filter_names_the_gpu_rows_and_their_gpus(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                WIDE,
                f"{NOV},Usage,6400,6400,100,Hours,100,Hours,,NODE-B200X8,,,",  # a neocloud node of 8 GPUs
                f"{NOV},Usage,50,50,100,Hours,100,Hours,,STORAGE-NODE,,,",
            ]
        )
        + "\n"
    )
    result = run(
        "actuals", "import", bill, "--gpu-filter", "SkuId=b200x8", "--gpus-per-unit", "8", "--offer", "alpha", "-w", ws
    )
    assert result.exit_code == 0, result.output
    # 100 node-hours of 8 GPUs = 800 GPU-hours for 6,400; the storage node's 50 is other spend
    assert invoices(ws)[1:] == ["2026-11,800,,6400,FOCUS"]
    assert "other spend 50.00" in result.output


@pytest.mark.parametrize(
    "options, message",
    [
        (["--gpu-filter", "SkuId"], "--gpu-filter: COLUMN=VALUE, a FOCUS column and the text its GPU rows hold"),
        (["--gpus-per-unit", "8"], "--gpus-per-unit: counts the GPUs of the rows --gpu-filter names: give it"),
        (["--gpu-filter", "InstanceType=b200"], "focus.csv:1: --gpu-filter names the column 'InstanceType'"),
    ],
)
def test_a_bad_gpu_filter_is_refused(workspace_copy, tmp_path, options, message):
    """The command's options (--gpu-filter, --gpus-per-unit) are read by the command: run as a user runs it."""
    from clihelp import assert_error
    from clihelp import run as procure

    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(f"{WIDE}\n{NOV},Usage,6400,6400,100,GPU-Hours,100,GPU-Hours,,SKU,,,\n")
    result = procure("actuals", "import", bill, *options, "--offer", "alpha", "-w", ws)
    assert_error(result)
    assert message in result.output
    assert not (ws / "actuals").exists()


def test_an_unused_commitment_to_something_else_is_other_spend(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text(
        "\n".join(
            [
                WIDE,
                f"{NOV},Usage,800,800,100,GPU-Hours,100,GPU-Hours,,SKU1,,,",
                # a CPU savings plan unused: its 50 vCPU-Hours (PricingQuantity) paid 0 billed, 20 effective
                f"{NOV},Usage,0,20,,,50,vCPU-Hours,Unused,SKU2,,,",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2026-11,100,,800,FOCUS"]
    assert "other spend 0.00 (effective 20.00; not GPU capacity, not in the amount: 50 vCPU-Hours)" in result.output
    assert "unused commitment" not in result.output


HOUR_ROW = "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z,Usage,4,4,1,GPU-Hours,INV-11,,,USD"


def test_a_stream_is_read_a_row_at_a_time_and_its_faults_are_located(workspace_copy, tmp_path, monkeypatch):
    import gzip

    from procure.io import focus

    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    # 300 rows of 1 GPU-hour at 4, the 200th with a byte that is not UTF-8: named at its own line, 201
    rows = [HOUR_ROW] * 300
    rows[199] = rows[199].replace("INV-11", "INV-\xe9")
    data = ("\n".join([HEADER, *rows]) + "\n").encode("utf-8").replace("INV-\xe9".encode(), b"INV-\xe9")
    bill.write_bytes(data)
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert "focus.csv:201: not valid UTF-8 text" in result.output
    # the same compressed: the line is found through gzip too
    packed = tmp_path / "focus.csv.gz"
    packed.write_bytes(gzip.compress(data))
    assert (
        "focus.csv.gz:201: not valid UTF-8 text"
        in run("actuals", "import", packed, "--offer", "alpha", "-w", ws).output
    )
    # a NUL byte deep in the file: binary, whatever came before it
    bill.write_bytes(("\n".join([HEADER, *[HOUR_ROW] * 300]) + "\n\x00\n").encode())
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "focus.csv: binary file: expected UTF-8 text" in result.output
    # a line longer than a row can be is refused at its line, never held whole
    monkeypatch.setattr(focus, "MAX_LINE_CHARS", 500)
    bill.write_text("\n".join([HEADER, HOUR_ROW, HOUR_ROW + "x" * 600]) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "focus.csv:3: a line longer than 500 characters: not a FOCUS row" in result.output
    # decompressed past the limit: refused while reading, not after
    monkeypatch.setattr(focus, "MAX_FOCUS_BYTES", 20_000)
    packed.write_bytes(gzip.compress(("\n".join([HEADER, *[HOUR_ROW] * 1_000]) + "\n").encode()))
    assert packed.stat().st_size < 20_000  # 1,000 rows of 101 characters decompress to about 101,000 bytes
    result = run("actuals", "import", packed, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert "focus.csv.gz: file is too large once decompressed (limit 20,000 bytes)" in result.output
    # a file of nothing but bad rows stops at the problem limit
    monkeypatch.setattr(focus, "MAX_ROW_PROBLEMS", 5)
    bill.write_text("\n".join([HEADER, *["1,2,3"] * 50]) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert "focus.csv:6: not read further: 5 problems so far" in result.output
    assert result.problems == 6
    assert not (ws / "actuals").exists()


def test_many_rows_sum_as_they_stream(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    # 5,000 rows of 1 GPU-hour at 4 each (gzip-free): 5,000 GPU-hours, 20,000 by hand
    bill.write_text("\n".join([HEADER, *[HOUR_ROW] * 5_000]) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2026-11,5000,,20000,FOCUS"]


COST_HEADER = (
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,ConsumedQuantity,ConsumedUnit"
)


@pytest.mark.parametrize(
    "rows, said",
    [
        # 900,000 for 0.0001 GPU-hours: 9e9 per GPU-hour, against alpha's 4.00 (20 x 4 = 80 at most)
        (
            [f"{NOV},Usage,900000,0.0001,GPU-Hours"],
            "focus.csv:2: ConsumedQuantity: 2026-11: 900,000.00 for 0.0001 GPU-hours is 9e+09 per GPU-hour, over 80 "
            "(20 times the offer's 4 per GPU-hour)",
        ),
        # 0 GPU-hours billed 900,000
        (
            [f"{NOV},Usage,900000,0,GPU-Hours"],
            "focus.csv:2: ConsumedQuantity: 2026-11: 900,000.00 billed for GPU capacity of 0 GPU-hours",
        ),
        # the hours of a reversal cancel the hours used, not the money: 1,000 for 10 - 10 = 0 GPU-hours
        (
            [f"{NOV},Usage,1000,10,GPU-Hours", f"{NOV},Usage,0,-10,GPU-Hours"],
            "focus.csv:3: ConsumedQuantity: 2026-11: 1,000.00 billed for GPU capacity of 0 GPU-hours",
        ),
        # Instance-Hours are not GPU-hours: no GPU-hours at all
        ([f"{NOV},Usage,900000,100,Instance-Hours"], "focus.csv:2: ConsumedUnit: 2026-11: no GPU-hours"),
    ],
)
def test_a_month_whose_gpu_hours_cannot_be_true_for_its_cost_is_refused(workspace_copy, tmp_path, rows, said):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    bill.write_text("\n".join([COST_HEADER, *rows]) + "\n")
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())
    assert not (ws / "actuals").exists()


def test_a_month_at_twenty_times_the_price_passes_and_a_commitment_bought_ahead_is_not_set_against_its_hours(
    workspace_copy, tmp_path
):
    ws = workspace_copy("basic")
    bill = tmp_path / "focus.csv"
    # 80 for 1 GPU-hour: exactly 20 x alpha's 4.00, kept; and a year's commitment bought this month (96,000,
    # Purchase) with 10 hours used at 40: the usage's 40 / 10 = 4 per GPU-hour, the purchase left out of it
    bill.write_text(
        "\n".join(
            [
                COST_HEADER,
                f"{NOV},Usage,80,1,GPU-Hours",
                "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Purchase,96000,,",
                "2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,2026-11-01T00:00:00Z,Usage,40,10,GPU-Hours",
            ]
        )
        + "\n"
    )
    result = run("actuals", "import", bill, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2026-10,10,,96040,FOCUS", "2026-11,1,,80,FOCUS"]


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_a_large_export_is_read_in_bounded_memory(tmp_path, compressed):
    import gzip
    import tracemalloc

    from procure.io.focus import read_focus

    # 20,000 rows (about 2 MB of text): one GPU-hour at 4 in each tenth row, 0.1 GB of storage at 0.01 in the
    # others. Read a row at a time, the peak is a few blocks, not the file (the whole text, then every row,
    # took about 16 times the file: a 200 MB export peaked at 3.24 GB); measured 2026-12-07: 150 kB plain, 240 kB
    # gzip, whatever the file's size
    rows = [HOUR_ROW if i % 10 == 0 else HOUR_ROW.replace("4,4,1,GPU-Hours", "0.01,0.01,0.1,GB") for i in range(20_000)]
    text = ("\n".join([HEADER, *rows]) + "\n").encode()
    path = tmp_path / ("focus.csv.gz" if compressed else "focus.csv")
    path.write_bytes(gzip.compress(text) if compressed else text)
    del rows
    problems: list = []
    tracemalloc.start()
    try:
        months, _ = read_focus(path, "focus.csv", problems)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems == []
    # by hand: 2,000 GPU-hours at 4 = 8,000; the storage is other spend, 18,000 x 0.01 = 180
    november = months["2026-11"]
    assert (november.gpu_hours, november.amount) == (2000, 8000)
    assert round(november.other_spend, 6) == 180
    assert peak < 512 * 1024 < len(text) / 2, (peak, len(text))
