"""`procure reevaluate` on tests/data/history_base: the first run saves a baseline; later runs are
compared with the last saved run, exit 3 on a breach and are then not saved (unless --accept).

Cost per successful task is the GPU-hour price / (773.712 x 0.980056, the means of the availability and
utilization factors): alpha 4.00 -> 0.00528; a 10% rise to 4.40 -> 0.00580 keeps alpha first (bravo 5.00, delta 6.00),
so only the cost threshold can trip.

The thresholds, the runs saved and the documents (JSON, Markdown, text) are read from the analysis's re-evaluation
in process; the exit codes, the table, the lines on stderr and the option errors through the command.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from clihelp import AS_OF, run
from pointmeans import DELIVERY_MEAN

from procure.analysis.history import HISTORY_FILE, list_runs


def k(price: float) -> str:
    """A GPU-hour price as its cost per 1,000 tasks, printed: 4.00 -> 5.28, 4.40 -> 5.80."""
    return f"{price / (773.712 * DELIVERY_MEAN) * 1000:.2f}"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def set_price(ws: Path, offer_id: str, old: str, new: str) -> None:
    edit(ws / "offers" / f"{offer_id}.yaml", f"gpu_hour: {old}\n", f"gpu_hour: {new}\n")


def reevaluate(ws: Path, *args: str):
    return run("reevaluate", "-w", ws, "--as-of", AS_OF, *args)


def reevaluated(ws: Path, max_increase: str | None = None, fail_on: str | None = None, label: str | None = None):
    """`procure reevaluate [--max-increase X] [--fail-on C] [--label L]` at the analysis, in process
    (procure/analysis/history.py reevaluate): what it breached and saved."""
    from procure.analysis.history import reevaluate as run_reevaluation

    return run_reevaluation(ws, date.fromisoformat(AS_OF), max_increase, fail_on, None, False, label)


def document(found, fmt: str) -> str:
    """The re-evaluation in `fmt` (json, markdown, text) as the command writes it, rendered in process."""
    from procure.render.history import diff_text

    extra = {"saved_run": found.saved, "baseline_run": found.baseline, "baseline_file": found.baseline_file}
    return diff_text(found.diff, fmt, found.breached, extra, changed_only=True)


def breaches(found) -> list[tuple[str, str]]:
    return [(b.condition, b.detail) for b in found.breached]


@pytest.fixture
def ws(workspace_copy) -> Path:
    return workspace_copy("history_base")


@pytest.fixture
def baseline(ws) -> Path:
    assert reevaluated(ws, label="baseline").saved == 1
    return ws


@pytest.fixture
def risen(baseline) -> Path:
    """alpha 4.00 -> 4.40 after the baseline: +10% on its cost per task."""
    set_price(baseline, "alpha", "4.00", "4.40")
    return baseline


def test_first_run_saves_a_baseline(ws):
    result = reevaluate(ws, "--max-increase", "5%", "--label", "baseline")
    assert result.exit_code == 0
    # the message goes to standard output in the requested format, so a CI job can post it
    assert result.stdout == "No earlier run: saved this evaluation as the baseline (run 1).\n"
    assert result.stderr == ""
    [saved] = list_runs(ws)
    assert (saved.id, saved.label, saved.top_offer) == (1, "baseline", "alpha")


def test_no_change_passes_and_saves(baseline):
    result = reevaluate(baseline, "--max-increase", "5%")
    assert result.exit_code == 0, result.stderr
    assert "saved run 2" in result.stderr
    assert "BREACH" not in result.stdout
    assert "No changes: the same 4 offers" in result.stdout
    assert [r.id for r in list_runs(baseline)] == [1, 2]


def test_ten_percent_rise_breaches_five_percent_and_is_not_saved(risen):
    before = (risen / HISTORY_FILE).read_bytes()
    result = reevaluate(risen, "--max-increase", "5%")
    assert result.exit_code == 3
    assert "BREACH max-increase: alpha: cost per task up 10.0% (limit 5.0%)" in result.stdout
    assert result.stdout.count("BREACH") == 1  # no rank, grade, gate or leader change
    assert "1 threshold(s) breached (max-increase); the baseline stays run 1 (use --accept to move it)" in result.stderr
    assert "saved run" not in result.stderr
    assert [r.id for r in list_runs(risen)] == [1]
    assert (risen / HISTORY_FILE).read_bytes() == before
    again = reevaluate(risen, "--max-increase", "5%")  # nobody acted: still red
    assert again.exit_code == 3
    assert "BREACH max-increase: alpha: cost per task up 10.0% (limit 5.0%)" in again.stdout
    assert [r.id for r in list_runs(risen)] == [1]


def test_fifteen_percent_limit_with_gate_change_passes_and_saves(risen):
    found = reevaluated(risen, "15%", "gate-change")
    payload = json.loads(document(found, "json"))
    assert found.breached == [] and payload["breached"] == []
    assert (payload["saved_run"], payload["baseline_run"]) == (2, 1)
    alpha = next(o for o in payload["offers"] if o["id"] == "alpha")
    assert alpha["cost_change_share"] == pytest.approx(0.10)
    runs = list_runs(risen)
    assert [r.id for r in runs] == [1, 2]
    assert runs[1].top_cost_per_task == pytest.approx(4.40 / (773.712 * DELIVERY_MEAN))
    # the saved run is the new baseline: the same prices again change nothing
    again = reevaluated(risen, "5%")
    assert again.breached == [] and (again.baseline, again.saved) == (2, 3)


def test_accept_saves_despite_the_breach(risen):
    result = reevaluate(risen, "--max-increase", "5%", "--accept", "--label", "accepted rise")
    assert result.exit_code == 0
    assert "BREACH max-increase: alpha: cost per task up 10.0% (limit 5.0%)" in result.stdout
    assert "saved run 2 (accepted despite the breach)" in result.stderr
    runs = list_runs(risen)
    assert [(r.id, r.label) for r in runs] == [(1, "baseline"), (2, "accepted rise")]
    after = reevaluate(risen, "--max-increase", "5%")  # compared with the accepted run now
    assert after.exit_code == 0
    assert "saved run 3" in after.stderr


def test_json_of_a_breach(risen):
    payload = json.loads(document(reevaluated(risen, "5%"), "json"))
    assert payload["breached"] == [
        {"condition": "max-increase", "detail": "alpha: cost per task up 10.0% (limit 5.0%)"}
    ]
    assert (payload["saved_run"], payload["baseline_run"]) == (None, 1)
    assert (payload["base"], payload["head"]) == ("run 1", "this evaluation")


def test_markdown_for_a_pull_request_comment(risen):
    text = document(reevaluated(risen, "5%"), "markdown")
    assert text.startswith(
        "## Re-evaluation\n\n**Thresholds breached:**\n\n- max-increase: alpha: cost per task up 10.0% (limit 5.0%)\n\n"
    )
    assert (
        "run 1 (as of 2026-11-29) against this evaluation (as of 2026-11-29).\n3 offers unchanged (not listed).\nThe "
        "cheapest acceptable offer is still alpha.\n" in text
    )
    assert (
        "| Offer | Status | Rank | Grade | Acceptable | Cost per 1k tasks | Change |\n|---|---|---|---|---|---|---|\n"
        in text
    )
    assert f"| alpha | present | 1 | T-MC | yes | {k(4.0)} to {k(4.4)} | +10.0% |" in text
    assert "| charlie |" not in text  # unchanged: counted, not listed
    assert "\x1b[" not in text and "│" not in text  # plain text, no terminal styling
    assert "threshold(s) breached" not in text  # the verdict for people stays on stderr
    assert text.endswith("|\n")


def test_markdown_without_a_breach(risen):
    found = reevaluated(risen, "15%")
    assert found.breached == []
    assert document(found, "markdown").startswith("## Re-evaluation\n\n**No threshold breached.**\n\n")


def test_bad_fail_on_exits_2_and_saves_nothing(baseline):
    result = reevaluate(baseline, "--fail-on", "rank-change,rank-chnage")
    assert result.exit_code == 2
    assert (
        "--fail-on: unknown condition rank-chnage (expected: rank-change, grade-change, new-cheapest, gate-change)"
        in result.stderr
    )
    assert result.stdout == ""
    assert [r.id for r in list_runs(baseline)] == [1]


def test_bad_max_increase_exits_2(baseline):
    result = reevaluate(baseline, "--max-increase", "lots")
    assert result.exit_code == 2
    assert "--max-increase" in result.stderr
    assert [r.id for r in list_runs(baseline)] == [1]


def test_default_conditions_catch_a_rank_change(baseline):
    set_price(baseline, "delta", "6.00", "4.80")  # delta overtakes bravo
    found = reevaluated(baseline)
    assert breaches(found) == [("rank-change", "bravo: rank from 2 to 3"), ("rank-change", "delta: rank from 3 to 2")]
    assert found.saved is None
    assert reevaluated(baseline, fail_on="new-cheapest,gate-change,grade-change").breached == []


def test_fail_on_new_cheapest(baseline):
    set_price(baseline, "alpha", "4.00", "5.50")
    assert json.loads(document(reevaluated(baseline, fail_on="new-cheapest"), "json"))["breached"] == [
        {"condition": "new-cheapest", "detail": "cheapest acceptable offer from alpha to bravo"}
    ]


def test_thresholds_from_procure_yaml_and_flags_replacing_them(ws):
    with (ws / "procure.yaml").open("a", encoding="utf-8") as f:
        f.write("reevaluate:\n  max_increase: 0.05\n  fail_on: [gate-change]\n")
    assert reevaluated(ws).saved == 1  # baseline
    set_price(ws, "alpha", "4.00", "4.40")
    assert breaches(reevaluated(ws)) == [("max-increase", "alpha: cost per task up 10.0% (limit 5.0%)")]
    assert reevaluated(ws, "15%").breached == []


def test_expiring_offer_is_warned_about(baseline):
    result = run(
        "reevaluate", "-w", baseline, "--as-of", "2026-12-21", "--format", "json"
    )  # bravo: valid until 2026-12-31
    assert "warning: bravo expires in 10 days (valid until 2026-12-31)" in result.stderr
    json.loads(result.stdout)  # the warning stays off standard output


def test_nothing_changed_says_no_changes(baseline):
    result = reevaluate(baseline)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("No changes: the same ") and "offers with the same ranks" in lines[1]
    assert "│" not in result.stdout  # no table listing every offer as unchanged
    markdown = reevaluate(baseline, "--format", "markdown").stdout
    assert "No changes" in markdown and "| Offer |" not in markdown
    assert json.loads(reevaluate(baseline, "--format", "json").stdout)["changed"] is False


def test_a_change_lists_only_the_offers_that_changed(baseline):
    set_price(baseline, "alpha", "4.00", "4.04")  # +1%: below the threshold, alpha stays first
    result = reevaluate(baseline)
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == ["alpha"]
    assert "offers unchanged (not listed)" in result.stdout or "offer unchanged (not listed)" in result.stdout


def test_text_for_mail_reads_as_typed(risen):
    # the same report as --format markdown, for a mail body: "->" (Markdown needs no escape for it: a "<" is
    # what opens HTML, and that is escaped), no bold markers, no "##" and no Markdown table
    found = reevaluated(risen, "5%")
    markdown = document(found, "markdown")
    assert f"{k(4.0)} -> {k(4.4)}" in markdown and "&gt;" not in markdown
    text = document(found, "text")
    assert text.startswith(
        "Re-evaluation\n-------------\n\nThresholds breached:\n\n- max-increase: alpha: cost per task up 10.0% "
        "(limit 5.0%)\n"
    )
    assert f"alpha: cost per 1,000 tasks {k(4.0)} -> {k(4.4)} (+10.0%)" in text
    assert "&gt;" not in text and "&amp;" not in text and "**" not in text
    assert "#" not in text and "|" not in text and "---|" not in text
    row = next(line for line in text.splitlines() if line.startswith("alpha "))
    assert f"{k(4.0)} to {k(4.4)}" in row and row.split()[-1] == "+10.0%"  # the table's row as columns


def test_a_mistyped_format_gets_did_you_mean(baseline):
    result = reevaluate(baseline, "--format", "txt")
    assert result.exit_code == 2
    assert (
        "procure reevaluate: --format: no choice 'txt'; did you mean 'text'? (choices: table, json, markdown, text)"
        in result.stderr
    )
