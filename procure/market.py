"""Rental price benchmark: an index of GPU-hour prices built from price observations.

A benchmark summarizes prices within a defined market. Where its prices come from decides its level:
advertised offers differ from completed trades, long terms from on-demand, a bare-metal hour from a
managed one. So the index is built by an explicit method and filters, and every build also reports
the methodology table: the latest period's level under each method, kind and scope choice, and the
spread between advertised and transacted prices. It is not a producer's production cost and does not
measure the output delivered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from procure.errors import InputError, Problem
from procure.models import OPERATING_JOBS, Assumptions, Grade
from procure.workspace import parse_date, parse_number, read_csv_rows

QUOTE_COLUMNS = ("date", "gpu", "price", "kind", "term_months", "seller", "grade", "gpu_hours")
METHODS = ("median", "trimmed-mean", "volume-weighted")
KINDS = ("advertised", "transacted", "all")
TERM_BUCKETS = {"0-3": (0, 3), "4-12": (4, 12), "13-36": (13, 36)}
PERIODS = ("week", "month")
TRIM_SHARE = 0.10  # trimmed mean: the lowest and highest 10% of prices are left out
SCOPE_GPUS_DEFAULT = 512
MAX_PRICE = 10_000.0  # per GPU-hour: anything above is a typo, and sums of it could overflow
MAX_VOLUME = 1e12  # GPU-hours in one observation


@dataclass(frozen=True)
class Quote:
    line: int
    date: date
    gpu: str
    price: float
    kind: str
    term_months: int
    seller: str
    grade: str
    gpu_hours: float


def read_quotes(path: Path, display: str) -> list[Quote]:
    """Observations with exactly QUOTE_COLUMNS; every bad row is reported with its line number."""
    rows, _, problems = read_csv_rows(path, display, QUOTE_COLUMNS)
    quotes = []
    for line, row in rows:
        before = len(problems)
        day = parse_date(row["date"], display, line, "date", problems)
        price = parse_number(row["price"], display, line, "price", problems)
        volume = parse_number(row["gpu_hours"], display, line, "gpu_hours", problems, positive=False)
        term = parse_number(row["term_months"], display, line, "term_months", problems, positive=False)
        kind = row["kind"].lower()
        if kind not in ("advertised", "transacted"):
            problems.append(Problem(display, line, "kind", f"must be advertised or transacted (got {row['kind']!r})"))
        if term is not None and (term < 0 or term != int(term)):
            problems.append(Problem(display, line, "term_months", f"must be a whole number of months, 0 for on-demand (got {row['term_months']})"))
        if price is not None and price > MAX_PRICE:
            problems.append(Problem(display, line, "price", f"must be at most {MAX_PRICE:,.0f} per GPU-hour (got {row['price']})"))
        if volume is not None and volume > MAX_VOLUME:
            problems.append(Problem(display, line, "gpu_hours", f"must be at most {MAX_VOLUME:,.0f} (got {row['gpu_hours']})"))
        if volume is not None and volume < 0:
            problems.append(Problem(display, line, "gpu_hours", f"must be at least 0 (got {row['gpu_hours']})"))
        elif volume == 0 and kind == "transacted":
            problems.append(Problem(display, line, "gpu_hours", "a transacted row needs its volume (gpu_hours above 0)"))
        for column in ("gpu", "seller", "grade"):
            if not row[column]:
                problems.append(Problem(display, line, column, "must not be empty"))
        if len(problems) == before:
            quotes.append(Quote(line, day, row["gpu"], price, kind, int(term), row["seller"], row["grade"], volume))  # type: ignore[arg-type]
    if not rows and not problems:
        problems.append(Problem(display, None, "", "no observations: expected at least one row"))
    if problems:
        raise InputError(problems)
    return quotes


def scope_adjustments(grades: list[Grade], assumptions: Assumptions, gpus: int = SCOPE_GPUS_DEFAULT) -> dict[str, float]:
    """Per grade, the buyer's ops cost per GPU-hour of the jobs the grade leaves to the buyer.

    A job the grade does not require the provider to own is counted as the buyer's, staffed as in
    procure.yaml for a fleet of `gpus` GPUs: (fte_fixed + fte_per_1000_gpus x gpus / 1000) x
    fte_cost_year / (gpus x 8,760).
    """
    found = {}
    for grade in grades:
        left = [job for job in OPERATING_JOBS if job not in grade.requires.provider_jobs]
        fte = sum(assumptions.staffing(j).fte_fixed + assumptions.staffing(j).fte_per_1000_gpus * gpus / 1000 for j in left)
        found[grade.id] = fte * assumptions.fte_cost_year / (gpus * 8760)
    return found


def period_start(day: date, period: str) -> date:
    if period == "week":
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def level(prices: np.ndarray, volumes: np.ndarray, method: str) -> float | None:
    """One period's level by the method; None when it cannot be formed (no volume to weight by)."""
    if len(prices) == 0:
        return None
    if method == "median":
        return float(np.median(prices))
    if method == "trimmed-mean":
        ordered = np.sort(prices)
        cut = int(math.floor(len(ordered) * TRIM_SHARE))
        return float(ordered[cut : len(ordered) - cut].mean())
    total = float(volumes.sum())
    return float((prices * volumes).sum() / total) if total > 0 else None


class IndexPoint(BaseModel):
    period: date = Field(description="the first day of the period")
    level: float | None
    observations: int


class MethodologyRow(BaseModel):
    method: str
    scope: str = Field(description="raw, or adjusted for the jobs each grade leaves to the buyer")
    advertised: float | None
    transacted: float | None
    all: float | None
    spread: float | None = Field(description="advertised minus transacted")


class IndexBuild(BaseModel):
    method: str
    kind: str
    term: str | None
    grade: str | None
    gpu: str
    scope_adjust: bool
    period: str
    points: list[IndexPoint]
    methodology_period: date | None
    methodology: list[MethodologyRow]
    adjustments: dict[str, float] = Field(description="per grade, the ops cost per GPU-hour added with scope adjustment")
    notes: list[str]


@dataclass(frozen=True)
class Filters:
    gpu: str = "B200"
    term: str | None = None
    grade: str | None = None


def _select(quotes: list[Quote], filters: Filters, kind: str) -> list[Quote]:
    low, high = TERM_BUCKETS[filters.term] if filters.term else (0, 10**6)
    return [
        q
        for q in quotes
        if q.gpu.casefold() == filters.gpu.casefold()
        and low <= q.term_months <= high
        and (filters.grade is None or q.grade == filters.grade)
        and (kind == "all" or q.kind == kind)
    ]


def _prices(quotes: list[Quote], adjustments: dict[str, float] | None) -> np.ndarray:
    return np.array([q.price + (adjustments[q.grade] if adjustments is not None else 0.0) for q in quotes], dtype=float)


def build_index(
    quotes: list[Quote],
    method: str = "median",
    kind: str = "all",
    filters: Filters = Filters(),
    period: str = "month",
    adjustments: dict[str, float] | None = None,
    scope_adjust: bool = False,
    source: str = "quotes",
) -> IndexBuild:
    """The index per period under the chosen method and filters, with the methodology table."""
    notes: list[str] = []
    chosen = _select(quotes, filters, kind)
    if scope_adjust:
        unknown = sorted({q.grade for q in chosen if adjustments is None or q.grade not in adjustments})
        if unknown:
            raise InputError([Problem(source, next(q.line for q in chosen if q.grade in unknown), "grade", f"unknown grade for scope adjustment: {', '.join(unknown)} (grades/ defines: {', '.join(sorted(adjustments or {})) or 'none'})")])
    by_period: dict[date, list[Quote]] = {}
    for q in chosen:
        by_period.setdefault(period_start(q.date, period), []).append(q)
    points = []
    for start in sorted(by_period):
        group = by_period[start]
        value = level(_prices(group, adjustments if scope_adjust else None), np.array([q.gpu_hours for q in group]), method)
        points.append(IndexPoint(period=start, level=value, observations=len(group)))
    if not points:
        notes.append("no observation matches the filters")
    if method == "volume-weighted" and any(p.level is None for p in points):
        notes.append("volume-weighted levels need volume: periods with only advertised (zero-volume) rows have no level")

    # Methodology: the latest period of the filtered market, under every method, kind and scope.
    market = _select(quotes, filters, "all")
    latest = max((period_start(q.date, period) for q in market), default=None)
    rows = []
    can_adjust = adjustments is not None and all(q.grade in adjustments for q in market)
    if not can_adjust:
        notes.append("scope-adjusted levels need a grade file for every observation's grade")
    for method_name in METHODS:
        for scope in ("raw", "adjusted"):
            cells: dict[str, float | None] = {}
            for kind_name in KINDS:
                group = [q for q in _select(market, filters, kind_name) if latest is not None and period_start(q.date, period) == latest]
                if scope == "adjusted" and not can_adjust:
                    cells[kind_name] = None
                    continue
                cells[kind_name] = level(_prices(group, adjustments if scope == "adjusted" else None), np.array([q.gpu_hours for q in group]), method_name)
            spread = cells["advertised"] - cells["transacted"] if cells["advertised"] is not None and cells["transacted"] is not None else None
            rows.append(MethodologyRow(method=method_name, scope=scope, spread=spread, **cells))
    return IndexBuild(
        method=method,
        kind=kind,
        term=filters.term,
        grade=filters.grade,
        gpu=filters.gpu,
        scope_adjust=scope_adjust,
        period=period,
        points=points,
        methodology_period=latest,
        methodology=rows,
        adjustments=adjustments or {},
        notes=notes,
    )
