"""Whole-process timing for the benchmarks: each command run as a user runs it, in turn with its reference
(A B A B ...), each run's wall time, CPU time (user + system of the process and the children it waited for)
and peak resident memory taken from the operating system's accounting of that one process (wait4), and
the ratio A/B pair by pair, so that a ratio holds when the machine's speed drifts. The machine's load
average is printed with every figure: on a shared machine absolute seconds say more about the neighbours.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    peak_mb: float


def run_once(command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> Run:
    import time

    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}")
    # ru_maxrss of one waited process is its own peak (kB on Linux); its children's CPU is included once waited
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def median_run(runs: list[Run]) -> Run:
    return Run(
        statistics.median(r.wall for r in runs), statistics.median(r.cpu for r in runs), max(r.peak_mb for r in runs)
    )


def paired(
    a: list[str], b: list[str], runs: int = 5, env: dict[str, str] | None = None, warmup: bool = True, before_each=None
) -> tuple[Run, Run, float, float]:  # type: ignore[no-untyped-def]
    """A and B in turn: the median run of each and the median of the pair-by-pair ratios A/B (wall, CPU).
    `before_each()`, if given, runs before every run (e.g. to empty a cache folder)."""
    if warmup:
        for command in (a, b):
            if before_each:
                before_each()
            run_once(command, env)
    ra, rb = [], []
    for _ in range(runs):
        for command, into in ((a, ra), (b, rb)):
            if before_each:
                before_each()
            into.append(run_once(command, env))
    wall = statistics.median(x.wall / y.wall for x, y in zip(ra, rb))
    cpu = statistics.median(x.cpu / y.cpu for x, y in zip(ra, rb))
    return median_run(ra), median_run(rb), wall, cpu


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def private_env(**extra: str) -> tuple[dict[str, str], tempfile.TemporaryDirectory]:
    """The environment for timed commands: a temporary solve-cache folder and key, never the user's."""
    folder = tempfile.TemporaryDirectory(prefix="procure-bench-")
    env = {
        **os.environ,
        "PROCURE_CACHE_DIR": str(Path(folder.name) / "cache"),
        "XDG_STATE_HOME": str(Path(folder.name) / "state"),
        "XDG_CACHE_HOME": str(Path(folder.name) / "xdg-cache"),
        **extra,
    }
    return env, folder


def empty(path: str) -> None:
    """Remove every file of a cache folder (a cold run), keeping the folder."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)
