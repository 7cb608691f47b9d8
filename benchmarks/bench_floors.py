"""Each figure a user waits for, as a ratio to its own floor, the two run in turn (benchmarks/timing.py):

- `procure --help` against `import typer`, with PYTHONDONTWRITEBYTECODE=1 as many container images set;
- `procure compare` run again on unchanged inputs (caches warm) against `procure --help`;
- `procure compare` on 1,000 generated offers (benchmarks/synthetic.py) against the example, caches empty;
- with --rfp N: `procure compare` and `procure plan` on an RFP-like market (benchmarks/rfp.py: the example plus
  near-copies) against the example's, caches empty, one run each (they take minutes);
- with --plan-offers N: `procure plan` on N generated offers against the same on 1,000 (budget: within 15x for
  10,000), caches empty, one run each (minutes).

    python benchmarks/bench_floors.py [--runs 5] [--tree DIR ...] [--rfp 1000] [--plan-offers 10000]

--tree runs the same figures on another checkout of procure (its folder first on PYTHONPATH, its example as the
workspace), in turn with this one, so that a change is measured before and after in one run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rfp import make_market  # noqa: E402
from synthetic import make_workspace  # noqa: E402
from timing import empty, load, paired, private_env, run_once  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
AS_OF = ["--as-of", "2026-11-29"]


def line(name: str, a, b, wall: float, cpu: float) -> None:  # type: ignore[no-untyped-def]
    print(
        f"  {name}: {wall:.2f}x wall, {cpu:.2f}x CPU ({a.wall:.3f} s / {a.cpu:.3f} s CPU against {b.wall:.3f} s / "
        f"{b.cpu:.3f} s; {load()})",
        flush=True,
    )


def figures(tree: Path, runs: int, work: Path, rfp: int | None, plan_offers: int | None = None) -> None:
    py = [sys.executable]
    procure = [*py, "-m", "procure"]
    # PYTHONSAFEPATH: the working folder is not put before PYTHONPATH, so the tree named is the one run
    env, folder = private_env(PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(tree), PYTHONSAFEPATH="1")
    cache = env["PROCURE_CACHE_DIR"]
    print(f"{tree}:", flush=True)
    line("--help / import typer", *paired([*procure, "--help"], [*py, "-c", "import typer"], runs, env))
    example = [*procure, "compare", "-w", str(tree), *AS_OF]
    run_once(example, env)  # the caches filled once
    line("compare again / --help", *paired(example, [*procure, "--help"], runs, env))
    cold = {**env}
    synthetic = make_workspace(work / "synthetic1000", 1000)
    line(
        "compare, 1,000 generated offers / the example (caches empty)",
        *paired(
            [*procure, "compare", "-w", str(synthetic), *AS_OF],
            example,
            max(1, runs // 2),
            cold,
            warmup=False,
            before_each=lambda: empty(cache),
        ),
    )
    if rfp:
        market = make_market(work / f"rfp{rfp}", rfp)
        line(
            f"compare, RFP-like market of {rfp:,} offers / the example (caches empty)",
            *paired(
                [*procure, "compare", "-w", str(market), *AS_OF],
                example,
                1,
                cold,
                warmup=False,
                before_each=lambda: empty(cache),
            ),
        )
        line(
            f"plan, RFP-like market of {rfp:,} offers / the example's plan (caches empty)",
            *paired(
                [*procure, "plan", "-w", str(market), *AS_OF],
                [*procure, "plan", "-w", str(tree), *AS_OF],
                1,
                cold,
                warmup=False,
                before_each=lambda: empty(cache),
            ),
        )
    if plan_offers:
        many = make_workspace(work / f"synthetic{plan_offers}", plan_offers)
        line(
            f"plan, {plan_offers:,} generated offers / 1,000 (caches empty)",
            *paired(
                [*procure, "plan", "-w", str(many), *AS_OF],
                [*procure, "plan", "-w", str(synthetic), *AS_OF],
                1,
                cold,
                warmup=False,
                before_each=lambda: empty(cache),
            ),
        )
    folder.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--rfp", type=int, default=None)
    parser.add_argument("--plan-offers", type=int, default=None)
    args = parser.parse_args()
    for tree in args.tree:  # a checkout compiles nothing itself: as `make install` does after an editable install
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "procure")], check=True)
    with tempfile.TemporaryDirectory(prefix="procure-floors-") as work:
        for tree in [*args.tree, ROOT]:
            figures(tree.resolve(), args.runs, Path(work), args.rfp, args.plan_offers)


if __name__ == "__main__":
    main()
