"""A cloud's billing export in FOCUS (FinOps Open Cost and Usage Specification), read into the month's invoice.

The columns and their rules are the specification's (github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec,
tag v1.2, `specification/columns/*.md`; 1.3 keeps these columns and adds a contract-commitment dataset,
which is not a cost and usage file): one row per charge, with

- `BilledCost` (what the invoice charges for the row), `EffectiveCost` (amortised: commitment purchases
  spread over the usage they cover);
- `ChargeCategory`: Usage, Purchase, Tax, Credit or Adjustment (`chargecategory.md`);
- `ChargePeriodStart`/`ChargePeriodEnd`, and `BillingPeriodStart` (the invoice's period): date-times in
  ISO 8601 UTC, `2026-11-01T00:00:00Z` (`specification/attributes/date_time_format.md`);
- `ConsumedQuantity` in `ConsumedUnit` (an hour unit gives GPU-hours: `Hour`, `Hours`, `GPU-Hours`);
- `InvoiceId` (1.2: null while a charge is on no issued or provisional invoice, `invoiceid.md`);
- `CommitmentDiscountId`/`CommitmentDiscountStatus` (Used, Unused) and `BillingCurrency`.

A null is an empty field or the word `null` (as the specification's own sample files write it).

Per billing month (the month of `BillingPeriodStart`, else of `ChargePeriodStart`), the invoice kept in
actuals/ID/invoices.csv (under one invoice id, FOCUS: the next export of the month replaces it) is: `amount` = the sum
of `BilledCost` over Usage, Purchase and Adjustment rows
(tax and credits kept apart: an offer's prices are before tax, and credits are what the vendor paid
back); `gpu_hours` = the sum of `ConsumedQuantity` of Usage rows in an hour unit; `output_tokens` empty.
The credits (minus the sum of `BilledCost` over Credit rows: a credit is billed negative) go to
actuals/ID/credits.csv. Effective cost, unused commitments, tax, the invoices' ids and charges not yet
invoiced are stated.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from procure.errors import InputError, Problem

CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")  # FOCUS 1.2 chargecategory.md
REQUIRED = ("BilledCost", "ChargeCategory", "ChargePeriodStart", "ChargePeriodEnd")
MAX_FOCUS_BYTES = 500 * 1024 * 1024
HOUR_UNIT = re.compile(r"(?:^|[\s-])hours?$", re.IGNORECASE)  # Hour, Hours, GPU-Hours, GPU Hour
CREDIT_COLUMNS = ("month", "credits", "invoices")


def looks_like_focus(header: list[str]) -> bool:
    """A CSV header naming FOCUS's cost and category columns."""
    return "BilledCost" in header and "ChargeCategory" in header


def looks_like_contract_commitments(header: list[str]) -> bool:
    """FOCUS 1.3's contract commitment dataset (ContractCommitmentId, ContractCommitmentCost, ...): the terms
    committed to, a file apart from the cost and usage export (FOCUS_Spec v1.3, the Contract Commitment
    dataset's columns)."""
    return "ContractCommitmentId" in header and "BilledCost" not in header


@dataclass
class FocusMonth:
    """One billing month of a FOCUS file."""

    amount: float = 0.0
    gpu_hours: float = 0.0
    hour_rows: int = 0
    credits: float = 0.0
    tax: float = 0.0
    effective: float = 0.0
    unused_commitment: float = 0.0
    invoices: set[str] = field(default_factory=set)
    uninvoiced: int = 0
    other_units: set[str] = field(default_factory=set)
    last_line: int = 0  # the line of the month's last charge


def _is_month(text: str) -> bool:
    try:
        return datetime.strptime(text, "%Y-%m").strftime("%Y-%m") == text
    except ValueError:
        return False


def _null(raw: str | None) -> bool:
    return raw is None or raw.strip() == "" or raw.strip().lower() == "null"


def _when(raw: str, display: str, line: int, column: str, problems: list[Problem]) -> datetime | None:
    """An ISO 8601 UTC date-time (FOCUS's Date/Time Format): 2026-11-01T00:00:00Z."""
    text = raw.strip()
    try:
        value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        value = None
    if value is None or value.utcoffset() is None or value.utcoffset().total_seconds() != 0:
        problems.append(
            Problem(display, line, column, f"must be a UTC date-time like 2026-11-01T00:00:00Z (got {text[:40]!r})")
        )
        return None
    return value.astimezone(UTC)


def _cost(
    row: dict[str, str], column: str, display: str, line: int, problems: list[Problem], required: bool
) -> float | None:
    from procure.io.tables import parse_number

    raw = row.get(column)
    if _null(raw):
        if required:
            problems.append(Problem(display, line, column, "required: a number (FOCUS does not allow null here)"))
        return None
    return parse_number(raw.strip(), display, line, column, problems, positive=False)


def _rows(path: Path, display: str, problems: list[Problem]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and the rows with the line each ends on (a quoted field may hold line breaks)."""
    from procure.io.yamlsafe import read_text_gz

    reader = csv.reader(io.StringIO(read_text_gz(path, display, MAX_FOCUS_BYTES), newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InputError(
            [Problem(display, None, "", f"no header: a FOCUS file has the columns {', '.join(REQUIRED)}")]
        ) from None
    except csv.Error as exc:
        raise InputError([Problem(display, 1, "", f"malformed CSV: {exc}")]) from None
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(
            [
                Problem(
                    display,
                    1,
                    "",
                    f"a FOCUS file needs the columns {', '.join(REQUIRED)}: missing {', '.join(missing)}",
                )
            ]
        )
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise InputError([Problem(display, 1, "", f"column {', '.join(twice)} appears twice")])
    rows = []
    try:
        for values in reader:
            if not any(v.strip() for v in values):
                continue  # a blank line, as the specification's samples have between rows
            if len(values) != len(header):
                problems.append(
                    Problem(display, reader.line_num, "", f"{len(values)} fields, the header has {len(header)}")
                )
                continue
            rows.append((reader.line_num, dict(zip(header, values))))
    except csv.Error as exc:
        raise InputError([Problem(display, reader.line_num, "", f"malformed CSV: {exc}")]) from None
    return header, rows


def _add_row(
    months: dict[str, FocusMonth], row: dict[str, str], display: str, line: int, problems: list[Problem]
) -> str | None:
    """One charge into its billing month; returns its currency (None if not stated)."""
    count = len(problems)
    category = row["ChargeCategory"].strip()
    if category not in CATEGORIES:
        problems.append(
            Problem(display, line, "ChargeCategory", f"must be one of {', '.join(CATEGORIES)} (got {category[:40]!r})")
        )
    billed = _cost(row, "BilledCost", display, line, problems, required=True)
    effective = _cost(row, "EffectiveCost", display, line, problems, required=False) if "EffectiveCost" in row else None
    start = _when(row["ChargePeriodStart"], display, line, "ChargePeriodStart", problems)
    end = _when(row["ChargePeriodEnd"], display, line, "ChargePeriodEnd", problems)
    if start and end and end <= start:
        problems.append(
            Problem(display, line, "ChargePeriodEnd", f"must be after ChargePeriodStart ({start:%Y-%m-%dT%H:%M:%SZ})")
        )
    billing = (
        None
        if _null(row.get("BillingPeriodStart"))
        else _when(row["BillingPeriodStart"], display, line, "BillingPeriodStart", problems)
    )
    quantity = None
    unit = "" if _null(row.get("ConsumedUnit")) else row["ConsumedUnit"].strip()
    if category == "Usage" and not _null(row.get("ConsumedQuantity")):
        quantity = _cost(row, "ConsumedQuantity", display, line, problems, required=False)
        if quantity is not None and quantity < 0:
            problems.append(Problem(display, line, "ConsumedQuantity", f"must be at least 0 (got {quantity:g})"))
        if quantity is not None and not unit:
            problems.append(
                Problem(
                    display, line, "ConsumedUnit", "required where ConsumedQuantity is stated: the unit of the quantity"
                )
            )
    if len(problems) > count or start is None or billed is None:
        return None
    when = billing or start
    m = months.setdefault(f"{when.year:04d}-{when.month:02d}", FocusMonth())
    m.last_line = line
    if category == "Credit":
        m.credits -= billed
    elif category == "Tax":
        m.tax += billed
    else:
        m.amount += billed
        m.effective += effective or 0.0  # the amortised cost of the same charges as the amount
    if not _null(row.get("CommitmentDiscountStatus")) and row["CommitmentDiscountStatus"].strip() == "Unused":
        m.unused_commitment += effective or 0.0
    if quantity is not None:
        if HOUR_UNIT.search(unit):
            m.gpu_hours += quantity
            m.hour_rows += 1
        else:
            m.other_units.add(unit[:40])
    if _null(row.get("InvoiceId")):
        m.uninvoiced += 1 if "InvoiceId" in row else 0
    else:
        m.invoices.add(row["InvoiceId"].strip()[:80])
    return None if _null(row.get("BillingCurrency")) else row["BillingCurrency"].strip()


def read_focus(
    path: Path, display: str, problems: list[Problem], currency: str | None = None
) -> tuple[dict[str, FocusMonth], list[str]]:
    """The billing months of a FOCUS cost and usage file, and the notes to state; `currency`: the
    offer's, which every stated BillingCurrency must be (an invoice is in the offer's currency)."""
    header, rows = _rows(path, display, problems)
    months: dict[str, FocusMonth] = {}
    currencies: dict[str, int] = {}
    for line, row in rows:
        billed_in = _add_row(months, row, display, line, problems)
        if billed_in is not None:
            currencies.setdefault(billed_in, line)
    if len(currencies) > 1:
        (first, _), (other, line) = sorted(currencies.items(), key=lambda kv: kv[1])[:2]
        problems.append(
            Problem(
                display,
                line,
                "BillingCurrency",
                f"{other[:8]!r}, but the file's first charge is billed in {first[:8]!r}: import one currency's charges "
                "at a time",
            )
        )
    if currency is not None and len(currencies) == 1 and currency not in currencies:
        ((stated, line),) = currencies.items()
        problems.append(
            Problem(
                display,
                line,
                "BillingCurrency",
                f"{stated[:8]!r}, but the offer is priced in {currency}: invoices are kept in the offer's currency",
            )
        )
    if not rows and not problems:
        problems.append(Problem(display, None, "", "holds no charges"))
    for key, m in sorted(months.items()):
        if m.hour_rows == 0:
            problems.append(
                Problem(
                    display,
                    None,
                    "ConsumedQuantity",
                    f"{key}: no Usage charge in hours (ConsumedUnit Hour): the GPU-hours billed are unknown",
                )
            )
    notes = [_note(display, key, m, next(iter(currencies), None)) for key, m in sorted(months.items())]
    return months, notes


def _note(display: str, key: str, m: FocusMonth, currency: str | None) -> str:
    parts = [
        f"billed {m.amount:,.2f}{' ' + currency if currency else ''} for {m.gpu_hours:,.6g} GPU-hours",
        f"effective cost {m.effective:,.2f}",
    ]
    if m.credits:
        parts.append(f"credits {m.credits:,.2f} (kept apart, credits.csv)")
    if m.tax:
        parts.append(f"tax {m.tax:,.2f} (not counted: prices are before tax)")
    if m.unused_commitment:
        parts.append(f"unused commitment {m.unused_commitment:,.2f}")
    if m.other_units:
        parts.append(f"usage in {', '.join(sorted(m.other_units))} not counted as GPU-hours")
    if m.invoices:
        parts.append(f"invoice {', '.join(sorted(m.invoices)[:5])}{' ...' if len(m.invoices) > 5 else ''}")
    if m.uninvoiced:
        parts.append(f"{m.uninvoiced} charge(s) on no invoice yet (InvoiceId null)")
    return f"{Path(display).name} {key}: " + "; ".join(parts)


def credits_csv(credits: dict[str, tuple[float, str]]) -> str:
    """actuals/ID/credits.csv: month, credits received (money back, in the billing currency), the invoices."""
    from procure.textsafe import csv_writer

    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\n")
    writer.writerow(CREDIT_COLUMNS)
    for key in sorted(credits):
        amount, invoices = credits[key]
        writer.writerow([key, format(amount, ".10g"), invoices])
    return buffer.getvalue()


def read_credits(path: Path, display: str, problems: list[Problem]) -> dict[str, tuple[float, str]]:
    """credits.csv as written by credits_csv: month -> (credits, invoices)."""
    from procure.io.tables import parse_number, read_csv_rows

    rows, _, found = read_csv_rows(path, display, CREDIT_COLUMNS)
    problems.extend(found)
    out: dict[str, tuple[float, str]] = {}
    for line, row in rows:
        if not _is_month(row["month"]) or row["month"] in out:
            problems.append(
                Problem(display, line, "month", f"must be a month like 2026-11, once (got {row['month']!r})")
            )
            continue
        value = parse_number(row["credits"], display, line, "credits", problems, positive=False)
        if value is not None:
            out[row["month"]] = (value, row["invoices"])
    return out


def month_credits(months: dict[str, FocusMonth]) -> dict[str, tuple[float, str]]:
    return {key: (round(m.credits, 10), " ".join(sorted(m.invoices))) for key, m in months.items() if m.credits}
