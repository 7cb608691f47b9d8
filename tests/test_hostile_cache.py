"""Hostile solved-plan cache: whoever can write the cache folder (a shared PROCURE_CACHE_DIR, a
restored CI cache) cannot change a figure, delete the user's files, hang, exhaust memory or crash a plan.

The program is the one of tests/test_solvecache.py, worked by hand:
min -5 x1 - 4 x2  subject to  6 x1 + 4 x2 <= 24,  x1 + 2 x2 <= 6,  x1, x2 >= 0 whole.
The optimum is (4, 0) at -20; (3, 1) is feasible and costlier, at -19.
"""

from __future__ import annotations

import os
import threading
import tracemalloc

import numpy as np
import pytest
import scipy.optimize
from scipy.sparse import csr_array

from procure.analysis import milp as solving
from procure.io import solvecache

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
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
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


def entry_path(cache) -> os.PathLike:
    return cache / f"{solvecache.program_key(solvecache.Milp(**PROGRAM))}.npz"


def assert_the_optimum(found) -> None:
    assert found.status == 0 and list(np.round(found.x)) == [4, 0] and found.fun == pytest.approx(-20)


def test_a_feasible_costlier_solution_under_the_right_key_is_never_reported_optimal(cache, solver_calls):
    # Finding: the check asked only that a kept x is feasible and that c.x is the objective it claims;
    # (3, 1) at -19 passes both and was reported "optimal, gap 0".
    cache.mkdir()
    key = entry_path(cache).name[:-4]
    np.savez_compressed(
        entry_path(cache), key=np.array(key), x=np.array([3.0, 1.0]), fun=np.array(-19.0), mip_gap=np.array(0.0)
    )
    assert_the_optimum(solving.solve_milp(**PROGRAM))
    assert len(solver_calls) == 1


def test_an_entry_made_with_another_users_key_is_solved_afresh(cache, solver_calls, tmp_path, monkeypatch):
    # The forger runs procure itself with a key of their own and plants its entry (a restored CI cache).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "forger"))
    key = solvecache.program_key(solvecache.Milp(**PROGRAM))
    solvecache.store(key, solvecache.Solution(np.array([3.0, 1.0]), 0, -19.0, 0.0))
    assert entry_path(cache).is_file()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert_the_optimum(solving.solve_milp(**PROGRAM))
    assert len(solver_calls) == 1
    again = solving.solve_milp(**PROGRAM)  # the user's own entry, now kept, is read back
    assert_the_optimum(again)
    assert len(solver_calls) == 1


def test_a_key_file_others_can_read_turns_the_cache_off(cache, solver_calls, tmp_path):
    solving.solve_milp(**PROGRAM)
    key = tmp_path / "state" / "procure" / "cache-key"
    assert key.stat().st_mode & 0o777 == 0o600
    key.chmod(0o644)
    assert_the_optimum(solving.solve_milp(**PROGRAM))
    assert len(solver_calls) == 2


def test_eviction_removes_only_procures_own_entries(cache, monkeypatch):
    # Finding: 300 of the user's .npz files in the folder, and a plan deleted 45 of them.
    cache.mkdir()
    theirs = [cache / f"measurement-{i:03d}.npz" for i in range(300)]
    theirs.append(cache / f"{'ab' * 32}.npz")  # named like an entry, but the user's arrays
    for i, path in enumerate(theirs):
        np.savez(path, a=np.array([i]))
        os.utime(path, (1_000_000 + i, 1_000_000 + i))  # all older than any entry
    for bound in (24.0, 20.0, 16.0):
        solving.solve_milp(**{**PROGRAM, "row_ub": np.array([bound, 6.0])})
    assert all(path.is_file() for path in theirs)
    monkeypatch.setattr(solvecache, "KEEP", 2)
    solving.solve_milp(**{**PROGRAM, "row_ub": np.array([12.0, 6.0])})
    entries = [p for p in cache.glob("*.npz") if p not in theirs]
    assert len(entries) == 2 and all(path.is_file() for path in theirs)


def test_a_named_pipe_where_a_solution_belongs_is_solved_afresh(cache, solver_calls):
    # Finding: np.load opened the FIFO and waited for a writer forever.
    cache.mkdir()
    os.mkfifo(entry_path(cache))
    found = []
    worker = threading.Thread(target=lambda: found.append(solving.solve_milp(**PROGRAM)), daemon=True)
    worker.start()
    worker.join(timeout=15)  # a solve of this program takes milliseconds
    hung = worker.is_alive()
    if hung:  # release the blocked reader before failing
        with open(os.open(entry_path(cache), os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        worker.join(timeout=5)
    assert not hung, "solve_milp waited on a named pipe"
    assert_the_optimum(found[0])


def test_a_declared_shape_larger_than_the_program_is_not_read(cache):
    # Finding: a 3.9 MB entry declaring 500 M zeros allocated 3.7 GiB. Here 20 M zeros (160 MB
    # expanded, 160 kB on disk) stand for it: the program has 2 variables, so nothing near 160 MB
    # may be allocated while the entry is looked at.
    cache.mkdir()
    key = entry_path(cache).name[:-4]
    np.savez_compressed(
        entry_path(cache), key=np.array(key), x=np.zeros(20_000_000), fun=np.array(0.0), mip_gap=np.array(0.0)
    )
    assert entry_path(cache).stat().st_size < 1_000_000
    tracemalloc.start()
    try:
        found = solving.solve_milp(**PROGRAM)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_the_optimum(found)
    assert peak < 20_000_000, f"{peak / 1e6:.0f} MB allocated"


@pytest.mark.parametrize(
    "x", [np.array(["4", "0"]), np.array([b"4", b"0"]), np.array([4, 0], dtype=np.int8), np.array([[4.0, 0.0]])]
)
def test_a_solution_of_another_type_or_shape_is_solved_afresh(cache, solver_calls, x):
    # Finding: a kept solution of strings ended in "internal error: ValueError", exit 1.
    cache.mkdir()
    key = entry_path(cache).name[:-4]
    np.savez_compressed(entry_path(cache), key=np.array(key), x=x, fun=np.array(-20.0), mip_gap=np.array(0.0))
    assert_the_optimum(solving.solve_milp(**PROGRAM))
    assert len(solver_calls) == 1
