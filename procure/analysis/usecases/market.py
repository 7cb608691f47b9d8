"""The use case of index build: a rental price index from price observations, under the workspace's index settings
when there is a workspace, and the settings it would silently not use refused."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Indexed:
    """What `procure index build` prints: the index with its methodology, and the observations file as the
    envelope lists an input."""

    build: Any
    inputs: list[dict[str, str]] = field(default_factory=list)


@dataclass
class IndexAsked:
    """How the index is asked for: the method, which prices (kind), which observations (GPU, contract term in months,
    grade), the period, and whether to add the ops cost of the jobs each row's grade leaves to the buyer."""

    method: str = "median"
    kind: str = "all"
    gpu: str = "B200"
    term: str | None = None
    grade: str | None = None
    period: str = "month"
    scope_adjust: bool = False
    as_of: Any = None  # a date: only the observations of that day or earlier (the index as it stood then)


def index_build(quotes: Path, workspace: Path, asked: IndexAsked) -> Indexed:
    """The index of the observations in `quotes`; procure.yaml and the grades of the workspace at `workspace` price
    the scope adjustment and set the strata (offers are not read: an index-linked offer needs the index first). A
    plain build does without a workspace; a procure.yaml with a problem is named, never built around."""
    from procure.analysis.market import Filters, StrataSettings, build_index, scope_adjustments, settings_from
    from procure.errors import InputError
    from procure.io.files import file_hash
    from procure.io.quotes import read_quotes
    from procure.io.workspace import load_settings

    rows = read_quotes(quotes, str(quotes))
    if asked.as_of is not None:
        rows = [r for r in rows if r.date <= asked.as_of]
        if not rows:
            from procure.errors import Problem

            raise InputError([Problem(str(quotes), None, "", f"no observation dated {asked.as_of} or earlier")])
    try:
        config, grades = load_settings(workspace)
        adjustments: dict[str, float] | None = scope_adjustments(grades, config.assumptions, config.index.scope_gpus)
        settings = settings_from(config.index)
    except InputError:
        if asked.scope_adjust or (Path(workspace) / "procure.yaml").is_file():
            raise  # a procure.yaml with a problem is named, never built around (its weights and readings would be lost)
        adjustments, settings = None, StrataSettings()
    build = build_index(
        rows,
        asked.method,
        asked.kind,
        Filters(gpu=asked.gpu, term=asked.term, grade=asked.grade),
        asked.period,
        adjustments,
        asked.scope_adjust,
        str(quotes),
        settings,
    )
    _refuse_unused_index_settings(Path(workspace), settings, build, asked.period)
    return Indexed(build, [file_hash(quotes)])


def _refuse_unused_index_settings(workspace: Path, settings: Any, build: Any, period: str) -> None:
    """index settings the build would silently not use are refused (exit 2, nothing written): a base
    period without quotes or fixed weights for no stratum of the quotes (no level at all), a reading
    before the first period of quotes, and two readings in one period (only one can be its level)."""
    from procure.analysis.market import period_start
    from procure.errors import InputError, Problem, format_field_path
    from procure.io.yamlsafe import load_yaml

    if not build.points:
        return
    first, last = build.points[0].period, build.points[-1].period
    found: list[tuple[tuple[str | int, ...], str]] = []
    if settings.base is not None and settings.weights is None and all(p.level is None for p in build.points):
        found.append(
            (
                ("index", "base_period"),
                f"no quotes in the base period {settings.base} (the quotes run from {first} to {last}): expected a day "
                "within them, or index.weights",
            )
        )
    if settings.weights is not None and all(p.level is None for p in build.points):
        named = ", ".join(" / ".join(s) for s in sorted(settings.weights))
        found.append(
            (
                ("index", "weights"),
                f"no stratum with a weight has quotes in the selection (weights for: {named}): expected strata of the "
                f"quotes, as the strata table names them (index.strata: {', '.join(settings.by) or 'none'})",
            )
        )
    seen: dict[Any, Any] = {}
    for i, reading in enumerate(settings.readings):
        start = period_start(reading.date, period)
        if start < first:
            found.append(
                (
                    ("index", "readings", i, "date"),
                    f"{reading.date} is before the first {period} of quotes ({first}): a reading is spliced into a "
                    "period the quotes build",
                )
            )
        elif start in seen:
            found.append(
                (
                    ("index", "readings", i, "date"),
                    f"{reading.date} is in the same {period} ({start}) as the reading on {seen[start]}: give each "
                    f"{period} one reading",
                )
            )
        seen.setdefault(start, reading.date)
    if found:
        lines = load_yaml(workspace / "procure.yaml", "procure.yaml").lines
        raise InputError(
            [Problem("procure.yaml", lines.line_of(loc), format_field_path(loc), msg) for loc, msg in found]
        )
