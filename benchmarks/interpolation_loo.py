"""Leave-one-out study of interpolation between Pareto-frontier points on real InferenceX curves.

For every curve (one hardware, framework, precision, speculative decoding, model and isl/osl) the
rows are normalized to output tokens/s per billed GPU by procure's own import code
(`procure.inferencex.billed_output`), reduced to their Pareto frontier (`procure.performance`), and
each interior frontier point is predicted from the others with each interpolation method
(`procure.performance.interpolate`). Error = predicted / measured - 1: above 0 overstates throughput.

Usage (from the repository root):

    python benchmarks/interpolation_loo.py                      # the committed data, the table in Markdown
    python benchmarks/interpolation_loo.py --extract API.json... # rebuild the data file from InferenceX API rows

The data file, benchmarks/data/inferencex_rows.csv, holds the published figures of every row used
(one per line, with its GitHub Actions run as source); see docs/interpolation.md for where the rows
come from.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from procure.inferencex import billed_output, flatten_row  # noqa: E402
from procure.performance import INTERPOLATION_METHODS, interpolate, pareto_frontier  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "inferencex_rows.csv"
COLUMNS = (
    "hw", "framework", "model", "precision", "spec_decoding", "isl", "osl", "conc", "disagg", "is_multinode",
    "num_prefill_gpu", "num_decode_gpu", "prefill_tp", "decode_tp", "decode_ep", "decode_dp_attention",
    "prefill_num_workers", "decode_num_workers", "median_intvty", "tput_per_gpu", "input_tput_per_gpu",
    "output_tput_per_gpu", "date", "run_url",
)
CURVE_KEY = ("hw", "framework", "model", "precision", "spec_decoding", "isl", "osl")
# A configuration run at one concurrency; its latest date is kept.
CONFIG_KEY = CURVE_KEY + ("disagg", "num_prefill_gpu", "num_decode_gpu", "prefill_tp", "decode_tp", "decode_ep", "decode_dp_attention", "conc")

# The H200 SGLang TP8 DeepSeek-R1 8k/1k points InferenceX published (single node; conc 4, 16, 64):
# [interactivity, output tok/s/GPU]. Source: shared reference facts (InferenceX, SemiAnalysis, May 2026).
H200_SGLANG_8K1K = [(91.4, 43.12), (50.0, 93.89), (20.3, 150.98)]


def extract(paths: list[Path]) -> list[dict[str, str]]:
    """The rows of InferenceX API files (a JSON list each), latest per configuration and concurrency,
    with the fields the study reads."""
    latest: dict[tuple, dict] = {}
    for path in paths:
        for raw in json.loads(path.read_text()):
            row = flatten_row(raw)
            if row.get("output_tput_per_gpu") is None or row.get("median_intvty") is None:
                continue  # older rows publish no output throughput
            key = tuple(str(row.get(k)) for k in CONFIG_KEY)
            if key not in latest or str(row.get("date")) > str(latest[key].get("date")):
                latest[key] = row
    return [{c: "" if latest[k].get(c) is None else str(latest[k].get(c)) for c in COLUMNS} for k in sorted(latest)]


def _typed(row: dict[str, str]) -> dict:
    """A CSV row back in the flat InferenceX layout (numbers as numbers, flags as booleans)."""
    out: dict = {}
    for key, value in row.items():
        if value == "":
            continue
        if value in ("True", "False"):
            out[key] = value == "True"
        else:
            try:
                out[key] = int(value) if value.isdigit() else float(value)
            except ValueError:
                out[key] = value
    return out


def curves(rows: list[dict[str, str]]) -> tuple[dict[tuple, list[tuple[float, float]]], list[str]]:
    """Points (interactivity, output per billed GPU) per curve, and the rows left out with why."""
    found: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    skipped: list[str] = []
    for line, row in enumerate(rows, start=2):
        typed = _typed(row)
        resolved, problems = billed_output(typed, display=str(DATA.name), index=line)
        if resolved is None:
            skipped.append(f"line {line}: " + "; ".join(p.message for p in problems))
            continue
        found[tuple(row[k] for k in CURVE_KEY)].append((float(typed["median_intvty"]), resolved[1]))
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


def table(errors: list[dict[str, float]]) -> list[tuple[str, float, float, float, float]]:
    """(method, mean error, mean absolute error, worst overstatement, share overstated by more than 5%)."""
    rows = []
    for m in INTERPOLATION_METHODS:
        e = [r[m] for r in errors]
        rows.append((m, statistics.fmean(e), statistics.fmean(abs(v) for v in e), max(e), sum(v > 0.05 for v in e) / len(e)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extract", nargs="+", type=Path, metavar="FILE", help="InferenceX API rows (JSON lists) to rebuild the data file from")
    parser.add_argument("--data", type=Path, default=DATA, metavar="FILE", help="the rows to study (default: the committed data file)")
    args = parser.parse_args(argv)
    if args.extract:
        rows = extract(args.extract)
        with args.data.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {len(rows)} rows to {args.data}", file=sys.stderr)
        return 0
    with args.data.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    found, skipped = curves(rows)
    errors: list[dict[str, float]] = []
    counted = 0
    for key in sorted(found):
        loo = leave_one_out(found[key])
        counted += bool(loo)
        errors.extend(loo)
    print(f"{len(rows)} rows, {len(found)} curves, {counted} with an interior frontier point, {len(errors)} points; {len(skipped)} rows refused:")
    for reason in skipped:
        print(f"  {reason}")
    print()
    print("| method | mean error | mean absolute error | worst overstatement | points overstated > 5% |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for m, mean, mae, worst, share in table(errors):
        print(f"| {m} | {mean:+.1%} | {mae:.1%} | {worst:+.1%} | {share:.0%} |")
    xs, ys = zip(*sorted(H200_SGLANG_8K1K))
    print()
    print("H200 SGLang 8k/1k, the conc-16 point (50.0, 93.89) from its two neighbours (monotone on two points is linear):")
    for m in INTERPOLATION_METHODS:
        value = interpolate([xs[0], xs[2]], [ys[0], ys[2]], 50.0, m)
        print(f"  {m}: {value:.2f} ({value / 93.89 - 1:+.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
