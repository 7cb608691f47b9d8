"""One text gate at intake (procure.textsafe.text_problem) for every kind of line break, bidirectional controls,
long runs of combining marks and over-long names: refused with file, line, field and the character, exit 2,
nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clihelp import AS_OF, run
from refusals import refused, validate

from procure.io.example import write_example

TRIALS = Path(__file__).parent / "data" / "trials"


def with_vendor(workspace_copy, vendor: str) -> Path:
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    text = offer.read_text(encoding="utf-8")
    assert "vendor: Alpha Cloud" in text
    offer.write_text(text.replace("vendor: Alpha Cloud", f"vendor: {json.dumps(vendor)}", 1), encoding="utf-8")
    return ws


@pytest.mark.parametrize(
    "vendor, message",
    [
        # a line feed passed (CR and U+2028 did not): the memo printed the forged line on its own
        ("Alpha\n# ALL OFFERS APPROVED BY THE BOARD", "holds a line break (\\x0a) at character 6: one line expected"),
        ("Alpha\u2028Cloud", "holds a line break (U+2028) at character 6: one line expected"),
        ("Alpha\x85Cloud", "holds a line break (\\x85) at character 6: one line expected"),
        ("Alpha\x0cCloud", "holds a line break (\\x0c) at character 6: one line expected"),
        ("Alpha\x1eCloud", "holds a record separator (\\x1e) at character 6: one line expected"),
        ("Alpha \u202eduolC", "holds a bidirectional control (U+202E) at character 7: it reorders the text on screen"),
        ("A" + "\u0301" * 300, "holds 300 combining marks on one character: at most 4 expected"),
        ("V" * 2000, "is 2,000 characters long: at most 256 expected"),
    ],
    ids=["line-feed", "u2028", "nel", "form-feed", "record-separator", "bidi", "combining", "2000-characters"],
)
def test_vendor_text_is_refused_at_intake_naming_file_line_field_and_character(
    workspace_copy, tmp_path, vendor, message
):
    ws = with_vendor(workspace_copy, vendor)
    out = tmp_path / "cmp.md"
    result = run("compare", "-w", ws, "--as-of", AS_OF, "--out", out)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"offers/alpha.yaml:2: vendor: {message}" in result.stderr, result.stderr
    assert "APPROVED" not in result.stdout and not out.exists()
    assert len(result.stderr) < 1000  # the message does not echo a 2,000-character or 300-mark value


def test_a_script_that_stacks_a_few_marks_and_multi_line_notes_pass(workspace_copy):
    # Vietnamese stacks two marks on one letter ("ệ" decomposed: e + U+0323 + U+0302); notes keep their line feeds
    ws = with_vendor(workspace_copy, "Vie\u0323\u0302t Cloud")
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(offer.read_text().replace("region: us-east", 'region: us-east\nnotes: "line one\\nline two"', 1))
    validate(ws, AS_OF)()  # valid: no InputError
    # but not a U+2028 in notes: a line break a viewer may take, the notes' own line feeds aside
    offer.write_text(offer.read_text().replace("line one\\nline two", "line one\\u2028line two"))
    refused(validate(ws, AS_OF), "notes: holds a line break (U+2028) at character 9: text expected")


@pytest.fixture
def example(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write_example(ws)  # what `procure init DIR --example` writes
    return ws


@pytest.mark.parametrize(
    "name, message",
    [
        ("fast\u2028run.json", "holds a line break (U+2028) at character 5: one line expected: rename the file"),
        ("fast\u202erun.json", "holds a bidirectional control (U+202E) at character 5"),
    ],
    ids=["u2028", "bidi"],
)
def test_a_trial_file_whose_name_a_screen_would_break_or_reorder_is_refused(example, tmp_path, name, message):
    # before: U+2028 was kept in trials.csv and read back as "expected 9 values"; U+202E was stored raw
    trial = tmp_path / name
    trial.write_text((TRIALS / "vllm_bench_serve_conc32.json").read_text())
    args = ("perf", "import", trial, "--gpus", 8, "--offer", "keel-b200-mc", "--as-of", "2026-11-29", "-w", example)
    result = run(*args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "file name: " + message in result.output, result.output
    assert "expected 9 values" not in result.output
    assert not (example / "actuals" / "keel-b200-mc" / "trials.csv").exists()


def test_a_kept_trials_file_with_a_separator_in_a_source_names_the_field_not_a_count_of_values(example):
    path = example / "actuals" / "keel-b200-mc" / "trials.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "date,source,interactivity,output_tok_s_gpu,ttft_s,gpus,gpu_type,model,precision\n"
        "2026-11-20,fast\u2028run.json,125,310,0.85,8,B200,,\n",
        encoding="utf-8",
    )
    from datetime import date

    from procure.analysis.usecases import scorecards

    problems = refused(
        lambda: scorecards(example, date(2026, 11, 29), None, None),
        "trials.csv:2: source: holds a line break (U+2028) at character 5: one line expected",
    )
    assert "expected 9 values" not in problems
