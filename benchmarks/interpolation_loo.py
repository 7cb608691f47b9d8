"""Leave-one-out study of interpolation between Pareto-frontier points on real InferenceX curves.

For every curve (one hardware, framework, precision, speculative decoding, model and isl/osl) the
rows are normalized to output tokens/s per billed GPU by procure's own import code
(`procure.io.inferencex.billed_output`), reduced to their Pareto frontier (`procure.model.performance`), and
each interior frontier point is predicted from the others with each interpolation method
(`procure.model.performance.interpolate`). Error = predicted / measured - 1: above 0 overstates throughput.

Usage (from the repository root), with InferenceX web-API rows (JSON lists; docs/interpolation.md
says where the published ones are):

    python benchmarks/interpolation_loo.py benchmarks.json benchmarks-history.json

Of each configuration (curve, GPU counts, parallelism) at each concurrency the latest row is kept.
Prints the error table in Markdown, the rows refused with why, and the H200 check.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from procure.io.inferencex import billed_output, flatten_row  # noqa: E402
from procure.model.performance import INTERPOLATION_METHODS, interpolate, pareto_frontier  # noqa: E402

CURVE_KEY = ("hw", "framework", "model", "precision", "spec_decoding", "isl", "osl")
# A configuration run at one concurrency; its latest date is kept.
CONFIG_KEY = CURVE_KEY + (
    "disagg",
    "num_prefill_gpu",
    "num_decode_gpu",
    "prefill_tp",
    "decode_tp",
    "decode_ep",
    "decode_dp_attention",
    "conc",
)

# The H200 SGLang TP8 DeepSeek-R1 8k/1k points InferenceX published (single node; conc 4, 16, 64):
# [interactivity, output tok/s/GPU]. Source: shared reference facts (InferenceX, SemiAnalysis, May 2026).
H200_SGLANG_8K1K = [(91.4, 43.12), (50.0, 93.89), (20.3, 150.98)]


def latest_rows(paths: list[Path]) -> list[dict]:
    """The flat rows of InferenceX API files, the latest per configuration and concurrency."""
    latest: dict[tuple, dict] = {}
    for path in paths:
        for raw in json.loads(path.read_text()):
            row = flatten_row(raw)
            key = tuple(str(row.get(k)) for k in CONFIG_KEY)
            if key not in latest or str(row.get("date")) > str(latest[key].get("date")):
                latest[key] = row
    return [latest[k] for k in sorted(latest)]


def curves(rows: list[dict]) -> tuple[dict[tuple, list[tuple[float, float]]], list[str]]:
    """Points (interactivity, output per billed GPU) per curve, and the rows left out with why."""
    found: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    skipped: list[str] = []
    for index, row in enumerate(rows):
        if row.get("output_tput_per_gpu") is None:
            skipped.append(
                f"{row.get('hw')} {row.get('framework')} {row.get('date')}: no output_tput_per_gpu (published before "
                "it was)"
            )
            continue
        resolved, problems = billed_output(row, index=index)
        if resolved is None or not isinstance(row.get("median_intvty"), (int, float)):
            skipped.append(
                f"{row.get('hw')} {row.get('framework')} conc {row.get('conc')} {row.get('date')} "
                f"{row.get('run_url')}: " + "; ".join(p.message for p in problems)
            )
            continue
        found[tuple(str(row.get(k)) for k in CURVE_KEY)].append((float(row["median_intvty"]), resolved[1]))
    return dict(found), skipped


def leave_one_out(points: list[tuple[float, float]]) -> list[dict[str, float]]:
    """Each interior frontier point predicted from the frontier without it, by every method."""
    frontier = pareto_frontier(points)
    results = []
    for i in range(1, len(frontier) - 1):
        x, y = frontier[i]
        rest = frontier[:i] + frontier[i + 1 :]
        xs, ys = [p[0] for p in rest], [p[1] for p in rest]
        results.append({m: interpolate(xs, ys, x, m) / y - 1 for m in INTERPOLATION_METHODS})
    return results


def gap_errors(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """(gap / target, ln(log-linear reading / measured)) for each interior frontier point left out."""
    import math

    frontier = pareto_frontier(points)
    found = []
    for i in range(1, len(frontier) - 1):
        x, y = frontier[i]
        rest = frontier[:i] + frontier[i + 1 :]
        found.append(
            (
                (frontier[i + 1][0] - frontier[i - 1][0]) / x,
                math.log(interpolate([p[0] for p in rest], [p[1] for p in rest], x, "log") / y),
            )
        )
    return found


def ranges(found: dict[tuple, list[tuple[float, float]]]) -> None:
    """The calibration of procure.model.performance.RANGE_LOW / RANGE_HIGH: the 10th and 90th percentiles of
    ln error / sqrt(gap share), and the share of points inside the range by gap class."""
    import numpy as np

    pairs = [p for key in sorted(found) for p in gap_errors(found[key])]
    g = np.array([p[0] for p in pairs])
    e = np.array([p[1] for p in pairs])
    low, high = np.quantile(e / np.sqrt(g), [0.1, 0.9])
    print(
        f"\n{len(pairs)} points: ln error / sqrt(g) P10 {low:.3f}, P90 {high:.3f}; median error "
        f"{np.exp(np.median(e)) - 1:+.1%}, mean |ln error| {np.abs(e).mean():.3f}"
    )
    for a, b in ((0, 0.5), (0.5, 1), (1, 2), (2, np.inf)):
        inside = (g >= a) & (g < b)
        covered = (e[inside] >= low * np.sqrt(g[inside])) & (e[inside] <= high * np.sqrt(g[inside]))
        print(f"  g {a:g}-{b:g}: {inside.sum()} points, {covered.mean():.0%} inside")


def table(errors: list[dict[str, float]]) -> list[tuple[str, float, float, float, float]]:
    """(method, mean error, mean absolute error, worst overstatement, share overstated by more than 5%)."""
    rows = []
    for m in INTERPOLATION_METHODS:
        e = [r[m] for r in errors]
        rows.append(
            (m, statistics.fmean(e), statistics.fmean(abs(v) for v in e), max(e), sum(v > 0.05 for v in e) / len(e))
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("rows", nargs="+", type=Path, metavar="FILE", help="InferenceX web-API rows (JSON lists)")
    parser.add_argument("--ranges", action="store_true", help="also print the calibration of a reading's range by gap")
    args = parser.parse_args(argv)
    rows = latest_rows(args.rows)
    found, skipped = curves(rows)
    if args.ranges:
        ranges(found)
    errors: list[dict[str, float]] = []
    by_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
    counted = 0
    for key in sorted(found):
        loo = leave_one_out(found[key])
        counted += bool(loo)
        errors.extend(loo)
        disagg = any(str(r.get("disagg")) == "True" for r in rows if tuple(str(r.get(k)) for k in CURVE_KEY) == key)
        by_kind["disaggregated" if disagg else "single-node"].extend(loo)
    print(
        f"{len(rows)} rows (latest per configuration and concurrency), {len(found)} curves, {counted} with an interior "
        f"frontier point, {len(errors)} points"
    )
    print()
    print("| method | mean error | mean absolute error | worst overstatement | points overstated > 5% |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for m, mean, mae, worst, share in table(errors):
        print(f"| {m} | {mean:+.1%} | {mae:.1%} | {worst:+.1%} | {share:.0%} |")
    for kind in sorted(by_kind):
        print(f"\n{kind}: {len(by_kind[kind])} points")
        for m, mean, mae, worst, share in table(by_kind[kind]):
            print(f"| {m} | {mean:+.1%} | {mae:.1%} | {worst:+.1%} | {share:.0%} |")
    xs, ys = zip(*sorted(H200_SGLANG_8K1K))
    print()
    print(
        "H200 SGLang 8k/1k, the conc-16 point (50.0, 93.89) from its two neighbours (monotone on two points is linear):"
    )
    for m in INTERPOLATION_METHODS:
        value = interpolate([xs[0], xs[2]], [ys[0], ys[2]], 50.0, m)
        print(f"  {m}: {value:.2f} ({value / 93.89 - 1:+.1%})")
    print(f"\n{len(skipped)} rows refused:")
    for reason in skipped:
        print(f"  {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
