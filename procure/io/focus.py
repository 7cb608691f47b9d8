"""A cloud's billing export in FOCUS (FinOps Open Cost and Usage Specification), read into the month's invoice.

The columns and their rules are the specification's (github.com/FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec,
tag v1.2, `specification/columns/*.md`; 1.3 keeps these columns and adds a contract-commitment dataset,
which is not a cost and usage file): one row per charge, with

- `BilledCost` (what the invoice charges for the row), `EffectiveCost` (amortised: commitment purchases
  spread over the usage they cover);
- `ChargeCategory`: Usage, Purchase, Tax, Credit or Adjustment (`chargecategory.md`);
- `ChargePeriodStart`/`ChargePeriodEnd`, and `BillingPeriodStart` (the invoice's period): date-times in
  ISO 8601 UTC, `2026-11-01T00:00:00Z` (`specification/attributes/datetime_format.md`: "Date/time values
  MUST be in UTC"; the 'T' and the 'Z' are required). A value without a zone, `2024-09-01 00:00:00` as the
  FOCUS-Sample-Data files write it, is read as the UTC it must be, with a note; another offset is refused,
  once per column;
- `ChargeClass`: null, or `Correction` for a correction of an earlier, already invoiced billing period
  (`chargeclass.md`): applied to the month it corrects, the month of its `ChargePeriodStart`;
- `ConsumedQuantity` in `ConsumedUnit` (else `PricingQuantity` in `PricingUnit`: GPU-hours when the unit is
  GPU-hours, or a plain hour of a machine whose GPUs are known, KNOWN_MACHINES, or --gpu-filter names); any
  decimal (`consumedquantity.md`): a negative quantity reverses usage and nets within its month;
- `InvoiceId` (1.2: null while a charge is on no issued or provisional invoice, `invoiceid.md`);
- `CommitmentDiscountId`/`CommitmentDiscountStatus` (Used, Unused) and `BillingCurrency`.

A null is an empty field or the word `null` (as the specification's own sample files write it).

Per billing month (the month of `BillingPeriodStart`, else of `ChargePeriodStart`; a correction's: the month it
corrects; a month the file holds only corrections of is kept as a correction of that month's invoice already
imported, actuals.FOCUS_CORRECTION), the invoice kept in
actuals/ID/invoices.csv (under one invoice id, FOCUS: the next export of the month replaces it) is: `amount` = the sum
of `BilledCost` over the GPU capacity's Usage rows, Usage rows without a quantity, Purchase and Adjustment rows
(tax and credits kept apart: an offer's prices are before tax, and credits are what the vendor paid
back; other usage is other spend, stated); `gpu_hours` = the GPU-hours of the Usage rows, Unused commitments'
apart; `output_tokens` empty.
The credits (minus the sum of `BilledCost` over Credit rows: a credit is billed negative) go to
actuals/ID/credits.csv. Effective cost, unused commitments, tax, the invoices' ids and charges not yet
invoiced are stated.

The file is read as a stream, a row at a time (gzip decompressed as it is read), and summed per month as it
goes: memory stays bounded by the months, not the rows (benchmarks/bench_readers.py measures it).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from procure.errors import InputError, Problem
from procure.io.tables import gate_field

CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")  # FOCUS 1.2 chargecategory.md
REQUIRED = ("BilledCost", "ChargeCategory", "ChargePeriodStart", "ChargePeriodEnd")
MAX_FOCUS_BYTES = 500 * 1024 * 1024
# A unit that is itself GPU-hours (GPU-Hours, GPU Hour, GPU-Hrs), and a plain hour of whatever the row bills
# (Hour, Hours, Hrs, Azure's "1 Hour"): a plain hour is a GPU-hour only for a row naming a GPU machine below,
# or one named by --gpu-filter. LCU-Hours, vCPU-Hours, GB Hours, ACU-Hours, OCPU Hours are not GPU-hours.
GPU_HOUR_UNIT = re.compile(r"gpu[\s_-]*(?:hours?|hrs?)", re.IGNORECASE)
PLAIN_HOUR_UNIT = re.compile(r"(?:1\s+)?(?:hours?|hrs?|h)", re.IGNORECASE)

# GPUs in one billed hour of a machine, by the name its vendor gives it, for the machines whose hour is billed
# whole (an instance-hour of an 8-GPU machine is 8 GPU-hours). Sources, the vendors' own lists of their machine
# types (names cross-checked against public code that launches them, e.g. GoogleCloudPlatform/cluster-toolkit's
# A4X blueprints and oracle-quickstart's OCI HPC scripts, which name these exact shapes):
# - AWS "Amazon EC2 P6 instances" (aws.amazon.com/ec2/instance-types/p6/): p6-b200.48xlarge, 8 NVIDIA B200;
# - Google Cloud "Accelerator-optimized machine family" (cloud.google.com/compute/docs/accelerator-optimized-
#   machines): A4 a4-highgpu-8g, 8 B200; A4X a4x-highgpu-4g, 4 B200 GPUs of 2 GB200 superchips;
# - Microsoft Learn "ND GB200 v6 sizes series": Standard_ND128isr_NDR_GB200_v6, 4 B200 GPUs of 2 GB200
#   superchips (its meter names write the size with spaces, "ND128isr NDR GB200 v6");
# - Oracle "Compute Shapes" (docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm): BM.GPU.B200.8,
#   8 B200; BM.GPU.GB200.4, 4 B200 GPUs of 2 GB200 superchips;
# - Lambda's instance types (its Cloud API, GET /instance-types): gpu_{N}x_b200_sxm6, N B200.
# Oracle prices its GPU shapes per GPU-hour: an export stating the unit as GPU-hours counts as such, and a plain
# hour of a shape counts as the shape's GPUs. No "ND B200 v6" size is in Microsoft's lists as of this writing.
KNOWN_MACHINES: tuple[tuple[str, int], ...] = (
    ("p6-b200.48xlarge", 8),
    ("a4-highgpu-8g", 8),
    ("a4x-highgpu-4g", 4),
    ("ND128isr_NDR_GB200_v6", 4),
    ("ND128isr_GB200_v6", 4),
    ("BM.GPU.B200.8", 8),
    ("BM.GPU.GB200.4", 4),
)
LAMBDA_MACHINE = re.compile(r"gpu_(\d{1,2})x_b200", re.IGNORECASE)
# The columns that name what a row bills (FOCUS 1.2 `skuid.md`, `skupriceid.md`, `skumeter.md`,
# `skupricedetails.md`, `resourcetype.md`, `chargedescription.md`), and every provider column (`x_`, where AWS
# writes x_UsageType "BoxUsage:p6-b200.48xlarge"), searched for the machines above.
NAMING_COLUMNS = ("SkuId", "SkuPriceId", "SkuMeter", "SkuPriceDetails", "ResourceType", "ChargeDescription")
CREDIT_COLUMNS = ("month", "credits", "invoices")
# A FOCUS row is tens of columns: a line longer than this is not one (and would be held whole to be split).
MAX_LINE_CHARS = 1 << 20
# Past this many problems the file is not read on: the problems already say what is wrong with it.
MAX_ROW_PROBLEMS = 1_000
# A month's usage cost per GPU-hour above this multiple of the offer's price is not GPU-hours (the dearest
# B200 hour is a few times the cheapest; 20 leaves room for fees and a small month); without the offer's price,
# above MAX_HOUR_COST in the billing currency (a B200 hour costs some USD 2-15, about 400,000 in the currency of
# the most units to the dollar).
MAX_RATE_MULTIPLE = 20.0
MAX_HOUR_COST = 1_000_000.0
# Kept per month: invoice ids and the units of other spend (a hostile file could name a new one per row).
MAX_KEPT = 100


def _squash(text: str) -> str:
    """Lower case without separators, so that p6-b200.48xlarge, ND128isr NDR GB200 v6 and
    Standard_ND128isr_NDR_GB200_v6 are found however a column writes them."""
    return re.sub(r"[^a-z0-9.]", "", text.lower())


SQUASHED_MACHINES = tuple((_squash(name), name, gpus) for name, gpus in KNOWN_MACHINES)


@dataclass(frozen=True)
class GpuFilter:
    """--gpu-filter COLUMN=VALUE (rows whose COLUMN holds VALUE, any case, bill GPU capacity; any of them) and
    --gpus-per-unit N (the GPUs in one unit of those rows' hours)."""

    rules: tuple[tuple[str, str], ...] = ()
    per_unit: float = 1.0

    def matches(self, row: dict[str, str]) -> bool:
        return any(text.lower() in (row.get(column) or "").lower() for column, text in self.rules)


def machine_gpus(row: dict[str, str]) -> tuple[str, int] | None:
    """(the machine's name, its GPUs) when a naming column of the row names a machine of KNOWN_MACHINES."""
    columns = [c for c in row if c in NAMING_COLUMNS or c.startswith("x_")]
    for column in columns:
        raw = row[column] or ""
        found = LAMBDA_MACHINE.search(raw)
        if found and int(found[1]) > 0:
            return found[0].lower(), int(found[1])
        text = _squash(raw)
        for squashed, name, gpus in SQUASHED_MACHINES:
            if squashed in text:
                return name, gpus
    return None


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
    unused_gpu_hours: float = 0.0  # GPU-hours committed and not used (Unused rows' PricingQuantity)
    purchases: float = 0.0  # Purchase rows (commitments bought), in the amount
    invoices: set[str] = field(default_factory=set)
    uninvoiced: int = 0
    other_spend: float = 0.0  # BilledCost of usage that is not GPU capacity: not in the amount
    other_effective: float = 0.0
    other_units: dict[str, float] = field(default_factory=dict)  # its quantities, by unit
    plain_hour_line: int = 0  # the first row in plain hours naming no GPU machine
    machines: dict[str, int] = field(default_factory=dict)  # machines found, and their GPUs
    from_pricing: int = 0  # rows whose hours are PricingQuantity (ConsumedQuantity null)
    last_line: int = 0  # the line of the month's last charge
    regular_rows: int = 0  # charges that are not corrections of an earlier billing period
    # corrections (ChargeClass Correction) of this month billed later: billing month -> [rows, amount, hours]
    corrections: dict[str, list[float]] = field(default_factory=dict)
    reversed_hours: float = 0.0  # negative ConsumedQuantity (usage reversed), netted into gpu_hours
    more_invoices: int = 0  # invoice ids past the MAX_KEPT kept

    @property
    def corrections_only(self) -> bool:
        """The file holds only corrections of this month (billed later): they correct an invoice imported before."""
        return self.regular_rows == 0


def _is_month(text: str) -> bool:
    try:
        return datetime.strptime(text, "%Y-%m").strftime("%Y-%m") == text
    except ValueError:
        return False


def _null(raw: str | None) -> bool:
    return raw is None or raw.strip() == "" or raw.strip().lower() == "null"


# One problem per column for a date-time not in FOCUS's format, with its first line, an example and how many
# more rows write it so (an export writes every date the same way: one problem per cell would be thousands).
BadDates = dict[str, list]  # column -> [first line, first value, count]
ZONELESS = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?")


def _when(raw: str, line: int, column: str, bad: BadDates, zoneless: BadDates | None = None) -> datetime | None:
    """An ISO 8601 UTC date-time, 'YYYY-MM-DDTHH:mm:ssZ': FOCUS 1.2 `specification/attributes/datetime_format.md`
    (tag v1.2): "Date/time values MUST be in UTC", written with the 'T' and the 'Z'. An offset of +00:00 is the
    same instant and is taken. A value without a zone ('2024-09-01 00:00:00', as the FOCUS-Sample-Data 1.0
    files write it) can only be UTC in a FOCUS file: it is read so and counted in `zoneless` (column -> first
    line, first value, count), which read_focus states; any other offset is refused."""
    text = raw.strip()
    try:
        value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        value = None
    if value is not None and value.tzinfo is None and zoneless is not None and ZONELESS.fullmatch(text):
        found = zoneless.setdefault(column, [line, text[:40], 0])
        found[2] += 1
        return value.replace(tzinfo=UTC)
    if value is None or value.utcoffset() is None or value.utcoffset().total_seconds() != 0:
        found = bad.setdefault(column, [line, text[:40], 0])
        found[2] += 1
        return None
    return value.astimezone(UTC)


def _date_problems(display: str, bad: BadDates) -> list[Problem]:
    problems = []
    for column, (line, example, count) in bad.items():
        more = f"; {count - 1:,} more row(s) after it write the column so" if count > 1 else ""
        problems.append(
            Problem(
                display,
                line,
                column,
                f"must be a UTC date-time like 2026-11-01T00:00:00Z (got {example!r}){more}",
            )
        )
    return problems


def _zoneless_note(display: str, zoneless: BadDates) -> str:
    said = ", ".join(
        f"{column} ({count:,} row(s) from line {line}, {example!r})"
        for column, (line, example, count) in zoneless.items()
    )
    return (
        f"{Path(display).name}: date-times without a time zone read as UTC, as FOCUS requires every date-time to be "
        f"(FOCUS 1.2 specification/attributes/datetime_format.md): {said}"
    )


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


def _header(reader: Any, display: str) -> list[str]:
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InputError(
            [Problem(display, None, "", f"no header: a FOCUS file has the columns {', '.join(REQUIRED)}")]
        ) from None
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
    problems: list[Problem] = []
    for name in header:  # column names are shown in notes and problems
        gate_field(name, display, 1, "header", problems)
    if problems:
        raise InputError(problems[:5])
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise InputError([Problem(display, 1, "", f"column {', '.join(twice)} appears twice")])
    return header


def _lines(text: Any, display: str, where: list[int]) -> Iterator[str]:
    """The stream's lines, each at most MAX_LINE_CHARS (a longer one is refused, never held whole); `where`
    holds the number of the last line read, for a problem raised while decoding."""
    while line := text.readline(MAX_LINE_CHARS + 1):
        where[0] += 1
        if len(line) > MAX_LINE_CHARS and not line.endswith(("\n", "\r")):
            raise InputError(
                [Problem(display, where[0], "", f"a line longer than {MAX_LINE_CHARS:,} characters: not a FOCUS row")]
            )
        yield line


def _add_row(
    months: dict[str, FocusMonth],
    row: dict[str, str],
    display: str,
    line: int,
    problems: list[Problem],
    bad: BadDates,
    gpu_filter: GpuFilter | None = None,
    zoneless: BadDates | None = None,
) -> str | None:
    """One charge into its billing month; returns its currency (None if not stated)."""
    count, dates = len(problems), sum(c for _, _, c in bad.values())
    category = row["ChargeCategory"].strip()
    if category not in CATEGORIES:
        problems.append(
            Problem(display, line, "ChargeCategory", f"must be one of {', '.join(CATEGORIES)} (got {category[:40]!r})")
        )
    correction = False
    if not _null(row.get("ChargeClass")):
        if row["ChargeClass"].strip() != "Correction":  # FOCUS 1.2 chargeclass.md: null or "Correction"
            problems.append(
                Problem(display, line, "ChargeClass", f"must be Correction or null (got {row['ChargeClass'][:40]!r})")
            )
        correction = True
    for column in ("InvoiceId", "BillingCurrency", "ConsumedUnit", "PricingUnit"):  # kept or shown in notes
        if not _null(row.get(column)):
            gate_field(row[column].strip(), display, line, column, problems)
    billed = _cost(row, "BilledCost", display, line, problems, required=True)
    effective = _cost(row, "EffectiveCost", display, line, problems, required=False) if "EffectiveCost" in row else None
    start, billing = _periods(row, display, line, problems, bad, zoneless)
    quantity, unit, pricing = _quantity(row, display, line, problems) if category == "Usage" else (None, "", False)
    if len(problems) > count or sum(c for _, _, c in bad.values()) > dates or start is None or billed is None:
        return None
    billed_in = billing or start
    # a correction of an earlier billing period is applied to the period it corrects (chargeclass.md: "a
    # correction to a previously invoiced billing period"), known by its ChargePeriodStart
    when = start if correction else billed_in
    m = months.setdefault(f"{when.year:04d}-{when.month:02d}", FocusMonth())
    m.last_line = line
    if correction:
        fixed = m.corrections.setdefault(f"{billed_in.year:04d}-{billed_in.month:02d}", [0, 0.0, 0.0])
        fixed[0] += 1
    else:
        m.regular_rows += 1
    unused = not _null(row.get("CommitmentDiscountStatus")) and row["CommitmentDiscountStatus"].strip() == "Unused"
    gpus = _gpus_per_unit(m, row, unit, line, gpu_filter) if quantity is not None else None
    other = False
    if category == "Credit":
        m.credits -= billed
    elif category == "Tax":
        m.tax += billed
    elif other := quantity is not None and gpus is None:  # usage of something else than GPU capacity
        m.other_spend += billed
        m.other_effective += effective or 0.0
        kept_unit = unit[:40] if unit[:40] in m.other_units or len(m.other_units) < MAX_KEPT else "other units"
        m.other_units[kept_unit] = m.other_units.get(kept_unit, 0.0) + quantity
    else:
        m.amount += billed
        m.effective += effective or 0.0  # the amortised cost of the same charges as the amount
        m.purchases += billed if category == "Purchase" else 0.0
        if correction:
            m.corrections[f"{billed_in.year:04d}-{billed_in.month:02d}"][1] += billed
    if unused and not other:  # a commitment to GPU capacity, or to what no quantity says
        m.unused_commitment += effective or 0.0
    if quantity is not None and gpus is not None:
        m.from_pricing += 1 if pricing else 0
        _add_hours(m, quantity * gpus, unused, f"{billed_in.year:04d}-{billed_in.month:02d}" if correction else None)
    if _null(row.get("InvoiceId")):
        m.uninvoiced += 1 if "InvoiceId" in row else 0
    elif len(m.invoices) < MAX_KEPT:
        m.invoices.add(row["InvoiceId"].strip()[:80])
    elif row["InvoiceId"].strip()[:80] not in m.invoices:
        m.more_invoices += 1
    return None if _null(row.get("BillingCurrency")) else row["BillingCurrency"].strip()


def _periods(
    row: dict[str, str], display: str, line: int, problems: list[Problem], bad: BadDates, zoneless: BadDates | None
) -> tuple[datetime | None, datetime | None]:
    """The charge's start (its end after it) and the start of its billing period, when stated."""
    start = _when(row["ChargePeriodStart"], line, "ChargePeriodStart", bad, zoneless)
    end = _when(row["ChargePeriodEnd"], line, "ChargePeriodEnd", bad, zoneless)
    if start and end and end <= start:
        problems.append(
            Problem(display, line, "ChargePeriodEnd", f"must be after ChargePeriodStart ({start:%Y-%m-%dT%H:%M:%SZ})")
        )
    if _null(row.get("BillingPeriodStart")):
        return start, None
    return start, _when(row["BillingPeriodStart"], line, "BillingPeriodStart", bad, zoneless)


def _quantity(row: dict[str, str], display: str, line: int, problems: list[Problem]) -> tuple[float | None, str, bool]:
    """A usage row's quantity, its unit and whether it is the PricingQuantity. Any decimal (consumedquantity.md,
    "Number range: Any valid decimal value"): a negative quantity reverses usage, and nets within its month.
    ConsumedQuantity is null on an Unused commitment's row and may be on a correction: the PricingQuantity in
    PricingUnit then says what was billed."""
    for column, unit_column in (("ConsumedQuantity", "ConsumedUnit"), ("PricingQuantity", "PricingUnit")):
        if column in row and not _null(row.get(column)):
            quantity = _cost(row, column, display, line, problems, required=False)
            unit = "" if _null(row.get(unit_column)) else row[unit_column].strip()
            if quantity is not None and not unit:
                problems.append(
                    Problem(display, line, unit_column, f"required where {column} is stated: the unit of the quantity")
                )
            return quantity, unit, column == "PricingQuantity"
    return None, "", False


def _gpus_per_unit(
    m: FocusMonth, row: dict[str, str], unit: str, line: int, gpu_filter: GpuFilter | None
) -> float | None:
    """GPUs per unit of the row's quantity, when it bills GPU capacity: a GPU-hour is one; a plain hour is the
    filter's, else the machine's its SKU names (noted in the month), else unknown (its first line noted)."""
    if GPU_HOUR_UNIT.fullmatch(unit):
        return 1.0
    if PLAIN_HOUR_UNIT.fullmatch(unit):
        if gpu_filter is not None and gpu_filter.matches(row):
            return gpu_filter.per_unit
        if (machine := machine_gpus(row)) is not None:  # looked for only in a plain hour's row
            m.machines[machine[0]] = machine[1]
            return float(machine[1])
        if not m.plain_hour_line:
            m.plain_hour_line = line
    return None


def _add_hours(m: FocusMonth, hours: float, unused: bool, corrected: str | None) -> None:
    """A row's GPU-hours into its month: an unused commitment's apart; `corrected`, the month a correction corrects."""
    if unused:
        m.unused_gpu_hours += hours
        return
    m.gpu_hours += hours
    m.hour_rows += 1
    if hours < 0 and corrected is None:  # a correction's hours are stated with the correction
        m.reversed_hours -= hours
    if corrected is not None:
        m.corrections[corrected][2] += hours


def read_focus(
    path: Path,
    display: str,
    problems: list[Problem],
    currency: str | None = None,
    gpu_filter: GpuFilter | None = None,
    rate: float | None = None,
) -> tuple[dict[str, FocusMonth], list[str]]:
    """The billing months of a FOCUS cost and usage file, and the notes to state; `currency`: the
    offer's, which every stated BillingCurrency must be (an invoice is in the offer's currency);
    `gpu_filter`: the rows --gpu-filter names as GPU capacity; `rate`: the offer's price per GPU-hour (in
    its currency), against which a month's cost per GPU-hour is judged. Read a row at a time (open_text_gz)."""
    from procure.io.yamlsafe import open_text_gz

    months: dict[str, FocusMonth] = {}
    currencies: dict[str, int] = {}  # the first two stated, with their first line
    bad: BadDates = {}
    zoneless: BadDates = {}
    rows = 0
    where = [0]
    bad_line: int | None = 0
    with open_text_gz(path, display, MAX_FOCUS_BYTES) as text:
        reader = csv.reader(_lines(text, display, where))
        try:
            header = _header(reader, display)
            for column, _ in gpu_filter.rules if gpu_filter else ():
                if column not in header:
                    problems.append(
                        Problem(
                            display,
                            1,
                            "",
                            f"--gpu-filter names the column {column[:60]!r}, which the file does not have (its "
                            f"columns: {', '.join(h[:40] for h in header[:12])}{' ...' if len(header) > 12 else ''})",
                        )
                    )
            if problems:
                return {}, []
            for values in reader:
                if not any(v.strip() for v in values):
                    continue  # a blank line, as the specification's samples have between rows
                if len(values) != len(header):
                    problems.append(
                        Problem(display, reader.line_num, "", f"{len(values)} fields, the header has {len(header)}")
                    )
                else:
                    rows += 1
                    row = dict(zip(header, values))
                    billed_in = _add_row(months, row, display, reader.line_num, problems, bad, gpu_filter, zoneless)
                    if billed_in is not None and (billed_in in currencies or len(currencies) < 2):
                        currencies.setdefault(billed_in, reader.line_num)
                if len(problems) >= MAX_ROW_PROBLEMS:
                    problems.append(
                        Problem(display, reader.line_num, "", f"not read further: {len(problems):,} problems so far")
                    )
                    break
        except csv.Error as exc:
            raise InputError([Problem(display, reader.line_num or None, "", f"malformed CSV: {exc}")]) from None
        except UnicodeDecodeError:
            bad_line = None
    if bad_line is None:  # decoded a block ahead of the rows: the byte's line is found by reading the bytes again
        from procure.io.yamlsafe import utf8_error_line

        raise InputError(
            [Problem(display, utf8_error_line(path, display, MAX_FOCUS_BYTES), "", "not valid UTF-8 text")]
        )
    problems.extend(_date_problems(display, bad))
    problems.extend(_currency_problems(display, currencies, currency))
    if not rows and not problems:
        problems.append(Problem(display, None, "", "holds no charges"))
    _check_months(months, rate, display, problems)
    extra = [h for h in header if h.startswith("x_")]
    notes = [_zoneless_note(display, zoneless)] if zoneless else []
    notes += [_note(display, key, m, next(iter(currencies), None)) for key, m in sorted(months.items())]
    if extra:
        notes.append(
            f"{Path(display).name}: provider columns {', '.join(x[:40] for x in extra[:8])}"
            f"{' ...' if len(extra) > 8 else ''} read only to find GPU machines' names"
        )
    return months, notes


def _currency_problems(display: str, currencies: dict[str, int], currency: str | None) -> list[Problem]:
    """One currency a file, the offer's: `currencies` holds the first two stated, each with its first line."""
    problems: list[Problem] = []
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
    return problems


def _check_months(months: dict[str, FocusMonth], rate: float | None, display: str, problems: list[Problem]) -> None:
    """Each month read (but one of corrections only) nets to hours of at least 0, at a plausible cost per GPU-hour,
    and has GPU-hours."""
    for key, m in sorted(months.items()):
        if m.corrections_only:
            continue  # corrects an invoice imported before (actuals_import._focus_rows); its hours may net either way
        if m.gpu_hours < 0:
            problems.append(
                Problem(
                    display,
                    m.last_line,
                    "ConsumedQuantity",
                    f"{key}: the month's hours net to {m.gpu_hours:,.6g}: more usage reversed than used",
                )
            )
        _check_hour_cost(key, m, rate, display, problems)
        if m.hour_rows == 0:
            problems.append(
                Problem(
                    display,
                    m.plain_hour_line or m.last_line,
                    "ConsumedUnit",
                    f"{key}: no GPU-hours: no Usage row is in GPU-hours or names a GPU machine procure knows "
                    f"({', '.join(n for n, _ in KNOWN_MACHINES)}, Lambda's gpu_Nx_b200)"
                    + ("; this row is in plain hours of something unnamed" if m.plain_hour_line else "")
                    + ": name the GPU rows with --gpu-filter COLUMN=VALUE, their GPUs per unit with --gpus-per-unit N",
                )
            )


def _check_hour_cost(key: str, m: FocusMonth, rate: float | None, display: str, problems: list[Problem]) -> None:
    """A month whose GPU capacity bills money for no GPU-hours, or for so few that each costs more than
    MAX_RATE_MULTIPLE times the offer's price (MAX_HOUR_COST without one), is not a bill of GPU-hours: refused
    with the figure. The cost set against the hours is the usage's: commitment purchases (bought ahead, for
    months to come) are left out, and the hours committed and not used are counted with the used."""
    if m.hour_rows == 0:
        return  # no GPU-hour row at all: named by the caller
    usage = m.amount - m.purchases
    hours = m.gpu_hours + m.unused_gpu_hours
    if usage <= 0:
        return
    if hours <= 0:
        problems.append(
            Problem(
                display,
                m.last_line,
                "ConsumedQuantity",
                f"{key}: {usage:,.2f} billed for GPU capacity of {m.gpu_hours:,.6g} GPU-hours: a month's GPU capacity "
                "is billed by the hour (a quantity of 0, or a unit other than the one billed)",
            )
        )
        return
    most, why = (
        (rate * MAX_RATE_MULTIPLE, f"{MAX_RATE_MULTIPLE:g} times the offer's {rate:,.4g} per GPU-hour")
        if rate
        else (MAX_HOUR_COST, "no GPU-hour costs more")
    )
    if usage / hours > most:
        problems.append(
            Problem(
                display,
                m.last_line,
                "ConsumedQuantity",
                f"{key}: {usage:,.2f} for {hours:,.6g} GPU-hours is {usage / hours:,.6g} per GPU-hour, over "
                f"{most:,.6g} ({why}): the hours are not GPU-hours (an instance's hours count its GPUs: "
                "--gpus-per-unit) or the quantity is not in hours",
            )
        )


def _note(display: str, key: str, m: FocusMonth, currency: str | None) -> str:
    parts = [
        (
            f"only corrections, billed later, of the month's invoice imported before: {m.amount:+,.2f}"
            f"{' ' + currency if currency else ''} and {m.gpu_hours:+,.6g} GPU-hours added to it"
            if m.corrections_only
            else f"billed {m.amount:,.2f}{' ' + currency if currency else ''} for {m.gpu_hours:,.6g} GPU-hours"
        ),
        f"effective cost {m.effective:,.2f}",
    ]
    if m.machines:
        parts.append(
            "GPU-hours from the hours of " + ", ".join(f"{n} ({g} GPUs)" for n, g in sorted(m.machines.items()))
        )
    if m.from_pricing:
        parts.append(f"{m.from_pricing} row(s) without ConsumedQuantity counted by PricingQuantity")
    if m.purchases:
        parts.append(f"commitment purchases {m.purchases:,.2f} (in the amount)")
    if m.credits and m.corrections_only:
        parts.append(f"credit corrections {m.credits:+,.2f} (not in credits.csv: import the month's export again)")
    elif m.credits:
        parts.append(f"credits {m.credits:,.2f} (kept apart, credits.csv)")
    if m.tax:
        parts.append(f"tax {m.tax:,.2f} (not counted: prices are before tax)")
    if m.unused_commitment or m.unused_gpu_hours:
        parts.append(
            f"unused commitment {m.unused_commitment:,.2f}"
            + (f" ({m.unused_gpu_hours:,.6g} GPU-hours committed, not used)" if m.unused_gpu_hours else "")
        )
    if m.reversed_hours:
        parts.append(f"{m.reversed_hours:,.6g} GPU-hours reversed (negative ConsumedQuantity), netted")
    for billed_in, (rows, amount, hours) in sorted(m.corrections.items()):
        parts.append(
            f"{rows:g} correction(s) billed in {billed_in} applied to {key} (ChargeClass Correction): "
            f"{amount:+,.2f}, {hours:+,.6g} GPU-hours"
        )
    if m.other_units:
        units = ", ".join(f"{q:,.6g} {u}" for u, q in sorted(m.other_units.items())[:6])
        parts.append(
            f"other spend {m.other_spend:,.2f} (effective {m.other_effective:,.2f}; not GPU capacity, not in the "
            f"amount: {units}{' ...' if len(m.other_units) > 6 else ''})"
        )
    if m.invoices:
        parts.append(f"invoice {', '.join(sorted(m.invoices)[:5])}{' ...' if len(m.invoices) > 5 else ''}")
    if m.more_invoices:
        parts.append(f"{m.more_invoices:,} more invoice id(s), not kept")
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
    # a month of corrections only would replace the month's credits with its corrections': left out (noted)
    return {
        key: (round(m.credits, 10), " ".join(sorted(m.invoices)))
        for key, m in months.items()
        if m.credits and not m.corrections_only
    }
