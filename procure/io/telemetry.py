"""Serving metrics from Prometheus, summed per calendar month (UTC) as Prometheus itself would.

Two inputs, both in the Prometheus project's published formats:

- **Text exposition snapshots** (a scrape of `/metrics`, one file each): the format of
  prometheus.io/docs/instrumenting/exposition_formats ("Text-based format"), parsed with the
  prometheus-client library's own parser (`prometheus_client.parser.text_string_to_metric_families`,
  prometheus-client 0.17+). A sample's time is its own timestamp when the exporter wrote one (the
  text format's optional milliseconds), else the snapshot's time in its file name
  (`2026-11-01T00:00:00Z.prom`, or `20261101T000000Z.prom`).
- **HTTP API range queries** (read by procure/io/query_range.py; `GET /api/v1/query_range`,
  prometheus.io/docs/prometheus/latest/querying/api, "Range queries"): `{"status": "success", "data":
  {"resultType": "matrix", "result": [{"metric": {"__name__": ..., labels}, "values": [[unix_seconds, "value"],
  ...]}]}}`. Query the raw counters
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
far from the snapshot's time, a histogram without +Inf, a bucket bound that is not seconds of at
least 0 or +Inf, and a time outside 1970-01-01 to 9999-11-30 (a sample's, or a snapshot's file
name's) are errors with their file and series; a counter reset and a gap longer than `gap_minutes`
are stated; a month with no sample is absent (no data), never 0.

Both readers keep only the configured metrics while they read: a snapshot is read a block at a
time and only the wanted lines reach the parser; a query_range file is read a block at a time and
its result walked one series at a time, another metric's samples never built and what was walked
dropped (memory: a block, the response outside data.result, up to MAX_ENVELOPE_CHARS, and one
series). Time and memory follow the wanted series, not
the file (benchmarks/bench_readers.py).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem

# Labels every exporter or scraper adds; beyond these, a label must be named in actuals.metrics.labels. A
# Prometheus that scrapes a target whose series carry a label of the target's own (pod, namespace, container,
# job, instance) keeps the series' value as exported_<label> (honor_labels false, Prometheus'
# scrape_config documentation), as kube-prometheus-stack's ServiceMonitors do for dcgm-exporter and vLLM.
KNOWN_LABELS = (
    "model_name",
    "instance",
    "job",
    "engine",
    "pod",
    "namespace",
    "service",
    "container",
    "endpoint",
    "le",
    "exported_pod",
    "exported_namespace",
    "exported_container",
    "exported_job",
    "exported_instance",
)
MAX_SNAPSHOT_SKEW_S = 300.0  # a sample stamped more than 5 minutes from its snapshot's time is clock skew
MAX_METRICS_BYTES = 500 * 1024 * 1024
SNAPSHOT_TIME = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2}):?(\d{2})Z")
# Sample times procure can place in a calendar month: from the Unix epoch (Prometheus' timestamps
# are milliseconds since it) to the last month whose next month Python's dates still hold.
EARLIEST_S = 0.0
LATEST_S = datetime(9999, 12, 1, tzinfo=UTC).timestamp()
TIME_RANGE = "between 1970-01-01 and 9999-11-30 (UTC)"


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


def snapshot_time(path: Path) -> float | None:
    """The time in a snapshot's file name (UTC), or None."""
    found = SNAPSHOT_TIME.search(Path(path).name)
    if not found:
        return None
    y, mo, d, h, mi, s = (int(g) for g in found.groups())
    try:
        stamp = datetime(y, mo, d, h, mi, s, tzinfo=UTC).timestamp()
    except ValueError:
        return None
    return stamp if EARLIEST_S <= stamp < LATEST_S else None


def bad_time(seconds: float) -> bool:
    """A sample time procure cannot place in a month: not finite, before 1970 or past 9999-11."""
    return not (math.isfinite(seconds) and EARLIEST_S <= seconds < LATEST_S)


def _kept_lines(path: Path, display: str, wanted: set[str], problems: list[Problem]) -> str:
    """The lines of a text snapshot that belong to a wanted metric (its samples, and its # HELP and
    # TYPE lines), read from the file a block at a time and picked out by one regular expression: a
    snapshot of millions of unrelated samples costs one pass and the memory of a block and of the
    wanted lines, never the whole file parsed."""
    import os
    import stat

    from procure.io.yamlsafe import regular_file

    regular_file(path, display, MAX_METRICS_BYTES)
    names = b"|".join(re.escape(n.encode("utf-8")) for n in sorted(wanted, key=len, reverse=True))
    line = re.compile(
        rb"^[ \t]*(?:#[ \t]+(?:HELP|TYPE)[ \t]+)?(?:" + names + rb")(?:_bucket|_count|_sum)?(?=[{ \t\r\n]|$).*$", re.M
    )
    kept: list[str] = []
    lines_before = 0
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a file swapped for a pipe never hangs
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise InputError([Problem(display, None, "", "not a regular file (a pipe or a device): refused")])
            rest = b""
            while True:
                block = handle.read(BLOCK_BYTES)
                data = rest + block
                cut = len(data) if not block else data.rfind(b"\n") + 1
                chunk, rest = data[:cut], data[cut:]
                if lines_before == 0 and chunk.startswith(b"\xef\xbb\xbf"):
                    chunk = chunk[3:]
                _check_block(chunk, display, lines_before)
                kept.extend(m.group().decode("utf-8") + "\n" for m in line.finditer(chunk))
                lines_before += chunk.count(b"\n")
                if not block:
                    break
    except OSError as exc:
        raise InputError([Problem(display, None, "", f"cannot read file: {exc.strerror or exc}")]) from None
    return "".join(kept)


BLOCK_BYTES = 8 * 1024 * 1024


def _check_block(chunk: bytes, display: str, lines_before: int) -> None:
    """A block of a text snapshot is UTF-8 text: no NUL byte, no invalid sequence (named by line)."""
    nul = chunk.find(b"\x00")
    if nul >= 0:
        raise InputError(
            [Problem(display, lines_before + chunk[:nul].count(b"\n") + 1, "", "binary file: expected UTF-8 text")]
        )
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            [Problem(display, lines_before + chunk[: exc.start].count(b"\n") + 1, "", "not valid UTF-8 text")]
        ) from None


def read_text_snapshot(path: Path, display: str, wanted: set[str], problems: list[Problem]) -> list[Series]:
    """The samples of one text exposition snapshot, parsed with prometheus-client's parser; only the
    wanted metrics' lines reach the parser (`_kept_lines`)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = _kept_lines(path, display, wanted, problems)
    stamp = snapshot_time(path)
    named = SNAPSHOT_TIME.search(Path(path).name)
    if named and stamp is None:
        problems.append(
            Problem(
                display, None, "", f"the time in the file name ({named.group()}) must be a date and time {TIME_RANGE}"
            )
        )
        return []
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
            if sample.timestamp is not None and bad_time(float(sample.timestamp)):
                problems.append(
                    Problem(
                        display,
                        None,
                        "",
                        f"{Series(name, key[1], '').show()}: a sample's timestamp must be {TIME_RANGE} (got "
                        f"{float(sample.timestamp):.15g} s since 1970)",
                    )
                )
                continue
            when = sample.timestamp if sample.timestamp is not None else stamp
            if when is None:
                missing_time = True
                continue
            when = float(when)
            if (
                sample.timestamp is not None
                and stamp is not None
                and abs(float(sample.timestamp) - stamp) > MAX_SNAPSHOT_SKEW_S
            ):
                problems.append(
                    Problem(
                        display,
                        None,
                        "",
                        f"clock skew: {name} is stamped {_utc(float(sample.timestamp))}, "
                        f"{abs(float(sample.timestamp) - stamp) / 60:.0f} minutes from the snapshot's time "
                        f"{_utc(stamp)}",
                    )
                )
                continue
            series = Series(name, key[1], display, [when], [float(sample.value)])
            out[key] = series
    if missing_time:
        problems.append(
            Problem(
                display,
                None,
                "",
                "samples without a timestamp: name the snapshot file by its time (2026-11-01T00:00:00Z.prom) or export "
                "timestamps",
            )
        )
    return list(out.values())


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


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
        if len(members) == 1 and len(members[0].times) <= 1:  # one sample (a snapshot's): nothing to order
            single = _single_sample(members[0], problems)
            if single is not None:
                merged.append(single)
            continue
        times = np.concatenate([np.asarray(m.times, dtype=float) for m in members]) if members else np.array([])
        values = np.concatenate([np.asarray(m.values, dtype=float) for m in members])
        for m in members:  # within one file, samples must run forward
            t = np.asarray(m.times, dtype=float)
            if len(t) > 1 and np.any(np.diff(t) <= 0):
                i = int(np.argmax(np.diff(t) <= 0)) + 1
                problems.append(
                    Problem(
                        m.where,
                        None,
                        "",
                        f"clock skew: {Series(name, labels, '').show()} sample {i} at {_utc(t[i])} is not after the "
                        f"one before ({_utc(t[i - 1])})",
                    )
                )
        order = np.argsort(times, kind="stable")
        times, values = times[order], values[order]
        if len(times) > 1:
            same = np.diff(times) == 0
            if np.any(same):
                i = int(np.argmax(same)) + 1
                holders = [m.where for m in members if np.any(np.asarray(m.times, dtype=float) == times[i])]
                problems.append(
                    Problem(
                        holders[0],
                        None,
                        "",
                        f"duplicate series: {Series(name, labels, '').show()} has two samples at {_utc(times[i])}"
                        + (f" (also in {holders[1]})" if len(holders) > 1 else ""),
                    )
                )
        for m in members:  # named against the file that holds it, not the first file of the series
            own = np.asarray(m.values, dtype=float)
            bad = ~np.isfinite(own) | (own < 0)
            if np.any(bad):
                i = int(np.argmax(bad))
                problems.append(
                    Problem(
                        m.where,
                        None,
                        "",
                        f"{Series(name, labels, '').show()}: a sample's value must be a finite number of at least 0 "
                        f"(got {own[i]} at {_utc(float(np.asarray(m.times, dtype=float)[i]))})",
                    )
                )
        merged.append(Series(name, labels, members[0].where, times, values))  # numpy arrays from here on
    return merged


def _single_sample(part: Series, problems: list[Problem]) -> Series | None:
    """merge_series for a series of at most one sample, without numpy's per-call cost (a snapshot of
    200,000 series is 200,000 of these); its times and values stay lists of floats."""
    for when, value in zip(part.times, part.values):
        if not (math.isfinite(value) and value >= 0):
            problems.append(
                Problem(
                    part.where,
                    None,
                    "",
                    f"{part.show()}: a sample's value must be a finite number of at least 0 (got {value} at "
                    f"{_utc(float(when))})",
                )
            )
    return Series(part.name, part.labels, part.where, [float(t) for t in part.times], [float(v) for v in part.values])


# --- statistics ------------------------------------------------------------------------------------


def month_starts(first: float, last: float) -> list[float]:
    """The UTC month starts from the month of `first` to the one after `last`, as Unix seconds."""
    start = datetime.fromtimestamp(first, tz=UTC)
    end = datetime.fromtimestamp(last, tz=UTC)
    y, m = start.year, start.month
    out = []
    while (y, m) <= (end.year, end.month):
        out.append(datetime(y, m, 1, tzinfo=UTC).timestamp())
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    out.append(datetime(y, m, 1, tzinfo=UTC).timestamp())
    return out


def month_of(seconds: float) -> str:
    day = datetime.fromtimestamp(seconds, tz=UTC)
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


@dataclass
class GaugeMonth:
    """One gauge series' time-integral over one month (value x seconds), and the seconds it covers."""

    integral: float  # sum of value x seconds over the steps no longer than the gap
    covered_s: float  # the seconds of those steps
    span_s: float  # the seconds of every step in the month, gaps included

    @property
    def filled(self) -> float:
        """The integral over the whole span, a gap counted at the mean of the covered steps."""
        return self.integral * self.span_s / self.covered_s if self.covered_s > 0 else 0.0


def gauge_integral(times: Any, values: Any, gap_s: float) -> dict[str, GaugeMonth]:
    """Per month, the time-integral of a gauge as Prometheus reads a gauge between scrapes: the
    latest sample holds until the next (an instant query's lookback; `avg_over_time` over
    evenly spaced samples is the same mean). A step (earlier, later] counts in the month of its
    later sample, as a counter's does, with the earlier sample's value; a step longer than
    `gap_s` is a gap: not integrated, and `GaugeMonth.filled` counts it at the month's covered mean."""
    import numpy as np

    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if len(t) < 2:
        return {}
    step = np.diff(t)
    ok = step <= gap_s
    edges = np.asarray(month_starts(t[0], t[-1]))
    slot = np.searchsorted(edges, t[1:], side="left") - 1
    n = len(edges) - 1
    integral = np.bincount(slot, weights=np.where(ok, v[:-1] * step, 0.0), minlength=n)
    covered = np.bincount(slot, weights=np.where(ok, step, 0.0), minlength=n)
    span = np.bincount(slot, weights=step, minlength=n)
    present = np.bincount(slot, minlength=n) > 0
    return {
        month_of(edges[i]): GaugeMonth(float(integral[i]), float(covered[i]), float(span[i]))
        for i in range(n)
        if present[i]
    }


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
    """A latency bucket's upper bound (the `le` label): a finite number of at least 0, or +Inf; None
    for anything else (`bucket_problem` says what)."""
    if raw is None:
        return None
    try:
        bound = math.inf if raw.strip() in ("+Inf", "Inf", "inf") else float(raw)
    except ValueError:
        return None
    return bound if bound >= 0 else None  # NaN compares false: refused too


def bucket_problem(raw: str | None) -> str:
    """Why an `le` label is not a latency bucket's bound (for parse_le's None)."""
    if raw is None:
        return "a bucket needs an le label (its upper bound)"
    return f'a latency bucket\'s le must be a number of seconds of at least 0, or +Inf (got le="{raw}")'


def first_day(month: str) -> date:
    return date(int(month[:4]), int(month[5:7]), 1)
