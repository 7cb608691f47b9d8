"""The design's speed budgets, measured in one run as ratios against references in the same run.

Run: .venv/bin/python benchmarks/bench_speed.py [--offers 1000] [--draws 10000]

- `procure --help` within 1.3x of `python -c "import typer"`, and `procure compare` on the example with a warm
  solve cache within 4x of `procure --help` (runs in turn, the median of the pair-by-pair ratios);
- evaluate 1,000 generated offers end to end in under 2 s in process, and `procure compare` on them as a
  command, cold: an empty temporary solve-cache folder for each run, never the user's
  (benchmarks/bench_scale.py times it against the example and from 10 to 10,000 offers);
- the costing step within 3x of a bare numpy evaluation of the same formulas;
- Monte Carlo 10,000 draws x 1,000 offers in under 3 s and 1 GB (peak resident memory of a fresh process),
  with `--signed N` of the offers carrying six months of delivered evidence (actuals/), so their draws
  come from their posteriors.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import ROOT, make_workspace  # noqa: E402
from timing import empty, load, paired, private_env, run_once  # noqa: E402

# The modules a command imports, listed by the command itself (it runs, then prints sys.modules in the order they
# were imported), and a program that imports the same and runs nothing.
MODULES = (
    "import io, sys; from procure.cli import main; sys.argv = ['procure', *sys.argv[1:]]; "
    "out, sys.stdout = sys.stdout, io.StringIO()\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\nout.write(' '.join(sys.modules))"
)
IMPORT_ONLY = (
    "import importlib, sys\nfor name in sys.argv[1:]:\n    try:\n        importlib.import_module(name)\n"
    "    except ImportError:\n        pass  # registered by its package, not importable by name"
)


def imported_by(command: list[str], env: dict[str, str]) -> list[str]:
    """The modules `procure COMMAND` imports, in their order."""
    import subprocess

    listed = subprocess.run([sys.executable, "-c", MODULES, *command], env=env, capture_output=True, text=True)
    return [name for name in listed.stdout.split() if name != "__main__"]


AS_OF = date(2026, 11, 29)


PROCURE = [sys.executable, "-m", "procure"]  # the procure of this interpreter's path (a checkout on PYTHONPATH too)


def bare_numpy(
    col: dict[str, np.ndarray], staffing_fixed: np.ndarray, staffing_per_gpu: np.ndarray, jobs: tuple[str, ...], wl, a
) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The cost model's formulas for fixed-price GPU-hour offers, written plainly: the reference."""
    fx, gpus, term = col["fx"], col["gpus"], col["term_months"]
    weights = np.array([0.0, a.shared_weight, 1.0])[np.column_stack([col[f"owner_{job}"] for job in jobs])]
    from procure.model.costing import AVAILABILITY_POINT, UTILIZATION_POINT

    rent = col["gpu_hour"] * fx * (1 - col["discount"]) * col.get("escalation", 1.0)
    # the point estimates of availability and utilization are the centres of their draws (the offers with
    # delivered evidence move them; docs/cost-model.md), each at most 1
    availability = np.minimum(
        1.0, col["sla_availability"] * col["reliability_factor"] * col.get(AVAILABILITY_POINT, 1.0)
    )
    utilization = np.minimum(1.0, wl.utilization * col.get(UTILIZATION_POINT, 1.0))
    capacity = (
        col["throughput"]
        * 3600
        / wl.output_tokens
        * availability
        * wl.success_rate
        * col["quality_pass_rate"]
        * utilization
    )
    needed = wl.tasks_per_month / (capacity * 730)
    billed = np.minimum(np.maximum(needed, gpus), col["max_gpus"])
    fill = np.minimum(1.0, needed / billed)
    hours = billed * 730
    fees = (
        col["fees_once"] / (hours * term)
        + col["fees_monthly"] / hours
        + col["fees_gpu_hour"]
        + col["fees_per_tb_month"] / hours
    ) * fx
    financing = col["prepay_fraction"] * rent * (a.cost_of_capital + a.vendor_default_rate) * term / 24
    ops = (weights @ staffing_fixed + weights @ staffing_per_gpu * billed) * a.fte_cost_year / (billed * 8760)
    software = weights[:, jobs.index("serving_stack")] * a.software_gpu_hour + col["software_gpu_hour"] * fx
    return (rent + fees + financing + ops + software) / (capacity * fill)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offers", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument(
        "--signed", type=int, default=10, help="offers given six months of delivered evidence (posterior draws)"
    )
    args = parser.parse_args()

    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.io.workspace import load_workspace
    from procure.model.costing import OPERATING_JOBS

    print(f"procure speed, {args.offers:,} generated offers, {args.draws:,} Monte Carlo draws; {load()}")
    env, keep = private_env()
    # 1. start-up, and a daily command with its solves kept
    helped, typer_alone, wall, cpu = paired(
        [*PROCURE, "--help"], [sys.executable, "-c", "import typer"], runs=7, env=env
    )
    print(
        f"  procure --help {helped.wall * 1000:.0f} ms ({helped.cpu * 1000:.0f} ms CPU) vs import typer "
        f"{typer_alone.wall * 1000:.0f} ms"
        f" ({typer_alone.cpu * 1000:.0f} ms CPU): {wall:.2f}x wall, {cpu:.2f}x CPU (budget 1.3x; {load()})"
    )
    example = [*PROCURE, "compare", "-w", str(ROOT), "--as-of", str(AS_OF), "-f", "json"]
    run_once(example, env)  # the solve cache warmed
    warm, helped, wall, cpu = paired(example, [*PROCURE, "--help"], runs=5, env=env)
    print(
        f"  procure compare on the example, warm solve cache: {warm.wall:.2f} s ({warm.cpu:.2f} s CPU), {wall:.2f}x "
        f"wall and {cpu:.2f}x CPU"
        f" of procure --help (budget 4x; {load()})"
    )
    # What the warm compare cannot do without: the libraries it is built on, then those and procure's modules it
    # imports (the command's own work aside), each against procure --help.
    modules = imported_by(example[3:], env)
    for what, code in (
        ("import typer, numpy, pydantic, yaml", ["import typer, numpy, pydantic, yaml"]),
        (f"the {len(modules)} modules that compare imports, and nothing run", [IMPORT_ONLY, *modules]),
    ):
        alone, helped, wall, cpu = paired([sys.executable, "-c", *code], [*PROCURE, "--help"], runs=5, env=env)
        print(
            f"  {what}: {alone.wall:.2f} s ({alone.cpu:.2f} s CPU), {wall:.2f}x wall and {cpu:.2f}x CPU of procure "
            f"--help ({load()})"
        )

    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp) / "ws", args.offers)
        sign(root, args.signed)
        # 2. end to end
        start = time.perf_counter()
        ws = load_workspace(root)
        loaded = time.perf_counter()
        ev, inputs = evaluate_with_inputs(ws, AS_OF)
        done = time.perf_counter()
        print(
            f"  evaluate {args.offers:,} offers in process: {done - start:.2f} s (load {loaded - start:.2f} s, "
            f"evaluate {done - loaded:.2f} s; budget 2 s)"
        )
        again = time.process_time()
        load_workspace(root)
        print(
            f"  load the {args.offers:,} offers again in the same process (procure's models imported): "
            f"{time.process_time() - again:.2f} s CPU"
        )
        empty(env["PROCURE_CACHE_DIR"])
        cold = run_once([*PROCURE, "compare", "-w", str(root), "--as-of", str(AS_OF), "-f", "json"], env)
        print(
            f"  procure compare --format json on {args.offers:,} offers, as a command, solve cache empty: "
            f"{cold.wall:.2f} s wall,"
            f" {cold.cpu:.2f} s CPU, {cold.peak_mb:.0f} MB peak ({load()})"
        )

        # 3. the costing step (the vectorized model on the evaluation's input arrays) vs bare numpy
        from procure.model.costing import cost_arrays

        col = inputs.columns
        assert (col["basis"] == "gpu_hour").all(), "the reference covers fixed-price GPU-hour offers only"
        model, wl, a = inputs.model, ws.config.workload, ws.config.assumptions
        reference = bare_numpy(col, model.staffing_fixed, model.staffing_per_gpu, OPERATING_JOBS, wl, a)
        ours = cost_arrays(col, model)["cost_per_task"]
        assert np.allclose(ours, reference, rtol=1e-12, equal_nan=True), (
            "the benchmark's reference disagrees with the cost model"
        )
        t_ours = min(_timed(lambda: cost_arrays(col, model)) for _ in range(50))
        t_bare = min(
            _timed(lambda: bare_numpy(col, model.staffing_fixed, model.staffing_per_gpu, OPERATING_JOBS, wl, a))
            for _ in range(50)
        )
        print(
            f"  costing step {t_ours * 1000:.2f} ms vs bare numpy {t_bare * 1000:.2f} ms on {len(col['basis']):,} "
            f"offers: {t_ours / t_bare:.2f}x (budget 3x)"
        )

        # 4. Monte Carlo in a fresh process, for its peak memory
        script = (
            "import resource, sys, time; from datetime import date; from pathlib import Path;"
            "from procure.io.workspace import load_workspace; from procure.analysis.evaluate import evaluate, "
            "MonteCarlo;"
            f"ws = load_workspace(Path({str(root)!r})); base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss;"
            f"t = time.perf_counter(); evaluate(ws, date(2026, 11, 29)); plain = time.perf_counter() - t;"
            f"t = time.perf_counter(); evaluate(ws, date(2026, 11, 29), MonteCarlo({args.draws}, 7)); mc = "
            "time.perf_counter() - t - plain;"
            "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss;"
            "print(f'{mc:.3f} {peak / 1024:.0f} {base / 1024:.0f}')"
        )
        out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout.split()
        mc, peak, base = float(out[0]), float(out[1]), float(out[2])
        print(
            f"  Monte Carlo {args.draws:,} draws x {args.offers:,} offers: {mc:.2f} s, peak resident memory {peak:.0f} "
            f"MB ({base:.0f} MB before; budgets 3 s, 1 GB; {load()})"
        )
    keep.cleanup()


def sign(root: Path, count: int) -> None:
    """Six months (May to October 2026) of delivered evidence for the first `count` offers, written as
    the files `procure actuals import` keeps: metrics near the promise, invoices, an incident-free history."""
    ids = sorted(p.stem for p in (root / "offers").glob("*.yaml"))[:count]
    months = [f"2026-{m:02d}" for m in range(5, 11)]
    for offer_id in ids:
        folder = root / "actuals" / offer_id
        folder.mkdir(parents=True)
        metrics = [
            "month,output_tokens,requests_ok,requests_failed,ttft_p50_s,ttft_p90_s,ttft_p99_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,coverage,resets,gaps"
        ]
        metrics += [f"{m},1.5e11,150000000,75000,0.45,0.94,2.2,11.9,19.0,35.5,1,0,0" for m in months]
        (folder / "metrics.csv").write_text("\n".join(metrics) + "\n")
        (folder / "invoices.csv").write_text(
            "month,gpu_hours,output_tokens,amount\n" + "".join(f"{m},186880,,900000\n" for m in months)
        )
        (folder / "incidents.csv").write_text(
            "start,end,impact,components\n2026-07-14T02:10:00Z,2026-07-14T04:10:00Z,major,inference\n"
        )


def _timed(call) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
