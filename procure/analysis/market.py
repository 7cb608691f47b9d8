"""Rental price benchmark: an index of GPU-hour prices built from price observations.

A benchmark summarizes prices within a defined market. Where its prices come from decides its level:
advertised offers differ from completed trades, long terms from on-demand, a bare-metal hour from a
managed one. So the level must not move when only the mix of quotes moves: quotes fall into strata
(term bucket x kind x grade), each stratum gets a level per period by the chosen method, and the
strata are combined with fixed weights (each stratum's share of the base period's quotes, or
procure.yaml's) into a chain-linked index, as a fixed-basket price index is: each period moves the
level by the weighted average of the strata's own price changes, so adding or removing quotes never
revises a published month. A reading from outside the quotes (procure.yaml `index.readings`) is
spliced in flagged, with its level jump. No seller carries more than a capped share of a
stratum in a period; a stratum with fewer than the minimum of quotes in a period is thin: its last
level is carried forward and flagged, never published from one quote. Every build reports the
methodology table: the latest period's level under each method, kind and scope choice, the strata
with their weights, and the rules. It is not a producer's production cost and does not measure the
output delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta

import numpy as np
from pydantic import BaseModel, Field

from procure.errors import InputError, Problem
from procure.io.quotes import Quote
from procure.model.inputs import OPERATING_JOBS, Assumptions, Grade

METHODS = ("median", "trimmed-mean", "volume-weighted")
KINDS = ("advertised", "transacted", "all")
TERM_BUCKETS = {"0-3": (0, 3), "4-12": (4, 12), "13-36": (13, 36)}
STRATUM_TERMS = {**TERM_BUCKETS, "37+": (37, 10**6)}  # strata cover every term; the --term filter keeps the three
PERIODS = ("week", "month")
TRIM_SHARE = 0.10  # trimmed mean: the lowest and highest 10% of prices are left out
SCOPE_GPUS_DEFAULT = 512


def scope_adjustments(
    grades: list[Grade], assumptions: Assumptions, gpus: int = SCOPE_GPUS_DEFAULT
) -> dict[str, float]:
    """Per grade, the buyer's ops cost per GPU-hour of the jobs the grade leaves to the buyer.

    A job the grade does not require the provider to own is counted as the buyer's, staffed as in
    procure.yaml for a fleet of `gpus` GPUs: (fte_fixed + fte_per_1000_gpus x gpus / 1000) x
    fte_cost_year / (gpus x 8,760).
    """
    found = {}
    for grade in grades:
        left = [job for job in OPERATING_JOBS if job not in grade.requires.provider_jobs]
        fte = sum(
            assumptions.staffing(j).fte_fixed + assumptions.staffing(j).fte_per_1000_gpus * gpus / 1000 for j in left
        )
        found[grade.id] = fte * assumptions.fte_cost_year / (gpus * 8760)
    return found


def period_start(day: date, period: str) -> date:
    if period == "week":
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def term_bucket(months: int) -> str:
    return next(name for name, (low, high) in STRATUM_TERMS.items() if low <= months <= high)


STRATA_DIMENSIONS = ("term", "kind", "grade")


def stratum_of(q: Quote, by: tuple[str, ...] = STRATA_DIMENSIONS) -> tuple[str, str, str]:
    """(term bucket, kind, grade): quotes compared only with their like ("all" for a dimension not used)."""
    return (
        term_bucket(q.term_months) if "term" in by else "all",
        q.kind if "kind" in by else "all",
        q.grade if "grade" in by else "all",
    )


@dataclass(frozen=True)
class Reading:
    """A level from outside the quotes (an external series, or entered by hand), spliced into its period."""

    date: date
    level: float
    source: str


@dataclass(frozen=True)
class StrataSettings:
    """How strata are formed and weighted (procure.yaml `index:`)."""

    min_quotes: int = 3
    seller_cap: float = 0.5
    weights: dict[tuple[str, str, str], float] | None = None  # None: each stratum's share of the base period's quotes
    by: tuple[str, ...] = STRATA_DIMENSIONS  # () pools every quote in one stratum
    base: date | None = None  # a day in the base period; None: the first period of the selection
    readings: tuple[Reading, ...] = ()


def capped_weights(sellers: list[str], base: np.ndarray, cap: float) -> np.ndarray:
    """Quote weights with no seller above `cap` of the total (water-filling: the excess of a capped
    seller goes to the others in proportion). With too few sellers to respect the cap (n x cap < 1)
    every seller gets an equal share."""
    names = sorted(set(sellers))
    index = np.array([names.index(s) for s in sellers])
    totals = np.array([base[index == j].sum() for j in range(len(names))], dtype=float)
    if totals.sum() <= 0:
        return np.zeros_like(base, dtype=float)
    if len(names) * cap < 1:
        shares = np.where(totals > 0, 1.0, 0.0)
        shares /= shares.sum()
    else:
        shares = totals / totals.sum()
        capped = np.zeros(len(names), dtype=bool)
        for _ in range(len(names)):
            over = (shares > cap + 1e-12) & ~capped
            if not over.any():
                break
            capped |= over
            free = ~capped
            rest = 1.0 - cap * capped.sum()
            shares = np.where(capped, cap, totals / max(totals[free].sum(), 1e-300) * rest)
    per_quote = np.where(totals[index] > 0, base / np.where(totals[index] > 0, totals[index], 1.0), 0.0)
    return per_quote * shares[index]


def weighted_median(prices: np.ndarray, weights: np.ndarray) -> float:
    """The price at half the weight (the mean of the two middle prices when the half falls between)."""
    order = np.argsort(prices, kind="stable")
    p, w = prices[order], weights[order]
    cum = np.cumsum(w)
    half = cum[-1] / 2
    i = int(np.searchsorted(cum, half - 1e-12 * cum[-1]))
    if abs(cum[i] - half) <= 1e-12 * cum[-1] and i + 1 < len(p):
        return float((p[i] + p[i + 1]) / 2)
    return float(p[i])


def trimmed_mean(prices: np.ndarray, weights: np.ndarray) -> float:
    """The weighted mean without the lowest and highest share of the weight, share = max(10%, 1 / n):
    even a period of five quotes loses one quote's worth at each end (three quotes: the middle one).
    Fewer than three quotes have nothing to trim: their weighted mean."""
    n = len(prices)
    if n < 3:
        return float((prices * weights).sum() / weights.sum())
    share = max(TRIM_SHARE, 1.0 / n)
    order = np.argsort(prices, kind="stable")
    p, w = prices[order], weights[order] / weights.sum()
    upper = np.cumsum(w)
    lower = upper - w
    # the part of each quote's weight that lies inside [share, 1 - share]
    kept = np.clip(np.minimum(upper, 1 - share) - np.maximum(lower, share), 0.0, None)
    if kept.sum() <= 1e-12:
        return weighted_median(prices, weights)
    return float((p * kept).sum() / kept.sum())


def level(prices: np.ndarray, volumes: np.ndarray, method: str, weights: np.ndarray | None = None) -> float | None:
    """One group's level by the method, quotes weighted by `weights` (seller caps; default equal);
    None when it cannot be formed (no volume to weight by)."""
    if len(prices) == 0:
        return None
    weights = np.ones(len(prices)) if weights is None else weights
    if method == "volume-weighted":
        w = weights * volumes
        total = float(w.sum())
        return float((prices * w).sum() / total) if total > 0 else None
    if weights.sum() <= 0:
        return None
    if method == "median":
        return weighted_median(prices, weights)
    return trimmed_mean(prices, weights)


class IndexPoint(BaseModel):
    period: date = Field(description="the first day of the period")
    level: float | None
    observations: int
    strata_own: int = Field(0, description="strata with a level of their own this period")
    strata_carried: int = Field(0, description="thin strata whose last level was carried forward")
    strata_missing: int = Field(0, description="strata with no level yet: left out, the others' weights rescaled")
    thin: bool = Field(False, description="some stratum was thin or missing: flagged")
    carried: bool = Field(False, description="no stratum had a level of its own: the whole level is carried forward")
    source: str = Field(
        "quotes", description="quotes (chain-linked from the strata), or the source of a reading spliced in"
    )
    spliced: bool = Field(
        False, description="the level is an external or hand-entered reading, not built from the quotes"
    )
    spliced_from: float | None = Field(
        None, description="with a splice: the level the quotes give for the period (or the last level before it)"
    )


class MethodologyRow(BaseModel):
    method: str
    scope: str = Field(description="raw, or adjusted for the jobs each grade leaves to the buyer")
    advertised: float | None
    transacted: float | None
    all: float | None
    spread: float | None = Field(description="advertised minus transacted")


class StratumRow(BaseModel):
    term: str
    kind: str
    grade: str
    weight: float = Field(description="the stratum's fixed weight (shares of the selection sum to 1)")
    quotes: int = Field(description="quotes in the latest period")
    sellers: int = Field(description="sellers in the latest period")
    level: float | None = Field(description="the stratum's level in the latest period (own or carried)")
    status: str = Field(description="own, carried forward from a period, or no level yet")


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
    strata: list[StratumRow] = Field(
        default_factory=list, description="the strata of the selection in the latest period"
    )
    rules: list[str] = Field(default_factory=list, description="the construction rules in words")
    weights_source: str = Field(
        "base period", description="base period (each stratum's share of the base period's quotes) or procure.yaml"
    )
    base_period: date | None = Field(
        None, description="the period whose quotes fix the weights (null with procure.yaml weights)"
    )
    splices: list[str] = Field(default_factory=list, description="each spliced reading in words, with its level jump")
    min_quotes: int = 3
    seller_cap: float = 0.5
    adjustments: dict[str, float] = Field(
        description="per grade, the ops cost per GPU-hour added with scope adjustment"
    )
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


_Stratum = tuple[str, str, str]
_StratumState = tuple[float | None, str, int, int]  # (level, status, quotes, sellers)


@dataclass
class _Series:
    points: list[IndexPoint]
    latest: dict[_Stratum, _StratumState]  # stratum -> (level, status, quotes, sellers)
    weights: dict[_Stratum, float]
    base: date | None = None


def _group_by_period(
    quotes: list[Quote], period: str, settings: StrataSettings
) -> tuple[dict[date, dict[_Stratum, list[Quote]]], dict[date, Reading]]:
    """The quotes by period and stratum, and the readings by period. A period with a reading and no quotes still
    has a level (the reading); a reading before the quotes begin has nothing to splice into."""
    by_period: dict[date, dict[_Stratum, list[Quote]]] = {}
    for q in quotes:
        by_period.setdefault(period_start(q.date, period), {}).setdefault(stratum_of(q, settings.by), []).append(q)
    readings = {period_start(r.date, period): r for r in settings.readings}
    first = min(by_period, default=None)
    if first is not None:
        for start in readings:
            if start >= first:
                by_period.setdefault(start, {})
    return by_period, readings


def _fixed_weights(
    by_period: dict[date, dict[_Stratum, list[Quote]]], strata: list[_Stratum], period: str, settings: StrataSettings
) -> tuple[dict[_Stratum, float], date | None]:
    """The strata's fixed weights: procure.yaml's, or each stratum's share of the quotes in the base period (the
    first period unless index.base_period names one), with that base period."""
    if settings.weights is not None:
        return {s: settings.weights.get(s, 0.0) for s in strata}, None
    first = min(by_period, default=None)
    base = period_start(settings.base, period) if settings.base is not None else first
    in_base = by_period.get(base, {}) if base is not None else {}
    counts = {s: len(in_base.get(s, [])) for s in strata}
    total = sum(counts.values())
    return ({s: counts[s] / total for s in strata} if total else {s: 0.0 for s in strata}), base


def _stratum_level(
    group: list[Quote], method: str, adjustments: dict[str, float] | None, settings: StrataSettings
) -> float | None:
    """One stratum's level in one period: the method's level of its prices with no seller over the cap (volume-
    weighted: the capped volume shares are the weights themselves); None with fewer than min_quotes quotes."""
    if len(group) < settings.min_quotes:
        return None
    base_w = np.ones(len(group))
    w = capped_weights(
        [q.seller for q in group],
        base_w if method != "volume-weighted" else np.array([q.gpu_hours for q in group], dtype=float),
        settings.seller_cap,
    )
    if method == "volume-weighted":
        return float((_prices(group, adjustments) * w).sum() / w.sum()) if w.sum() > 0 else None
    return level(_prices(group, adjustments), np.array([q.gpu_hours for q in group]), method, w)


def _period_status(
    groups: dict[_Stratum, list[Quote]],
    strata: list[_Stratum],
    start: date,
    last: dict[_Stratum, tuple[float, date]],
    method: str,
    adjustments: dict[str, float] | None,
    settings: StrataSettings,
) -> tuple[dict[_Stratum, _StratumState], int, int, int]:
    """Each stratum's level in one period, its own or carried forward from its last (`last` is updated), and how
    many strata had their own, a carried and no level."""
    own = carried = missing = 0
    status: dict[_Stratum, _StratumState] = {}
    for s in strata:
        group = groups.get(s, [])
        sellers = len({q.seller for q in group})
        value = _stratum_level(group, method, adjustments, settings)
        if value is not None:
            last[s] = (value, start)
            status[s] = (value, "own", len(group), sellers)
            own += 1
        elif s in last:
            status[s] = (
                last[s][0],
                f"carried forward from {last[s][1]}"
                + (f" ({len(group)} quote{'s' if len(group) != 1 else ''})" if group else ""),
                len(group),
                sellers,
            )
            carried += 1
        else:
            status[s] = (None, "no level yet", len(group), sellers)
            missing += 1
    return status, own, carried, missing


def _chain(
    chained: float | None, now: dict[_Stratum, float], before: dict[_Stratum, float], weights: dict[_Stratum, float]
) -> float | None:
    """The chain's next level: first the fixed-weight average of the strata with a level; then the last level
    moved by the weighted average of the price relatives of the strata with a level in both periods."""
    if chained is None:
        total_w = sum(weights[s] for s in now)
        return sum(weights[s] * now[s] for s in now) / total_w if total_w > 0 else None
    common = [s for s in now if s in before]
    total_w = sum(weights[s] for s in common)
    if total_w > 0:
        chained *= sum(weights[s] * now[s] / before[s] for s in common) / total_w
    return chained


def _stratified(
    quotes: list[Quote], method: str, period: str, adjustments: dict[str, float] | None, settings: StrataSettings
) -> _Series:
    """Per period: each stratum's level (seller-capped, carried forward when thin), then the chain.

    The weights are fixed: procure.yaml's, or each stratum's share of the quotes in the base period (the
    first period unless index.base_period names one). The first level is the fixed-weight average of the
    strata with a level; each later period moves it by the weighted average of the strata's own price
    relatives L(s, t) / L(s, t-1), over the strata with a level in both periods (a chain-linked,
    Laspeyres-type index). A period's level depends only on its own and earlier quotes, so quotes added
    to or removed from a month never revise an earlier one, and a stratum's first level (a new
    stratum) enters the next link, never the level itself. A reading in procure.yaml replaces its
    period's level (flagged, with the jump) and the chain continues from it."""
    strata = sorted({stratum_of(q, settings.by) for q in quotes})
    by_period, readings = _group_by_period(quotes, period, settings)
    weights, base = _fixed_weights(by_period, strata, period, settings)
    last: dict[_Stratum, tuple[float, date]] = {}
    points: list[IndexPoint] = []
    latest: dict[_Stratum, _StratumState] = {}
    chained: float | None = None
    before: dict[_Stratum, float] = {}  # each weighted stratum's level in the previous period
    for start in sorted(by_period):
        groups = by_period[start]
        status, own, carried, missing = _period_status(groups, strata, start, last, method, adjustments, settings)
        now = {s: found for s, (found, *_) in status.items() if found is not None and weights.get(s, 0.0) > 0}
        chained = _chain(chained, now, before, weights)
        before = now
        reading = readings.get(start)
        spliced_from = None
        if reading is not None:
            spliced_from = chained if chained is not None else (points[-1].level if points else None)
            chained = reading.level
        observations = sum(len(g) for g in groups.values())
        points.append(
            IndexPoint(
                period=start,
                level=chained,
                observations=observations,
                strata_own=own,
                strata_carried=carried,
                strata_missing=missing,
                thin=(carried + missing) > 0,
                carried=own == 0 and chained is not None and reading is None,
                source=reading.source if reading is not None else "quotes",
                spliced=reading is not None,
                spliced_from=spliced_from,
            )
        )
        latest = status
    return _Series(points, latest, weights, base)


def _check_selection(
    chosen: list[Quote], adjustments: dict[str, float] | None, scope_adjust: bool, source: str
) -> None:
    """A scope adjustment needs a grade file for every grade selected."""
    if scope_adjust:
        unknown = sorted({q.grade for q in chosen if adjustments is None or q.grade not in adjustments})
        if unknown:
            raise InputError(
                [
                    Problem(
                        source,
                        next(q.line for q in chosen if q.grade in unknown),
                        "grade",
                        f"unknown grade for scope adjustment: {', '.join(unknown)} (grades/ defines: "
                        f"{', '.join(sorted(adjustments or {})) or 'none'})",
                    )
                ]
            )


def _no_points(filters: Filters, kind: str, source: str) -> InputError:
    """No observation matches the filters: no index to build, and nothing is written (a header-only index would
    silently replace a good one)."""
    wanted = ", ".join(
        f"{k}={v}"
        for k, v in (("gpu", filters.gpu), ("kind", kind), ("term", filters.term), ("grade", filters.grade))
        if v is not None
    )
    return InputError(
        [
            Problem(
                source,
                None,
                "",
                f"no observation matches the filters ({wanted}): no index to build, nothing was written",
            )
        ]
    )


def _series_notes(
    series: _Series, chosen: list[Quote], method: str, settings: StrataSettings, notes: list[str]
) -> list[str]:
    """What the series does not show by itself: levels without volume, thin strata carried forward, strata left
    without a weight (or weights without quotes), and each reading spliced in with its jump. Returns the splices."""
    points = series.points
    if method == "volume-weighted" and any(p.level is None or p.thin for p in points):
        notes.append("volume-weighted levels need volume: strata with only advertised (zero-volume) rows have no level")
    thin = [p for p in points if p.thin]
    if thin:
        notes.append(
            f"{len(thin)} of {len(points)} periods had thin strata (fewer than {settings.min_quotes} quotes): their "
            "last level was carried forward"
            + (
                f"; {sum(1 for p in points if p.carried)} periods had no stratum of their own and carry the whole level"
                if any(p.carried for p in points)
                else ""
            )
        )
    if settings.weights is None:
        unweighted = sorted(s for s, w in series.weights.items() if w <= 0)
        if series.base is not None and not any(w > 0 for w in series.weights.values()):
            notes.append(
                f"no quotes in the base period {series.base} (index.base_period): no stratum has a weight, so there is "
                "no level"
            )
        elif unweighted:
            notes.append(
                f"strata without quotes in the base period {series.base} have no weight and are left out (give them "
                "one in index.weights): " + ", ".join(" / ".join(s) for s in unweighted)
            )
    splices = []
    for p in points:
        if p.spliced:
            jump = (
                f"a level jump from {p.spliced_from:.2f} to {p.level:.2f} ({p.level - p.spliced_from:+.2f}, "
                f"{p.level / p.spliced_from - 1:+.1%})"
                if p.spliced_from
                else f"no level from the quotes to compare it with ({p.level:.2f})"
            )
            splices.append(
                f"{p.period}: {p.level:.2f} is a reading from {p.source}, spliced in (not built from the quotes): "
                f"{jump}; later periods chain on from it"
            )
    notes.extend(splices)
    if settings.weights is not None:
        unweighted = sorted({stratum_of(q, settings.by) for q in chosen} - set(settings.weights))
        if unweighted:
            notes.append(
                "strata without a weight in procure.yaml are left out: " + ", ".join(" / ".join(s) for s in unweighted)
            )
        unused = sorted(set(settings.weights) - {stratum_of(q, settings.by) for q in chosen})
        if unused:
            notes.append(
                "weights in procure.yaml for strata without quotes in the selection: "
                + ", ".join(" / ".join(s) for s in unused)
            )
    return splices


def _methodology(
    quotes: list[Quote],
    filters: Filters,
    period: str,
    adjustments: dict[str, float] | None,
    settings: StrataSettings,
    notes: list[str],
) -> tuple[date | None, list[MethodologyRow]]:
    """The latest period of the filtered market under every method, kind and scope, from the quotes alone (no
    splices): how much the choice of method moves the level, and the spread of advertised over transacted."""
    market = _select(quotes, filters, "all")
    latest = max((period_start(q.date, period) for q in market), default=None)
    rows = []
    quotes_only = replace(settings, readings=())
    can_adjust = adjustments is not None and all(q.grade in adjustments for q in market)
    if not can_adjust:
        notes.append("scope-adjusted levels need a grade file for every observation's grade")
    for method_name in METHODS:
        for scope in ("raw", "adjusted"):
            cells: dict[str, float | None] = {}
            for kind_name in KINDS:
                if scope == "adjusted" and not can_adjust:
                    cells[kind_name] = None
                    continue
                built = _stratified(
                    _select(market, filters, kind_name),
                    method_name,
                    period,
                    adjustments if scope == "adjusted" else None,
                    quotes_only,
                )
                cells[kind_name] = next((p.level for p in built.points if p.period == latest), None)
            spread = (
                cells["advertised"] - cells["transacted"]
                if cells["advertised"] is not None and cells["transacted"] is not None
                else None
            )
            rows.append(MethodologyRow(method=method_name, scope=scope, spread=spread, **cells))
    return latest, rows


def _strata_rows(series: _Series) -> list[StratumRow]:
    """Each stratum in the latest period: its weight (as a share), quotes, sellers, level and where the level
    comes from, by term bucket, kind and grade."""
    total = sum(w for w in series.weights.values())
    return [
        StratumRow(
            term=s[0],
            kind=s[1],
            grade=s[2],
            weight=(series.weights.get(s, 0.0) / total) if total else 0.0,
            quotes=state[2],
            sellers=state[3],
            level=state[0],
            status=state[1],
        )
        for s, state in sorted(
            series.latest.items(),
            key=lambda item: ((list(STRATUM_TERMS) + ["all"]).index(item[0][0]), item[0][1], item[0][2]),
        )
    ]


def _rules(method: str, settings: StrataSettings, series: _Series) -> list[str]:
    """The methodology in words, as the settings in force make it: strata and weights, the level within a
    stratum, thin strata, and readings spliced in."""
    source_text = (
        "procure.yaml (index.weights)"
        if settings.weights is not None
        else f"each stratum's share of the quotes in the base period {series.base}"
    )
    dimensions = {"term": "term bucket (0-3, 4-12, 13-36, 37+ months)", "kind": "kind", "grade": "grade"}
    rules = [
        (
            f"Strata: {' x '.join(dimensions[d] for d in settings.by)}, weights fixed from {source_text}. The first "
            "level is the fixed-weight average of the strata's levels; "
            "each later period moves it by the fixed-weight average of the strata's price changes from the period "
            "before (chain-linked), "
            "so a change in the mix of quotes alone does not move it and quotes added to a month never revise an "
            "earlier one."
            if settings.by
            else "No strata (index.strata: []): every quote in one pool, so a change in the mix of quotes moves the "
            "level."
        ),
        f"Within a stratum and period: the {method.replace('-', ' ')} of the prices"
        + (", the lowest and highest max(10%, 1/n) of the weight left out" if method == "trimmed-mean" else "")
        + (", weighted by traded GPU-hours" if method == "volume-weighted" else "")
        + f"; no seller carries more than {settings.seller_cap:.0%} of a stratum's weight (with too few sellers, each "
        "an equal share).",
        f"A stratum needs at least {settings.min_quotes} quotes in a period; a thinner one carries its last level "
        "forward (flagged), a stratum with no level yet is left out of the links until it has one.",
    ]
    if settings.readings:
        rules.append(
            "A reading in procure.yaml (index.readings: an external series or a level entered by hand) replaces its "
            "period's level, is flagged as spliced with the jump from the quotes' level, and later periods chain on "
            "from it."
        )
    return rules


def build_index(
    quotes: list[Quote],
    method: str = "median",
    kind: str = "all",
    filters: Filters = Filters(),
    period: str = "month",
    adjustments: dict[str, float] | None = None,
    scope_adjust: bool = False,
    source: str = "quotes",
    settings: StrataSettings = StrataSettings(),
) -> IndexBuild:
    """The index per period under the chosen method and filters, with the methodology table."""
    notes: list[str] = []
    chosen = _select(quotes, filters, kind)
    _check_selection(chosen, adjustments, scope_adjust, source)
    series = _stratified(chosen, method, period, adjustments if scope_adjust else None, settings)
    points = series.points
    if not points:
        raise _no_points(filters, kind, source)
    splices = _series_notes(series, chosen, method, settings, notes)
    latest, rows = _methodology(quotes, filters, period, adjustments, settings, notes)
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
        strata=_strata_rows(series),
        rules=_rules(method, settings, series),
        weights_source="procure.yaml" if settings.weights is not None else "base period",
        base_period=series.base,
        splices=splices,
        min_quotes=settings.min_quotes,
        seller_cap=settings.seller_cap,
        adjustments=adjustments or {},
        notes=notes,
    )


def settings_from(config) -> StrataSettings:  # type: ignore[no-untyped-def]
    """The strata settings of procure.yaml's `index:` section."""
    weights = {(w.term, w.kind, w.grade): w.weight for w in config.weights} if config.weights else None
    readings = tuple(Reading(r.date, r.level, r.source) for r in config.readings)
    return StrataSettings(
        min_quotes=config.min_quotes,
        seller_cap=config.seller_cap,
        weights=weights,
        by=tuple(config.strata),
        base=config.base_period,
        readings=readings,
    )
