"""Report plumbing: where templates come from, what WeasyPrint may fetch, deterministic charts."""

import base64
import fnmatch
import re
import tomllib
from datetime import date
from pathlib import Path

import pytest

from procure.analysis.evaluate import evaluate
from procure.io.workspace import load_workspace
from procure.render import charts
from procure.render.documents import _restricted_fetcher, render_html, report_date, templates_dir

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def evaluation(data_dir):
    return evaluate(load_workspace(data_dir / "basic"), date(2026, 11, 29))


def test_templates_found_from_the_checkout():
    assert templates_dir() == ROOT / "templates"


def test_every_template_file_is_packaged_in_the_wheel():
    """The wheel carries templates/ as procure/templates: every file must match a package-data pattern."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["procure.templates"] == "templates"
    patterns = config["package-data"]
    for path in (ROOT / "templates").rglob("*"):
        if path.is_file():
            rel = path.relative_to(ROOT / "templates")
            package = ".".join(["procure", "templates", *rel.parts[:-1]])
            assert package in config["packages"], package
            assert any(fnmatch.fnmatch(rel.name, p) for p in patterns.get(package, [])), rel


def test_fetcher_serves_only_the_templates_folder(tmp_path):
    folder = templates_dir()
    fetcher = _restricted_fetcher(folder)
    font = next((folder / "fonts").glob("*.woff"))
    response = fetcher.fetch(font.as_uri())
    assert response is not None
    # a font carried in the page (report --format html) is served from the URI itself
    carried = fetcher.fetch("data:font/woff;base64," + base64.b64encode(font.read_bytes()).decode("ascii"))
    assert carried.read() == font.read_bytes()
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    for url in (
        outside.as_uri(),
        "file:///etc/passwd",
        (folder / ".." / "README.md").as_uri(),
        "http://example.invalid/x.css",
        "data:text/plain,hi",
        "data:text/css,@import url(http://example.invalid/x.css)",
    ):
        with pytest.raises(ValueError, match="blocked"):
            fetcher.fetch(url)


def test_report_date_honours_source_date_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert report_date().date() == date(1970, 1, 1)


def test_charts_are_deterministic_svg_with_text_in_the_body_font(evaluation):
    first = charts.cost_curve(evaluation, highlight="bravo")
    assert first == charts.cost_curve.__wrapped__(evaluation, highlight="bravo")  # drawn again, not the kept one
    assert first.startswith("<svg") and "<image" not in first
    # Labels are text in the report's typeface, not glyph outlines in another one.
    assert "<text" in first and "font-family: 'Source Sans 3'" in first and "glyph" not in first
    assert "dc:date" not in first.lower()
    matrix = charts.responsibility_matrix(evaluation)
    assert "<image" not in matrix  # vector cells, nothing for WeasyPrint to fetch


def test_a_chart_is_drawn_once_for_the_same_inputs_and_again_when_they_differ(evaluation, monkeypatch, data_dir):
    """Charts are kept per process under their inputs (charts.memoised): the same evaluation draws nothing the second
    time, nor does the same workspace evaluated again, and any change to what the chart is given draws it again, with
    the bytes a fresh drawing gives."""
    drawn = []
    to_svg = charts.to_svg
    monkeypatch.setattr(charts, "to_svg", lambda fig, name: drawn.append(name) or to_svg(fig, name))
    monkeypatch.setattr(charts, "_drawn", type(charts._drawn)())
    first = charts.cost_breakdown(evaluation)
    assert charts.cost_breakdown(evaluation) == first
    assert charts.cost_breakdown(evaluate(load_workspace(data_dir / "basic"), date(2026, 11, 29))) == first
    assert len(drawn) == 1
    dearer = evaluation.model_copy(deep=True)
    dearer.offers[0].metrics["rent"] = dearer.offers[0].metrics["rent"] * 2
    second = charts.cost_breakdown(dearer)
    assert len(drawn) == 2 and second != first
    assert second == charts.cost_breakdown.__wrapped__(dearer)


def test_html_is_self_contained(evaluation):
    html = render_html(evaluation, "comparison")
    own = (templates_dir() / "sort.js").read_text(encoding="utf-8")
    assert "<link" not in html and html.count("<script") == 1 and f"<script>{own}</script>" in html  # its own only
    assert html.count("<svg") == 4
    assert 'href="#offer-alpha"' in html and 'id="offer-alpha"' in html


def pathological_copy(plain: Path) -> Path:
    """A copy of a workspace whose offer bravo has the longest unbroken name a file may give (256 characters; a longer
    one is refused at intake) and a 2,000-character unbroken note (also used by benchmarks/bench_report.py
    --pathological)."""
    import shutil

    hostile = plain.parent / f"{plain.name}-pathological"
    shutil.copytree(plain, hostile)
    path = hostile / "offers" / "bravo.yaml"
    text = path.read_text(encoding="utf-8").replace("vendor: Bravo Metal", "vendor: bravo" + "W" * 251, 1)
    path.write_text(text + "\nnotes: " + "N" * 2000 + "\n", encoding="utf-8")
    return hostile


@pytest.mark.slow  # two PDFs laid out
def test_pathological_vendor_text_keeps_the_layout(workspace_copy):
    """An offer with a 256-character unbroken vendor name and a 2,000-character unbroken note: its
    offer pages keep their count; tables and headings cut the name with an ellipsis, the appendix
    prints name and note whole. (What it costs in time is measured in benchmarks/bench_report.py
    --pathological, against the same report without it.)"""
    import io

    import pypdf

    from procure.analysis.report import gather_extras
    from procure.render.assemble import comparison_pdf

    plain = workspace_copy("basic")
    hostile = pathological_copy(plain)
    name, note = "bravo" + "W" * 251, "N" * 2000

    def prepared(root):
        ws = load_workspace(root)
        ev = evaluate(ws, date(2026, 11, 29))
        return ev, gather_extras(ws, ev)

    cases = {"plain": prepared(plain), "hostile": prepared(hostile)}
    pdfs = {key: comparison_pdf(ev, extras, workers=1) for key, (ev, extras) in cases.items()}
    pages = {key: pypdf.PdfReader(io.BytesIO(pdf)).pages for key, pdf in pdfs.items()}
    # The offer pages keep their count; only the appendix grows, by the name and the note printed whole.
    assert len(pages["plain"]) <= len(pages["hostile"]) <= len(pages["plain"]) + 2
    offer_pages = {
        key: sum(1 for p in found if "Offer: " in (p.extract_text() or "").replace("\x00", ""))
        for key, found in pages.items()
    }
    assert (
        offer_pages["hostile"] == offer_pages["plain"] >= 2
    )  # the running header names the offer (the first says "Offer details")
    assert all(float(p.mediabox.width) == pytest.approx(595.3, abs=1) for p in pages["hostile"])  # A4 kept
    html = render_html(*cases["hostile"][:1], "comparison", extras=cases["hostile"][1]).replace("<wbr>", "")
    assert name[:59] + "…" in html  # cut in tables and headings
    assert name in html and note in html  # whole in the appendix


def test_the_throughput_chart_draws_the_interpolation_the_costs_use():
    from procure.model.performance import frontier_line

    points = [(50, 420), (100, 300), (150, 120)]
    for method, expected in (("step", 300.0), ("linear", 360.0), ("log", (420 * 300) ** 0.5)):
        # halfway between 50 and 100 tok/s/user: step takes the faster point's 300; linear the midpoint
        # (420 + 300) / 2 = 360; log the geometric mean sqrt(420 x 300) = 354.96
        xs, ys = frontier_line(points, method)
        at = dict(zip((round(x, 9) for x in xs), ys))
        assert at[75.0] == pytest.approx(expected), method
        assert at[50.0] == 420 and at[100.0] == 300 and at[150.0] == 120  # through every measured point


def test_operator_chapter_without_a_checklist_says_so_instead_of_an_empty_table(data_dir):
    def chapter(ev) -> str:
        html = render_html(ev, "comparison")
        start = html.index('id="operators"')
        return html[start : html.index("</section>", start)]

    plain = chapter(
        evaluate(load_workspace(data_dir / "real_offers"), date(2026, 11, 30))
    )  # public offers: no checklist answered
    assert "<table" not in plain and "No offer here answers the operator checklist" in plain and "Not rated" in plain
    rated = chapter(evaluate(load_workspace(data_dir / "rated"), date(2026, 11, 29)))
    assert "<table" in rated and "No offer here answers" not in rated


def _rotated_lines_overlap(svg: str) -> list[tuple[str, str]]:
    """Pairs of slanted label lines in a chart's SVG whose boxes overlap, measured independently of the
    chart code: each line's box is its DejaVu Sans width (wider than the report font) by its ascent and
    descent, set along its 35-degree baseline from the start point the SVG gives."""
    import math
    import re

    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    measure = TextToPath()
    along = (math.cos(math.radians(35)), -math.sin(math.radians(35)))  # rotate(-35) in SVG's downward y
    across = (math.sin(math.radians(35)), math.cos(math.radians(35)))
    boxes = []
    for size, x, y, text in re.findall(
        r'font-size: ([\d.]+)px[^"]*" transform="translate\(([-\d.]+) ([-\d.]+)\) rotate\(-35\)">([^<]*)</text>', svg
    ):
        size, x, y = float(size), float(x), float(y)
        width, _, _ = measure.get_text_width_height_descent(
            text, FontProperties(family="DejaVu Sans", size=size), ismath=False
        )
        u, v = x * along[0] + y * along[1], x * across[0] + y * across[1]
        boxes.append((text, (u, u + width), (v - 0.72 * size, v + 0.2 * size)))
    return [
        (a[0], b[0])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if min(a[1][1], b[1][1]) - max(a[1][0], b[1][0]) > 0.5 and min(a[2][1], b[2][1]) - max(a[2][0], b[2][0]) > 0.5
    ]


@pytest.mark.parametrize("workspace", ["real_offers", "example", "synthetic50"])
def test_cost_curve_names_never_overlap(workspace, data_dir, tmp_path):
    """Narrow bars (few GPUs) put names close: a crowded name loses '(not acceptable)', then becomes a
    number with a key; the recommendation is always named."""
    import sys

    if workspace == "synthetic50":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from synthetic import make_workspace

        root = make_workspace(tmp_path / "synthetic50", 50)
    else:
        root = ROOT if workspace == "example" else data_dir / workspace
    ev = evaluate(load_workspace(root), date(2026, 11, 30))
    svg = charts.cost_curve(ev, highlight=ev.summary.recommended)
    assert _rotated_lines_overlap(svg) == []
    leader = next(o for o in ev.offers if o.id == ev.summary.recommended)
    assert leader.vendor.split()[0] in svg  # named, not numbered
    if "Key: " in svg:  # every number under a bar is explained
        key = re.search(r">Key: ([^<]*)<", svg.replace("\n", " "))
        assert key and all(f"{n} = " in key.group(1) for n in range(1, key.group(1).count(" = ") + 1))


def test_the_overlap_check_finds_overlapping_names():
    # Two labels anchored 5 points apart on the same slant overlap; 60 points apart they do not.
    line = (
        '<text style="font-size: 6.5px; font-family: x" transform="translate({x} 200) rotate(-35)">Fireworks AI</text>'
    )
    assert _rotated_lines_overlap(line.format(x=10) + line.format(x=15))
    assert not _rotated_lines_overlap(line.format(x=10) + line.format(x=70))


# --- the HTML report's fonts, carried inside it (procure.render.webfonts) ----------------------------------------


def _carried_faces(page: str) -> dict[tuple[str, str], set[int]]:
    """Each face a page carries: (weight, style) and unicode-range start -> the code points its font maps."""
    import io

    from fontTools.ttLib import TTFont

    faces = {}
    for face in re.findall(r"@font-face\s*\{[^}]*\}", page):
        data = re.search(r"url\(data:font/(woff2?);base64,([^)]+)\)", face)
        assert data, face[:200]
        key = (re.search(r"font-weight: (\d+)", face).group(1), re.search(r"font-style: (\w+)", face).group(1))
        start = re.search(r"unicode-range: U\+([0-9A-F]+)", face).group(1)
        faces[(*key, start)] = set(TTFont(io.BytesIO(base64.b64decode(data.group(2)))).getBestCmap())
    return faces


def test_the_html_carries_only_the_faces_and_characters_it_uses():
    from fontTools.ttLib import TTFont

    from procure.render.webfonts import self_contained

    fonts_css = (templates_dir() / "fonts.css").read_text(encoding="utf-8")
    page = f"<html><head><style>{fonts_css}</style></head><body><p>Ab &amp; 9</p></body></html>"
    carried = _carried_faces(self_contained(page))
    # the four faces of the Latin range (U+0000-00FF first), none of Latin Extended: no character of the page is there
    assert set(carried) == {("400", "normal", "0000"), ("400", "italic", "0000"), ("600", "normal", "0000"),
                            ("700", "normal", "0000")}  # fmt: skip
    whole = set(TTFont(templates_dir() / "fonts" / "source-sans-3-latin-400-normal.woff").getBestCmap())
    # the page's characters, as a reader of its source sees them (its markup and CSS too: generated content is there),
    # and what is drawn without being spelt: list bullets (disc, circle, square), list numbers, a broken word's hyphen
    used = {ord(c) for c in page.replace("&amp;", "&") + "\u2022\u25e6\u25aa0123456789.-\u2010"}
    assert carried[("400", "normal", "0000")] == used & whole
    regular = carried[("400", "normal", "0000")]
    assert {ord("&"), 0x2022} <= regular and ord("Z") not in regular

    polish = page.replace("Ab", "Łódź")  # Ł and ź are Latin Extended, ó Latin-1
    carried = _carried_faces(self_contained(polish))
    assert {0x141, 0x17A} <= carried[("400", "normal", "0100")] and ord("ó") in carried[("400", "normal", "0000")]


@pytest.mark.slow  # the memo laid out from its HTML
def test_weasyprint_on_the_written_html_gives_procures_pdf(shared_report):
    """The page a buyer shares is the document procure prints: WeasyPrint on the HTML `--format html` writes (its fonts
    carried inside it) gives the memo's pages, word for word."""
    import io

    import pypdf

    from procure.render.documents import html_to_pdf

    root = Path(__file__).parent.parent
    page = shared_report(root, "--board", fmt="html", as_of="2026-11-29").read_text(encoding="utf-8")
    assert "url(fonts/" not in page and page.count("url(data:font/") >= 3
    printed = pypdf.PdfReader(shared_report(root, "--board", fmt="pdf", as_of="2026-11-29"))
    again = pypdf.PdfReader(io.BytesIO(html_to_pdf(page)))
    assert [p.extract_text() for p in again.pages] == [p.extract_text() for p in printed.pages]
    assert len(again.pages) == 2
