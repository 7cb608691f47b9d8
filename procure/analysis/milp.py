"""HiGHS through SciPy's `milp`, in a worker thread that Ctrl-C can abandon, behind the solve cache: a program's
kept result (procure/io/solvecache.py stores and reads it) is used when it still answers the program, else the
program is solved and its proven result stored.

`solve_built` keys a program by everything it is built from, so that a kept result is read back without writing
a row of the program or importing SciPy; `solve_milp` keys a program given whole by everything the solver sees.
A kept optimum is checked against the program (every constraint, bound and whole number and its objective; under
`solve_built`, whose key covers what the rows are made from, its bounds, whole numbers and objective); a kept
proof of infeasibility cannot be checked without solving, so its HMAC is its only check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from procure.io.solvecache import INFEASIBLE, Milp, Solution, inputs_key, load, program_key, store

TOLERANCE = 1e-6  # feasibility of a kept solution, relative to the size of each row's terms
T = TypeVar("T")


def within_bounds(
    x: np.ndarray, fun: float, c: np.ndarray, integrality: np.ndarray, lb: np.ndarray, ub: np.ndarray
) -> bool:
    """Whether `x` lies within the variables' bounds, is whole where it must be and has the objective `fun`."""
    if x.shape != c.shape or not np.all(np.isfinite(x)):
        return False
    if np.any(x < lb - TOLERANCE * (1 + np.abs(lb))) or np.any(x > ub + TOLERANCE * (1 + np.abs(ub))):
        return False
    whole = np.asarray(integrality) > 0
    if np.any(np.abs(x[whole] - np.round(x[whole])) > 1e-6):
        return False
    return bool(abs(float(c @ x) - fun) <= 1e-9 * max(1.0, abs(fun)))


def satisfies(x: np.ndarray, fun: float, p: Milp) -> bool:
    """Whether `x` is a solution of the program with objective `fun` (a damaged or edited file is not)."""
    if not within_bounds(x, fun, p.c, p.integrality, p.lb, p.ub):
        return False
    scale = abs(p.A).sum(axis=1) * np.maximum(1.0, np.abs(x).max()) + 1.0  # a row's terms, for a relative tolerance
    rows = p.A @ x
    return not (np.any(rows < p.row_lb - TOLERANCE * scale) or np.any(rows > p.row_ub + TOLERANCE * scale))


def interruptible(call: Callable[[], T]) -> T:
    """Run `call` (a HiGHS solve, which releases the GIL) in a worker thread while the main thread
    waits in short steps: Ctrl-C is raised in the main thread between them, so a solve of up to
    plan.time_limit_s (3,600 s, several per plan) is abandoned at once instead of finishing first."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    return started(call, "procure-solver")()


def started(call: Callable[[], T], name: str) -> Callable[[], T]:
    """`call` running in a worker thread of its own, and the function that waits for it in short steps (Ctrl-C is
    raised in the waiting thread between them) and returns its result or raises its error. The one way procure works
    beside its main thread: a solve, or what a report needs that does not depend on the solve."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            box["error"] = exc
        finally:
            _running.ended()

    worker = threading.Thread(target=work, name=name, daemon=True)
    # Counted before it starts, since Ctrl-C may come while the thread is being started (a start that fails leaves it
    # counted: the process then ends at once, as it would with the solve running).
    _running.started()
    worker.start()

    def wait() -> T:
        while worker.is_alive():
            worker.join(0.05)
        if "error" in box:
            raise box["error"]
        return box["result"]

    return wait


class _Count:
    """Solves started and not yet returned, across threads."""

    def __init__(self) -> None:
        self.value = 0
        self.lock = threading.Lock()

    def started(self) -> None:
        with self.lock:
            self.value += 1

    def ended(self) -> None:
        with self.lock:
            self.value -= 1


_running = _Count()


def solving() -> bool:
    """Whether an abandoned solve (or other work `started`) is still running, or its thread still starting (the
    process then ends without waiting for it: an interpreter that shuts down while HiGHS works aborts instead of
    exiting 130)."""
    return _running.value > 0


def solve_milp(
    c: np.ndarray,
    A: Any,
    row_lb: np.ndarray,
    row_ub: np.ndarray,
    integrality: np.ndarray,
    lb: np.ndarray,
    ub: np.ndarray,
    options: dict[str, object],
) -> Solution:
    """scipy's `milp` (HiGHS), or the kept solution of the very same program."""
    program = Milp(c, A, row_lb, row_ub, integrality, lb, ub, options)
    return _kept_or_solved(
        program_key(program), len(c), lambda x, fun: satisfies(x, fun, program), lambda: run_milp(program)
    )


def solve_built(
    inputs: object,
    options: dict[str, object],
    c: np.ndarray,
    integrality: np.ndarray,
    lb: np.ndarray,
    ub: np.ndarray,
    rows: Callable[[], tuple[Any, np.ndarray, np.ndarray]],
) -> Solution:
    """The program built from `inputs` (everything it is made from: `inputs_key`), read back, or built and solved.

    `c`, `integrality`, `lb` and `ub` are its variables; `rows()` writes its constraints (the matrix and the row
    bounds), called only when the program is solved: a kept result is read without building a row or importing
    SciPy. Its check is its HMAC (the key covers every input and the code that builds the program), then its
    bounds, whole numbers and objective."""

    def solve() -> Solution:
        A, row_lb, row_ub = rows()
        return run_milp(Milp(c, A, row_lb, row_ub, integrality, lb, ub, options))

    return _kept_or_solved(
        inputs_key(inputs, options), len(c), lambda x, fun: within_bounds(x, fun, c, integrality, lb, ub), solve
    )


def _kept_or_solved(
    key: str, n: int, holds: Callable[[np.ndarray, float], bool], solve: Callable[[], Solution]
) -> Solution:
    """The result kept under `key` (an infeasibility proof, or a solution that `holds` for the program), else the
    program solved and its result kept."""
    kept = load(key, n)
    if kept is not None and len(kept[0]) == 0 and n > 0:
        return Solution(None, INFEASIBLE, None, None)
    if kept is not None and holds(kept[0], kept[1]):
        return Solution(kept[0], 0, kept[1], kept[2])
    solution = solve()
    store(key, solution)
    return solution


def run_milp(p: Milp) -> Solution:
    """scipy's `milp` (HiGHS), interruptible; nothing read or kept."""
    import warnings

    from scipy.optimize import Bounds, LinearConstraint, milp  # only when solving: a second of imports

    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", RuntimeWarning
        )  # SciPy warns that HiGHS options pass to HiGHS verbatim (they do)
        result = interruptible(
            lambda: milp(
                p.c,
                constraints=LinearConstraint(p.A, p.row_lb, p.row_ub),
                integrality=p.integrality,
                bounds=Bounds(p.lb, p.ub),
                options=dict(p.options),
            )
        )  # milp pops keys
    gap = getattr(result, "mip_gap", None)
    return Solution(
        result.x,
        int(result.status),
        None if result.fun is None else float(result.fun),
        None if gap is None or not np.isfinite(gap) else float(gap),
    )
