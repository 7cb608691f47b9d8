"""Run history in SQLite, and the runs compared (the differences themselves: procure/analysis/differences.py).

Buyers re-check vendors every month from scripts and CI. Each saved run keeps the whole Evaluation
JSON, the input hashes, a label and the time, in one transaction, in `.procure/history.sqlite` inside
the workspace. Several processes may save at once (SQLite's locking with a generous busy timeout);
a corrupt or newer-schema database is reported, never silently reset.
"""

from __future__ import annotations

import json
import math
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from procure.analysis.differences import CONDITIONS as CONDITIONS  # the conditions `--fail-on` names, as before
from procure.analysis.differences import AssumptionChange as AssumptionChange
from procure.analysis.differences import Breach, Diff, breaches, diff, share, thresholds
from procure.analysis.evaluate import Evaluation
from procure.errors import InputError, Problem
from procure.model.units import PerThousand

HISTORY_FILE = Path(".procure") / "history.sqlite"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 5.0  # saves take milliseconds: waiting longer only hides a process that holds the lock
DISPLAY = HISTORY_FILE.as_posix()


class RunInfo(PerThousand):
    id: int
    saved_at: str = Field(description="UTC time the run was saved")
    as_of: date
    label: str | None
    top_offer: str | None
    top_cost_per_task: float | None
    offers: int
    acceptable: int


def _problem(message: str) -> InputError:
    return InputError([Problem(DISPLAY, None, "", message)])


def _busy(exc: sqlite3.Error) -> bool:
    """SQLite's "database is locked" / "busy": another process holds the history, it is not damaged."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


BUSY_MESSAGE = (
    "the history is busy: another process holds it locked (waited {s:g} s); try again when it has finished, "
    "the history is fine and nothing was changed"
)


def _busy_problem() -> InputError:
    return _problem(BUSY_MESSAGE.format(s=BUSY_TIMEOUT_S))


def connect(root: Path, create: bool = True) -> sqlite3.Connection:
    """Open (and on first use create) the history, checking that it is ours and not newer."""
    from procure.io.files import check_link

    path = Path(root) / HISTORY_FILE
    # The history (or its folder) linked out of the workspace would make procure write into a
    # foreign database: refused, as links out of the workspace are for every file.
    for part in (path.parent, path):
        if part.is_symlink() or part.exists():
            check_link(part, DISPLAY, root)
    if path.exists() and not path.is_file():
        raise _problem("is not a regular file: refused")
    if not path.exists() and not create:
        raise _problem("no saved runs yet: save one with `procure evaluate --save`")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise _problem(f"cannot open the history: {exc}") from None
    try:
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise _problem(
                f"the history was written by a newer procure (schema {version}; this one reads {SCHEMA_VERSION}): "
                "upgrade procure"
            )
        if version == 0:
            db.execute("BEGIN IMMEDIATE")
            if db.execute("PRAGMA user_version").fetchone()[0] == 0:  # another process may have won the race
                db.execute(
                    """CREATE TABLE IF NOT EXISTS runs (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        saved_at TEXT NOT NULL,
                        as_of TEXT NOT NULL,
                        label TEXT,
                        top_offer TEXT,
                        top_cost_per_task REAL,
                        offers INTEGER NOT NULL,
                        acceptable INTEGER NOT NULL,
                        inputs TEXT NOT NULL,
                        evaluation TEXT NOT NULL
                    )"""
                )
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        db.execute("SELECT count(*) FROM runs").fetchone()
    except sqlite3.DatabaseError as exc:
        db.close()
        if _busy(exc):
            raise _busy_problem() from None
        raise _problem(
            f"the history database is unreadable ({exc}); move it away to start a new history, nothing was changed"
        ) from None
    except InputError:
        db.close()
        raise
    return db


def save_run(root: Path, ev: Evaluation, label: str | None = None) -> int:
    """Store one Evaluation in one transaction; returns its run id."""
    from procure.textsafe import printable, unsafe_characters

    found = unsafe_characters(label) if label is not None else None
    if found:  # a label is shown by `history` like vendor text: an escape sequence would drive the terminal
        raise InputError(
            [
                Problem(
                    "--label",
                    None,
                    "",
                    f"holds {found} ({printable(label or '')}): refused, as in vendor text; nothing was saved",
                )
            ]
        )
    leader = ev.ranked[0] if ev.ranked else None
    row = (
        datetime.now(tz=UTC).isoformat(timespec="seconds"),
        ev.as_of.isoformat(),
        label,
        leader.id if leader else None,
        leader.metrics["cost_per_task"] if leader else None,
        len(ev.offers),
        len(ev.ranked),
        json.dumps([i.model_dump() for i in ev.inputs]),
        ev.to_json(),
    )
    with closing(connect(root)) as db:
        try:
            db.execute("BEGIN IMMEDIATE")
            cursor = db.execute(
                "INSERT INTO runs (saved_at, as_of, label, top_offer, top_cost_per_task, offers, acceptable, inputs, "
                "evaluation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if _busy(exc):
                raise _busy_problem() from None
            raise _problem(f"could not save the run: {exc}") from None
        return int(cursor.lastrowid or 0)


def _damaged(exc: Exception) -> InputError:
    if isinstance(exc, sqlite3.Error) and _busy(exc):
        return _busy_problem()
    return _problem(
        f"the history database is damaged or unreadable ({exc}); move it away to start a new history, nothing was "
        "changed"
    )


def list_runs(root: Path) -> list[RunInfo]:
    """The saved runs, oldest first; none (not an error) before the first `evaluate --save`."""
    if not (Path(root) / HISTORY_FILE).exists() and not (Path(root) / HISTORY_FILE).is_symlink():
        return []
    with closing(connect(root, create=False)) as db:
        try:
            rows = db.execute(
                "SELECT id, saved_at, as_of, label, top_offer, top_cost_per_task, offers, acceptable FROM runs ORDER "
                "BY id"
            ).fetchall()
            return [
                RunInfo(
                    id=r[0],
                    saved_at=r[1],
                    as_of=r[2],
                    label=r[3],
                    top_offer=r[4],
                    top_cost_per_task=r[5],
                    offers=r[6],
                    acceptable=r[7],
                )
                for r in rows
            ]
        except (sqlite3.DatabaseError, ValidationError) as exc:
            raise _damaged(exc) from None


class History(BaseModel):
    """What `procure history` lists: the saved runs, oldest first."""

    runs: list[RunInfo]


def saved_runs(workspace: Path, as_of: date | None = None) -> History:
    """The runs saved in the history of the workspace at or above `workspace`; with `as_of`, only those evaluated
    as of that date or earlier (the history as it stood for that date)."""
    from procure.io.workspace import find_workspace

    runs = list_runs(find_workspace(workspace))
    return History(runs=[r for r in runs if as_of is None or r.as_of <= as_of])


def _id_ranges(ids: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def load_run(root: Path, run_id: int) -> Evaluation:
    with closing(connect(root, create=False)) as db:
        try:
            found = db.execute("SELECT evaluation FROM runs WHERE id = ?", (run_id,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc) from None
    if found is None:
        ids = [r.id for r in list_runs(root)]
        near = (
            min(ids, key=lambda i: (abs(i - run_id), -i)) if ids else None
        )  # the nearest id: a typo's likeliest meaning
        known = f"did you mean run {near}? (saved runs: {_id_ranges(ids)})" if ids else "no run is saved yet"
        raise _problem(f"no saved run {run_id}; {known}")
    return _parse(found[0], f"{DISPLAY} run {run_id}")


def latest_run_id(root: Path, before: int | None = None) -> int | None:
    if before is not None:
        before = min(before, 2**63 - 1)  # SQLite integers are 64-bit; every id is below this
    with closing(connect(root, create=False)) as db:
        try:
            if before is None:
                found = db.execute("SELECT max(id) FROM runs").fetchone()
            else:
                found = db.execute("SELECT max(id) FROM runs WHERE id < ?", (before,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc) from None
    return found[0] if found else None


MAX_RUN_ID = 2**63 - 1  # SQLite's largest integer
MAX_EVALUATION_BYTES = (
    16 * 1024 * 1024
)  # an offer takes about 12 kB (the example: 12 offers, 148 kB), parsing about 13 times the file


def run_id(ref: str) -> int | None:
    """A run id written in ASCII digits (not '²' or other Unicode digits), or None."""
    if not (ref.isascii() and ref.isdigit()):
        return None
    return int(ref)


def load_evaluation(root: Path, ref: str) -> tuple[Evaluation, str]:
    """A run id from the history, or a path to an Evaluation JSON file; with a label for it."""
    from procure.io.yamlsafe import read_text
    from procure.textsafe import printable

    number = run_id(ref)
    if number is not None:
        if number > MAX_RUN_ID:
            raise _problem(f"no saved run {number} (see `procure history`)")
        return load_run(root, number), f"run {ref}"
    path = Path(ref)
    if not path.exists() and not path.is_symlink():
        raise InputError(
            [Problem(ref, None, "", "neither a run id nor a readable Evaluation JSON file (no such file)")]
        )
    text = read_text(path, ref, MAX_EVALUATION_BYTES)  # a regular file only: a pipe or /dev/zero never ends
    return _parse(text, ref), printable(ref)


def _check_text(ev: Evaluation, display: str) -> None:
    """An Evaluation, from a file or a row of the history, is input like any other: text holding
    control characters, separators or bidirectional overrides (which would drive or spoof the
    terminal) is refused, with where it is; so is a number that is not finite (NaN compares unequal
    to everything, so a NaN baseline would hide any rise and read as "no changes") and an offer id
    listed twice (500 copies of each offer would read as "the same 12 offers")."""

    from procure.textsafe import unsafe_characters

    seen: dict[str, int] = {}
    for index, record in enumerate(ev.offers):
        if record.id in seen:
            raise InputError(
                [
                    Problem(
                        display,
                        None,
                        f"offers[{index}].id",
                        f"offer {record.id} is listed twice (also offers[{seen[record.id]}]): each offer appears once",
                    )
                ]
            )
        seen[record.id] = index

    def walk(value: Any, where: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                [Problem(display, None, where, f"is {value}: every figure of an Evaluation is a finite number")]
            )
        if isinstance(value, str):
            found = unsafe_characters(value)
            if found:
                raise InputError(
                    [Problem(display, None, where, f"holds {found}: refused (an Evaluation file is text from outside)")]
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key, where)
                walk(item, f"{where}.{key}" if where else str(key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    walk(ev.model_dump(), "")  # Python values: the JSON form would show NaN as null


def _parse(text: str, display: str) -> Evaluation:
    """An Evaluation from a file or a history row, checked before any diff: known fields only (a
    field this procure does not know would be silently dropped), then `_check_text`."""
    try:
        ev = Evaluation.model_validate_json(text, extra="forbid")
    except ValueError as exc:
        if not isinstance(exc, ValidationError):
            raise InputError([Problem(display, None, "", f"not an Evaluation this procure reads: {exc}")]) from None
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        message = (
            "unknown field (an Evaluation this procure writes has no such field)"
            if first["type"] == "extra_forbidden"
            else first["msg"]
        )
        raise InputError([Problem(display, None, where, f"not an Evaluation this procure reads: {message}")]) from None
    _check_text(ev, display)
    return ev


# --- runs compared --------------------------------------------------------------------------------


# --- thresholds ---------------------------------------------------------------------------------


# --- the use cases: diff two runs, re-evaluate against the baseline -------------------------------------------


def compare_runs(
    workspace: Path, base: str | None, head: str | None, as_of: date | None = None
) -> tuple[Diff, Evaluation]:
    """`procure diff`: two runs or Evaluation files of the history of the workspace at or above `workspace`
    compared, and the head evaluation. Without `head`, the latest saved run; without `base`, the run saved before
    the head; with `as_of`, those defaults are taken among the runs evaluated as of that date or earlier."""
    from procure.io.workspace import find_workspace

    root = find_workspace(workspace)
    dated = [r.id for r in list_runs(root) if r.as_of <= as_of] if as_of is not None else None
    if head is None:
        latest = latest_run_id(root) if dated is None else max(dated, default=None)
        if latest is None:
            if dated is not None and latest_run_id(root) is not None:
                raise _problem(f"no run evaluated as of {as_of} or earlier (see `procure history`)")
            raise _problem("no saved runs yet: save one with `procure evaluate --save`")
        head = str(latest)
    if base is None:
        previous = None
        if run_id(head) is not None:
            before = run_id(head)
            previous = (
                latest_run_id(root, before=before)
                if dated is None
                else max((i for i in dated if i < (before or 0)), default=None)
            )
        if previous is None:
            raise InputError([Problem("diff", None, "", "only one run to compare: name BASE, or save another run")])
        base = str(previous)
    base_ev, base_label = load_evaluation(root, base)
    head_ev, head_label = load_evaluation(root, head)
    if base == head:
        raise InputError(
            [Problem("diff", None, "", f"BASE and HEAD are the same ({base}): name two different runs or files")]
        )
    return diff(base_ev, head_ev, base_label, head_label), head_ev


def delivered_breaches(ws: Any, ev: Evaluation, overrun: str | None) -> list[Breach]:
    """Signed vendors' latest month: an SLA breach, credits owed, a delivered cost per task past the limit
    (`overrun` as given, else actuals.max_cost_overrun), and credit claims whose window is closing."""
    if not ws.actuals:
        return []
    from procure.analysis.claims import claim_breaches, draft_claims
    from procure.analysis.promised import scored_promise
    from procure.analysis.scorecard import breaches as scorecard_breaches

    limit = ws.config.actuals.max_cost_overrun if overrun is None else share(overrun, "--max-delivered-overrun")
    _, result = scored_promise(ws, ev.as_of)  # delivered figures are set against the promise
    settings = ws.config.reevaluate  # claims worth more than claim_min_amount closing within claim_warning_days
    closing_claims = claim_breaches(
        ws, draft_claims(ws, result, ev.as_of), ev.as_of, settings.claim_warning_days, settings.claim_min_amount
    )
    return [Breach(condition=c, detail=d) for c, d in scorecard_breaches(result, limit) + closing_claims]


class FirstRun(BaseModel):
    """The first re-evaluation: no earlier run to compare with, so this one became the baseline (unless delivered
    evidence breached a threshold), with what the delivered evidence breached."""

    baseline_saved: int | None = Field(
        description="no earlier run: the run this evaluation was saved as, the baseline (null when delivered "
        "evidence breaches a threshold: nothing saved until --accept, and with --baseline FILE)"
    )
    breached: list[Breach]
    baseline_file: str | None = Field(
        default=None, description="with --baseline FILE --accept and no FILE yet: the file written as the baseline"
    )


@dataclass
class Reevaluation:
    """What `procure reevaluate` found: this evaluation against the baseline, the thresholds breached, and
    the run saved (none while a breach keeps the baseline, unless accepted)."""

    evaluation: Evaluation
    baseline: int | None  # the run compared with; None: no earlier run, this one is the first
    diff: Diff | None  # this evaluation against the baseline; None on the first run
    breached: list[Breach]  # thresholds breached (on the first run: by delivered evidence only)
    saved: int | None  # the run saved; None when a breach kept the baseline
    accepted: bool  # --accept: saved despite a breach
    baseline_file: str | None = None  # --baseline FILE: the file compared with (and rewritten by --accept)
    written: bool = False  # --baseline FILE: this evaluation was written to it (--accept)

    @property
    def first_run(self) -> FirstRun | None:
        """The document of the first re-evaluation (None when there was a baseline to compare with)."""
        if self.diff is not None:
            return None
        return FirstRun(baseline_saved=self.saved, breached=self.breached, baseline_file=self.baseline_file)


def reevaluate(
    workspace: Path,
    as_of: date | None,
    max_increase: str | None = None,
    fail_on: str | None = None,
    max_delivered_overrun: str | None = None,
    accept: bool = False,
    label: str | None = None,
    evaluated: Any = None,
    baseline: Path | None = None,
) -> Reevaluation:
    """Evaluate, compare with the last saved run and save this one as the new baseline unless a threshold is
    breached (or `accept`). The first run only saves the baseline, unless delivered evidence breaches a threshold.
    With `baseline` (an Evaluation JSON file the user keeps, e.g. in git) the comparison is with that file and the
    history is neither read nor written: `accept` rewrites the file, nothing else does.
    `evaluated(ev)` is called once the evaluation is made, before the thresholds are checked."""
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    if baseline is not None and label is not None:
        raise InputError(
            [Problem("--label", None, "", "labels a saved run; with --baseline FILE nothing is saved: drop one")]
        )
    ws = load_workspace(workspace)

    limit, conditions = thresholds(ws.config.reevaluate, max_increase, fail_on)
    ev = evaluate(ws, as_of)
    if evaluated is not None:
        evaluated(ev)
    delivered = delivered_breaches(ws, ev, max_delivered_overrun)
    if baseline is not None:
        return _against_file(baseline, ev, limit, conditions, delivered, accept)
    previous = latest_run_id(ws.root) if (Path(ws.root) / HISTORY_FILE).exists() else None
    if previous is None:
        saved = save_run(ws.root, ev, label) if not delivered or accept else None
        return Reevaluation(ev, None, None, delivered, saved, accept)
    result = diff(load_run(ws.root, previous), ev, f"run {previous}", "this evaluation")
    breached = breaches(result, limit, conditions) + delivered
    saved = save_run(ws.root, ev, label) if not breached or accept else None
    return Reevaluation(ev, previous, result, breached, saved, accept)


def baseline_problem(path: Path, message: str) -> InputError:
    return InputError([Problem(str(path), None, "", message)])


def _against_file(
    path: Path, ev: Evaluation, limit: float | None, conditions: tuple[str, ...], delivered: list[Breach], accept: bool
) -> Reevaluation:
    """`reevaluate --baseline FILE`: this evaluation against the Evaluation JSON in FILE; `accept` writes this one
    there (atomically). A missing FILE is written only when accepted: in CI a baseline forgotten in a commit must
    not pass as a first run."""
    from procure.io.files import write_atomic
    from procure.io.yamlsafe import read_text
    from procure.textsafe import printable

    shown = printable(str(path))
    if not path.exists():
        if not accept:
            raise baseline_problem(
                path,
                "no such baseline file: write it with `procure reevaluate --baseline "
                f"{shown} --accept`, then commit it",
            )
        write_atomic(path, ev.to_json())
        return Reevaluation(ev, None, None, delivered, None, True, shown, True)
    before = _parse(read_text(path, str(path), MAX_EVALUATION_BYTES), shown)
    result = diff(before, ev, shown, "this evaluation")
    breached = breaches(result, limit, conditions) + delivered
    if accept:
        write_atomic(path, ev.to_json())
    return Reevaluation(ev, None, result, breached, None, accept, shown, accept)
