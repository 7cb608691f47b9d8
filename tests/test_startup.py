"""Start-up stays light: a command imports the heavy libraries only where it needs them (docs/speed.md).

Each case runs in a fresh interpreter, since a test worker has imported everything by the time it gets here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

PROBE = """
import json, sys
sys.argv = ["procure"] + json.loads(sys.argv[1])
from procure.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""
HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "weasyprint", "jinja2", "openpyxl")


def modules_after(*args: str) -> set[str]:
    """The modules loaded once `procure ARGS` has run on the example workspace."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


@pytest.mark.slow
def test_help_imports_none_of_the_heavy_libraries():
    loaded = {m.split(".")[0] for m in modules_after("--help")}
    assert not loaded & set(HEAVY)


@pytest.mark.slow
def test_sensitivity_of_signed_vendors_does_without_scipy_stats():
    """The example's signed vendors take their availability ends from Beta posteriors; the quantile comes from
    scipy.special, whose import is a fifth of scipy.stats' (about 0.9 s), and nothing draws a chart or a PDF."""
    loaded = modules_after("sensitivity", "--as-of", "2026-11-29")
    assert "scipy.special" in loaded and "procure.analysis.scorecard" in loaded  # the posteriors were computed
    assert "scipy.stats" not in loaded
    assert not {m.split(".")[0] for m in loaded} & {"pandas", "matplotlib", "weasyprint", "openpyxl"}


@pytest.mark.slow
def test_a_solve_cache_hit_imports_no_solver(tmp_path, monkeypatch):
    """compare on the example solves its plan once; run again on the same cache folder, every solve (the plan's
    refinement rounds, the shortlist's relaxation and check when there is one) is read back under the key of its
    inputs: scipy.optimize, which holds HiGHS, is never imported, nor scipy.sparse, which holds the program's matrix
    (the program's rows are never written; docs/speed.md)."""
    monkeypatch.setenv("PROCURE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    first = modules_after("compare", "--as-of", "2026-11-29", "--format", "json")
    assert "scipy.optimize" in first and "procure.analysis.plan" in first  # solved: the test sees a plan
    again = modules_after("compare", "--as-of", "2026-11-29", "--format", "json")
    assert "procure.analysis.plan" in again and "scipy.optimize" not in again and "scipy.sparse" not in again
    assert "numpy.ma" not in again  # np.median and np.unique import it; the plan read back uses neither


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--help"], ["index", "--help"], ["compare", "--help"], ["comprae"]])
def test_the_command_line_builds_a_command_only_to_run_it_and_says_what_typer_says(args):
    """`procure` builds a command's options only when the command runs (procure.cli.command_line); its help, a
    group's help and its usage errors are word for word those of the app as typer builds it whole."""
    eager = "import sys; from procure.cli import app; sys.argv[0] = 'procure'; app(prog_name='procure')"
    done = [
        subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
        for command in ([sys.executable, "-m", "procure", *args], [sys.executable, "-c", eager, *args])
    ]
    lazy, whole = ((d.returncode, d.stdout, d.stderr) for d in done)
    assert lazy == whole
    assert "Commands:" in lazy[1] or "Options:" in lazy[1] or "no such command" in lazy[2]
