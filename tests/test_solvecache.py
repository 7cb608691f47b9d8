"""Solved plans kept on disk: the same program is read back, anything else is solved afresh."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.optimize
from clihelp import AS_OF, run
from planws import config, offer, write
from scipy.sparse import csr_array

from procure.analysis import milp as solving
from procure.io import solvecache

# min -5 x1 - 4 x2  subject to  6 x1 + 4 x2 <= 24,  x1 + 2 x2 <= 6,  x1, x2 >= 0 whole.
# By hand: the LP optimum is (3, 1.5); among whole points (4, 0) gives -20, (3, 1) -19, (2, 2) -18,
# so the optimum is (4, 0) at -20.
PROGRAM = dict(
    c=np.array([-5.0, -4.0]),
    A=csr_array(np.array([[6.0, 4.0], [1.0, 2.0]])),
    row_lb=np.array([-np.inf, -np.inf]),
    row_ub=np.array([24.0, 6.0]),
    integrality=np.array([1, 1]),
    lb=np.zeros(2),
    ub=np.full(2, np.inf),
    options={"time_limit": 10.0, "mip_rel_gap": 0.0, "disp": False},
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROCURE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def solver_calls(monkeypatch):
    calls = []
    real = scipy.optimize.milp

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.optimize, "milp", counted)
    return calls


def test_the_same_program_is_solved_once(cache, solver_calls):
    first = solving.solve_milp(**PROGRAM)
    again = solving.solve_milp(**PROGRAM)
    assert len(solver_calls) == 1 and len(list(cache.glob("*.npz"))) == 1
    for found in (first, again):
        assert found.status == 0 and found.fun == pytest.approx(-20) and list(np.round(found.x)) == [4, 0]


def test_a_longer_time_limit_is_the_same_program_a_changed_coefficient_is_not(cache, solver_calls):
    solving.solve_milp(**PROGRAM)
    solving.solve_milp(**{**PROGRAM, "options": {**PROGRAM["options"], "time_limit": 60.0}})
    assert len(solver_calls) == 1
    # With 6 x1 + 4 x2 <= 20 instead: (3, 0) gives -15, (2, 2) -18, (3, 1) breaks 22 > 20: optimum (2, 2) at -18.
    changed = solving.solve_milp(**{**PROGRAM, "row_ub": np.array([20.0, 6.0])})
    assert len(solver_calls) == 2 and changed.fun == pytest.approx(-18) and list(np.round(changed.x)) == [2, 2]
    assert len(list(cache.glob("*.npz"))) == 2


@pytest.mark.parametrize("damage", ["garbage", "infeasible", "objective", "other key"])
def test_a_damaged_or_edited_solution_is_solved_afresh(cache, solver_calls, damage):
    solving.solve_milp(**PROGRAM)
    (kept,) = cache.glob("*.npz")
    key = kept.stem
    if damage == "garbage":
        kept.write_bytes(b"not a solution")
    elif damage == "infeasible":  # (5, 0) breaks 6 x1 + 4 x2 <= 24
        np.savez_compressed(kept, key=np.array(key), x=np.array([5.0, 0.0]), fun=np.array(-25.0), mip_gap=np.array(0.0))
    elif damage == "objective":  # (3, 1) is feasible, but its objective is -19, not the -20 claimed
        np.savez_compressed(kept, key=np.array(key), x=np.array([3.0, 1.0]), fun=np.array(-20.0), mip_gap=np.array(0.0))
    else:
        np.savez_compressed(
            kept, key=np.array("0" * 64), x=np.array([4.0, 0.0]), fun=np.array(-20.0), mip_gap=np.array(0.0)
        )
    found = solving.solve_milp(**PROGRAM)
    assert len(solver_calls) == 2 and list(np.round(found.x)) == [4, 0] and found.fun == pytest.approx(-20)


def test_off_or_unwritable_the_plan_is_solved_all_the_same(tmp_path, monkeypatch, solver_calls):
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")
    assert solvecache.folder() is None
    assert solving.solve_milp(**PROGRAM).fun == pytest.approx(-20)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("PROCURE_CACHE_DIR", str(blocked / "cache"))
    assert solving.solve_milp(**PROGRAM).fun == pytest.approx(-20)
    assert len(solver_calls) == 2 and blocked.read_text() == "not a folder"


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("PROCURE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert solvecache.folder() == tmp_path / "procure"


def test_an_unproven_result_is_not_kept(cache, monkeypatch):
    class TimedOut:  # what milp returns when the time limit stops it with a feasible point
        x, status, fun, mip_gap = np.array([3.0, 1.0]), 1, -19.0, 0.05

    monkeypatch.setattr(scipy.optimize, "milp", lambda *a, **k: TimedOut())
    assert solving.solve_milp(**PROGRAM).status == 1
    assert not cache.exists() or not list(cache.glob("*.npz"))


def test_only_the_newest_solutions_are_kept(cache, monkeypatch):
    monkeypatch.setattr(solvecache, "KEEP", 2)
    for bound in (24.0, 20.0, 16.0):
        solving.solve_milp(**{**PROGRAM, "row_ub": np.array([bound, 6.0])})
    assert len(list(cache.glob("*.npz"))) == 2


def test_a_plan_read_back_is_the_plan_solved(cache, tmp_path, solver_calls):
    cfg = config()
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=2.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 3.0, "max_gpus": 1000}),
    ]
    ws = write(tmp_path / "ws", cfg, offers)
    first = run("plan", "--format", "json", "--as-of", AS_OF, "-w", ws)
    solved = len(solver_calls)
    again = run("plan", "--format", "json", "--as-of", AS_OF, "-w", ws)
    assert first.exit_code == again.exit_code == 0, first.stderr
    assert solved >= 1 and len(solver_calls) == solved  # the second run solved nothing
    assert json.loads(again.stdout) == json.loads(first.stdout)


# The program above with one more row, x1 + x2 >= 7. By hand: the two first rows allow at most
# x1 + x2 = 4.5 (the LP optimum (3, 1.5) maximises it too: 6 x1 + 4 x2 <= 24 and x1 + 2 x2 <= 6 added
# with weights 1/8 and 1/4 give x1 + x2 <= 4.5), so no point meets the new row: infeasible.
INFEASIBLE = {
    **PROGRAM,
    "A": csr_array(np.array([[6.0, 4.0], [1.0, 2.0], [1.0, 1.0]])),
    "row_lb": np.array([-np.inf, -np.inf, 7.0]),
    "row_ub": np.array([24.0, 6.0, np.inf]),
}


def test_a_proof_of_infeasibility_is_kept_like_a_solution(cache, solver_calls):
    first = solving.solve_milp(**INFEASIBLE)
    again = solving.solve_milp(**INFEASIBLE)
    assert len(solver_calls) == 1 and len(list(cache.glob("*.npz"))) == 1
    for found in (first, again):
        assert found.status == 2 and found.x is None and found.fun is None
    # the feasible program is another key: solved, and its optimum kept beside the proof
    assert solving.solve_milp(**PROGRAM).fun == pytest.approx(-20) and len(solver_calls) == 2


def test_a_forged_proof_of_infeasibility_is_solved_afresh(cache, solver_calls):
    # Someone who can write the cache folder but not read the user's key plants "infeasible" (an x of no
    # values) under the feasible program's key: the entry fails the HMAC and the program is solved.
    solving.solve_milp(**PROGRAM)
    (kept,) = cache.glob("*.npz")
    np.savez_compressed(
        kept,
        key=np.array(kept.stem),
        x=np.zeros(0),
        fun=np.array(np.nan),
        mip_gap=np.array(np.nan),
        mac=np.zeros(32, dtype="u1"),
    )
    found = solving.solve_milp(**PROGRAM)
    assert len(solver_calls) == 2 and found.status == 0 and list(np.round(found.x)) == [4, 0]


def test_the_shortlist_check_is_proved_once(cache, tmp_path, solver_calls):
    # The newsvendor of tests/test_plan_time.py with "commit" at 2 an hour and plan.max_candidates 1: the shortlist is
    # "commit" alone, its relaxation and plan are solved, and the whole program cut off at the shortlist plan's cost is
    # infeasible (committing 200 GPUs at 400 an hour is the optimum). A second run reads the relaxation, the plan and
    # the proof back: it calls the solver not once.
    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0, "max_candidates": 1})
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=2.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]
    ws = write(tmp_path / "ws", cfg, offers)
    first = run("plan", "--format", "json", "--as-of", AS_OF, "-w", ws)
    solved = len(solver_calls)
    again = run("plan", "--format", "json", "--as-of", AS_OF, "-w", ws)
    assert first.exit_code == again.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["solver"]["shortlist_check"].startswith(
        "proven: the program over all 2 usable offers"
    )
    assert solved >= 3 and len(solver_calls) == solved  # relaxation, plan and check the first time; nothing the second
    assert json.loads(again.stdout) == json.loads(first.stdout)


# The program above, keyed by what it is built from instead of by the program itself (how the plan's solves are
# kept): `rows` writes the constraints only when the program is solved.
VARIABLES = dict(c=PROGRAM["c"], integrality=PROGRAM["integrality"], lb=PROGRAM["lb"], ub=PROGRAM["ub"])


def built(inputs, written, options=PROGRAM["options"], row_ub=PROGRAM["row_ub"]):
    def rows():
        written.append(1)
        return PROGRAM["A"], PROGRAM["row_lb"], row_ub

    return solving.solve_built(inputs, options, rows=rows, **VARIABLES)


def test_a_program_kept_under_its_inputs_is_read_back_without_writing_a_row(cache, solver_calls):
    written = []
    first = built(("budget", 24.0, np.array([6.0, 4.0])), written)
    again = built(("budget", 24.0, np.array([6.0, 4.0])), written)
    assert len(written) == len(solver_calls) == 1  # the second call wrote no row and called no solver
    for found in (first, again):
        assert found.status == 0 and found.fun == pytest.approx(-20) and list(np.round(found.x)) == [4, 0]
    built(("budget", 24.0, np.array([6.0, 4.0])), written, options={**PROGRAM["options"], "time_limit": 60.0})
    assert len(written) == 1  # the time limit is not part of the key
    # another input is another key: with 6 x1 + 4 x2 <= 20 the optimum is (2, 2) at -18 (worked above)
    changed = built(("budget", 20.0, np.array([6.0, 4.0])), written, row_ub=np.array([20.0, 6.0]))
    assert len(written) == len(solver_calls) == 2 and changed.fun == pytest.approx(-18)
    built(("budget", 24.0, np.array([6.0, 4.5])), written)  # one element of an array changed: solved again
    assert len(written) == 3


def test_an_entry_under_an_inputs_key_is_checked_before_it_is_used(cache, solver_calls):
    written = []
    built(("budget", 24.0), written)
    key = solvecache.inputs_key(("budget", 24.0), PROGRAM["options"])
    assert (cache / f"{key}.npz").exists()
    # signed with the user's own key but outside the variables' bounds (x1 = -1): solved afresh
    solvecache.store(key, solvecache.Solution(np.array([-1.0, 0.0]), 0, 5.0, 0.0))
    assert built(("budget", 24.0), written).fun == pytest.approx(-20) and len(written) == 2
    # an objective that is not c x (3, 1 costs -19, not -20): solved afresh
    solvecache.store(key, solvecache.Solution(np.array([3.0, 1.0]), 0, -20.0, 0.0))
    assert list(np.round(built(("budget", 24.0), written).x)) == [4, 0] and len(written) == 3
    # a forged proof of infeasibility (no MAC under the user's key): solved afresh
    np.savez_compressed(
        cache / f"{key}.npz",
        key=np.array(key),
        x=np.zeros(0),
        fun=np.array(np.nan),
        mip_gap=np.array(np.nan),
        mac=np.zeros(32, dtype="u1"),
    )
    assert built(("budget", 24.0), written).status == 0 and len(written) == len(solver_calls) == 4


def test_inputs_are_keyed_by_value_and_kind_and_unknown_kinds_are_refused():
    key = lambda value: solvecache.inputs_key(value, {})  # noqa: E731
    assert key([1.0, "a"]) == key([1.0, "a"])
    kinds = [1, 1.0, "1", True, [1], [[1]], np.array([1]), np.array([1.0])]  # eight values that print alike
    assert len({key(value) for value in kinds}) == 8
    assert key(np.zeros((2, 3))) != key(np.zeros((3, 2)))  # same bytes, another shape
    assert key({"a": 1, "b": 2}) == key({"b": 2, "a": 1})  # a mapping's order does not matter
    with pytest.raises(TypeError):
        key(object())
