"""Real files nobody on this project wrote (tests/data/real/SOURCES.md), imported as a buyer would, their
figures checked against sums worked out by hand from the files' own rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from procure.cli import app

REAL = Path(__file__).parent / "data" / "real"
TRIALS = Path(__file__).parent / "data" / "trials"
runner = CliRunner()


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def invoices(ws: Path) -> list[str]:
    return (ws / "actuals" / "alpha" / "invoices.csv").read_text().splitlines()


def test_the_focus_sample_data_as_published(workspace_copy):
    ws = workspace_copy("basic")
    sample = REAL / "focus_1.0_sample_first40.csv"
    # the quoted header reaches the FOCUS reader; its dates, written '2024-09-01 00:00:00' (no T, no Z), are
    # read as UTC (every FOCUS date-time is); no row names a GPU machine or GPU-hours: the month has no GPU-hours
    refused = run("actuals", "import", sample, "--offer", "alpha", "-w", ws)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "1 problem found; nothing was written." in refused.output
    # line 22: the first row in plain Hours ('$0.34 per On Demand Linux c5.2xlarge Instance Hour')
    assert "focus_1.0_sample_first40.csv:22: ConsumedUnit: 2024-09: no GPU-hours" in refused.output
    assert not (ws / "actuals").exists()
    # the two EC2 instance-hour rows named as if GPU machines of 1 GPU: line 22 (c5.2xlarge, 1 Hours, billed
    # 0.34) and line 25 (t2.medium, 1 Hours under a commitment, billed 0.00): 2 GPU-hours for 0.34
    result = run(
        "actuals", "import", sample, "--gpu-filter", "ChargeDescription=On Demand Linux", "--offer", "alpha", "-w", ws
    )
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2024-09,2,,0.34,FOCUS"]
    said = " ".join(result.output.split())
    # the other 38 rows' BilledCost, summed by hand: 0.37108940480 in all - 0.34 = 0.03108940480; their
    # quantities by unit: Requests 2 + 3 + 5 + 4 = 14; API Requests 1; GB 6.3905065032 (19 rows);
    # GB-Months 0.3525890962 (7 rows); IOPS-Months 0; LCU-Hours 0.0020074900 + 0.0000689582 = 0.0020764482
    assert (
        "other spend 0.03 (effective 0.00; not GPU capacity, not in the amount: 1 API Requests, 6.39051 GB, "
        "0.352589 GB-Months, 0 IOPS-Months, 0.00207645 LCU-Hours, 14 Requests)"
    ) in said
    # 40 rows, each with its three dates zoneless
    assert "ChargePeriodStart (40 row(s) from line 2, '2024-09-18 22:00:00')" in said
    assert "BillingPeriodStart (40 row(s) from line 2, '2024-09-01 00:00:00')" in said


@pytest.mark.parametrize(
    "name, row, said",
    [
        # a commitment bought (Purchase, BilledCost 1.50) and fully used by VM_LARGE for one hour (Usage,
        # BilledCost 0.00, EffectiveCost 1.50, 1 Hour): 1.50 for 1 hour
        ("one_hundred_percent", "2023-01,1,,1.5,FOCUS", "billed 1.50 for 1 GPU-hours; effective cost 1.50"),
        # the same commitment unused (its Usage row Unused, EffectiveCost 1.50, 1 Hour) and VM_MEDIUM on demand
        # (BilledCost 2.00, 1 Hour): billed 1.50 + 0.00 + 2.00 = 3.50 for the 1 hour used; 1 committed unused
        (
            "zero_percent",
            "2023-01,1,,3.5,FOCUS",
            "billed 3.50 for 1 GPU-hours; effective cost 3.50; commitment purchases 1.50 (in the amount); "
            "unused commitment 1.50 (1 GPU-hours committed, not used)",
        ),
    ],
)
def test_the_specifications_commitment_samples(workspace_copy, name, row, said):
    ws = workspace_copy("basic")
    sample = REAL / f"focus_1.2_{name}_utilization_without_commitment_discount_flexibility.csv"
    result = run("actuals", "import", sample, "--gpu-filter", "SkuId=VM_", "--offer", "alpha", "-w", ws)
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == [row]
    assert said in result.output


def test_the_projects_own_trial_result_files_make_a_curve_with_their_model(workspace_copy):
    ws = workspace_copy("basic")
    result = run(
        "perf", "import", TRIALS / "aiperf_profile_export_run1.json", "--gpus", 1, "--name", "trial-aiperf",
        "--isl", 550, "--osl", 5300, "--out", ws / "performance", "-w", ws,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (ws / "performance" / "trial-aiperf.csv").read_text().splitlines()
    assert "# model: openai/gpt-oss-20b" in text  # input_config.endpoint.model_names
    assert "# trial date: 2025-10-03" in text  # start_time 2025-10-03T13:13:39
    result = run(
        "perf", "import", TRIALS / "guidellm_benchmarks_stripped.json", "--gpus", 1, "--name", "trial-guidellm",
        "--isl", 256, "--osl", 128, "--out", ws / "performance", "-w", ws,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (ws / "performance" / "trial-guidellm.csv").read_text().splitlines()
    assert "# model: example_model" in text  # benchmarks[0].worker.backend_model
    # 1000 / TPOT median 4.885653 ms = 204.681 tok/s per user; 198.133 output tok/s / 1 GPU; TTFT 16.38 ms
    assert text[-1] == "204.681,198.133,0.0163805"


def test_the_focus_sample_compressed_as_aws_data_exports_write_it_reaches_the_same_reader(workspace_copy, tmp_path):
    import gzip

    ws = workspace_copy("basic")
    packed = tmp_path / "focus_sample.csv.gz"
    packed.write_bytes(gzip.compress((REAL / "focus_1.0_sample_first40.csv").read_bytes()))
    result = run(
        "actuals", "import", packed, "--gpu-filter", "ChargeDescription=On Demand Linux", "--offer", "alpha", "-w", ws
    )
    # read through gzip as it streams: the same month as the plain file (test above), not "binary file"
    assert result.exit_code == 0, result.output
    assert invoices(ws)[1:] == ["2024-09,2,,0.34,FOCUS"]


def test_aiperfs_aggregate_matches_the_same_runs_per_request_records(workspace_copy):
    ws = workspace_copy("basic")
    # Independent figures: AIPerf's per-request records of the same run, ai-dynamo/aiperf
    # examples/artifacts/run1/profile_export.jsonl at commit 7c31f579 (Apache-2.0; 370,720 bytes, not kept here),
    # summed by hand from its 100 lines: 11 carry an error (499, cancelled), 89 do not; their
    # output_sequence_length adds to 21,624 tokens between the first min_request_timestamp (1759522419154...,
    # ns) and the last max_response_timestamp, 9.317788951 s apart: 21,624 / 9.317788951 = 2,320.72 tok/s;
    # the median of the 89 inter_token_latency values is 27.6151304 ms (1000 / it = 36.212 tok/s per user);
    # the median of the 89 ttft values 2,369.317693 ms. procure reads the run's aggregate file, not the records.
    result = run(
        "perf", "import", TRIALS / "aiperf_profile_export_run1.json", "--gpus", 1, "--name", "trial-aiperf",
        "--isl", 550, "--osl", 243, "--out", ws / "performance", "-w", ws,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = (ws / "performance" / "trial-aiperf.csv").read_text().splitlines()
    interactivity, throughput, ttft = (float(x) for x in lines[-1].split(","))
    assert interactivity == pytest.approx(1000 / 27.6151304, rel=1e-4)
    assert throughput == pytest.approx(21_624 / 9.317788951, rel=1e-5)
    assert ttft == pytest.approx(2.369317693, rel=1e-5)
    assert "11 failed request(s) of 100" in " ".join(result.output.split())
