"""Time the test suite's two parts, `make test` then `make test-slow`: wall, CPU, the machine's load, and the share
of test functions that run the command line.

Run: .venv/bin/python benchmarks/bench_suite.py [--workers 2] [--fresh] [--fast | --slow] [-- extra pytest arguments]
Budget (docs/speed.md): both parts within 90 s on two idle cores.

The same steps as the Makefile's targets, in the checkout this script sits in: `ruff check`, `ruff format
--check`, then `python -m pytest -n WORKERS --dist loadscope -m "not long"` (make test), then the same with
`-m long` (make test-slow); --fast runs only the first part, --slow only the second.
WORKERS is `auto` as in the Makefile unless given (on a shared machine, give the cores you may use). Each
step is one process waited for with wait4, so its CPU seconds (user + system) include every pytest-xdist
worker and every command a test starts. The load average is printed before and after: on a machine shared
with other jobs a wall-clock second says more about the neighbours than about the suite, and a CPU second
is dearer too (caches and memory bandwidth are shared), so a figure is quoted with its load.

The share of test functions that run the command line (in process or as a command, directly or through a helper
or fixture) is counted from the tests' source by benchmarks/cli_share.py, printed first.

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

from cli_share import cli_tests

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
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--fast", action="store_true", help="make test's selection (-m 'not long') only")
    part.add_argument("--slow", action="store_true", help="make test-slow's selection (-m long) only")
    parser.add_argument("--log", type=Path, help="where the steps' output goes (default: a temporary file)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()

    every, cli = cli_tests(ROOT / "tests")
    print(f"test functions that run the command line: {len(cli)} of {len(every)} ({len(cli) / len(every):.0%})")
    log = args.log or Path(tempfile.mkstemp(prefix="procure-suite-", suffix=".log")[1])
    log.write_bytes(b"")
    parts = [False] if args.fast else [True] if args.slow else [False, True]
    figures = [run_part(args, slow, log) for slow in parts]
    if len(figures) == 2:
        wall, cpu = (sum(f[i] for f in figures) for i in range(2))
        print(f"both parts: wall {wall:.1f} s, CPU {cpu:.1f} s")
    print(f"output: {log}")
    if any(failed for _, _, failed in figures):
        raise SystemExit(1)


def run_part(args: argparse.Namespace, slow: bool, log: Path) -> tuple[float, float, bool]:
    """One part's steps timed and printed: (wall, CPU, whether a step failed)."""
    bin_dir = Path(sys.executable).parent
    pytest = [sys.executable, "-m", "pytest", "-n", args.workers, "--dist", "loadscope"]
    pytest += ["-m", "long" if slow else "not long", *args.pytest_args]
    cache = tempfile.TemporaryDirectory(prefix="procure-suite-cache-") if args.fresh else None
    if cache:
        pytest += ["-o", f"cache_dir={cache.name}"]
    steps = [("pytest", pytest)]
    if not slow:  # make test lints and checks the layout first
        steps = [("ruff check", [str(bin_dir / "ruff"), "check", "--quiet", "."]),
                 ("ruff format", [str(bin_dir / "ruff"), "format", "--check", "--quiet", "."])] + steps  # fmt: skip
    start = len(log.read_bytes())

    print(f"make {'test-slow' if slow else 'test'} in {ROOT}, pytest cache {'empty' if cache else 'kept'}")
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
    output = log.read_bytes()[start:].decode(errors="replace")
    outcome = re.findall(r"^=* ?(\d+ (?:passed|failed).* in [\d.]+s\b.*?) ?=*$", output, re.M)
    print(f"after:  {load()}")
    print(f"pytest: {outcome[-1] if outcome else '(no summary line: see ' + str(log) + ')'}")
    wall, user, system = total
    print(f"total:  wall {wall:.1f} s, CPU {user + system:.1f} s (user {user:.1f}, system {system:.1f})")
    return wall, user + system, failed


if __name__ == "__main__":
    main()
