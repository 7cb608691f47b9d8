"""`procure sensitivity` on tests/data/uncertainty_tornado (figures worked out by hand in
tests/test_uncertainty.py: the baseline reads each throughput at its factor's mean, measured 0.8 / 1 / 1
at 2.8 / 3 and vendor claims 0.9 / 1 / 1 at 2.9 / 3, so floaty 3.30 / 435, anchor 3.60 / 420, floaty2
4.20 / 435; the index level moves the most, and flips the leader at its high end). The offers followed, the CSV
and Markdown documents and the as-of date's level are rendered in process from the analysis; the table, one JSON
run, the output file and the refusals through the command."""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, run
from refusals import refused

ORDER_TOP3 = [
    "index level",
    "utilization",
    "throughput: anchor",
    "throughput: floaty2",
    "throughput: floaty",
    "availability (every offer)",
    "staff cost",
]  # no exchange-rate row: no top offer is priced in EUR


@pytest.fixture
def ws(data_dir) -> Path:
    return data_dir / "uncertainty_tornado"


def sensitivity(ws: Path, *args: str):
    return run("sensitivity", "-w", ws, "--as-of", AS_OF, *args)


def swings(ws: Path, fmt: str, count: int | None = None, as_of: str = AS_OF) -> str:
    """`procure sensitivity [--offers N] -f fmt` rendered in process from the analysis
    (procure/analysis/usecases/compare.py sensitivities, procure/render/sensitivity.py sensitivity_text)."""
    from procure.analysis.usecases import sensitivities
    from procure.render.sensitivity import sensitivity_text

    found = sensitivities(ws, date.fromisoformat(as_of), None, None, count)
    return sensitivity_text(found.result, found.evaluation.currency, fmt)


def test_table_lists_inputs_by_swing(ws):
    result = sensitivity(ws)
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert [line.split("│")[1].strip() for line in lines] == ORDER_TOP3
    index = [c.strip() for c in lines[0].split("│")]
    assert index[2:4] == ["-50.0%", "+50.0%"]  # factors 0.5 and 1.5 as the change they make
    # Each end's leader with its own cost (not the baseline leader's): at x0.5 floaty leads at
    # 2.40 / 435 = 5.52 per 1,000 tasks; at x1.5 anchor leads at its fixed 3.60 / 420 = 8.57, while floaty, the
    # baseline leader, has risen to 4.50 / 435 = 10.34 (the column used to show floaty's beside anchor's name).
    # Swing: floaty2 (5.70 - 2.70) / 435 = 6.90 per 1,000 tasks.
    assert index[4:8] == ["floaty 5.52", "anchor 8.57", "6.90 (floaty2)", "yes"]
    assert (
        "Baseline cost per 1,000 successful tasks at typical inputs (USD): floaty 7.59, anchor 8.57, floaty2 9.66"
        in result.stdout
    )


def test_json_default_follows_the_top_three(ws):
    result = sensitivity(ws, "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["offers"] == ["floaty", "anchor", "floaty2"]
    assert data["baseline"] == pytest.approx(
        {"floaty": 3.3 / 435, "anchor": 3.6 / 420, "floaty2": 4.2 / 435}, rel=1e-12
    )
    assert [r["input"] for r in data["rows"]] == ORDER_TOP3
    index = data["rows"][0]
    assert index["swing"] == pytest.approx(3.0 / 435, rel=1e-12) and index["swing_offer"] == "floaty2"
    assert (index["leader_low"], index["leader_high"], index["flips"]) == ("floaty", "anchor", True)
    assert index["costs_high"]["floaty"] == pytest.approx(4.5 / 435, rel=1e-12)  # at its cap
    assert index["costs_high_per_1000_tasks"]["floaty"] == pytest.approx(4.5 / 435 * 1000, rel=1e-12)
    assert data["baseline_per_1000_tasks"] == pytest.approx(
        {"floaty": 3300 / 435, "anchor": 3600 / 420, "floaty2": 4200 / 435}, rel=1e-12
    )
    for row in data["rows"]:
        assert set(row) == {
            "input",
            "low",
            "high",
            "costs_low",
            "costs_high",
            "swing",
            "swing_offer",
            "leader_low",
            "leader_high",
            "flips",
            "fails_low",
            "fails_high",
            "leader_cost_low",
            "leader_cost_high",
            # each cost per task beside its figure per 1,000 tasks
            "costs_low_per_1000_tasks",
            "costs_high_per_1000_tasks",
            "swing_per_1000_tasks",
            "leader_cost_low_per_1000_tasks",
            "leader_cost_high_per_1000_tasks",
        }
        assert row["fails_low"] == row["fails_high"] == {}  # nothing in the tornado case sits near a gate
    assert result.stderr == ""


def test_offers_option_is_honoured(ws):
    data = json.loads(swings(ws, "json", 2))
    assert data["offers"] == ["floaty", "anchor"]
    assert [r["input"] for r in data["rows"]][:4] == [
        "index level",
        "utilization",
        "throughput: anchor",
        "throughput: floaty",
    ]
    assert all(set(r["costs_low"]) == {"floaty", "anchor"} for r in data["rows"])
    # more than there are acceptable offers: all five, never leaky (not acceptable)
    data = json.loads(swings(ws, "json", 50))
    assert data["offers"] == ["floaty", "anchor", "floaty2", "euro", "dear"]


def test_top_and_offer_together_are_refused_not_one_of_them_ignored(ws):
    # --offer names the offers to follow and --top counts the leaders: given both, one would be dropped
    # in silence, so neither is guessed at.
    from procure.analysis.usecases import sensitivities

    day = date.fromisoformat(AS_OF)
    for top, count in ((2, None), (None, 2)):  # --top 2, --offers 2
        err = refused(lambda t=top, c=count: sensitivities(ws, day, ["anchor"], t, c), "--top", "give one of them")
        assert "--offer" in err
    # the default still follows the top three, and --top alone counts them
    assert sensitivities(ws, day, None, 1, None).followed == ["floaty"]


def test_csv_has_a_column_per_offer_and_end(ws):
    reader = csv.DictReader(io.StringIO(swings(ws, "csv", 2)))
    assert reader.fieldnames == [
        "input",
        "low",
        "high",
        "floaty_low",
        "anchor_low",
        "floaty_high",
        "anchor_high",
        "swing",
        "swing_offer",
        "leader_low",
        "leader_high",
        "flips",
    ]
    rows = list(reader)
    assert rows[0]["input"] == "index level"
    assert float(rows[0]["floaty_low"]) == pytest.approx(2.4 / 435, rel=1e-12)
    assert float(rows[0]["swing"]) == pytest.approx(2.1 / 435, rel=1e-12)
    assert rows[0]["flips"] == "true"
    staff = next(r for r in rows if r["input"] == "staff cost")
    assert staff["swing"] == "" and staff["swing_offer"] == "" and staff["flips"] == "false"


def test_markdown(ws):
    text = swings(ws, "markdown")
    assert text.startswith("# Sensitivity")
    table = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| Input")]
    assert [line.split("|")[1].strip() for line in table] == ORDER_TOP3


def test_out_writes_the_file(ws, tmp_path):
    target = tmp_path / "deep" / "sens.json"
    result = sensitivity(ws, "-f", "json", "--out", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert json.loads(target.read_text())["offers"] == ["floaty", "anchor", "floaty2"]


def test_as_of_picks_the_index_level(ws):
    # on 2026-12-01 the index is 9.99: floaty sits at its cap 4.50 -> 4.50 / 435 and anchor leads
    data = json.loads(swings(ws, "json", 2, as_of="2026-12-01"))
    assert data["offers"] == ["anchor", "floaty"]
    assert data["baseline"]["floaty"] == pytest.approx(4.5 / 435, rel=1e-12)


def test_json_is_byte_identical_across_runs(ws):
    assert swings(ws, "json") == swings(ws, "json")


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_every_format_on_a_workspace_of_every_kind(data_dir, fmt):
    result = run("sensitivity", "-w", data_dir / "uncertainty_zero", "--as-of", AS_OF, "--offers", "5", "-f", fmt)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip()


@pytest.mark.parametrize("args", [("--offers", "0"), ("--offers", "-2"), ("--offers", "two")])
def test_bad_offers_exit_2(ws, args):
    result = sensitivity(ws, *args)
    assert result.exit_code == 2
    assert result.stdout == ""


def test_no_acceptable_offer_is_the_state_every_deciding_command_shares(ws):
    # every offer's valid_until is before 2030: none is acceptable then, so none is followed (docs/commands.md,
    # "Empty and failing states": exit 2, the reason and the next step)
    for format in ("table", "json"):
        result = run("sensitivity", "-w", ws, "--as-of", "2030-01-01", "--format", format)
        assert_error(result, "sensitivity: no acceptable offer as of 2030-01-01", "`procure compare`")
        assert result.stdout == ""
