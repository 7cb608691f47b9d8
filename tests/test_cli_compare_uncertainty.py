"""`procure compare --uncertainty` on tests/data/uncertainty_tornado (draws 2,000 and seed 3 in its
procure.yaml; six offers, leaky not acceptable; see tests/test_uncertainty.py for the figures) and on
tests/data/uncertainty_zero (every factor of zero width). The ranges, settings and columns are read from the
evaluation rendered in process; the table, the output file, the progress bar and the refusals through the command."""

from __future__ import annotations

import csv
import io
import json
import sys
from datetime import date
from pathlib import Path

import pytest
from clihelp import AS_OF, run, run_on_terminal

BANDS = ("p10", "p50", "p90", "prob_cheapest")


@pytest.fixture
def ws(data_dir) -> Path:
    return data_dir / "uncertainty_tornado"


def compare(ws: Path, *args: str):
    return run("compare", "-w", ws, "--as-of", AS_OF, "--uncertainty", *args)


def ranked(ws: Path, fmt: str, draws: int | None = None, seed: int | None = None, uncertainty: bool = True) -> str:
    """`procure compare [--uncertainty [--draws N] [--seed S]] -f fmt` as rendered in process from the analysis's
    evaluation (procure/analysis/usecases/compare.py comparison, procure/render/ranking.py ranking_text)."""
    from procure.analysis.usecases import comparison
    from procure.render.ranking import ranking_text

    found = comparison(ws, date.fromisoformat(AS_OF), monte_carlo=(draws, seed) if uncertainty else None)
    return ranking_text(found.evaluation.model_copy(update={"command": "compare"}), fmt)


def test_table_has_the_range_columns(ws):
    result = compare(ws)
    assert result.exit_code == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "Rank" in line)
    cells = [c.strip() for c in header.split("┃")]
    assert (
        cells.index("P10")
        < cells.index("P50")
        < cells.index("P90")
        < cells.index("P(cheapest)")
        < cells.index("Reason")
    )
    column = cells.index("P(cheapest)")
    rows = {
        line.split("│")[2].strip(): [c.strip() for c in line.split("│")]
        for line in result.stdout.splitlines()
        if line.startswith("│") and line.split("│")[2].strip()
    }
    assert rows["leaky"][column] == "—"  # not acceptable: no probability
    assert rows["floaty"][column].endswith("%") and rows["dear"][column] == "0.0%"
    assert "Uncertainty: 2,000 draws, seed 3." in result.stdout


def test_table_without_uncertainty_has_no_range_columns(ws):
    result = run("compare", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0
    assert "P(cheapest)" not in result.stdout and "P50" not in result.stdout and "Uncertainty:" not in result.stdout


def test_json_carries_a_range_per_offer_and_the_settings(ws):
    ev = json.loads(ranked(ws, "json"))
    assert ev["uncertainty"]["draws"] == 2000 and ev["uncertainty"]["seed"] == 3
    assert "2,000 draws, seed 3" in ev["uncertainty"]["method"]
    total = 0.0
    for offer in ev["offers"]:
        u = offer["uncertainty"]
        assert set(u) == set(BANDS) | {
            "prob_fails_gate",
            "fails_by_gate",
            "p10_per_1000_tasks",
            "p50_per_1000_tasks",
            "p90_per_1000_tasks",
            "mean",  # the expected cost the draws give (the headline, with the evaluation's draws)
            "mean_per_1000_tasks",
        }, offer["id"]
        assert u["mean_per_1000_tasks"] == (None if u["mean"] is None else u["mean"] * 1000)
        assert [u[f"{b}_per_1000_tasks"] for b in ("p10", "p50", "p90")] == [
            None if u[b] is None else u[b] * 1000 for b in ("p10", "p50", "p90")
        ]
        assert u["p10"] <= u["p50"] <= u["p90"], offer["id"]
        if offer["acceptable"]:
            total += u["prob_cheapest"]
        else:
            assert u["prob_cheapest"] is None
    assert total == pytest.approx(1.0, abs=1e-12)
    leaky = next(o for o in ev["offers"] if o["id"] == "leaky")
    assert leaky["acceptable"] is False and leaky["uncertainty"]["p50"] is not None


def test_json_without_uncertainty_has_none(ws):
    ev = json.loads(ranked(ws, "json", uncertainty=False))
    assert ev["uncertainty"] is None
    assert all(o["uncertainty"] is None for o in ev["offers"])


def test_draws_and_seed_are_honoured(ws):
    ev = json.loads(ranked(ws, "json", 5000, 11))
    assert (ev["uncertainty"]["draws"], ev["uncertainty"]["seed"]) == (5000, 11)
    assert "5,000 draws, seed 11" in ev["uncertainty"]["method"]
    other_seed = json.loads(ranked(ws, "json", 5000, 12))
    other_draws = json.loads(ranked(ws, "json", 6000, 11))

    def ranges(e):
        return {o["id"]: o["uncertainty"] for o in e["offers"]}

    assert ranges(ev) != ranges(other_seed)
    assert ranges(ev) != ranges(other_draws)


def test_seed_zero_is_a_seed(ws):
    ev = json.loads(ranked(ws, "json", seed=0))
    assert ev["uncertainty"]["seed"] == 0


def test_json_is_byte_identical_for_the_same_seed(ws):
    first = ranked(ws, "json", 3000, 5)
    assert first == ranked(ws, "json", 3000, 5)
    assert first != ranked(ws, "json", 3000, 6)


def test_json_stdout_is_only_json_and_stderr_is_quiet(ws):
    result = compare(ws, "-f", "json")
    assert result.exit_code == 0
    assert result.stdout.startswith("{") and result.stdout.endswith("}\n")
    json.loads(result.stdout)
    assert result.stderr == ""


def test_csv_has_the_range_columns(ws):
    reader = csv.DictReader(io.StringIO(ranked(ws, "csv", 4000)))
    header = reader.fieldnames
    assert header[header.index("p10") : header.index("p10") + 4] == list(BANDS)
    assert header[-1] == "reasons"
    rows = {r["id"]: r for r in reader}
    assert rows["leaky"]["prob_cheapest"] == "" and rows["leaky"]["p50"] != ""
    assert sum(float(r["prob_cheapest"]) for r in rows.values() if r["acceptable"] == "true") == pytest.approx(
        1.0, abs=1e-12
    )
    for r in rows.values():
        assert float(r["p10"]) <= float(r["p50"]) <= float(r["p90"])
    assert float(rows["dear"]["prob_cheapest"]) == 0.0


def test_csv_without_uncertainty_has_no_range_columns(ws):
    header = ranked(ws, "csv", uncertainty=False).splitlines()[0].split(",")
    assert not set(BANDS) & set(header)


def test_markdown_has_the_range_columns(ws):
    text = ranked(ws, "markdown")
    header = next(line for line in text.splitlines() if line.startswith("| Rank"))
    assert "| P10 | P50 | P90 | P(cheapest) |" in header
    assert "Uncertainty: 2,000 draws, seed 3." in text


def test_zero_width_csv_p50_is_the_cost_per_task_exactly(data_dir):
    rows = list(csv.DictReader(io.StringIO(ranked(data_dir / "uncertainty_zero", "csv"))))
    assert len(rows) == 6
    for r in rows:
        assert r["p10"] == r["p50"] == r["p90"] == r["cost_per_task"] != "", r["id"]


def test_out_writes_the_file_and_keeps_stdout_empty(ws, tmp_path):
    target = tmp_path / "out" / "ev.json"
    result = compare(ws, "-f", "json", "--out", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert json.loads(target.read_text())["uncertainty"]["draws"] == 2000
    assert target.read_text() == compare(ws, "-f", "json").stdout


@pytest.mark.parametrize(
    "args", [("--draws", "5"), ("--draws", "99"), ("--draws", "2000000"), ("--seed", "-1"), ("--draws", "many")]
)
def test_bad_draws_or_seed_exit_2(ws, args):
    result = compare(ws, "-f", "json", *args)
    assert result.exit_code == 2
    assert result.stdout == ""


def test_bad_distribution_exits_2_with_its_line(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  utilization: {triangular"))
    lines[at] = "  utilization: {triangular: [0.8, 1.5, 1.2]}\n"
    path.write_text("".join(lines))
    result = compare(root, "-f", "json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (
        f"procure.yaml:{at + 1}: uncertainty.utilization: needs 0 < low <= mode <= high (got 0.8, 1.5, 1.2)"
        in result.stderr
    )


# --- the progress bar: on a terminal only, never in JSON ------------------------------------------


def run_with_terminal_stderr(ws: Path, fmt: str) -> tuple[int, bytes, bytes]:
    return run_on_terminal(["compare", "-w", ws, "--as-of", AS_OF, "--uncertainty", "--draws", "20000", "-f", fmt])


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_no_progress_bar_with_json_even_on_a_terminal(ws):
    code, out, err = run_with_terminal_stderr(ws, "json")
    assert code == 0
    assert json.loads(out.decode())["uncertainty"]["draws"] == 20000
    assert b"Monte Carlo" not in out and b"\x1b" not in out
    assert b"Monte Carlo" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal_goes_to_stderr_only(ws):
    code, out, err = run_with_terminal_stderr(ws, "table")
    assert code == 0
    assert b"Monte Carlo" in err
    assert b"Uncertainty: 20,000 draws" in out
    assert b"Monte Carlo" not in out and b"\x1b[?25l" not in out  # no bar or cursor control on stdout


def test_negative_seed_in_procure_yaml_exits_2(workspace_copy):
    root = workspace_copy("uncertainty_tornado")
    path = root / "procure.yaml"
    path.write_text(path.read_text().replace("  seed: 3\n", "  seed: -1\n"))
    result = compare(root, "-f", "json")
    assert result.exit_code == 2
    assert "procure.yaml:" in result.stderr and "uncertainty.seed" in result.stderr
