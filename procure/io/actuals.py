"""Delivered evidence per signed vendor, kept in the workspace's `actuals/` folder.

`actuals/OFFER-ID/` holds, for the offer signed with that vendor:

- `metrics.csv`: the serving metrics summed per calendar month (UTC), written by `procure actuals
  import` from Prometheus text snapshots or query_range exports (procure/io/telemetry.py): output
  tokens, requests served and failed, TTFT and end-to-end latency quantiles, the share of the month
  the samples cover, and the counter resets and gaps found;
- `incidents.json` (Atlassian Statuspage) or `incidents.csv` (start, end, impact, components): the
  incident history, read by procure/io/incidents.py;
- `invoices.csv`: month, gpu_hours, output_tokens, amount (the invoice's total in the offer's currency).

Every file is an input: hashed into the Evaluation like the offers, and checked at load. A month
without a row is "no data", never zero.
"""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from procure.errors import InputError, Problem
from procure.model.inputs import ActualsConfig, MetricNames

ACTUALS = "actuals"
METRIC_COLUMNS = (
    "month", "output_tokens", "requests_ok", "requests_failed",
    "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s",
    "coverage", "resets", "gaps",
)
INVOICE_COLUMNS = ("month", "gpu_hours", "output_tokens", "amount")
QUANTILES = (0.5, 0.9, 0.99)
MONTH_PATTERN = r"\d{4}-(0[1-9]|1[0-2])"


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


@dataclass
class Invoice:
    month: str
    gpu_hours: float
    output_tokens: float | None
    amount: float


@dataclass
class OfferActuals:
    offer_id: str
    metrics: dict[str, MonthMetrics] = field(default_factory=dict)
    invoices: dict[str, Invoice] = field(default_factory=dict)
    incidents: list[Any] = field(default_factory=list)  # procure.io.incidents.Incident
    incident_files: list[str] = field(default_factory=list)
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
            self.notes.append(f"{s.show()}: no samples from {tm._utc(start)} to {tm._utc(end)} ({(end - start) / 3600:.1f} h gap)")
        for key in found.increase:
            m = self.month(key)
            m.resets += sum(1 for r in found.resets if r.startswith(key))
            m.gaps += sum(1 for a, b in found.gaps if tm.month_of(b) == key)
        return found.increase


def summarize(series: list[Any], config: ActualsConfig, problems: list[Problem]) -> tuple[dict[str, MonthMetrics], list[str]]:
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
    return table.months, table.notes


def _check_labels(series: list[Any], names: MetricNames, problems: list[Problem]) -> None:
    """Only known labels: a series split by a label procure does not know would be summed as if it
    were another vendor's or another outcome's (actuals.metrics.labels adds others)."""
    from procure.io import telemetry as tm

    allowed = set(tm.KNOWN_LABELS) | {names.outcome_label} | set(names.labels)
    for s in series:
        unknown = sorted(k for k, _ in s.labels if k not in allowed)
        if unknown:
            problems.append(Problem(s.where, None, "", f"unknown label {', '.join(unknown)} on {s.show()}: allowed are {', '.join(sorted(allowed))} (add others to actuals.metrics.labels)"))


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
    slot = np.searchsorted(edges, t[1:], side="right") - 1
    seconds = np.bincount(slot, weights=np.where(ok, step, 0.0), minlength=len(edges) - 1)
    return [(tm.month_of(edges[i]), min(1.0, seconds[i] / (edges[i + 1] - edges[i]))) for i in range(len(edges) - 1)]


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
            problems.append(Problem(s.where, None, "", f"{s.show()}: unknown outcome {names.outcome_label}={outcome!r}: expected one of {', '.join(names.ok_outcomes + names.failed_outcomes)} (actuals.metrics.ok_outcomes, failed_outcomes)"))
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
    for labels, members in groups.items():
        bounds = []
        for s in members:
            le = tm.parse_le(s.label("le"))
            if le is None:
                problems.append(Problem(s.where, None, "", f"{s.show()}: a bucket needs a numeric le label"))
                continue
            bounds.append((le, s))
        if not any(le == float("inf") for le, _ in bounds):
            shown = members[0].show().replace(f'le="{members[0].label("le")}"', "").replace(",}", "}").replace("{,", "{")
            problems.append(Problem(members[0].where, None, "", f"histogram {shown} has no +Inf bucket: its count of observations is unknown"))
            continue
        for le, s in bounds:
            for key, value in tm.counter_increase(s.times, s.values, table.gap_s).increase.items():  # resets and gaps are stated once, by the counters
                per_month[key][le] += value
    for key, buckets in per_month.items():
        m = table.month(key)
        getattr(m, attr).update({q: tm.histogram_quantile(q, sorted(buckets.items())) for q in QUANTILES})


# --- files -----------------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "" if value is None else format(value, ".10g")


def metrics_csv(months: dict[str, MonthMetrics], sources: list[str]) -> str:
    from procure.textsafe import csv_writer

    buffer = io.StringIO()
    buffer.write("# serving metrics per calendar month (UTC), from: " + "; ".join(sources).replace("\n", " ") + "\n")
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(METRIC_COLUMNS)
    for key in sorted(months):
        m = months[key]
        writer.writerow([
            key, _fmt(m.output_tokens), _fmt(m.requests_ok), _fmt(m.requests_failed),
            *(_fmt(m.ttft.get(q)) for q in QUANTILES), *(_fmt(m.e2e.get(q)) for q in QUANTILES),
            _fmt(m.coverage), str(m.resets), str(m.gaps),
        ])
    return buffer.getvalue()


def invoices_csv(invoices: dict[str, Invoice]) -> str:
    from procure.textsafe import csv_writer

    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(INVOICE_COLUMNS)
    for key in sorted(invoices):
        i = invoices[key]
        writer.writerow([key, _fmt(i.gpu_hours), _fmt(i.output_tokens), _fmt(i.amount)])
    return buffer.getvalue()


def _within(value: float | None, display: str, line: int, column: str, problems: list[Problem], most: float | None = None) -> float | None:
    """A count, amount, time or share of delivered evidence: never negative (a share at most `most`)."""
    if value is None:
        return None
    if value < 0:
        problems.append(Problem(display, line, column, f"must be at least 0 (got {value:.15g})"))
        return None
    if most is not None and value > most:
        problems.append(Problem(display, line, column, f"must be at most {most:g} (got {value:.15g})"))
        return None
    return value


def read_metrics_csv(path: Path, display: str, problems: list[Problem]) -> dict[str, MonthMetrics]:
    import re

    from procure.io.tables import parse_number, read_csv_rows

    rows, _, found = read_csv_rows(path, display, METRIC_COLUMNS)
    problems.extend(found)
    out: dict[str, MonthMetrics] = {}

    def num(raw: str, line: int, column: str, most: float | None = None) -> float | None:
        return None if raw == "" else _within(parse_number(raw, display, line, column, problems, positive=False), display, line, column, problems, most)

    for line, row in rows:
        key = row["month"]
        if not re.fullmatch(MONTH_PATTERN, key):
            problems.append(Problem(display, line, "month", f"must be a month like 2026-11 (got {key!r})"))
            continue
        if key in out:
            problems.append(Problem(display, line, "month", f"{key} appears twice"))
            continue
        m = MonthMetrics(key, num(row["output_tokens"], line, "output_tokens"), num(row["requests_ok"], line, "requests_ok"), num(row["requests_failed"], line, "requests_failed"))
        m.ttft = {q: num(row[f"ttft_p{int(q * 100)}_s"], line, f"ttft_p{int(q * 100)}_s") for q in QUANTILES}
        m.e2e = {q: num(row[f"e2e_p{int(q * 100)}_s"], line, f"e2e_p{int(q * 100)}_s") for q in QUANTILES}
        for name, quantiles in (("ttft", m.ttft), ("e2e", m.e2e)):
            stated = [(q, v) for q, v in quantiles.items() if v is not None]
            for (q0, low), (q1, high) in zip(stated, stated[1:]):
                if high < low:
                    column = f"{name}_p{int(q1 * 100)}_s"
                    problems.append(Problem(display, line, column, f"{high:g} s is below {name}_p{int(q0 * 100)}_s ({low:g} s): a higher percentile is never faster"))
        m.coverage = num(row["coverage"], line, "coverage", most=1)
        m.resets = int(num(row["resets"], line, "resets") or 0)
        m.gaps = int(num(row["gaps"], line, "gaps") or 0)
        out[key] = m
    return out


def read_invoices(path: Path, display: str, problems: list[Problem]) -> dict[str, Invoice]:
    """An invoices CSV: month (2026-11), gpu_hours (billed), output_tokens (may be empty), amount."""
    import re

    from procure.io.tables import parse_number, read_csv_rows

    rows, _, found = read_csv_rows(path, display, INVOICE_COLUMNS)
    problems.extend(found)
    out: dict[str, Invoice] = {}
    for line, row in rows:
        key = row["month"]
        if not re.fullmatch(MONTH_PATTERN, key):
            problems.append(Problem(display, line, "month", f"must be a month like 2026-11 (got {key!r})"))
            continue
        if key in out:
            problems.append(Problem(display, line, "month", f"{key} is invoiced twice"))
            continue
        hours = _within(parse_number(row["gpu_hours"], display, line, "gpu_hours", problems, positive=False), display, line, "gpu_hours", problems)
        tokens = _within(parse_number(row["output_tokens"], display, line, "output_tokens", problems, positive=False), display, line, "output_tokens", problems) if row["output_tokens"] else None
        amount = _within(parse_number(row["amount"], display, line, "amount", problems, positive=False), display, line, "amount", problems)
        if hours is not None and amount is not None:
            out[key] = Invoice(key, hours, tokens, amount)
    return out


def load_actuals(root: Path, offer_ids: Iterable[str], problems: list[Problem], record: Any) -> dict[str, OfferActuals]:
    """Every offer folder of actuals/; `record(path, text)` hashes each file read as an input."""
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
            problems.append(Problem(display_dir, None, "", f"no offer with this id (known: {', '.join(sorted(known)) or 'none'}): name the folder by the signed offer's id"))
            continue
        found = OfferActuals(sub.name)
        for path in sorted(sub.iterdir()):
            display = f"{display_dir}/{path.name}"
            if path.name == "metrics.csv":
                found.metrics = read_metrics_csv(path, display, problems)
            elif path.name == "invoices.csv":
                found.invoices = read_invoices(path, display, problems)
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


# --- the import ------------------------------------------------------------------------------------


def detect_kind(path: Path) -> str:
    """metrics-text, metrics-range, incidents or invoices, from the file's name and first bytes."""
    from procure.io.yamlsafe import regular_file

    regular_file(Path(path), str(path), 500 * 1024 * 1024)
    with open(path, "rb") as handle:
        head = handle.read(4096).decode("utf-8", "replace").lstrip("\ufeff")
    suffix = Path(path).suffix.lower()
    first = next((line.strip() for line in head.splitlines() if line.strip() and not line.startswith("#")), "")
    if suffix == ".csv":
        names = [c.strip() for c in first.split(",")]
        # an invoice sheet with a column missing or out of order is still an invoice sheet: its own
        # reader then names the columns, instead of the incident reader naming columns it never had
        if names == list(INVOICE_COLUMNS) or {"month", "amount"} & set(names):
            return "invoices"
        return "incidents"
    if suffix == ".json":
        if '"resultType"' in head or ('"status"' in head and '"data"' in head):
            return "metrics-range"
        return "incidents"
    return "metrics-text"


def import_actuals(root: Path, offer_id: str, paths: list[Path], config: ActualsConfig) -> tuple[list[Path], list[str]]:
    """Read every file, check it, and write the offer's actuals folder all at once. Returns (written, notes)."""
    from procure.io import telemetry as tm
    from procure.io.files import own_input, write_files_atomic
    from procure.io.incidents import read_incidents
    from procure.io.yamlsafe import read_bytes

    problems: list[Problem] = []
    folder = Path(root) / ACTUALS / offer_id
    names = config.metrics
    wanted = {names.output_tokens, names.requests, names.ttft, names.e2e_latency}
    parts = []
    sources = []
    files: dict[str, str | bytes] = {}
    invoices: dict[str, Invoice] = {}
    notes: list[str] = []
    invoice_files: dict[str, str] = {}  # month -> the file of this import that invoices it
    for path in paths:
        display = str(path)
        own_input(path)
        try:
            kind = detect_kind(path)
            if kind == "metrics-range":
                parts += tm.read_query_range(path, display, wanted, problems)
                sources.append(Path(path).name)
            elif kind == "metrics-text":
                parts += tm.read_text_snapshot(path, display, wanted, problems)
                sources.append(Path(path).name)
            elif kind == "incidents":
                read_incidents(path, display)
                files[f"incidents{Path(path).suffix.lower()}"] = read_bytes(path, display, 500 * 1024 * 1024)
            else:
                read = read_invoices(path, display, problems)
                for key in sorted(set(read) & set(invoices)):
                    problems.append(Problem(display, None, "month", f"{key} is invoiced twice (also in {invoice_files[key]})"))
                invoice_files.update({key: display for key in read if key not in invoices})
                invoices.update(read)
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    if parts:
        series = tm.merge_series(parts, problems)
        if problems:
            raise InputError(problems)
        months, stated = summarize(series, config, problems)
        if problems:
            raise InputError(problems)
        if not months:
            raise InputError([Problem(", ".join(sources[:3]), None, "", f"no samples of {', '.join(sorted(wanted))} (the metric names are set in actuals.metrics)")])
        notes += stated
        existing: dict[str, MonthMetrics] = {}
        if (folder / "metrics.csv").exists():
            existing = read_metrics_csv(folder / "metrics.csv", str(folder / "metrics.csv"), problems)
            if problems:
                raise InputError(problems)
        for key in sorted(set(existing) & set(months)):
            notes.append(f"month {key}: replaced by this import")
        existing.update(months)
        files["metrics.csv"] = metrics_csv(existing, sources)
    if invoices:
        existing_inv: dict[str, Invoice] = {}
        if (folder / "invoices.csv").exists():
            existing_inv = read_invoices(folder / "invoices.csv", str(folder / "invoices.csv"), problems)
            if problems:
                raise InputError(problems)
        for key in sorted(set(existing_inv) & set(invoices)):
            if existing_inv[key] != invoices[key]:
                notes.append(f"invoice {key}: replaced by this import")
        existing_inv.update(invoices)
        files["invoices.csv"] = invoices_csv(existing_inv)
    written = write_files_atomic(folder, files)
    return written, notes
