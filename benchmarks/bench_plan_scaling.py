"""`procure plan`'s gap and time as offers, scenarios and months double, banded and unbanded.

Run: .venv/bin/python benchmarks/bench_plan_scaling.py [--base-offers 10] [--base-scenarios 50] [--base-months 12]

Every solve stops at plan.mip_gap or plan.node_limit (a count of work: the plan is the same on an idle and a loaded
machine); this prints, for each size, the solver's status, the MIP gap reached, the band gap, the nodes limit and
the wall and CPU seconds of the whole plan. "banded" uses the default demand levels (refined until exact), "unbanded"
gives every scenario its own level (levels = scenarios). The solve cache is off: every time is a solve.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["PROCURE_CACHE_DIR"] = ""
from bench_plan import AS_OF, workspace  # noqa: E402

from procure.analysis.plan import make_plan  # noqa: E402
from procure.io.workspace import load_workspace  # noqa: E402


def run(root: Path) -> tuple[str, float, float, float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = make_plan(load_workspace(root), AS_OF)
    return (
        result.solver.status,
        result.solver.gap or 0.0,
        result.band_gap,
        time.perf_counter() - wall,
        time.process_time() - cpu,
        result.solver.node_limit or 0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-offers", type=int, default=10)
    parser.add_argument("--base-scenarios", type=int, default=50)
    parser.add_argument("--base-months", type=int, default=12)
    args = parser.parse_args()
    o, s, m = args.base_offers, args.base_scenarios, args.base_months
    sizes = [(o, s, m), (2 * o, s, m), (4 * o, s, m), (o, 2 * s, m), (o, 4 * s, m), (o, s, 2 * m), (o, s, 4 * m)]
    print(
        f"{'offers':>6} {'scen.':>6} {'months':>6} {'levels':>9} {'status':>34} {'MIP gap':>8} {'band gap':>8} "
        f"{'wall s':>7} {'CPU s':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for offers, scen, months in sizes:
            for levels in (None, scen):
                root = workspace(Path(tmp) / f"w{offers}-{scen}-{months}-{levels}", offers, scen, months, levels)
                status, gap, band, wall, cpu, _ = run(root)
                label = "banded" if levels is None else "unbanded"
                print(
                    f"{offers:>6} {scen:>6} {months:>6} {label:>9} {status:>34} {gap:>8.3%} {band:>8.3%} {wall:>7.2f} "
                    f"{cpu:>7.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
