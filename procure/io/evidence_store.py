"""Evidence appended and merged, never replaced: `store_evidence` merges what an import read into what is kept in
actuals/OFFER-ID/ (procure/io/actuals.py), by each kind's natural key (a metric month; an invoice's month and id; an
incident's start and components), names every kept entry it replaces, and runs under the workspace's evidence lock
(`evidence_lock`), so concurrent imports serialise."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from procure.errors import InputError, Problem
from procure.io.actuals import (
    ACTUALS,
    FOCUS_CORRECTION,
    FOCUS_INVOICE_ID,
    INVOICE_ID,
    LOCK_NAME,
    LOCK_WAIT_S,
    Invoice,
    MonthMetrics,
    _fmt,
    _summed_months_checked,
    check_metrics_month,
    invoices_csv,
    is_correction,
    kept_columns,
    metrics_csv,
    read_invoice_rows,
    read_metrics_csv,
)

K = TypeVar("K")


V = TypeVar("V")


@contextlib.contextmanager
def evidence_lock(root: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the workspace's evidence lock (an exclusive `flock` on .procure/evidence.lock) for the
    block: every import that reads the kept evidence, merges and writes it does so inside, so two
    imports into one workspace run one after the other and neither loses the other's months. Waits
    up to `wait_s` seconds for another import, then refuses (exit 2) rather than hang. The lock is
    the process's: it is released when the block ends or the process dies."""
    import fcntl
    import time

    from procure.io.files import check_link

    folder = Path(root) / ".procure"
    where = f"{folder.name}/{LOCK_NAME}"
    for part in (folder, folder / LOCK_NAME):  # linked out of the workspace: never create a file there
        if part.is_symlink() or part.exists():
            check_link(part, where, root)
    try:
        folder.mkdir(exist_ok=True)
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        raise InputError(
            [Problem(where, None, "", f"cannot open the workspace's evidence lock: {exc.strerror or exc}")]
        ) from None
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise InputError(
                        [
                            Problem(
                                where,
                                None,
                                "",
                                f"another import has held the workspace's evidence for {wait_s:g} s: try again when it "
                                "has finished",
                            )
                        ]
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def merge_by_key(
    stored: dict[K, V],
    incoming: dict[K, V],
    name: Callable[[K], str],
    same: Callable[[V, V], bool] = lambda a, b: a == b,
) -> tuple[dict[K, V], list[str]]:
    """The kept entries with the incoming ones merged in by their natural key: an incoming entry
    replaces a kept one with the same key, and each replacement that changes something (`same` is
    false) is named ("`name(key)`: replaced by this import"); every other kept entry stays.
    Returns (merged, notes)."""
    merged = dict(stored)
    notes = []
    for key in sorted(incoming, key=repr):
        if key in stored and not same(stored[key], incoming[key]):
            notes.append(f"{name(key)}: replaced by this import")
        merged[key] = incoming[key]
    return merged, notes


def incident_key(i: Any) -> tuple[str, tuple[str, ...]]:
    """An incident's natural key: its start (UTC) and the components it names (case-folded)."""
    return (i.start.isoformat(), tuple(sorted(c.casefold() for c in i.components)))


def _incident_name(key: tuple[str, tuple[str, ...]]) -> str:
    return f"incident {key[0].replace('+00:00', 'Z')} ({', '.join(key[1]) or 'whole service'})"


@dataclass
class Incoming:
    """Evidence read from an import's files, before it is merged into what is kept. Each
    incident carries where it was read (`where`); statuspage holds (raw item, incident) pairs."""

    metrics: dict[str, MonthMetrics] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # the metric files
    invoices: dict[tuple[str, str], Invoice] = field(default_factory=dict)  # (month, invoice id)
    credits: dict[str, tuple[float, str]] = field(
        default_factory=dict
    )  # month -> (credits received, invoices), from FOCUS
    incidents: list[Any] = field(default_factory=list)  # procure.io.incidents.Incident, from CSVs
    statuspage: list[tuple[dict, Any]] = field(default_factory=list)
    page: Any = None  # the Statuspage `page` object, kept in incidents.json


def store_evidence(
    root: Path, offer_id: str, incoming: Incoming, size: float | None = None, display: str = "this import"
) -> tuple[list[Path], list[str]]:
    """Merge `incoming` into actuals/OFFER-ID/ under the evidence lock, check the merged files with
    the loader's own checks (`size`: the offer's GPUs), and write them all at once. Returns (written,
    notes naming what was replaced). Raises InputError, writing nothing, on any problem. Every
    importer (Prometheus files, a live Prometheus, billing exports) stores through this."""
    from procure.io.files import write_files_atomic

    folder = Path(root) / ACTUALS / offer_id
    with evidence_lock(root):
        m = _Merge(folder, incoming, size, display)
        if incoming.metrics:
            _merge_metrics(m)
        if incoming.invoices:
            _merge_invoices(m)
        if incoming.credits:
            _merge_credits(m)
        if incoming.incidents:
            _merge_incident_csv(m)
        if incoming.statuspage:
            _merge_statuspage(m)
        if m.problems:
            raise InputError(m.problems)
        return write_files_atomic(folder, m.files), m.notes


@dataclass
class _Merge:
    """One import merged into an offer's kept evidence: its folder, what came in (`size`: the offer's GPUs; `display`:
    the import's name in messages), and what the merge gathers: the files to write, the notes and the problems."""

    folder: Path
    incoming: Incoming
    size: float | None
    display: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def kept(self, name: str) -> tuple[Path, str]:
        """The kept file `name` and how messages name it."""
        return self.folder / name, f"{ACTUALS}/{self.folder.name}/{name}"


def _merge_metrics(m: _Merge) -> None:
    from procure.io.tables import read_csv_rows

    incoming, size, notes = m.incoming, m.size, m.notes
    path, shown = m.kept("metrics.csv")
    kept: dict[str, MonthMetrics] = {}
    sources: list[str] = []
    if path.exists():
        found: list[Problem] = []
        kept = read_metrics_csv(path, shown, found, size)
        rows, comments, _ = read_csv_rows(path, shown, kept_columns(path, shown))
        _forgive(m, found, {line: row["month"] for line, row in rows}, set(incoming.metrics), lambda k: f"month {k}")
        sources = [s for c in comments if "from:" in c for s in c.split("from:", 1)[1].split("; ") if s.strip()]
    for key, month in sorted(incoming.metrics.items()):
        check_metrics_month(month, size, m.display, None, m.problems, prefix=f"month {key}: ")
    # a month's quantiles cannot be summed from two imports: the better measured month is kept, so a
    # last sample at 00:05 on the 1st, or one day's snapshots, never replaces a whole month
    # compared as metrics.csv writes them (_fmt): the same samples read back must not count as better measured
    thinner = {
        k
        for k, month in incoming.metrics.items()
        if k in kept and float(_fmt(kept[k].coverage or 0.0)) > float(_fmt(month.coverage or 0.0))
    }
    for key in sorted(thinner):
        notes.append(
            f"month {key}: kept as it was (its samples cover {kept[key].coverage or 0:.1%} of the month, this import's "
            f"{incoming.metrics[key].coverage or 0:.1%}): import the month's files together to replace it"
        )
    merged, replaced = merge_by_key(
        kept, {k: month for k, month in incoming.metrics.items() if k not in thinner}, lambda k: f"month {k}"
    )
    notes += replaced
    m.files["metrics.csv"] = metrics_csv(merged, list(dict.fromkeys([*sources, *incoming.sources])))


def _forgive(
    m: _Merge, found: list[Problem], key_of_line: dict[int, Any], replaced: set, name: Callable[[Any], str]
) -> None:
    """The kept file's problems, less those of rows this import replaces (a corrective import may
    replace a row the loader refuses: it is named); the rest refuse the import."""
    for p in found:
        key = key_of_line.get(p.line) if p.line is not None else None
        if key is not None and key in replaced:
            m.notes.append(f"{name(key)}: the kept row ({p.field}: {p.message}) is replaced by this import")
        else:
            m.problems.append(p)


def _merge_invoices(m: _Merge) -> None:
    from procure.io.tables import read_csv_rows

    incoming, size, display, notes, problems = m.incoming, m.size, m.display, m.notes, m.problems
    path, shown = m.kept("invoices.csv")
    kept: dict[tuple[str, str], Invoice] = {}
    if path.exists():
        found: list[Problem] = []
        kept = {k: i for k, (i, _) in read_invoice_rows(path, shown, found, size).items()}
        rows, _, _ = read_csv_rows(path, shown, kept_columns(path, shown, invoices=True))
        _forgive(
            m,
            found,
            {line: (row["month"], row.get(INVOICE_ID, "")) for line, row in rows},
            set(incoming.invoices),
            lambda k: f"invoice {k[0]}" + (f" {k[1]}" if k[1] else ""),
        )
    # a FOCUS export is its month's whole bill: it and the month's other invoices never add up (a correction
    # billed later stays with its month, whichever invoice is kept)
    incoming_kinds = {(k[0], k[1] == FOCUS_INVOICE_ID) for k in incoming.invoices if not is_correction(k[1])}
    for key in sorted(
        k for k in kept if not is_correction(k[1]) and (k[0], k[1] != FOCUS_INVOICE_ID) in incoming_kinds
    ):
        notes.append(
            f"invoice {key[0]}"
            + (f" {key[1]}" if key[1] else "")
            + (
                ": replaced by this import's FOCUS export"
                if key[1] != FOCUS_INVOICE_ID
                else ": a FOCUS export, replaced by this import's invoices"
            )
        )
        del kept[key]
    merged, replaced = merge_by_key(kept, incoming.invoices, lambda k: f"invoice {k[0]}" + (f" {k[1]}" if k[1] else ""))
    notes += replaced
    for month, invoice_id in sorted(k for k in incoming.invoices if is_correction(k[1])):
        if not any(k[0] == month and not is_correction(k[1]) for k in merged):
            problems.append(
                Problem(
                    display,
                    None,
                    "ChargeClass",
                    f"{month}: the file holds only corrections of this month (ChargeClass Correction, billed in "
                    f"{invoice_id[len(FOCUS_CORRECTION) :]}) and no invoice of {month} is kept to correct: import the "
                    f"export of {month} first, or with it",
                )
            )
            del merged[(month, invoice_id)]
    _summed_months_checked(merged, size, display, {}, problems, prefix="month {month}: ")
    m.files["invoices.csv"] = invoices_csv(merged)


def _merge_credits(m: _Merge) -> None:
    """credits.csv by month: a FOCUS export's month replaces the kept one, as its invoice does."""
    from procure.io.focus import credits_csv, read_credits

    path, shown = m.kept("credits.csv")
    kept = read_credits(path, shown, m.problems) if path.exists() else {}
    merged, replaced = merge_by_key(kept, m.incoming.credits, lambda k: f"credits {k}")
    m.notes += replaced
    m.files["credits.csv"] = credits_csv(merged)


def _merge_incident_csv(m: _Merge) -> None:
    """The kept incidents.csv and the incoming CSV rows, merged by start and components; two rows
    that overlap on a component afterwards are refused as the loader would refuse them."""
    from procure.io.incidents import read_incidents_csv
    from procure.io.tables import read_csv_rows

    path, shown = m.kept("incidents.csv")
    kept_list: list[Any] = []
    comments: list[str] = []
    if path.exists():
        try:
            kept_list = read_incidents_csv(path, shown)
        except InputError as exc:
            m.problems.extend(exc.problems)
            return
        _, comments, _ = read_csv_rows(path, shown, ("start", "end", "impact", "components"))
    kept = {incident_key(i): i for i in kept_list}
    new = {incident_key(i): i for i in m.incoming.incidents}
    merged, replaced = merge_by_key(
        kept, new, _incident_name, lambda a, b: (a.end, a.impact, a.components) == (b.end, b.impact, b.components)
    )
    m.problems.extend(_merged_overlaps(list(merged.values())))
    m.notes += replaced
    m.files["incidents.csv"] = incidents_csv(list(merged.values()), comments)


def _merged_overlaps(incidents: list[Any]) -> list[Problem]:
    """The incident CSV's overlap check over merged rows from several files, each named by its own file and line."""
    import re
    from dataclasses import replace

    from procure.io.incidents import _overlaps

    numbered = [replace(i, where=f"merged:{n}") for n, i in enumerate(incidents, start=1)]
    found = []
    for p in _overlaps(numbered, "merged"):
        later = incidents[(p.line or 1) - 1]
        other = re.search(r"line (\d+)", p.message)
        clash = f"the incident at {incidents[int(other.group(1)) - 1].where}" if other else "another incident"
        file, _, line = later.where.rpartition(":")
        found.append(
            Problem(
                file,
                int(line) if line.isdigit() else None,
                "start",
                f"overlaps {clash} on a shared component: merge them into one row",
            )
        )
    return found


def incidents_csv(incidents: list[Any], comments: Iterable[str] = ()) -> str:
    """An incidents CSV (start,end,impact,components) of these incidents, oldest first."""
    from procure.textsafe import csv_writer

    def when(moment: Any) -> str:
        return "" if moment is None else moment.isoformat().replace("+00:00", "Z")

    buffer = io.StringIO()
    for comment in comments:
        buffer.write("# " + comment.replace("\n", " ") + "\n")
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(("start", "end", "impact", "components"))
    for i in sorted(incidents, key=lambda i: (i.start, i.components)):
        writer.writerow([when(i.start), when(i.end), i.impact, ";".join(i.components)])
    return buffer.getvalue()


def _merge_statuspage(m: _Merge) -> None:
    """The kept incidents.json and the incoming Statuspage incidents, merged by start and components."""
    import json

    from procure.io.incidents import statuspage_incidents
    from procure.io.yamlsafe import read_json

    path, shown = m.kept("incidents.json")
    kept: dict = {}
    page = m.incoming.page
    if path.exists():
        try:
            data = read_json(path, shown)
            items = data.get("incidents") if isinstance(data, dict) else data
            parsed = statuspage_incidents(data, shown)  # the loader's check of what is kept
        except InputError as exc:
            m.problems.extend(exc.problems)
            return
        by_where = {i.where: i for i in parsed}
        kept = {
            incident_key(by_where[f"{shown}: incidents[{n}]"]): item
            for n, item in enumerate(items)
            if f"{shown}: incidents[{n}]" in by_where
        }
        if page is None and isinstance(data, dict):
            page = data.get("page")
    new = {incident_key(i): item for item, i in m.incoming.statuspage}
    merged, replaced = merge_by_key(kept, new, _incident_name)
    m.notes += replaced
    ordered = [merged[k] for k in sorted(merged, reverse=True)]  # newest first, as Statuspage lists them
    document = {"page": page, "incidents": ordered} if page is not None else {"incidents": ordered}
    try:
        statuspage_incidents(document, shown)
    except InputError as exc:
        m.problems.extend(exc.problems)
        return
    m.files["incidents.json"] = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
