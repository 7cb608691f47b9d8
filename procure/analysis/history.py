"""Run history in SQLite and the differences between two Evaluations.

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

from procure.analysis.evaluate import Evaluation
from procure.errors import InputError, Problem
from procure.model.kinds import kind_named
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
    import math

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


# --- differences --------------------------------------------------------------------------------


class Driver(PerThousand):
    """One input behind a move of an offer's cost per task: its old and new value, and its share."""

    PER_TASK = ("contribution",)  # costs per task, each with its figure per 1,000 tasks in JSON

    field: str = Field(
        description="the figure that changed, as the Evaluation names it (metrics.<key>, or workload.<key>)"
    )
    label: str
    before: float | None
    after: float | None
    contribution: float = Field(
        description="the part of the cost-per-task change it explains (workspace currency per task)"
    )
    share: float = Field(description="contribution / the whole change of the cost per task (the shares add up to 1)")


# What a GPU-hour offer's cost per task is made of (docs/cost-model.md): full cost per GPU-hour, the
# sum of these, over successful tasks per GPU-hour, the product of those (and 3,600 / output tokens).
COST_PARTS = {
    "rent": "rent/GPU-h",
    "fees": "fees/GPU-h",
    "financing": "financing/GPU-h",
    "prepay_risk": "prepay risk/GPU-h",
    "ops": "staff/GPU-h",
    "software": "software/GPU-h",
}
TASK_FACTORS = {
    "throughput": "throughput tok/s/GPU",
    "availability": "availability",
    "success_rate": "success rate",
    "utilization": "utilization",
    "fill": "fill",
}
# Per-token offers: the cost per task is the sum of these.
TOKEN_PARTS = {"rent_per_task": "tokens/task", "fees_per_task": "fees/task", "ops_per_task": "staff/task"}


def explain_move(before: Any, after: Any, output_tokens: tuple[float, float]) -> list[Driver]:
    """Which inputs moved an offer's cost per task, and how much of the move each explains.

    cost = F / T with F = rent + fees + financing + prepay risk + staff + software (per GPU-hour)
    and T = throughput x 3,600 / output tokens x availability x success rate x utilization x fill.
    The change splits exactly in two at the midpoint, dC = dF x mean(1/T) + d(1/T) x mean(F); dF
    among the parts of F by their own changes, d(1/T) among the factors of T by their changes of
    logarithm (ln T is their sum). Per-token offers: the parts of the cost per task add up.
    A rent that moved with an unchanged list price is named by the discount (or the index).
    The headline is the expected cost (the mean of the draws); the split is made on the cost at the typical inputs,
    whose formula this is, and each part scaled by the ratio of the two moves, so the parts add up to the headline's
    move and each input keeps its share (a run saved before the headline was the mean has only the typical figure).
    """
    mb, ma = before.metrics, after.metrics
    cost_b, cost_a = mb.get("cost_per_task"), ma.get("cost_per_task")
    if cost_b is None or cost_a is None or cost_a == cost_b:
        return []
    point_b, point_a = mb.get("point_cost_per_task", cost_b), ma.get("point_cost_per_task", cost_a)
    if point_b is None or point_a is None or point_a == point_b:
        return []
    total, scale = point_a - point_b, (cost_a - cost_b) / (point_a - point_b)
    raw: list[tuple[str, str, float | None, float | None, float]] = []
    if kind_named(after.pricing_basis).per_task or kind_named(before.pricing_basis).per_task:
        for key, label in TOKEN_PARTS.items():
            b, a = mb.get(key) or 0.0, ma.get(key) or 0.0
            if a != b:
                raw.append((f"metrics.{key}", label, b, a, a - b))
    else:
        full_b, full_a = mb.get("full"), ma.get("full")
        tasks_b, tasks_a = mb.get("successful_tasks_per_gpu_hour"), ma.get("successful_tasks_per_gpu_hour")
        if not all(isinstance(x, (int, float)) and x > 0 for x in (full_b, full_a, tasks_b, tasks_a)):
            return []
        per_task = (1 / tasks_b + 1 / tasks_a) / 2
        for key, label in COST_PARTS.items():
            b, a = mb.get(key) or 0.0, ma.get(key) or 0.0
            if a != b:
                if key == "rent" and mb.get("list_price") != ma.get("list_price"):
                    raw.append(
                        (
                            "metrics.list_price",
                            "list price/GPU-h",
                            mb.get("list_price"),
                            ma.get("list_price"),
                            (a - b) * per_task,
                        )
                    )
                else:
                    raw.append((f"metrics.{key}", label, b, a, (a - b) * per_task))
        inverse_change = (1 / tasks_a - 1 / tasks_b) * (full_b + full_a) / 2
        logs: list[tuple[str, str, float, float, float]] = []
        for key, label in TASK_FACTORS.items():
            b, a = mb.get(key), ma.get(key)
            if b and a and a != b:
                logs.append((f"metrics.{key}", label, b, a, math.log(a / b)))
        if output_tokens[0] != output_tokens[1]:
            logs.append(
                (
                    "workload.output_tokens",
                    "output tokens/task",
                    output_tokens[0],
                    output_tokens[1],
                    -math.log(output_tokens[1] / output_tokens[0]),
                )
            )
        log_total = math.log(tasks_a / tasks_b)
        if logs and log_total:
            for field, label, b, a, d in logs:
                raw.append((field, label, b, a, inverse_change * d / log_total))
    drivers = [
        Driver(field=f, label=lab, before=b, after=a, contribution=c * scale, share=c / total)
        for f, lab, b, a, c in raw
        if c
    ]
    return sorted(drivers, key=lambda d: -abs(d.contribution))


class OfferDiff(PerThousand):
    PER_TASK = (
        "cost_before",
        "cost_after",
        "cost_change",
    )  # costs per task, each with its figure per 1,000 tasks in JSON

    id: str
    vendor: str
    status: str = Field(description="new, removed, expired or present")
    rank_before: int | None = None
    rank_after: int | None = None
    grade_before: str | None = None
    grade_after: str | None = None
    acceptable_before: bool | None = None
    acceptable_after: bool | None = None
    gates_failed_before: list[str] = Field(default_factory=list)
    gates_failed_after: list[str] = Field(default_factory=list)
    cost_before: float | None = None
    cost_after: float | None = None
    cost_change: float | None = None
    cost_change_share: float | None = None
    explained_by: list[Driver] = Field(
        default_factory=list,
        description="for a moved cost per task: the inputs that changed, old and new, and the share of the move each "
        "explains",
    )

    @property
    def rank_changed(self) -> bool:
        return self.status == "present" and self.rank_before != self.rank_after

    @property
    def changed(self) -> bool:
        """Anything differs: presence, rank, grade, acceptance, failed gates or cost."""
        return (
            self.status != "present"
            or self.rank_before != self.rank_after
            or self.grade_before != self.grade_after
            or self.acceptable_before != self.acceptable_after
            or self.gates_failed_before != self.gates_failed_after
            or self.cost_before != self.cost_after
        )

    @property
    def grade_changed(self) -> bool:
        return self.status == "present" and self.grade_before != self.grade_after

    @property
    def gates_changed(self) -> bool:
        return self.status in ("present", "expired") and (
            self.acceptable_before != self.acceptable_after or self.gates_failed_before != self.gates_failed_after
        )


class AssumptionChange(BaseModel):
    path: str
    before: Any
    after: Any


class Diff(BaseModel):
    base: str
    head: str
    base_as_of: date
    head_as_of: date
    leader_before: str | None
    leader_after: str | None
    offers: list[OfferDiff]
    assumptions: list[AssumptionChange] = Field(
        description="changes in the workload, assumptions and policy of procure.yaml"
    )

    @property
    def new_cheapest(self) -> bool:
        return self.leader_before != self.leader_after

    @property
    def unchanged(self) -> bool:
        """Nothing differs between the two evaluations but, perhaps, their dates."""
        return not self.assumptions and not self.new_cheapest and not any(o.changed for o in self.offers)


def _failed(record: Any) -> list[str]:
    return sorted(g.gate for g in record.gates if not g.passed)


def diff(base: Evaluation, head: Evaluation, base_label: str, head_label: str) -> Diff:
    before = {o.id: o for o in base.offers}
    after = {o.id: o for o in head.offers}
    changes = []
    for offer_id in sorted(set(before) | set(after)):
        b, a = before.get(offer_id), after.get(offer_id)
        if b is None and a is not None:
            changes.append(
                OfferDiff(
                    id=offer_id,
                    vendor=a.vendor,
                    status="new",
                    rank_after=a.rank,
                    grade_after=a.grade,
                    acceptable_after=a.acceptable,
                    gates_failed_after=_failed(a),
                    cost_after=a.metrics["cost_per_task"],
                )
            )
            continue
        if a is None and b is not None:
            changes.append(
                OfferDiff(
                    id=offer_id,
                    vendor=b.vendor,
                    status="removed",
                    rank_before=b.rank,
                    grade_before=b.grade,
                    acceptable_before=b.acceptable,
                    gates_failed_before=_failed(b),
                    cost_before=b.metrics["cost_per_task"],
                )
            )
            continue
        assert a is not None and b is not None
        cost_b, cost_a = b.metrics["cost_per_task"], a.metrics["cost_per_task"]
        change = cost_a - cost_b if cost_a is not None and cost_b is not None else None
        expired = "validity" in _failed(a) and "validity" not in _failed(b)
        changes.append(
            OfferDiff(
                id=offer_id,
                vendor=a.vendor,
                status="expired" if expired else "present",
                rank_before=b.rank,
                rank_after=a.rank,
                grade_before=b.grade,
                grade_after=a.grade,
                acceptable_before=b.acceptable,
                acceptable_after=a.acceptable,
                gates_failed_before=_failed(b),
                gates_failed_after=_failed(a),
                cost_before=cost_b,
                cost_after=cost_a,
                cost_change=change,
                cost_change_share=change / cost_b if change is not None and cost_b else None,
                explained_by=explain_move(b, a, (base.workload.output_tokens, head.workload.output_tokens)),
            )
        )
    return Diff(
        base=base_label,
        head=head_label,
        base_as_of=base.as_of,
        head_as_of=head.as_of,
        leader_before=base.summary.recommended,
        leader_after=head.summary.recommended,
        offers=changes,
        assumptions=_assumption_changes(base, head),
    )


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        found: dict[str, Any] = {}
        for key, item in value.items():
            found.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return found
    return {prefix: value}


def _assumption_changes(base: Evaluation, head: Evaluation) -> list[AssumptionChange]:
    def settings(ev: Evaluation) -> dict[str, Any]:
        return _flatten(
            {
                "workload": ev.workload.model_dump(mode="json"),
                "assumptions": ev.assumptions.model_dump(mode="json"),
                "policy": ev.policy.model_dump(mode="json"),
            }
        )

    b, a = settings(base), settings(head)
    return [
        AssumptionChange(path=key, before=b.get(key), after=a.get(key))
        for key in sorted(set(b) | set(a))
        if b.get(key) != a.get(key)
    ]


# --- thresholds ---------------------------------------------------------------------------------

CONDITIONS = ("rank-change", "grade-change", "new-cheapest", "gate-change")


class Breach(BaseModel):
    condition: str
    detail: str


def breaches(result: Diff, max_increase: float | None, fail_on: tuple[str, ...]) -> list[Breach]:
    """The thresholds a re-evaluation breaches: cost increases past `max_increase` on each offer
    acceptable in both runs, and the conditions named in `fail_on`."""
    found = []
    if max_increase is not None:
        for o in result.offers:
            # A rise of exactly the limit is within it (float dust aside).
            if (
                o.acceptable_before
                and o.acceptable_after
                and o.cost_change_share is not None
                and o.cost_change_share > max_increase + 1e-9
            ):
                found.append(
                    Breach(
                        condition="max-increase",
                        detail=f"{o.id}: cost per task up {o.cost_change_share:.1%} (limit {max_increase:.1%})",
                    )
                )
    if "rank-change" in fail_on:
        found += [
            Breach(
                condition="rank-change",
                detail=f"{o.id}: rank from {o.rank_before or 'unranked'} to {o.rank_after or 'unranked'}",
            )
            for o in result.offers
            if o.rank_changed
        ]
    if "grade-change" in fail_on:
        found += [
            Breach(
                condition="grade-change",
                detail=f"{o.id}: grade from {o.grade_before or 'ungraded'} to {o.grade_after or 'ungraded'}",
            )
            for o in result.offers
            if o.grade_changed
        ]
    if "new-cheapest" in fail_on and result.new_cheapest:
        found.append(
            Breach(
                condition="new-cheapest",
                detail=f"cheapest acceptable offer from {result.leader_before or 'none'} to "
                f"{result.leader_after or 'none'}",
            )
        )
    if "gate-change" in fail_on:
        for o in result.offers:
            if o.gates_changed:
                found.append(
                    Breach(
                        condition="gate-change",
                        detail=f"{o.id}: failed gates from {', '.join(o.gates_failed_before) or 'none'} to "
                        f"{', '.join(o.gates_failed_after) or 'none'}",
                    )
                )
    return found


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


def share(text: str, option: str) -> float:
    """A share as a threshold option writes it: '5%' or 0.05 -> 0.05 (`option` names it in a problem)."""
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1]) / 100 if percent else float(raw)
    except ValueError:
        raise InputError([Problem(option, None, "", f"expected a share like 5% or 0.05 (got {text!r})")]) from None
    if not percent and value > 1:  # a bare 5 would mean +500%: say which was meant
        raise InputError(
            [
                Problem(
                    option,
                    None,
                    "",
                    f"a bare number is a share from 0 to 1 (0.05 = 5%): write {raw}% for {raw} percent (got {text!r})",
                )
            ]
        )
    if not 0 <= value <= 10 or value != value:  # at most +1000%
        raise InputError(
            [Problem(option, None, "", f"expected a share like 5% or 0.05, from 0 to 1000% (got {text!r})")]
        )
    return value


def thresholds(settings: Any, max_increase: str | None, fail_on: str | None) -> tuple[float | None, tuple[str, ...]]:
    """The cost increase and the conditions that fail a re-evaluation: `--max-increase` and `--fail-on` as given,
    else `reevaluate:` in procure.yaml (`settings`); an unknown condition is refused."""
    limit = settings.max_increase
    if max_increase is not None:
        limit = share(max_increase, "--max-increase")
    conditions = tuple(settings.fail_on)
    if fail_on is not None:
        conditions = tuple(c.strip() for c in fail_on.split(",") if c.strip())
        unknown = [c for c in conditions if c not in CONDITIONS]
        if unknown:
            raise InputError(
                [
                    Problem(
                        "--fail-on",
                        None,
                        "",
                        f"unknown condition {', '.join(unknown)} (expected: {', '.join(CONDITIONS)})",
                    )
                ]
            )
    return limit, conditions


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
