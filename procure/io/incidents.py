"""Incident histories: a provider's published outages, read into one typed list (the availability they
leave over a window is computed in procure/analysis/incidents.py).

Two formats are read:

- **Atlassian Statuspage** `incidents.json`, the public API most providers publish
  (`https://<page>/api/v2/incidents.json`; format as documented by Atlassian Statuspage's public API
  pages, e.g. https://confluence.status.atlassian.com/api, "Incidents": the 50 most recent incidents,
  each with `id`, `name`, `status`, `impact` (none, minor, major, critical; `maintenance` on
  scheduled maintenances), `created_at`, `started_at`, `resolved_at`, `incident_updates` and
  `components`). An incident starts at `started_at` (else `created_at`) and ends at `resolved_at`
  (else the time of its `resolved` update; neither: still open). The real sample in
  tests/data/incidents/ is Discord's page of 2022-02-15 (see its SOURCE.md).
- **A CSV of incidents** with exactly the columns `start,end,impact,components`: ISO 8601 times with
  a zone (`2026-03-01T14:00:00Z`), `end` empty while an incident is open, `impact` one of
  IMPACTS, `components` the affected components separated by `;` (empty: the whole service).

Errors are located (file, line or JSON field) and collected: an end before its start, an unknown
impact, a time without a zone, and, in a CSV, two incidents that overlap on a shared component (a
row entered twice would be counted twice; the provider's own page may overlap incidents, which are
merged instead).

By default `major` and `critical` count as down time (`DOWN_IMPACTS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.tables import gate_field

IMPACTS: tuple[str, ...] = ("none", "minor", "major", "critical", "maintenance")
DOWN_IMPACTS: tuple[str, ...] = ("major", "critical")
CSV_COLUMNS: tuple[str, ...] = ("start", "end", "impact", "components")
MAX_INCIDENTS = 100_000


@dataclass(frozen=True)
class Incident:
    """One outage: when it started and ended (None: still open), how bad, and what it touched."""

    start: datetime  # timezone-aware
    end: datetime | None
    impact: str  # one of IMPACTS
    components: tuple[str, ...] = ()  # empty: the whole service
    name: str = ""
    id: str = ""
    where: str = ""  # file and line or field, for messages

    def affects(self, components: Iterable[str] | None) -> bool:
        """Whether it touches any of `components` (None: any; an incident naming none touches all)."""
        if components is None or not self.components:
            return True
        wanted = {c.casefold() for c in components}
        return any(c.casefold() in wanted for c in self.components)


def read_incidents(path: Path, display: str | None = None) -> list[Incident]:
    """The incidents of a Statuspage `incidents.json` (a `.json` file) or an incidents CSV (`.csv`),
    oldest first. Raises InputError with every problem found."""
    display = display or str(path)
    suffix = Path(path).suffix.casefold()
    if suffix == ".json":
        return read_statuspage(path, display)
    if suffix == ".csv":
        return read_incidents_csv(path, display)
    raise InputError(
        [
            Problem(
                display,
                None,
                "",
                "an incident history is a Statuspage incidents.json (.json) or a CSV of incidents (.csv)",
            )
        ]
    )


def parse_time(raw: Any, display: str, line: int | None, field: str, problems: list[Problem]) -> datetime | None:
    """An ISO 8601 time with a zone, as UTC; a problem (and None) otherwise."""
    from procure.io.yamlsafe import FIRST_YEAR, LAST_YEAR

    if not isinstance(raw, str):
        problems.append(
            Problem(display, line, field, f"must be an ISO 8601 time such as 2026-03-01T14:00:00Z (got {raw!r})")
        )
        return None
    try:
        moment = datetime.fromisoformat(raw.strip())
    except ValueError:
        problems.append(
            Problem(display, line, field, f"must be an ISO 8601 time such as 2026-03-01T14:00:00Z (got {raw!r})")
        )
        return None
    if moment.tzinfo is None:
        problems.append(
            Problem(display, line, field, f"needs a time zone, e.g. 2026-03-01T14:00:00Z or +01:00 (got {raw!r})")
        )
        return None
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        problems.append(
            Problem(display, line, field, f"must be a time between {FIRST_YEAR} and {LAST_YEAR} (got {raw})")
        )
        return None
    return moment.astimezone(UTC)


def _check_impact(raw: Any, display: str, line: int | None, field: str, problems: list[Problem]) -> str | None:
    impact = raw.strip().casefold() if isinstance(raw, str) else raw
    if impact not in IMPACTS:
        problems.append(
            Problem(display, line, field, f"unknown impact {raw!r} (expected one of: {', '.join(IMPACTS)})")
        )
        return None
    return impact


def _check_order(
    start: datetime | None, end: datetime | None, display: str, line: int | None, field: str, problems: list[Problem]
) -> bool:
    if start is not None and end is not None and end < start:
        problems.append(
            Problem(display, line, field, f"ends before it starts ({end.isoformat()} < {start.isoformat()})")
        )
        return False
    return True


def read_statuspage(path: Path, display: str) -> list[Incident]:
    """Incidents of an Atlassian Statuspage incidents.json (`{"page": ..., "incidents": [...]}`; a
    bare list of incidents is also accepted)."""
    from procure.io.yamlsafe import read_json

    data = read_json(path, display)
    return statuspage_incidents(data, display)


def statuspage_incidents(data: Any, display: str) -> list[Incident]:
    """The incidents of parsed Statuspage JSON; problems are located by field path."""
    items = data.get("incidents") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InputError(
            [
                Problem(
                    display,
                    None,
                    "incidents",
                    "expected a Statuspage incidents.json: an object with an `incidents` list",
                )
            ]
        )
    if len(items) > MAX_INCIDENTS:
        raise InputError(
            [Problem(display, None, "incidents", f"too many incidents ({len(items):,}; limit {MAX_INCIDENTS:,})")]
        )
    problems: list[Problem] = []
    found: list[Incident] = []
    for number, item in enumerate(items):
        at = f"incidents[{number}]"
        if not isinstance(item, dict):
            problems.append(Problem(display, None, at, "expected an incident object"))
            continue
        started = item.get("started_at") or item.get("created_at")
        start = parse_time(
            started, display, None, f"{at}.{'started_at' if item.get('started_at') else 'created_at'}", problems
        )
        resolved = item.get("resolved_at") or _resolved_update(item)
        end = parse_time(resolved, display, None, f"{at}.resolved_at", problems) if resolved else None
        impact = _check_impact(item.get("impact"), display, None, f"{at}.impact", problems)
        lists = _check_lists(item, display, at, problems)
        # what is kept and shown of the incident (its name, id and components) passes the text gate
        shown = [(f"{at}.name", str(item.get("name") or "")), (f"{at}.id", str(item.get("id") or ""))]
        shown += [(f"{at}.components", c) for c in _components(item)] if lists else []
        if not all([gate_field(text, display, None, where, problems) for where, text in shown]):
            continue
        if (
            not lists
            or start is None
            or impact is None
            or not _check_order(start, end, display, None, f"{at}.resolved_at", problems)
        ):
            continue
        found.append(
            Incident(
                start,
                end,
                impact,
                _components(item),
                str(item.get("name") or ""),
                str(item.get("id") or ""),
                f"{display}: {at}",
            )
        )
    if problems:
        raise InputError(problems)
    return sorted(found, key=lambda i: (i.start, i.id))


def _check_lists(item: dict[str, Any], display: str, at: str, problems: list[Problem]) -> bool:
    """`components`, `incident_updates` and each update's `affected_components` are lists (or
    absent), as Statuspage writes them; anything else ("components": 5) is named."""
    ok = True
    for key in ("components", "incident_updates"):
        if item.get(key) is not None and not isinstance(item.get(key), list):
            problems.append(
                Problem(
                    display,
                    None,
                    f"{at}.{key}",
                    f"must be a list (got {type(item[key]).__name__} {str(item[key])[:40]!r})",
                )
            )
            ok = False
    for number, update in enumerate(item.get("incident_updates") or [] if ok else []):
        affected = update.get("affected_components") if isinstance(update, dict) else None
        if affected is not None and not isinstance(affected, list):
            problems.append(
                Problem(
                    display,
                    None,
                    f"{at}.incident_updates[{number}].affected_components",
                    f"must be a list (got {type(affected).__name__})",
                )
            )
            ok = False
    return ok


def _resolved_update(item: dict[str, Any]) -> str | None:
    """The time of the incident's `resolved` update, when `resolved_at` is missing."""
    updates = item.get("incident_updates")
    if not isinstance(updates, list):
        return None
    times = [
        u.get("created_at")
        for u in updates
        if isinstance(u, dict) and u.get("status") == "resolved" and isinstance(u.get("created_at"), str)
    ]
    return min(times) if times else None


def _components(item: dict[str, Any]) -> tuple[str, ...]:
    """Component names from `components`, else from the updates' `affected_components`."""
    names: list[str] = []
    for entry in item.get("components") or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
    if not names:
        for update in item.get("incident_updates") or []:
            for entry in (update.get("affected_components") or []) if isinstance(update, dict) else []:
                if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"] not in names:
                    names.append(entry["name"])
    return tuple(names)


def read_incidents_csv(path: Path, display: str) -> list[Incident]:
    """Incidents of a CSV with the columns start,end,impact,components ('#' lines are comments)."""
    from procure.io.tables import read_csv_rows

    rows, _, problems = read_csv_rows(path, display, CSV_COLUMNS)
    if len(rows) > MAX_INCIDENTS:
        raise InputError([Problem(display, None, "", f"too many incidents ({len(rows):,}; limit {MAX_INCIDENTS:,})")])
    found: list[Incident] = []
    for line, row in rows:
        start = parse_time(row["start"], display, line, "start", problems)
        end = parse_time(row["end"], display, line, "end", problems) if row["end"] else None
        impact = _check_impact(row["impact"], display, line, "impact", problems)
        if start is None or impact is None or not _check_order(start, end, display, line, "end", problems):
            continue
        components = tuple(c.strip() for c in row["components"].split(";") if c.strip())
        if not all([gate_field(c, display, line, "components", problems) for c in components]):
            continue
        found.append(Incident(start, end, impact, components, where=f"{display}:{line}"))
    problems.extend(_overlaps(found, display))
    if problems:
        raise InputError(sorted(problems, key=lambda p: (p.line or 0, p.field)))
    return sorted(found, key=lambda i: i.start)


def _overlaps(incidents: list[Incident], display: str) -> list[Problem]:
    """Rows whose times overlap an earlier row on a shared component (or either names none).

    One sweep in start order, linear in the rows: for each component, and for the rows naming none
    (the whole service), the earlier row that ends last is kept; a row overlaps an earlier one
    exactly when one of those that concerns it ends after it starts (an open row never ends)."""
    never = datetime.max.replace(tzinfo=UTC)
    problems = []
    last_any: Incident | None = None  # of every earlier row: concerns a row naming no component
    last_whole: Incident | None = None  # of the rows naming none: concerns every row
    last_by_component: dict[str, Incident] = {}

    def end(incident: Incident | None) -> datetime | None:
        return None if incident is None else (incident.end or never)

    for later in sorted(incidents, key=lambda i: i.start):
        mine = {c.casefold() for c in later.components}
        candidates = [last_any] if not mine else [last_whole, *(last_by_component.get(c) for c in sorted(mine))]
        clashes = [e for e in candidates if e is not None and end(e) > later.start]  # type: ignore[operator]
        if clashes:
            clash = min(clashes, key=lambda e: (e.start, _line(e)))
            problems.append(
                Problem(
                    display,
                    _line(later),
                    "start",
                    f"overlaps the incident on line {_line(clash)} on a shared component: merge them into one row",
                )
            )
        if last_any is None or end(later) > end(last_any):  # type: ignore[operator]
            last_any = later
        if not mine and (last_whole is None or end(later) > end(last_whole)):  # type: ignore[operator]
            last_whole = later
        for c in mine:
            held = last_by_component.get(c)
            if held is None or end(later) > end(held):  # type: ignore[operator]
                last_by_component[c] = later
    return problems


def _line(incident: Incident) -> int:
    return int(incident.where.rsplit(":", 1)[1])
