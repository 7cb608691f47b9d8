"""Make the example workspace's delivered evidence: six months (May to October 2026) of one signed
vendor, keel-b200-mc, written to actuals/keel-b200-mc/ through `procure actuals import` itself.

Run from the repository root: `python scripts/make_example_actuals.py`. Seeded: the same files every
time. What it generates, in the formats a buyer's stack exports:

- serving metrics as Prometheus query_range responses (one per month, 5-minute steps): vLLM's
  counters vllm:generation_tokens_total and vllm:request_success_total (stop, length, abort) and the
  histograms vllm:time_to_first_token_seconds and vllm:e2e_request_latency_seconds, with a server
  restart (a counter reset) in August and a four-hour scrape gap in September;
- an incident CSV: one major outage in July long enough to fall below the 99.5% SLA, a minor one in
  September (not down time);
- invoices: 256 GPUs x the month's hours at 4.85 USD plus the 0.03 USD per GPU-hour support fee the
  offer lists (its onboarding fee was invoiced at signing, before May);
- requests of the workload's 1,024 output tokens each (procure.yaml workload.output_tokens), so that the
  requests served are the tasks the promise counts.

Delivered throughput runs from 97% of the promise in May to 100% in October (the vendor tuned the
stack), so the evidence moves the ranking a little and the scorecard shows the SLA credit owed
for July.
"""

from __future__ import annotations

import calendar
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OFFER = "keel-b200-mc"
MONTHS = [(2026, m) for m in range(5, 11)]
RATIOS = [0.97, 0.98, 0.985, 0.99, 0.995, 1.0]  # delivered / promised output per billed GPU-hour
GPUS = 256
PRICE = 4.85 + 0.03  # rent and the support fee per GPU-hour (offers/keel-b200-mc.yaml)
STEP = 300  # seconds (a 5-minute scrape)
TTFT_BOUNDS = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, float("inf")]
E2E_BOUNDS = [2.5, 5.0, 10.0, 20.0, 40.0, 80.0, float("inf")]


def label(bound: float) -> str:
    return "+Inf" if bound == float("inf") else format(bound, "g")


def main() -> None:
    from procure.analysis.evaluate import evaluate
    from procure.io.actuals import offer_size
    from procure.io.actuals_import import import_actuals
    from procure.io.workspace import load_workspace

    ws = load_workspace(ROOT)
    record = evaluate(ws, datetime(2026, 11, 29).date(), delivered=False).offer(
        OFFER
    )  # the promise, not the promise blended with earlier evidence
    m = record.metrics
    promised = m["throughput"] * 3600 * m["availability"] * m["utilization"] * m["fill"]  # tokens per billed GPU-hour
    rng = np.random.default_rng(2026)
    tmp = Path(tempfile.mkdtemp())
    files = []
    invoices = ["month,gpu_hours,output_tokens,amount"]
    counters = {"tokens": 0.0, "stop": 0.0, "length": 0.0, "abort": 0.0}
    ttft_counts = np.zeros(len(TTFT_BOUNDS))
    e2e_counts = np.zeros(len(E2E_BOUNDS))
    for (year, month), ratio in zip(MONTHS, RATIOS):
        days = calendar.monthrange(year, month)[1]
        start = datetime(year, month, 1, tzinfo=UTC).timestamp()
        times = start + STEP * np.arange(0, days * 86400 // STEP)
        if month == 9:  # a four-hour scrape gap
            times = times[(times < start + 10 * 86400) | (times > start + 10 * 86400 + 4 * 3600)]
        hours = GPUS * days * 24
        invoices.append(f"{year}-{month:02d},{hours},,{hours * PRICE:.2f}")
        per_step = promised * ratio * GPUS * STEP / 3600
        series: dict[str, list[float]] = {k: [] for k in counters}
        buckets_t: list[list[float]] = []
        buckets_e: list[list[float]] = []
        for i, _ in enumerate(times):
            if month == 8 and i == len(times) // 2:  # a restart: every counter starts again from zero
                counters = {k: 0.0 for k in counters}
                ttft_counts[:] = 0
                e2e_counts[:] = 0
            tokens = per_step * rng.uniform(0.95, 1.05)
            requests = tokens / ws.config.workload.output_tokens
            counters["tokens"] += tokens
            counters["stop"] += requests * 0.96
            counters["length"] += requests * 0.0395
            counters["abort"] += requests * 0.0005
            ttft = rng.lognormal(np.log(0.45), 0.5, 40)
            e2e = rng.lognormal(np.log(11.0), 0.35, 40)
            ttft_counts += (ttft[:, None] <= np.array(TTFT_BOUNDS)).sum(axis=0) * requests / 40
            e2e_counts += (e2e[:, None] <= np.array(E2E_BOUNDS)).sum(axis=0) * requests / 40
            for k in counters:
                series[k].append(round(counters[k]))
            buckets_t.append([round(c) for c in ttft_counts])
            buckets_e.append([round(c) for c in e2e_counts])
        result = [
            {
                "metric": {"__name__": "vllm:generation_tokens_total", "model_name": "deepseek-ai/DeepSeek-R1"},
                "values": [[float(t), str(v)] for t, v in zip(times, series["tokens"])],
            },
        ]
        for reason in ("stop", "length", "abort"):
            result.append(
                {
                    "metric": {
                        "__name__": "vllm:request_success_total",
                        "model_name": "deepseek-ai/DeepSeek-R1",
                        "finished_reason": reason,
                    },
                    "values": [[float(t), str(v)] for t, v in zip(times, series[reason])],
                }
            )
        for name, bounds, rows in (
            ("vllm:time_to_first_token_seconds_bucket", TTFT_BOUNDS, buckets_t),
            ("vllm:e2e_request_latency_seconds_bucket", E2E_BOUNDS, buckets_e),
        ):
            for j, bound in enumerate(bounds):
                result.append(
                    {
                        "metric": {"__name__": name, "model_name": "deepseek-ai/DeepSeek-R1", "le": label(bound)},
                        "values": [[float(t), str(r[j])] for t, r in zip(times, rows)],
                    }
                )
        path = tmp / f"{year}-{month:02d}.json"
        path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
        files.append(path)
    incidents = tmp / "incidents.csv"
    incidents.write_text(
        "start,end,impact,components\n"
        "2026-07-14T02:10:00Z,2026-07-14T07:40:00Z,major,inference\n"  # 330 minutes of 44,640: 99.26%
        "2026-09-03T16:00:00Z,2026-09-03T17:30:00Z,minor,dashboard\n"
    )
    bills = tmp / "invoices.csv"
    bills.write_text("\n".join(invoices) + "\n")
    # an import merges into the kept evidence: the example is made afresh, so the old one goes first
    for kept in (ROOT / "actuals" / OFFER).glob("*"):
        kept.unlink()
    written, notes = import_actuals(
        ROOT,
        OFFER,
        [*files, incidents, bills],
        ws.config.actuals,
        offer_size(next(o for o in ws.offers if o.id == OFFER)),
    )
    for note in notes[:10]:
        print("note:", note)
    for path in written:
        print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
