"""Trials run against a signed vendor after signing (`procure perf import FILE --offer ID`, kept in
actuals/ID/trials.csv), the scorecard's reading of them as evidence of capacity, and the warning on a
trial or measured curve far above the public curves of the same GPU, model and precision
(procure/model/references.py). Every expected figure is worked by hand in the comments."""

from __future__ import annotations

import json
import math
import shutil
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procure.cli import app
from procure.io.example import write_example
from procure.io.offer_trials import parse_trials

TRIALS = Path(__file__).parent / "data" / "trials"
REAL = Path(__file__).parent / "data" / "real_offers"
runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def vllm_run(
    tmp_path: Path, tpot_ms: float, output_tok_s: float, day: str = "20261120-101500", name: str = "fast.json"
) -> Path:
    """A `vllm bench serve --save-result` file: the project's sample with the figures this test needs."""
    data = json.loads((TRIALS / "vllm_bench_serve_conc32.json").read_text())
    data.update(median_tpot_ms=tpot_ms, output_throughput=output_tok_s, date=day)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def example(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write_example(ws)  # what `procure init DIR --example` writes
    return ws


def trial_rows(ws: Path, offer: str = "keel-b200-mc") -> list[list[str]]:
    lines = (ws / "actuals" / offer / "trials.csv").read_text().splitlines()
    return [line.split(",") for line in lines if not line.startswith("#")]


def test_a_trial_after_signing_is_kept_as_the_vendors_evidence_and_reimporting_it_changes_nothing(example, tmp_path):
    # median TPOT 8 ms: 1000 / 8 = 125 tok/s per user; 2,480 output tok/s over 8 GPUs = 310 per GPU; TTFT 850 ms
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    result = run(
        "perf",
        "import",
        trial,
        "--gpus",
        8,
        "--offer",
        "keel-b200-mc",
        "--as-of",
        "2026-11-29",
        "--model",
        "DeepSeek-R1",
        "--precision",
        "FP4",
        "-w",
        example,
    )
    assert result.exit_code == 0, result.output
    header, row = trial_rows(example)
    assert header == [
        "date",
        "source",
        "interactivity",
        "output_tok_s_gpu",
        "ttft_s",
        "gpus",
        "gpu_type",
        "model",
        "precision",
    ]
    # the date is the file's own (20261120-...), the GPU the offer's (gpu: B200)
    assert row == ["2026-11-20", "fast.json", "125", "310", "0.85", "8", "B200", "DeepSeek-R1", "FP4"]
    assert not (example / "performance" / "trial-fast.csv").exists()  # evidence, not a curve
    kept = (example / "actuals" / "keel-b200-mc" / "trials.csv").read_bytes()
    again = run(
        "perf",
        "import",
        trial,
        "--gpus",
        8,
        "--offer",
        "keel-b200-mc",
        "--as-of",
        "2026-11-29",
        "--model",
        "DeepSeek-R1",
        "--precision",
        "FP4",
        "-w",
        example,
    )
    assert again.exit_code == 0, again.output
    assert (example / "actuals" / "keel-b200-mc" / "trials.csv").read_bytes() == kept
    assert "trial fast.json of 2026-11-20: already kept, unchanged" in again.output
    # another trial of another day is added beside it; the first stays
    other = vllm_run(tmp_path, 10.0, 2400.0, day="20261125-090000", name="later.json")
    assert (
        run(
            "perf", "import", other, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
        ).exit_code
        == 0
    )
    assert [r[:2] for r in trial_rows(example)[1:]] == [["2026-11-20", "fast.json"], ["2026-11-25", "later.json"]]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--offer", "keel-b20-mc"), "no offer with id 'keel-b20-mc'; did you mean 'keel-b200-mc'?"),
        (("--offer", "northwind-b200-mc"), "--offer: northwind-b200-mc is not signed"),
        (
            ("--offer", "keel-b200-mc", "--date", "2026-04-19"),
            "--date: 2026-04-19 is before keel-b200-mc was signed (2026-04-20)",
        ),
        (("--offer", "keel-b200-mc", "--as-of", "2026-11-19"), "date: 2026-11-20 is after the as-of date 2026-11-19"),
        (
            ("--offer", "keel-b200-mc", "--date", "2026-12-01", "--as-of", "2026-11-29"),
            "--date: 2026-12-01 is after the as-of date 2026-11-29",
        ),
    ],
)
def test_a_trial_that_is_not_a_signed_vendors_after_signing_is_refused_and_nothing_written(
    example, tmp_path, args, expected
):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    before = sorted(p.relative_to(example) for p in example.rglob("*"))
    result = run("perf", "import", trial, "--gpus", 8, *args, "-w", example)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert expected in result.output and "nothing was written" in result.output
    assert sorted(p.relative_to(example) for p in example.rglob("*")) == before


def test_a_bad_trial_file_names_the_file_and_field_and_writes_nothing(example, tmp_path):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    data = json.loads(trial.read_text())
    data["median_tpot_ms"] = "fast"
    trial.write_text(json.dumps(data))
    result = run(
        "perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{trial}: median_tpot_ms: must be a finite number" in result.output
    assert not (example / "actuals" / "keel-b200-mc" / "trials.csv").exists()
    # InferenceX rows are public curves, never a vendor's trial
    rows = Path(__file__).parent / "data" / "import_inferencex_row.json"
    refused = run("perf", "import", rows, "--offer", "keel-b200-mc", "-w", example)
    assert refused.exit_code == 2 and "--offer: InferenceX rows are public curves" in refused.output


def test_a_kept_trials_file_the_loader_refuses_names_file_line_and_column():
    text = (
        "date,source,interactivity,output_tok_s_gpu,ttft_s,gpus,gpu_type,model,precision\n"
        "2026-11-20,a.json,125,310,0.85,8,B200,DeepSeek-R1,FP4\n"
        "2026-13-01,a.json,125,310,,8,,,\n"
        "2026-11-21,b.json,fast,310,,0,,,\n"
        "2026-11-20,a.json,125,300,,8,,,\n"
    )
    problems: list = []
    runs = parse_trials(text, "actuals/keel-b200-mc/trials.csv", problems)
    assert len(runs) == 1
    shown = [str(p) for p in problems]
    assert any("trials.csv:3: date: must be a date YYYY-MM-DD" in s for s in shown), shown
    assert any("trials.csv:4: interactivity: must be a number (got 'fast')" in s for s in shown), shown
    assert any("trials.csv:4: gpus:" in s for s in shown), shown
    assert any(
        "trials.csv:5: interactivity: the run of a.json on 2026-11-20 at 125 tok/s/user is also on line 2" in s
        for s in shown
    ), shown


def test_the_scorecard_reads_a_trial_as_a_months_capacity_and_the_posterior_by_hand(example, tmp_path):
    from procure.analysis.evaluate import evaluate
    from procure.analysis.scorecard import scorecard
    from procure.io.workspace import load_workspace

    trial = vllm_run(tmp_path, 8.0, 2480.0, day="20261020-101500")  # October: a complete month before --as-of
    assert (
        run(
            "perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
        ).exit_code
        == 0
    )
    ws = load_workspace(example)
    ev = evaluate(ws, date(2026, 11, 29), delivered=False)
    promised = ev.offer("keel-b200-mc").metrics["throughput"]  # the promise the trial is set against (an input here)
    (vendor,) = scorecard(ws, ev, ev.as_of).vendors
    october = next(m for m in vendor.months if m.month == "2026-10")
    # the trial's one point (125 tok/s/user, 310 per GPU) read at the target 100: the slowest point's 310;
    # x the benchmark-to-production mean, triangular(0.85, 0.95, 1.0): (0.85 + 0.95 + 1.0) / 3 = 0.93333
    ratio = 310 * (0.85 + 0.95 + 1.0) / 3 / promised
    assert october.trial_capacity_ratio == pytest.approx(ratio, rel=1e-12)
    assert october.trials == ["2026-10-20 fast.json"]
    # posterior: prior log-ratio N(0, 0.10^2), precision 100; the trial weighs trial_weight 0.25 of a busy month:
    # variance 0.05^2 / 0.25 = 0.01, precision 100; one observation, tau^2 = 0. Mean = 100 ln(ratio) / 200.
    e = vendor.evidence
    assert e.throughput_ratio == pytest.approx(math.exp(math.log(ratio) / 2), rel=1e-9)
    assert e.throughput_log_sd == pytest.approx(math.sqrt(1 / 200), rel=1e-9)
    assert e.throughput_basis == "post-signing trials in 1 month; 5 months without either not counted"
    # the five other months (May to September) say why in one short line
    from procure.analysis.scorecard import NO_CAPACITY

    assert len(NO_CAPACITY) <= 120
    assert all(NO_CAPACITY in m.notes for m in vendor.months if m.month < "2026-10")
    assert NO_CAPACITY not in october.notes


def test_a_month_without_busy_hours_or_a_trial_does_not_move_throughput_and_says_so(example):
    result = run("scorecard", "--as-of", "2026-11-29", "--format", "markdown", "-w", example)
    assert result.exit_code == 0
    assert "throughput not moved: no month with utilization telemetry or a post-signing trial" in result.stdout
    data = json.loads(run("scorecard", "--as-of", "2026-11-29", "--format", "json", "-w", example).stdout)
    (vendor,) = data["vendors"]
    assert vendor["evidence"]["throughput_ratio"] is None
    # availability enters once: the capacity figures carry none (no month has busy hours or a trial) and the
    # availability posterior is the incidents' alone
    assert all(m["capacity_ratio"] is None and m["trial_capacity_ratio"] is None for m in vendor["months"])


def test_a_trial_far_above_the_public_curves_is_warned_about_by_perf_import_and_validate(example, tmp_path):
    # 310 per GPU at 125 tok/s/user, said to be FP8. The example's public B200 DeepSeek-R1 FP8 curves at 100:
    #   b200-sglang-fp8 between (81, 76.2) and (109.5, 51.72), log-linear: share (100 - 81) / 28.5 = 0.66667,
    #     exp(ln 76.2 - 0.66667 x ln(76.2 / 51.72)) = 76.2 x (51.72 / 76.2)^0.66667 = 58.85
    #   b200-trt-fp8 between (79.6, 74.8) and (107.6, 50.65): 74.8 x (50.65 / 74.8)^0.72857 = 56.34
    # best 58.85; 310 / 58.85 = 5.27 > 1.25
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    args = (
        "perf",
        "import",
        trial,
        "--gpus",
        8,
        "--offer",
        "keel-b200-mc",
        "--as-of",
        "2026-11-29",
        "--model",
        "deepseek-ai/DeepSeek-R1",
        "-w",
        example,
    )
    result = run(*args, "--precision", "fp8")
    assert result.exit_code == 0, result.output
    expected = (
        "reads 310.0 output tok/s/GPU at 100 tok/s/user, 5.27x the best public curve of the same GPU, model and "
        "precision (b200-sglang-fp8: 58.9 at 100 tok/s/user"
    )
    assert expected in result.output
    checked = run("validate", "--as-of", "2026-11-29", "-w", example)
    assert checked.exit_code == 0 and expected in checked.output
    doc = json.loads(run("validate", "--as-of", "2026-11-29", "--format", "json", "-w", example).stdout)
    assert any(expected in w for w in doc["warnings"])
    # the same trial as FP4: the public FP4 curve b200-dynamo-trt-fp4 reads 300 at 100 (a point); 310 / 300 = 1.03: no
    # warning
    fp4 = run(*args, "--precision", "fp4")
    assert fp4.exit_code == 0 and "best public curve" not in fp4.output
    assert "best public curve" not in run("validate", "--as-of", "2026-11-29", "-w", example).output


def test_a_trial_without_model_or_precision_is_not_compared_and_says_so(example, tmp_path):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    data = json.loads(trial.read_text())
    del data["model_id"]  # a result file that does not say which model served it
    trial.write_text(json.dumps(data))
    result = run(
        "perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
    )
    assert result.exit_code == 0
    assert (
        "trial fast.json of 2026-11-20 states no model, precision: not compared with the public curves" in result.output
    )
    assert "best public curve" not in result.output


def test_a_measured_curve_far_above_the_public_curve_on_the_real_market(tmp_path):
    """tests/data/real_offers: the public curve b200-dynamo-trt-fp4 (DeepSeek-R1 FP4, 300 at 100 tok/s/user,
    now with its gpu, model and precision marks); a trial curve of 400 per GPU is 400 / 300 = 1.33x: warned;
    one of 360 (1.2x) is not. Also a post-signing trial on a vendor signed for the test."""
    ws = tmp_path / "real"
    shutil.copytree(REAL, ws)
    fast = vllm_run(tmp_path, 8.0, 3200.0, name="fast400.json")  # 3,200 / 8 = 400 per GPU at 125 tok/s/user
    result = run(
        "perf",
        "import",
        fast,
        "--gpus",
        8,
        "--gpu",
        "b200",
        "--model",
        "DeepSeek-R1",
        "--precision",
        "fp4",
        "--name",
        "trial-fast",
        "-w",
        ws,
    )
    assert result.exit_code == 0, result.output
    curve = (ws / "performance" / "trial-fast.csv").read_text()
    assert "# gpu: b200" in curve and "# model: DeepSeek-R1" in curve and "# precision: fp4" in curve
    warned = (
        "performance/trial-fast.csv reads 400.0 output tok/s/GPU at 100 tok/s/user, 1.33x the best public curve "
        "of the same GPU, model and precision (b200-dynamo-trt-fp4: 300.0"
    )
    assert warned in result.output
    checked = run("validate", "-w", ws)
    assert checked.exit_code == 0 and warned in checked.output
    slow = vllm_run(tmp_path, 8.0, 2880.0, name="ok360.json")  # 360 per GPU: 1.2x, within 1.25
    ok = run(
        "perf",
        "import",
        slow,
        "--gpus",
        8,
        "--gpu",
        "b200",
        "--model",
        "DeepSeek-R1",
        "--precision",
        "fp4",
        "--name",
        "trial-ok",
        "-w",
        ws,
    )
    assert ok.exit_code == 0 and "trial-ok.csv reads" not in ok.output
    # a vendor of the real market signed for the test: its post-signing trial is kept and checked the same way
    offer = ws / "offers" / "nebius-b200.yaml"
    offer.write_text(
        offer.read_text() + "contract:\n  signed: {date: 2026-09-01, gpus: 64, start: 2026-09-01, end: 2027-08-31}\n"
    )
    kept = run(
        "perf",
        "import",
        fast,
        "--gpus",
        8,
        "--offer",
        "nebius-b200",
        "--model",
        "DeepSeek-R1",
        "--precision",
        "fp4",
        "--date",
        "2026-11-02",
        "-w",
        ws,
    )
    assert kept.exit_code == 0, kept.output
    assert (
        "actuals/nebius-b200/trials.csv: trial fast400.json of 2026-11-02 reads 400.0 output tok/s/GPU at 100 "
        "tok/s/user, 1.33x" in kept.output
    )
    assert (ws / "actuals" / "nebius-b200" / "trials.csv").exists()


def test_public_curves_are_read_with_their_marks_and_compared_by_kind():
    from procure.model.references import PublicCurve, above_reference, curve_key

    assert curve_key("B200", "deepseek-ai/DeepSeek-R1", "FP8") == ("b200", "deepseek-r1", "fp8")
    assert curve_key("B200", None, "FP8") is None
    refs = [
        PublicCurve("a", ("b200", "m", "fp8"), [(50, 100), (100, 40)]),
        PublicCurve("b", ("b200", "m", "fp4"), [(100, 400)]),
    ]
    # ours reads 60 at 100; the FP8 public curve 40: 1.5x > 1.25 (the FP4 curve's 400 is another kind)
    found = above_reference([(100, 60)], ("b200", "m", "fp8"), refs, 100)
    assert found is not None and (found.ours, found.reference, found.reference_name) == (60, 40, "a")
    assert above_reference([(100, 50)], ("b200", "m", "fp8"), refs, 100) is None  # 1.25x exactly: not above
    assert above_reference([(100, 60)], ("h100", "m", "fp8"), refs, 100) is None  # no public curve of its kind


def test_curve_options_and_bad_labels_are_refused_with_offer(example, tmp_path):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    base = ("perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example)
    named = run(*base, "--name", "trial-keel")
    assert named.exit_code == 2 and "--name: a trial with --offer is kept in actuals/ID/trials.csv" in named.output
    bad = run(*base, "--model", "Deep\nSeek")
    assert bad.exit_code == 2 and "--model: holds a line break (\\x0a) at character 5: one line expected" in bad.output
    assert not (example / "actuals" / "keel-b200-mc" / "trials.csv").exists()


def test_an_inferencex_import_states_gpu_model_and_precision(tmp_path):
    from procure.io.workspace import read_curve

    out = tmp_path / "performance"
    result = run(
        "perf",
        "import",
        Path(__file__).parent / "data" / "import_inferencex_row.json",
        "--out-dir",
        out,
        "--isl",
        8192,
        "--osl",
        1024,
    )
    assert result.exit_code == 0, result.output
    (path,) = out.glob("*.csv")
    curve = read_curve(path.read_text(), str(path), path.stem, [])
    # the row: hw mi355x, model moonshotai/Kimi-K2.5, precision int4
    assert (curve.gpu, curve.model, curve.precision) == ("mi355x", "moonshotai/Kimi-K2.5", "int4")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (lambda text: text[:400], "JSON"),  # cut short: the reader's own error, not another kind's
        (lambda text: "", "JSON"),
        (lambda text: "{}", "not a trial result"),
        (
            lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "median_tpot_ms"}),
            "median_tpot_ms: required field is missing",
        ),
    ],
    ids=["truncated", "empty", "empty-object", "no-tpot"],
)
def test_a_broken_trial_with_offer_is_told_as_a_broken_trial(example, tmp_path, content, expected):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    trial.write_text(content(trial.read_text()))
    result = run(
        "perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        str(trial) in result.output
        and expected in result.output
        and "InferenceX" not in result.output.split("expected")[0]
    )
    assert not (example / "actuals" / "keel-b200-mc" / "trials.csv").exists()


def test_a_vllm_result_without_its_tpot_is_not_read_as_inferencex_rows(example, tmp_path):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    data = json.loads(trial.read_text())
    del data["median_tpot_ms"]
    trial.write_text(json.dumps(data))
    result = run("perf", "import", trial, "--gpus", 8, "-w", example)
    assert (
        result.exit_code == 2
        and "median_tpot_ms: required field is missing" in result.output
        and "[0].hw" not in result.output
    )


def test_reimporting_a_trial_with_unrounded_figures_is_unchanged(example, tmp_path):
    # 2,479.99999 output tok/s over 8 GPUs = 309.99999875 a GPU, kept as 310 (6 significant figures): the
    # same trial imported again is the same file, and said to be
    trial = vllm_run(tmp_path, 7.77777777, 2479.99999)
    args = ("perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example)
    assert run(*args).exit_code == 0
    kept = (example / "actuals" / "keel-b200-mc" / "trials.csv").read_bytes()
    again = run(*args)
    assert again.exit_code == 0 and "already kept, unchanged" in again.output and "replaced" not in again.output
    assert (example / "actuals" / "keel-b200-mc" / "trials.csv").read_bytes() == kept


def test_a_trial_before_the_first_month_of_service_makes_no_month(example, tmp_path):
    # keel was signed 2026-04-20 and serves from May: a trial on 2026-04-25 is kept but scores no April
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    assert (
        run(
            "perf",
            "import",
            trial,
            "--gpus",
            8,
            "--offer",
            "keel-b200-mc",
            "--date",
            "2026-04-25",
            "--as-of",
            "2026-11-29",
            "-w",
            example,
        ).exit_code
        == 0
    )
    doc = json.loads(run("scorecard", "--format", "json", "--as-of", "2026-11-29", "-w", example).stdout)
    vendor = doc["vendors"][0]
    assert [m["month"] for m in vendor["months"]][0] == "2026-05"
    assert any(
        "trials before the first month of service (2026-05) are not scored (2026-04)" in n for n in vendor["notes"]
    )


def test_a_trial_slower_than_the_target_is_named_not_taken_for_no_trial(example, tmp_path):
    # median TPOT 25 ms: 1000 / 25 = 40 tok/s per user, below the workload's 100: no reading at the target
    trial = vllm_run(tmp_path, 25.0, 8000.0)
    assert (
        run(
            "perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
        ).exit_code
        == 0
    )
    vendor = json.loads(run("scorecard", "--format", "json", "--as-of", "2026-12-15", "-w", example).stdout)["vendors"][
        0
    ]
    november = next(m for m in vendor["months"] if m["month"] == "2026-11")
    assert november["trial_capacity_ratio"] is None
    assert any("no reading at the target 100 tok/s/user" in n for n in november["notes"])
    assert "trials in 1 month run slower than it" in vendor["evidence"]["throughput_basis"]


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(text))


def test_an_offers_own_points_far_above_the_public_curve_are_warned_about_by_validate_and_compare(example):
    # Quarry claims 1,600 output tok/s/GPU at 100 tok/s/user (a point of its own), stack dynamo-trt, no named curve:
    # set against the public curve of the same GPU and stack, b200-dynamo-trt-fp4, 300 at 100 (a point):
    # 1,600 / 300 = 5.33x > 1.25
    offer = example / "offers" / "quarry-b200-mc.yaml"
    offer.write_text(offer.read_text().replace("[100, 320]", "[100, 1600]"))
    line = _line_of(offer, "  points:")
    expected = (
        f"offers/quarry-b200-mc.yaml:{line}: performance.points: the offer's own curve reads 1600.0 output tok/s/GPU "
        "at 100 tok/s/user, 5.33x the best public curve of the same GPU and stack (B200, dynamo-trt) "
        "(b200-dynamo-trt-fp4: 300.0 at 100 tok/s/user; warned above 1.25x): ask the vendor which GPUs a per-GPU "
        "figure counts (per billed GPU), the sequence lengths and the precision"
    )
    checked = run("validate", "--as-of", "2026-11-29", "-w", example)
    assert checked.exit_code == 0 and f"warning: {expected}" in checked.output
    doc = json.loads(run("validate", "--as-of", "2026-11-29", "--format", "json", "-w", example).stdout)
    assert expected in doc["warnings"]
    compared = run("compare", "--as-of", "2026-11-29", "--format", "json", "-w", example)
    assert compared.exit_code == 0 and f"warning: {expected}" in compared.stderr
    json.loads(compared.stdout)  # standard output carries only the JSON


def test_an_offers_points_are_set_against_its_named_curve_kind_else_its_gpu(example):
    # Northwind names b200-dynamo-sglang-fp4 (B200, DeepSeek-R1, FP4): its points are set against the best public
    # curve of that GPU, model and precision, b200-dynamo-trt-fp4 at 300, not only the named 200: 370 / 300 = 1.23,
    # no warning (370 / 200 = 1.85 would be)
    northwind = example / "offers" / "northwind-b200-mc.yaml"
    northwind.write_text(northwind.read_text().replace("[100, 215]", "[100, 370]"))
    # Saltmarsh's stack (vllm-fp4) has no public curve: every public B200 curve, best b200-dynamo-trt-fp4's 300;
    # its own curve reaches 100 tok/s/user now: 400 / 300 = 1.33x
    saltmarsh = example / "offers" / "saltmarsh-b200-ms.yaml"
    saltmarsh.write_text(saltmarsh.read_text().replace("[80, 260]", "[80, 600], [100, 400]"))
    output = run("validate", "--as-of", "2026-11-29", "-w", example).output
    assert "northwind-b200-mc.yaml" not in output
    assert (
        "performance.points: the offer's own curve reads 400.0 output tok/s/GPU at 100 tok/s/user, 1.33x the best "
        "public curve of the same GPU (B200, any serving stack) (b200-dynamo-trt-fp4: 300.0" in output
    )
    # the example as it ships: no offer's points are beyond its curves
    assert "the offer's own curve" not in run("validate", "--as-of", "2026-11-29", "-w", REAL).output


def test_the_trials_model_is_the_result_files_own_when_model_is_not_given(example, tmp_path):
    trial = vllm_run(tmp_path, 8.0, 2480.0)  # the sample's model_id: deepseek-ai/DeepSeek-R1
    result = run(
        "perf", "import", trial, "--gpus", 8, "--gpu", "B200", "--precision", "FP4", "--offer", "keel-b200-mc",
        "--as-of", "2026-11-29", "-w", example,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert trial_rows(example)[1] == [
        "2026-11-20", "fast.json", "125", "310", "0.85", "8", "B200", "deepseek-ai/DeepSeek-R1", "FP4"
    ]  # fmt: skip


def test_a_model_other_than_the_result_files_is_refused(example, tmp_path):
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    result = run(
        "perf", "import", trial, "--gpus", 8, "--model", "Llama-3.1-70B", "--offer", "keel-b200-mc",
        "--as-of", "2026-11-29", "-w", example,
    )  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        f"{trial}: model_id: the run served 'deepseek-ai/DeepSeek-R1', but --model says 'Llama-3.1-70B'"
    ) in result.output
    assert not (example / "actuals" / "keel-b200-mc" / "trials.csv").exists()


def test_two_result_files_of_different_models_are_refused_without_model(example, tmp_path):
    first = vllm_run(tmp_path, 8.0, 2480.0)
    second = vllm_run(tmp_path, 8.0, 2480.0, day="20261121-101500", name="other.json")
    data = json.loads(second.read_text())
    data["model_id"] = "meta-llama/Llama-3.1-70B"
    second.write_text(json.dumps(data))
    result = run(
        "perf", "import", first, second, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29",
        "-w", example,
    )  # fmt: skip
    assert result.exit_code == 2
    assert (
        f"{second}: model_id: 'meta-llama/Llama-3.1-70B', but 'deepseek-ai/DeepSeek-R1' in the same trial"
    ) in result.output


@pytest.mark.parametrize("gpus", [800, 1_000_000])
def test_a_trial_on_more_gpus_than_the_offer_supplies_is_refused(example, tmp_path, gpus):
    # keel-b200-mc supplies at most 768 GPUs (max_gpus): --gpus 800 (a typo for 8) would read 2,480 / 800 = 3.1
    # tok/s/GPU and move Keel out of the ranking; it is refused, the option named, nothing written
    trial = vllm_run(tmp_path, 8.0, 2480.0)
    before = sorted(p.relative_to(example) for p in example.rglob("*"))
    result = run(
        "perf", "import", trial, "--gpus", gpus, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        f"--gpus: {gpus:,} GPUs is more than keel-b200-mc supplies (at most 768): a trial of a signed vendor runs on "
        "the offer's own GPUs" in " ".join(result.output.split())
    ), result.output
    assert sorted(p.relative_to(example) for p in example.rglob("*")) == before


def test_a_trial_far_from_the_promise_is_warned_about_by_the_scorecard_and_compare(example, tmp_path):
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    # 2,480 output tok/s said to be over 2 GPUs: 1,240 per GPU, x the benchmark-to-production mean 0.93333 =
    # 1,157.3, about four times Keel's promise: warned about, as a trial far above the public curves is
    trial = vllm_run(tmp_path, 8.0, 2480.0, day="20261020-101500")
    args = ("perf", "import", trial, "--gpus", 2, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example)
    assert run(*args).exit_code == 0
    promised = evaluate(load_workspace(example), date(2026, 11, 29), delivered=False).offer("keel-b200-mc")
    ratio = 1240 * (0.85 + 0.95 + 1.0) / 3 / promised.metrics["throughput"]
    assert ratio > 1.25
    warning = (
        f"2026-10: warning: the month's post-signing trials read {ratio:.1%} of the promise, more than 1.25x from it"
    )
    card = run("scorecard", "--as-of", "2026-11-29", "--format", "markdown", "-w", example)
    assert card.exit_code == 0 and warning in " ".join(card.output.split()), card.output
    # compare's notes on the offer (its JSON prints the evaluation's, tests/test_cli_evaluate.py)
    notes = evaluate(load_workspace(example), date(2026, 11, 29)).offer("keel-b200-mc").notes
    assert any(warning in n for n in notes), notes
    checked = json.loads(run("validate", "--as-of", "2026-11-29", "--format", "json", "-w", example).stdout)
    assert any(f"keel-b200-mc: {warning}" in w for w in checked["warnings"]), checked["warnings"]
