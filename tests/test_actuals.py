"""Serving metrics, invoices and incidents into actuals/ (procure/io/telemetry.py, procure/io/actuals.py,
`procure actuals import`). Figures are worked out by hand in the comments; the samples are in
tests/data/actuals/ with their sources (SOURCES.md there). Imports run at their use case in process
(tests/importhelp.py); the command itself is run for snapshots with a restart (end to end) and for a month
in two invoice files (exit 2 with nothing written, then a replacement stated)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from importhelp import run as imported
from typer.testing import CliRunner

from procure.cli import app
from procure.errors import Problem
from procure.io import query_range as qr
from procure.io import telemetry as tm
from procure.io.actuals import read_metrics_csv
from procure.io.workspace import load_workspace

DATA = Path(__file__).parent / "data" / "actuals"
runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_a_counter_reset_counts_from_zero_as_prometheus_does():
    # 100 -> 150 is +50; 150 -> 30 fell: a restart, so +30 (counted from zero); 30 -> 80 is +50: 130 in all
    t = [at("2026-11-02T00:00:00"), at("2026-11-02T00:01:00"), at("2026-11-02T00:02:00"), at("2026-11-02T00:03:00")]
    found = tm.counter_increase(t, [100, 150, 30, 80], gap_s=600)
    assert found.increase == {"2026-11": 130.0}
    assert found.resets == ["2026-11-02 00:02:00Z"]
    assert found.gaps == []


def test_histogram_quantile_interpolates_inside_the_bucket():
    buckets = [(0.1, 30), (0.5, 80), (1.0, 95), (math.inf, 100)]
    # P50: rank 50 falls in (0.1, 0.5] holding 80 - 30 = 50, at 50 - 30 = 20 of them: 0.1 + 0.4 x 20/50 = 0.26
    assert tm.histogram_quantile(0.5, buckets) == pytest.approx(0.26)
    # P90: rank 90 in (0.5, 1.0] holding 15, at 10 of them: 0.5 + 0.5 x 10/15 = 0.8333
    assert tm.histogram_quantile(0.9, buckets) == pytest.approx(0.8333333)
    # P99: rank 99 is past the last finite bucket (95): the highest finite bound, 1.0
    assert tm.histogram_quantile(0.99, buckets) == 1.0
    # no +Inf bucket: no count of observations, no quantile (Prometheus' NaN)
    assert tm.histogram_quantile(0.5, buckets[:-1]) is None


def test_the_prometheus_documentation_range_query_is_read():
    problems: list[Problem] = []
    series = qr.read_query_range(DATA / "prometheus_api_range_example.json", "example.json", {"up"}, problems)
    assert problems == []
    assert [(s.label("job"), list(s.values)) for s in series] == [
        ("prometheus", [1.0, 1.0, 1.0]),
        ("node", [0.0, 0.0, 1.0]),
    ]
    assert series[0].times[0] == 1435781430.781


def test_snapshots_with_a_restart_make_one_month_by_hand(workspace_copy):
    ws = workspace_copy("basic")
    snaps = sorted(DATA.glob("2026-11-*.prom"))
    result = run("actuals", "import", *snaps, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "counter reset at 2026-11-30 00:00:00Z" in result.output
    months = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])
    (nov,) = months.values()
    # tokens 100 -> 150 -> 30 (restart): 50 + 30 = 80
    assert nov.output_tokens == 80
    # served: stop 40 -> 60 -> 20 is 20 + 20, length 5 -> 10 -> 0 is 5 + 0: 45; abort 1 -> 2 -> 0: 1
    assert (nov.requests_ok, nov.requests_failed) == (45, 1)
    # TTFT bucket increases: le 0.1: 15 + 5 = 20; 0.5: 35 + 25 = 60; 1.0: 45 + 25 = 70; +Inf: 50 + 25 = 75
    # P50: rank 37.5 in (0.1, 0.5] (40 there, 17.5 in): 0.1 + 0.4 x 17.5/40 = 0.275
    # P90: rank 67.5 in (0.5, 1.0] (10 there, 7.5 in): 0.5 + 0.5 x 0.75 = 0.875; P99 rank 74.25 is in +Inf: 1.0
    assert nov.ttft == {0.5: pytest.approx(0.275), 0.9: pytest.approx(0.875), 0.99: 1.0}
    assert nov.e2e == {0.5: None, 0.9: None, 0.99: None}  # no end-to-end histogram in the snapshots
    assert nov.coverage == 0.0  # snapshots ten days apart: every step is a gap
    workspace = load_workspace(ws)
    assert "actuals/alpha/metrics.csv" in {f.path for f in workspace.inputs}
    assert workspace.actuals["alpha"].metrics["2026-11"].output_tokens == 80


def range_file(tmp_path: Path, result: list[dict], name: str = "range.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


def series(name: str, samples: list[tuple[str, float]], **labels: str) -> dict:
    return {"metric": {"__name__": name, "model_name": "m", **labels}, "values": [[at(t), str(v)] for t, v in samples]}


def test_a_range_query_across_a_month_end_and_a_month_without_data(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    tokens = series(
        "vllm:generation_tokens_total",
        [
            ("2026-10-31T23:58:00", 0),
            ("2026-10-31T23:59:00", 60),
            ("2026-11-01T00:00:00", 120),
            ("2026-11-01T00:01:00", 180),
        ],
    )
    result = imported("actuals", "import", range_file(tmp_path, [tokens]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    months = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])
    # each increase counts in the month its step (earlier, later] lies in: 23:58-23:59 and 23:59-00:00
    # are October's (60 + 60; the sample at 00:00 on the 1st closes October), 00:00-00:01 November's (60)
    assert {k: m.output_tokens for k, m in months.items()} == {"2026-10": 120, "2026-11": 60}
    assert "2026-12" not in months  # no sample: no data, not 0
    assert months["2026-11"].requests_ok is None  # no request series: not stated, not 0


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            [series("vllm:generation_tokens_total", [("2026-11-01T00:00:00", 1)])] * 2,
            "duplicate series vllm:generation_tokens_total",
        ),
        (
            [
                series(
                    "vllm:generation_tokens_total",
                    [("2026-11-01T00:00:00", 1), ("2026-11-01T00:01:00", 2)],
                    region="eu",
                )
            ],
            "unknown label region on vllm:generation_tokens_total",
        ),
        (
            [series("vllm:generation_tokens_total", [("2026-11-01T00:05:00", 1), ("2026-11-01T00:01:00", 2)])],
            "clock skew: vllm:generation_tokens_total",
        ),
        (
            [
                series(
                    "vllm:request_success_total",
                    [("2026-11-01T00:00:00", 1), ("2026-11-01T00:01:00", 2)],
                    finished_reason="timeout",
                )
            ],
            "unknown outcome finished_reason='timeout'",
        ),
        (
            [
                series(
                    "vllm:time_to_first_token_seconds_bucket",
                    [("2026-11-01T00:00:00", 1), ("2026-11-01T00:01:00", 2)],
                    le="0.5",
                )
            ],
            'histogram vllm:time_to_first_token_seconds_bucket{model_name="m"} has no +Inf bucket',
        ),
    ],
)
def test_bad_telemetry_is_named_and_nothing_is_written(workspace_copy, tmp_path, bad, message):
    ws = workspace_copy("basic")
    path = range_file(tmp_path, bad)
    result = imported("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not (ws / "actuals").exists()


def test_a_snapshot_without_its_time_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    path = tmp_path / "metrics.prom"
    path.write_text((DATA / "2026-11-10T00:00:00Z.prom").read_text())
    result = imported("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "samples without a timestamp" in result.output


def test_invoices_and_incidents_are_kept_and_read_back(workspace_copy, tmp_path, data_dir):
    ws = workspace_copy("basic")
    invoices = tmp_path / "invoices.csv"
    invoices.write_text("month,gpu_hours,output_tokens,amount\n2026-03,73000,,292000\n")
    result = imported(
        "actuals", "import", invoices, data_dir / "incidents" / "serving_history.csv", "--offer", "alpha", "-w", ws
    )
    assert result.exit_code == 0, result.output
    loaded = load_workspace(ws).actuals["alpha"]
    assert loaded.invoices["2026-03"].gpu_hours == 73000 and loaded.invoices["2026-03"].amount == 292000
    assert len(loaded.incidents) == 4
    twice = tmp_path / "twice.csv"
    twice.write_text("month,gpu_hours,output_tokens,amount\n2026-03,1,,1\n2026-03,2,,2\n")
    bad = imported("actuals", "import", twice, "--offer", "alpha", "-w", ws)
    assert bad.exit_code == 2 and "2026-03 is invoiced twice" in bad.output
    unknown = imported("actuals", "import", invoices, "--offer", "nobody", "-w", ws)
    assert unknown.exit_code == 2


def test_an_invoice_sheet_missing_a_column_is_named_as_an_invoice_sheet(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    path = tmp_path / "billing.csv"
    path.write_text("month,gpu_hours,amount\n2026-07,1000,5000\n")  # output_tokens left out
    result = imported("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "output_tokens" in result.output and "impact" not in result.output
    assert not (ws / "actuals").exists()


def test_bad_telemetry_errors_name_the_file_and_where_in_it(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    twice = series("vllm:generation_tokens_total", [("2026-11-01T00:00:00", 1)])
    path = range_file(tmp_path, [twice, twice])
    result = imported("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    # the file, the second entry of data.result, the series, and where it was seen first
    assert (
        f'{path}: data.result[1]: duplicate series vllm:generation_tokens_total{{model_name="m"}} (also data.result[0])'
        in " ".join(result.output.split())
    )


def snapshot(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(
        "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n# TYPE "
        "vllm:generation_tokens_total counter\n" + body
    )
    return path


def test_the_same_series_twice_in_one_snapshot_is_a_duplicate(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    path = snapshot(
        tmp_path,
        "2026-11-10T00:00:00Z.prom",
        'vllm:generation_tokens_total{model_name="m"} 100.0\nvllm:generation_tokens_total{model_name="m"} 120.0\n',
    )
    result = imported("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert 'duplicate series vllm:generation_tokens_total{model_name="m"} in one snapshot' in " ".join(
        result.output.split()
    )
    assert path.name in result.output and not (ws / "actuals").exists()


def test_a_snapshot_sample_stamped_far_from_the_snapshot_is_clock_skew(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    # the file says 2026-11-10 00:00:00Z; the exporter stamped the sample 10 minutes later (more than the 5 allowed)
    stamp_ms = int(at("2026-11-10T00:10:00") * 1000)
    path = snapshot(
        tmp_path, "2026-11-10T00:00:00Z.prom", f'vllm:generation_tokens_total{{model_name="m"}} 100.0 {stamp_ms}\n'
    )
    result = imported("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert (
        "clock skew: vllm:generation_tokens_total is stamped 2026-11-10 00:10:00Z, 10 minutes from the snapshot's time "
        "2026-11-10 00:00:00Z" in " ".join(result.output.split())
    )
    # within the 5 minutes it is read at its own stamp
    near = snapshot(
        tmp_path,
        "2026-11-10T00:00:00Z.prom",
        f'vllm:generation_tokens_total{{model_name="m"}} 100.0 {int(at("2026-11-10T00:04:00") * 1000)}\n',
    )
    later = snapshot(tmp_path, "2026-11-11T00:00:00Z.prom", 'vllm:generation_tokens_total{model_name="m"} 160.0\n')
    assert imported("actuals", "import", near, later, "--offer", "alpha", "-w", ws).exit_code == 0


def test_two_files_with_a_sample_at_one_time_are_a_duplicate(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    first = range_file(
        tmp_path,
        [series("vllm:generation_tokens_total", [("2026-11-01T00:00:00", 1), ("2026-11-01T00:01:00", 2)])],
        "a.json",
    )
    again = range_file(
        tmp_path,
        [series("vllm:generation_tokens_total", [("2026-11-01T00:01:00", 2), ("2026-11-01T00:02:00", 3)])],
        "b.json",
    )
    result = imported("actuals", "import", first, again, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert (
        'duplicate series: vllm:generation_tokens_total{model_name="m"} has two samples at 2026-11-01 00:01:00Z'
        in " ".join(result.output.split())
    )


def test_a_gap_is_stated_counted_and_shrinks_the_coverage(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    # samples at 00:00, 00:01 and 01:00: the 59-minute step is longer than gap_minutes (10)
    tokens = series(
        "vllm:generation_tokens_total",
        [("2026-11-01T00:00:00", 0), ("2026-11-01T00:01:00", 60), ("2026-11-01T01:00:00", 120)],
    )
    result = imported("actuals", "import", range_file(tmp_path, [tokens]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "no samples from 2026-11-01 00:01:00Z to 2026-11-01 01:00:00Z (1.0 h gap)" in result.output
    (nov,) = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", []).values()
    # the increase across the gap still counts (60 + 60 = 120; a counter loses nothing in a gap), the gap is
    # counted, and the month is covered only by the one-minute step: 60 s of 30 x 86,400 = 2.3148e-5
    assert nov.output_tokens == 120 and nov.gaps == 1
    assert nov.coverage == pytest.approx(60 / (30 * 86_400))


def test_a_month_in_two_invoice_files_is_refused_and_a_kept_one_replaced_is_stated(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    first = tmp_path / "march.csv"
    first.write_text("month,gpu_hours,output_tokens,amount\n2026-03,73000,,292000\n")
    again = tmp_path / "march-again.csv"
    again.write_text("month,gpu_hours,output_tokens,amount\n2026-03,1,,1\n")
    both = run("actuals", "import", first, again, "--offer", "alpha", "-w", ws)
    assert both.exit_code == 2 and "Traceback" not in both.output
    assert f"{again}:2: month: 2026-03 is invoiced twice (also in {first}:2)" in both.stderr
    assert not (ws / "actuals").exists()  # nothing was written
    assert run("actuals", "import", first, "--offer", "alpha", "-w", ws).exit_code == 0
    corrected = run("actuals", "import", again, "--offer", "alpha", "-w", ws)
    assert corrected.exit_code == 0 and "invoice 2026-03: replaced by this import" in corrected.stderr
    assert (
        ws / "actuals" / "alpha" / "invoices.csv"
    ).read_text() == "month,gpu_hours,output_tokens,amount\n2026-03,1,,1\n"
