"""Reading what `procure actuals import` is given: which kind of evidence each file holds (`detect_kind`), reading it
(`read_import`: serving metrics through procure/io/telemetry.py, summed per month by procure/io/metric_months.py;
incidents, invoices, FOCUS exports), and storing it with what is kept (`import_actuals`, through
procure/io/evidence_store.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.actuals import (
    FOCUS_CORRECTION,
    FOCUS_INVOICE_ID,
    INVOICE_COLUMNS,
    Invoice,
    MonthMetrics,
    _csv_header,
    check_invoice_month,
    check_month_key,
    is_correction,
    read_invoice_rows,
)
from procure.io.evidence_store import Incoming, _incident_name, incident_key, store_evidence
from procure.io.metric_months import summarize
from procure.model.inputs import ActualsConfig

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
    from procure.io.query_range import read_query_range

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
                    parts += read_query_range(path, display, wanted, problems, partial)
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
                _add_invoices(rows, display, invoice_at, incoming, problems)
        except InputError as exc:
            problems.extend(exc.problems)
    notes: list[str] = []
    if metric_files and not problems:
        incoming.metrics, notes = _summed(parts, metric_files, wanted, config, problems)
        notes += _partial_months(incoming, partial)
    return incoming, notes + focus_notes


def _partial_months(incoming: Incoming, partial: dict[str, list[str]]) -> list[str]:
    """A month whose Prometheus answer came with warnings may be incomplete: it is partial (not scored, and a clean
    answer of it replaces it), whatever share its samples seem to cover; one note each."""
    notes = []
    for key in sorted(k for k in partial if k in incoming.metrics):
        incoming.metrics[key].coverage = 0.0
        said = list(dict.fromkeys(partial[key]))
        notes.append(
            f"month {key}: partial, counted as covering 0% of the month: the Prometheus answer came with "
            + "; ".join(said[:3])
            + (f" and {len(said) - 3} more" if len(said) > 3 else "")
        )
    return notes


def _add_invoices(
    rows: dict[Any, Any],
    display: str,
    invoice_at: dict[tuple[str, str], str],
    incoming: Incoming,
    problems: list[Problem],
) -> None:
    """An import's invoices of one file into `incoming`, each month invoiced once across the import's files (a FOCUS
    export is the month's whole bill); `invoice_at` says where each was read."""
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
        if other is not None:  # a FOCUS export is the month's whole bill: never added to another invoice of it
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
            problems.append(Problem(display, line, "month", f"{key[0]} is invoiced twice (also in {invoice_at[key]})"))
            continue
        invoice_at[key] = f"{display}:{line}"
        incoming.invoices[key] = inv


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
