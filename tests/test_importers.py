"""RFP spreadsheets to offer files (procure/io/importers.py): CSV and XLSX rows become offers equal to
hand-written expectations, every bad cell is reported with its row and column, formulas are
refused, nothing is written unless everything is good, and the template imports as a valid offer.

tests/data/import_rfp.csv holds two offers (a managed cluster and a bare-metal offer written like
tests/data/basic's bravo) and a blank row; the XLSX sheets are built here with openpyxl.
"""

from __future__ import annotations

import csv
import shutil
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from procure.analysis.evaluate import evaluate
from procure.errors import InputError
from procure.io.importers import import_offers, template_columns, write_template
from procure.io.workspace import load_workspace
from procure.model.inputs import OPERATING_JOBS

AS_OF = date(2026, 11, 29)

DELTA = {
    "id": "delta",
    "vendor": "Delta Cloud",
    "received": date(2026, 11, 1),
    "valid_until": date(2027, 6, 30),
    "region": "us-east",
    "gpu": "B200",
    "gpus": 100,
    "term_months": 12,
    "pricing": {
        "currency": "USD",
        "gpu_hour": 4,
        "discount": 0.05,
        "fees": [{"name": "onboarding", "once": 87600}, {"name": "egress", "per_tb": 73, "tb_per_month": 100}],
    },
    "service": {
        "kind": "managed_cluster",
        "sla": {"availability": 0.995, "node_replacement_hours": 24, "automatic_credits": True},
        "attestations": ["soc2_type2", "iso27001"],
        "tenant_isolation": True,
        "isolated_monitoring": True,
        "health_checks": {"active": "weekly", "passive": True},
    },
    "responsibilities": {job: "customer" if job == "serving_stack" else "provider" for job in OPERATING_JOBS},
    "performance": {"points": [[50, 400], [100, 300], [150, 100]], "points_source": "measured"},
    "notes": "Pilot on 16 nodes, Oct 2026",
}

ECHO = {
    "id": "echo",
    "vendor": "Echo Metal",
    "received": date(2026, 11, 1),
    "valid_until": date(2027, 6, 30),
    "region": "us-west",
    "gpu": "B200",
    "gpus": 100,
    "term_months": 12,
    "pricing": {"currency": "EUR", "gpu_hour": 3},
    "service": {
        "kind": "bare_metal",
        "sla": {"availability": 0.99, "node_replacement_hours": 72},
        "attestations": ["iso27001"],
        "tenant_isolation": True,
        "isolated_monitoring": True,
    },
    "responsibilities": {job: "provider" if job == "hardware_repair" else "customer" for job in OPERATING_JOBS},
    "performance": {"reference": "test-curve"},
}

# One offer as spreadsheet columns, for the sheets built in the tests.
MINIMAL: dict[str, Any] = {
    "id": "foxtrot",
    "vendor": "Foxtrot",
    "received": "2026-11-01",
    "valid_until": "2027-06-30",
    "region": "us-east",
    "gpu": "B200",
    "gpus": "100",
    "term_months": "12",
    "pricing.gpu_hour": "4",
    "service.kind": "managed_cluster",
    "service.sla.availability": "0.995",
    **{f"responsibilities.{job}": "provider" for job in OPERATING_JOBS},
    "performance.points": "100:300",
}


def read(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A CSV with the union of the rows' columns, in first-seen order; missing cells empty."""
    header: list[str] = []
    for row in rows:
        header += [c for c in row if c not in header]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in rows:
            writer.writerow([row.get(c, "") for c in header])
    return path


def write_xlsx(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def problems_of(excinfo: pytest.ExceptionInfo[InputError]) -> list[str]:
    return [str(p) for p in excinfo.value.problems]


@pytest.fixture
def rfp_csv(tmp_path: Path, data_dir: Path) -> Path:
    return Path(shutil.copy(data_dir / "import_rfp.csv", tmp_path / "rfp.csv"))


# --- CSV --------------------------------------------------------------------------------------------


def test_csv_rows_become_offers_equal_to_the_hand_written_ones(rfp_csv, tmp_path):
    out = tmp_path / "offers"
    written = import_offers(rfp_csv, out, force=False)
    assert written == [out / "delta.yaml", out / "echo.yaml"]  # row order; the blank row 4 is skipped
    assert read(out / "delta.yaml") == DELTA
    assert read(out / "echo.yaml") == ECHO
    # the field order of the example offers; fees sit after the price terms, notes last
    delta = read(out / "delta.yaml")
    assert list(delta) == [
        "id",
        "vendor",
        "received",
        "valid_until",
        "region",
        "gpu",
        "gpus",
        "term_months",
        "pricing",
        "service",
        "responsibilities",
        "performance",
        "notes",
    ]
    assert list(delta["pricing"]) == ["currency", "gpu_hour", "discount", "fees"]
    text = (out / "delta.yaml").read_text()
    assert text.startswith("# Imported from rfp.csv, row 2.\nid: delta\n")
    assert "  points: [[50, 400], [100, 300], [150, 100]]\n" in text
    assert "    - {name: egress, per_tb: 73, tb_per_month: 100}\n" in text


def test_imported_offers_load_and_evaluate_in_a_workspace(rfp_csv, workspace_copy):
    root = workspace_copy("basic")
    import_offers(rfp_csv, root / "offers", force=False)
    evaluation = evaluate(load_workspace(root), AS_OF)
    delta, echo, bravo = evaluation.offer("delta"), evaluation.offer("echo"), evaluation.offer("bravo")
    assert delta.acceptable and echo.acceptable
    # delta per GPU-hour: rent 4.00 x (1 - 0.05) = 3.80; fees 87,600 / (100 x 12 x 730) = 0.10 and
    # 73 x 100 TB / (100 x 730) = 0.10; ops: serving_stack is ours, (2 + 4 x 100 / 1000) FTE x 219,000
    # / (100 x 8,760) = 0.60; software 0.05: full 4.65
    assert delta.metrics["rent"] == pytest.approx(3.80)
    assert delta.metrics["fees"] == pytest.approx(0.20)
    assert delta.metrics["full"] == pytest.approx(4.65)
    # echo is bravo's terms typed into a sheet: the same figures at the typical inputs; the expected ones (the means of
    # the draws) agree to sampling error, as Echo Metal's availability is drawn apart from Bravo Metal's (one draw per
    # operator: two operators fail on their own)
    drawn = {"cost_per_task", "cost_per_mtok", "expected_rent_per_task", "costed_capacity_per_gpu_hour"}
    drawn |= {"expected_to_point_ratio", "vs_leader", "price_to_tie"}
    assert {k: v for k, v in echo.metrics.items() if k not in drawn} == {
        k: v for k, v in bravo.metrics.items() if k not in drawn
    }
    assert echo.metrics["point_cost_per_task"] == bravo.metrics["point_cost_per_task"]
    assert echo.metrics["cost_per_task"] == pytest.approx(bravo.metrics["cost_per_task"], rel=1e-3)


def test_csv_bad_rows_name_the_row_and_the_column(tmp_path):
    sheet = write_csv(
        tmp_path / "rfp.csv",
        [
            MINIMAL,
            {**MINIMAL, "id": "golf", "pricing.gpu_hour": "-3", "gpus": "many"},
            {
                **MINIMAL,
                "id": "hotel",
                "received": "2026-13-01",
                "service.sla.availability": "1.5",
                "service.tenant_isolation": "maybe",
            },
        ],
    )
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [
        f"{sheet}:3: gpus: must be a whole number (got 'many')",
        f"{sheet}:3: pricing.gpu_hour: must be greater than 0 (got -3)",
        f"{sheet}:4: received: must be a date like 2026-11-30 (got '2026-13-01')",
        f"{sheet}:4: service.sla.availability: must be at most 1 (got 1.5)",
        f"{sheet}:4: service.tenant_isolation: must be true or false (got 'maybe')",
    ]
    assert not (tmp_path / "offers").exists()  # the good row 2 was not written either


def test_cross_field_rules_and_missing_owners_are_reported_by_column(tmp_path):
    jobs = {f"responsibilities.{job}": "" for job in ("scheduler", "storage")}
    sheet = write_csv(
        tmp_path / "rfp.csv",
        [
            {**MINIMAL, "pricing.per_mtok.input": "1", "pricing.per_mtok.output": "2"},
            {
                **MINIMAL,
                "id": "golf",
                "fees.setup.once": "100",
                "fees.setup.monthly": "10",
                "valid_until": "2026-10-01",
            },
            {**MINIMAL, "id": "hotel", **jobs, "service.sla.availability": ""},
        ],
    )
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    found = problems_of(caught)
    # the bases the row states, whatever kinds of offer there are (procure/model/kinds/ lists them all)
    assert found[0].startswith(f"{sheet}:2: pricing: needs exactly one price basis: gpu_hour, index_linked, per_mtok")
    assert found[0].endswith(" (got gpu_hour, per_mtok)")
    assert found[1:] == [
        f"{sheet}:2: service.kind: per-token pricing (pricing.per_mtok) needs service.kind: managed_serving",
        f"{sheet}:3: fees.setup: a fee has exactly one of once, monthly, gpu_hour, per_tb (got once, monthly)",
        f"{sheet}:3: valid_until: is before received (2026-11-01)",
        f"{sheet}:4: responsibilities: no owner given for: scheduler, storage (every operating job needs provider, "
        "customer or shared)",
        f"{sheet}:4: service.sla.availability: required field is missing (SLA availability)",
    ]


def test_unknown_and_repeated_columns_are_named(tmp_path):
    sheet = tmp_path / "rfp.csv"
    header = list(MINIMAL) + ["pricing.gpu_hours", "responsibilities.cooling", "fees.setup.yearly", "region"]
    with sheet.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerow(list(MINIMAL.values()) + ["1", "provider", "5", "eu"])
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    found = problems_of(caught)
    assert (
        f"{sheet}:1: pricing.gpu_hours: unknown column (the header names field paths such as pricing.gpu_hour; "
        "`procure import --template rfp.xlsx` writes a sheet with every column)" in found
    )
    assert any(
        p.startswith(f"{sheet}:1: responsibilities.cooling: unknown column: not an operating job") for p in found
    )
    assert any(
        p.startswith(f"{sheet}:1: fees.setup.yearly: unknown column: a fee column is fees.<name>.<kind>") for p in found
    )
    assert f"{sheet}:1: region: column given twice (columns E and AB)" in found


def test_duplicate_ids_in_the_sheet(tmp_path):
    sheet = write_csv(tmp_path / "rfp.csv", [MINIMAL, {**MINIMAL, "vendor": "Other"}, {**MINIMAL, "id": "FOXTROT"}])
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [
        f"{sheet}:3: id: duplicate offer id 'foxtrot' (also on row 2; ids name the files, letter case aside)",
        f"{sheet}:4: id: duplicate offer id 'FOXTROT' (also on row 2; ids name the files, letter case aside)",
    ]


def test_points_may_carry_the_time_to_first_token(tmp_path):
    sheet = write_csv(tmp_path / "rfp.csv", [{**MINIMAL, "performance.points": "50:400:0.6; 100:300:0.45"}])
    [path] = import_offers(sheet, tmp_path / "offers", force=False)
    assert read(path)["performance"]["points"] == [[50, 400, 0.6], [100, 300, 0.45]]


def test_contract_terms(tmp_path):
    contract = {
        "contract.escalator_schedule": "7:0.02; 13:0.03",
        "contract.ramp.gpus_by_month": "32, 64, 100",
        "contract.late_delivery.per_week": "5000",
        "contract.termination.notice_months": "6",
        "contract.termination.fee": "150000",
        "contract.sla_credits.rate_per_point": "0.1",
        "contract.sla_credits.automatic": "no",
        "contract.minimum_monthly": "20000",
    }
    sheet = write_csv(tmp_path / "rfp.csv", [{**MINIMAL, **contract}])
    [path] = import_offers(sheet, tmp_path / "offers", force=False)
    assert read(path)["contract"] == {
        "escalator_schedule": [[7, 0.02], [13, 0.03]],
        "ramp": {"gpus_by_month": [32, 64, 100]},
        "late_delivery": {"per_week": 5000},
        "termination": {"notice_months": 6, "fee": 150000},
        "sla_credits": {"rate_per_point": 0.1, "automatic": False},
        "minimum_monthly": 20000,
    }
    assert "  escalator_schedule: [[7, 0.02], [13, 0.03]]\n  ramp: {gpus_by_month: [32, 64, 100]}\n" in path.read_text()

    bad = write_csv(
        tmp_path / "bad.csv",
        [
            {
                **MINIMAL,
                "contract.escalator_schedule": "7:2%",
                "contract.ramp.gpus_by_month": "32, 6.5",
                "contract.sla_credits.cap": "2",
            }
        ],
    )
    with pytest.raises(InputError) as caught:
        import_offers(bad, tmp_path / "offers", force=False)
    assert (
        problems_of(caught)
        == [
            f"{bad}:2: contract.escalator_schedule: must be from-month:rise pairs like 13:0.03; 25:0.03 (got '7:2%')",
            f"{bad}:2: contract.ramp.gpus_by_month: must be whole numbers separated by commas, e.g. 128, 256 (got '32, "
            "6.5')",
            f"{bad}:2: contract.sla_credits.cap: must be at most 1 (got 2)",
        ]
        # (rate_per_point is optional since credits may be given as tiers instead)  # the cells that read are still
        # checked
        # against the model, in the same run
    )


def test_semicolon_separated_csv(tmp_path):
    sheet = tmp_path / "rfp.csv"
    with sheet.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(list(MINIMAL))
        writer.writerow([*MINIMAL.values()][:-1] + ["50:400; 100:300"])
    [path] = import_offers(sheet, tmp_path / "offers", force=False)
    assert read(path)["performance"]["points"] == [[50, 400], [100, 300]]


POINTS_FORM = "must be interactivity:throughput points like 50:420; 100:300, a third value (:ttft seconds) optional"


@pytest.mark.parametrize(
    "cell, message",
    [
        ("50-400", f"{POINTS_FORM} (got '50-400')"),
        ("50:400:0.5:2", f"{POINTS_FORM} (got '50:400:0.5:2')"),
        ("50:400; 100", f"{POINTS_FORM} (got '50:400; 100')"),
        ("50:-400", "must be greater than 0 (got -400)"),
    ],
)
def test_bad_points(tmp_path, cell, message):
    # "50:-400" fails the [x, y] form of a point; pydantic's complaint about the [x, y, ttft] form is left out
    sheet = write_csv(tmp_path / "rfp.csv", [{**MINIMAL, "performance.points": cell}])
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [f"{sheet}:2: performance.points: {message}"]


# --- formulas ---------------------------------------------------------------------------------------


def test_csv_formulas_are_refused(tmp_path):
    sheet = write_csv(
        tmp_path / "rfp.csv", [{**MINIMAL, "pricing.gpu_hour": "=2*2", "vendor": '=HYPERLINK("http://x","y")'}]
    )
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [
        f"{sheet}:2: pricing.gpu_hour: formulas are not evaluated: type the value itself (got '=2*2')",
        f'{sheet}:2: vendor: formulas are not evaluated: type the value itself (got \'=HYPERLINK("http://x","y")\')',
    ]


def with_cached_value(path: Path, old: str, new: str) -> Path:
    """Rewrite the first sheet's XML: openpyxl writes formulas without the result a spreadsheet caches."""
    import zipfile

    with zipfile.ZipFile(path) as book:
        parts = {name: book.read(name) for name in book.namelist()}
    xml = parts["xl/worksheets/sheet1.xml"].decode()
    assert xml.count(old) == 1
    parts["xl/worksheets/sheet1.xml"] = xml.replace(old, new).encode()
    with zipfile.ZipFile(path, "w") as book:
        for name, data in parts.items():
            book.writestr(name, data)
    return path


def test_xlsx_formula_cells_are_refused_even_with_a_cached_value(tmp_path):
    header = list(MINIMAL)
    values: list[Any] = list(MINIMAL.values())
    values[header.index("gpus")] = "=50*2"
    values[header.index("pricing.gpu_hour")] = "=SUM(1,3)"
    sheet = with_cached_value(
        write_xlsx(tmp_path / "rfp.xlsx", header, [values]), "<f>50*2</f><v />", "<f>50*2</f><v>100</v>"
    )
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [
        f"{sheet}:2: gpus: formulas are not evaluated: type the value itself (got '=50*2')",
        f"{sheet}:2: pricing.gpu_hour: formulas are not evaluated: type the value itself (got '=SUM(1,3)')",
    ]
    assert not (tmp_path / "offers").exists()


# --- XLSX -------------------------------------------------------------------------------------------


XLSX_HEADER = [
    "id", "vendor", "received", "valid_until", "region", "gpu", "gpus", "max_gpus", "term_months",
    "pricing.currency", "pricing.gpu_hour", "pricing.prepay_fraction", "fees.support.gpu_hour", "fees.storage.monthly",
    "service.kind", "service.orchestration", "service.sla.availability", "service.sla.automatic_credits",
    "service.attestations", "service.tenant_isolation", "service.isolated_monitoring", "service.health_checks.active",
    *(f"responsibilities.{job}" for job in OPERATING_JOBS),
    "performance.stack", "performance.points", "performance.points_source", "performance.quality_pass_rate",
    "operator.published_tier", "notes",
]  # fmt: skip


def xlsx_row(**changes: Any) -> list[Any]:
    """India: typed cells (numbers, dates, true/false), as a spreadsheet holds them."""
    values = {
        "id": "india", "vendor": "India GPU", "received": datetime(2026, 11, 3), "valid_until": datetime(2027, 3, 31),
        "region": "eu-west", "gpu": "B200", "gpus": 64, "max_gpus": 256.0, "term_months": 6,
        "pricing.currency": "EUR", "pricing.gpu_hour": 3.5, "pricing.prepay_fraction": "0.5",
        "fees.support.gpu_hour": 0.02, "fees.storage.monthly": None,
        "service.kind": "managed_cluster", "service.orchestration": "kubernetes", "service.sla.availability": 0.999,
        "service.sla.automatic_credits": False, "service.attestations": "iso27001", "service.tenant_isolation": True,
        "service.isolated_monitoring": "No", "service.health_checks.active": None,
        **{f"responsibilities.{job}": "shared" if job == "monitoring" else "provider" for job in OPERATING_JOBS},
        "performance.stack": "vllm", "performance.points": "60:280;120:150",
        "performance.points_source": "vendor_claim", "performance.quality_pass_rate": 0.98,
        "operator.published_tier": "silver", "notes": "Line one.\nLine two.",
    }  # fmt: skip
    values.update(changes)
    return [values[c] for c in XLSX_HEADER]


INDIA = {
    "id": "india",
    "vendor": "India GPU",
    "received": date(2026, 11, 3),
    "valid_until": date(2027, 3, 31),
    "region": "eu-west",
    "gpu": "B200",
    "gpus": 64,
    "max_gpus": 256,
    "term_months": 6,
    "pricing": {
        "currency": "EUR",
        "gpu_hour": 3.5,
        "prepay_fraction": 0.5,
        "fees": [{"name": "support", "gpu_hour": 0.02}],
    },
    "service": {
        "kind": "managed_cluster",
        "orchestration": "kubernetes",
        "sla": {"availability": 0.999, "automatic_credits": False},
        "attestations": ["iso27001"],
        "tenant_isolation": True,
        "isolated_monitoring": False,
    },
    "responsibilities": {job: "shared" if job == "monitoring" else "provider" for job in OPERATING_JOBS},
    "performance": {
        "stack": "vllm",
        "points": [[60, 280], [120, 150]],
        "points_source": "vendor_claim",
        "quality_pass_rate": 0.98,
    },
    "operator": {"published_tier": "silver"},
    "notes": "Line one.\nLine two.",
}


def test_xlsx_rows_become_offers_equal_to_the_hand_written_ones(tmp_path, workspace_copy):
    sheet = write_xlsx(
        tmp_path / "rfp.xlsx", XLSX_HEADER, [xlsx_row(), [None] * len(XLSX_HEADER), xlsx_row(id="juliet", vendor=2024)]
    )
    root = workspace_copy("basic")
    written = import_offers(sheet, root / "offers", force=False)
    assert written == [root / "offers" / "india.yaml", root / "offers" / "juliet.yaml"]
    assert read(written[0]) == INDIA
    assert read(written[1]) == {**INDIA, "id": "juliet", "vendor": "2024"}  # a number in a text column is text
    assert (root / "offers" / "juliet.yaml").read_text().startswith("# Imported from rfp.xlsx, row 4.\n")
    assert "notes: |-\n  Line one.\n  Line two.\n" in written[0].read_text()
    ws = load_workspace(root)
    assert [o.id for o in ws.offers] == ["alpha", "bravo", "charlie", "india", "juliet"]


def test_xlsx_bad_row_names_the_row_and_the_column(tmp_path):
    rows = [
        xlsx_row(),
        xlsx_row(id="juliet"),
        xlsx_row(id="kilo", **{"pricing.gpu_hour": -3, "received": "3 Nov 2026", "service.kind": "cloud"}),
    ]
    sheet = write_xlsx(tmp_path / "rfp.xlsx", XLSX_HEADER, rows)
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [
        # as in the design: `rfp.xlsx:4: pricing.gpu_hour: must be greater than 0 (got -3)`
        f"{sheet}:4: pricing.gpu_hour: must be greater than 0 (got -3)",
        f"{sheet}:4: received: must be a date like 2026-11-30 (got '3 Nov 2026')",
        f"{sheet}:4: service.kind: must be one of 'managed_serving', 'managed_cluster', 'bare_metal' or 'owned' (got "
        "'cloud')",
    ]
    assert not (tmp_path / "offers").exists()


def test_xlsx_whole_number_columns_refuse_fractions_and_text_columns_refuse_dates(tmp_path):
    sheet = write_xlsx(
        tmp_path / "rfp.xlsx",
        XLSX_HEADER,
        [xlsx_row(gpus=64.5, region=datetime(2026, 1, 1), **{"service.tenant_isolation": 1})],
    )
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [
        f"{sheet}:2: gpus: must be a whole number (got 64.5)",
        f"{sheet}:2: region: must be text (got 2026-01-01 00:00:00)",
        f"{sheet}:2: service.tenant_isolation: must be true or false (got 1)",
    ]


# --- existing files and --force ---------------------------------------------------------------------


def test_an_existing_file_is_kept_without_force_and_nothing_is_written(rfp_csv, tmp_path):
    out = tmp_path / "offers"
    out.mkdir()
    (out / "echo.yaml").write_text("id: echo\nvendor: kept\n")
    with pytest.raises(InputError) as caught:
        import_offers(rfp_csv, out, force=False)
    assert problems_of(caught) == [
        f"{out / 'echo.yaml'}: already exists (offer on row 3 of rfp.csv): use --force to replace it"
    ]
    assert (out / "echo.yaml").read_text() == "id: echo\nvendor: kept\n"
    assert not (out / "delta.yaml").exists()  # checked before anything was written

    assert import_offers(rfp_csv, out, force=True) == [out / "delta.yaml", out / "echo.yaml"]
    assert read(out / "echo.yaml") == ECHO
    assert sorted(p.name for p in out.iterdir()) == ["delta.yaml", "echo.yaml"]  # no temporary files left


def test_an_id_held_by_another_file_is_refused_even_with_force(rfp_csv, tmp_path):
    out = tmp_path / "offers"
    out.mkdir()
    (out / "delta-old.yml").write_text("id: delta\nvendor: Delta Cloud\n")
    with pytest.raises(InputError) as caught:
        import_offers(rfp_csv, out, force=True)
    assert problems_of(caught) == [
        f"{out / 'delta-old.yml'}: id: already holds offer id 'delta' (row 2 of rfp.csv): remove that file or change "
        "the id"
    ]
    assert sorted(p.name for p in out.iterdir()) == ["delta-old.yml"]


# --- the template -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rfp-template.xlsx", "rfp-template.csv"])
def test_template_round_trip(tmp_path, workspace_copy, name):
    template = tmp_path / name
    write_template(template)
    root = workspace_copy("basic")
    [path] = import_offers(template, root / "offers", force=False)
    assert path == root / "offers" / "example-b200-mc.yaml"
    offer = next(o for o in load_workspace(root).offers if o.id == "example-b200-mc")
    assert offer.service.kind == "managed_cluster"
    assert offer.pricing.gpu_hour == 3.95 and offer.gpus == 512
    assert [(f.name, f.once, f.monthly, f.gpu_hour, f.per_tb, f.tb_per_month) for f in offer.pricing.fees] == [
        ("onboarding", 40000, None, None, None, None),
        ("storage", None, 9000, None, None, None),
        ("support", None, None, 0.04, None, None),
        ("egress", None, None, None, 20, 40),
    ]
    assert offer.performance.points == [(25, 640), (50, 450), (100, 215), (150, 90)]
    assert offer.contract.escalator == 0.03 and offer.contract.exit is not None and offer.contract.exit.egress_tb == 200
    assert evaluate(load_workspace(root), AS_OF).offer("example-b200-mc").metrics["full"] is not None


def test_xlsx_template_has_every_column_and_typed_cells(tmp_path):
    from openpyxl import load_workbook

    template = tmp_path / "rfp.xlsx"
    write_template(template)
    sheet = load_workbook(template).worksheets[0]
    header = [c.value for c in sheet[1]]
    assert header == template_columns()
    for column in ("id", "vendor", "received", "pricing.gpu_hour", "pricing.index_linked.spread",
                   "pricing.per_mtok.output", "pricing.owned.pue", "service.attestations",
                   "service.health_checks.passive", "performance.points", "operator.published_tier", "notes",
                   "fees.onboarding.once", "fees.egress.per_tb", "fees.egress.tb_per_month"):  # fmt: skip
        assert column in header
    assert all(f"responsibilities.{job}" in header for job in OPERATING_JOBS)
    example = {name: cell.value for name, cell in zip(header, sheet[2])}
    assert example["pricing.gpu_hour"] == 3.95 and example["gpus"] == 512 and example["fees.onboarding.once"] == 40000
    assert example["received"] == datetime(2026, 11, 2)
    assert example["service.tenant_isolation"] is True
    assert example["pricing.per_mtok.output"] is None


def test_xlsx_template_offers_a_list_where_the_values_are_fixed(tmp_path):
    """A vendor picks service.kind, health checks, points source, published tier and every job's owner
    from a drop-down: the lists are the values DESIGN.md names, and the example row is within them."""
    from openpyxl import load_workbook

    template = tmp_path / "rfp.xlsx"
    write_template(template)
    sheet = load_workbook(template).worksheets[0]
    header = [c.value for c in sheet[1]]
    letter = {name: sheet.cell(row=1, column=i).column_letter for i, name in enumerate(header, start=1)}
    lists = {}
    for rule in sheet.data_validations.dataValidation:
        assert rule.type == "list" and rule.allow_blank
        values = rule.formula1.strip('"').split(",")
        for ref in str(rule.sqref).split():
            column = "".join(ch for ch in ref.split(":")[0] if ch.isalpha())
            assert ref.startswith(f"{column}2:")  # from the first offer row down, never the header
            lists[next(n for n, c in letter.items() if c == column)] = values
    expected = {
        "service.kind": ["managed_serving", "managed_cluster", "bare_metal", "owned"],
        "pricing.billed_per": ["month", "hour", "minute", "second"],
        "service.health_checks.active": ["none", "daily", "weekly", "monthly"],
        "performance.points_source": ["measured", "vendor_claim", "reference"],
        "operator.published_tier": ["platinum", "gold", "silver", "bronze", "participation_ribbon", "underperform"],
        "operator.published_edition": ["1.0", "2.0", "3.0"],
        "contract.renewal_price": ["escalated", "list"],
        "contract.sla_credits.claim_window_from": ["month_end", "incident"],  # the SLA credit terms' Literal
        **{f"responsibilities.{job}": ["provider", "customer", "shared"] for job in OPERATING_JOBS},
    }
    assert lists == expected  # free-text and numeric columns carry no list
    example = {name: cell.value for name, cell in zip(header, sheet[2])}
    for name, values in expected.items():
        assert example[name] is None or example[name] in values, name


def test_the_columns_sheet_names_the_same_values_as_each_drop_down(tmp_path):
    """The help sheet once said points_source was "measured or vendor_claim" while its list offered
    reference too, and said nothing of billed_per's or renewal_price's values."""
    from openpyxl import load_workbook

    template = tmp_path / "rfp.xlsx"
    write_template(template)
    expects = {row[0]: row[1] for row in load_workbook(template)["columns"].iter_rows(values_only=True) if row[0]}
    assert expects["performance.points_source"] == "text: measured, vendor_claim or reference"
    assert expects["pricing.billed_per"] == "text: month, hour, minute or second"
    assert expects["contract.renewal_price"] == "text: escalated or list"
    assert expects["responsibilities.serving_stack"] == "text: provider, customer or shared"
    assert expects["service.attestations"] == "a comma-separated list: e.g. soc2_type2, iso27001"  # a hint, not a list


def test_values_under_no_column_name_are_reported(tmp_path):
    sheet = tmp_path / "rfp.csv"
    sheet.write_text(",".join(MINIMAL) + "\n" + ",".join(MINIMAL.values()) + ",surprise\n")
    with pytest.raises(InputError) as caught:
        import_offers(sheet, tmp_path / "offers", force=False)
    assert problems_of(caught) == [f"{sheet}:1: column Y has values but no name in the header row"]


def test_the_template_carries_every_offer_field():
    """Every field of an offer file (procure schema offer) has a template column: leaf fields by their
    path, fees and checklist answers as fees.<name>.<kind> and operator.evidence.<category>.<criterion>."""
    import typing

    from pydantic import BaseModel

    from procure.io.importers import template_columns
    from procure.model.inputs import Offer

    def model_in(annotation):
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        for arg in typing.get_args(annotation):
            found = model_in(arg)
            if found is not None and typing.get_origin(annotation) is not list:
                return found
        return None

    def leaves(model, prefix=""):
        for name, info in model.model_fields.items():
            path = prefix + name
            nested = model_in(info.annotation)
            if nested is not None:
                yield from leaves(nested, path + ".")
            else:
                yield path

    columns = template_columns()
    grouped = {
        "pricing.fees": "fees.",
        "operator.evidence": "operator.evidence.",
        "responsibilities": "responsibilities.",
    }
    missing = []
    for path in leaves(Offer):
        if path in grouped:
            if not any(c.startswith(grouped[path]) for c in columns):
                missing.append(path)
        elif path not in columns:
            missing.append(path)
    assert missing == []


def test_commit_options_and_checklist_answers_import(tmp_path):
    from procure.io.importers import read_offers, write_template

    template = tmp_path / "rfp.csv"
    write_template(template)
    [row] = read_offers(template)
    # the example row: one commit option "1024:36:3.60" and two checklist answers
    assert [o.model_dump() for o in row.offer.pricing.commit_options] == [
        {"gpus": 1024, "term_months": 36, "gpu_hour": 3.60}
    ]
    assert row.offer.operator.evidence == {
        "reliability": {"node_replacement_hours": 24},
        "monitoring": {"tenant_isolated": True},
    }
    assert row.offer.operator.published_tier == "gold" and row.offer.service.node_gpus == 8


def test_conditions_of_signing_import_from_their_column(tmp_path):
    # conditions in a sheet: gates: text pairs separated by ';', read into the offer's open conditions; a cell without
    # a gate is refused with its row and column.
    import csv

    from procure.errors import InputError
    from procure.io.importers import read_offers, write_template

    template = tmp_path / "rfp.csv"
    write_template(template)
    rows = list(csv.reader(template.open()))
    column = rows[0].index("conditions")
    rows[1][column] = "attestation: ISO 27001 certificate received; price: 4.85 confirmed in writing"
    with template.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    [row] = read_offers(template)
    assert [(c.gates, c.text, c.confirmed) for c in row.offer.open_conditions] == [
        ("attestation", "ISO 27001 certificate received", False),
        ("price", "4.85 confirmed in writing", False),
    ]
    rows[1][column] = "ISO 27001 certificate received"
    with template.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    with pytest.raises(InputError, match="conditions"):
        read_offers(template)


def test_a_held_contract_imports_from_its_column(tmp_path):
    # contract.signed in a sheet: date:gpus:start:end tranches, read into the offer's held contract; a bad cell names
    # its row and column.
    import csv

    from procure.io.importers import read_offers, write_template

    template = tmp_path / "rfp.csv"
    write_template(template)
    rows = list(csv.reader(template.open()))
    column = rows[0].index("contract.signed")
    rows[1][column] = "2026-04-20:256:2026-05-01:2027-04-30"
    with template.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    [row] = read_offers(template)
    [held] = row.offer.contract.signed
    assert (held.date, held.gpus, held.start, held.end) == (date(2026, 4, 20), 256, date(2026, 5, 1), date(2027, 4, 30))
