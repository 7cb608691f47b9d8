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

Evidence is appended and merged, never replaced (procure/io/evidence_store.py, under the workspace's evidence
lock); what `procure actuals import` is given is read by procure/io/actuals_import.py. What is written passes the
loader's own checks here (`check_month_key`, `check_metrics_month`, `check_invoice_month`: month ranges, and counts
plausible for the offer's own size) before anything is written.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem

ACTUALS = "actuals"
# The latency percentiles a month's metrics carry: time to first token and end to end, P50, P90 and P99, in seconds.
LATENCY_COLUMNS = tuple(f"{measure}_p{q}_s" for measure in ("ttft", "e2e") for q in (50, 90, 99))
METRIC_COLUMNS = (
    "month",
    "output_tokens",
    "requests_ok",
    "requests_failed",
    *LATENCY_COLUMNS,
    "coverage",
    "resets",
    "gaps",
)
BUSY_COLUMN = "busy_gpu_hours"  # an optional last column: written when some month has utilization telemetry
BUSY_GPUS_COLUMN = "busy_gpus"  # after it, optional: the GPUs the telemetry covered (its series) in the month
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
    from procure.io.tables import number

    return None if raw == "" else number(raw, display, line, column, problems, quoted=40)


def read_metrics_csv(
    path: Path, display: str, problems: list[Problem], size: float | None = None
) -> dict[str, MonthMetrics]:
    """metrics.csv as `metrics_csv` writes it; every row passes `check_metrics_month`."""
    from procure.io.tables import read_csv_rows

    columns = kept_columns(path, display)
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


def kept_columns(path: Path, display: str, invoices: bool = False) -> tuple[str, ...]:
    """The columns of a kept metrics.csv (METRIC_COLUMNS, with busy_gpu_hours, or it and busy_gpus, when the header
    ends with them) or invoices.csv (INVOICE_COLUMNS, with invoice_id when the header ends with it)."""
    from procure.io.yamlsafe import read_text

    base, tails = (
        (INVOICE_COLUMNS, ((INVOICE_ID,),))
        if invoices
        else (METRIC_COLUMNS, ((BUSY_COLUMN, BUSY_GPUS_COLUMN), (BUSY_COLUMN,)))
    )
    try:
        names = _csv_header(read_text(path, display))
    except InputError:
        return base  # read_csv_rows names the problem
    return base + next((tail for tail in tails if tuple(names[-len(tail) :]) == tail), ())


def read_invoice_rows(
    path: Path, display: str, problems: list[Problem], size: float | None = None
) -> dict[tuple[str, str], tuple[Invoice, int]]:
    """An invoices CSV, by (month, invoice id) with each row's line: month (2026-11), gpu_hours
    (billed), output_tokens (may be empty), amount, optionally invoice_id. The same month and id
    twice is an error; each row passes `check_invoice_month` (`size`: the offer's GPUs)."""
    from procure.io.tables import read_csv_rows

    rows, _, found = read_csv_rows(path, display, kept_columns(path, display, invoices=True))
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


# --- the import ------------------------------------------------------------------------------------


def _csv_header(text: str) -> list[str]:
    """The column names of a CSV's first row that is neither blank nor a '#' comment, read as the csv
    module reads them (quoted names, as FOCUS exports write every field, "BilledCost"); [] if none."""
    lines = (line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    try:
        return [name.strip() for name in next(csv.reader(lines), [])]
    except csv.Error:
        return []
