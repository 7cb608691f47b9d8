"""Time the test suite as `make test` runs it (or `make test-slow` with --slow): wall, CPU and the machine's load.

Run: .venv/bin/python benchmarks/bench_suite.py [--workers 2] [--fresh] [--slow] [-- extra pytest arguments]
Budget (docs/speed.md): `make test` within two minutes on two idle cores.

The same steps as the Makefile's target, in the checkout this script sits in: `ruff check`, `ruff format
--check`, then `python -m pytest -n WORKERS --dist loadscope -m "not long"` (`-m long` with --slow).
WORKERS is `auto` as in the Makefile unless given (on a shared machine, give the cores you may use). Each
step is one process waited for with wait4, so its CPU seconds (user + system) include every pytest-xdist
worker and every command a test starts. The load average is printed before and after: on a machine shared
with other jobs a wall-clock second says more about the neighbours than about the suite, and a CPU second
is dearer too (caches and memory bandwidth are shared), so a figure is quoted with its load.

--fresh runs pytest with a cache folder of its own, empty (as on a fresh clone: every plan solved once, no
record of what each module took for the scheduler); without it the checkout's .pytest_cache is used as a
developer's next run would use it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def timed(command: list[str], log: Path) -> tuple[float, float, float, int]:
    """(wall, user, system, exit code) of one command and every child it waited for; its output goes to log."""
    with open(log, "ab") as out:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_utime, usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers (-n), as the Makefile: auto")
    parser.add_argument("--fresh", action="store_true", help="an empty pytest cache folder, as on a fresh clone")
    parser.add_argument("--slow", action="store_true", help="make test-slow's selection (-m long) instead")
    parser.add_argument("--log", type=Path, help="where the steps' output goes (default: a temporary file)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()

    bin_dir = Path(sys.executable).parent
    pytest = [sys.executable, "-m", "pytest", "-n", args.workers, "--dist", "loadscope"]
    pytest += ["-m", "long" if args.slow else "not long", *args.pytest_args]
    cache = tempfile.TemporaryDirectory(prefix="procure-suite-cache-") if args.fresh else None
    if cache:
        pytest += ["-o", f"cache_dir={cache.name}"]
    steps = [("pytest", pytest)]
    if not args.slow:  # make test lints and checks the layout first
        steps = [("ruff check", [str(bin_dir / "ruff"), "check", "--quiet", "."]),
                 ("ruff format", [str(bin_dir / "ruff"), "format", "--check", "--quiet", "."])] + steps  # fmt: skip
    log = args.log or Path(tempfile.mkstemp(prefix="procure-suite-", suffix=".log")[1])
    log.write_bytes(b"")

    print(f"make {'test-slow' if args.slow else 'test'} in {ROOT}, pytest cache {'empty' if cache else 'kept'}")
    print(f"before: {load()}")
    total = [0.0, 0.0, 0.0]
    failed = False
    for name, command in steps:
        wall, user, system, code = timed(command, log)
        total = [total[0] + wall, total[1] + user, total[2] + system]
        print(f"  {name:<12} wall {wall:7.1f} s   CPU {user + system:7.1f} s (user {user:.1f}, system {system:.1f})")
        if code != 0:  # the figures so far are still printed, with the load
            print(f"  {' '.join(command)} exited {code}: its output is in {log}")
            failed = True
            break
    outcome = re.findall(r"^=* ?(\d+ (?:passed|failed).* in [\d.]+s\b.*?) ?=*$", log.read_text(errors="replace"), re.M)
    print(f"after:  {load()}")
    print(f"pytest: {outcome[-1] if outcome else '(no summary line: see ' + str(log) + ')'}")
    wall, user, system = total
    print(f"total:  wall {wall:.1f} s, CPU {user + system:.1f} s (user {user:.1f}, system {system:.1f})")
    print(f"output: {log}")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
