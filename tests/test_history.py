"""Run history (procure/analysis/history.py): saving and loading, the differences between two evaluations,
the thresholds of a re-evaluation, several processes saving at once, and damaged histories.

The fixture tests/data/history_base is built so that the figures are easy by hand: no staff, no
software, no fees and reliability factors of 1, so an offer's cost per successful task is its
GPU-hour price / 773.712 (300 tok/s x 3,600 s / 1,000 output tokens x 0.995 SLA x 0.9 success
x 0.8 utilization) / 0.980056 (the means of the availability and utilization factors at the point). alpha 4.00 (rank 1),
bravo 5.00 (rank 2, valid until 2026-12-31), delta 6.00
(bare metal, rank 3), charlie 3.50 (cheapest, but its region eu-west is not allowed).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from pointmeans import DELIVERY_MEAN

from procure.analysis.evaluate import MonteCarlo, evaluate
from procure.analysis.history import (
    CONDITIONS,
    HISTORY_FILE,
    AssumptionChange,
    Breach,
    breaches,
    diff,
    latest_run_id,
    list_runs,
    load_evaluation,
    load_run,
    save_run,
)
from procure.errors import InputError
from procure.io.workspace import load_workspace

AS_OF = date(2026, 11, 29)
# successful tasks per GPU-hour of every offer: 773.712 as stated, availability and utilization each x the mean of its
# factor at the point (tests/pointmeans.py: 0.996667 x 0.983333): 758.2810
TASKS = 300 * 3600 / 1000 * 0.995 * 0.9 * 0.8 * DELIVERY_MEAN
assert TASKS == pytest.approx(773.712 * 0.980056, rel=1e-6)


def cost(price: float) -> float:
    return price / TASKS


def evaluation(root: Path, as_of: date = AS_OF, monte_carlo: MonteCarlo | None = None):
    return evaluate(load_workspace(root), as_of, monte_carlo)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} not found once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def set_price(root: Path, offer_id: str, old: str, new: str) -> None:
    edit(root / "offers" / f"{offer_id}.yaml", f"gpu_hour: {old}\n", f"gpu_hour: {new}\n")


def history_bytes(root: Path) -> bytes:
    return (root / HISTORY_FILE).read_bytes()


@pytest.fixture
def ws(workspace_copy) -> Path:
    return workspace_copy("history_base")


def test_fixture_figures_by_hand(ws):
    ev = evaluation(ws)
    assert [(o.id, o.rank) for o in ev.offers] == [("alpha", 1), ("bravo", 2), ("delta", 3), ("charlie", None)]
    for offer_id, price in (("alpha", 4.00), ("bravo", 5.00), ("delta", 6.00), ("charlie", 3.50)):
        assert ev.offer(offer_id).metrics["cost_per_task"] == pytest.approx(cost(price), rel=1e-12)
    assert ev.offer("charlie").reasons == ["region eu-west is not among the allowed regions (us-east, us-west)"]
    assert ev.summary.recommended == "alpha"


# --- saving and loading ------------------------------------------------------------------------


@pytest.mark.parametrize("monte_carlo", [None, MonteCarlo(draws=200, seed=3)], ids=["plain", "uncertainty"])
def test_save_and_load_round_trip(ws, monte_carlo):
    ev = evaluation(ws, monte_carlo=monte_carlo)
    run_id = save_run(ws, ev, "Nov RFP")
    assert run_id == 1
    loaded = load_run(ws, run_id)
    assert loaded == ev
    assert loaded.to_json() == ev.to_json()  # byte-identical JSON
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        stored, inputs = db.execute("SELECT evaluation, inputs FROM runs WHERE id = ?", (run_id,)).fetchone()
    assert stored == ev.to_json()
    assert json.loads(inputs) == [{"path": i.path, "sha256": i.sha256} for i in ev.inputs]
    assert {i["path"] for i in json.loads(inputs)} == {
        "procure.yaml",
        "grades/T-BM.yaml",
        "grades/T-MC.yaml",
        "offers/alpha.yaml",
        "offers/bravo.yaml",
        "offers/charlie.yaml",
        "offers/delta.yaml",
    }


def test_runs_get_increasing_ids_and_load_each_its_own(ws):
    first = evaluation(ws)
    set_price(ws, "alpha", "4.00", "4.40")
    second = evaluation(ws)
    assert save_run(ws, first) == 1
    assert save_run(ws, second) == 2
    assert load_run(ws, 1) == first
    assert load_run(ws, 2) == second
    assert load_run(ws, 2).offer("alpha").metrics["cost_per_task"] == pytest.approx(cost(4.40))
    assert latest_run_id(ws) == 2
    assert latest_run_id(ws, before=2) == 1
    assert latest_run_id(ws, before=1) is None


def test_list_runs_fields(ws):
    before = datetime.now(tz=UTC).replace(microsecond=0)
    save_run(ws, evaluation(ws), "Nov RFP")
    set_price(ws, "alpha", "4.00", "5.50")  # bravo (5.00) leads
    save_run(ws, evaluation(ws, date(2026, 12, 1)))
    save_run(ws, evaluation(ws, date(2027, 7, 1)), "all expired")  # every offer is past its valid_until
    after = datetime.now(tz=UTC)
    runs = list_runs(ws)
    assert [r.id for r in runs] == [1, 2, 3]
    first, second, third = runs
    assert (first.as_of, first.label, first.top_offer, first.offers, first.acceptable) == (
        AS_OF,
        "Nov RFP",
        "alpha",
        4,
        3,
    )
    assert first.top_cost_per_task == pytest.approx(cost(4.00))
    assert (second.as_of, second.label, second.top_offer, second.offers, second.acceptable) == (
        date(2026, 12, 1),
        None,
        "bravo",
        4,
        3,
    )
    assert second.top_cost_per_task == pytest.approx(cost(5.00))
    assert (third.label, third.top_offer, third.top_cost_per_task, third.offers, third.acceptable) == (
        "all expired",
        None,
        None,
        4,
        0,
    )
    for run in runs:
        saved = datetime.fromisoformat(run.saved_at)
        assert saved.utcoffset().total_seconds() == 0  # UTC
        assert before <= saved <= after


def test_load_evaluation_reads_a_run_id_or_a_json_file(ws, tmp_path):
    ev = evaluation(ws)
    save_run(ws, ev)
    assert load_evaluation(ws, "1") == (ev, "run 1")
    path = tmp_path / "evaluation.json"
    path.write_text(ev.to_json(), encoding="utf-8")
    assert load_evaluation(ws, str(path)) == (ev, str(path))
    with pytest.raises(InputError, match="neither a run id nor a readable Evaluation JSON file"):
        load_evaluation(ws, str(tmp_path / "missing.json"))
    (tmp_path / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(InputError, match="not an Evaluation this procure reads"):
        load_evaluation(ws, str(tmp_path / "other.json"))
    with pytest.raises(InputError, match=r"no saved run 7; did you mean run 1\? \(saved runs: 1\)"):
        load_run(ws, 7)


# --- no history, damaged history -----------------------------------------------------------------


def test_no_history_yet_is_a_clear_error_and_creates_nothing(ws):
    assert list_runs(ws) == []  # listing an empty history is an answer, not an error
    for read in (lambda: latest_run_id(ws), lambda: load_run(ws, 1), lambda: load_evaluation(ws, "1")):
        with pytest.raises(InputError) as caught:
            read()
        assert (
            str(caught.value) == ".procure/history.sqlite: no saved runs yet: save one with `procure evaluate --save`"
        )
    assert not (ws / ".procure").exists()


GARBAGE = b"this is not a SQLite database\x00\xff\xfe" * 200


def test_corrupt_history_is_reported_and_left_untouched(ws):
    ev = evaluation(ws)
    path = ws / HISTORY_FILE
    path.parent.mkdir()
    path.write_bytes(GARBAGE)
    for use in (
        lambda: list_runs(ws),
        lambda: latest_run_id(ws),
        lambda: load_run(ws, 1),
        lambda: save_run(ws, ev, "x"),
    ):
        with pytest.raises(InputError) as caught:
            use()
        message = str(caught.value)
        assert message.startswith(
            ".procure/history.sqlite: the history database is unreadable (file is not a database)"
        )
        assert "move it away to start a new history, nothing was changed" in message
        assert path.read_bytes() == GARBAGE
    assert sorted(p.name for p in path.parent.iterdir()) == ["history.sqlite"]  # no journal left behind


def test_damaged_pages_of_a_saved_run_are_an_input_error(ws):
    save_run(ws, evaluation(ws))
    path = ws / HISTORY_FILE
    with sqlite3.connect(path) as db:
        try:
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
            overflow = [
                row[0] for row in db.execute("SELECT pageno FROM dbstat WHERE name = 'runs' AND pagetype = 'overflow'")
            ]
        except sqlite3.OperationalError:
            pytest.skip("this SQLite has no dbstat table to find the pages of a run")
    assert overflow  # the Evaluation JSON is far larger than a page
    data = bytearray(path.read_bytes())
    for page in overflow:  # point every overflow page's "next page" past the end of the file
        start = (page - 1) * page_size
        data[start : start + 4] = b"\xff\xff\xff\x00"
    path.write_bytes(bytes(data))
    assert [r.id for r in list_runs(ws)] == [1]  # the runs table itself still reads
    with pytest.raises(InputError, match="unreadable"):
        load_run(ws, 1)


def test_newer_schema_is_reported_and_left_untouched(ws):
    ev = evaluation(ws)
    save_run(ws, ev)
    with sqlite3.connect(ws / HISTORY_FILE) as db:
        db.execute("PRAGMA user_version = 99")
    saved = history_bytes(ws)
    expected = (
        ".procure/history.sqlite: the history was written by a newer procure (schema 99; this one reads 1): "
        "upgrade procure"
    )
    for use in (lambda: list_runs(ws), lambda: latest_run_id(ws), lambda: load_run(ws, 1), lambda: save_run(ws, ev)):
        with pytest.raises(InputError) as caught:
            use()
        assert str(caught.value) == expected
    assert history_bytes(ws) == saved


# --- several processes at once ------------------------------------------------------------------

SAVER = """
import sys, time
from datetime import date
from pathlib import Path
from procure.analysis.evaluate import evaluate
from procure.analysis.history import save_run
from procure.io.workspace import load_workspace
root, go, label = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
ev = evaluate(load_workspace(root), date(2026, 11, 29))
Path(f"{go}.{label}").touch()  # ready: everything slow is done
deadline = time.monotonic() + 60
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.001)
print(save_run(root, ev, label))
"""


def test_concurrent_saves_are_all_stored_with_distinct_ids(ws, tmp_path):
    """Four processes save at the same moment into a history that does not exist yet (so they also
    race to create the schema)."""
    go = tmp_path / "go"
    labels = [f"proc-{i}" for i in range(4)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAVER, str(ws), str(go), label],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for label in labels
    ]
    try:
        deadline = time.monotonic() + 60
        while not all(Path(f"{go}.{label}").exists() for label in labels):
            assert time.monotonic() < deadline, "the savers did not get ready"
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs if p.poll() is not None]
            time.sleep(0.01)
        assert not (ws / HISTORY_FILE).exists()
        go.touch()
        outputs = [p.communicate(timeout=90) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in outputs]
    ids = [int(out.strip()) for out, _ in outputs]
    assert sorted(ids) == [1, 2, 3, 4]
    runs = list_runs(ws)
    assert sorted(r.id for r in runs) == [1, 2, 3, 4]
    assert {r.id: r.label for r in runs} == dict(zip(ids, labels))
    expected = evaluation(ws).to_json()
    assert all(load_run(ws, i).to_json() == expected for i in ids)


# --- differences --------------------------------------------------------------------------------


def test_diff_price_rise_changes_cost_rank_and_leader(ws):
    base = evaluation(ws)
    set_price(ws, "alpha", "4.00", "5.50")  # alpha falls behind bravo (5.00)
    result = diff(base, evaluation(ws), "run 1", "run 2")
    assert (result.base, result.head, result.base_as_of, result.head_as_of) == ("run 1", "run 2", AS_OF, AS_OF)
    assert (result.leader_before, result.leader_after, result.new_cheapest) == ("alpha", "bravo", True)
    assert [o.id for o in result.offers] == ["alpha", "bravo", "charlie", "delta"]
    assert {o.status for o in result.offers} == {"present"}
    alpha, bravo, charlie, delta = result.offers
    assert (alpha.rank_before, alpha.rank_after, alpha.rank_changed) == (1, 2, True)
    assert (bravo.rank_before, bravo.rank_after, bravo.rank_changed) == (2, 1, True)
    assert (delta.rank_before, delta.rank_after, delta.rank_changed) == (3, 3, False)
    assert (charlie.rank_before, charlie.rank_after, charlie.rank_changed) == (None, None, False)
    assert alpha.cost_before == pytest.approx(cost(4.00))
    assert alpha.cost_after == pytest.approx(cost(5.50))
    assert alpha.cost_change == pytest.approx(1.50 / TASKS)
    assert alpha.cost_change_share == pytest.approx(0.375)  # 1.50 / 4.00
    for other in (bravo, charlie, delta):
        assert other.cost_change == 0.0 and other.cost_change_share == 0.0
    assert not any(o.grade_changed or o.gates_changed for o in result.offers)
    assert result.assumptions == []


def test_diff_new_and_removed_offers(ws):
    base = evaluation(ws)
    echo = (ws / "offers" / "alpha.yaml").read_text(encoding="utf-8")
    echo = (
        echo.replace("id: alpha", "id: echo")
        .replace("vendor: Alpha Cloud", "vendor: Echo Cloud")
        .replace("gpu_hour: 4.00", "gpu_hour: 4.50")
    )
    (ws / "offers" / "echo.yaml").write_text(echo, encoding="utf-8")
    (ws / "offers" / "delta.yaml").unlink()
    result = diff(base, evaluation(ws), "run 1", "run 2")
    by_id = {o.id: o for o in result.offers}
    assert list(by_id) == ["alpha", "bravo", "charlie", "delta", "echo"]
    echo_diff, delta = by_id["echo"], by_id["delta"]
    assert (echo_diff.status, echo_diff.vendor, echo_diff.rank_before, echo_diff.rank_after, echo_diff.grade_after) == (
        "new",
        "Echo Cloud",
        None,
        2,
        "T-MC",
    )
    assert (echo_diff.cost_before, echo_diff.cost_change, echo_diff.cost_change_share) == (None, None, None)
    assert echo_diff.cost_after == pytest.approx(cost(4.50))
    assert (delta.status, delta.vendor, delta.rank_before, delta.rank_after, delta.grade_before) == (
        "removed",
        "Delta Metal",
        3,
        None,
        "T-BM",
    )
    assert delta.cost_before == pytest.approx(cost(6.00))
    assert (delta.cost_after, delta.cost_change) == (None, None)
    assert not (echo_diff.rank_changed or delta.rank_changed)  # new and removed offers are not rank changes
    assert (by_id["bravo"].rank_before, by_id["bravo"].rank_after) == (2, 3)  # echo slots in before bravo
    assert result.new_cheapest is False
    assert breaches(result, 0.0, ("rank-change",)) == [
        Breach(condition="rank-change", detail="bravo: rank from 2 to 3")
    ]


def test_diff_expired_offer(ws):
    base = evaluation(ws)
    head = evaluation(ws, date(2027, 1, 1))  # bravo is valid until 2026-12-31
    result = diff(base, head, "run 1", "run 2")
    by_id = {o.id: o for o in result.offers}
    bravo = by_id["bravo"]
    assert bravo.status == "expired"
    assert (bravo.rank_before, bravo.rank_after, bravo.acceptable_before, bravo.acceptable_after) == (
        2,
        None,
        True,
        False,
    )
    assert (bravo.gates_failed_before, bravo.gates_failed_after) == ([], ["validity"])
    assert bravo.gates_changed and not bravo.rank_changed
    assert (by_id["delta"].status, by_id["delta"].rank_before, by_id["delta"].rank_after) == ("present", 3, 2)
    assert {by_id[i].status for i in ("alpha", "charlie", "delta")} == {"present"}
    assert result.head_as_of == date(2027, 1, 1)
    assert result.new_cheapest is False
    # the expired offer's own cost did not move; it no longer counts for max-increase either way
    assert breaches(result, 0.0, ("gate-change",)) == [
        Breach(condition="gate-change", detail="bravo: failed gates from none to validity")
    ]
    assert breaches(result, 0.0, ("rank-change",)) == [
        Breach(condition="rank-change", detail="delta: rank from 3 to 2")
    ]


def test_an_offer_already_expired_in_both_runs_is_present(ws):
    result = diff(evaluation(ws, date(2027, 1, 1)), evaluation(ws, date(2027, 1, 2)), "a", "b")
    bravo = next(o for o in result.offers if o.id == "bravo")
    assert bravo.status == "present" and not bravo.gates_changed


def test_diff_gate_change_makes_an_offer_acceptable(ws):
    base = evaluation(ws)
    edit(ws / "offers" / "charlie.yaml", "region: eu-west", "region: us-east")
    result = diff(base, evaluation(ws), "run 1", "run 2")
    charlie = next(o for o in result.offers if o.id == "charlie")
    assert (charlie.acceptable_before, charlie.acceptable_after) == (False, True)
    assert (charlie.gates_failed_before, charlie.gates_failed_after) == (["region"], [])
    assert (charlie.rank_before, charlie.rank_after, charlie.status) == (None, 1, "present")
    assert charlie.gates_changed and charlie.rank_changed
    assert (result.leader_before, result.leader_after) == ("alpha", "charlie")


def test_diff_grade_change(ws):
    base = evaluation(ws)
    # delta becomes a managed cluster whose provider runs monitoring: T-MC instead of T-BM, same cost
    edit(ws / "offers" / "delta.yaml", "kind: bare_metal", "kind: managed_cluster")
    edit(ws / "offers" / "delta.yaml", "  monitoring: customer", "  monitoring: provider")
    result = diff(base, evaluation(ws), "run 1", "run 2")
    delta = next(o for o in result.offers if o.id == "delta")
    assert (delta.grade_before, delta.grade_after, delta.grade_changed) == ("T-BM", "T-MC", True)
    assert (delta.rank_before, delta.rank_after, delta.acceptable_after) == (3, 3, True)
    assert delta.cost_change == 0.0
    assert [o.id for o in result.offers if o.grade_changed] == ["delta"]


def test_diff_lists_changed_assumptions_with_before_and_after(ws):
    base = evaluation(ws)
    edit(ws / "procure.yaml", "fte_cost_year: 219000", "fte_cost_year: 250000")
    edit(
        ws / "procure.yaml", "hardware_repair: {fte_fixed: 0.0", "hardware_repair: {fte_fixed: 1.0"
    )  # every offer leaves it to the provider
    edit(ws / "procure.yaml", "min_availability: 0.99", "min_availability: 0.995")
    edit(ws / "procure.yaml", "name: history-chat", "name: history-chat-v2")
    result = diff(base, evaluation(ws), "run 1", "run 2")
    assert result.assumptions == [
        AssumptionChange(path="assumptions.fte_cost_year", before=219000, after=250000),
        AssumptionChange(path="assumptions.jobs.hardware_repair.fte_fixed", before=0, after=1),
        AssumptionChange(path="policy.min_availability", before=0.99, after=0.995),
        AssumptionChange(path="workload.name", before="history-chat", after="history-chat-v2"),
    ]
    # none of these moves a cost: no offer leaves hardware repair to the buyer, and staff cost only counts for the
    # buyer's jobs
    assert all(o.cost_change == 0.0 for o in result.offers)


def test_diff_of_an_evaluation_with_itself_is_empty(ws):
    ev = evaluation(ws)
    result = diff(ev, ev, "a", "a")
    assert result.assumptions == [] and not result.new_cheapest
    assert not any(o.rank_changed or o.grade_changed or o.gates_changed for o in result.offers)
    assert breaches(result, 0.0, CONDITIONS) == []


# --- thresholds ---------------------------------------------------------------------------------


def test_a_ten_percent_price_rise_fails_five_percent_and_passes_fifteen(ws):
    base = evaluation(ws)
    set_price(ws, "alpha", "4.00", "4.40")  # still below bravo (5.00): nothing but the cost moves
    result = diff(base, evaluation(ws), "run 1", "run 2")
    alpha = result.offers[0]
    assert alpha.cost_change == pytest.approx(0.40 / TASKS)
    assert alpha.cost_change_share == pytest.approx(0.10)
    assert breaches(result, 0.05, ()) == [
        Breach(condition="max-increase", detail="alpha: cost per task up 10.0% (limit 5.0%)")
    ]
    assert breaches(result, 0.15, ()) == []
    assert breaches(result, 0.15, CONDITIONS) == []
    assert breaches(result, None, CONDITIONS) == []


def test_max_increase_counts_only_offers_acceptable_in_both_runs_and_ignores_falls(ws):
    base = evaluation(ws)
    set_price(ws, "charlie", "3.50", "7.00")  # not acceptable (region): +100% does not count
    set_price(ws, "bravo", "5.00", "4.50")  # a fall never breaches
    result = diff(base, evaluation(ws), "run 1", "run 2")
    by_id = {o.id: o for o in result.offers}
    assert by_id["charlie"].cost_change_share == pytest.approx(1.0)
    assert by_id["bravo"].cost_change_share == pytest.approx(-0.10)
    assert breaches(result, 0.0, ()) == []


def test_a_rise_of_exactly_the_limit_does_not_breach(ws):
    base = evaluation(ws)
    set_price(ws, "alpha", "4.00", "4.20")
    result = diff(base, evaluation(ws), "run 1", "run 2")
    assert breaches(result, 0.05, ()) == []


def _rank_swap(ws: Path) -> None:
    set_price(ws, "delta", "6.00", "4.80")  # delta overtakes bravo: ranks 2 and 3 swap, alpha still leads


def _new_leader(ws: Path) -> None:
    set_price(ws, "alpha", "4.00", "5.50")


def _grade(ws: Path) -> None:
    edit(ws / "offers" / "delta.yaml", "kind: bare_metal", "kind: managed_cluster")
    edit(ws / "offers" / "delta.yaml", "  monitoring: customer", "  monitoring: provider")


def _gate(ws: Path) -> None:
    # charlie, already out for its region, can no longer reach 100 tok/s per user either
    edit(
        ws / "offers" / "charlie.yaml", "points: [[50, 400], [100, 300], [150, 100]]", "points: [[50, 400], [80, 300]]"
    )


def _price(ws: Path) -> None:
    set_price(ws, "alpha", "4.00", "4.40")


SCENARIOS = {
    "rank-swap": (_rank_swap, {"rank-change": ["delta: rank from 3 to 2", "bravo: rank from 2 to 3"]}),
    "new-leader": (
        _new_leader,
        {
            "rank-change": ["alpha: rank from 1 to 2", "bravo: rank from 2 to 1"],
            "new-cheapest": ["cheapest acceptable offer from alpha to bravo"],
        },
    ),
    "grade": (_grade, {"grade-change": ["delta: grade from T-BM to T-MC"]}),
    "gate": (_gate, {"gate-change": ["charlie: failed gates from region to latency, region"]}),
    "price-only": (_price, {}),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_fail_on_condition_on_its_own(ws, scenario):
    change, expected = SCENARIOS[scenario]
    base = evaluation(ws)
    change(ws)
    result = diff(base, evaluation(ws), "run 1", "run 2")
    for condition in CONDITIONS:
        found = breaches(result, None, (condition,))
        assert {b.condition for b in found} <= {condition}
        assert sorted(b.detail for b in found) == sorted(expected.get(condition, [])), condition
    assert breaches(result, None, ()) == []  # no condition named, no limit: nothing breached
    together = breaches(result, None, CONDITIONS)
    assert sorted(b.detail for b in together) == sorted(d for details in expected.values() for d in details)


# --- eight processes saving at once, killed at random moments ---------------------------------------------

SAVED = re.compile(r"saved run (\d+)|as the baseline \(run (\d+)\)")


def _saver(ws: Path, kind: str, label: str) -> subprocess.Popen:
    args = ["evaluate", "--save"] if kind == "evaluate" else ["reevaluate", "--accept"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    return subprocess.Popen(
        [sys.executable, "-m", "procure", *args, "--label", label, "--as-of", AS_OF.isoformat(), "-w", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _writing(pid: int, journal: str) -> bool:
    """Whether process `pid` holds the history's rollback journal open: it is inside its write transaction."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == journal for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # ended meanwhile, or no /proc
        return False


@pytest.mark.slow
def test_eight_concurrent_savers_killed_at_random_moments_lose_no_reported_run(workspace_copy):
    """Two rounds of four `evaluate --save` and four `reevaluate --accept` at once, three of them killed
    (SIGKILL): every run a process reported as saved is in the history with its label, ids are distinct,
    SQLite's integrity check passes and every stored Evaluation is whole.

    The moments that matter are before the history is opened, while a process waits for the write lock,
    and inside the write transaction (the one a kill could tear). The first round kills at random moments
    over the first three seconds: start-up, evaluation and the first writes. The second kills each victim the
    moment it is seen holding the history's journal open (inside its transaction; on Linux, from /proc), or,
    if it is never caught there, once every other process has finished (waiting for the lock or about to
    write): those moments, which random ones hit only by chance, are the ones five random rounds were for."""
    ws = workspace_copy("history_base")
    database = ws / ".procure" / "history.sqlite"
    journal = os.path.realpath(database) + "-journal"
    rng = random.Random(17)
    reported: dict[int, str] = {}
    killed_total = 0
    for round_ in range(2):
        kinds = ["evaluate"] * 4 + ["reevaluate"] * 4
        labels = [f"r{round_} {kind} {i}" for i, kind in enumerate(kinds)]
        processes = [_saver(ws, kind, label) for kind, label in zip(kinds, labels)]
        victims = rng.sample(range(8), 3)
        if round_ == 0:
            moments = sorted((rng.uniform(0.05, 3.0), v) for v in victims)
            began = time.monotonic()
            for moment, victim in moments:
                time.sleep(max(0.0, moment - (time.monotonic() - began)))
                if processes[victim].poll() is None:
                    processes[victim].send_signal(signal.SIGKILL)
                    killed_total += 1
        else:
            waiting, deadline = set(victims), time.monotonic() + 300  # a hang guard: a round takes seconds
            while waiting and time.monotonic() < deadline:
                others_done = all(p.poll() is not None for i, p in enumerate(processes) if i not in victims)
                for victim in sorted(waiting):
                    if processes[victim].poll() is not None:
                        waiting.discard(victim)
                    elif others_done or _writing(processes[victim].pid, journal):
                        processes[victim].send_signal(signal.SIGKILL)
                        killed_total += 1
                        waiting.discard(victim)
                time.sleep(0.0005)
        for label, process in zip(labels, processes):
            stdout, stderr = process.communicate(timeout=120)
            if process.returncode == -signal.SIGKILL:
                continue
            assert process.returncode == 0, (label, process.returncode, stderr[-1500:])
            found = SAVED.search(stdout + stderr)
            assert found, (label, stdout, stderr)
            reported[int(found.group(1) or found.group(2))] = label
        with closing(sqlite3.connect(database)) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            stored = dict(db.execute("SELECT id, label FROM runs").fetchall())
            for (text,) in db.execute("SELECT evaluation FROM runs"):
                json.loads(text)
        for run_id, label in reported.items():
            assert stored.get(run_id) == label, f"run {run_id} ({label}) reported saved but lost"
    assert killed_total >= 4, "too few processes were still running when their moment came"
    assert len(list_runs(ws)) >= len(reported)
    after = save_run(ws, evaluate(load_workspace(ws), AS_OF), "after the kills")
    assert after > max(reported) and load_run(ws, after).as_of == AS_OF
