"""Shared fixtures: the fixture workspaces under tests/data and throw-away copies of them."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA_DIR = Path(__file__).parent / "data"
ROOT = DATA_DIR.parent.parent

# Compiled modules are kept (pytest's rewritten test modules and procure's own, in __pycache__) even where
# PYTHONDONTWRITEBYTECODE is set, as it is in many containers: otherwise every worker rewrites and
# compiles every test module again at each run (10.7 s of CPU to collect the suite instead of 4.3 s).
sys.dont_write_bytecode = False


def _build_each_app_once() -> None:
    """typer's CliRunner turns the app into a click command on every invoke (about 50 ms: it evaluates
    every annotation of every command); thousands of in-process runs build the same command. Built
    once per app, each run still gets its own context, streams and environment."""
    import typer.main
    import typer.testing

    built: dict[int, tuple[object, object]] = {}

    def get_command_once(app):  # type: ignore[no-untyped-def]
        if id(app) not in built:
            built[id(app)] = (app, typer.main.get_command(app))  # the app is kept so that its id is not reused
        return built[id(app)][1]

    typer.testing._get_command = get_command_once


_build_each_app_once()


def pytest_collection_finish(session: pytest.Session) -> None:
    """A worker holds thousands of collected tests and the objects of every command it ran: with CPython's default
    thresholds (700, 10, 10) its cyclic garbage collector walks that heap again and again, a tenth of the CPU of the
    table and screen tests (measured 2026-12-03: 32.9 s against 29.1 s of CPU for test_cli_table_width, test_screens
    and test_hostile_numbers in one process). What is there after collection is kept out of the collector's walks and
    it runs less often; every object is still freed, and a command run in its own process keeps Python's defaults."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


# --- how pytest-xdist shares the tests between workers ------------------------------------------------
#
# `--dist loadscope` gives each worker whole modules, so that a module's fixtures are computed once, and
# hands out modules by their number of tests. The costly modules have few tests (a few reports laid out,
# LibreOffice, killed processes): handed out last, one of them could run alone at the end while the other
# workers wait. Here the modules go out costliest first, each to the first worker about to run out of
# tests (longest processing time first, the classic rule for sharing jobs between machines). A module's
# cost is the seconds it took in the last run (kept in .pytest_cache), else the figure below, measured on
# two cores, else its number of tests at a typical test's time.

# Seconds of a worker's time (setup, call and teardown): the slow modules measured 2026-12-02 in one whole run on
# two cores shared with other jobs (load 3 to 6: about twice an idle machine's), the others 2026-12-01 (load 8);
# only their order matters.
SCOPE_SECONDS = {
    "slow": {
        "tests/test_report_layout.py::[synthetic50]": 134,
        "tests/test_cli_report.py": 113,
        "tests/test_report_layout.py::[example]": 100,
        "tests/test_browser.py": 60,  # 2026-12-07, alone at load 10: Chromium opening and printing the reports
        "tests/test_assemble.py": 50,
        "tests/test_xlsx_live.py": 43,
        "tests/test_hostile_faults.py": 38,
        "tests/test_hostile_properties.py": 36,
        "tests/test_documents.py": 32,
        "tests/test_hostile_text.py": 24,
        "tests/test_hostile_data_loss.py": 23,
        "tests/test_decision.py": 19,
        "tests/test_history.py": 17,
        "tests/test_report_layout.py::[rated]": 17,
        "tests/test_report_layout.py::[real_offers]": 14,
        "tests/test_report_layout.py::[many_fees]": 12,
        "tests/test_hostile_plan_limits.py": 11,
        "tests/test_report_layout.py::[basic]": 6,
        "tests/test_report_layout.py::[offer_kinds]": 3,
    },
    "fast": {
        "tests/test_hostile_values.py": 73,
        "tests/test_cli_table_width.py": 60,
        "tests/test_hostile_paths.py": 41,
        "tests/test_hostile_numbers.py": 39,
        "tests/test_report_formulas.py": 40,
        "tests/test_hostile_yaml.py": 29,
        "tests/test_documents.py": 26,
        "tests/test_cli_json_envelope.py": 24,
        "tests/test_plan.py": 23,
        "tests/test_hostile_readers.py": 22,
        "tests/test_board.py": 22,
        "tests/test_cli_compare_uncertainty.py": 21,
        "tests/test_uncertainty.py": 20,
        "tests/test_history.py": 19,
        "tests/test_cli_progress.py": 18,
        "tests/test_hostile_rating_inputs.py": 16,
        "tests/test_cli_plan.py": 16,
        "tests/test_hostile_history.py": 14,
        "tests/test_cashflow.py": 13,
        "tests/test_cli_out.py": 11,
        "tests/test_hostile_plan_limits.py": 10,
        "tests/test_hostile_csv.py": 10,
    },
}
# `make test` (-m "not long"): CPU seconds of each unit's tests and the commands they start, measured 2026-12-03 in one
# run on two cores (load 1 to 2), after the charts and the draws were kept per process; the units not named take their
# number of tests at a typical test's time.
MAKE_TEST_SECONDS = {
    "tests/test_browser.py": 45,
    "tests/test_cli_report.py": 23,
    "tests/test_style.py": 22,
    "tests/test_cli_table_width.py": 15,
    "tests/test_screens.py": 11,
    "tests/test_hostile_values.py": 10,
    "tests/test_startup.py": 8,
    "tests/test_hostile_streams.py": 7,
    "tests/test_decision.py": 6,
    "tests/test_uncertainty.py": 5,
    "tests/test_hostile_numbers.py": 5,
    "tests/test_evidence_months.py": 4,
    "tests/test_hostile_yaml.py": 4,
    "tests/test_cli_json_envelope.py": 4,
    "tests/test_hostile_plan_limits.py": 4,
    "tests/test_report_layout.py::[offer_kinds]": 4,
    "tests/test_documents.py": 4,
    "tests/test_offer_trials.py": 4,
    "tests/test_plan.py": 4,
    "tests/test_architecture.py": 4,
    "tests/test_cli_plan.py": 3,
    "tests/test_scorecard.py": 3,
    "tests/test_cli_compare_uncertainty.py": 3,
    "tests/test_hostile_csv.py": 3,
    "tests/test_hostile_text.py": 3,
    "tests/test_hostile_history.py": 3,
    "tests/test_hostile_paths.py": 3,
}
TYPICAL_S = {"slow": 3.0, "fast": 0.08}  # a test of the slow step, and of the others, when nothing was measured
# Modules whose tests are grouped by a parameter instead of by module, with the parameter values that do not
# name a group: each group's fixtures are kept by that parameter (one workspace's reports, whichever the
# report kind), so the groups may go to different workers.
SCOPE_BY_PARAMETER = {"tests/test_report_layout.py": {"comparison", "board"}}


# The long end-to-end checks: `make test` leaves them out (-m "not long") and `make test-slow` runs them (-m long);
# .ci/run runs both, one after the other, so every test still runs in CI. Patterns of node ids (fnmatch).
LONG = (
    "tests/test_report_layout.py::*synthetic50*",  # the 50-offer comparison laid out (about 20 s of CPU)
    # the other comparisons laid out whole (the example's about 40 s of CPU); make test keeps offer_kinds' comparison
    # (every pricing kind on its pages) and every board memo
    "tests/test_report_layout.py::*[[]example-comparison]",
    "tests/test_report_layout.py::*[[]basic-comparison]",
    "tests/test_report_layout.py::*[[]rated-comparison]",
    "tests/test_report_layout.py::*[[]real_offers-comparison]",
    "tests/test_report_layout.py::*[[]many_fees-comparison]",
    "tests/test_report_layout.py::test_no_page_is_more_than_half_empty_but_at_a_chapters_end[[]comparison-*",
    # the report laid out as one document and again from one part per offer, pages compared (test_assemble's
    # `both`); make test still lays reports out in parts (test_cli_report reads their contents and page numbers)
    "tests/test_assemble.py::test_merged_pages_read_as_the_single_document",
    "tests/test_assemble.py::test_page_numbers_count_the_whole_document",
    "tests/test_assemble.py::test_contents_links_destinations_and_outline_match",
    "tests/test_assemble.py::test_each_contents_entry_prints_the_page_its_link_goes_to",
    "tests/test_assemble.py::test_same_bytes_whatever_the_number_of_workers",
    "tests/test_assemble.py::test_no_temporary_font_folder_is_left",
    # comparison PDFs of hostile vendor text laid out whole (a 2,000-character name; markup never fetched); make
    # test checks the same text in every other output and in the HTML the PDF is laid out from
    "tests/test_hostile_text.py::*pdf*",
    "tests/test_cli_report.py::test_vendor_markup_is_never_fetched_in_pdf",
    # the example's comparison PDF laid out whole to count its pages against the browser's print (make test counts the
    # basic workspace's, which the run lays out anyway, and the example memo's)
    "tests/test_browser.py::test_the_examples_comparison_prints_from_the_browser_on_about_procures_pages",
    # every screen of the real offers and of a fresh workspace at three widths (132 commands run); make test keeps
    # the example's 66 and the style of the fresh workspace's tables
    "tests/test_screens.py::test_every_screen_fits_24_lines[[]real-*",
    "tests/test_screens.py::test_every_screen_fits_24_lines[[]fresh-*",
    "tests/test_style.py::test_tables_follow_the_style[[]*-real]",
    "tests/test_style.py::test_markdown_follows_the_style[[]*-real]",
    "tests/test_hostile_properties.py::*",  # property tests at the full example count (HOSTILE_EXAMPLES)
    "tests/test_history.py::test_eight_concurrent_savers_killed_at_random_moments_lose_no_reported_run",
    # the history's real busy timeout waited (five seconds idle); make test waits half a second
    "tests/test_hostile_readers.py::test_a_locked_history_is_reported_as_busy_within_seconds[[]the real timeout]",
    "tests/test_history.py::test_concurrent_saves_are_all_stored_with_distinct_ids",
    "tests/test_hostile_data_loss.py::test_an_import_killed_at_random_moments_writes_all_offers_or_none",
    "tests/test_hostile_faults.py::test_killed_report_leaves_no_partial_pdf",
    "tests/test_hostile_faults.py::test_killed_save_leaves_the_history_readable_and_consistent",
    "tests/test_hostile_faults.py::test_concurrent_evaluate_save_and_reevaluate_all_land",
    "tests/test_assemble.py::test_killing_the_report_ends_its_layout_workers",
    "tests/test_evidence_months.py::test_eight_concurrent_imports_lose_nothing",  # eight processes at once
    "tests/test_xlsx_live.py::*",  # LibreOffice started to recalculate the workbooks
    # two comparison PDFs laid out whole, one with a 2,000-character unbroken name and note
    "tests/test_documents.py::test_pathological_vendor_text_keeps_the_layout",
    # the plan's property tests (hypothesis, SETTINGS' 12 examples, each a market solved several times)
    "tests/test_plan.py::test_the_plan_never_costs_more_than_the_best_single_offer",
    "tests/test_plan.py::test_adding_an_offer_never_raises_the_cost",
    "tests/test_plan.py::test_scaling_every_price_scales_the_cost_and_keeps_the_plan",
    "tests/test_plan.py::test_file_order_and_currency_do_not_change_the_plan",
    # the attack's full 200,000 series (a minute in prometheus-client's parser); 2,000 of them stay in make test
    # ("[[]" is fnmatch's literal "[")
    "tests/test_hostile_streams.py::test_two_hundred_thousand_series_with_an_unknown_label_take_one_line[[]200000]",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from fnmatch import fnmatchcase

    for item in items:
        if any(fnmatchcase(item.nodeid, pattern) for pattern in LONG):
            item.add_marker(pytest.mark.long)


def scope_cache_key(config: pytest.Config) -> str:
    """Where the seconds each unit took are kept: one table per selection (the two steps of make test)."""
    return "procure/scope-seconds/" + "".join(
        c if c.isalnum() else "-" for c in (config.getoption("markexpr") or "all")
    )


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module (or class), or for the modules above its parameter."""
    scope, _, name = nodeid.rpartition("::")
    if scope in SCOPE_BY_PARAMETER and name.endswith("]") and "[" in name:
        values = name.split("[", 1)[1][:-1].split("-")
        group = next((v for v in values if v not in SCOPE_BY_PARAMETER[scope]), values[0])
        return f"{scope}::[{group}]"
    return scope


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    measured: dict[str, float] = config.cache.get(scope_cache_key(config), {}) if config.cache else {}
    markexpr = config.getoption("markexpr") or ""
    if markexpr == "not long":  # make test
        typical, known = TYPICAL_S["fast"], MAKE_TEST_SECONDS
    elif "slow" not in markexpr:  # the whole suite, or the long checks (make test-slow): a module's tests of both kinds
        typical, known = (
            TYPICAL_S["fast"],
            {
                s: SCOPE_SECONDS["slow"].get(s, 0) + SCOPE_SECONDS["fast"].get(s, 0)
                for s in {**SCOPE_SECONDS["slow"], **SCOPE_SECONDS["fast"]}
            },
        )
    else:
        step = "slow" if "slow" in markexpr and "not slow" not in markexpr else "fast"
        typical, known = TYPICAL_S[step], SCOPE_SECONDS[step]

    class CostliestFirst(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def schedule(self) -> None:
            if self.collection is not None or not self._check_nodes_have_same_collection():
                return super().schedule()  # later calls (a node added), or collections that differ: as xdist does
            self.collection = list(next(iter(self.registered_collections.values())))
            units: dict[str, dict[str, bool]] = {}
            for nodeid in self.collection:
                units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            cost = {
                scope: measured.get(scope, known.get(scope, typical * len(tests))) for scope, tests in units.items()
            }
            for scope in sorted(units, key=lambda scope: -cost[scope]):
                self.workqueue[scope] = units[scope]
            for _ in range(max(0, len(self.nodes) - len(self.workqueue))):  # more workers than work
                self.assigned_work.popitem()[0].shutdown()
            for node in self.nodes:
                if self.workqueue:
                    self._assign_work_unit(node)
            for node in self.nodes:
                self._reschedule(node)

        def _reschedule(self, node: Any) -> None:
            # A new module only when the worker holds its last test (it waits for the next before running
            # it): one worker never queues a costly module while another runs dry.
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    return CostliestFirst(config, log)


_took: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _took[scope_of(report.nodeid)] = _took.get(scope_of(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """After a run shared between workers (the one the order above is for), keep what each unit took."""
    config = session.config
    if (
        hasattr(config, "workerinput")
        or getattr(config, "cache", None) is None  # absent under -p no:cacheprovider
        or config.getoption("dist", "no") != "loadscope"
        or not _took
    ):
        return
    key = scope_cache_key(config)
    config.cache.set(
        key, {**config.cache.get(key, {}), **{scope: round(seconds, 2) for scope, seconds in _took.items()}}
    )


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: one small fixture workspace per folder."""
    return DATA_DIR


@pytest.fixture(scope="session", autouse=True)
def _environment_of_the_process():
    """The layers below the command line read variables from procure's Environment, which a command makes from
    os.environ when it runs (procure/environment.py); a test that calls them directly reads the process's
    variables live, so monkeypatch.setenv reaches them as it reaches a command."""
    from procure.environment import Environment, using

    with using(Environment(os.environ)):
        yield


@pytest.fixture(scope="session", autouse=True)
def _solved_plans_shared_by_the_run(pytestconfig: pytest.Config):
    """Solved plans are kept in pytest's cache folder (.pytest_cache), never in the user's ~/.cache.

    The folder is shared by the run's workers, the commands they start, and `make test` and `make test-slow`,
    as a user's is shared by their commands: the example's plan is solved once, not once per report a
    test renders. A kept plan is read only for the very same program (procure/io/solvecache.py); the
    cache itself is tested in tests/test_solvecache.py with folders of its own.
    """
    folder = pytestconfig.cache.mkdir("procure-solved-plans")
    # The key that authenticates kept plans lives outside the cache folder, as the user's does.
    chosen = {"PROCURE_CACHE_DIR": str(folder), "XDG_STATE_HOME": str(pytestconfig.cache.mkdir("procure-state"))}
    before = {name: os.environ.get(name) for name in chosen}
    os.environ.update(chosen)
    yield folder
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# --- reports rendered once per run ------------------------------------------------------------------------
#
# Several modules read the same report (the example's comparison: its charts and plan take seconds; the layout
# test lays out what the formula test reads). Each (workspace, options, format) is rendered once per run, in a
# folder the run's workers share, under the SHA-256 of everything it depends on: the command line, the
# workspace's files, the environment variables a report reads, and procure's source and templates. A lock on
# the entry makes one worker render while another asking for the same report waits, then reads it.

SHARED_ENV = (
    "SOURCE_DATE_EPOCH",
    "PROCURE_CACHE_DIR",
    "COLUMNS",
    "NO_COLOR",
    "TZ",
)  # what the key includes of the environment
NOT_WORKSPACE = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "procure.egg-info"}
NOT_EXAMPLE = {
    "procure",
    "templates",
    "tests",
    "docs",
    "benchmarks",
    "scripts",
    ".ci",
}  # the repository around the example


def tree_digest(root: Path, skip: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """SHA-256 of every file under root (names and bytes), folders named in skip left out."""
    digest = hashlib.sha256()
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in skip and f not in NOT_WORKSPACE)
        for name in sorted(files):
            path = Path(folder) / name
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"not a file")
    return digest.hexdigest()


_SOURCE: list[str] = []


def source_digest() -> str:
    """procure's code and templates, as this run imports and reads them."""
    if not _SOURCE:
        _SOURCE.append(tree_digest(ROOT / "procure") + tree_digest(ROOT / "templates"))
    return _SOURCE[0]


@pytest.fixture(scope="session")
def shared_report(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """shared_report(workspace, "--board", fmt="html") -> the file `procure report --board --format html -w
    workspace --as-of 2026-11-29` writes, rendered once for the whole run (read-only: copy it to change it)."""
    base = tmp_path_factory.getbasetemp()
    folder = (
        base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    ) / "shared-reports"  # the run's, not a worker's
    folder.mkdir(exist_ok=True)

    def render(workspace: Path, *options: str, fmt: str = "html", as_of: str = "2026-11-29") -> Path:
        workspace = Path(workspace).resolve()
        inputs = [
            str(workspace),
            tree_digest(workspace, NOT_EXAMPLE if workspace == ROOT else set()),
            list(options),
            fmt,
            as_of,
            {name: os.environ.get(name) for name in SHARED_ENV},
            source_digest(),
        ]
        key = hashlib.sha256(json.dumps(inputs).encode()).hexdigest()
        done = folder / key
        target = done / f"report.{fmt}"
        with open(folder / f"{key}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this worker dies
            if not done.is_dir():
                work = folder / f"{key}.partial"
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir()
                (work / target.name).write_bytes(report_bytes(workspace, options, fmt, as_of))
                (work / target.name).chmod(0o444)
                work.rename(done)
        return target

    return render


def report_bytes(workspace: Path, options: tuple[str, ...], fmt: str, as_of: str) -> bytes:
    """What `procure report [--board] [--frontier] --format fmt -w workspace --as-of as_of` writes, rendered in process
    from the use case (procure/analysis/usecases/report.py reporting, procure/render/report.py render_report) in the
    environment a command would read (SOURCE_DATE_EPOCH among it); the command's own run is tested in
    tests/test_cli_report.py, which sets this file beside the command's."""
    from datetime import date

    from procure.analysis.usecases.report import reporting
    from procure.environment import Environment, using
    from procure.render.report import render_report

    assert set(options) <= {"--board", "--frontier"}, options
    board = "--board" in options
    with using(Environment(dict(os.environ))):
        found = reporting(workspace, date.fromisoformat(as_of), board=board, frontier="--frontier" in options)
        return render_report(found.evaluation, "board" if board else "comparison", fmt, found.extras)


@pytest.fixture
def workspace_copy(tmp_path: Path) -> Callable[[str], Path]:
    """workspace_copy("basic") -> a fresh copy of tests/data/basic under tmp_path, safe to break."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(DATA_DIR / name, target)
        return target

    return copy


@pytest.fixture(autouse=True)
def _no_inherited_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables are measured as when piped unless a test sets COLUMNS itself.

    pytest-xdist workers inherit COLUMNS=80 and LINES=24; a test of the terminal width sets its own.
    """
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
