"""`procure evaluate --save`, `procure history` and `procure diff` on tests/data/history_base.

Cost per successful task there is the GPU-hour price / 758.281 (773.712 x 0.980056, see tests/test_history.py): alpha
4.00 -> 0.00528, bravo 5.00 -> 0.00659, delta 6.00 -> 0.00791, charlie 3.50 -> 0.00462 (not
acceptable: region eu-west).

The saved runs, their JSON and the differences (JSON, Markdown) are read from the analysis in process; the lines,
tables, exit codes and errors of the commands through them.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from clihelp import AS_OF, run
from pointmeans import DELIVERY_MEAN

from procure.analysis.history import HISTORY_FILE, list_runs

TASKS = (
    300 * 3600 / 1000 * 0.995 * 0.9 * 0.8 * DELIVERY_MEAN
)  # 773.712 x the means of the availability and utilization factors


def cost(price: float) -> float:
    return price / TASKS


def k(price: float) -> str:
    """The cost per 1,000 tasks as printed: alpha 4.00 -> 5.28, bravo 5.00 -> 6.59, charlie 3.50 -> 4.62, alpha 5.50 ->
    7.25."""
    return f"{cost(price) * 1000:.2f}"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def set_price(ws: Path, offer_id: str, old: str, new: str) -> None:
    edit(ws / "offers" / f"{offer_id}.yaml", f"gpu_hour: {old}\n", f"gpu_hour: {new}\n")


def row(output: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is `first_cell`."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{output}")


@pytest.fixture
def ws(workspace_copy) -> Path:
    return workspace_copy("history_base")


def save(ws: Path, *extra: str):
    result = run("evaluate", "--save", "-w", ws, "--as-of", AS_OF, *extra)
    assert result.exit_code == 0, result.stderr
    return result


def saved(ws: Path, label: str | None = None) -> int:
    """`procure evaluate --save [--label L]` at the use case, in process (procure/analysis/usecases/compare.py
    evaluation): the run id saved."""
    from procure.analysis.usecases import evaluation

    return evaluation(ws, date.fromisoformat(AS_OF), save=True, label=label).run_id


def differences(ws: Path, base: str | Path | None = None, head: str | None = None, fmt: str = "json") -> str:
    """`procure diff [BASE [HEAD]] -f fmt` (json, markdown) rendered in process from the analysis's comparison of the
    runs (procure/analysis/history.py compare_runs, procure/render/history.py diff_text)."""
    from procure.analysis.history import compare_runs
    from procure.render.history import diff_text

    result, _ = compare_runs(ws, None if base is None else str(base), head)
    return diff_text(result, fmt, title="Changes between two evaluations")


def evaluation_file(ws: Path, path: Path) -> None:
    """`procure compare -f json -o PATH`: the evaluation JSON written in process (procure/render/ranking.py)."""
    from procure.analysis.usecases import comparison
    from procure.render.ranking import ranking_text

    ev = comparison(ws, date.fromisoformat(AS_OF)).evaluation
    path.write_text(ranking_text(ev.model_copy(update={"command": "compare"}), "json"), encoding="utf-8")


@pytest.fixture
def two_runs(ws) -> Path:
    """Run 1 as the fixture is; run 2 after alpha went from 4.00 to 5.50 (bravo, 5.00, now leads)."""
    assert saved(ws, "Nov RFP") == 1
    set_price(ws, "alpha", "4.00", "5.50")
    assert saved(ws, "Dec re-check") == 2
    return ws


# --- evaluate and history -----------------------------------------------------------------------


def test_evaluate_save_with_label(ws):
    result = save(ws, "--label", "Nov RFP")
    assert (
        result.stdout
        == f"as of 2026-11-29: 3 of 4 offers acceptable; top: alpha at {k(4.0)} USD per 1,000 successful tasks; saved "
        "as run 1\n"
    )
    assert result.stderr == "saved run 1\n"
    [saved] = list_runs(ws)
    assert (saved.id, saved.label, saved.top_offer, saved.acceptable, saved.offers) == (1, "Nov RFP", "alpha", 3, 4)
    assert saved.top_cost_per_task == pytest.approx(cost(4.00))


def test_evaluate_without_save_keeps_no_history(ws):
    result = run("evaluate", "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0
    assert (
        result.stdout
        == f"as of 2026-11-29: 3 of 4 offers acceptable; top: alpha at {k(4.0)} USD per 1,000 successful tasks\n"
    )
    assert not (ws / ".procure").exists()


def test_evaluate_json_is_the_saved_evaluation(ws):
    result = save(ws, "--format", "json")
    ev = json.loads(result.stdout)  # stdout carries only the JSON
    assert ev["as_of"] == AS_OF and ev["summary"]["recommended"] == "alpha"
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        stored = db.execute("SELECT evaluation FROM runs WHERE id = 1").fetchone()[0]
    assert stored == result.stdout
    # the same Evaluation as compare's but for the command that wrote it and the recommendation,
    # which compare adds (decision.recommend)
    compared = json.loads(run("compare", "-w", ws, "--as-of", AS_OF, "--format", "json").stdout)
    assert compared["command"] == "compare" and ev["command"] == "evaluate"
    unlike = ("command", "recommendation")
    assert {k: v for k, v in ev.items() if k not in unlike} == {k: v for k, v in compared.items() if k not in unlike}


def test_history_table(two_runs):
    result = run("history", "-w", two_runs)
    assert result.exit_code == 0, result.stderr
    assert "Saved runs" in result.stdout
    first, second = row(result.stdout, "1"), row(result.stdout, "2")
    assert first[2:] == ["2026-11-29", "Nov RFP", "alpha", k(4.0), "3 of 4"]
    assert second[2:] == ["2026-11-29", "Dec re-check", "bravo", k(5.0), "3 of 4"]
    assert first[1].endswith("+00:00")


def test_history_json(two_runs):
    from procure.analysis.history import saved_runs
    from procure.render.envelope import dumps
    from procure.render.history import history_json

    document = json.loads(dumps("history", history_json(saved_runs(two_runs))))
    assert document["command"] == "history" and document["schema_version"] == "1.1"
    runs = document["runs"]
    assert [set(r) for r in runs] == [
        {
            "id",
            "saved_at",
            "as_of",
            "label",
            "top_offer",
            "top_cost_per_task",
            "top_cost_per_1000_tasks",
            "offers",
            "acceptable",
        }
    ] * 2
    assert [(r["id"], r["as_of"], r["label"], r["top_offer"], r["offers"], r["acceptable"]) for r in runs] == [
        (1, AS_OF, "Nov RFP", "alpha", 4, 3),
        (2, AS_OF, "Dec re-check", "bravo", 4, 3),
    ]
    assert runs[0]["top_cost_per_task"] == pytest.approx(cost(4.00))
    assert runs[1]["top_cost_per_task"] == pytest.approx(cost(5.00))
    assert runs[1]["top_cost_per_1000_tasks"] == pytest.approx(
        cost(5.00) * 1000
    )  # the same figure in the unit the tables print


@pytest.mark.parametrize("label", ["[draft] Nov RFP", "Dec [/x] re-check"])
def test_history_shows_labels_literally(ws, label):
    save(ws, "--label", label)
    result = run("history", "-w", ws)
    assert result.exit_code == 0
    assert row(result.stdout, "1")[3] == label


# --- diff ---------------------------------------------------------------------------------------


def test_diff_without_arguments_compares_the_last_two_runs(two_runs):
    result = run("diff", "-w", two_runs)
    assert result.exit_code == 0, result.stderr
    assert row(result.stdout, "alpha") == [
        "alpha",
        "present",
        "1 to 2",
        "T-MC",
        "yes",
        f"{k(4.0)} to {k(5.5)}",
        "+37.5%",
    ]
    assert row(result.stdout, "bravo") == [
        "bravo",
        "present",
        "2 to 1",
        "T-MC",
        "yes",
        k(5.0),
        "—",
    ]  # unchanged cost: no change shown
    assert row(result.stdout, "charlie") == ["charlie", "present", "—", "T-MC", "no", k(3.5), "—"]
    assert "run 1 (as of 2026-11-29) against run 2 (as of 2026-11-29)." in result.stdout
    assert "The cheapest acceptable offer changed from alpha to bravo." in result.stdout
    assert "BREACH" not in result.stdout  # diff reports, it does not judge


def test_diff_json(two_runs):
    payload = json.loads(differences(two_runs))
    assert (payload["base"], payload["head"], payload["base_as_of"], payload["head_as_of"]) == (
        "run 1",
        "run 2",
        AS_OF,
        AS_OF,
    )
    assert (payload["leader_before"], payload["leader_after"], payload["new_cheapest"]) == ("alpha", "bravo", True)
    assert payload["assumptions"] == []
    assert "breached" not in payload
    alpha = next(o for o in payload["offers"] if o["id"] == "alpha")
    assert (alpha["status"], alpha["rank_before"], alpha["rank_after"]) == ("present", 1, 2)
    assert alpha["cost_before"] == pytest.approx(cost(4.00))
    assert alpha["cost_after"] == pytest.approx(cost(5.50))
    assert alpha["cost_change"] == pytest.approx(1.50 / TASKS)
    assert alpha["cost_change_per_1000_tasks"] == pytest.approx(1.50 / TASKS * 1000)  # beside it, per 1,000 tasks
    assert alpha["cost_change_share"] == pytest.approx(0.375)


def test_diff_markdown(two_runs):
    text = differences(two_runs, fmt="markdown")
    assert text.startswith("## Changes between two evaluations\n\n")
    assert "Thresholds" not in text and "\x1b[" not in text
    assert "run 1 (as of 2026-11-29) against run 2 (as of 2026-11-29)." in text
    assert (
        "| Offer | Status | Rank | Grade | Acceptable | Cost per 1k tasks | Change |\n|---|---|---|---|---|---|---|\n"
        in text
    )
    assert f"| alpha | present | 1 to 2 | T-MC | yes | {k(4.0)} to {k(5.5)} | +37.5% |" in text


def test_diff_with_run_ids(two_runs):
    edit(two_runs / "procure.yaml", "fte_cost_year: 219000", "fte_cost_year: 250000")
    assert saved(two_runs, "run 3") == 3  # same prices as run 2, another staff cost
    forward = json.loads(differences(two_runs, "1", "3"))
    assert (forward["base"], forward["head"]) == ("run 1", "run 3")
    assert forward["assumptions"] == [{"path": "assumptions.fte_cost_year", "before": 219000.0, "after": 250000.0}]
    assert next(o for o in forward["offers"] if o["id"] == "alpha")["cost_change_share"] == pytest.approx(0.375)
    backward = json.loads(differences(two_runs, "3", "1"))
    assert backward["assumptions"] == [{"path": "assumptions.fte_cost_year", "before": 250000.0, "after": 219000.0}]
    assert next(o for o in backward["offers"] if o["id"] == "alpha")["cost_change_share"] == pytest.approx(
        4.00 / 5.50 - 1
    )
    one = json.loads(differences(two_runs, "1"))  # one run: against the latest
    assert (one["base"], one["head"]) == ("run 1", "run 3")
    last_two = json.loads(differences(two_runs))
    assert (last_two["base"], last_two["head"]) == ("run 2", "run 3")
    assert all(o["cost_change"] == 0.0 for o in last_two["offers"])


def test_diff_two_evaluation_json_files(ws, tmp_path):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    assert run("compare", "-w", ws, "--as-of", AS_OF, "-f", "json", "-o", base).exit_code == 0
    set_price(ws, "alpha", "4.00", "5.50")
    assert run("compare", "-w", ws, "--as-of", AS_OF, "-f", "json", "-o", head).exit_code == 0

    as_json = run("diff", base, head, "-w", ws, "-f", "json")
    assert as_json.exit_code == 0, as_json.stderr
    payload = json.loads(as_json.stdout)
    assert (payload["base"], payload["head"]) == (str(base), str(head))
    assert (payload["leader_before"], payload["leader_after"]) == ("alpha", "bravo")
    alpha = next(o for o in payload["offers"] if o["id"] == "alpha")
    assert alpha["cost_change_share"] == pytest.approx(0.375)

    table = run("diff", base, head, "-w", ws)
    assert table.exit_code == 0
    assert row(table.stdout, "alpha") == [
        "alpha",
        "present",
        "1 to 2",
        "T-MC",
        "yes",
        f"{k(4.0)} to {k(5.5)}",
        "+37.5%",
    ]
    markdown = run("diff", base, head, "-w", ws, "-f", "markdown")
    assert markdown.exit_code == 0
    assert f"| alpha | present | 1 to 2 | T-MC | yes | {k(4.0)} to {k(5.5)} | +37.5% |" in markdown.stdout
    assert not (ws / ".procure").exists()  # files alone need no history


def test_diff_a_file_against_a_run(ws, tmp_path):
    base = tmp_path / "base.json"
    evaluation_file(ws, base)
    set_price(ws, "alpha", "4.00", "4.40")
    assert saved(ws) == 1
    payload = json.loads(differences(ws, base, "1"))
    assert (payload["base"], payload["head"]) == (str(base), "run 1")
    assert next(o for o in payload["offers"] if o["id"] == "alpha")["cost_change_share"] == pytest.approx(0.10)


def test_diff_errors(ws, tmp_path):
    none_yet = run("diff", "-w", ws)
    assert none_yet.exit_code == 2
    assert ".procure/history.sqlite: no saved runs yet: save one with `procure evaluate --save`" in none_yet.stderr
    assert none_yet.stdout == ""
    save(ws)
    only_one = run("diff", "-w", ws)
    assert only_one.exit_code == 2
    assert "only one run to compare: name BASE, or save another run" in only_one.stderr
    unknown = run("diff", "1", "9", "-w", ws)
    assert unknown.exit_code == 2 and "no saved run 9; did you mean run 1? (saved runs: 1)" in unknown.stderr
    missing = run("diff", tmp_path / "nope.json", "1", "-w", ws)
    assert missing.exit_code == 2 and "neither a run id nor a readable Evaluation JSON file" in missing.stderr
    (tmp_path / "other.json").write_text("[1, 2]", encoding="utf-8")
    other = run("diff", tmp_path / "other.json", "1", "-w", ws)
    assert other.exit_code == 2 and "not an Evaluation this procure reads" in other.stderr


# --- no history, damaged history ----------------------------------------------------------------


def test_history_without_runs_says_so_in_one_line_and_succeeds(ws):
    # an empty history is an answer, not an error: exit 0, one line, and nothing created
    result = run("history", "-w", ws)
    assert result.exit_code == 0
    assert result.stdout == "No saved runs yet: save one with `procure evaluate --save`.\n"
    assert result.stderr == ""
    assert not (ws / ".procure").exists()
    # diff has nothing to compare: that stays an error
    assert run("diff", "-w", ws).exit_code == 2


def test_corrupt_history_is_reported_by_every_command_and_left_untouched(ws):
    garbage = bytes(range(256)) * 20
    (ws / ".procure").mkdir()
    (ws / HISTORY_FILE).write_bytes(garbage)
    for args in (("history",), ("diff",), ("evaluate", "--save", "--as-of", AS_OF), ("reevaluate", "--as-of", AS_OF)):
        result = run(*args, "-w", ws)
        assert result.exit_code == 2, args
        assert (
            ".procure/history.sqlite: the history database is unreadable (file is not a database); move it away to "
            "start a new history, nothing was changed" in result.stderr
        )
        assert (ws / HISTORY_FILE).read_bytes() == garbage
    assert [p.name for p in (ws / ".procure").iterdir()] == ["history.sqlite"]


def test_newer_history_is_reported(ws):
    save(ws)
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        db.execute("PRAGMA user_version = 99")
    saved = (ws / HISTORY_FILE).read_bytes()
    for args in (
        ("history",),
        ("diff", "1", "1"),
        ("evaluate", "--save", "--as-of", AS_OF),
        ("reevaluate", "--as-of", AS_OF),
    ):
        result = run(*args, "-w", ws)
        assert result.exit_code == 2, args
        assert (
            "the history was written by a newer procure (schema 99; this one reads 1): upgrade procure" in result.stderr
        )
    assert (ws / HISTORY_FILE).read_bytes() == saved


def test_damaged_run_pages_exit_2(ws):
    save(ws)
    path = ws / HISTORY_FILE
    with sqlite3.connect(path) as db:
        try:
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
            overflow = [
                r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name = 'runs' AND pagetype = 'overflow'")
            ]
        except sqlite3.OperationalError:
            pytest.skip("this SQLite has no dbstat table")
    data = bytearray(path.read_bytes())
    for page in overflow:
        data[(page - 1) * page_size : (page - 1) * page_size + 4] = b"\xff\xff\xff\x00"
    path.write_bytes(bytes(data))
    result = run("diff", "1", "1", "-w", ws)
    assert result.exit_code == 2
    assert "history.sqlite" in result.stderr
