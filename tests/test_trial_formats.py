"""AIPerf and guidellm 0.7 results as trials (procure/io/trials.py, `procure perf import`). The files are
in tests/data/trials/ with their sources (SOURCES.md there); expected figures are worked out by hand from
the files' own fields."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procure.cli import app
from procure.errors import InputError
from procure.io.trials import read_trial

TRIALS = Path(__file__).parent / "data" / "trials"
AIPERF = TRIALS / "aiperf_profile_export_run1.json"
GUIDELLM_07 = TRIALS / "guidellm_0.7_benchmarks_conc16_conc32.json"
runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def test_aiperfs_own_sample_is_one_run():
    trial = read_trial(AIPERF)
    assert trial.format == "aiperf"
    assert trial.day == date(2025, 10, 3)  # start_time 2025-10-03T13:13:39
    (point,) = trial.points
    # records.output_token_throughput_per_user.p50 36.21203256049328 tokens/sec/user (1000 / ITL P50 27.6151 ms =
    # 36.212, the same)
    assert point.interactivity == pytest.approx(36.21203256, abs=1e-8)
    assert 1000 / 27.615130366666666 == pytest.approx(point.interactivity, rel=1e-4)
    # records.output_token_throughput.avg 2320.72 tokens/sec; ttft.p50 2369.317693 ms
    assert point.output_tok_s == pytest.approx(2320.7222350, abs=1e-6)
    assert point.ttft_s == pytest.approx(2.369317693)
    # ISL avg 550, OSL avg 242.966; loadgen.concurrency 100; 89 served, 11 cancelled
    assert (point.input_len, round(point.output_len, 3), point.concurrency) == (550.0, 242.966, 100.0)
    assert (point.completed, point.failed) == (89, 11)


def test_aiperfs_top_level_layout_and_a_wrong_unit(tmp_path):
    data = json.loads(AIPERF.read_text())
    flat = {
        ("time_to_first_token" if k == "ttft" else k): {f: v for f, v in m.items() if f not in ("tag", "header")}
        for k, m in data["records"].items()
    }
    flat.update(
        {
            "schema_version": "1.5",
            "aiperf_version": "0.7.0",
            "start_time": "2026-11-03T09:00:00Z",
            "was_cancelled": False,
            "input_config": {"phases": {"profiling": {"concurrency": 64}}},
        }
    )
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(flat))
    trial = read_trial(path)
    (point,) = trial.points
    assert (trial.format, trial.tool_version, trial.day, point.concurrency) == (
        "aiperf",
        "0.7.0",
        date(2026, 11, 3),
        64.0,
    )
    assert point.ttft_s == pytest.approx(2.369317693)
    flat["time_to_first_token"]["unit"] = "ns"
    path.write_text(json.dumps(flat))
    with pytest.raises(InputError, match=r"time_to_first_token.unit: must be 'ms', the unit read \(got 'ns'\)"):
        read_trial(path)


def test_guidellm_07_reads_the_inter_token_latency_not_the_time_per_output_token():
    trial = read_trial(GUIDELLM_07)
    assert (trial.format, trial.tool_version, trial.day) == ("guidellm", "0.7.3", date(2026, 11, 12))
    first, second = trial.points
    # since 0.3 time_per_output_token_ms counts the first token (22.5 + 1650 / 1024 = 24.11 ms): the
    # interactivity is 1000 / inter_token_latency_ms median 22.5 = 44.444 tok/s per user, not 1000 / 24.11 = 41.5
    assert first.interactivity == pytest.approx(1000 / 22.5)
    assert second.interactivity == pytest.approx(1000 / 30.0)
    assert (first.output_tok_s, first.ttft_s, first.concurrency) == (640.0, 1.65, 15.8)
    assert (first.completed, first.failed) == (160, 2)  # metrics.request_totals, 0.7's place for them


def test_perf_import_makes_a_curve_of_both_and_refuses_a_bad_field(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    result = run(
        "perf",
        "import",
        GUIDELLM_07,
        AIPERF,
        "--gpus",
        "8",
        "--name",
        "trial-new",
        "--isl",
        "8192",
        "--osl",
        "1024",
        "-w",
        ws,
    )
    assert result.exit_code == 0, result.output
    lines = [
        line for line in (ws / "performance" / "trial-new.csv").read_text().splitlines() if not line.startswith("#")
    ]
    # per billed GPU: 640 / 8 = 80, 1020 / 8 = 127.5, 2320.72 / 8 = 290.09; sorted by interactivity
    assert lines[1:] == ["33.3333,127.5,2.4", "36.212,290.09,2.36932", "44.4444,80,1.65"]
    # AIPerf's run of 550 / 243 tokens measured another workload; 2 errored at concurrency 16, 11 cancelled
    assert (
        "mean input length 550 tokens is 93% off" in result.output
        and "2 failed request(s) of 162" in result.output
        and "11 failed request(s) of 100" in result.output
    )
    bad = tmp_path / "profile_export_aiperf.json"
    data = json.loads(AIPERF.read_text())
    data["records"]["output_token_throughput"]["avg"] = "fast"
    bad.write_text(json.dumps(data))
    refused = run("perf", "import", bad, "--gpus", "8", "--name", "trial-bad", "-w", ws)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert (
        "profile_export_aiperf.json: records.output_token_throughput.avg: must be a finite number (got 'fast')"
        in refused.output
    )
    assert not (ws / "performance" / "trial-bad.csv").exists()
