"""Serving metrics from Prometheus, summed per calendar month (UTC) as Prometheus itself would.

Two inputs, both in the Prometheus project's published formats:

- **Text exposition snapshots** (a scrape of `/metrics`, one file each): the format of
  prometheus.io/docs/instrumenting/exposition_formats ("Text-based format"), parsed with the
  prometheus-client library's own parser (`prometheus_client.parser.text_string_to_metric_families`,
  prometheus-client 0.17+). A sample's time is its own timestamp when the exporter wrote one (the
  text format's optional milliseconds), else the snapshot's time in its file name
  (`2026-11-01T00:00:00Z.prom`, or `20261101T000000Z.prom`).
- **HTTP API range queries** (`GET /api/v1/query_range`, prometheus.io/docs/prometheus/latest/querying/api,
  "Range queries"): `{"status": "success", "data": {"resultType": "matrix", "result": [{"metric":
  {"__name__": ..., labels}, "values": [[unix_seconds, "value"], ...]}]}}`. Query the raw counters
  and buckets (`vllm:generation_tokens_total`, `vllm:time_to_first_token_seconds_bucket`), not
  `rate()` of them, so that `__name__` names each series.

Statistics, as PromQL computes them (prometheus/prometheus promql/functions.go and quantile.go):

- A counter's increase between two samples is the difference, except when the value falls: the
  counter was reset (a restart) and counts from zero again, so the increase is the new value
  (`extrapolatedRate`'s counter correction). The increase over a month is the sum of the increases
  between consecutive samples, each counted in the month its step (earlier, later] lies in (a
  sample at 00:00 on the 1st closes the month before and makes no month of its own); there is no
  extrapolation to the month's edges (the share of the month the samples cover is stated instead).
- A quantile comes from the month's increase of each cumulative bucket (`le`) as
  `histogram_quantile` does: the rank q x count is found in the first bucket whose cumulative count
  reaches it and interpolated linearly inside that bucket (from 0 for the first); a rank in the
  +Inf bucket gives the highest finite bound. A histogram without a +Inf bucket has no count and is
  an error.

Bad telemetry is named, never turned into zeros: a series seen twice (two samples at one time, or
the same labels twice in one snapshot), a label the configuration does not know, an outcome that is
neither served nor failed, timestamps that run backwards (clock skew), a snapshot's sample stamped
far from the snapshot's time, and a histogram without +Inf are errors with their file and series; a
counter reset and a gap longer than `gap_minutes` are stated; a month with no sample is absent (no
data), never 0.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from procure.errors import InputError, Problem

# Labels every exporter or scraper adds; beyond these, a label must be named in actuals.metrics.labels.
KNOWN_LABELS = ("model_name", "instance", "job", "engine", "pod", "namespace", "service", "container", "endpoint", "le")
MAX_SNAPSHOT_SKEW_S = 300.0  # a sample stamped more than 5 minutes from its snapshot's time is clock skew
MAX_METRICS_BYTES = 500 * 1024 * 1024
SNAPSHOT_TIME = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2}):?(\d{2})Z")


@dataclass
class Series:
    """One time series: metric name, labels, and its samples (seconds since the epoch, value)."""

    name: str
    labels: tuple[tuple[str, str], ...]
    where: str  # file (and position) for messages
    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)

    def show(self) -> str:
        inner = ",".join(f'{k}="{v}"' for k, v in self.labels)
        return f"{self.name}{{{inner}}}" if inner else self.name


# --- reading ---------------------------------------------------------------------------------------


def _key(name: str, labels: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    return name, tuple(sorted(labels.items()))


def read_query_range(path: Path, display: str, wanted: set[str], problems: list[Problem]) -> list[Series]:
    """The series of a query_range response whose base metric is one of `wanted` (a histogram's
    `_bucket` series count for the histogram's name)."""
    from procure.io.yamlsafe import parse_json, read_text

    text, arrays = _lift_values(read_text(path, display, MAX_METRICS_BYTES))
    data = parse_json(text, display)
    if not isinstance(data, dict) or data.get("status") != "success" or not isinstance(data.get("data"), dict):
        status = data.get("status") if isinstance(data, dict) else None
        raise InputError([Problem(display, None, "status", f'a Prometheus query_range response has "status": "success" and "data" (got {status!r})')])
    body = data["data"]
    if body.get("resultType") != "matrix":
        raise InputError([Problem(display, None, "data.resultType", f'must be "matrix", the result of a range query (got {body.get("resultType")!r})')])
    result = body.get("result")
    if not isinstance(result, list):
        raise InputError([Problem(display, None, "data.result", "must be a list of series")])
    import numpy as np

    out: list[Series] = []
    seen: dict[tuple, str] = {}
    lifted = iter(arrays)
    for index, item in enumerate(result):
        if isinstance(item, dict) and item.get("values") is None and "values" in item:
            item["values"] = next(lifted, None)
        where = f"data.result[{index}]"
        metric = item.get("metric") if isinstance(item, dict) else None
        values = item.get("values") if isinstance(item, dict) else None
        if not isinstance(metric, dict) or not isinstance(values, (list, np.ndarray)):
            problems.append(Problem(display, None, where, 'expected {"metric": {...}, "values": [[time, "value"], ...]}'))
            continue
        name = metric.get("__name__")
        if not isinstance(name, str):
            problems.append(Problem(display, None, f"{where}.metric", "has no __name__: query the raw series (e.g. vllm:generation_tokens_total), not an expression of it"))
            continue
        if _base(name) not in wanted:
            continue
        labels = {str(k): str(v) for k, v in metric.items() if k != "__name__"}
        key = _key(name, labels)
        if key in seen:
            problems.append(Problem(display, None, where, f"duplicate series {Series(name, key[1], '').show()} (also {seen[key]})"))
            continue
        seen[key] = where
        series = Series(name, key[1], f"{display}: {where}")
        if isinstance(values, np.ndarray):  # lifted out of the text and parsed in one pass (_lift_values)
            series.times, series.values = values[:, 0], values[:, 1]
            out.append(series)
            continue
        try:
            pairs = np.array(values, dtype=object)
            if pairs.ndim != 2 or (len(values) and pairs.shape[1] != 2):
                raise ValueError
            series.times = np.asarray(pairs[:, 0], dtype=float).tolist() if len(values) else []
            series.values = np.asarray(pairs[:, 1], dtype=float).tolist() if len(values) else []
        except (ValueError, TypeError):
            problems.append(Problem(display, None, f"{where}.values", 'each sample must be [unix seconds, "value"]'))
            continue
        out.append(series)
    return out


VALUES_START = re.compile(r'"values"\s*:\s*\[')


def _lift_values(text: str) -> tuple[str, list[Any]]:
    """Each series' `values` parsed in one pass by pandas' C reader (a year of one-minute samples is
    millions of [time, "value"] pairs: as Python lists they cost seconds and hundreds of MB), replaced
    by null in the text the JSON parser then reads. A `values` that is not plain numbers (NaN, +Inf,
    anything malformed) is left in the text for the JSON parser and the checks after it."""
    import io

    import numpy as np

    out_text: list[str] = []
    arrays: list[Any] = []
    position = 0
    for start in VALUES_START.finditer(text):
        if start.start() < position:
            continue
        begin = start.end() - 1
        end = text.find("]]", begin)  # Prometheus writes compact JSON; anything else is read by the JSON parser
        if end < 0:
            break
        body = text[begin + 2 : end]
        if "{" in body or "}" in body:
            continue
        if not body.strip():
            numbers = np.zeros((0, 2))
        else:
            import pandas as pd

            try:
                frame = pd.read_csv(io.StringIO(body.replace('"', "").replace("], [", "\n").replace("],[", "\n")), header=None, engine="c", dtype=float, skipinitialspace=True)
            except (ValueError, pd.errors.ParserError):
                continue
            numbers = frame.to_numpy()
            if numbers.ndim != 2 or numbers.shape[1] != 2 or not np.isfinite(numbers).all():
                continue
        out_text.append(text[position:begin])
        out_text.append("null")
        arrays.append(numbers)
        position = end + 2
    out_text.append(text[position:])
    return "".join(out_text), arrays




def snapshot_time(path: Path) -> float | None:
    """The time in a snapshot's file name (UTC), or None."""
    found = SNAPSHOT_TIME.search(Path(path).name)
    if not found:
        return None
    y, mo, d, h, mi, s = (int(g) for g in found.groups())
    try:
        return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def read_text_snapshot(path: Path, display: str, wanted: set[str], problems: list[Problem]) -> list[Series]:
    """The samples of one text exposition snapshot, parsed with prometheus-client's parser."""
    from prometheus_client.parser import text_string_to_metric_families

    from procure.io.yamlsafe import read_text

    text = read_text(path, display, MAX_METRICS_BYTES)
    stamp = snapshot_time(path)
    out: dict[tuple, Series] = {}
    try:
        families = list(text_string_to_metric_families(text))
    except (ValueError, IndexError, TypeError) as exc:  # the parser's errors name the bad line's text
        raise InputError([Problem(display, None, "", f"not Prometheus text exposition: {str(exc)[:200]}")]) from None
    missing_time = False
    for family in families:
        for sample in family.samples:
            name = sample.name
            if _base(name) not in wanted:
                continue
            key = _key(name, dict(sample.labels))
            if key in out:
                problems.append(Problem(display, None, "", f"duplicate series {out[key].show()} in one snapshot"))
                continue
            when = sample.timestamp if sample.timestamp is not None else stamp
            if when is None:
                missing_time = True
                continue
            when = float(when)
            if sample.timestamp is not None and stamp is not None and abs(float(sample.timestamp) - stamp) > MAX_SNAPSHOT_SKEW_S:
                problems.append(Problem(display, None, "", f"clock skew: {name} is stamped {_utc(float(sample.timestamp))}, {abs(float(sample.timestamp) - stamp) / 60:.0f} minutes from the snapshot's time {_utc(stamp)}"))
                continue
            series = Series(name, key[1], display, [when], [float(sample.value)])
            out[key] = series
    if missing_time:
        problems.append(Problem(display, None, "", "samples without a timestamp: name the snapshot file by its time (2026-11-01T00:00:00Z.prom) or export timestamps"))
    return list(out.values())


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _base(name: str) -> str:
    """A histogram's series name without _bucket/_count/_sum; any other name unchanged."""
    for suffix in ("_bucket", "_count", "_sum"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def merge_series(parts: Iterable[Series], problems: list[Problem]) -> list[Series]:
    """One series per name and labels from many files (snapshots, or query_range exports of
    successive months, given in any order), sorted by time: within one file the samples must run
    forward (else clock skew), and two samples at one time, in one file or two, are a duplicate."""
    import numpy as np

    groups: dict[tuple, list[Series]] = defaultdict(list)
    for part in parts:
        groups[(part.name, part.labels)].append(part)
    merged = []
    for (name, labels), members in groups.items():
        times = np.concatenate([np.asarray(m.times, dtype=float) for m in members]) if members else np.array([])
        values = np.concatenate([np.asarray(m.values, dtype=float) for m in members])
        for m in members:  # within one file, samples must run forward
            t = np.asarray(m.times, dtype=float)
            if len(t) > 1 and np.any(np.diff(t) <= 0):
                i = int(np.argmax(np.diff(t) <= 0)) + 1
                problems.append(Problem(m.where, None, "", f"clock skew: {Series(name, labels, '').show()} sample {i} at {_utc(t[i])} is not after the one before ({_utc(t[i - 1])})"))
        order = np.argsort(times, kind="stable")
        times, values = times[order], values[order]
        if len(times) > 1:
            same = np.diff(times) == 0
            if np.any(same):
                i = int(np.argmax(same)) + 1
                problems.append(Problem(members[0].where, None, "", f"duplicate series: {Series(name, labels, '').show()} has two samples at {_utc(times[i])}"))
        bad = ~np.isfinite(values) | (values < 0)
        if np.any(bad):
            problems.append(Problem(members[0].where, None, "", f"{Series(name, labels, '').show()}: a counter's value must be a finite number of at least 0 (got {values[np.argmax(bad)]})"))
        merged.append(Series(name, labels, members[0].where, times, values))  # numpy arrays from here on
    return merged


# --- statistics ------------------------------------------------------------------------------------


def month_starts(first: float, last: float) -> list[float]:
    """The UTC month starts from the month of `first` to the one after `last`, as Unix seconds."""
    start = datetime.fromtimestamp(first, tz=timezone.utc)
    end = datetime.fromtimestamp(last, tz=timezone.utc)
    y, m = start.year, start.month
    out = []
    while (y, m) <= (end.year, end.month):
        out.append(datetime(y, m, 1, tzinfo=timezone.utc).timestamp())
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    out.append(datetime(y, m, 1, tzinfo=timezone.utc).timestamp())
    return out


def month_of(seconds: float) -> str:
    day = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return f"{day.year:04d}-{day.month:02d}"


@dataclass
class CounterMonths:
    """A counter's increase per month (YYYY-MM), with the resets and gaps that were found."""

    increase: dict[str, float]
    resets: list[str]  # "2026-03-04 10:00:00Z" per reset
    gaps: list[tuple[float, float]]  # (from, to) seconds


def counter_increase(times: Any, values: Any, gap_s: float) -> CounterMonths:
    """Per-month increase of one counter series (see the module's docstring); vectorised."""
    import numpy as np

    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if len(t) < 2:
        return CounterMonths({}, [], [])
    delta = np.diff(v)
    reset = delta < 0
    delta = np.where(reset, v[1:], delta)  # after a reset the counter counts from zero
    later = t[1:]
    edges = np.asarray(month_starts(t[0], t[-1]))
    # a step belongs to the month its interval (earlier, later] lies in: a sample at 00:00 on the 1st
    # closes the month before, and makes no month of its own
    slot = np.searchsorted(edges, later, side="left") - 1
    sums = np.bincount(slot, weights=delta, minlength=len(edges) - 1)
    present = np.bincount(slot, minlength=len(edges) - 1) > 0
    increase = {month_of(edges[i]): float(sums[i]) for i in range(len(edges) - 1) if present[i]}
    resets = [_utc(x) for x in later[reset]]
    step = np.diff(t)
    gaps = [(float(t[i]), float(t[i + 1])) for i in np.nonzero(step > gap_s)[0]]
    return CounterMonths(increase, resets, gaps)


def histogram_quantile(q: float, buckets: list[tuple[float, float]]) -> float | None:
    """Prometheus' histogram_quantile over (upper bound, cumulative count) pairs, +Inf included.

    None where Prometheus gives NaN: no +Inf bucket, fewer than two buckets, or no observations."""
    if not 0 <= q <= 1:
        raise ValueError("q must be between 0 and 1")
    ordered = sorted(buckets)
    if not ordered or ordered[-1][0] != math.inf or len(ordered) < 2:
        return None
    counts = [c for _, c in ordered]
    for i in range(1, len(counts)):  # Prometheus makes the cumulative counts monotonic before reading them
        counts[i] = max(counts[i], counts[i - 1])
    total = counts[-1]
    if total <= 0:
        return None
    rank = q * total
    b = next(i for i, c in enumerate(counts) if c >= rank)
    if b == len(ordered) - 1:
        return ordered[-2][0]
    if b == 0 and ordered[0][0] <= 0:
        return ordered[0][0]
    start, end, count = 0.0, ordered[b][0], counts[b]
    if b > 0:
        start = ordered[b - 1][0]
        count -= counts[b - 1]
        rank -= counts[b - 1]
    return start + (end - start) * (rank / count) if count > 0 else end


def parse_le(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        return math.inf if raw.strip() in ("+Inf", "Inf", "inf") else float(raw)
    except ValueError:
        return None


def first_day(month: str) -> date:
    return date(int(month[:4]), int(month[5:7]), 1)
