"""Serving metrics summed per calendar month (UTC): the series procure/io/telemetry.py read, checked for their
labels, and added up into MonthMetrics (procure/io/actuals.py): output tokens, requests served and failed, the
latency quantiles of the histograms, and the busy GPU-hours of the utilization gauges."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from procure.errors import Problem
from procure.io.actuals import QUANTILES, MonthMetrics
from procure.model.inputs import ActualsConfig, MetricNames

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
