"""Busy GPU-hours from utilization telemetry (procure/io/actuals.py `_add_busy`, telemetry.gauge_integral)
and the capacity ratio the scorecard sets against the promise. Figures by hand in the comments. The evidence is
imported in process (tests/importhelp.py); the refusals of `validate` and `scorecard` run through the commands."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from importhelp import run as import_run
from typer.testing import CliRunner

from procure.cli import app
from procure.io import telemetry as tm
from procure.io.actuals import read_metrics_csv

runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def range_file(tmp_path: Path, result: list[dict], name: str = "range.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


def series(name: str, samples: list[tuple[str, float]], **labels: str) -> dict:
    return {"metric": {"__name__": name, **labels}, "values": [[at(t), str(v)] for t, v in samples]}


def minutes(start: str, values: list[float]) -> list[tuple[str, float]]:
    t0 = at(start)
    return [
        (datetime.fromtimestamp(t0 + 60 * i, tz=UTC).replace(tzinfo=None).isoformat(), v) for i, v in enumerate(values)
    ]


def test_a_gauge_integrates_as_the_last_sample_held_and_a_gap_counts_at_the_covered_mean():
    # samples at 0, 60, 120 s and then 1,320 s (a 20-minute gap with gap_s 600): values 0.5, 1.0, 0.0, 0.8
    t = [at("2026-11-02T00:00:00"), at("2026-11-02T00:01:00"), at("2026-11-02T00:02:00"), at("2026-11-02T00:22:00")]
    found = tm.gauge_integral(t, [0.5, 1.0, 0.0, 0.8], gap_s=600)
    month = found["2026-11"]
    # covered steps: 0.5 x 60 + 1.0 x 60 = 90 value-seconds over 120 s; the 1,200 s gap is not integrated
    assert month.integral == 90.0 and month.covered_s == 120.0 and month.span_s == 1320.0
    # filled: the covered mean 90 / 120 = 0.75 over the whole 1,320 s span = 990 value-seconds
    assert month.filled == 990.0


def test_dcgm_engine_active_makes_busy_gpu_hours_per_month(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    # two GPUs, one sample a minute for an hour across the October/November month end (61 samples, 60 steps):
    # GPU 0 at 0.5 throughout; GPU 1 at 1.0. The step (23:59, 00:00] is October's, held at its earlier value.
    gpu0 = series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        minutes("2026-10-31T23:30:00", [0.5] * 61),
        gpu="0",
        UUID="GPU-a",
        Hostname="n1",
        modelName="NVIDIA B200",
    )
    gpu1 = series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        minutes("2026-10-31T23:30:00", [1.0] * 61),
        gpu="1",
        UUID="GPU-b",
        Hostname="n1",
        modelName="NVIDIA B200",
    )
    result = import_run("actuals", "import", range_file(tmp_path, [gpu0, gpu1]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    months = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])
    # October: 30 one-minute steps (23:30 to 00:00) x (0.5 + 1.0) = 45 GPU-minutes = 0.75 GPU-hours
    # November: the other 30 steps, the same 0.75
    assert months["2026-10"].busy_gpu_hours == 0.75
    assert months["2026-11"].busy_gpu_hours == 0.75
    assert "busy_gpu_hours" in (ws / "actuals" / "alpha" / "metrics.csv").read_text().splitlines()[1]


def test_vllm_saturation_is_read_when_no_gpu_gauge_covers_the_month(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    text = config.read_text()
    assert "actuals:" not in text
    config.write_text(text + "\nactuals:\n  metrics: {max_concurrency: 64, gpus_per_engine: 8}\n")
    # one engine on 8 GPUs, 30 minutes in November: 32 running for 20 steps, 128 (capped at 64: 1.0) for 10
    running = series(
        "vllm:num_requests_running",
        minutes("2026-11-02T00:00:00", [32.0] * 20 + [128.0] * 11),
        model_name="m",
        engine="0",
    )
    result = import_run("actuals", "import", range_file(tmp_path, [running]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    months = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])
    # saturation-minutes: 20 x 32/64 + 10 x 1 = 20; x 8 GPUs = 160 GPU-minutes = 2.6667 GPU-hours
    assert abs(months["2026-11"].busy_gpu_hours - 160 / 60) < 1e-9
    assert "busy GPU-hours from vllm:num_requests_running / 64 x 8 GPUs" in result.output


def test_an_engine_active_ratio_above_one_is_refused_with_its_series_and_nothing_written(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    bad = series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE", minutes("2026-11-02T00:00:00", [0.5, 85.0, 0.5]), gpu="0", UUID="GPU-a"
    )
    path = range_file(tmp_path, [bad])
    result = import_run("actuals", "import", path, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2
    assert str(path) in result.output and "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" in result.output
    assert "an engine-active ratio must lie between 0 and 1 (got 85" in result.output
    assert not (ws / "actuals").exists()


def test_a_dcgm_label_on_another_metric_is_still_unknown(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    tokens = series(
        "vllm:generation_tokens_total", minutes("2026-11-02T00:00:00", [0.0, 60.0]), model_name="m", UUID="GPU-a"
    )
    result = import_run("actuals", "import", range_file(tmp_path, [tokens]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "unknown label UUID on vllm:generation_tokens_total" in result.output


def test_a_busy_gpu_hours_cell_that_is_not_a_number_names_file_line_and_column(workspace_copy):
    ws = workspace_copy("basic")
    folder = ws / "actuals" / "alpha"
    folder.mkdir(parents=True)
    header = (
        "month,output_tokens,requests_ok,requests_failed,ttft_p50_s,ttft_p90_s,ttft_p99_s,"
        "e2e_p50_s,e2e_p90_s,e2e_p99_s,coverage,resets,gaps,busy_gpu_hours"
    )
    (folder / "metrics.csv").write_text(header + "\n2026-10,100,,,,,,,,,1,0,0,lots\n")
    result = run("validate", "-w", ws)
    assert result.exit_code == 2
    assert (
        "metrics.csv:2" in result.output and "busy_gpu_hours" in result.output and "must be a number" in result.output
    )


def test_the_scorecard_sets_tokens_per_busy_gpu_hour_against_the_promise_and_the_posterior_moves():
    from types import SimpleNamespace

    from procure.analysis.scorecard import NO_CAPACITY, _score_month, posterior
    from procure.io.actuals import Invoice, MonthMetrics, OfferActuals
    from procure.model.inputs import ActualsConfig

    config = ActualsConfig()
    promise = SimpleNamespace(
        tpgh=500_000.0,
        throughput=200.0,
        sla=None,
        terms=None,
        metrics={},
        fx=1.0,
        own_per_gpu_hour=0.0,
        contract_gpus=100,
        limit=None,
    )
    # October 2026 (744 h): 100 GPUs billed 74,400 GPU-hours, busy 37,200 of them; 3.348e10 output tokens.
    # tokens per busy GPU-hour 3.348e10 / 37,200 = 900,000; promised 200 tok/s x 3,600 = 720,000: ratio 1.25
    actuals = OfferActuals(
        "alpha",
        metrics={"2026-10": MonthMetrics("2026-10", output_tokens=3.348e10, coverage=1.0, busy_gpu_hours=37_200.0)},
        invoices={"2026-10": Invoice("2026-10", 74_400.0, None, 1.0)},
    )
    month = _score_month(actuals, "2026-10", promise, config, False, datetime(2026, 11, 15).date())
    assert month.capacity_ratio == 1.25 and month.busy_gpu_hours == 37_200.0
    assert NO_CAPACITY not in month.notes
    # the same month without telemetry: no capacity, and the scorecard says why
    bare = OfferActuals(
        "alpha",
        metrics={"2026-10": MonthMetrics("2026-10", output_tokens=3.348e10, coverage=1.0)},
        invoices=actuals.invoices,
    )
    plain = _score_month(bare, "2026-10", promise, config, False, datetime(2026, 11, 15).date())
    assert plain.capacity_ratio is None and NO_CAPACITY in plain.notes
    # the scorecard's capacity column shows the busy-hour ratio; tokens per billed GPU-hour (our traffic) stand apart:
    # 3.348e10 / 74,400 billed GPU-hours = 450,000 a GPU-hour, over the promise's 500,000 per billed GPU-hour (tpgh) =
    # 90%
    from procure.render.scorecard import _capacity

    assert (_capacity(month), _capacity(plain)) == ("125.0%", "—")
    assert abs(month.throughput_ratio - 0.9) < 1e-12
    # posterior: w = 37,200 busy / the month's 74,400 billed GPU-hours = 0.5; variance 0.05^2 / w = 0.005; prior
    # 0.1^2: precision 100 + 200 = 300; mean = 200 x ln 1.25 / 300 = 0.148762; median e^0.148762 = 1.16040
    record = SimpleNamespace(metrics={"billed_gpus": 100}, gpus=100)
    ev = posterior([month], record, actuals, config)
    assert ev.months == 1 and ev.exposure_months == 0.5 and abs(ev.throughput_ratio - 1.16040) < 1e-4
    assert posterior([plain], record, bare, config).throughput_ratio is None


def test_an_unknown_label_on_the_gpu_gauge_lists_the_labels_the_gauge_may_carry(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    gauge = series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE", minutes("2026-11-02T00:00:00", [0.5, 0.5]), gpu="0", UUID="GPU-a", rack="r1"
    )
    result = import_run("actuals", "import", range_file(tmp_path, [gauge]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "unknown label rack on DCGM_FI_PROF_GR_ENGINE_ACTIVE" in result.output
    allowed = result.output.split("allowed are ", 1)[1]
    assert "UUID" in allowed and "gpu" in allowed


def test_a_negative_engine_active_sample_is_told_as_a_sample_not_a_counter(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    gauge = series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", minutes("2026-11-02T00:00:00", [0.5, -0.5]), gpu="0", UUID="GPU-a")
    result = import_run("actuals", "import", range_file(tmp_path, [gauge]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 2 and "a sample's value must be a finite number of at least 0 (got -0.5" in result.output
    assert "counter" not in result.output and not (ws / "actuals").exists()


def test_telemetry_of_part_of_the_fleet_is_scaled_to_the_gpus_billed_and_far_readings_are_warned_about():
    from types import SimpleNamespace

    from procure.analysis.scorecard import _score_month
    from procure.io.actuals import Invoice, MonthMetrics, OfferActuals
    from procure.model.inputs import ActualsConfig

    promise = SimpleNamespace(
        tpgh=500_000.0,
        throughput=200.0,
        sla=None,
        terms=None,
        metrics={},
        fx=1.0,
        own_per_gpu_hour=0.0,
        contract_gpus=256,
        limit=None,
    )
    # October 2026 (744 h): 256 GPUs billed 190,464 GPU-hours; the fleet 90% busy serves 200 tok/s per busy GPU (the
    # promise): 256 x 744 x 0.9 = 171,417.6 busy GPU-hours x 720,000 = 1.23420672e11 output tokens. Telemetry
    # covered 64 of the GPUs: 64 x 744 x 0.9 = 42,854.4 busy GPU-hours. Read as the whole fleet: 1.23420672e11 /
    # 42,854.4 / 720,000 = 400%; scaled by 256 / 64 = 4: 100%.
    tokens, measured = 1.23420672e11, 42_854.4
    invoices = {"2026-10": Invoice("2026-10", 190_464.0, None, 1.0)}

    def month(busy_gpus, bills=invoices):
        metrics = MonthMetrics("2026-10", output_tokens=tokens, coverage=1.0, busy_gpu_hours=measured)
        metrics.busy_gpus = busy_gpus
        actuals = OfferActuals("alpha", metrics={"2026-10": metrics}, invoices=bills)
        return _score_month(actuals, "2026-10", promise, ActualsConfig(), False, datetime(2026, 11, 15).date())

    scaled = month(64.0)
    assert abs(scaled.capacity_ratio - 1.0) < 1e-12
    assert (
        "busy GPU-hours from telemetry of 64 of the 256 GPUs billed: scaled by 4 to the whole fleet (the others taken "
        "as busy as those measured)" in scaled.notes
    )
    assert not any(n.startswith("warning:") for n in scaled.notes)
    # without an invoice, set against the contract's 256 GPUs: the same
    assert abs(month(64.0, {}).capacity_ratio - 1.0) < 1e-12
    # telemetry that does not say how many GPUs it covered (an older metrics.csv) is read as it was, and warned
    # about: 400.0% is more than 1.25x from the promise
    unknown = month(None)
    assert abs(unknown.capacity_ratio - 4.0) < 1e-12
    assert (
        "warning: tokens per busy GPU-hour read 400.0% of the promise, more than 1.25x from it: check that the "
        "evidence covers every billed GPU (and a trial's --gpus) before trusting it" in unknown.notes
    )


def test_the_gpus_a_gpu_gauge_covered_are_kept_with_the_busy_hours(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    gauges = [
        series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", minutes("2026-11-02T00:00:00", [0.5] * 3), gpu=str(i), UUID=f"GPU-{i}")
        for i in range(3)
    ]
    result = import_run("actuals", "import", range_file(tmp_path, gauges), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    path = ws / "actuals" / "alpha" / "metrics.csv"
    assert path.read_text().splitlines()[1].endswith(",busy_gpu_hours,busy_gpus")
    (november,) = read_metrics_csv(path, "metrics.csv", []).values()
    # three GPUs, two one-minute steps each at 0.5: 3 x 2 x 0.5 = 3 GPU-minutes = 0.05 GPU-hours
    assert november.busy_gpus == 3 and abs(november.busy_gpu_hours - 0.05) < 1e-12
    # a count that is not a whole number is refused with file, line and column
    path.write_text(path.read_text().replace(",3\n", ",2.5\n"))
    checked = run("scorecard", "--as-of", "2026-12-01", "-w", ws)
    assert checked.exit_code == 2 and "metrics.csv:3: busy_gpus: must be a whole number of at least 1 (got 2.5)" in (
        checked.output
    ), checked.output
