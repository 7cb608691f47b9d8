"""A report's bytes, whichever its kind and format: the comparison PDF laid out in parts in parallel
processes and merged, the board memo in one piece in a process of its own (procure.render.assemble), HTML as
rendered (procure.render.documents) with its fonts inside it (procure.render.webfonts)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from procure.analysis.evaluate import Evaluation
from procure.analysis.report import LazyExtras
from procure.render.documents import Stage, html_to_pdf, render_html, resolve_extras


@contextlib.contextmanager
def report_workers(kind: str = "comparison", fmt: str = "pdf") -> Iterator[Any]:
    """The layout processes of a PDF report, started now: entered before the evaluation, they load WeasyPrint while
    it runs (the comparison's parts on every processor, the board memo on one of its own). None for HTML."""
    if fmt == "pdf":
        from procure.render.assemble import LayoutWorkers

        with LayoutWorkers(apart=kind != "comparison") as workers:
            yield workers
    else:
        yield None


def render_report(
    ev: Evaluation,
    kind: str = "comparison",
    fmt: str = "pdf",
    extras: LazyExtras = None,
    progress: Stage | None = None,
    workers: Any = None,
) -> bytes:
    """The report's bytes. `extras` may be a function that computes them: the comparison PDF then lays
    out the offer pages, which need only the evaluation, while it runs; `workers` (report_workers) are
    its layout processes, else it starts its own."""
    if kind == "comparison" and fmt == "pdf":  # long: laid out in parts, in parallel, and merged
        from procure.render.assemble import comparison_pdf

        return comparison_pdf(ev, extras, progress, workers)
    html = render_html(ev, kind, extras=resolve_extras(extras), progress=progress)
    if fmt == "html":  # a page to share: its fonts inside it (procure.render.webfonts)
        from procure.render.webfonts import self_contained

        return self_contained(html).encode("utf-8")
    if workers is not None:
        return workers.document(html, progress)
    return html_to_pdf(html, progress)
