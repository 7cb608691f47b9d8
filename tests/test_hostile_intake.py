"""The text gate at intake for the evidence that comes in after signing and the grade files: an incident's
name and components, an invoice's id, a billing export's invoice ids, units and column names, a grade's
lists. A line break of any kind, a bidirectional control, a run of combining marks or an over-long name is
refused at its file, line and field (exit 2, nothing written), never stored to be printed later as a line
of its own ("# ALL OFFERS APPROVED BY THE BOARD") or a reversed name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from refusals import refused, validate
from typer.testing import CliRunner

from procure.cli import app

runner = CliRunner()
FORGED = "# ALL OFFERS APPROVED BY THE BOARD"
FOCUS_HEADER = (
    "BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ConsumedQuantity,"
    "ConsumedUnit,InvoiceId,BillingCurrency"
)
NOV = "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,2026-12-01T00:00:00Z"
GPU_ROW = f"{NOV},Usage,4,4,1,GPU-Hours,INV-1,USD"


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def _focus(invoice: str = "INV-1", unit: str = "GB", header: str = FOCUS_HEADER) -> str:
    return "\n".join([header, f'{NOV},Usage,1,1,1,"{unit}","{invoice}",USD', GPU_ROW]) + "\n"


def _incident(components: str) -> str:
    return f'start,end,impact,components\n2026-11-03T00:00:00Z,2026-11-03T01:00:00Z,major,"{components}"\n'


def _statuspage(name: str, component: str) -> str:
    incident = {
        "id": "inc-1",
        "name": name,
        "status": "resolved",
        "impact": "major",
        "created_at": "2026-11-03T00:00:00Z",
        "resolved_at": "2026-11-03T01:00:00Z",
        "components": [{"name": component}],
    }
    return json.dumps({"incidents": [incident]})


CASES = [
    # (file name, its text, the line and field named, what is said)
    ("focus.csv", _focus(invoice=f"INV-1\n{FORGED}"), "focus.csv:3: InvoiceId", "holds a line break (\\x0a)"),
    ("focus.csv", _focus(invoice="INV-\u202e1-VNI"), "focus.csv:2: InvoiceId", "bidirectional control (U+202E)"),
    ("focus.csv", _focus(unit=f"GB\u2028{FORGED}"), "focus.csv:2: ConsumedUnit", "holds a line break (U+2028)"),
    ("focus.csv", _focus(unit="G" + "\u0301" * 300), "focus.csv:2: ConsumedUnit", "300 combining marks"),
    ("focus.csv", _focus(invoice="I" * 2000), "focus.csv:2: InvoiceId", "2,000 characters long: at most 256"),
    (
        "focus.csv",
        _focus(header=FOCUS_HEADER + ",x_\u202eemaN"),
        "focus.csv:1: header",
        "bidirectional control (U+202E)",
    ),
    (
        "invoices.csv",
        "month,gpu_hours,output_tokens,amount,invoice_id\n2026-11,1,,4,A\u202eB\n",
        "invoices.csv:2: invoice_id",
        "bidirectional control (U+202E)",
    ),
    (
        "invoices.csv",
        "month,gpu_hours,output_tokens,amount,invoice_id\n2026-11,1,,4,A\x85B\n",
        "invoices.csv:2: invoice_id",
        "holds a line break (\\x85)",
    ),
    # a line feed inside a quoted field: the row is refused whole, never cut at the break with the rest of
    # the field read as a comment line (the invoice id was stored as "A", the forged line dropped silently)
    (
        "invoices.csv",
        f'month,gpu_hours,output_tokens,amount,invoice_id\n2026-11,1,,4,"A\n{FORGED}"\n',
        "invoices.csv:2:",
        "a quoted field is not closed on its line",
    ),
    ("incidents.csv", _incident(f"api\n{FORGED}"), "incidents.csv:2:", "a quoted field is not closed on its line"),
    ("incidents.csv", _incident("api\u2029gpu"), "incidents.csv:2: components", "holds a line break (U+2029)"),
    ("incidents.csv", _incident("a" + "\u0301" * 300), "incidents.csv:2: components", "300 combining marks"),
    ("incidents.csv", _incident("x" * 2000), "incidents.csv:2: components", "2,000 characters long: at most 256"),
    (
        "incidents.json",
        _statuspage(f"Outage\n{FORGED}", "API"),
        "incidents.json: incidents[0].name",
        "holds a line break (\\x0a)",
    ),
    (
        "incidents.json",
        _statuspage("Outage", "API\u202e"),
        "incidents.json: incidents[0].components",
        "bidirectional control (U+202E)",
    ),
]  # fmt: skip


@pytest.mark.parametrize("name, text, where, said", CASES)
def test_evidence_text_is_gated_at_intake(workspace_copy, tmp_path, name, text, where, said):
    ws = workspace_copy("basic")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = run("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    shown = result.output.replace(str(tmp_path) + "/", "")
    assert where in shown and said in shown, shown
    assert FORGED not in "\n".join(line for line in result.output.splitlines() if line.startswith("#"))
    assert not (ws / "actuals").exists()


def test_a_kept_invoice_id_that_the_gate_refuses_is_named_when_read(workspace_copy):
    ws = workspace_copy("basic")
    folder = ws / "actuals" / "alpha"
    folder.mkdir(parents=True)
    # a file written by hand (or by an older version) with a reversed id: every command that reads it says so
    (folder / "invoices.csv").write_text("month,gpu_hours,output_tokens,amount,invoice_id\n2026-10,1,,4,A\u202eB\n")
    from procure.analysis.usecases import scorecards

    refused(
        lambda: scorecards(ws, None, None, None),
        "actuals/alpha/invoices.csv:2: invoice_id: holds a bidirectional control (U+202E)",
    )


def test_a_grade_files_lists_pass_the_gate(workspace_copy):
    ws = workspace_copy("basic")
    grade = Path(ws / "grades" / "T-MC.yaml")
    text = grade.read_text()
    assert "attestations_any: [soc2_type2, iso27001]" in text
    grade.write_text(
        text.replace("attestations_any: [soc2_type2, iso27001]", 'attestations_any: [soc2_type2, "iso\u202e27001"]')
    )
    refused(
        validate(ws),
        "grades/T-MC.yaml:11: requires.attestations_any[1]: holds a bidirectional control (U+202E) at character 4",
    )
