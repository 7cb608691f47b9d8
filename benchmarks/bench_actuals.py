"""Speed of `procure actuals import`: a year of one-minute serving metrics for 10 vendors.

Budget (DESIGN.md, "Performance budgets"): about 5 M samples import in under 10 s and 1 GB. Each
vendor has one output-token counter sampled every minute for 2026 (525,600 samples, 5,256,000 in
all), exported as Prometheus query_range responses, one per vendor and month (120 files, as a buyer
would query a month at a time); generating them is not timed. The import of all ten vendors is
timed end to end (read, parse, merge, monthly sums, write actuals/), and its peak memory is the
process's resident-set high-water mark (getrusage), measured in a fresh subprocess.

    python benchmarks/bench_actuals.py [--vendors 10] [--step 60]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(folder: Path, vendors: int, step: int) -> list[list[Path]]:
    import numpy as np

    rng = np.random.default_rng(7)
    out = []
    for v in range(vendors):
        files, total = [], 0.0
        for month in range(1, 13):
            start = datetime(2026, month, 1, tzinfo=UTC).timestamp()
            end = datetime(2027 if month == 12 else 2026, 1 if month == 12 else month + 1, 1, tzinfo=UTC).timestamp()
            times = np.arange(start, end, step)
            values = total + np.cumsum(rng.uniform(50_000, 70_000, len(times)))
            total = float(values[-1])
            series = {
                "metric": {"__name__": "vllm:generation_tokens_total", "model_name": "m", "instance": f"vendor-{v}"},
                "values": [[float(t), repr(float(x))] for t, x in zip(times, values)],
            }
            path = folder / f"vendor-{v}-{month:02d}.json"
            path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [series]}}))
            files.append(path)
        out.append(files)
    return out


def timed_import(root: Path, groups: list[list[Path]]) -> None:
    """Run in a subprocess: import every vendor, print seconds and peak RSS (MiB) as JSON."""
    import resource

    sys.path.insert(0, str(ROOT))
    from procure.io.actuals_import import import_actuals
    from procure.model.inputs import ActualsConfig

    config = ActualsConfig()
    started = time.perf_counter()
    samples = 0
    for v, files in enumerate(groups):
        import_actuals(root, f"vendor-{v}", files, config)
    elapsed = time.perf_counter() - started
    for files in groups:
        for _f in files:
            samples += 0  # counted by the parent
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "peak_mib": peak}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vendors", type=int, default=10)
    parser.add_argument("--step", type=int, default=60, help="seconds between samples")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec = json.loads(Path(args.child).read_text())
        timed_import(Path(spec["root"]), [[Path(p) for p in g] for g in spec["groups"]])
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        groups = generate(folder, args.vendors, args.step)
        samples = args.vendors * 365 * 86400 // args.step
        spec = folder / "spec.json"
        spec.write_text(json.dumps({"root": str(folder / "ws"), "groups": [[str(p) for p in g] for g in groups]}))
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(spec)], capture_output=True, text=True, check=True
        )
        found = json.loads(done.stdout.strip().splitlines()[-1])
        size = sum(p.stat().st_size for g in groups for p in g) / 1e6
        print(
            f"{samples:,} samples in {sum(len(g) for g in groups)} files ({size:,.0f} MB of JSON): imported in "
            f"{found['seconds']:.2f} s, peak {found['peak_mib']:,.0f} MiB"
        )
        print(
            "budget: under 10 s and 1 GB:", "met" if found["seconds"] < 10 and found["peak_mib"] < 1024 else "NOT met"
        )


if __name__ == "__main__":
    main()
