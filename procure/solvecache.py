"""Solved plans kept on disk, keyed by the exact mixed-integer program.

`procure plan`, `procure report` and `procure report --board` over one workspace solve the same
program; HiGHS is deterministic, so the second and third solve would only repeat the first (a few
seconds each on the example). A solution is kept under the SHA-256 of everything the solver sees
(objective, constraint matrix, bounds, integrality, options other than the time limit, SciPy's
version), so a changed input is a different key and can never be served an old plan. Only proven
results (status optimal within the gap) are kept, and a kept solution is checked against the
program before it is used: one that does not satisfy it, or whose objective differs, is solved
afresh. The cache is a convenience: a folder that cannot be read or written is silently skipped.

Folder: $PROCURE_CACHE_DIR, else $XDG_CACHE_HOME/procure, else ~/.cache/procure; PROCURE_CACHE_DIR
set to an empty value turns it off.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "procure-milp-1"
KEEP = 256  # solutions kept (a few kB each for the example); the oldest beyond this are removed
TOLERANCE = 1e-6  # feasibility of a kept solution, relative to the size of each row's terms


@dataclass(frozen=True)
class Solution:
    """What `solve` reads of scipy's OptimizeResult."""

    x: np.ndarray | None
    status: int
    fun: float | None
    mip_gap: float | None


def folder() -> Path | None:
    """Where solutions are kept, or None when the cache is off."""
    chosen = os.environ.get("PROCURE_CACHE_DIR")
    if chosen is not None:
        return Path(chosen).expanduser() if chosen.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "procure"


def program_key(c: np.ndarray, A: Any, row_lb: np.ndarray, row_ub: np.ndarray, integrality: np.ndarray, lb: np.ndarray, ub: np.ndarray, options: dict[str, object]) -> str:
    """SHA-256 of the program as the solver receives it (the time limit aside: a proven optimum holds whatever it was)."""
    import scipy

    csr = A.tocsr(copy=True)  # canonical form for the hash, without touching the caller's matrix
    csr.sum_duplicates()
    csr.sort_indices()
    digest = hashlib.sha256()
    kept = {k: v for k, v in sorted(options.items()) if k != "time_limit"}
    digest.update(json.dumps([FORMAT, scipy.__version__, list(csr.shape), kept], default=str).encode())
    for array, kind in ((c, np.float64), (csr.data, np.float64), (csr.indices, np.int64), (csr.indptr, np.int64),
                        (row_lb, np.float64), (row_ub, np.float64), (integrality, np.int64), (lb, np.float64), (ub, np.float64)):
        data = np.ascontiguousarray(array, dtype=kind)
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data.tobytes())
    return digest.hexdigest()


def satisfies(x: np.ndarray, fun: float, c: np.ndarray, A: Any, row_lb: np.ndarray, row_ub: np.ndarray, integrality: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> bool:
    """Whether `x` is a solution of the program with objective `fun` (a damaged or edited file is not)."""
    if x.shape != c.shape or not np.all(np.isfinite(x)):
        return False
    scale = abs(A).sum(axis=1) * np.maximum(1.0, np.abs(x).max()) + 1.0  # a row's terms, for a relative tolerance
    rows = A @ x
    if np.any(rows < row_lb - TOLERANCE * scale) or np.any(rows > row_ub + TOLERANCE * scale):
        return False
    if np.any(x < lb - TOLERANCE * (1 + np.abs(lb))) or np.any(x > ub + TOLERANCE * (1 + np.abs(ub))):
        return False
    whole = np.asarray(integrality) > 0
    if np.any(np.abs(x[whole] - np.round(x[whole])) > 1e-6):
        return False
    return bool(abs(float(c @ x) - fun) <= 1e-9 * max(1.0, abs(fun)))


def load(key: str) -> tuple[np.ndarray, float, float | None] | None:
    where = folder()
    if where is None:
        return None
    try:
        with np.load(where / f"{key}.npz", allow_pickle=False) as kept:
            x, fun, gap = kept["x"], float(kept["fun"]), float(kept["mip_gap"])
            if str(kept["key"]) != key:
                return None
    except (OSError, ValueError, KeyError, EOFError, TypeError):
        return None
    return x.astype(np.float64), fun, (gap if np.isfinite(gap) else None)


def store(key: str, solution: Solution) -> None:
    """Keep a proven solution; any failure to write is ignored (the plan was solved all the same)."""
    from procure.errors import InputError
    from procure.fileio import write_atomic

    where = folder()
    if where is None or solution.status != 0 or solution.x is None or solution.fun is None:
        return
    buffer = io.BytesIO()
    gap = np.nan if solution.mip_gap is None else solution.mip_gap
    np.savez_compressed(buffer, key=np.array(key), x=np.asarray(solution.x, dtype=np.float64), fun=np.array(solution.fun), mip_gap=np.array(gap))
    try:
        write_atomic(where / f"{key}.npz", buffer.getvalue())
        kept = sorted(where.glob("*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except (OSError, InputError):
        pass


def solve_milp(c: np.ndarray, A: Any, row_lb: np.ndarray, row_ub: np.ndarray, integrality: np.ndarray, lb: np.ndarray, ub: np.ndarray, options: dict[str, object]) -> Solution:
    """scipy's `milp` (HiGHS), or the kept solution of the very same program."""
    key = program_key(c, A, row_lb, row_ub, integrality, lb, ub, options)
    kept = load(key)
    if kept is not None and satisfies(kept[0], kept[1], c, A, row_lb, row_ub, integrality, lb, ub):
        return Solution(kept[0], 0, kept[1], kept[2])
    import warnings

    from scipy.optimize import Bounds, LinearConstraint, milp  # only when solving: a second of imports

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SciPy warns that HiGHS options pass to HiGHS verbatim (they do)
        result = milp(c, constraints=LinearConstraint(A, row_lb, row_ub), integrality=integrality, bounds=Bounds(lb, ub), options=dict(options))  # milp pops keys
    gap = getattr(result, "mip_gap", None)
    solution = Solution(result.x, int(result.status), None if result.fun is None else float(result.fun), None if gap is None or not np.isfinite(gap) else float(gap))
    store(key, solution)
    return solution
