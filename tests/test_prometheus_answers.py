"""A Prometheus answer read as an answer: `warnings` and `infos` make the months it spans partial, and a step
longer than gap_minutes gives no busy GPU-hours (never 0) and is refused for a live import. Figures by hand."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from procure.cli import app
from procure.io.actuals import read_metrics_csv

runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def answer(tmp_path: Path, result: list[dict], **extra: object) -> Path:
    path = tmp_path / "range.json"
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}, **extra}))
    return path


def every(start: str, seconds: int, values: list[float]) -> list[list]:
    return [[at(start) + seconds * i, str(v)] for i, v in enumerate(values)]


TOKENS = {
    "metric": {"__name__": "vllm:generation_tokens_total", "model_name": "m"},
    # one hour of November, a sample a minute: 61 samples, 6,000 tokens
    "values": every("2026-11-02T00:00:00", 60, [100.0 * i for i in range(61)]),
}


def metrics(ws: Path):  # type: ignore[no-untyped-def]
    return read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])


def test_an_answer_with_warnings_or_infos_makes_its_months_partial(workspace_copy, tmp_path):
    clean = workspace_copy("basic")
    result = run("actuals", "import", answer(tmp_path, [TOKENS]), "--offer", "alpha", "-w", clean)
    assert result.exit_code == 0, result.output
    # the hour covers 3,600 of November's 2,592,000 seconds
    assert abs(metrics(clean)["2026-11"].coverage - 3600 / 2_592_000) < 1e-9
    ws = tmp_path / "second"
    shutil.copytree(clean, ws, ignore=shutil.ignore_patterns("actuals"))
    warned = answer(
        tmp_path,
        [TOKENS],
        warnings=["partial response: store eu-1 unavailable"],
        infos=["PromQL info: metric might not be a counter"],
    )
    result = run("actuals", "import", warned, "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    month = metrics(ws)["2026-11"]
    assert month.coverage == 0 and month.output_tokens == 6000  # the tokens kept, the month partial
    assert (
        "month 2026-11: partial, counted as covering 0% of the month: the Prometheus answer came with "
        f"{warned}: warning: partial response: store eu-1 unavailable; {warned}: info: PromQL info: metric might not "
        "be a counter"
    ) in result.output


def test_a_step_longer_than_gap_minutes_gives_no_busy_gpu_hours_never_zero(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    busy = {
        "metric": {"__name__": "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gpu": "0", "UUID": "GPU-a"},
        # a step of 15 minutes, longer than the default gap_minutes (10): no step is measured
        "values": every("2026-11-02T00:00:00", 900, [0.5] * 5),
    }
    result = run("actuals", "import", answer(tmp_path, [TOKENS, busy]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert metrics(ws)["2026-11"].busy_gpu_hours is None
    assert (
        'month 2026-11: busy GPU-hours unknown: every step of DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID="GPU-a",gpu="0"} '
        "in the month is longer than gap_minutes (10 min)"
    ) in result.output


def test_a_live_import_with_a_step_longer_than_gap_minutes_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    # refused before any connection: nothing listens on the discard port
    result = run(
        "actuals", "import", "--prometheus", "http://127.0.0.1:9", "--since", "2026-11-01", "--until", "2026-11-02",
        "--step", "900", "--offer", "alpha", "-w", ws,
    )  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--step: 900 s is longer than actuals.gap_minutes (10 min)" in result.output
    assert not (ws / "actuals").exists()
