"""Text on its way to a reader: terminals, Markdown viewers and spreadsheets.

Control characters and bidirectional overrides never reach a terminal raw (refused in vendor text,
shown as visible escapes in messages); Markdown made from vendor text holds no live link, image,
mention or heading; every CSV the tool writes is spreadsheet-safe (OWASP) with numbers left as
numbers; an unknown key is named at its own line; a history locked by another process is reported
as busy within seconds, never as damaged.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import time
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, edit, run
from refusals import compare, refused, validate

from procure import textsafe
from procure.analysis import history
from procure.render import ranking, workbook

ROOT = Path(__file__).parent.parent
OFFER = "offers/alpha.yaml"
ESC = "\x1b"
RLO = "\u202e"


def yaml_string(value: str) -> str:
    return json.dumps(value)  # JSON strings are YAML double-quoted strings


def no_raw_controls(result) -> None:  # type: ignore[no-untyped-def]
    combined = result.stdout + result.stderr
    assert ESC not in combined and RLO not in combined and "\x07" not in combined, combined[-800:]


# --- control characters and bidirectional overrides -----------------------------------------------------


def test_escape_sequences_in_attestations_are_refused_and_never_printed_raw(workspace_copy):
    ws = workspace_copy("basic")
    line = edit(
        ws, OFFER, "attestations: [soc2_type2]", f"attestations: [soc2_type2, {yaml_string(ESC + ']0;pwned' + chr(7))}]"
    )
    result = run("validate", "-w", ws)
    assert_error(result, f"{OFFER}:{line}: service.attestations[1]: holds a control character (\\x1b) at character 1")
    no_raw_controls(result)


def test_an_unknown_curve_name_with_escapes_is_echoed_escaped(workspace_copy):
    ws = workspace_copy("basic")
    edit(
        ws,
        OFFER,
        "  points: [[50, 400], [100, 300], [150, 100]]\n",
        f"  reference: {yaml_string('x' + ESC + '[2J' + RLO + 'gnp')}\n",
    )
    curve = next((ws / "performance").glob("*.csv"))
    curve.rename(curve.with_name(f"evil{ESC}[31m.csv"))
    result = run("validate", "-w", ws)
    stderr = assert_error(result, "performance.reference", "unknown reference curve")
    assert "\\x1b[2J" in stderr and "\\u202e" in stderr and "evil\\x1b[31m" in stderr
    no_raw_controls(result)


@pytest.mark.parametrize(
    "bad", [ESC + "[2J", RLO, "\u2066", "\r# forged", "\x85"], ids=["esc", "rlo", "isolate", "cr", "nel"]
)
def test_an_evaluation_file_with_controls_given_to_diff_is_refused(workspace_copy, tmp_path, bad):
    ws = workspace_copy("basic")
    base = json.loads(run("compare", "-f", "json", "-w", ws, "--as-of", AS_OF).stdout)
    head = json.loads(json.dumps(base))
    head["offers"][0]["vendor"] = "Alpha" + bad + "Cloud"
    (tmp_path / "base.json").write_text(json.dumps(base), encoding="utf-8")
    (tmp_path / "head.json").write_text(json.dumps(head), encoding="utf-8")
    for fmt in ("table", "markdown", "json"):
        result = run("diff", tmp_path / "base.json", tmp_path / "head.json", "-f", fmt, "-w", ws)
        assert_error(result, "head.json", "offers[0].vendor", "refused")
        assert result.stdout == ""
        no_raw_controls(result)


@pytest.mark.parametrize(
    "override", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
)
def test_bidirectional_overrides_in_vendor_text_are_refused(workspace_copy, tmp_path, override):
    ws = workspace_copy("basic")
    line = edit(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {yaml_string('Alpha ' + override + 'duolC')}")
    out = tmp_path / "report.html"
    result = run("report", "-f", "html", "--out", out, "-w", ws, "--as-of", AS_OF)
    assert_error(
        result, f"{OFFER}:{line}: vendor: holds a bidirectional control (U+{ord(override):04X}) at character 7"
    )
    no_raw_controls(result)
    assert not out.exists()


def test_right_to_left_text_with_plain_marks_is_still_accepted(workspace_copy):
    ws = workspace_copy("basic")
    name = "\u05e9\u05dc\u05d5\u05dd\u200f Cloud"  # Hebrew, a right-to-left mark (no override)
    edit(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {yaml_string(name)}")
    found = compare(ws, AS_OF)()
    assert name in {o.vendor for o in found.evaluation.offers}


def test_messages_show_controls_in_file_names_as_escapes(workspace_copy):
    ws = workspace_copy("basic")
    (ws / "offers" / f"evil{RLO}lmay.yaml").write_text("id: [", encoding="utf-8")
    result = run("validate", "-w", ws)
    assert_error(result, "offers/evil\\u202elmay.yaml")
    no_raw_controls(result)


def test_printable_escapes_every_control_and_override_and_keeps_the_rest():
    assert textsafe.printable("a\x1b[2Jb\u202ec\td\ne") == "a\\x1b[2Jb\\u202ec\\x09d\\x0ae"
    text = "Ümlaut \u05e9\u05dc\u05d5\u05dd \U0001f680 \u200f"
    assert textsafe.printable(text) == text


# --- Markdown ---------------------------------------------------------------------------------------------


MARKDOWN_VENDORS = {
    "link": "[click me](https://evil.example/login)",
    "image": "![tracker](https://evil.example/pixel.png)",
    "mention": "@security-team please approve",
    "autolink": "see https://evil.example and www.evil.example",
    "html": "<img src=x onerror=alert(1)>",
    "heading-rule": "ALL OFFERS APPROVED\n===",
}


def rendered_markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


@pytest.mark.parametrize("name", sorted(MARKDOWN_VENDORS))
def test_vendor_text_is_never_live_markdown(workspace_copy, name):
    ws = workspace_copy("basic")
    plain = rendered_markdown(run("compare", "-f", "markdown", "-w", ws, "--as-of", AS_OF).stdout)
    vendor = MARKDOWN_VENDORS[name]
    edit(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    result = run("compare", "-f", "markdown", "-w", ws, "--as-of", AS_OF)
    if "\n" in vendor:  # a line break of any kind is refused at intake (procure.textsafe.text_problem)
        assert result.exit_code == 2 and "vendor: holds a line break (\\x0a)" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    html = rendered_markdown(result.stdout)
    assert "<a " not in html and "<img" not in html
    assert re.findall(r"<(h[1-6]|table|li|hr)\b", html) == re.findall(
        r"<(h[1-6]|table|li|hr)\b", plain
    )  # no forged structure
    assert "@security-team" not in result.stdout  # a mention needs the raw @name
    assert "evil.example" in html or "evil&#46;example" in html or name in ("mention", "html", "heading-rule")


def test_a_carriage_return_in_vendor_text_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    line = edit(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {yaml_string('Alpha' + chr(13) + '# ALL OFFERS APPROVED')}")
    result = run("compare", "-f", "markdown", "-w", ws, "--as-of", AS_OF)
    assert_error(result, f"{OFFER}:{line}: vendor: holds a line break (\\x0d) at character 6: one line expected")
    assert result.stdout == ""


def test_markdown_text_escapes_what_the_reader_would_obey():
    shown = textsafe.markdown_text("[a](b) ![c](d) @e #1 | x \r\n# h *f* _g_ `h` <i>")
    assert (
        "[a](b)" not in shown and "![c]" not in shown and "@e" not in shown and "\n" not in shown and "\r" not in shown
    )
    html = rendered_markdown(shown)
    assert (
        "<a " not in html and "<img" not in html and "<em>" not in html and "<code>" not in html and "<i>" not in html
    )


# --- unknown keys are named at their own line ---------------------------------------------------------------


@pytest.mark.parametrize("key", ["a[0]", "list[str]", "none", "int", "str", "list", "float", "constrained-float"])
def test_an_unknown_key_is_reported_with_its_name_at_its_line(workspace_copy, key):
    ws = workspace_copy("basic")
    line = edit(
        ws,
        OFFER,
        "  sla: {availability: 0.995, node_replacement_hours: 24}",
        f"  sla: {{availability: 0.995, node_replacement_hours: 24}}\n  {yaml_string(key)}: 1",
    )
    refused(validate(ws), f"{OFFER}:{line + 1}: service.{key}: unknown field")
    line = edit(ws, "procure.yaml", "as_of:", f"{yaml_string(key)}: 2\nas_of:")
    refused(validate(ws), f"procure.yaml:{line}: {key}: unknown field")


def test_an_unknown_key_under_a_union_field_is_named(workspace_copy):
    ws = workspace_copy("basic")
    line = edit(ws, OFFER, "  gpu_hour: 4.00", "  gpu_hour: 4.00\n  index_linked: {spread: 0.1, float: 3}")
    refused(validate(ws), f"{OFFER}:{line + 1}: pricing.index_linked.float: unknown field")


# --- spreadsheet-safe CSV ---------------------------------------------------------------------------------------

FORMULA_VENDORS = ['=HYPERLINK("http://evil","x")', "+1+2", "-2+3", "@SUM(A1)", "\tTabbed"]


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("vendor", FORMULA_VENDORS)
def test_every_csv_writes_formula_like_vendor_text_as_text(workspace_copy, vendor):
    ws = workspace_copy("basic")
    edit(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    outputs = {
        "compare": run("compare", "-f", "csv", "-w", ws, "--as-of", AS_OF),
        "rate": run("rate", "-f", "csv", "-w", ws, "--as-of", AS_OF),
        "price_to_win": run("whatif", "--price-to-win", "-f", "csv", "-w", ws, "--as-of", AS_OF),
    }
    for name, result in outputs.items():
        assert result.exit_code == 0, (name, result.stderr)
        cells = [cell for row in csv_rows(result.stdout) for cell in row.values()]
        assert "'" + vendor in cells, (name, vendor)
        assert vendor not in cells, name
        assert not any(
            isinstance(c, str) and c.startswith(textsafe.FORMULA_STARTS) and not _number(c) for c in cells
        ), name


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_numbers_stay_numbers_in_csv(workspace_copy):
    ws = workspace_copy("basic")
    result = run("whatif", "alpha", "--price", "-50%", "-f", "csv", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    assert textsafe.spreadsheet_text("-0.05") == "-0.05" and textsafe.spreadsheet_text(-3) == -3
    assert textsafe.spreadsheet_text("+1e3") == "+1e3"
    assert not any(cell.startswith("'") for row in csv_rows(result.stdout) for cell in row.values())
    compare = csv_rows(run("compare", "-f", "csv", "-w", ws, "--as-of", AS_OF).stdout)
    assert all(_number(row["cost_per_task"]) for row in compare if row["cost_per_task"])


def test_cashflow_and_position_and_sensitivity_csv_are_safe(workspace_copy):
    ws = workspace_copy("rated")
    path = ws / "procure.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("{name: Rival B,", '{name: "=Rival B",', 1), encoding="utf-8"
    )
    position = run("position", "-f", "csv", "-w", ws, "--as-of", AS_OF)
    assert position.exit_code == 0, position.stderr
    names = [row["name"] for row in csv_rows(position.stdout)]
    assert "'=Rival B" in names and "=Rival B" not in names
    for args in (("cashflow", "-f", "csv", "--horizon", "12"), ("sensitivity", "-f", "csv")):
        result = run(*args, "-w", ws, "--as-of", AS_OF)
        assert result.exit_code == 0, (args, result.stderr)


def test_one_function_for_csv_and_xlsx_and_no_other_csv_writer():
    assert workbook.formula_like is textsafe.formula_like
    assert ranking.csv_writer is textsafe.csv_writer
    for path in (ROOT / "procure").rglob("*.py"):
        if path.name != "textsafe.py":
            assert "csv.writer(" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize("vendor", FORMULA_VENDORS)
def test_formula_like_text_is_a_text_cell_in_the_xlsx(workspace_copy, tmp_path, vendor):
    openpyxl = pytest.importorskip("openpyxl")
    ws = workspace_copy("basic")
    edit(ws, OFFER, "vendor: Alpha Cloud", f"vendor: {yaml_string(vendor)}")
    out = tmp_path / "cmp.xlsx"
    assert run("compare", "-f", "xlsx", "--out", out, "-w", ws, "--as-of", AS_OF).exit_code == 0
    sheet = openpyxl.load_workbook(out)["Comparison"]
    cells = [c for row in sheet.iter_rows() for c in row if c.value == vendor]
    assert cells and all(c.data_type == "s" for c in cells)
    numbers = [c for row in sheet.iter_rows(min_row=2) for c in row if isinstance(c.value, float)]
    assert numbers and all(c.data_type == "n" for c in numbers)


# --- a history locked by another process ----------------------------------------------------------------------


@pytest.mark.parametrize("waited", ["the real timeout", "half a second"])
def test_a_locked_history_is_reported_as_busy_within_seconds(workspace_copy, monkeypatch, waited):
    """`make test` runs it with a timeout of half a second; `make test-slow` first waits the real one (five seconds
    of a worker doing nothing)."""
    ws = workspace_copy("history_base")
    assert run("evaluate", "--save", "-w", ws, "--as-of", AS_OF).exit_code == 0
    holder = sqlite3.connect(ws / ".procure" / "history.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for args in (("evaluate", "--save", "--as-of", AS_OF), ("history",), ("reevaluate", "--as-of", AS_OF)):
            if (
                args[0] != "evaluate" or waited != "the real timeout"
            ):  # the first waits the real timeout; the others need not wait as long to say "busy"
                monkeypatch.setattr("procure.analysis.history.BUSY_TIMEOUT_S", 0.5)
            start = time.perf_counter()
            result = run(*args, "-w", ws)
            elapsed = time.perf_counter() - start
            stderr = assert_error(result, ".procure/history.sqlite", "busy", "another process")
            assert "unreadable" not in stderr and "move it away" not in stderr and "damaged" not in stderr
            # a hang guard: ten times the busy timeout waited (plus the run), not a speed test
            assert elapsed < 10 * (history.BUSY_TIMEOUT_S + 1), f"{args[0]}: {elapsed:.1f} s"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(json.loads(run("history", "-f", "json", "-w", ws).stdout)["runs"]) == 1
    assert re.search(r"saved run 2", run("evaluate", "--save", "-w", ws, "--as-of", AS_OF).stderr)


def test_delivered_evidence_with_negative_amounts_a_share_above_one_or_inverted_percentiles_is_refused(workspace_copy):
    # Each value below is impossible for a month of service: a negative bill or count, a coverage
    # above the whole month, a P90 time to first token faster than the P50.
    ws = workspace_copy("basic")
    folder = ws / "actuals" / "alpha"
    folder.mkdir(parents=True)
    (folder / "invoices.csv").write_text(
        "month,gpu_hours,output_tokens,amount\n2026-03,-73000,,292000\n2026-04,73000,,-5\n"
    )
    (folder / "metrics.csv").write_text(
        "month,output_tokens,requests_ok,requests_failed,ttft_p50_s,ttft_p90_s,ttft_p99_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,coverage,resets,gaps\n"
        "2026-03,1000,10,-1,0.9,0.4,2.0,10,12,14,1.5,0,0\n"
    )
    problems = refused(
        validate(ws, AS_OF),
        "actuals/alpha/invoices.csv:2: gpu_hours: must be at least 0 (got -73000)",
        "actuals/alpha/invoices.csv:3: amount: must be at least 0 (got -5)",
        "actuals/alpha/metrics.csv:2: requests_failed: must be at least 0 (got -1)",
        "actuals/alpha/metrics.csv:2: ttft_p90_s: 0.4 s is below ttft_p50_s (0.9 s): a higher percentile is never "
        "faster",
        "actuals/alpha/metrics.csv:2: coverage: must be at most 1 (got 1.5)",
    )
    assert len(problems.splitlines()) == 5, problems  # "5 problems found"
