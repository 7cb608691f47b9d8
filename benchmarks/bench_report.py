"""Time the 50-offer comparison report, and its overhead over WeasyPrint rendering the same HTML.

Run: .venv/bin/python benchmarks/bench_report.py [--offers 50]
Budget (design): under 10 s; pipeline overhead within 30% of WeasyPrint alone.

On a shared machine wall-clock seconds say more about the neighbours than about the code: the
script also prints the CPU seconds of this process (WeasyPrint runs on one core, so its CPU time is
what the wall time would be on a quiet one) and the ratio to WeasyPrint alone, both measured in the
same process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import make_workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offers", type=int, default=50)
    args = parser.parse_args()
    import weasyprint  # noqa: F401  (import once, outside both timings)

    from procure.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.render.documents import build_charts, html_to_pdf, render_html
    from procure.report_data import gather_extras
    from procure.workspace import load_workspace

    def pipeline(root: Path):  # type: ignore[no-untyped-def]
        """What `procure report` does before WeasyPrint: evaluation with ranges and horizon, extras."""
        ws = load_workspace(root)
        ev, inputs = evaluate_with_inputs(ws, date(2026, 11, 29), MonteCarlo(), ws.config.horizon.months)
        return ev, gather_extras(ws, ev, inputs)

    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp) / "ws", args.offers)
        ev, extras = pipeline(root)
        html_to_pdf(render_html(ev, "comparison", extras=extras))  # warm-up

        cpu_start = time.process_time()
        start = time.perf_counter()
        ev, extras = pipeline(root)
        t_eval = time.perf_counter()
        charts = build_charts(ev, "comparison", extras)
        t_charts = time.perf_counter()
        html = render_html(ev, "comparison", charts, extras)
        t_html = time.perf_counter()
        pdf = html_to_pdf(html)
        t_pdf = time.perf_counter()
        cpu_total = time.process_time() - cpu_start

        cpu_weasy = time.process_time()
        weasy_start = time.perf_counter()
        html_to_pdf(html)
        weasy_alone = time.perf_counter() - weasy_start
        cpu_weasy = time.process_time() - cpu_weasy

    total = t_pdf - start
    print(f"comparison report, {args.offers} offers: {total:.2f} s wall, {cpu_total:.2f} s CPU ({len(pdf) / 1024:.0f} KiB; budget 10 s)")
    print(f"  load, evaluate (10,000 Monte Carlo draws, horizon), market extras {t_eval - start:.2f} s, charts {t_charts - t_eval:.2f} s, HTML {t_html - t_charts:.2f} s, PDF {t_pdf - t_html:.2f} s")
    # Overhead: what the pipeline adds before WeasyPrint (measured once), against WeasyPrint alone on
    # the same HTML (measured again): the PDF step itself is WeasyPrint's and varies run to run.
    print(f"  WeasyPrint alone on the same HTML: {weasy_alone:.2f} s wall, {cpu_weasy:.2f} s CPU; pipeline overhead {(t_html - start) / weasy_alone:+.0%} (budget +30%)")
    print(f"  whole report / WeasyPrint alone: {total / weasy_alone:.2f}x wall, {cpu_total / cpu_weasy:.2f}x CPU (budget 1.30x)")


if __name__ == "__main__":
    main()
