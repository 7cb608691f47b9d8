"""Trial results (guidellm, `vllm bench serve`, genai-perf) into a measured curve per billed GPU
(procure/io/trials.py and `procure perf import`). The sample files are in tests/data/trials/ with their
sources (SOURCES.md there); every expected figure below is worked out by hand from the file's own
fields."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procure.cli import app
from procure.errors import InputError
from procure.io.trials import import_trials, read_trial
from procure.io.workspace import load_workspace

TRIALS = Path(__file__).parent / "data" / "trials"
runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_guidellm_report_from_the_projects_own_test_asset():
    trial = read_trial(TRIALS / "guidellm_benchmarks_stripped.json")
    assert trial.format == "guidellm"
    # start_time 1749157168.18 s = 2025-06-05 20:59 UTC (20,244 days after 1970-01-01)
    assert trial.day == date(2025, 6, 5)
    (point,) = trial.points
    # time_per_output_token_ms median 4.885653033852577 -> 1000 / 4.885653 = 204.681 tok/s per user
    assert point.interactivity == pytest.approx(204.681, abs=1e-3)
    # output_tokens_per_second successful mean 198.13346751788123; TTFT median 16.38054847717285 ms
    assert point.output_tok_s == pytest.approx(198.1335, abs=1e-4)
    assert point.ttft_s == pytest.approx(0.0163805, abs=1e-7)
    assert (point.completed, point.failed) == (46, 0)


def test_vllm_and_genai_perf_runs_make_one_curve_per_billed_gpu(tmp_path):
    out = tmp_path / "performance"
    written, warnings = import_trials(
        [TRIALS / "vllm_bench_serve_conc32.json", TRIALS / "genai_perf_profile_export_conc16.json"],
        out,
        "trial-x",
        8,
        8192,
        1024,
        date(2026, 11, 3),
    )
    assert written == [out / "trial-x.csv"]
    assert warnings == []  # 8192/1024 and 8190/1000 are within 20% of the workload's lengths
    text = written[0].read_text()
    assert "# points_source: measured" in text and "# trial date: 2026-11-03" in text
    got = [(float(r["interactivity"]), float(r["output_tok_s_gpu"]), float(r["ttft_s"])) for r in rows(written[0])]
    # vllm: 1000 / median_tpot_ms 25.0 = 40 tok/s/user; output_throughput 1129.931 / 8 GPUs = 141.241; TTFT 850 ms
    # genai-perf: output_token_throughput_per_user p50 95; output_token_throughput avg 1600 / 8 = 200; TTFT p50 420 ms
    assert got == [(40.0, pytest.approx(141.241, abs=1e-3), 0.85), (95.0, 200.0, 0.42)]


def test_a_trial_of_other_lengths_is_flagged(tmp_path):
    # the guidellm asset ran 256 input / 128 output tokens: 257.1 is 97% below 8,192 and 128 is 88% below 1,024
    _, warnings = import_trials([TRIALS / "guidellm_benchmarks_stripped.json"], tmp_path, "trial-g", 1, 8192, 1024)
    assert len(warnings) == 2
    assert "mean input length 257 tokens is 97% off the workload's 8192" in warnings[0]
    assert "mean output length 128 tokens is 88% off the workload's 1024" in warnings[1]
    assert "# length mismatch:" in (tmp_path / "trial-g.csv").read_text()
    # 20% is the limit: vllm's 1,024 output tokens against 1,250 is 226 off (18%, within 250), against 1,300 is 276 off
    # (21%, past 260)
    _, close = import_trials([TRIALS / "vllm_bench_serve_conc32.json"], tmp_path, "trial-h", 8, 8192, 1250)
    assert close == []
    _, far = import_trials([TRIALS / "vllm_bench_serve_conc32.json"], tmp_path, "trial-i", 8, 8192, 1300)
    assert len(far) == 1 and "mean output length 1024 tokens is 21% off the workload's 1300" in far[0]


def test_genai_perf_states_no_date_and_a_bad_field_is_located(tmp_path):
    with pytest.raises(InputError, match="state no date: give the trial's date with --date"):
        read_trial(TRIALS / "genai_perf_profile_export_conc16.json")
    bad = tmp_path / "bad.json"
    text = (
        (TRIALS / "vllm_bench_serve_conc32.json")
        .read_text()
        .replace('"median_tpot_ms": 25.0', '"median_tpot_ms": "fast"')
    )
    bad.write_text(text)
    with pytest.raises(InputError) as caught:
        read_trial(bad)
    assert str(caught.value.problems[0]) == f"{bad}: median_tpot_ms: must be a finite number (got 'fast')"


def test_perf_import_cli_and_an_offer_on_the_trial_curve_is_ranked_as_measured(workspace_copy, data_dir):
    ws = workspace_copy("basic")
    result = run(
        "perf", "import", TRIALS / "vllm_bench_serve_conc32.json", "--gpus", "8", "--name", "trial-bravo", "-w", ws
    )
    assert result.exit_code == 0, result.output
    missing_gpus = run("perf", "import", TRIALS / "vllm_bench_serve_conc32.json", "-w", ws)
    assert missing_gpus.exit_code == 2 and "--gpus N" in missing_gpus.output
    offer = ws / "offers" / "bravo.yaml"
    text = offer.read_text()
    start = text.index("performance:")
    offer.write_text(text[:start] + "performance:\n  reference: trial-bravo\n")
    workspace = load_workspace(ws)
    assert workspace.curves["trial-bravo"].points_source == "measured"
    assert workspace.curves["trial-bravo"].measured_on == date(2026, 11, 3)
    from procure.analysis.evaluate import evaluate

    record = evaluate(workspace, date(2026, 11, 29)).offer("bravo")
    assert record.points_source == "measured"


def test_files_of_both_kinds_in_one_import_are_refused(tmp_path, data_dir):
    result = run(
        "perf",
        "import",
        TRIALS / "vllm_bench_serve_conc32.json",
        data_dir / "import_inferencex_row.json",
        "--gpus",
        "8",
        "--out-dir",
        tmp_path,
        "--isl",
        "8192",
        "--osl",
        "1024",
    )
    assert result.exit_code == 2 and "not both" in result.output
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "name, models",
    [
        # as each file writes it (read by eye from the files, fields named)
        ("guidellm_benchmarks_stripped.json", {"example_model": "benchmarks[0].worker.backend_model"}),
        ("guidellm_0.7_benchmarks_conc16_conc32.json", {}),  # this report keeps no args
        ("vllm_bench_serve_conc32.json", {"deepseek-ai/DeepSeek-R1": "model_id"}),
        ("genai_perf_profile_export_conc16.json", {"deepseek-ai/DeepSeek-R1": "input_config.model_names"}),
        ("aiperf_profile_export_run1.json", {"openai/gpt-oss-20b": "input_config.endpoint.model_names"}),
    ],
)
def test_each_result_file_states_its_model(name, models):
    assert read_trial(TRIALS / name, date(2026, 11, 3)).models == models


def test_a_curve_without_model_takes_the_result_files_and_a_conflict_is_refused(tmp_path):
    out = tmp_path / "performance"
    sources = [TRIALS / "vllm_bench_serve_conc32.json", TRIALS / "genai_perf_profile_export_conc16.json"]
    written, _ = import_trials(sources, out, "trial-x", 8, 8192, 1024, date(2026, 11, 3))
    assert "# model: deepseek-ai/DeepSeek-R1" in written[0].read_text().splitlines()
    # DeepSeek-R1 is the same model as deepseek-ai/DeepSeek-R1: the name given is kept
    written, _ = import_trials(
        sources, out, "trial-y", 8, 8192, 1024, date(2026, 11, 3), marks={"model": "DeepSeek-R1"}
    )
    assert "# model: DeepSeek-R1" in written[0].read_text().splitlines()
    with pytest.raises(InputError) as refused:
        import_trials(sources, out, "trial-z", 8, 8192, 1024, date(2026, 11, 3), marks={"model": "gpt-oss-20b"})
    assert [str(p) for p in refused.value.problems] == [
        f"{sources[0]}: model_id: the run served 'deepseek-ai/DeepSeek-R1', but --model says 'gpt-oss-20b': import "
        "the trial of the model meant, or correct --model",
        f"{sources[1]}: input_config.model_names: the run served 'deepseek-ai/DeepSeek-R1', but --model says "
        "'gpt-oss-20b': import the trial of the model meant, or correct --model",
    ]
    assert not (out / "trial-z.csv").exists()
