"""`procure compare` as offers grow: time and memory at 10, 100, 1,000 and 10,000 generated offers, and the
1,000-offer command against the same command on the 12-offer example (budget: within 3x).

Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 10,100,1000,10000] [--runs 3] [--solves 1000 [--highs-log]]
[--workspace .]

Every run is cold: the solve cache is an empty temporary folder, new for each run (a user's first run:
whatever the command solves is solved, and kept only for the rest of that run), never the user's. Each figure is one
process as a
user starts it: wall and CPU seconds (the command and any process it waits for) and its peak resident
memory, from the operating system's accounting (benchmarks/timing.py); the median of --runs runs (one
run at 10,000 offers). The ratio is the median of pair-by-pair ratios of runs taken in turn.

`--solves N` instead runs `compare` once on N generated offers (`--workspace DIR`: on that workspace, such as the
example, `.`) in a process of its own, solve cache off, and prints each HiGHS solve (variables, rows, whole numbers,
status, CPU seconds of the process while it ran) and what the
rest of the command took: where the time of a large workspace goes; `--highs-log` adds HiGHS's own log of each solve
(its presolve, root node, cut rounds and nodes, with HiGHS's clock).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import ROOT, make_workspace  # noqa: E402
from timing import Run, empty, load, median_run, paired, private_env, run_once  # noqa: E402

AS_OF = "2026-11-29"


def compare(root: Path) -> list[str]:
    return [sys.executable, "-m", "procure", "compare", "-w", str(root), "--as-of", AS_OF, "-f", "json"]


def cold(command: list[str], env: dict[str, str], cache: str) -> Run:
    empty(cache)
    return run_once(command, env)


SOLVES = """
import dataclasses, os, sys, time
import numpy as np
import procure.analysis.milp as cache
from procure.cli import main
real, spent = cache.run_milp, []
report, sys.stdout = sys.stdout, open(os.devnull, "w")  # the command's JSON is not wanted here
log = sys.argv[3] == "log"  # HiGHS prints its own log (presolve, root node, cuts) on the standard output

def timed(p):
    start = time.process_time()
    found = real(dataclasses.replace(p, options={**p.options, "disp": True}) if log else p)
    spent.append(time.process_time() - start)
    print(f"  solve: {len(p.c):,} variables, {p.A.shape[0]:,} rows, {int(np.sum(p.integrality)):,} whole, status {found.status}: {spent[-1]:.1f} s CPU", file=report, flush=True)
    return found

cache.run_milp = timed
sys.argv = ["procure", "compare", "-w", sys.argv[1], "--as-of", sys.argv[2], "-f", "json"]
start = time.process_time()
try:
    main()
except SystemExit:
    pass
total = time.process_time() - start
print(f"  solves {sum(spent):.1f} s of {total:.1f} s CPU in the command; the rest {total - sum(spent):.1f} s", file=report, flush=True)
"""  # noqa: E501


def solves(count: int, workspace: Path | None = None, highs_log: bool = False) -> None:
    """One cold compare over `count` generated offers (or on `workspace`), each solve timed in the process (the cache
    off); `highs_log`: with HiGHS's own log of each solve."""
    import subprocess

    env, keep = private_env(PROCURE_CACHE_DIR="")
    with keep, tempfile.TemporaryDirectory() as tmp:
        root = workspace.resolve() if workspace else make_workspace(Path(tmp) / "ws", count)
        what = str(workspace) if workspace else f"{count:,} offers"
        print(f"procure compare -f json on {what}, solve cache off, each solve timed ({load()})", flush=True)
        subprocess.run(
            [sys.executable, "-c", SOLVES, str(root), AS_OF, "log" if highs_log else "-"],
            env=env,
            check=True,
            stdout=None,
            stderr=subprocess.DEVNULL,
        )
        print(f"  ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--solves", type=int, default=0, help="time each solve of one compare on this many offers instead"
    )
    parser.add_argument("--workspace", type=Path, help="with --solves: time the solves of this workspace instead")
    parser.add_argument("--highs-log", action="store_true", help="with --solves: print HiGHS's own log of each solve")
    args = parser.parse_args()
    if args.solves or args.workspace:
        return solves(args.solves, args.workspace, args.highs_log)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    env, keep = private_env()
    cache = env["PROCURE_CACHE_DIR"]
    print(f"procure compare -f json, cold (solve cache emptied before each run), {load()}")
    with keep, tempfile.TemporaryDirectory() as tmp:
        example = median_run([cold(compare(ROOT), env, cache) for _ in range(args.runs)])
        print(
            f"  {'example (12 offers)':>22}: {example.wall:6.2f} s wall, {example.cpu:6.2f} s CPU, "
            f"{example.peak_mb:5.0f} MB peak"
        )
        for n in sizes:
            root = make_workspace(Path(tmp) / f"ws{n}", n)
            runs = 1 if n >= 10_000 else args.runs
            got = median_run([cold(compare(root), env, cache) for _ in range(runs)])
            print(
                f"  {f'{n:,} offers':>22}: {got.wall:6.2f} s wall, {got.cpu:6.2f} s CPU, {got.peak_mb:5.0f} MB peak"
                f" ({runs} run{'s' if runs > 1 else ''}; {load()})"
            )
        if 1000 in sizes:
            big, small, wall, cpu = paired(
                compare(Path(tmp) / "ws1000"),
                compare(ROOT),
                runs=args.runs,
                env=env,
                warmup=False,
                before_each=lambda: empty(cache),
            )
            print(
                f"  1,000 offers against the example, in turn: {wall:.2f}x wall, {cpu:.2f}x CPU (budget 3x; "
                f"{big.cpu:.2f} s"
                f" against {small.cpu:.2f} s CPU; {load()})"
            )


if __name__ == "__main__":
    main()
