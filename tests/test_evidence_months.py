"""Delivered evidence never loses, invents or hides a month.

Each test reproduces an attack on the evidence that comes in after signing (incidents, invoices,
serving metrics) on the example workspace that `procure init` writes: keel-b200-mc, 256 committed
GPUs (768 at most), SLA 99.5%, credits 0.05 of the fee per percentage point below it (cap 25%),
invoices of 929,464.32 USD in 31-day months, and one major outage on 2026-07-14 02:10-07:40 (330
minutes: 1 - 330/44,640 = 99.2608%, 0.2392 points below the SLA: 1.196% of the invoice, 11,118.59 USD).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from clihelp import run
from importhelp import run as imported
from refusals import refused

from procure.io.actuals import read_invoices
from procure.io.example import write_example

OFFER = "keel-b200-mc"
JULY_OWED = 0.05 * (0.995 - (1 - 330 / 44_640)) * 100 * 929_464.32  # 11,118.59
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write_example(ws)  # what `procure init DIR --example` writes
    return ws


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def scorecard(ws: Path, *args: str) -> dict:
    """The one vendor of `procure scorecard --format json -w ws ARGS` (--as-of DAY, --months N), its document
    computed in process (the use case and its JSON words, procure/render/scorecard.py)."""
    from procure.analysis.usecases.evidence import scorecards
    from procure.render.scorecard import scorecard_text

    options = dict(zip(args[::2], args[1::2]))
    as_of = date.fromisoformat(options["--as-of"]) if "--as-of" in options else None
    months = int(options["--months"]) if "--months" in options else None
    (vendor,) = json.loads(scorecard_text(scorecards(ws, as_of, None, months).result, "json"))["vendors"]
    return vendor


def scorecard_refused(ws: Path, as_of: str, *needles: str) -> str:
    """`procure scorecard --as-of DAY -w ws` refused at its use case, in process: the problems, one line each."""
    from procure.analysis.usecases.evidence import scorecards

    return refused(lambda: scorecards(ws, date.fromisoformat(as_of), None, None), *needles)


def claimed(ws: Path, as_of: str, months: int | None = None) -> str:
    """`procure scorecard --claim [--months N] --as-of DAY`: the claims drafted as Markdown, in process (the use
    case and procure/render/claims.py)."""
    from procure.analysis.usecases.evidence import scorecards
    from procure.render.claims import claims_markdown

    found = scorecards(ws, date.fromisoformat(as_of), None, months, True)
    return claims_markdown(found.claims, found.evaluation.as_of)


def incidents(path: Path, *rows: str) -> Path:
    path.write_text("start,end,impact,components\n" + "".join(r + "\n" for r in rows))
    return path


def tokens_range(
    path: Path,
    start: str,
    end: str,
    step_s: int = 300,
    per_step: float = 1e6,
    name: str = "vllm:generation_tokens_total",
) -> Path:
    """A query_range export of one output-token counter, a sample every `step_s` from start to end."""
    t0, t1 = at(start), at(end)
    times = [t0 + step_s * k for k in range(int((t1 - t0) // step_s) + 1)]
    values = [[t, str(per_step * k)] for k, t in enumerate(times)]
    path.write_text(
        json.dumps(
            {
                "status": "success",
                "data": {
                    "resultType": "matrix",
                    "result": [{"metric": {"__name__": name, "model_name": "m"}, "values": values}],
                },
            }
        )
    )
    return path


def files_of(ws: Path) -> dict[str, bytes]:
    folder = ws / "actuals" / OFFER
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# --- 1. an incident import merges with the kept history -------------------------------------------


def test_importing_october_incidents_keeps_the_july_outage_and_its_credit(example, tmp_path):
    assert scorecard(example, "--as-of", "2026-11-29")["credits_owed_total"] == pytest.approx(JULY_OWED, abs=0.005)
    october = incidents(tmp_path / "october-incidents.csv", "2026-10-20T10:00:00Z,2026-10-20T14:00:00Z,major,inference")
    done = imported("actuals", "import", october, "--offer", OFFER, "-w", example)
    assert done.exit_code == 0, done.output
    vendor = scorecard(example, "--as-of", "2026-11-29")
    months = {m["month"]: m for m in vendor["months"]}
    assert months["2026-07"]["availability"] == pytest.approx(1 - 330 / 44_640)  # July's outage is still there
    # October: 240 minutes down of 44,640: 0.0376 points below the SLA, 0.05 x 0.0376 = 0.188% of 929,464.32
    october_owed = 0.05 * (0.995 - (1 - 240 / 44_640)) * 100 * 929_464.32
    assert months["2026-10"]["credits_owed"] == pytest.approx(october_owed)
    assert vendor["credits_owed_total"] == pytest.approx(JULY_OWED + october_owed)
    assert vendor["breached_months"] == ["2026-07", "2026-10"]
    claim = claimed(example, "2026-11-29")
    assert "| 2026-07 |" in claim and "| 2026-10 |" in claim


def test_two_incident_files_in_one_import_are_both_kept_and_a_changed_one_is_named(example, tmp_path):
    first = incidents(tmp_path / "a.csv", "2026-08-02T00:00:00Z,2026-08-02T01:00:00Z,major,inference")
    second = incidents(tmp_path / "b.csv", "2026-09-05T00:00:00Z,2026-09-05T02:00:00Z,critical,inference")
    assert imported("actuals", "import", first, second, "--offer", OFFER, "-w", example).exit_code == 0
    months = {m["month"]: m for m in scorecard(example, "--as-of", "2026-11-29")["months"]}
    assert months["2026-07"]["availability"] == pytest.approx(1 - 330 / 44_640)
    assert months["2026-08"]["availability"] == pytest.approx(1 - 60 / 44_640)
    assert months["2026-09"]["availability"] == pytest.approx(1 - 120 / 43_200)  # 30 days
    # the same incident (start and component) imported again with another end replaces it, and says so
    longer = incidents(tmp_path / "c.csv", "2026-08-02T00:00:00Z,2026-08-02T03:00:00Z,major,inference")
    again = imported("actuals", "import", longer, "--offer", OFFER, "-w", example)
    assert again.exit_code == 0 and "incident 2026-08-02T00:00:00Z (inference): replaced by this import" in again.stderr
    months = {m["month"]: m for m in scorecard(example, "--as-of", "2026-11-29")["months"]}
    assert months["2026-08"]["availability"] == pytest.approx(1 - 180 / 44_640)
    # an imported row that overlaps a kept one is refused with both places, nothing written
    before = files_of(example)
    clash = incidents(tmp_path / "clash.csv", "2026-07-14T03:00:00Z,2026-07-14T04:00:00Z,major,inference")
    refused = imported("actuals", "import", clash, "--offer", OFFER, "-w", example)
    assert (
        refused.exit_code == 2
        and f"{clash}:2: start: overlaps the incident at actuals/{OFFER}/incidents.csv:2" in refused.stderr
    )
    assert files_of(example) == before


def test_statuspage_imports_merge_by_start_and_components(example, tmp_path):
    def page(path: Path, *items: tuple[str, str, str]) -> Path:
        path.write_text(
            json.dumps(
                {
                    "page": {"id": "p", "name": "Keel"},
                    "incidents": [
                        {
                            "id": i,
                            "name": i,
                            "status": "resolved",
                            "impact": "major",
                            "created_at": s,
                            "started_at": s,
                            "resolved_at": e,
                            "incident_updates": [],
                            "components": [],
                        }
                        for i, s, e in items
                    ],
                }
            )
        )
        return path

    assert (
        imported(
            "actuals",
            "import",
            page(tmp_path / "one.json", ("a", "2026-08-01T00:00:00Z", "2026-08-01T01:00:00Z")),
            "--offer",
            OFFER,
            "-w",
            example,
        ).exit_code
        == 0
    )
    assert (
        imported(
            "actuals",
            "import",
            page(tmp_path / "two.json", ("b", "2026-09-01T00:00:00Z", "2026-09-01T02:00:00Z")),
            "--offer",
            OFFER,
            "-w",
            example,
        ).exit_code
        == 0
    )
    kept = json.loads((example / "actuals" / OFFER / "incidents.json").read_text())
    assert [i["id"] for i in kept["incidents"]] == ["b", "a"]  # newest first, both kept


# --- 2. --months N totals only the months shown ---------------------------------------------------


def test_a_monthly_claim_claims_only_the_months_shown(example):
    # as of 2026-11-29 the last month is October, which met the SLA: July is not claimed again
    vendor = scorecard(example, "--as-of", "2026-11-29", "--months", "1")
    assert [m["month"] for m in vendor["months"]] == ["2026-10"]
    assert vendor["credits_owed_total"] == 0 and vendor["breached_months"] == []
    claim = claimed(example, "2026-11-29", 1)
    assert "2026-07" not in claim and "Total claimable now: 0.00 USD." in claim
    # the four months July to October hold July's credit
    four = scorecard(example, "--as-of", "2026-11-29", "--months", "4")
    assert [m["month"] for m in four["months"]] == ["2026-07", "2026-08", "2026-09", "2026-10"]
    assert four["credits_owed_total"] == pytest.approx(JULY_OWED, abs=0.005) and four["breached_months"] == ["2026-07"]
    claim = claimed(example, "2026-11-29", 4)
    assert (
        f"| 2026-07 | 99.261% | 99.50% | 1.2% | 929,464.32 USD | {JULY_OWED:,.2f} USD |" in claim
    )  # keel credits automatically


# --- 3. only complete months are scored; a partial month never hides a breach --------------------


def test_two_days_of_november_are_partial_and_do_not_hide_octobers_breach(example, tmp_path):
    october = incidents(tmp_path / "october.csv", "2026-10-20T10:00:00Z,2026-10-20T14:00:00Z,major,inference")
    november = tokens_range(tmp_path / "november.json", "2026-11-01T00:00:00", "2026-11-03T00:00:00")
    assert imported("actuals", "import", october, november, "--offer", OFFER, "-w", example).exit_code == 0
    vendor = scorecard(example, "--as-of", "2026-11-15")
    last = vendor["months"][-1]
    assert last["month"] == "2026-11" and last["partial"] is True
    assert last["availability"] is None and last["sla_breached"] is None and last["credits_owed"] is None  # not scored
    assert vendor["scored_through"] == "2026-10"
    from procure.analysis.history import reevaluate
    from procure.analysis.usecases.evidence import scorecards
    from procure.render.scorecard import scorecard_text

    md = scorecard_text(scorecards(example, date(2026, 11, 15), None, None).result, "markdown")
    assert "| 2026-11 (partial) |" in md
    first = reevaluate(example, date(2026, 11, 15))  # the first run, breached by delivered evidence: not saved
    assert first.diff is None and first.saved is None
    assert any(b.condition == "sla-breach" and "2026-10" in b.detail for b in first.breached)


def test_evidence_after_as_of_does_not_stretch_the_scorecard(example, tmp_path):
    stray = incidents(tmp_path / "stray.csv", "2027-10-01T00:00:00Z,2027-10-01T01:00:00Z,minor,dashboard")
    assert imported("actuals", "import", stray, "--offer", OFFER, "-w", example).exit_code == 0
    done = run("scorecard", "--format", "json", "--as-of", "2026-11-29", "-w", example)
    (vendor,) = json.loads(done.stdout)["vendors"]
    assert vendor["months"][-1]["month"] == "2026-10" and len(vendor["months"]) == 6  # May to October
    assert "evidence dated after 2026-11-29 is not shown (2027-10)" in done.stderr


def test_a_last_sample_at_midnight_on_the_first_makes_no_november(example, tmp_path):
    # a sample every 5 minutes through October, the last at 2026-11-01T00:00:00Z: every step lies in October
    october = tokens_range(tmp_path / "october.json", "2026-10-01T00:00:00", "2026-11-01T00:00:00")
    assert imported("actuals", "import", october, "--offer", OFFER, "-w", example).exit_code == 0
    rows = (example / "actuals" / OFFER / "metrics.csv").read_text()
    assert "\n2026-11," not in rows
    october_row = next(line for line in rows.splitlines() if line.startswith("2026-10,"))
    # 8,928 five-minute steps of 1e6 tokens each (31 days x 288), covering the whole month
    assert october_row.split(",")[1] == "8928000000" and october_row.split(",")[10] == "1"


def test_a_month_measured_below_the_coverage_threshold_is_partial_but_its_breach_stands(example, tmp_path):
    # November measured for its first half only: 15 of 30 days, 50% < 90%; invoiced in full, and an
    # outage of 240 minutes of 43,200 (99.444% < 99.5%) in the incident record
    half = tokens_range(tmp_path / "half.json", "2026-11-01T00:00:00", "2026-11-16T00:00:00")
    outage = incidents(tmp_path / "november.csv", "2026-11-20T10:00:00Z,2026-11-20T14:00:00Z,major,inference")
    bill = tmp_path / "bill.csv"
    bill.write_text("month,gpu_hours,output_tokens,amount\n2026-11,184320,,899481.6\n")
    assert imported("actuals", "import", half, outage, bill, "--offer", OFFER, "-w", example).exit_code == 0
    months = {m["month"]: m for m in scorecard(example, "--as-of", "2026-12-15")["months"]}
    nov = months["2026-11"]
    assert nov["partial"] is True and nov["coverage"] == pytest.approx(0.5)
    assert (
        nov["throughput_ratio"] is None and nov["cost_overrun"] is None
    )  # half a month's tokens against a whole invoice
    assert nov["sla_breached"] is True  # the incident record covers the month
    assert nov["credits_owed"] == pytest.approx(0.05 * (0.995 - (1 - 240 / 43_200)) * 100 * 899_481.6)
    assert months["2026-10"]["partial"] is False and months["2026-10"]["throughput_ratio"] is not None


# --- 4. concurrent imports serialise --------------------------------------------------------------


@pytest.mark.slow  # eight processes, each loading the workspace: about 30 s on two busy cores
def test_eight_concurrent_imports_lose_nothing(example, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = []
    for k in range(8):
        day = f"2026-11-{k + 2:02d}"
        bill = tmp_path / f"bill-{k}.csv"
        bill.write_text(f"month,gpu_hours,output_tokens,amount,invoice_id\n2026-11,{100 + k},,{1000 + k},INV-{k}\n")
        outage = incidents(tmp_path / f"incident-{k}.csv", f"{day}T01:00:00Z,{day}T02:00:00Z,major,inference")
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "procure",
                    "actuals",
                    "import",
                    str(bill),
                    str(outage),
                    "--offer",
                    OFFER,
                    "-w",
                    str(example),
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    rows = (example / "actuals" / OFFER / "invoices.csv").read_text().splitlines()
    assert sorted(r for r in rows if r.startswith("2026-11")) == sorted(
        f"2026-11,{100 + k},,{1000 + k},INV-{k}" for k in range(8)
    )
    assert len([r for r in rows if r.startswith("2026-0") or r.startswith("2026-10")]) == 6  # May to October kept
    kept = (example / "actuals" / OFFER / "incidents.csv").read_text()
    assert all(f"2026-11-{k + 2:02d}T01:00:00Z" in kept for k in range(8)) and "2026-07-14T02:10:00Z" in kept
    # November's eight invoices are summed: 100 + ... + 107 GPU-hours, 1000 + ... + 1007 USD
    november = read_invoices(example / "actuals" / OFFER / "invoices.csv", "invoices.csv", [])["2026-11"]
    assert (november.gpu_hours, november.amount) == (sum(100 + k for k in range(8)), sum(1000 + k for k in range(8)))


# --- 6. month keys are range-checked, at import and at load ----------------------------------------


def test_an_invoice_month_0026_is_refused_at_import_and_at_load(example, tmp_path):
    before = files_of(example)
    bad = tmp_path / "bad.csv"
    bad.write_text("month,gpu_hours,output_tokens,amount\n0026-05,1,,1\n")
    done = imported("actuals", "import", bad, "--offer", OFFER, "-w", example)
    assert (
        done.exit_code == 2 and f"{bad}:2: month: must be a month from 2000-01 to 2199-12 (got 0026-05)" in done.stderr
    )
    assert files_of(example) == before
    kept = example / "actuals" / OFFER / "invoices.csv"
    kept.write_text(kept.read_text() + "0026-05,1,,1\n")
    scorecard_refused(
        example, "2026-11-29", f"actuals/{OFFER}/invoices.csv:8: month: must be a month from 2000-01 to 2199-12"
    )


# --- 8. an import never writes what the loader refuses -------------------------------------------


def test_counts_are_judged_by_the_offers_own_size_not_a_fixed_ceiling(example, tmp_path):
    # 1.3e12 output tokens in November: 1.3e12 / (768 GPUs x 2,592,000 s) = 653 tok/s per GPU: plausible
    big = tmp_path / "big.csv"
    big.write_text("month,gpu_hours,output_tokens,amount\n2026-11,500000,1.3e12,2500000\n")
    assert imported("actuals", "import", big, "--offer", OFFER, "-w", example).exit_code == 0
    assert scorecard(example, "--as-of", "2026-12-02")["months"]  # the loader reads what was written
    # 1e15 is 502,315 tok/s on each of its 768 GPUs: above 100,000, refused at import, nothing written
    before = files_of(example)
    huge = tmp_path / "huge.csv"
    huge.write_text("month,gpu_hours,output_tokens,amount\n2026-11,500000,1e15,2500000\n")
    done = imported("actuals", "import", huge, "--offer", OFFER, "-w", example)
    assert (
        done.exit_code == 2
        and (
            "output_tokens: 1e+15 is implausible: at most 1.991e+14 (100,000 a second on each of the offer's 768 GPUs"
            " over 2026-11's 30 days)"
        )
        in done.stderr
    )
    assert files_of(example) == before
    # two more invoices of November, each within the limit, are judged with the kept one by their sum:
    # 1.3e12 + 2 x 1.2e14 = 2.413e14
    split = tmp_path / "split.csv"
    split.write_text(
        "month,gpu_hours,output_tokens,amount,invoice_id\n2026-11,1000,1.2e14,5000,A\n2026-11,1000,1.2e14,5000,B\n"
    )
    done = imported("actuals", "import", split, "--offer", OFFER, "-w", example)
    assert (
        done.exit_code == 2
        and f"{split}: month 2026-11: output_tokens: 2.413e+14 is implausible: at most 1.991e+14" in done.stderr
    )
    assert files_of(example) == before
    # the same number summed from telemetry is refused by the same check, naming the month
    fast = tokens_range(tmp_path / "fast.json", "2026-11-01T00:00:00", "2026-11-02T00:00:00", per_step=1e12)
    done = imported("actuals", "import", fast, "--offer", OFFER, "-w", example)
    assert done.exit_code == 2 and "month 2026-11: output_tokens: 2.88e+14 is implausible" in done.stderr
    assert files_of(example) == before


# --- 12. reevaluate names its breaches when nothing else changed ----------------------------------


def test_reevaluate_names_the_breaches_of_an_unchanged_evaluation(example, tmp_path):
    october = incidents(tmp_path / "october.csv", "2026-10-20T10:00:00Z,2026-10-20T14:00:00Z,major,inference")
    assert imported("actuals", "import", october, "--offer", OFFER, "-w", example).exit_code == 0
    assert run("reevaluate", "--as-of", "2026-11-29", "--accept", "-w", example).exit_code == 0
    table = run("reevaluate", "--as-of", "2026-11-29", "-w", example)
    assert table.exit_code == 3
    assert (
        "No changes" in table.stdout
        and "BREACH sla-breach: keel-b200-mc: 2026-10" in table.stdout
        and "BREACH credits-owed" in table.stdout
    )
    assert "2 threshold(s) breached (sla-breach, credits-owed)" in table.stderr
    md = run("reevaluate", "--as-of", "2026-11-29", "--format", "markdown", "-w", example)
    assert md.exit_code == 3 and "- sla-breach: keel-b200-mc: 2026-10" in md.stdout and "- credits-owed:" in md.stdout


# --- 13. a telemetry import without the configured metrics is an error ----------------------------


@pytest.mark.parametrize(
    "body", ["", "# HELP other_total x\n# TYPE other_total counter\nother_total 5 1793491200000\n"]
)
def test_a_snapshot_without_any_configured_metric_is_an_error(example, tmp_path, body):
    before = files_of(example)
    snap = tmp_path / "2026-11-01T00:00:00Z.prom"
    snap.write_text(body)
    done = imported("actuals", "import", snap, "--offer", OFFER, "-w", example)
    assert done.exit_code == 2
    assert (
        f"{snap}: no samples of DCGM_FI_PROF_GR_ENGINE_ACTIVE, vllm:e2e_request_latency_seconds, "
        "vllm:generation_tokens_total" in done.stderr
    )  # the utilization gauge is read too
    assert files_of(example) == before


def test_a_renamed_metric_in_a_range_export_is_an_error(example, tmp_path):
    renamed = tokens_range(
        tmp_path / "renamed.json", "2026-11-01T00:00:00", "2026-11-01T01:00:00", name="vllm:generation_tokens"
    )
    done = imported("actuals", "import", renamed, "--offer", OFFER, "-w", example)
    assert done.exit_code == 2 and "no samples of" in done.stderr and "actuals.metrics" in done.stderr


def test_a_corrective_import_replaces_a_kept_month_the_loader_refuses(example, tmp_path):
    # a metrics.csv written before months were checked holds a month the loader refuses
    kept = example / "actuals" / OFFER / "metrics.csv"

    def implausible(month: str) -> None:  # the month's output_tokens (the second column) set to 1e17
        rows = [line.split(",") for line in kept.read_text().splitlines()]
        for row in rows:
            if row[0] == month:
                row[1] = "1e17"
        kept.write_text("\n".join(",".join(row) for row in rows) + "\n")

    may = float(next(line for line in kept.read_text().splitlines() if line.startswith("2026-05,")).split(",")[1])
    implausible("2026-10")
    scorecard_refused(example, "2026-11-29", f"actuals/{OFFER}/metrics.csv:8: output_tokens: 1e+17 is implausible")
    # re-importing October replaces the refused row, and says so; the other months stay
    october = tokens_range(tmp_path / "october.json", "2026-10-01T00:00:00", "2026-11-01T00:00:00")
    fixed = imported("actuals", "import", october, "--offer", OFFER, "-w", example)
    assert fixed.exit_code == 0, fixed.output
    assert "month 2026-10: the kept row (output_tokens: 1e+17 is implausible" in fixed.stderr
    months = {m["month"]: m for m in scorecard(example, "--as-of", "2026-11-29")["months"]}
    assert months["2026-10"]["output_tokens"] == 8928 * 1e6 and months["2026-05"]["output_tokens"] == pytest.approx(may)
    # an import that does not replace the refused row is refused, naming it
    implausible("2026-09")
    other = imported(
        "actuals",
        "import",
        tokens_range(tmp_path / "aug.json", "2026-08-01T00:00:00", "2026-09-01T00:00:00"),
        "--offer",
        OFFER,
        "-w",
        example,
    )
    assert (
        other.exit_code == 2 and f"actuals/{OFFER}/metrics.csv:7: output_tokens: 1e+17 is implausible" in other.stderr
    )


def test_a_providers_page_of_older_incidents_makes_no_months(example, data_dir):
    # Discord's real Statuspage export of 2022-02-15: incidents years before keel's first month of
    # service (May 2026) would otherwise make 50 months at 100% available beside the buyer's own CSV
    before = scorecard(example, "--as-of", "2026-11-29")
    statuspage = data_dir / "incidents" / "discord_incidents.json"
    done = imported("actuals", "import", statuspage, "--offer", OFFER, "-w", example)
    assert done.exit_code == 0, done.output
    result = run("scorecard", "--format", "json", "--as-of", "2026-11-29", "-w", example)
    (after,) = json.loads(result.stdout)["vendors"]
    assert [m["month"] for m in after["months"]] == [f"2026-{m:02d}" for m in range(5, 11)]
    assert after["evidence"]["availability"] == pytest.approx(before["evidence"]["availability"])
    assert "incidents before the first month of service (2026-05) are not scored (2022-0" in result.stderr


def test_the_evidence_lock_linked_out_of_the_workspace_is_refused(example, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (example / ".procure").mkdir(exist_ok=True)
    (example / ".procure" / "evidence.lock").symlink_to(outside / "foreign")
    before = files_of(example)
    october = incidents(tmp_path / "october.csv", "2026-10-20T10:00:00Z,2026-10-20T14:00:00Z,major,inference")
    done = imported("actuals", "import", october, "--offer", OFFER, "-w", example)
    assert (
        done.exit_code == 2 and ".procure/evidence.lock: refused: links to a file outside the workspace" in done.stderr
    )
    assert files_of(example) == before and not (outside / "foreign").exists()


@pytest.mark.parametrize(
    "name, body",
    [
        ("invoices.csv", "month,gpu_hours,output_tokens,amount\n"),
        ("incidents.csv", "start,end,impact,components\n"),
        ("page.json", '{"incidents": []}'),
    ],
)
def test_a_file_without_any_evidence_is_an_error_not_silence(example, tmp_path, name, body):
    before = files_of(example)
    empty = tmp_path / name
    empty.write_text(body)
    done = imported("actuals", "import", empty, "--offer", OFFER, "-w", example)
    assert (
        done.exit_code == 2
        and f"{empty}: no evidence to import: no metric month, invoice or incident in the files" in done.stderr
    )
    assert files_of(example) == before


def test_a_thinner_import_never_replaces_a_better_measured_month(example, tmp_path):
    # the kept October covers the whole month; samples from 23:00 on October 31 to 01:00 on November 1
    # cover 1 hour of it (0.13%): October stays as it was, November is added
    kept = (example / "actuals" / OFFER / "metrics.csv").read_text()
    october_row = next(line for line in kept.splitlines() if line.startswith("2026-10,"))
    edge = tokens_range(tmp_path / "edge.json", "2026-10-31T23:00:00", "2026-11-01T01:00:00")
    done = imported("actuals", "import", edge, "--offer", OFFER, "-w", example)
    assert done.exit_code == 0, done.output
    assert "month 2026-10: kept as it was (its samples cover 100.0% of the month, this import's 0.1%)" in done.stderr
    rows = (example / "actuals" / OFFER / "metrics.csv").read_text().splitlines()
    assert october_row in rows and any(
        r.startswith("2026-11,12000000,") for r in rows
    )  # 12 five-minute steps in November


def test_an_import_that_covers_as_much_as_the_kept_month_replaces_it(example, tmp_path):
    # November from 00:00 to 07:05 on the 1st: 85 five-minute steps cover 7 h 5 min of 720 h, 0.98379...%,
    # a coverage metrics.csv keeps to 10 digits; the same span again, at 2e6 tokens a step instead of 1e6,
    # covers as much and replaces the month (85 x 2e6 = 170,000,000 tokens, was 85,000,000)
    first = tokens_range(tmp_path / "first.json", "2026-11-01T00:00:00", "2026-11-01T07:05:00")
    assert imported("actuals", "import", first, "--offer", OFFER, "-w", example).exit_code == 0
    rows = (example / "actuals" / OFFER / "metrics.csv").read_text().splitlines()
    assert any(r.startswith("2026-11,85000000,") for r in rows)
    second = tokens_range(tmp_path / "second.json", "2026-11-01T00:00:00", "2026-11-01T07:05:00", per_step=2e6)
    done = imported("actuals", "import", second, "--offer", OFFER, "-w", example)
    assert done.exit_code == 0 and "kept as it was" not in done.stderr, done.output
    rows = (example / "actuals" / OFFER / "metrics.csv").read_text().splitlines()
    assert any(r.startswith("2026-11,170000000,") for r in rows)
