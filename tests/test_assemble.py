"""The comparison PDF laid out in parts and merged reads exactly as the same report laid out as one document.

The single document is the reference: WeasyPrint numbers its pages, resolves its contents with
target-counter() and writes its own links, destinations and outline. The merged one computes all of
these itself, so every one is compared, page by page.
"""

import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pypdf
import pytest

from procure.analysis.evaluate import MonteCarlo, evaluate_with_inputs
from procure.analysis.report import gather_extras
from procure.io.workspace import load_workspace
from procure.render import assemble
from procure.render.documents import CHAPTERS, ReportError, html_to_pdf, render_html

EPOCH = "1764400000"


def test_parts_hold_every_chapter_and_offer_once_in_order():
    for offers in (1, 7, 8, 9, 50):
        parts = assemble.report_parts(offers)
        chapters = [c for p in parts for c in sorted(p.chapters, key=CHAPTERS.index)]
        assert chapters == list(CHAPTERS)  # each chapter once, in the document's order
        spans = [p.offers for p in parts if p.offers[1] > p.offers[0]]
        assert [i for a, b in spans for i in range(a, b)] == list(range(offers))
        assert sum(p.offers_heading for p in parts) == 1  # one "Offer details" heading, on the first offer part
        assert all(p.merged for p in parts)
        # Laid out before the market data, plan and charts exist: the offer pages and the appendix, nothing else.
        assert [p.evaluation_only for p in parts] == [False, False, False] + [True] * len(spans) + [True]
        # Fixed by the content alone: a 50-offer report is cover, two chapter groups, ceil(50 / 8) offer groups,
        # appendix.
    assert len(assemble.report_parts(50)) == 3 + 7 + 1


@pytest.fixture(scope="module")
def basic(data_dir):
    ws = load_workspace(data_dir / "basic")
    ev, inputs = evaluate_with_inputs(ws, date(2026, 11, 29), MonteCarlo(draws=500), ws.config.horizon.months)
    return ev, gather_extras(ws, ev, inputs)


def _read(pdf: bytes):
    """Pages' text, named destinations, outline and links, with every target as a page index."""
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    # Without spaces: where the extractor puts a space between runs of bold and plain text depends on how
    # each document subsets its fonts, not on what is printed.
    texts = ["".join(page.extract_text().replace("\x00", "").split()) for page in reader.pages]
    dests = {
        name: (reader.get_destination_page_number(d), round(float(d.left)), round(float(d.top)))
        for name, d in reader.named_destinations.items()
    }

    def walk(items, level=1):
        for item in items:
            if isinstance(item, list):
                yield from walk(item, level + 1)
            else:
                yield level, item.title, reader.get_destination_page_number(item), round(float(item.top))

    links = []
    for number, page in enumerate(reader.pages):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            target = dests[str(annotation["/Dest"])] if "/Dest" in annotation else annotation["/A"]["/URI"]
            links.append((number, tuple(round(float(v)) for v in annotation["/Rect"]), target))
    return reader, texts, dests, list(walk(reader.outline)), links


@pytest.fixture(scope="module")
def both(basic, tmp_path_factory):
    """The basic workspace's report as one document and merged from one part per offer (the most seams), and
    what the merged layout left in the temporary folder (WeasyPrint stores the fonts it decodes there)."""
    ev, extras = basic
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
    mp.setattr(assemble, "OFFERS_PER_PART", 1)
    single = html_to_pdf(render_html(ev, "comparison", extras=extras))
    temporary = tmp_path_factory.mktemp("merged-tmp")
    mp.setattr(tempfile, "tempdir", str(temporary))
    merged = assemble.comparison_pdf(ev, extras, workers=2)
    left = list(temporary.iterdir())
    mp.undo()
    return _read(single), _read(merged), merged, left


@pytest.mark.slow  # PDF rendering, as every test below
def test_merged_pages_read_as_the_single_document(both):
    (one, one_texts, *_), (merged, merged_texts, *_), *_ = both
    assert len(merged.pages) == len(one.pages) >= 12
    for number, (expected, got) in enumerate(zip(one_texts, merged_texts), start=1):
        assert got == expected, f"page {number}"  # running headers and "Page N of M" included
    assert [p.mediabox for p in merged.pages] == [p.mediabox for p in one.pages]


@pytest.mark.slow
def test_page_numbers_count_the_whole_document(both):
    _, (merged, texts, *_), *_ = both
    total = len(merged.pages)
    for number, text in enumerate(texts, start=1):
        assert text.endswith(f"Page{number}of{total}")


@pytest.mark.slow
def test_contents_links_destinations_and_outline_match(both):
    (one, _, one_dests, one_outline, one_links), (merged, texts, dests, outline, links), *_ = both
    assert dests == one_dests and len(dests) >= 15  # every chapter and offer anchor, same page and position
    assert outline == one_outline  # same headings, levels, pages and positions
    assert links == one_links and links  # the contents' links: same places, same targets
    assert merged.metadata.title == one.metadata.title and merged.trailer["/Root"]["/Lang"] == "en"


@pytest.mark.slow
def test_each_contents_entry_prints_the_page_its_link_goes_to(both):
    _, (merged, _, _, _, links), *_ = both
    toc = [page for page, _, _ in links]
    assert set(toc) == {1}  # the contents page
    printed = [int(n) for n in re.findall(r"(\d+)\s*$", merged.pages[1].extract_text(), flags=re.M)][
        :-1
    ]  # the last: "Page 2 of N"
    entries = list(dict.fromkeys(target for _, _, target in links))  # an entry's link is drawn in several boxes
    targets = [page + 1 for page, _, _ in entries]
    # Read top to bottom, the number printed at each entry's end is the page its link opens.
    assert printed == sorted(printed) and printed == targets


@pytest.mark.slow
def test_same_bytes_whatever_the_number_of_workers(basic, monkeypatch, both):
    ev, extras = basic
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.setattr(assemble, "OFFERS_PER_PART", 1)
    # In this process against forked workers (the fixture's 2): which process lays out a part is all a
    # worker count changes, since the parts are fixed by the content.
    assert assemble.comparison_pdf(ev, extras, workers=1) == both[2]


@pytest.mark.slow
def test_a_part_failing_in_a_worker_is_a_report_error(basic, monkeypatch):
    ev, extras = basic
    real = assemble.lay_out

    def failing(html, fonts=None):
        if 'class="offer' in html:
            raise RuntimeError("no glyph for U+1F600")
        return real(html, fonts)

    monkeypatch.setattr(assemble, "lay_out", failing)  # the workers fork after this: they inherit it
    with pytest.raises(
        ReportError, match=r"PDF rendering failed \(RuntimeError: no glyph for U\+1F600\); --format html"
    ):
        assemble.comparison_pdf(ev, extras, workers=2)


def _board_pid(_: object) -> int:
    return os.getpid()


@pytest.mark.slow
def test_the_memo_laid_out_in_its_own_process_has_the_bytes_of_one_laid_out_here(data_dir, monkeypatch, tmp_path):
    """The board memo goes to one process that loaded WeasyPrint while the plan was solved: the same bytes as
    documents.html_to_pdf in this process, and a layout failure there is the same report error."""
    ws = load_workspace(data_dir / "basic")
    ev, inputs = evaluate_with_inputs(ws, date(2026, 11, 29), MonteCarlo(draws=500), ws.config.horizon.months)
    extras = gather_extras(ws, ev, inputs, board=True)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    html = render_html(ev, "board", extras=extras)
    here = html_to_pdf(html)
    monkeypatch.setattr(assemble, "_processors", lambda: 2)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the workers keep the fonts they decode
    stages: list[str] = []
    with assemble.LayoutWorkers(apart=True) as memo:
        assert memo.count == 1 and memo.pool is not None  # one process, not one per processor
        assert memo.map(_board_pid, [1, 2]) != [os.getpid()] * 2
        apart = memo.document(html, lambda what, done=None, total=None: stages.append(what))
    assert apart == here
    pages = len(pypdf.PdfReader(io.BytesIO(apart)).pages)
    assert stages == ["laying out pages", f"writing {pages} pages"]
    monkeypatch.setattr(assemble, "_processors", lambda: 1)  # one processor: laid out in this process
    with assemble.LayoutWorkers(apart=True) as alone:
        assert alone.pool is None and alone.document(html) == here
    assert list(tmp_path.iterdir()) == []  # no font folder left

    def failing(html, fonts=None):
        raise RuntimeError("no glyph for U+1F600")

    monkeypatch.setattr(assemble, "_processors", lambda: 2)
    monkeypatch.setattr(assemble, "lay_out", failing)  # the worker forks after this (its fonts fail to load too)
    with assemble.LayoutWorkers(apart=True) as broken, pytest.raises(ReportError, match=r"PDF rendering failed"):
        broken.document(html)


@pytest.mark.slow
def test_no_temporary_font_folder_is_left(both):
    """The merged layout above (two worker processes, one part per offer) ran with a temporary folder of its own."""
    assert both[3] == []


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killing_the_report_ends_its_layout_workers(data_dir, tmp_path):
    """A report killed outright (SIGKILL: no clean-up runs) takes its layout processes with it."""
    report = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "procure",
            "report",
            "-w",
            str(data_dir / "basic"),
            "--as-of",
            "2026-11-29",
            "--out",
            str(tmp_path / "X.pdf"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (workers := _children(report.pid)) and time.monotonic() < deadline and report.poll() is None:
        time.sleep(0.02)
    assert workers, "the report started no layout process"
    report.send_signal(signal.SIGKILL)
    report.wait()
    deadline = time.monotonic() + 10
    while any(_state(pid) not in ("Z", "X", None) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in workers if _state(pid) not in ("Z", "X", None)] == []


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_a_killed_reports_font_folder_is_removed_by_the_next(monkeypatch, tmp_path):
    from procure.io.files import temporary_name

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    monkeypatch.setattr(os, "getpid", lambda: int(gone.stdout))  # a name owned by a process that has ended
    abandoned = tmp_path / temporary_name("procure-fonts")
    monkeypatch.undo()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    abandoned.mkdir()
    (abandoned / "font").write_bytes(b"x")
    with assemble.LayoutWorkers(1) as workers:
        assert not abandoned.exists() and Path(workers.folder).is_dir()
    assert list(tmp_path.iterdir()) == []


def _pid(_: object) -> int:
    return os.getpid()


def _stall_or_fail(job: str) -> str:
    if job == "fail":
        raise ValueError("this solve failed")
    time.sleep(600)  # a solve that would run for minutes
    return job


@pytest.mark.slow
def test_the_workers_solve_jobs_in_their_own_processes_in_order():
    with assemble.LayoutWorkers(2) as workers:
        assert workers.map(len, ["a", "bb", "ccc"]) == [1, 2, 3]  # the results in the jobs' order
        assert os.getpid() not in workers.map(_pid, [1, 2, 3, 4])
    with assemble.LayoutWorkers(1) as alone:  # one processor: solved here
        assert alone.map(_pid, [1, 2]) == [os.getpid()] * 2


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_failing_job_stops_the_workers_instead_of_waiting_for_the_others():
    """One job fails while another would run for ten minutes: the failure is raised at once and the workers are
    stopped (measured: about 0.2 s; the bound is fifty times that, a guard against waiting for the long job)."""
    started = time.monotonic()
    with pytest.raises(ValueError, match="this solve failed"):
        with assemble.LayoutWorkers(2) as workers:
            pids = workers.map(_pid, [1, 2])
            workers.map(_stall_or_fail, ["stall", "fail"])
    assert time.monotonic() - started < 10
    assert [pid for pid in set(pids) if _state(pid) not in ("Z", "X", None)] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_failing_command_does_not_wait_for_its_layout_process(monkeypatch, tmp_path):
    """Bad input found after the memo's process started (it is still loading WeasyPrint), or a layout that would
    run on: the command ends at once and the process is stopped, not waited for (measured: about 0.1 s; the
    bound is a guard against waiting for the ten-minute layout)."""

    def stuck(html, fonts=None):
        time.sleep(600)  # the worker's fonts are laid out on start: it is busy for ten minutes

    monkeypatch.setattr(assemble, "_processors", lambda: 2)
    monkeypatch.setattr(assemble, "lay_out", stuck)  # the worker forks after this: it inherits it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    started = time.monotonic()
    with pytest.raises(ValueError, match="bad --as-of"):
        with assemble.LayoutWorkers(apart=True) as memo:
            pids = list((memo.pool._processes or {}).keys()) if memo.pool is not None else []
            raise ValueError("bad --as-of")
    assert time.monotonic() - started < 10
    assert pids and [pid for pid in pids if _state(pid) not in ("Z", "X", None)] == []
    assert list(tmp_path.iterdir()) == []
