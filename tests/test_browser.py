"""The HTML report in a real browser: Debian's Chromium, driven by Playwright's Python API (the browser of the
distribution, installed by `make install`; Playwright never downloads one). The page fetches nothing but itself,
draws in its own fonts, keeps vendor text inert, reads in a column on a wide screen and without sideways scrolling
on a phone, prints on procure's pages, sorts its offers table, and names its charts.

Screenshots at 1,280 and 390 pixels are written to .pytest_cache/d/browser-screens/ (each run replaces them), to be
looked at.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pypdf
import pytest
from clihelp import AS_OF, run

pytestmark = pytest.mark.slow  # a browser started, reports rendered and printed

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).parent.parent
EPOCH = "1764400000"  # as tests/test_cli_report.py: the basic workspace's comparison PDF is the run's, shared
HOSTILE_VENDOR = "Keel</script><script>window.pwned=1</script>"
HOSTILE_NOTE = '<img src=x onerror="window.pwned=2"><script>window.pwned=3</script>'


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        pytest.skip(
            f"Chromium is not installed at {CHROMIUM}: `make install` installs Debian's chromium package when run "
            "as root (else: apt-get install chromium)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright's Python package is missing: pip install -e '.[test]'"
    )
    with sync_api.sync_playwright() as playwright:
        started = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield started
        started.close()


@pytest.fixture(scope="module")
def screens(pytestconfig):
    folder = pytestconfig.cache.mkdir("browser-screens")  # .pytest_cache/d/browser-screens: the checkout's, kept
    print(f"\nscreenshots of the HTML report: {folder}")
    return folder


class Opened:
    """A page of the report in its own browser context, with every request it made and every policy violation."""

    def __init__(self, browser, path: Path, width: int, script: bool = True):
        self.context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=script)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.blocked: dict[str, str] = {}  # requests stopped before they left the browser, and why
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("requestfailed", lambda request: self.blocked.__setitem__(request.url, request.failure))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.goto(path.as_uri())
        self.page.evaluate("document.fonts.ready.then(() => true)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.context.close()


def html_report(shared_report, *options: str) -> Path:
    return shared_report(ROOT, *options, fmt="html", as_of=AS_OF)


KINDS = {"comparison": (), "board": ("--board",)}


@pytest.mark.parametrize("kind", KINDS)
def test_the_page_fetches_nothing_but_itself_and_draws_in_its_own_fonts(browser, shared_report, tmp_path, kind):
    # written elsewhere than the workspace, with no fonts folder beside it (as a page saved from a mail)
    page_file = tmp_path / "shared" / f"{kind}.html"
    page_file.parent.mkdir()
    shutil.copyfile(html_report(shared_report, *KINDS[kind]), page_file)
    with Opened(browser, page_file, 1280) as opened:
        assert opened.requests == [page_file.as_uri()]
        faces = opened.page.evaluate(
            "[...document.fonts].map(f => [f.family.replace(/\"/g, ''), f.weight, f.style, f.status])"
        )
        loaded = {(weight, style) for family, weight, style, status in faces if status == "loaded"}
        assert {("400", "normal"), ("600", "normal"), ("700", "normal")} <= loaded, faces
        assert all(family == "Source Sans 3" and status != "error" for family, _, _, status in faces), faces
        # the text is drawn in it: a heading's first font is the page's own, and the browser has it ready
        assert opened.page.evaluate("getComputedStyle(document.querySelector('h1')).fontFamily").startswith(
            '"Source Sans 3"'
        )
        assert opened.page.evaluate("document.fonts.check('600 16px \"Source Sans 3\"')")
        assert opened.errors == []  # no policy violation, no failed load


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    """The basic workspace with a vendor whose name closes the script element and opens another, and a note with an
    image whose error handler would run: its comparison and memo as HTML."""
    root = tmp_path_factory.mktemp("hostile") / "basic"
    shutil.copytree(Path(__file__).parent / "data" / "basic", root)
    offer = root / "offers" / "alpha.yaml"
    text = offer.read_text(encoding="utf-8").replace("vendor: Alpha Cloud", f"vendor: {json.dumps(HOSTILE_VENDOR)}")
    offer.write_text(text + f"notes: {json.dumps(HOSTILE_NOTE)}\n", encoding="utf-8")
    pages = {}
    for kind, options in KINDS.items():
        pages[kind] = root.parent / f"{kind}.html"
        result = run("report", *options, "-f", "html", "-w", root, "--as-of", AS_OF, "--out", pages[kind])
        assert result.exit_code == 0, result.output
    return pages


@pytest.mark.parametrize("kind", KINDS)
def test_vendor_markup_shows_as_its_characters_and_runs_nothing(browser, hostile_page, kind):
    with Opened(browser, hostile_page[kind], 1280) as opened:
        page = opened.page
        assert page.evaluate("window.pwned") is None
        assert opened.requests == [hostile_page[kind].as_uri()]
        assert page.evaluate("document.scripts.length") == 1  # the page's own
        assert page.evaluate("document.images.length") == 0
        text = page.evaluate("document.body.innerText")
        assert HOSTILE_VENDOR in text
        if kind == "comparison":  # the memo prints no notes
            assert HOSTILE_NOTE in text
        assert opened.errors == []


def test_a_slip_in_escaping_would_still_run_and_fetch_nothing(browser, hostile_page, tmp_path):
    """Markup that escaped the escaping (added here by hand) is stopped by the page's Content-Security-Policy, which
    allows its own script alone, by hash, and no source outside the page; the page's own script still runs."""
    page_file = tmp_path / "slipped.html"
    slipped = (
        '<script>window.pwned = 1</script><img src="http://127.0.0.1:9/x.png" onerror="window.pwned = 2">'
        '<link rel="stylesheet" href="http://127.0.0.1:9/x.css">'
    )
    page_file.write_text(
        hostile_page["comparison"].read_text(encoding="utf-8").replace("</body>", slipped + "</body>"),
        encoding="utf-8",
    )
    with Opened(browser, page_file, 1280) as opened:
        page = opened.page
        assert page.evaluate("window.pwned") is None
        outside = ["http://127.0.0.1:9/x.png", "http://127.0.0.1:9/x.css"]
        assert sorted(opened.requests) == sorted([page_file.as_uri(), *outside])
        assert opened.blocked == dict.fromkeys(outside, "csp")  # refused by the page, not sent
        assert len([e for e in opened.errors if "Content Security Policy" in e]) >= 3, opened.errors
        # the page's own script ran: the offers table's heads are buttons to sort by
        heads = page.locator("table.glance thead th").count()
        assert heads >= 9 and page.locator("table.glance th[aria-sort]").count() == heads


def test_prose_reads_in_a_column_with_the_contents_beside_it_at_1280_pixels(browser, shared_report, screens):
    with Opened(browser, html_report(shared_report), 1280) as opened:
        page = opened.page
        # each paragraph's text box against 75 characters of its own font (a probe 75ch wide inside it)
        widths = page.evaluate(
            """[...document.querySelectorAll('p')].filter(p => p.offsetParent && !p.closest('nav')).map(p => {
                 const probe = document.createElement('span');
                 probe.style.cssText = 'display:inline-block;width:75ch';
                 p.appendChild(probe);
                 const ch75 = probe.getBoundingClientRect().width;
                 probe.remove();
                 const s = getComputedStyle(p);
                 const text = p.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
                 return [text, ch75, p.getBoundingClientRect().left];
               })"""
        )
        assert len(widths) > 50
        assert all(text <= ch75 + 1 for text, ch75, _ in widths)
        # the long paragraphs fill the column: not a narrow strip
        assert max(text / ch75 for text, ch75, _ in widths) > 0.95
        toc = page.evaluate(
            "(() => { const r = document.querySelector('nav.toc').getBoundingClientRect();"
            " return [getComputedStyle(document.querySelector('nav.toc')).position, r.left, r.right]; })()"
        )
        assert toc[0] == "fixed" and toc[1] == 0
        assert min(left for _, _, left in widths) >= toc[2] + 16  # the column starts right of the contents
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        # a click in the contents goes to its chapter
        page.locator("nav.toc a[href='#glance']").click()
        assert page.evaluate("Math.abs(document.getElementById('glance').getBoundingClientRect().top)") < 40
        page.goto(page.url.split("#")[0])
        page.screenshot(path=screens / "comparison-1280.png")
    with Opened(browser, html_report(shared_report, "--board"), 1280) as opened:
        opened.page.screenshot(path=screens / "board-1280.png")


@pytest.mark.parametrize("kind", KINDS)
def test_nothing_scrolls_the_page_sideways_at_390_pixels(browser, shared_report, screens, kind):
    with Opened(browser, html_report(shared_report, *KINDS[kind]), 390) as opened:
        page = opened.page
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert page.evaluate("document.body.scrollWidth") <= 390
        # the widest table scrolls inside its own box
        table = "table.glance" if kind == "comparison" else "table.options"
        box = page.evaluate(
            f"(() => {{ const t = document.querySelector('{table}'); const r = t.getBoundingClientRect();"
            " return [t.scrollWidth, t.clientWidth, r.right, getComputedStyle(t).overflowX]; })()"
        )
        assert box[0] > box[1] and box[2] <= 390 and box[3] == "auto", box
        page.screenshot(path=screens / f"{kind}-390.png")
        page.locator(table).scroll_into_view_if_needed()
        page.screenshot(path=screens / f"{kind}-390-table.png")


def pages_of(pdf: bytes | Path) -> int:
    return len(pypdf.PdfReader(io.BytesIO(pdf) if isinstance(pdf, bytes) else pdf).pages)


def test_the_memo_prints_from_the_browser_on_its_two_pages(browser, shared_report):
    procure_pdf = shared_report(ROOT, "--board", fmt="pdf", as_of=AS_OF)
    with Opened(browser, html_report(shared_report, "--board"), 1280) as opened:
        printed = opened.page.pdf(prefer_css_page_size=True)
    assert pages_of(printed) == pages_of(procure_pdf) == 2


def test_the_comparison_prints_from_the_browser_on_about_procures_pages(browser, shared_report, monkeypatch):
    basic = Path(__file__).parent / "data" / "basic"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    procure_pdf = shared_report(basic, fmt="pdf", as_of=AS_OF)
    page_file = shared_report(basic, fmt="html", as_of=AS_OF)
    with Opened(browser, page_file, 1280) as opened:
        printed = opened.page.pdf(prefer_css_page_size=True)
    assert abs(pages_of(printed) - pages_of(procure_pdf)) <= 2, (pages_of(printed), pages_of(procure_pdf))


def test_the_examples_comparison_prints_from_the_browser_on_about_procures_pages(browser, shared_report):
    """The example's 12 offers, laid out whole (long: its PDF takes half a minute of CPU)."""
    procure_pdf = shared_report(ROOT, fmt="pdf", as_of=AS_OF)
    with Opened(browser, html_report(shared_report), 1280) as opened:
        printed = opened.page.pdf(prefer_css_page_size=True)
    assert abs(pages_of(printed) - pages_of(procure_pdf)) <= 2, (pages_of(printed), pages_of(procure_pdf))


def number(text: str) -> float | None:
    """A cell's figure as the reader takes it: '1,234.5' -> 1234.5, '738 k' -> 738000; a dash or words -> None."""
    found = re.match(r"(-?[\d,]+(?:\.\d+)?)\s*([kM]\b)?", text.strip())
    if not found:
        return None
    return float(found.group(1).replace(",", "")) * {"k": 1e3, "M": 1e6, None: 1}[found.group(2)]


def rows(page, table: str) -> list[tuple[list[str], str | None]]:
    """The table's offers in the order shown: each row's cells, and the text of the note row under it, if any."""
    found = page.evaluate(
        f"""[...document.querySelector('{table}').tBodies[0].rows].map(r =>
              [r.matches('.reason, .proscons'), [...r.cells].map(c => c.innerText.trim())])"""
    )
    grouped: list[tuple[list[str], str | None]] = []
    for is_note, cells in found:
        if is_note:
            grouped[-1] = (grouped[-1][0], " ".join(cells).strip())
        else:
            grouped.append((cells, None))
    return grouped


SORTS = {  # the table, the column clicked for words and its index, the column clicked for figures and its index
    "comparison": ("table.glance", "Offer", 1, "USD per 1,000 tasks, today", 8),
    "board": ("table.options", "Vendor", 1, "Commit\u00adment as single offer", 5),
}


@pytest.mark.parametrize("kind", KINDS)
def test_the_offers_table_sorts_by_a_column_with_each_note_under_its_offer(browser, shared_report, kind):
    table, words, w, figures, f = SORTS[kind]
    with Opened(browser, html_report(shared_report, *KINDS[kind]), 1280) as opened:
        page = opened.page
        before = rows(page, table)
        notes = {cells[w]: note for cells, note in before}
        assert len(before) >= 3 and any(notes.values())

        page.locator(f"{table} thead th", has_text=words).first.click()
        after = rows(page, table)
        names = [cells[w] for cells, _ in after]
        assert names == sorted(names, key=str.casefold)
        assert {cells[w]: note for cells, note in after} == notes  # every note still under its own offer
        assert page.locator(f"{table} thead th", has_text=words).first.get_attribute("aria-sort") == "ascending"

        page.locator(f"{table} thead th", has_text=words).first.click()  # a second click: the other way
        assert [cells[w] for cells, _ in rows(page, table)] == names[::-1]

        page.locator(f"{table} thead th", has_text=figures).first.click()
        after = rows(page, table)
        values = [number(cells[f]) for cells, _ in after]
        given = [v for v in values if v is not None]
        assert len(given) >= 3 and given == sorted(given)
        assert values == given + [None] * (len(values) - len(given))  # dashes last
        assert {cells[w]: note for cells, note in after} == notes
        # the keyboard sorts as the mouse does
        page.locator(f"{table} thead th", has_text=figures).first.press("Enter")
        again = [v for v in (number(cells[f]) for cells, _ in rows(page, table)) if v is not None]
        assert again == sorted(given, reverse=True)


@pytest.mark.parametrize("kind", KINDS)
def test_the_page_reads_whole_without_script(browser, shared_report, kind):
    path = html_report(shared_report, *KINDS[kind])
    with Opened(browser, path, 1280) as opened:
        with_script = opened.page.evaluate("document.body.innerText")
    with Opened(browser, path, 1280, script=False) as opened:
        assert opened.page.evaluate("document.body.innerText") == with_script
        assert opened.page.locator("th[aria-sort]").count() == 0  # the script did not run, and nothing is missing


# Every chart of the example's comparison by the name a reader should hear (written here, not read from the code).
CHART_NAMES = {
    "The cost curve",
    "The top offers side by side",
    "What a GPU-hour costs in full",
    "Throughput at the required speed",
    "Who does which operating job",
    "Cumulative cost over the horizon",
    "Range of cost in the simulation",
    "What moves the cost most",
    "Cost position over time",
    "The rental price index against its benchmarks",
    "The hedge under index moves",
}  # and the plan's efficient frontier, drawn with --frontier only


def test_every_chart_has_a_name_and_a_one_sentence_description(browser, shared_report):
    with Opened(browser, html_report(shared_report), 1280) as opened:
        page = opened.page
        charts = page.locator("figure svg")
        count = charts.count()
        assert count >= 12
        named = []
        for i in range(count):
            chart = charts.nth(i)
            snapshot = chart.aria_snapshot()  # what the accessibility tree holds for it
            found = re.match(r"- '?img \"([^\"]+)\"", snapshot)
            assert found, snapshot
            named.append(found.group(1))
            description = chart.evaluate("e => document.getElementById(e.getAttribute('aria-describedby')).textContent")
            assert len(description) > 40 and description.endswith(".") and ". " not in description, description
        plain = {name.split(": ")[0] for name in named}
        scorecards = [name for name in named if name.startswith("Delivered against promised: ")]
        assert plain - {"Delivered against promised"} == CHART_NAMES
        assert len(scorecards) >= 1 and all(len(name) > len("Delivered against promised: ") for name in scorecards)
