"""What current exporters write, accepted by default: vLLM's five finish reasons (vllm/v1/engine/__init__.py
FINISH_REASON_STRINGS), dcgm-exporter's Kubernetes and Slurm labels (internal/pkg/transformation/const.go) and
kube-prometheus-stack's exported_* labels. Figures by hand in the comments."""

from __future__ import annotations

import json
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


def range_file(tmp_path: Path, result: list[dict]) -> Path:
    path = tmp_path / "range.json"
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


def series(name: str, samples: list[tuple[float, float]], **labels: str) -> dict:
    return {"metric": {"__name__": name, **labels}, "values": [[t, str(v)] for t, v in samples]}


def minutes(start: str, values: list[float]) -> list[tuple[float, float]]:
    return [(at(start) + 60 * i, v) for i, v in enumerate(values)]


REASONS = ("stop", "length", "abort", "error", "repetition")


def test_vllms_finish_reasons_created_up_front_are_all_known(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    # vLLM creates the counter of every finish reason at start, at 0; in the hour, 100 stop, 20 length,
    # 3 repetition (served), 4 abort and 1 error (failed): one sample a minute, the count at the end
    final = {"stop": 100.0, "length": 20.0, "abort": 4.0, "error": 1.0, "repetition": 3.0}
    found = [
        series(
            "vllm:request_success_total",
            minutes("2026-11-02T00:00:00", [0.0] * 60 + [final[reason]]),
            model_name="m",
            engine="0",
            finished_reason=reason,
            pod="vllm-0",
            namespace="serving",
            # kube-prometheus-stack: the series' own labels, kept beside the target's
            exported_pod="vllm-0",
            exported_namespace="serving",
        )
        for reason in REASONS
    ]
    result = run("actuals", "import", range_file(tmp_path, found), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    month = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])["2026-11"]
    assert month.requests_ok == 123  # 100 + 20 + 3
    assert month.requests_failed == 5  # 4 + 1


def test_a_repetition_series_at_zero_imports_with_the_defaults(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    found = [
        series(
            "vllm:request_success_total",
            minutes("2026-11-02T00:00:00", [0.0, 0.0, 10.0 if reason == "stop" else 0.0]),
            model_name="m",
            finished_reason=reason,
        )
        for reason in REASONS
    ]
    result = run("actuals", "import", range_file(tmp_path, found), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    month = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])["2026-11"]
    assert (month.requests_ok, month.requests_failed) == (10, 0)


def test_dcgm_kubernetes_and_slurm_labels_are_accepted_and_summed(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    common = {"gpu": "0", "UUID": "GPU-a", "hostname": "n1", "modelName": "NVIDIA B200", "pci_bus_id": "0:1"}
    # one GPU: 30 one-minute steps at 1.0 in pod p1, then 30 at 0.5 in pod p2 (a new series)
    first = series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        minutes("2026-11-02T00:00:00", [1.0] * 31),
        **common,
        pod="p1",
        namespace="serving",
        container="vllm",
        pod_uid="u1",
        exported_pod="p1",
        exported_namespace="serving",
    )
    second = series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        minutes("2026-11-02T00:31:00", [0.5] * 31),
        **common,
        pod="p2",
        namespace="serving",
        container="vllm",
        pod_uid="u2",
        hpc_job="4242",
    )
    result = run("actuals", "import", range_file(tmp_path, [first, second]), "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    month = read_metrics_csv(ws / "actuals" / "alpha" / "metrics.csv", "metrics.csv", [])["2026-11"]
    # 30 x 1.0 + 30 x 0.5 = 45 GPU-minutes = 0.75 GPU-hours
    assert month.busy_gpu_hours == 0.75
