"""Time the 50-offer comparison report, and its overhead over WeasyPrint rendering the same HTML.

Run: .venv/bin/python benchmarks/bench_report.py [--offers 50]
Budget (design): under 10 s on two cores, and within 1.3x of WeasyPrint alone on the same HTML.

The report is laid out in parts in parallel processes (procure.render.assemble), so its wall time
is what counts on a quiet machine; on a shared one wall-clock seconds say more about the neighbours
than about the code, so the script also prints the CPU seconds of all processes, whose ratio to
WeasyPrint alone on the same report as one document is the work that splitting and merging add.
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


def cpu() -> float:
    """CPU seconds of this process and of its finished children (the layout workers)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offers", type=int, default=50)
    parser.add_argument("--workers", type=int, default=None, help="layout processes (default: one per processor)")
    args = parser.parse_args()
    import weasyprint  # noqa: F401  (import once, outside both timings)

    from procure.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.render.assemble import comparison_pdf
    from procure.render.documents import html_to_pdf, render_html
    from procure.report_data import gather_extras
    from procure.workspace import load_workspace

    def pipeline(root: Path):  # type: ignore[no-untyped-def]
        """What `procure report` does before the PDF: evaluation with ranges and horizon, extras."""
        ws = load_workspace(root)
        ev, inputs = evaluate_with_inputs(ws, date(2026, 11, 29), MonteCarlo(), ws.config.horizon.months)
        return ev, gather_extras(ws, ev, inputs)

    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp) / "ws", args.offers)
        ev, extras = pipeline(root)
        comparison_pdf(ev, extras, workers=args.workers)  # warm-up

        cpu_start, start = cpu(), time.perf_counter()
        ev, extras = pipeline(root)
        t_eval = time.perf_counter()
        pdf = comparison_pdf(ev, extras, workers=args.workers)
        t_pdf = time.perf_counter()
        cpu_total = cpu() - cpu_start

        html = render_html(ev, "comparison", extras=extras)
        cpu_weasy, weasy_start = cpu(), time.perf_counter()
        single = html_to_pdf(html)
        weasy_alone = time.perf_counter() - weasy_start
        cpu_weasy = cpu() - cpu_weasy

    total = t_pdf - start
    print(f"comparison report, {args.offers} offers: {total:.2f} s wall, {cpu_total:.2f} s CPU in all processes ({len(pdf) / 1024:.0f} KiB; budget 10 s)")
    print(f"  load, evaluate (10,000 Monte Carlo draws, horizon), market extras {t_eval - start:.2f} s; charts, HTML and the PDF laid out in parts and merged {t_pdf - t_eval:.2f} s")
    print(f"  WeasyPrint alone on the whole HTML as one document: {weasy_alone:.2f} s wall, {cpu_weasy:.2f} s CPU ({len(single) / 1024:.0f} KiB)")
    print(f"  whole report / WeasyPrint alone: {total / weasy_alone:.2f}x wall (budget 1.30x), {cpu_total / cpu_weasy:.2f}x CPU (the work the parts add)")


if __name__ == "__main__":
    main()
