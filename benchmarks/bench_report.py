"""Time `procure report` on 50 offers, against WeasyPrint laying out the same report's HTML alone.

Run: .venv/bin/python benchmarks/bench_report.py [--offers 50 | --example [--board | --frontier]] [--warm]
[--runs 3] [--pathological] [--html]
Budget (design): under 10 s on two cores, and within 1.3x of WeasyPrint alone on the same HTML. --example
times the example workspace (the repository root) instead of generated offers; --board its board memo;
--frontier the comparison with the plan's efficient frontier (`procure report --frontier`, its solves made too).
With --pathological: a report whose offer has a 256-character unbroken name (the most a file may give) and a
2,000-character note costs at most 1.2x the same report without them (docs/security.md). With --html: the size of
the comparison and the memo as HTML pages (`--format html`, their fonts carried inside: docs/reports.md) and the time
the command and the fonts' subsetting take.

The whole command is timed as a user runs it (start-up, evaluation, charts, the report laid out in
parts in parallel processes and merged: procure.render.assemble). Its wall time is what counts on a
quiet machine; on a shared one wall-clock seconds say more about the neighbours than about the code,
so the script also prints the CPU seconds of all its processes, whose ratio to WeasyPrint alone is
the work the command adds to the layout itself. WeasyPrint alone is a process of its own that lays out
the HTML the same command writes (procure.render.documents.html_to_pdf: the report's fonts and settings),
timed in turn with the command; every run of the command starts with an empty solve cache (a temporary
folder, never the user's), so the plan and the frontier are solved each time; with --warm the folder is kept
from the warm-up run on, so the same report is answered from the result cache (procure/io/resultcache.py: the
document written again; a report made again on unchanged inputs), and the plan read back where it is not. The
ratio is the median of the pair-by-pair ratios; the machine's load is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["PROCURE_CACHE_DIR"] = (
    ""  # every solve timed is a solve: no plan read back from procure's cache (procure/io/solvecache.py)
)
from synthetic import ROOT, make_workspace  # noqa: E402
from timing import empty, load, paired, private_env  # noqa: E402


def pathological() -> None:
    """CPU seconds of the comparison PDF of tests/data/basic, with and without a pathological offer."""
    import shutil
    from datetime import date

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from conftest import DATA_DIR
    from test_documents import pathological_copy  # the workspace the layout test checks

    from procure.analysis.evaluate import evaluate
    from procure.analysis.report import gather_extras
    from procure.io.workspace import load_workspace
    from procure.render.assemble import comparison_pdf

    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "basic"
        shutil.copytree(DATA_DIR / "basic", plain)
        roots = {"plain": plain, "pathological": pathological_copy(plain)}
        cases = {}
        for key, root in roots.items():
            ws = load_workspace(root)
            ev = evaluate(ws, date(2026, 11, 29))
            cases[key] = (ev, gather_extras(ws, ev))
        times: dict[str, list[float]] = {key: [] for key in cases}
        for _ in range(3):  # alternate, and keep each one's best: the machine may be shared
            for key, (ev, extras) in cases.items():
                start = time.process_time()
                comparison_pdf(ev, extras, workers=1)  # every part in this process: its CPU time is the work
                times[key].append(time.process_time() - start)
    best = {key: min(found) for key, found in times.items()}
    print(
        f"comparison PDF of tests/data/basic: {best['plain']:.2f} s CPU; with a 256-character name and a "
        f"2,000-character note: {best['pathological']:.2f} s "
        f"({best['pathological'] / best['plain']:.2f}x, budget 1.20x)"
    )


def html_page(root: Path, runs: int) -> None:
    """`procure report --format html`, the comparison and the board memo: the page's size, what its fonts take of it,
    and the time the command and the fonts' subsetting take (procure.render.webfonts)."""
    import re
    import statistics

    from timing import run_once

    from procure.render import webfonts

    env, keep = private_env()
    with keep, tempfile.TemporaryDirectory() as tmp:
        for kind, options in (("comparison", []), ("board memo", ["--board"])):
            page = Path(tmp) / f"{kind.split()[0]}.html"
            command = [sys.executable, "-m", "procure", "report", *options, "-w", str(root), "--as-of", "2026-11-29"]
            done = [run_once([*command, "--format", "html", "--out", str(page)], env) for _ in range(runs)]
            text = page.read_text(encoding="utf-8")
            fonts = sum(len(m) for m in re.findall(r"url\(data:font/[^)]*\)", text))
            faces = len(re.findall(r"@font-face", text))
            files = sum(p.stat().st_size for p in (webfonts.templates_dir() / "fonts").glob("*.woff"))
            webfonts._face_data.cache_clear()
            start = time.process_time()
            webfonts.embedded_fonts(text)  # the page's own characters: the same faces cut again, timed here
            subsetting = time.process_time() - start
            print(
                f"procure report --format html, {kind}: {len(text.encode()) / 1024:.0f} KiB, of which fonts "
                f"{fonts / 1024:.0f} KiB ({faces} faces cut to the page's characters, from {files / 1024:.0f} KiB of "
                f"font files); {statistics.median(r.wall for r in done):.2f} s wall, "
                f"{statistics.median(r.cpu for r in done):.2f} s CPU, of which cutting the fonts "
                f"{subsetting:.2f} s CPU; "
                f"{load()}"
            )


WEASYPRINT_ALONE = (
    "import sys; from pathlib import Path; from procure.render.documents import html_to_pdf; "
    "Path(sys.argv[2]).write_bytes(html_to_pdf(Path(sys.argv[1]).read_text(encoding='utf-8')))"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offers", type=int, default=50)
    parser.add_argument(
        "--example", action="store_true", help="the example workspace (the repository root) instead of generated offers"
    )
    parser.add_argument("--board", action="store_true", help="the board memo instead of the comparison")
    parser.add_argument(
        "--frontier",
        action="store_true",
        help="the comparison with the plan's efficient frontier (procure report --frontier)",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="caches warm: the run's own cache folder filled by a first run and kept (the same report again)",
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--pathological",
        action="store_true",
        help="time a report with a 256-character vendor name and a 2,000-character note instead",
    )
    parser.add_argument(
        "--html",
        action="store_true",
        help="the size of the HTML report (--format html, fonts carried inside) and the time it takes, instead",
    )
    args = parser.parse_args()
    if args.html:
        with tempfile.TemporaryDirectory() as tmp:
            html_page(ROOT if args.example else make_workspace(Path(tmp) / "ws", args.offers), args.runs)
        return
    if args.pathological:
        pathological()
        return
    import subprocess

    env, keep = private_env()
    cache = env["PROCURE_CACHE_DIR"]
    with keep, tempfile.TemporaryDirectory() as tmp:
        root = ROOT if args.example else make_workspace(Path(tmp) / "ws", args.offers)
        what = (
            ("the example" if args.example else f"{args.offers} offers")
            + (", board memo" if args.board else ", comparison")
            + (" with the frontier" if args.frontier else "")
        )
        options = (["--board"] if args.board else []) + (["--frontier"] if args.frontier else [])
        command = [sys.executable, "-m", "procure", "report", *options, "-w", str(root), "--as-of", "2026-11-29"]
        pdf, html = Path(tmp) / "report.pdf", Path(tmp) / "report.html"
        subprocess.run([*command, "--out", str(html)], check=True, capture_output=True, env=env)
        alone = [sys.executable, "-c", WEASYPRINT_ALONE, str(html), str(Path(tmp) / "alone.pdf")]
        whole, weasy, wall, cpu = paired(
            [*command, "--out", str(pdf)],
            alone,
            runs=args.runs,
            env=env,
            before_each=None if args.warm else lambda: empty(cache),
        )
        size, single = pdf.stat().st_size, (Path(tmp) / "alone.pdf").stat().st_size

    print(
        f"procure report, {what}, {'caches warm (the same report again)' if args.warm else 'solve cache empty'}: "
        f"{whole.wall:.2f} s wall, {whole.cpu:.2f} s CPU in all its "
        f"processes ({size / 1024:.0f} KiB)"
    )
    print(
        f"  WeasyPrint alone on the same report's HTML as one document, a process of its own: {weasy.wall:.2f} s wall, "
        f"{weasy.cpu:.2f} s CPU ({single / 1024:.0f} KiB)"
    )
    print(
        f"  whole command / WeasyPrint alone, {args.runs} runs in turn: {wall:.2f}x wall (budget 1.30x), {cpu:.2f}x "
        f"CPU; {load()}"
    )


if __name__ == "__main__":
    main()
