"""The comparison PDF laid out in parts, in parallel processes, and merged into one document.

WeasyPrint lays a document out on one core, and a 50-offer comparison runs to about 70 pages. So the
report is cut at chapter and offer boundaries, at the template level (every part is the same template
showing some chapters: documents.Part), and each part is laid out in its own forked process while
the charts are still being drawn. pypdf then merges the parts: the contents are laid out again with
the merged page numbers, "Page N of M" is stamped from a thin document laid out with the same page
styles, and the links, named destinations, outline and document information are those of one
document. The parts are fixed by the content, never by the number of processors, so the same inputs
give the same bytes on any machine; without fork (or with one processor) the parts are laid out one
after the other in this process, with the same result.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from procure.analysis.evaluate import Evaluation
from procure.analysis.report import LazyExtras, ReportExtras
from procure.errors import InputError
from procure.render import documents
from procure.render.documents import (
    Part,
    ReportError,
    Stage,
    build_charts,
    lay_out,
    resolve_extras,
    templates_dir,
    weasyprint,
)

OFFERS_PER_PART = (
    8  # offer pages per part: small enough to balance the processes, few parts (each embeds its own font subsets)
)
SCALE = 0.75  # CSS pixels to PDF points (WeasyPrint's own)


def report_parts(offers: int) -> list[Part]:
    """The parts in document order: cover and contents, two groups of chapters, the offer pages in groups, the
    appendix."""
    second = documents.CHAPTERS.index("horizon")  # the chapters after the charts make the second group
    groups = (documents.CHAPTERS[:1], documents.CHAPTERS[1:second], documents.CHAPTERS[second:-1])
    parts = [Part(frozenset(group), offers=(0, 0), offers_heading=False, merged=True) for group in groups]
    starts = range(0, max(offers, 1), OFFERS_PER_PART)
    parts += [
        Part(frozenset(), offers=(start, min(start + OFFERS_PER_PART, offers)), offers_heading=start == 0, merged=True)
        for start in starts
    ]
    return parts + [Part(frozenset(documents.CHAPTERS[-1:]), offers=(0, 0), offers_heading=False, merged=True)]


@dataclass
class PageFacts:
    """What merging needs of a laid-out page, in PDF points from the bottom-left corner."""

    name: str  # the named page (@page offer, ...): the stamp uses the same page style
    anchors: dict[str, tuple[float, float]] = field(default_factory=dict)
    links: list[tuple[str, str, tuple[float, float, float, float]]] = field(
        default_factory=list
    )  # (internal|external, target, rectangle)
    bookmarks: list[tuple[int, str, float, float]] = field(default_factory=list)  # (level, label, x, y)


@dataclass
class LaidOut:
    pdf: bytes
    pages: list[PageFacts]


def _facts(page: Any) -> PageFacts:
    height = page.height

    def point(x: float, y: float) -> tuple[float, float]:
        return x * SCALE, (height - y) * SCALE

    facts = PageFacts(name=page._page_box.page_type.name or "")
    for anchor, (x, y, *_) in page.anchors.items():
        facts.anchors[anchor] = point(x, y)
    for kind, target, (x1, y1, x2, y2), _box in page.links:
        if kind in ("internal", "external"):
            (a, b), (c, d) = point(x1, y1), point(x2, y2)
            facts.links.append((kind, target, (a, b, c, d)))
    for level, label, (x, y), _state in page.bookmarks:
        facts.bookmarks.append((level, label, *point(x, y)))
    return facts


# In a worker (or in this process without fork): the report's fonts, loaded once, or why they could not be.
_fonts: Any = None
_broken: ReportError | None = None


def _load_fonts(folder: str) -> None:
    """Load WeasyPrint and the report's fonts (its @font-face rules), their files kept in `folder`."""
    global _fonts, _broken
    fonts_css = (templates_dir() / "fonts.css").read_text(encoding="utf-8")
    previous = tempfile.tempdir
    tempfile.tempdir = folder  # where WeasyPrint keeps the font files it decodes: removed with the folder
    try:
        _fonts = weasyprint().text.fonts.FontConfiguration()
        lay_out(f"<html><head><style>{fonts_css}</style></head><body><p>fonts</p></body></html>", _fonts)
    except ReportError as exc:  # WeasyPrint or Pango missing: said when a part is asked for
        _broken = exc
    except Exception as exc:
        # A full temporary folder travels back as it is (an OSError pickles; the parent names the folder).
        _broken = documents.no_space(exc) or ReportError(
            f"PDF rendering failed ({type(exc).__name__}: {exc}); --format html writes the same report without "
            "WeasyPrint"
        )  # type: ignore[assignment]
    finally:
        tempfile.tempdir = previous


def _start_worker(folder: str, parent: int) -> None:
    """A worker: ends with the command (killed or not), prints nothing (its errors travel back as
    exceptions), and loads the fonts."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the parent
        if os.getppid() != parent:  # the parent was gone before that took effect
            os._exit(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # nor keep the command's pipes open: whoever reads them sees their end
        os.dup2(quiet, fd)
    os.close(quiet)
    _load_fonts(folder)


def _lay_out_part(html: str) -> LaidOut:
    """In a worker: lay one part out and write it; the layout itself stays in the worker."""
    if _broken is not None:
        raise _broken
    document = lay_out(html, _fonts)
    return LaidOut(pdf=document.write_pdf(), pages=[_facts(page) for page in document.pages])


_kept: Any = None  # in the one worker of `LayoutWorkers(apart=True)`: the document laid out, until it is written


def _lay_out_kept(html: str) -> int:
    """In the worker (or here): one whole document laid out and kept for `_write_kept`; its page count."""
    global _kept
    if _broken is not None:
        raise _broken
    _kept = lay_out(html, _fonts)
    return len(_kept.pages)


def _write_kept() -> bytes:
    """The document `_lay_out_kept` laid out, written (and no longer kept)."""
    global _kept
    document, _kept = _kept, None
    if document is None:
        raise RuntimeError("no document laid out to write")  # a caller's error: _lay_out_kept comes first
    return document.write_pdf()


def _processors() -> int:
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class LayoutWorkers:
    """The processes that lay the comparison's parts out, one per processor (none where fork is not
    available: the parts are then laid out in this process). Started early, before the evaluation,
    each loads WeasyPrint and the report's fonts while the evaluation runs.

    `apart`: one process for a report laid out as one document (the board memo), where there is a second
    processor: it loads WeasyPrint while this one evaluates and plans, then lays the document out (`document`)."""

    def __init__(self, count: int | None = None, apart: bool = False) -> None:
        from procure.io.files import make_owned_folder, remove_abandoned, temporary_name

        self.count = 1 if apart else max(1, count if count is not None else _processors())
        remove_abandoned(Path(tempfile.gettempdir()))  # the font folders of reports that were killed
        self.folder = str(Path(tempfile.gettempdir()) / temporary_name("procure-fonts"))
        try:
            make_owned_folder(self.folder)
        except OSError as exc:
            if documents.no_space(exc) is None:
                raise
            raise documents.rendering_failed(exc) from None
        self.pool: ProcessPoolExecutor | None = None
        if self.count > 1 or (apart and _processors() > 1):
            self.pool = ProcessPoolExecutor(
                self.count,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_start_worker,
                initargs=(self.folder, os.getpid()),
            )
            self.pool.submit(int)  # forks every worker now (with fork they all start at once)
        else:
            _load_fonts(self.folder)

    def map(self, solve: Callable[[Any], Any], jobs: list[Any]) -> list[Any]:
        """`solve` of each job, in the workers (the report's plan is solved while they have offer pages to lay out
        or nothing to do; procure.analysis.plan.frontier.Solves), or in this process without them. The results are
        those of solving here: each job is the same program wherever it runs. Interrupted or failed, the workers are
        stopped rather than waited for."""
        if self.pool is None or len(jobs) < 2:
            return [solve(job) for job in jobs]
        futures = [self.pool.submit(solve, job) for job in jobs]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((future for future in futures if future in done and future.exception() is not None), None)
            if failed is not None:
                failed.result()  # raised at once, not after the solves before it
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            self._kill()  # a solve may run for minutes: nothing is left to wait for
            raise

    def document(self, html: str, progress: Stage | None = None) -> bytes:
        """One document's PDF, laid out in the worker (or here without one), its fonts loaded while the report was
        computed: the bytes of `documents.html_to_pdf` in this process."""
        return documents.html_to_pdf(
            html, progress, (partial(self._in_worker, _lay_out_kept), partial(self._in_worker, _write_kept))
        )

    def _in_worker(self, call: Callable[..., Any], *args: Any) -> Any:
        return call(*args) if self.pool is None else self.pool.submit(call, *args).result()

    def _kill(self) -> None:
        """Stop the workers now, whatever they are doing (a layout or a solve that would still take long)."""
        for process in list((getattr(self.pool, "_processes", None) or {}).values()):
            process.kill()

    def close(self) -> None:
        global _fonts, _broken, _kept
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        else:
            _fonts = _broken = _kept = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LayoutWorkers:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:  # failed or interrupted: what the workers do is no longer wanted, so not waited for
            self._kill()
        self.close()


class _Runner:
    """Lays parts out on the workers, the longest waiting part first, with at most one queued beyond
    the busy workers so that a long part ready late still goes next."""

    def __init__(self, workers: LayoutWorkers) -> None:
        self.waiting: list[tuple[int, str]] = []
        self.running: dict[Future[LaidOut], int] = {}
        self.done: dict[int, LaidOut] = {}
        self.workers = workers.count
        self.pool = workers.pool

    def add(self, index: int, html: str) -> None:
        self.waiting.append((index, html))
        self.waiting.sort(key=lambda item: -len(item[1]))  # longest first: charts and long tables weigh most
        self.pump()

    def pump(self) -> None:
        """Collect finished parts and start waiting ones while a worker is free."""
        if self.pool is None:
            return
        for future in [f for f in self.running if f.done()]:
            self.done[self.running.pop(future)] = future.result()
        while self.waiting and len(self.running) < self.workers + 1:  # one queued: no worker waits for the next pump
            index, html = self.waiting.pop(0)
            self.running[self.pool.submit(_lay_out_part, html)] = index

    def finish(self, progress: Callable[[int], None]) -> dict[int, LaidOut]:
        if self.pool is None:
            while self.waiting:
                index, html = self.waiting.pop(0)
                self.done[index] = _lay_out_part(html)
                progress(len(self.done))
            return self.done
        while self.running or self.waiting:
            self.pump()
            progress(len(self.done))
            if self.running:
                wait(list(self.running), return_when=FIRST_COMPLETED)
        self.pump()
        return self.done


def comparison_pdf(
    ev: Evaluation,
    extras: LazyExtras = None,
    progress: Stage | None = None,
    workers: LayoutWorkers | int | None = None,
) -> bytes:
    """The comparison report as one PDF, its parts laid out in parallel; the same bytes for any workers.

    `workers`: started ones (LayoutWorkers, left running), or how many to start (default: one per
    processor). `extras` (market data, plan, cases) may be a function: the offer pages and the
    appendix need only the evaluation, so the workers lay them out while it runs here, and then
    while the charts are drawn."""
    report = progress or (lambda what, done=None, total=None: None)
    parts = report_parts(len(ev.offers))
    own = not isinstance(workers, LayoutWorkers)  # started here, so closed here
    started = LayoutWorkers(workers) if own else workers
    runner = _Runner(started)
    try:
        # The offer pages and the appendix go first (they show the evaluation alone), so the workers lay
        # them out while the extras are computed and the charts drawn here.
        alone = [index for index, part in enumerate(parts) if part.evaluation_only]
        for index in alone:
            runner.add(index, documents.render_html(ev, "comparison", {}, ReportExtras(), part=parts[index]))
        extras = resolve_extras(extras)
        for index, part in enumerate(parts):
            if index not in alone and not part.charts:
                runner.add(index, documents.render_html(ev, "comparison", {}, extras, part=part, toc_pages={}))
        # Each chapter part goes as soon as its own charts are drawn (the pump between charts keeps the workers busy).
        drawing = lambda what, done, total: (runner.pump(), report(what, done, total))  # noqa: E731
        for index, part in enumerate(parts):
            if part.charts:
                charts = build_charts(ev, "comparison", extras, drawing, part.charts)
                runner.add(index, documents.render_html(ev, "comparison", charts, extras, part=part))
        laid = dict(runner.finish(lambda done: report("laying out pages in parts", done, len(parts))))
        return _merge(ev, extras, parts, laid, runner, report)
    except (ReportError, InputError):  # not a layout failure: as it is
        raise
    except Exception as exc:  # a worker failing (WeasyPrint, Pango, a font): say so, and offer the HTML
        raise documents.rendering_failed(exc) from None
    finally:
        if own:
            started.close()


def _page_numbers(parts: list[Part], laid: dict[int, LaidOut]) -> dict[str, int]:
    """Each anchor's page number (1-based) in the merged document."""
    numbers: dict[str, int] = {}
    offset = 0
    for index in range(len(parts)):
        for number, page in enumerate(laid[index].pages, start=offset + 1):
            for anchor in page.anchors:
                numbers.setdefault(anchor, number)
        offset += len(laid[index].pages)
    return numbers


def _merge(
    ev: Evaluation, extras: ReportExtras, parts: list[Part], laid: dict[int, LaidOut], runner: _Runner, report: Stage
) -> bytes:
    # The contents again, with the merged page numbers (it was laid out with blank ones, to count its
    # pages), beside the page-number stamps. Numbers are narrower than a line, so the count holds; were
    # it to change, both are laid out again.
    contents, stamp = -1, -2
    for _ in range(3):
        names = [page.name for index in range(len(parts)) for page in laid[index].pages]
        runner.add(
            contents,
            documents.render_html(ev, "comparison", {}, extras, part=parts[0], toc_pages=_page_numbers(parts, laid)),
        )
        runner.add(stamp, _stamp_html(names))
        runner.finish(lambda done: report("numbering pages", None, None))
        settled = len(runner.done[contents].pages) == len(laid[0].pages)
        laid[0], stamps = runner.done.pop(contents), runner.done.pop(stamp)
        if settled:
            break
    else:
        raise ReportError(
            "the contents' page count changed each time its page numbers were filled in; --format html writes the same "
            "report"
        )
    report("merging pages", None, None)
    return _join([laid[index] for index in range(len(parts))], stamps)


def _stamp_html(names: list[str]) -> str:
    """One empty page per merged page, with the report's page styles: only "Page N of M" is drawn."""
    folder = templates_dir()
    css = (folder / "fonts.css").read_text(encoding="utf-8") + (folder / "report.css").read_text(encoding="utf-8")
    css += "\n@page { @top-left { content: none; } @top-right { content: none; } @bottom-left { content: none; } }"
    pages = "".join(f'<div style="page: {name or "auto"}; break-before: page"></div>' for name in names)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta '
        f'charset="utf-8"><style>{css}</style></head><body>{pages}</body></html>'
    )


def _link(kind: str, target: str, rectangle: Any) -> Any:
    """A link annotation over `rectangle`: to a named destination (internal) or to a URI."""
    from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, NumberObject, TextStringObject

    link = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Annot"),
            NameObject("/Subtype"): NameObject("/Link"),
            NameObject("/Rect"): ArrayObject(FloatObject(v) for v in rectangle),
            NameObject("/BS"): DictionaryObject({NameObject("/W"): NumberObject(0)}),
        }
    )
    if kind == "internal":
        link[NameObject("/Dest")] = TextStringObject(target)
    else:
        link[NameObject("/A")] = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Action"),
                NameObject("/S"): NameObject("/URI"),
                NameObject("/URI"): TextStringObject(target),
            }
        )
    return link


def _link_kept(link: Any, anchors: set[str]) -> bool:
    """An internal link is kept only when its destination is in the document."""
    return "/Dest" not in link or str(link["/Dest"]) in anchors


def _outline(writer: Any, facts: list[Any]) -> None:
    """The outline: levels from the headings' bookmark-level, nested as WeasyPrint nests them."""
    from pypdf.generic import Fit

    stack: list[tuple[int, Any]] = []
    for number, page in enumerate(facts):
        for level, label, x, y in page.bookmarks:
            while stack and stack[-1][0] >= level:
                stack.pop()
            item = writer.add_outline_item(
                title=label, page_number=number, parent=stack[-1][1] if stack else None, fit=Fit.xyz(x, y, 0)
            )
            stack.append((level, item))


def _join(parts: list[LaidOut], stamps: LaidOut) -> bytes:
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import (
        ArrayObject,
        DecodedStreamObject,
        DictionaryObject,
        FloatObject,
        NameObject,
        TextStringObject,
    )

    writer = PdfWriter()
    readers = [PdfReader(io.BytesIO(part.pdf)) for part in parts]
    for reader in readers:  # named destinations come with their pages; links and the outline are rebuilt below
        writer.append(reader, import_outline=False, excluded_fields=("/Annots", "/B"))
    facts = [page for part in parts for page in part.pages]
    anchors = {anchor for page in facts for anchor in page.anchors}

    def stream(data: bytes, entries: dict[str, Any] | None = None) -> Any:
        obj = DecodedStreamObject()
        obj.set_data(data)
        obj.update({NameObject(k): v for k, v in (entries or {}).items()})
        return writer._add_object(obj.flate_encode() if len(data) > 64 else obj)

    # "Page N of M" drawn over each page as a form: the page's own drawing is kept as laid out (saved
    # and restored around it), not parsed again.
    save, restore = stream(b"q\n"), stream(b"\nQ\n")
    stamp_reader = PdfReader(io.BytesIO(stamps.pdf))
    for number, (page, merged) in enumerate(zip(facts, writer.pages)):
        stamp = stamp_reader.pages[number]
        form = stream(
            stamp.get_contents().get_data(),
            {
                "/Type": NameObject("/XObject"),
                "/Subtype": NameObject("/Form"),
                "/BBox": ArrayObject(FloatObject(v) for v in stamp.mediabox),
                "/Resources": stamp["/Resources"].clone(writer),
            },
        )
        name = NameObject(f"/PageNumber{number + 1}")
        resources = merged["/Resources"].get_object()  # shared by the pages of a part: one name per page
        if "/XObject" not in resources:
            resources[NameObject("/XObject")] = DictionaryObject()
        resources["/XObject"].get_object()[name] = form
        contents = merged.get("/Contents")
        own = list(contents.get_object()) if isinstance(contents.get_object(), ArrayObject) else [contents]
        merged[NameObject("/Contents")] = ArrayObject([save, *own, restore, stream(f"q {name} Do Q\n".encode())])
        links = [_link(kind, target, rectangle) for kind, target, rectangle in page.links]
        annotations = ArrayObject(writer._add_object(link) for link in links if _link_kept(link, anchors))
        if annotations:
            merged[NameObject("/Annots")] = annotations
    _outline(writer, facts)
    info = readers[0].metadata or {}
    writer.add_metadata({key: info[key] for key in info})
    root = readers[0].trailer["/Root"]
    if "/Lang" in root:
        writer._root_object[NameObject("/Lang")] = TextStringObject(root["/Lang"])
    writer.compress_identical_objects()  # what the parts share (colour profiles, the stamps' font), once
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
