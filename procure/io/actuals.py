"""Delivered evidence per signed vendor, kept in the workspace's `actuals/` folder.

`actuals/OFFER-ID/` holds, for the offer signed with that vendor:

- `metrics.csv`: the serving metrics summed per calendar month (UTC), written by `procure actuals
  import` from Prometheus text snapshots or query_range exports (procure/io/telemetry.py): output
  tokens, requests served and failed, TTFT and end-to-end latency quantiles, the share of the month
  the samples cover, and the counter resets and gaps found;
- `incidents.json` (Atlassian Statuspage) or `incidents.csv` (start, end, impact, components): the
  incident history, read by procure/io/incidents.py;
- `invoices.csv`: month, gpu_hours, output_tokens, amount (the invoice's total in the offer's currency),
  and optionally invoice_id (several invoices of one month are summed), from an invoices CSV or a
  FOCUS billing export (procure/io/focus.py: kept under invoice_id FOCUS_INVOICE_ID);
- `credits.csv`: month, credits, invoices: the credits a FOCUS export shows paid back, kept apart.

Every file is an input: hashed into the Evaluation like the offers, and checked at load. A month
without a row is "no data", never zero.

Evidence is appended and merged, never replaced: `store_evidence` merges what an import read into
what is kept, by each kind's natural key (a metric month; an invoice's month and id; an incident's
start and components), names every kept entry it replaces, and runs under the workspace's evidence
lock (`evidence_lock`), so concurrent imports serialise. What it writes passes the loader's own
checks (`check_month_key`, `check_metrics_month`, `check_invoice_month`: month ranges, and counts
plausible for the offer's own size) before anything is written.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from procure.errors import InputError, Problem
from procure.model.inputs import ActualsConfig, MetricNames

ACTUALS = "actuals"
METRIC_COLUMNS = (
    "month",
    "output_tokens",
    "requests_ok",
    "requests_failed",
    "ttft_p50_s",
    "ttft_p90_s",
    "ttft_p99_s",
    "e2e_p50_s",
    "e2e_p90_s",
    "e2e_p99_s",
    "coverage",
    "resets",
    "gaps",
)
BUSY_COLUMN = "busy_gpu_hours"  # an optional last column: written when some month has utilization telemetry
BUSY_GPUS_COLUMN = "busy_gpus"  # after it, optional: the GPUs the telemetry covered (its series) in the month
# Labels NVIDIA dcgm-exporter puts on every GPU series (its README's sample output, and the `label`
# rows of etc/dcp-metrics-included.csv, NVIDIA/dcgm-exporter commit 084a245): one series per GPU. After
# release 4.5.3-4.8.2 (commit d5e5f51, internal/pkg/rendermetrics/render_metrics.go) the host label is `hostname`. On
# Kubernetes it adds the pod of the GPU (internal/pkg/transformation/const.go, same commit: pod, namespace,
# container, pod_uid, vgpu; the older pod_name, pod_namespace, container_name; the dra_* labels of a
# dynamic resource claim), on Slurm the job (hpc_job). A GPU that passes from one pod or job to another is a
# new series for the rest of the time: the series are summed, each covering its own time.
DCGM_LABELS = (
    "gpu",
    "UUID",
    "device",
    "modelName",
    "Hostname",
    "hostname",
    "pci_bus_id",
    "DCGM_FI_DRIVER_VERSION",
    "GPU_I_ID",
    "GPU_I_PROFILE",
    "GPU_I_UUID",
    "pod_uid",
    "vgpu",
    "pod_name",
    "pod_namespace",
    "container_name",
    "dra_claim_name",
    "dra_claim_namespace",
    "dra_driver_name",
    "dra_pool_name",
    "dra_device_name",
    "dra_mig_profile",
    "dra_mig_device_uuid",
    "hpc_job",
)
INVOICE_COLUMNS = ("month", "gpu_hours", "output_tokens", "amount")
INVOICE_ID = "invoice_id"  # an optional fifth column: one month may have several invoices
# A FOCUS export is the month's whole bill: kept under one id, so that the next export of the month
# (its provisional charges since invoiced) replaces it instead of adding to it
FOCUS_INVOICE_ID = "FOCUS"
# A FOCUS export's corrections (ChargeClass Correction) of a month it holds no charges of, billed in a later
# month: kept beside the month's invoice as "FOCUS correction BILLED-MONTH", added to it, and replaced by the
# same corrections imported again (the later month's export imported twice does not correct twice)
FOCUS_CORRECTION = "FOCUS correction "


def is_correction(invoice_id: str) -> bool:
    return invoice_id.startswith(FOCUS_CORRECTION)


QUANTILES = (0.5, 0.9, 0.99)
MONTH_PATTERN = r"\d{4}-(0[1-9]|1[0-2])"
# Months of delivered evidence lie in these years: no GPU cloud was signed before 2000, and the
# project's dates end in 2199 (procure.io.yamlsafe.LAST_YEAR). A month outside is a typo (0026-05).
FIRST_MONTH_YEAR, LAST_MONTH_YEAR = 2000, 2199
# Counts are judged against the offer's own size, not a fixed ceiling: per GPU-second of the offer's
# whole supply (procure.model.inputs.Offer.supply_gpus) in the month. The fastest points of the public
# B200 curves are of the order of 10^4 output tok/s per GPU (InferenceX, at the lowest interactivity;
# SemiAnalysis InferenceX, May 2026: B200 DeepSeek-R1 FP8 8k/1k, 50.65 tok/s per GPU at 107.6 tok/s per user): ten times
# that is no
# deployment's. Requests are bounded alike (a request yields at least one token or fails).
MAX_PER_GPU_SECOND = 100_000.0
# Billed GPU-hours above ten times the offer's whole supply around the clock are not this offer's bill.
MAX_SUPPLY_MULTIPLE = 10.0
# Without the offer's size (a per-token offer, or one that failed to load) only a count no float sum
# can hold exactly is refused.
MAX_COUNT = 1e18
LOCK_NAME = "evidence.lock"  # in the workspace's .procure/ folder
LOCK_WAIT_S = 120.0


@dataclass
class MonthMetrics:
    """One month of serving metrics; None where the month has no sample of that metric."""

    month: str
    output_tokens: float | None = None
    requests_ok: float | None = None
    requests_failed: float | None = None
    ttft: dict[float, float | None] = field(default_factory=dict)  # quantile -> seconds
    e2e: dict[float, float | None] = field(default_factory=dict)
    coverage: float | None = None  # share of the month's seconds between samples no gap apart
    resets: int = 0
    gaps: int = 0
    busy_gpu_hours: float | None = None  # utilization telemetry's busy GPU-hours (docs/actuals.md, "Busy GPU-hours")
    busy_gpus: float | None = None  # the GPUs that telemetry covered: its GPU series (engines x gpus_per_engine)


@dataclass
class Invoice:
    month: str
    gpu_hours: float
    output_tokens: float | None
    amount: float
    id: str = ""  # the invoice's own number, when a month has several


@dataclass
class OfferActuals:
    offer_id: str
    metrics: dict[str, MonthMetrics] = field(default_factory=dict)
    invoices: dict[str, Invoice] = field(default_factory=dict)
    incidents: list[Any] = field(default_factory=list)  # procure.io.incidents.Incident
    incident_files: list[str] = field(default_factory=list)
    credits: dict[str, tuple[float, str]] = field(default_factory=dict)  # month -> (credits received, invoices)
    trials: list[Any] = field(default_factory=list)  # procure.io.offer_trials.TrialRun: benchmarks run after signing
    notes: list[str] = field(default_factory=list)
    # Posteriors by evaluation date, from the first evaluation of the workspace as loaded: what-if and
    # scenario evaluations of a changed copy (another demand, another price) reuse them, so the
    # evidence is measured against the promise at the stated demand, not against each scenario's.
    evidence_cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def months(self) -> list[str]:
        return sorted(set(self.metrics) | set(self.invoices))


# --- summarising metrics --------------------------------------------------------------------------


@dataclass
class _MonthTable:
    """The months being summed from the series, and the notes stated on the way (resets, gaps)."""

    gap_s: float  # a longer time between two samples is a gap, not a rate
    months: dict[str, MonthMetrics] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def month(self, key: str) -> MonthMetrics:
        return self.months.setdefault(key, MonthMetrics(key))

    def counter(self, s: Any) -> dict[str, float]:
        """A counter's increase per month; its resets and gaps are stated as notes and counted on the
        months they fall in, so that a month's figure says how much of it was measured."""
        from procure.io import telemetry as tm

        found = tm.counter_increase(s.times, s.values, self.gap_s)
        for when in found.resets:
            self.notes.append(f"{s.show()}: counter reset at {when} (counted from zero again)")
        for start, end in found.gaps:
            self.notes.append(
                f"{s.show()}: no samples from {tm._utc(start)} to {tm._utc(end)} ({(end - start) / 3600:.1f} h gap)"
            )
        for key in found.increase:
            m = self.month(key)
            m.resets += sum(1 for r in found.resets if r.startswith(key))
            m.gaps += sum(1 for a, b in found.gaps if tm.month_of(b) == key)
        return found.increase


def summarize(
    series: list[Any], config: ActualsConfig, problems: list[Problem]
) -> tuple[dict[str, MonthMetrics], list[str]]:
    """Monthly figures from merged series (telemetry.merge_series); (months, stated notes)."""
    names = config.metrics
    _check_labels(series, names, problems)
    if problems:
        return {}, []
    table = _MonthTable(config.gap_minutes * 60)
    _add_output_tokens(series, names, table)
    _add_requests(series, names, table, problems)
    for attr, base in (("ttft", names.ttft), ("e2e", names.e2e_latency)):
        _add_latency(series, attr, base, table, problems)
    _add_busy(series, names, table, problems)
    return table.months, table.notes


def _check_labels(series: list[Any], names: MetricNames, problems: list[Problem]) -> None:
    """Only known labels: a series split by a label procure does not know would be summed as if it
    were another vendor's or another outcome's (actuals.metrics.labels adds others)."""
    from procure.io import telemetry as tm

    allowed = set(tm.KNOWN_LABELS) | {names.outcome_label} | set(names.labels)
    found: dict[
        tuple[tuple[str, ...], bool], list[Any]
    ] = {}  # one line per set of unknown labels, however many series carry it
    for s in series:
        gpu = s.name == names.gpu_busy  # DCGM's gauge carries its own labels (gpu, UUID, Hostname, ...)
        own = allowed | set(DCGM_LABELS) if gpu else allowed
        unknown = tuple(sorted(k for k, _ in s.labels if k not in own))
        if unknown:
            found.setdefault((unknown, gpu), []).append(s)
    for (unknown, gpu), carriers in found.items():
        first = carriers[0]
        more = f" and {len(carriers) - 1:,} other series" if len(carriers) > 1 else ""
        own = allowed | set(DCGM_LABELS) if gpu else allowed
        problems.append(
            Problem(
                first.where,
                None,
                "",
                f"unknown label {', '.join(unknown)} on {first.show()}{more}: allowed are {', '.join(sorted(own))} "
                "(add others to actuals.metrics.labels)",
            )
        )


def _add_output_tokens(series: list[Any], names: MetricNames, table: _MonthTable) -> None:
    """Output tokens per month, and the share of each month the samples cover (the mean over the
    series): a month half measured is not a month of half the traffic."""
    covered: dict[str, list[float]] = defaultdict(list)
    for s in (x for x in series if x.name == names.output_tokens):
        for key, value in table.counter(s).items():
            m = table.month(key)
            m.output_tokens = (m.output_tokens or 0.0) + value
        for key, share in _covered_shares(s.times, table.gap_s):
            covered[key].append(share)
    for key, shares in covered.items():
        if key in table.months:
            table.months[key].coverage = float(sum(shares) / len(shares))


def _covered_shares(times: Any, gap_s: float) -> list[tuple[str, float]]:
    """(month, share of its seconds between samples no gap apart) for each month one series spans."""
    import numpy as np

    from procure.io import telemetry as tm

    t = np.asarray(times, dtype=float)
    if len(t) <= 1:
        return []
    step = np.diff(t)
    ok = step <= gap_s
    edges = np.asarray(tm.month_starts(t[0], t[-1]))
    slot = np.searchsorted(edges, t[1:], side="left") - 1  # a step lies in the month of (earlier, later]
    seconds = np.bincount(slot, weights=np.where(ok, step, 0.0), minlength=len(edges) - 1)
    return [(tm.month_of(edges[i]), min(1.0, seconds[i] / (edges[i + 1] - edges[i]))) for i in range(len(edges) - 1)]


def _add_busy(series: list[Any], names: MetricNames, table: _MonthTable, problems: list[Problem]) -> None:
    """Busy GPU-hours per month from utilization telemetry (docs/actuals.md, "Busy GPU-hours"): the
    time-integral of each GPU's engine-active gauge (DCGM_FI_PROF_GR_ENGINE_ACTIVE, a ratio 0..1;
    NVIDIA dcgm-exporter etc/dcp-metrics-included.csv, commit 084a245), summed over GPUs; in a month
    no GPU gauge covers, the engine's saturation, vLLM's running requests / `max_concurrency`
    (`vllm:num_requests_running`, a gauge of the requests in the running batch; vllm-project/vllm
    vllm/v1/metrics/loggers.py and docs/design/metrics.md) capped at 1, x `gpus_per_engine`.
    A gap longer than gap_minutes counts at the month's covered mean (telemetry.GaugeMonth.filled)."""
    from procure.io import telemetry as tm

    unmeasured: dict[str, list[str]] = defaultdict(list)  # month -> series none of whose steps is measured there
    covered: dict[str, dict[str, int]] = {}  # metric name -> month -> series with samples in it

    def integrate(name: str, scale: float, most: float | None, what: str) -> dict[str, float]:
        out: dict[str, float] = defaultdict(float)
        counts = covered.setdefault(name, defaultdict(int))
        for s in (x for x in series if x.name == name):
            values = [float(v) for v in s.values]
            if most is not None and any(v > most for v in values):
                i = next(n for n, v in enumerate(values) if v > most)
                problems.append(
                    Problem(
                        s.where,
                        None,
                        "",
                        f"{s.show()}: {what} must lie between 0 and {most:g} (got {values[i]:g} at "
                        f"{tm._utc(float(s.times[i]))})",
                    )
                )
                continue
            if scale != 1.0:
                values = [min(v * scale, 1.0) for v in values]
            for key, month in tm.gauge_integral(s.times, values, table.gap_s).items():
                if month.covered_s > 0:
                    out[key] += month.filled / 3600
                    counts[key] += 1
                else:  # every step a gap (a range query's step longer than gap_minutes): unknown, never 0
                    unmeasured[key].append(s.show())
        return out

    gpus = integrate(names.gpu_busy, 1.0, 1.0, "an engine-active ratio")
    engines: dict[str, float] = {}
    if names.max_concurrency:
        engines = integrate(names.requests_running, 1.0 / names.max_concurrency, None, "")
    for key in sorted(unmeasured):
        gpus.pop(key, None)
        engines.pop(key, None)
        first = unmeasured[key][0]
        more = f" and {len(unmeasured[key]) - 1} other series" if len(unmeasured[key]) > 1 else ""
        table.notes.append(
            f"month {key}: busy GPU-hours unknown: every step of {first}{more} in the month is longer than "
            f"gap_minutes ({table.gap_s / 60:g} min), so none is measured (query the series at its scrape interval)"
        )
    for key in sorted(set(gpus) | set(engines)):
        if key in gpus:
            table.month(key).busy_gpu_hours = gpus[key]
            table.month(key).busy_gpus = float(covered[names.gpu_busy][key])
        else:
            table.month(key).busy_gpu_hours = engines[key] * names.gpus_per_engine
            table.month(key).busy_gpus = float(covered[names.requests_running][key] * names.gpus_per_engine)
            table.notes.append(
                f"month {key}: busy GPU-hours from {names.requests_running} / {names.max_concurrency:g} x "
                f"{names.gpus_per_engine} GPUs (no {names.gpu_busy} series)"
            )


def _add_requests(series: list[Any], names: MetricNames, table: _MonthTable, problems: list[Problem]) -> None:
    """Requests per month by outcome, served or failed (an unknown outcome is a problem, not a guess).
    A month with served requests but no failed series has 0 failed; one without either has no data."""
    for s in (x for x in series if x.name == names.requests):
        outcome = s.label(names.outcome_label)
        if outcome in names.ok_outcomes:
            kind = "requests_ok"
        elif outcome in names.failed_outcomes:
            kind = "requests_failed"
        else:
            problems.append(
                Problem(
                    s.where,
                    None,
                    "",
                    f"{s.show()}: unknown outcome {names.outcome_label}={outcome!r}: expected one of "
                    f"{', '.join(names.ok_outcomes + names.failed_outcomes)} (actuals.metrics.ok_outcomes, "
                    "failed_outcomes)",
                )
            )
            continue
        for key, value in table.counter(s).items():
            m = table.month(key)
            setattr(m, kind, (getattr(m, kind) or 0.0) + value)
    for m in table.months.values():
        if m.requests_ok is not None and m.requests_failed is None:
            m.requests_failed = 0.0


def _add_latency(series: list[Any], attr: str, base: str, table: _MonthTable, problems: list[Problem]) -> None:
    """A latency histogram's quantiles per month (`attr` ttft or e2e): the month's increase of each
    bucket, summed over series by bound. Every histogram needs numeric bounds and a +Inf bucket, or
    its count of observations is unknown."""
    from procure.io import telemetry as tm

    groups: dict[tuple, list[Any]] = defaultdict(list)
    for s in (x for x in series if x.name == base + "_bucket"):
        groups[tuple((k, v) for k, v in s.labels if k != "le")].append(s)
    per_month: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for members in groups.values():
        bounds = []
        for s in members:
            le = tm.parse_le(s.label("le"))
            if le is None:
                problems.append(Problem(s.where, None, "le", f"{s.show()}: {tm.bucket_problem(s.label('le'))}"))
                continue
            bounds.append((le, s))
        if not any(le == float("inf") for le, _ in bounds):
            shown = (
                members[0].show().replace(f'le="{members[0].label("le")}"', "").replace(",}", "}").replace("{,", "{")
            )
            problems.append(
                Problem(
                    members[0].where,
                    None,
                    "",
                    f"histogram {shown} has no +Inf bucket: its count of observations is unknown",
                )
            )
            continue
        for le, s in bounds:
            for key, value in tm.counter_increase(
                s.times, s.values, table.gap_s
            ).increase.items():  # resets and gaps are stated once, by the counters
                per_month[key][le] += value
    for key, buckets in per_month.items():
        m = table.month(key)
        getattr(m, attr).update({q: tm.histogram_quantile(q, sorted(buckets.items())) for q in QUANTILES})


# --- the shared checks: the loader and every import run these on each month ------------------------


def check_month_key(key: str, display: str, line: int | None, column: str, problems: list[Problem]) -> bool:
    """A month like 2026-11, within FIRST_MONTH_YEAR..LAST_MONTH_YEAR."""
    import re

    if not isinstance(key, str) or not re.fullmatch(MONTH_PATTERN, key):
        problems.append(Problem(display, line, column, f"must be a month like 2026-11 (got {key!r})"))
        return False
    if not FIRST_MONTH_YEAR <= int(key[:4]) <= LAST_MONTH_YEAR:
        problems.append(
            Problem(
                display, line, column, f"must be a month from {FIRST_MONTH_YEAR}-01 to {LAST_MONTH_YEAR}-12 (got {key})"
            )
        )
        return False
    return True


def offer_size(offer: Any) -> float | None:
    """The GPUs an offer can serve on at most (its supply, and burst GPUs beyond a commitment), against
    which its delivered counts are judged; None when it states none (priced per token)."""
    burst = offer.pricing.burst.max_gpus if offer.pricing.burst is not None and not offer.on_demand else 0
    return float(offer.supply_gpus + burst) or None


def month_seconds(key: str) -> float:
    import calendar

    return calendar.monthrange(int(key[:4]), int(key[5:7]))[1] * 86_400.0


def _plausible(
    value: float | None,
    most: float | None,
    what: str,
    display: str,
    line: int | None,
    column: str,
    problems: list[Problem],
) -> bool:
    """A count within [0, most] (most: from the offer's size, else MAX_COUNT); `what` says why `most`."""
    if value is None:
        return True
    if value != value or value in (float("inf"), float("-inf")):
        problems.append(Problem(display, line, column, f"must be a finite number (got {value})"))
        return False
    if value < 0:
        problems.append(Problem(display, line, column, f"must be at least 0 (got {value:.15g})"))
        return False
    limit = MAX_COUNT if most is None else min(most, MAX_COUNT)
    if value > limit:
        if what.startswith("a ") or what.startswith("one "):  # a bound of the quantity itself, not of the offer's size
            problems.append(Problem(display, line, column, f"must be at most {limit:g} (got {value:.15g})"))
        else:
            problems.append(
                Problem(
                    display,
                    line,
                    column,
                    f"{value:.4g} is implausible: at most {limit:.4g} ({what or 'no count here is larger'})",
                )
            )
        return False
    return True


def _size_limit(key: str, size: float | None, per_second: float) -> tuple[float | None, str]:
    if not size:
        return None, ""
    seconds = month_seconds(key)
    return (
        size * seconds * per_second,
        f"{per_second:,.0f} a second on each of the offer's {size:,.0f} GPUs over {key}'s {seconds / 86_400:.0f} days",
    )


def check_metrics_month(
    m: MonthMetrics, size: float | None, display: str, line: int | None, problems: list[Problem], prefix: str = ""
) -> bool:
    """The checks a month of metrics.csv passes, read or about to be written: its month, counts within
    the offer's size (`size`: its GPUs; None: unknown), latencies and coverage in range, quantiles in order."""
    before = len(problems)
    if not check_month_key(m.month, display, line, f"{prefix}month", problems):
        return False
    most, why = _size_limit(m.month, size, MAX_PER_GPU_SECOND)
    for column in ("output_tokens", "requests_ok", "requests_failed"):
        _plausible(getattr(m, column), most, why, display, line, prefix + column, problems)
    for name, quantiles in (("ttft", m.ttft), ("e2e", m.e2e)):
        for q, v in quantiles.items():
            _plausible(
                v,
                month_seconds(m.month),
                "a month's seconds",
                display,
                line,
                f"{prefix}{name}_p{int(q * 100)}_s",
                problems,
            )
        stated = [(q, v) for q, v in sorted(quantiles.items()) if v is not None]
        for (q0, low), (q1, high) in zip(stated, stated[1:]):
            if high < low:
                problems.append(
                    Problem(
                        display,
                        line,
                        f"{prefix}{name}_p{int(q1 * 100)}_s",
                        f"{high:g} s is below {name}_p{int(q0 * 100)}_s ({low:g} s): a higher percentile is never "
                        "faster",
                    )
                )
    _plausible(m.coverage, 1.0, "a share of the month", display, line, prefix + "coverage", problems)
    # busy GPU-hours: at most every GPU the offer can supply, busy around the clock
    _plausible(
        m.busy_gpu_hours,
        size * month_seconds(m.month) / 3600 if size else None,
        "the offer's GPUs x the month's hours",
        display,
        line,
        prefix + BUSY_COLUMN,
        problems,
    )
    for column in ("resets", "gaps"):
        _plausible(getattr(m, column), month_seconds(m.month), "one a second", display, line, prefix + column, problems)
    if m.busy_gpus is not None and (m.busy_gpus != int(m.busy_gpus) or m.busy_gpus < 1):
        problems.append(
            Problem(
                display, line, prefix + BUSY_GPUS_COLUMN, f"must be a whole number of at least 1 (got {m.busy_gpus:g})"
            )
        )
    elif m.busy_gpus is not None:
        _plausible(m.busy_gpus, size, "the offer's GPUs", display, line, prefix + BUSY_GPUS_COLUMN, problems)
    return len(problems) == before


def check_invoice_month(
    inv: Invoice, size: float | None, display: str, line: int | None, problems: list[Problem], prefix: str = ""
) -> bool:
    """The checks a month's invoices (summed over their ids) pass, read or about to be written."""
    before = len(problems)
    if not check_month_key(inv.month, display, line, f"{prefix}month", problems):
        return False
    most, why = _size_limit(inv.month, size, MAX_PER_GPU_SECOND)
    _plausible(inv.output_tokens, most, why, display, line, prefix + "output_tokens", problems)
    hours, hours_why = _size_limit(inv.month, size, MAX_SUPPLY_MULTIPLE / 3600)
    _plausible(
        inv.gpu_hours,
        hours,
        f"{MAX_SUPPLY_MULTIPLE:g} times the offer's {size or 0:,.0f} GPUs around the clock" if hours else hours_why,
        display,
        line,
        prefix + "gpu_hours",
        problems,
    )
    _plausible(inv.amount, None, "", display, line, prefix + "amount", problems)
    return len(problems) == before


# --- files -----------------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "" if value is None else format(value, ".10g")


def metrics_csv(months: dict[str, MonthMetrics], sources: list[str]) -> str:
    from procure.textsafe import csv_writer

    buffer = io.StringIO()
    buffer.write("# serving metrics per calendar month (UTC), from: " + "; ".join(sources).replace("\n", " ") + "\n")
    writer = csv_writer(buffer, lineterminator="\n")
    busy = any(m.busy_gpu_hours is not None for m in months.values())
    counted = busy and any(m.busy_gpus is not None for m in months.values())
    writer.writerow(METRIC_COLUMNS + ((BUSY_COLUMN,) if busy else ()) + ((BUSY_GPUS_COLUMN,) if counted else ()))
    for key in sorted(months):
        m = months[key]
        writer.writerow(
            [
                key,
                _fmt(m.output_tokens),
                _fmt(m.requests_ok),
                _fmt(m.requests_failed),
                *(_fmt(m.ttft.get(q)) for q in QUANTILES),
                *(_fmt(m.e2e.get(q)) for q in QUANTILES),
                _fmt(m.coverage),
                str(m.resets),
                str(m.gaps),
            ]
            + ([_fmt(m.busy_gpu_hours)] if busy else [])
            + ([_fmt(m.busy_gpus)] if counted else [])
        )
    return buffer.getvalue()


def invoices_csv(invoices: dict[tuple[str, str], Invoice]) -> str:
    """One row per (month, invoice id); the invoice_id column only when some invoice has an id."""
    from procure.textsafe import csv_writer

    with_ids = any(i.id for i in invoices.values())
    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(INVOICE_COLUMNS + ((INVOICE_ID,) if with_ids else ()))
    for key in sorted(invoices):
        i = invoices[key]
        writer.writerow(
            [i.month, _fmt(i.gpu_hours), _fmt(i.output_tokens), _fmt(i.amount)] + ([i.id] if with_ids else [])
        )
    return buffer.getvalue()


def _number(raw: str, display: str, line: int, column: str, problems: list[Problem]) -> float | None:
    """A finite number of delivered evidence ('' is None); its range is checked by the month's check."""
    if raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        problems.append(Problem(display, line, column, f"must be a number (got {raw[:40]!r})"))
        return None
    if value != value or value in (float("inf"), float("-inf")):
        problems.append(Problem(display, line, column, f"must be a finite number (got {raw[:40]})"))
        return None
    return value


def read_metrics_csv(
    path: Path, display: str, problems: list[Problem], size: float | None = None
) -> dict[str, MonthMetrics]:
    """metrics.csv as `metrics_csv` writes it; every row passes `check_metrics_month`."""
    from procure.io.tables import read_csv_rows

    columns = metric_columns(path, display)
    rows, _, found = read_csv_rows(path, display, columns)
    problems.extend(found)
    out: dict[str, MonthMetrics] = {}
    for line, row in rows:
        key = row["month"]
        if key in out:
            problems.append(Problem(display, line, "month", f"{key} appears twice"))
            continue
        before = len(problems)
        num = {c: _number(row[c], display, line, c, problems) for c in columns[1:]}
        m = MonthMetrics(key, num["output_tokens"], num["requests_ok"], num["requests_failed"])
        m.ttft = {q: num[f"ttft_p{int(q * 100)}_s"] for q in QUANTILES}
        m.e2e = {q: num[f"e2e_p{int(q * 100)}_s"] for q in QUANTILES}
        m.coverage = num["coverage"]
        m.busy_gpu_hours = num.get(BUSY_COLUMN)
        m.busy_gpus = num.get(BUSY_GPUS_COLUMN)
        for column in ("resets", "gaps"):
            value = num[column] or 0
            if value != int(value):
                problems.append(Problem(display, line, column, f"must be a whole number (got {row[column]})"))
            setattr(m, column, int(value) if abs(value) < MAX_COUNT else value)
        if len(problems) == before and check_metrics_month(m, size, display, line, problems):
            out[key] = m
    return out


def metric_columns(path: Path, display: str) -> tuple[str, ...]:
    """METRIC_COLUMNS, with busy_gpu_hours when the header ends with it (or with it and busy_gpus)."""
    from procure.io.yamlsafe import read_text

    try:
        text = read_text(path, display)
    except InputError:
        return METRIC_COLUMNS  # read_csv_rows names the problem
    names = _csv_header(text)
    if names[-2:] == [BUSY_COLUMN, BUSY_GPUS_COLUMN]:
        return METRIC_COLUMNS + (BUSY_COLUMN, BUSY_GPUS_COLUMN)
    return METRIC_COLUMNS + (BUSY_COLUMN,) if names[-1:] == [BUSY_COLUMN] else METRIC_COLUMNS


def _invoice_columns(path: Path, display: str) -> tuple[str, ...]:
    """INVOICE_COLUMNS, with invoice_id when the header ends with it."""
    from procure.io.yamlsafe import read_text

    try:
        text = read_text(path, display)
    except InputError:
        return INVOICE_COLUMNS  # read_csv_rows names the problem
    return INVOICE_COLUMNS + (INVOICE_ID,) if _csv_header(text)[-1:] == [INVOICE_ID] else INVOICE_COLUMNS


def read_invoice_rows(
    path: Path, display: str, problems: list[Problem], size: float | None = None
) -> dict[tuple[str, str], tuple[Invoice, int]]:
    """An invoices CSV, by (month, invoice id) with each row's line: month (2026-11), gpu_hours
    (billed), output_tokens (may be empty), amount, optionally invoice_id. The same month and id
    twice is an error; each row passes `check_invoice_month` (`size`: the offer's GPUs)."""
    from procure.io.tables import read_csv_rows

    rows, _, found = read_csv_rows(path, display, _invoice_columns(path, display))
    problems.extend(found)
    out: dict[tuple[str, str], tuple[Invoice, int]] = {}
    for line, row in rows:
        key = (row["month"], row.get(INVOICE_ID, ""))
        if not check_month_key(key[0], display, line, "month", problems):
            continue
        if key in out:
            problems.append(
                Problem(
                    display,
                    line,
                    "month",
                    f"{key[0]} is invoiced twice"
                    + (f" under invoice_id {key[1]!r}" if key[1] else "")
                    + f" (also line {out[key][1]})",
                )
            )
            continue
        before = len(problems)
        if key[1]:  # shown in notes and claims: one line, a name's length
            from procure.io.tables import gate_field

            gate_field(key[1], display, line, INVOICE_ID, problems)
        hours = _number(row["gpu_hours"], display, line, "gpu_hours", problems)
        tokens = _number(row["output_tokens"], display, line, "output_tokens", problems)
        amount = _number(row["amount"], display, line, "amount", problems)
        for column, value in (("gpu_hours", hours), ("amount", amount)):
            if value is None and not row[column]:
                problems.append(Problem(display, line, column, "must be a number (got '')"))
        if len(problems) == before and hours is not None and amount is not None:
            invoice = Invoice(key[0], hours, tokens, amount, key[1])
            # a correction may be negative: the month it corrects is checked whole (_summed_months_checked)
            if is_correction(key[1]) or check_invoice_month(invoice, size, display, line, problems):
                out[key] = (invoice, line)
    return out


def invoice_months(rows: dict[tuple[str, str], Invoice]) -> dict[str, Invoice]:
    """Each month's invoices summed (output tokens: None unless some invoice states them)."""
    out: dict[str, Invoice] = {}
    for (month, _), i in sorted(rows.items()):
        if month not in out:
            out[month] = Invoice(month, i.gpu_hours, i.output_tokens, i.amount)
        else:
            o = out[month]
            tokens = (
                None
                if o.output_tokens is None and i.output_tokens is None
                else (o.output_tokens or 0.0) + (i.output_tokens or 0.0)
            )
            out[month] = Invoice(month, o.gpu_hours + i.gpu_hours, tokens, o.amount + i.amount)
    return out


def _summed_months_checked(
    rows: dict[tuple[str, str], Invoice],
    size: float | None,
    display: str,
    line_of: dict[str, int | None],
    problems: list[Problem],
    prefix: str = "",
) -> dict[str, Invoice]:
    """The months summed over their invoices; a month of several invoices is checked as a whole (each
    row was checked as it was read)."""
    count: dict[str, int] = defaultdict(int)
    for month, invoice_id in rows:
        count[month] += 2 if is_correction(invoice_id) else 1  # a corrected month is always checked whole
    months = invoice_months(rows)
    return {
        k: inv
        for k, inv in months.items()
        if count[k] == 1 or check_invoice_month(inv, size, display, line_of.get(k), problems, prefix.format(month=k))
    }


def read_invoices(path: Path, display: str, problems: list[Problem], size: float | None = None) -> dict[str, Invoice]:
    """An invoices CSV by month (several invoices of a month summed), every row and month checked."""
    rows = read_invoice_rows(path, display, problems, size)
    last_line = {k[0]: line for k, (_, line) in sorted(rows.items(), key=lambda kv: kv[1][1])}
    return _summed_months_checked({k: i for k, (i, _) in rows.items()}, size, display, last_line, problems)


def load_actuals(
    root: Path, offer_ids: Iterable[str], problems: list[Problem], record: Any, sizes: dict[str, float] | None = None
) -> dict[str, OfferActuals]:
    """Every offer folder of actuals/; `record(path, text)` hashes each file read as an input;
    `sizes`: each offer's GPUs, against which the counts are judged."""
    from procure.io.incidents import read_incidents
    from procure.io.yamlsafe import read_text

    folder = Path(root) / ACTUALS
    out: dict[str, OfferActuals] = {}
    if not folder.is_dir():
        return out
    known = set(offer_ids)
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        display_dir = f"{ACTUALS}/{sub.name}"
        if sub.name not in known:
            problems.append(
                Problem(
                    display_dir,
                    None,
                    "",
                    f"no offer with this id (known: {', '.join(sorted(known)) or 'none'}): name the folder by the "
                    "signed offer's id",
                )
            )
            continue
        found = OfferActuals(sub.name)
        size = (sizes or {}).get(sub.name)
        for path in sorted(sub.iterdir()):
            display = f"{display_dir}/{path.name}"
            if path.name == "metrics.csv":
                found.metrics = read_metrics_csv(path, display, problems, size)
            elif path.name == "invoices.csv":
                found.invoices = read_invoices(path, display, problems, size)
            elif path.name == "credits.csv":
                from procure.io.focus import read_credits

                found.credits = read_credits(path, display, problems)
            elif path.name == "trials.csv":
                from procure.io.offer_trials import read_trials

                found.trials = read_trials(path, display, problems)
            elif path.name in ("incidents.json", "incidents.csv"):
                try:
                    found.incidents.extend(read_incidents(path, display))
                    found.incident_files.append(display)
                except InputError as exc:
                    problems.extend(exc.problems)
                    continue
            else:
                continue
            try:
                record(path, read_text(path, display, 500 * 1024 * 1024))
            except InputError as exc:
                problems.extend(exc.problems)
        out[sub.name] = found
    return out


# --- merging under the workspace's lock ------------------------------------------------------------

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
        problems: list[Problem] = []
        files: dict[str, str | bytes] = {}
        notes: list[str] = []
        if incoming.metrics:
            _merge_metrics(folder, incoming, size, display, files, notes, problems)
        if incoming.invoices:
            _merge_invoices(folder, incoming, size, display, files, notes, problems)
        if incoming.credits:
            _merge_credits(folder, incoming, files, notes, problems)
        if incoming.incidents:
            _merge_incident_csv(folder, incoming.incidents, files, notes, problems)
        if incoming.statuspage:
            _merge_statuspage(folder, incoming, files, notes, problems)
        if problems:
            raise InputError(problems)
        return write_files_atomic(folder, files), notes


def _kept(folder: Path, name: str) -> tuple[Path, str]:
    return folder / name, f"{ACTUALS}/{folder.name}/{name}"


def _merge_metrics(
    folder: Path,
    incoming: Incoming,
    size: float | None,
    display: str,
    files: dict,
    notes: list[str],
    problems: list[Problem],
) -> None:
    from procure.io.tables import read_csv_rows

    path, shown = _kept(folder, "metrics.csv")
    kept: dict[str, MonthMetrics] = {}
    sources: list[str] = []
    if path.exists():
        found: list[Problem] = []
        kept = read_metrics_csv(path, shown, found, size)
        rows, comments, _ = read_csv_rows(path, shown, metric_columns(path, shown))
        _forgive(
            found,
            {line: row["month"] for line, row in rows},
            set(incoming.metrics),
            lambda k: f"month {k}",
            notes,
            problems,
        )
        sources = [s for c in comments if "from:" in c for s in c.split("from:", 1)[1].split("; ") if s.strip()]
    for key, m in sorted(incoming.metrics.items()):
        check_metrics_month(m, size, display, None, problems, prefix=f"month {key}: ")
    # a month's quantiles cannot be summed from two imports: the better measured month is kept, so a
    # last sample at 00:05 on the 1st, or one day's snapshots, never replaces a whole month
    # compared as metrics.csv writes them (_fmt): the same samples read back must not count as better measured
    thinner = {
        k
        for k, m in incoming.metrics.items()
        if k in kept and float(_fmt(kept[k].coverage or 0.0)) > float(_fmt(m.coverage or 0.0))
    }
    for key in sorted(thinner):
        notes.append(
            f"month {key}: kept as it was (its samples cover {kept[key].coverage or 0:.1%} of the month, this import's "
            f"{incoming.metrics[key].coverage or 0:.1%}): import the month's files together to replace it"
        )
    merged, replaced = merge_by_key(
        kept, {k: m for k, m in incoming.metrics.items() if k not in thinner}, lambda k: f"month {k}"
    )
    notes += replaced
    files["metrics.csv"] = metrics_csv(merged, list(dict.fromkeys([*sources, *incoming.sources])))


def _forgive(
    found: list[Problem],
    key_of_line: dict[int, Any],
    replaced: set,
    name: Callable[[Any], str],
    notes: list[str],
    problems: list[Problem],
) -> None:
    """The kept file's problems, less those of rows this import replaces (a corrective import may
    replace a row the loader refuses: it is named); the rest refuse the import."""
    for p in found:
        key = key_of_line.get(p.line) if p.line is not None else None
        if key is not None and key in replaced:
            notes.append(f"{name(key)}: the kept row ({p.field}: {p.message}) is replaced by this import")
        else:
            problems.append(p)


def _merge_invoices(
    folder: Path,
    incoming: Incoming,
    size: float | None,
    display: str,
    files: dict,
    notes: list[str],
    problems: list[Problem],
) -> None:
    from procure.io.tables import read_csv_rows

    path, shown = _kept(folder, "invoices.csv")
    kept: dict[tuple[str, str], Invoice] = {}
    if path.exists():
        found: list[Problem] = []
        kept = {k: i for k, (i, _) in read_invoice_rows(path, shown, found, size).items()}
        rows, _, _ = read_csv_rows(path, shown, _invoice_columns(path, shown))
        _forgive(
            found,
            {line: (row["month"], row.get(INVOICE_ID, "")) for line, row in rows},
            set(incoming.invoices),
            lambda k: f"invoice {k[0]}" + (f" {k[1]}" if k[1] else ""),
            notes,
            problems,
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
    files["invoices.csv"] = invoices_csv(merged)


def _merge_credits(folder: Path, incoming: Incoming, files: dict, notes: list[str], problems: list[Problem]) -> None:
    """credits.csv by month: a FOCUS export's month replaces the kept one, as its invoice does."""
    from procure.io.focus import credits_csv, read_credits

    path, shown = _kept(folder, "credits.csv")
    kept = read_credits(path, shown, problems) if path.exists() else {}
    merged, replaced = merge_by_key(kept, incoming.credits, lambda k: f"credits {k}")
    notes += replaced
    files["credits.csv"] = credits_csv(merged)


def _merge_incident_csv(
    folder: Path, incoming: list[Any], files: dict, notes: list[str], problems: list[Problem]
) -> None:
    """The kept incidents.csv and the incoming CSV rows, merged by start and components; two rows
    that overlap on a component afterwards are refused as the loader would refuse them."""
    from procure.io.incidents import read_incidents_csv
    from procure.io.tables import read_csv_rows

    path, shown = _kept(folder, "incidents.csv")
    kept_list: list[Any] = []
    comments: list[str] = []
    if path.exists():
        try:
            kept_list = read_incidents_csv(path, shown)
        except InputError as exc:
            problems.extend(exc.problems)
            return
        _, comments, _ = read_csv_rows(path, shown, ("start", "end", "impact", "components"))
    kept = {incident_key(i): i for i in kept_list}
    new = {incident_key(i): i for i in incoming}
    merged, replaced = merge_by_key(
        kept, new, _incident_name, lambda a, b: (a.end, a.impact, a.components) == (b.end, b.impact, b.components)
    )
    problems.extend(_merged_overlaps(list(merged.values())))
    notes += replaced
    files["incidents.csv"] = incidents_csv(list(merged.values()), comments)


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


def _merge_statuspage(folder: Path, incoming: Incoming, files: dict, notes: list[str], problems: list[Problem]) -> None:
    """The kept incidents.json and the incoming Statuspage incidents, merged by start and components."""
    import json

    from procure.io.incidents import statuspage_incidents
    from procure.io.yamlsafe import read_json

    path, shown = _kept(folder, "incidents.json")
    kept: dict = {}
    page = incoming.page
    if path.exists():
        try:
            data = read_json(path, shown)
            items = data.get("incidents") if isinstance(data, dict) else data
            parsed = statuspage_incidents(data, shown)  # the loader's check of what is kept
        except InputError as exc:
            problems.extend(exc.problems)
            return
        by_where = {i.where: i for i in parsed}
        kept = {
            incident_key(by_where[f"{shown}: incidents[{n}]"]): item
            for n, item in enumerate(items)
            if f"{shown}: incidents[{n}]" in by_where
        }
        if page is None and isinstance(data, dict):
            page = data.get("page")
    new = {incident_key(i): item for item, i in incoming.statuspage}
    merged, replaced = merge_by_key(kept, new, _incident_name)
    notes += replaced
    ordered = [merged[k] for k in sorted(merged, reverse=True)]  # newest first, as Statuspage lists them
    document = {"page": page, "incidents": ordered} if page is not None else {"incidents": ordered}
    try:
        statuspage_incidents(document, shown)
    except InputError as exc:
        problems.extend(exc.problems)
        return
    files["incidents.json"] = json.dumps(document, indent=1, ensure_ascii=False) + "\n"


# --- the import ------------------------------------------------------------------------------------


def _csv_header(text: str) -> list[str]:
    """The column names of a CSV's first row that is neither blank nor a '#' comment, read as the csv
    module reads them (quoted names, as FOCUS exports write every field, "BilledCost"); [] if none."""
    lines = (line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    try:
        return [name.strip() for name in next(csv.reader(lines), [])]
    except csv.Error:
        return []


HEAD_BYTES = 64 * 1024


def detect_kind(path: Path) -> str:
    """metrics-text, metrics-range, incidents, invoices or focus, from the file's name and first bytes. A
    file compressed with gzip is known by its first bytes, and its name is read without `.gz`; only a
    FOCUS export is read compressed."""
    import zlib

    from procure.io.focus import looks_like_contract_commitments, looks_like_focus
    from procure.io.yamlsafe import GZIP_MAGIC, regular_file

    regular_file(Path(path), str(path), 500 * 1024 * 1024)
    with open(path, "rb") as handle:
        raw = handle.read(HEAD_BYTES)
        compressed = raw.startswith(GZIP_MAGIC)
    if compressed:  # the start of the text, from the start of the stream (a stream cut short still has one)
        try:
            raw = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS).decompress(raw, HEAD_BYTES)
        except zlib.error as exc:
            raise InputError(
                [
                    Problem(
                        str(path),
                        None,
                        "",
                        f"not a readable gzip file ({exc}): expected CSV text, or CSV compressed with gzip",
                    )
                ]
            ) from None
    head = raw.decode("utf-8", "replace").lstrip("\ufeff")
    name = Path(path).name.lower()
    if compressed and name.endswith(".gz"):
        name = name[: -len(".gz")]
    suffix = Path(name).suffix
    if suffix == ".csv" or compressed:
        names = _csv_header(head)
        if looks_like_focus(names):
            return "focus"
        if looks_like_contract_commitments(names):
            raise InputError(
                [
                    Problem(
                        str(path),
                        1,
                        "",
                        "a FOCUS contract commitment file (ContractCommitmentId, ContractCommitmentCost): it lists "
                        "what was committed, not what was billed; import the cost and usage export (BilledCost, "
                        "ChargeCategory) instead",
                    )
                ]
            )
        if compressed:
            raise InputError(
                [
                    Problem(
                        str(path),
                        None,
                        "",
                        "compressed with gzip: procure reads a FOCUS export compressed (a header with BilledCost and "
                        "ChargeCategory), and every other file as text: decompress it (gunzip) and import that",
                    )
                ]
            )
        # an invoice sheet with a column missing or out of order is still an invoice sheet: its own
        # reader then names the columns, instead of the incident reader naming columns it never had
        if names[:4] == list(INVOICE_COLUMNS) or {"month", "amount"} & set(names):
            return "invoices"
        return "incidents"
    if suffix == ".json":
        if '"resultType"' in head or ('"status"' in head and '"data"' in head):
            return "metrics-range"
        return "incidents"
    return "metrics-text"


def read_import(
    paths: list[Path],
    config: ActualsConfig,
    problems: list[Problem],
    size: float | None = None,
    currency: str | None = None,
    gpu_filter: Any = None,
    rate: float | None = None,
) -> tuple[Incoming, list[str]]:
    """Every file of one import, checked and summed (`size`: the offer's GPUs; `currency`: the offer's,
    which a FOCUS export must bill in): (what to merge, notes stated on the way)."""
    from procure.io import telemetry as tm
    from procure.io.files import own_input

    names = config.metrics
    wanted = {names.output_tokens, names.requests, names.ttft, names.e2e_latency, names.gpu_busy} | (
        {names.requests_running} if names.max_concurrency else set()
    )
    incoming = Incoming()
    parts: list[Any] = []
    metric_files: list[str] = []
    invoice_at: dict[tuple[str, str], str] = {}  # (month, id) -> the file and line of this import that invoices it
    focus_notes: list[str] = []
    incident_at: dict[Any, Any] = {}
    partial: dict[str, list[str]] = {}  # month -> the warnings and infos of the Prometheus answers spanning it
    for path in paths:
        display = str(path)
        own_input(path)
        try:
            kind = detect_kind(path)
            if kind in ("metrics-range", "metrics-text"):
                if kind == "metrics-range":
                    parts += tm.read_query_range(path, display, wanted, problems, partial)
                else:
                    parts += tm.read_text_snapshot(path, display, wanted, problems)
                metric_files.append(display)
                incoming.sources.append(Path(path).name)
            elif kind == "incidents":
                _read_incidents(path, display, incoming, incident_at, problems)
            else:
                rows = (
                    read_invoice_rows(path, display, problems, size)
                    if kind == "invoices"
                    else _focus_rows(path, display, incoming, focus_notes, problems, size, currency, gpu_filter, rate)
                )
                for key, (inv, line) in rows.items():
                    other = next(
                        (
                            k
                            for k in invoice_at
                            if k[0] == key[0]
                            and not is_correction(k[1])
                            and not is_correction(key[1])
                            and (k[1] == FOCUS_INVOICE_ID) != (key[1] == FOCUS_INVOICE_ID)
                        ),
                        None,
                    )
                    if (
                        other is not None
                    ):  # a FOCUS export is the month's whole bill: never added to another invoice of it
                        problems.append(
                            Problem(
                                display,
                                line,
                                "month",
                                f"{key[0]} is invoiced twice (also in {invoice_at[other]}): a FOCUS export is the "
                                "month's whole bill",
                            )
                        )
                        continue
                    if key in invoice_at:
                        problems.append(
                            Problem(display, line, "month", f"{key[0]} is invoiced twice (also in {invoice_at[key]})")
                        )
                        continue
                    invoice_at[key] = f"{display}:{line}"
                    incoming.invoices[key] = inv
        except InputError as exc:
            problems.extend(exc.problems)
    notes: list[str] = []
    if metric_files and not problems:
        incoming.metrics, notes = _summed(parts, metric_files, wanted, config, problems)
        for key in sorted(k for k in partial if k in incoming.metrics):
            # an answer with warnings may be incomplete: the month is partial (not scored, and a clean answer
            # of it replaces it), whatever share its samples seem to cover
            incoming.metrics[key].coverage = 0.0
            said = list(dict.fromkeys(partial[key]))
            notes.append(
                f"month {key}: partial, counted as covering 0% of the month: the Prometheus answer came with "
                + "; ".join(said[:3])
                + (f" and {len(said) - 3} more" if len(said) > 3 else "")
            )
    return incoming, notes + focus_notes


def _focus_rows(
    path: Path,
    display: str,
    incoming: Incoming,
    notes: list[str],
    problems: list[Problem],
    size: float | None,
    currency: str | None,
    gpu_filter: Any = None,
    rate: float | None = None,
) -> dict[tuple[str, str], tuple[Invoice, int]]:
    """A FOCUS billing export's months as invoices under FOCUS_INVOICE_ID (with the line that closes
    each month), each passing `check_invoice_month`; its credits into `incoming.credits` and its
    statements into `notes`."""
    from procure.io.focus import month_credits, read_focus

    billed, stated = read_focus(path, display, problems, currency, gpu_filter, rate)
    notes += stated
    incoming.credits.update(month_credits(billed))
    out = {}
    for key, m in billed.items():
        if m.corrections_only:  # kept beside the month's invoice imported before, one per month billed in
            for billed_in, (_, amount, hours) in sorted(m.corrections.items()):
                invoice_id = FOCUS_CORRECTION + billed_in
                invoice = Invoice(key, round(hours, 10), None, round(amount, 10), invoice_id)
                if check_month_key(key, display, m.last_line, f"month {key}: month", problems):
                    out[(key, invoice_id)] = (invoice, m.last_line)
            continue
        invoice = Invoice(key, m.gpu_hours, None, round(m.amount, 10), FOCUS_INVOICE_ID)
        if check_invoice_month(invoice, size, display, m.last_line, problems, prefix=f"month {key}: "):
            out[(key, FOCUS_INVOICE_ID)] = (invoice, m.last_line)
    return out


def _read_incidents(path: Path, display: str, incoming: Incoming, seen: dict, problems: list[Problem]) -> None:
    """One incident file of an import; the same incident (start and components) in two files of one
    import with different ends or impacts is an error (which one is right?), the same twice is one."""
    from procure.io.incidents import read_incidents
    from procure.io.yamlsafe import read_json

    found = read_incidents(path, display)
    if Path(path).suffix.casefold() == ".json":
        data = read_json(path, display)
        items = data.get("incidents") if isinstance(data, dict) else data
        by_where = {f"{display}: incidents[{n}]": item for n, item in enumerate(items)}
        if isinstance(data, dict) and data.get("page") is not None:
            incoming.page = data["page"]
    for i in found:
        key = (Path(path).suffix.casefold(), incident_key(i))
        if key in seen:
            first = seen[key]
            if (first.end, first.impact) != (i.end, i.impact):
                file, _, line = i.where.rpartition(":")
                problems.append(
                    Problem(
                        file if line.isdigit() else i.where,
                        int(line) if line.isdigit() else None,
                        "start",
                        f"{_incident_name(key[1])} is also in {first.where} with another end or impact: keep one",
                    )
                )
            continue
        seen[key] = i
        if Path(path).suffix.casefold() == ".json":
            incoming.statuspage.append((by_where[i.where], i))
        else:
            incoming.incidents.append(i)


def _summed(
    parts: list[Any], files: list[str], wanted: set[str], config: ActualsConfig, problems: list[Problem]
) -> tuple[dict[str, MonthMetrics], list[str]]:
    """The metric files' series summed per month; a file set without any configured metric is an error."""
    from procure.io import telemetry as tm

    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    if not parts:
        problems.append(
            Problem(
                shown,
                None,
                "",
                f"no samples of {', '.join(sorted(wanted))}: nothing to import (the metric names are set in "
                "actuals.metrics)",
            )
        )
        return {}, []
    series = tm.merge_series(parts, problems)
    if problems:
        return {}, []
    months, stated = summarize(series, config, problems)
    if not months and not problems:
        problems.append(
            Problem(
                shown,
                None,
                "",
                f"no month of {', '.join(sorted(wanted))}: each series needs two samples or more (the metric names are "
                "set in actuals.metrics)",
            )
        )
    return months, stated


def import_actuals(
    root: Path,
    offer_id: str,
    paths: list[Path],
    config: ActualsConfig,
    size: float | None = None,
    currency: str | None = None,
    gpu_filter: Any = None,
    rate: float | None = None,
) -> tuple[list[Path], list[str]]:
    """Read every file, check it, and merge it into the offer's actuals folder all at once (`size`:
    the offer's GPUs, against which counts are judged; `currency`: the offer's, which a FOCUS export
    must bill in; `rate`: its price per GPU-hour, against which a FOCUS month's cost per GPU-hour is judged).
    Returns (written, notes)."""
    problems: list[Problem] = []
    incoming, notes = read_import(paths, config, problems, size, currency, gpu_filter, rate)
    if problems:
        raise InputError(problems)
    display = ", ".join(str(p) for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    if not (incoming.metrics or incoming.invoices or incoming.incidents or incoming.statuspage):
        raise InputError(
            [Problem(display, None, "", "no evidence to import: no metric month, invoice or incident in the files")]
        )
    written, replaced = store_evidence(root, offer_id, incoming, size, display)
    return written, notes + replaced
