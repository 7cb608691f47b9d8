"""The comparison and board reports: content, safety and reproducibility, read back from the PDF."""

import functools
import json
import re

import pypdf
import pytest
from clihelp import AS_OF, assert_error, run, run_on_terminal

pytestmark = pytest.mark.slow  # PDF rendering, subprocesses or many generated examples

EPOCH = "1764400000"  # 2025-11-29 07:06:40 UTC


def pdf_text(path):
    """The PDF's reader and its pages' text joined."""
    reader, pages = _read_pdf(str(path), path.stat().st_mtime_ns)
    return reader, "\n".join(pages)


def page_texts(path):
    """Each page's text, as pypdf extracts it."""
    return _read_pdf(str(path), path.stat().st_mtime_ns)[1]


@functools.cache
def _read_pdf(path, modified):
    """Read and extracted once per file: the module's tests read the same two PDFs again and again (extracting a
    15-page report's text takes seconds)."""
    reader = pypdf.PdfReader(path)
    return reader, [page.extract_text() for page in reader.pages]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, data_dir, shared_report):
    """The basic workspace's comparison and board PDFs (the run's, tests/conftest.py), and its JSON Evaluation."""
    out = tmp_path_factory.mktemp("reports")
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
    ws = data_dir / "basic"
    for name, options in (("cmp.pdf", ()), ("board.pdf", ("--board",))):
        (out / name).symlink_to(shared_report(ws, *options, fmt="pdf", as_of=AS_OF))
    evaluation = json.loads(run("compare", "-w", ws, "--as-of", AS_OF, "-f", "json").stdout)
    mp.undo()
    return out, evaluation


def test_comparison_pdf_has_every_section_and_offer(rendered):
    out, evaluation = rendered
    reader, text = pdf_text(out / "cmp.pdf")
    # Cover, contents, summary, glance, charts (2 pages), robustness, grades, operator ratings, hedging,
    # one page per offer (3), appendix (2 pages).
    assert 13 <= len(reader.pages) <= 19
    for heading in (
        "Contents",
        "Executive summary",
        "Offers at a glance",
        "Cost curve and cost structure",
        "How robust is the ranking",
        "Grades",
        "Operator ratings",
        "Hedging the rental price",
        "Offer details",
        "Appendix: assumptions and method",
    ):
        assert heading in text
    for offer in evaluation["offers"]:
        assert offer["vendor"] in text
    assert reader.metadata.title == "B200 offer comparison: cost per successful task"
    assert reader.trailer["/Root"]["/Lang"] == "en"


def test_pdf_shows_the_same_cost_per_task_as_the_json(rendered):
    out, evaluation = rendered
    _, text = pdf_text(out / "cmp.pdf")
    for offer in evaluation["offers"]:
        cost = offer["metrics"]["cost_per_task"]
        if cost is not None:  # printed per 1,000 successful tasks
            assert f"{cost * 1000:,.2f}" in text, offer["id"]


def test_table_of_contents_has_page_numbers(rendered):
    out, _ = rendered
    reader, _ = pdf_text(out / "cmp.pdf")
    contents = page_texts(out / "cmp.pdf")[1]
    numbers = [int(n) for n in re.findall(r"(\d+)\s*$", contents, flags=re.M)]
    assert numbers == sorted(numbers) and numbers[0] >= 3 and numbers[-1] <= len(reader.pages)


def test_appendix_lists_input_files_with_sha256(rendered):
    out, evaluation = rendered
    last = " ".join(page_texts(out / "cmp.pdf")[-2:]).replace("\n", " ")
    assert "S" in last  # headings in bold come out letter-spaced; the hashes below are what matters
    for item in evaluation["inputs"]:
        assert item["path"] in last and item["sha256"] in last


def test_board_report_is_two_pages(rendered):
    out, evaluation = rendered
    reader, text = pdf_text(out / "board.pdf")
    assert len(reader.pages) == 2
    leader = evaluation["offers"][0]
    assert f"with {leader['vendor']}" in " ".join(text.split())
    assert "Risk register" in text and "Price hedge" in text


def test_same_inputs_and_epoch_give_identical_bytes(rendered, data_dir, tmp_path, monkeypatch):
    out, _ = rendered
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    again = tmp_path / "again.pdf"
    assert run("report", "--board", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", again).exit_code == 0
    assert again.read_bytes() == (out / "board.pdf").read_bytes()


def test_rank_by_horizon_ranks_both_reports_by_the_horizon_figure(data_dir, tmp_path):
    ws = data_dir / "cashflow_basic"  # horizon.months: 30
    evaluation = json.loads(
        run("compare", "-w", ws, "--as-of", AS_OF, "--horizon", "30", "--rank-by", "horizon", "-f", "json").stdout
    )
    leader = evaluation["offers"][0]
    for board in ((), ("--board",)):
        target = tmp_path / f"r{len(board)}.html"
        assert (
            run(
                "report", *board, "--rank-by", "horizon", "-f", "html", "-w", ws, "--as-of", AS_OF, "--out", target
            ).exit_code
            == 0
        )
        html = target.read_text()
        assert leader["vendor"] in html and f"{leader['metrics']['horizon_cost_per_task'] * 1000:,.2f}" in html
    comparison = (tmp_path / "r0.html").read_text()
    assert (
        f"{leader['metrics']['horizon_cost_per_task'] * 1000:,.2f} USD</strong> per 1,000 successful tasks over 30 "
        "months" in comparison
    )
    assert "Ranked by the cost over the horizon" in comparison


def test_rank_by_horizon_needs_a_horizon(data_dir, tmp_path):
    target = tmp_path / "x.html"
    assert_error(
        run(
            "report", "--rank-by", "horizon", "-f", "html", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", target
        ),
        "--rank-by",
        "horizon.months in procure.yaml",
    )
    assert not target.exists()


def test_html_format(data_dir, tmp_path):
    target = tmp_path / "sub" / "cmp.html"
    result = run("report", "-f", "html", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", target)
    assert result.exit_code == 0
    html = target.read_text()
    assert html.startswith("<!DOCTYPE html>") and '<html lang="en">' in html
    assert "<svg" in html and "Alpha Cloud" in html


def test_default_output_name(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("report", "--board", "-f", "html", "-w", data_dir / "basic", "--as-of", AS_OF)
    assert result.exit_code == 0 and (tmp_path / "board.html").is_file()


def test_bad_workspace_writes_nothing(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(offer.read_text().replace("gpu_hour: 4.00", "gpu_hour: -3"))
    target = tmp_path / "never.pdf"
    result = run("report", "-w", ws, "--out", target)
    assert result.exit_code == 2 and not target.exists()
    assert "pricing.gpu_hour: must be greater than 0" in result.stderr


HOSTILE_VENDOR = '<img src="file:///etc/passwd"> Evil & Co'
HOSTILE_NOTES = "<script>alert(1)</script> {{ 7*7 }} <link rel=stylesheet href=http://example.invalid/x.css>"


@pytest.fixture
def hostile(workspace_copy):
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    text = offer.read_text().replace("vendor: Alpha Cloud", f"vendor: '{HOSTILE_VENDOR}'")
    offer.write_text(text + f"notes: '{HOSTILE_NOTES}'\n")
    return ws


def test_vendor_markup_prints_as_text_in_html(hostile, tmp_path):
    target = tmp_path / "x.html"
    assert run("report", "-f", "html", "-w", hostile, "--as-of", AS_OF, "--out", target).exit_code == 0
    html = target.read_text()
    assert '<img src="file:///etc/passwd">' not in html and "<script>alert" not in html
    assert "&lt;img src=&#34;file:///etc/passwd&#34;&gt; Evil &amp; Co" in html
    assert "{{ 7*7 }}" in html  # printed literally, never evaluated


def test_vendor_markup_is_never_fetched_in_pdf(hostile, tmp_path, monkeypatch):
    from weasyprint.urls import URLFetcher

    fetched = []
    original = URLFetcher.fetch

    def spy(self, url, headers=None):
        fetched.append(url)
        return original(self, url, headers)

    monkeypatch.setattr(URLFetcher, "fetch", spy)
    target = tmp_path / "x.pdf"
    assert run("report", "-w", hostile, "--as-of", AS_OF, "--out", target).exit_code == 0
    assert not any("passwd" in url or "example.invalid" in url for url in fetched)
    _, text = pdf_text(target)
    assert "file:///etc/passwd" in text and "{{ 7*7 }}" in text and "<script>" in text


# --- progress: stages on a terminal, nothing when piped -------------------------------------------


def test_report_shows_its_stages_on_a_terminal(data_dir, tmp_path):
    code, _, err = run_on_terminal(
        ["report", "--board", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", tmp_path / "board.pdf"], timeout=300
    )
    assert code == 0
    for stage in (b"loading the workspace", b"drawing charts", b"laying out pages", b"pages"):
        assert stage in err, stage
    assert re.search(rb"writing \d+ pages", err)


def test_report_shows_no_progress_when_piped(data_dir, tmp_path):
    out = tmp_path / "board.pdf"
    result = run("report", "--board", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", out)
    assert result.exit_code == 0
    assert result.stderr == f"wrote {out}\n"


def test_board_paper_is_a_two_page_memo_in_plain_words(shared_report):
    """The example's board paper: two pages, the decision first, money in k/M USD, no jargon, no ids."""
    from pathlib import Path

    root = Path(__file__).parent.parent
    out = shared_report(root, "--board", fmt="pdf", as_of=AS_OF)
    reader, text = pdf_text(out)
    flat = " ".join(text.split())
    assert len(reader.pages) == 2
    first, second = (" ".join(page.split()) for page in page_texts(out))
    assert "Approve the purchase plan" in first  # the example has demand: the plan is the ask
    # The plan heads the options above the single offers, and page 2 speaks of the plan: its demand cases, its
    # vendors in the register, and a hedge question about its on-demand hours.
    options = first[first.index("The options") :]
    assert options.index("Recommended portfolio") < options.index("Keel Systems")
    for part in (
        "Demand −30%",
        "Demand as planned",
        "Market prices +20%",
        "Concentration of committed spend",
        "Keel Systems fails during its term",
        "against the plan's GPU-hours at market prices",
    ):
        assert part in second, part
    for part in (
        "What we ask",
        "What it costs",
        "Decide by",
        "The options",
        "Scenarios",
        "Risk register",
        "Price hedge",
        "Yes / No",
    ):
        assert part in flat, part
    for jargon in (
        "h*",
        "R²",
        "R2 ",
        "sigma",
        "P10",
        "P90",
        "tok/s",
        "index-linked",
        "basis",
        "ladder",
        "pay-as-used",
        "interpolation",
    ):
        assert jargon not in flat, jargon
    evaluation = json.loads(run("compare", "-w", root, "--as-of", AS_OF, "-f", "json").stdout)
    for offer in evaluation["offers"]:
        assert offer["id"] not in flat, offer["id"]
