"""RFP spreadsheets (CSV or XLSX) to offer files: one row per offer, one column per field.

Columns are named by the dotted field paths of the Offer model (`pricing.gpu_hour`,
`service.sla.availability`, `responsibilities.monitoring`, ...); fees are column groups
`fees.<name>.<kind>`. Each cell is converted by its column's type (a number column takes a numeric
cell or numeric text, a true/false column takes true/false/yes/no, a date column an ISO date), and
every row is then validated like an offer file: the Offer model, then the rules that span fields
(`workspace_checks.check_offer`). Problems carry the file, the spreadsheet row (the header is row 1) and the
column, all rows at once; nothing is written unless every row is good and no file would be
overwritten without `force`.

Spreadsheets come from outside the organisation: formulas are refused, never evaluated (a vendor's
cached result could say anything), and the XLSX reader (openpyxl) is imported only here.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from procure.errors import InputError, Problem
from procure.io.cells import (
    ANSWER,
    BOOL,
    COMMITS,
    CONDITIONS,
    CREDITS,
    DATE,
    EVIDENCE,
    EXPECTS,
    FEES,
    INT,
    INTS,
    LIST,
    NUMBER,
    POINTS,
    SCHEDULE,
    SIGNED,
    TEXT,
    CellError,
    convert,
)
from procure.io.files import write_atomic, write_files_atomic
from procure.io.sheets import Formula, Sheet, _letters, _openpyxl_missing, read_sheet
from procure.io.validation import validation_problems
from procure.io.workspace import IndexLevel
from procure.io.workspace_checks import check_offer, responsibility_problems
from procure.io.yamlsafe import Document, LineMap, load_yaml
from procure.model.inputs import OPERATING_JOBS, Offer
from procure.model.kinds import KINDS
from procure.textsafe import csv_writer

FEE_KINDS: tuple[str, ...] = ("once", "monthly", "gpu_hour", "per_tb", "tb_per_month")


def _kind_columns() -> list[tuple[str, str]]:
    """Each offer kind's block (procure/model/kinds/), a column per field: pricing.<kind>.<field>."""
    return [
        (f"pricing.{kind.field}.{name}", INT if info.annotation is int else NUMBER)
        for kind in KINDS
        if kind.block is not None
        for name, info in kind.block.model_fields.items()
    ]


# Every column, in the field order of the example offers (offers/northwind-b200-mc.yaml): the order
# of the template's header and of the keys in the YAML written.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", TEXT),
    ("vendor", TEXT),
    ("received", DATE),
    ("valid_until", DATE),
    ("region", TEXT),
    ("gpu", TEXT),
    ("gpus", INT),
    ("max_gpus", INT),
    ("term_months", INT),
    ("delivery", DATE),
    ("pricing.currency", TEXT),
    ("pricing.gpu_hour", NUMBER),
    ("pricing.discount", NUMBER),
    ("pricing.prepay_fraction", NUMBER),
    ("pricing.software_gpu_hour", NUMBER),
    (FEES, FEES),
    *_kind_columns(),
    ("pricing.burst.gpu_hour", NUMBER),
    ("pricing.burst.max_gpus", INT),
    ("pricing.commit_options", COMMITS),
    ("pricing.billed_per", TEXT),
    ("service.kind", TEXT),
    ("service.orchestration", TEXT),
    ("service.sla.availability", NUMBER),
    ("service.sla.node_replacement_hours", NUMBER),
    ("service.sla.automatic_credits", BOOL),
    ("service.attestations", LIST),
    ("service.tenant_isolation", BOOL),
    ("service.isolated_monitoring", BOOL),
    ("service.health_checks.active", TEXT),
    ("service.health_checks.passive", BOOL),
    ("service.node_gpus", INT),
    ("service.preemptible", BOOL),
    ("service.interruptions_per_month", NUMBER),
    ("service.restart_minutes", NUMBER),
    ("service.rate_limits.requests_per_minute", NUMBER),
    ("service.rate_limits.output_tokens_per_minute", NUMBER),
    *((f"responsibilities.{job}", TEXT) for job in OPERATING_JOBS),
    ("performance.stack", TEXT),
    ("performance.reference", TEXT),
    ("performance.points", POINTS),
    ("performance.points_source", TEXT),
    ("performance.quality_pass_rate", NUMBER),
    ("performance.interactivity", NUMBER),
    ("performance.ttft_s", NUMBER),
    ("contract.escalator", NUMBER),
    ("contract.signed", SIGNED),
    ("conditions", CONDITIONS),
    ("contract.escalator_schedule", SCHEDULE),
    ("contract.renewal_price", TEXT),
    ("contract.ramp.gpus_by_month", INTS),
    ("contract.late_delivery.per_week", NUMBER),
    ("contract.late_delivery.cap", NUMBER),
    ("contract.termination.notice_months", INT),
    ("contract.termination.fee", NUMBER),
    ("contract.exit.offboarding", NUMBER),
    ("contract.exit.egress_tb", NUMBER),
    ("contract.exit.egress_per_tb", NUMBER),
    ("contract.sla_credits.rate_per_point", NUMBER),
    ("contract.sla_credits.tiers", CREDITS),
    ("contract.sla_credits.cap", NUMBER),
    ("contract.sla_credits.automatic", BOOL),
    ("contract.sla_credits.claim_window_days", INT),
    ("contract.sla_credits.claim_window_from", TEXT),
    ("contract.sla_credits.degraded_counts", BOOL),
    ("contract.minimum_monthly", NUMBER),
    ("operator.published_tier", TEXT),
    ("operator.published_edition", TEXT),
    (EVIDENCE, EVIDENCE),
    ("operator.status_history.file", TEXT),
    ("operator.status_history.components", LIST),
    ("operator.status_history.days", INT),
    ("operator.status_history.impacts", LIST),
    ("notes", TEXT),
)
COLUMN_KINDS: dict[str, str] = {name: kind for name, kind in COLUMNS if kind not in (FEES, EVIDENCE)}

CHOICES = {
    "operator.status_history.file": "a Statuspage incidents.json or an incidents CSV, relative to the workspace",
    "operator.status_history.impacts": "e.g. major, critical (the impacts counted as down time)",
    "service.attestations": "e.g. soc2_type2, iso27001",
}

# The template's example: a managed cluster with all four fee kinds.
EXAMPLE_FEES: tuple[tuple[str, dict[str, float]], ...] = (
    ("onboarding", {"once": 40000}),
    ("storage", {"monthly": 9000}),
    ("support", {"gpu_hour": 0.04}),
    ("egress", {"per_tb": 20, "tb_per_month": 40}),
)
EXAMPLE_ROW: dict[str, Any] = {
    "id": "example-b200-mc",
    "vendor": "Example Compute",
    "received": date(2026, 11, 2),
    "valid_until": date(2027, 6, 30),
    "region": "us-east",
    "gpu": "B200",
    "gpus": 512,
    "max_gpus": 1024,
    "term_months": 24,
    "delivery": date(2027, 1, 15),
    "pricing.currency": "USD",
    "pricing.gpu_hour": 3.95,
    "pricing.discount": 0,
    "pricing.prepay_fraction": 0.25,
    "pricing.software_gpu_hour": 0,
    "service.kind": "managed_cluster",
    "service.orchestration": "slurm",
    "service.sla.availability": 0.995,
    "service.sla.node_replacement_hours": 24,
    "service.sla.automatic_credits": False,
    "service.attestations": "soc2_type2, iso27001",
    "service.tenant_isolation": True,
    "service.isolated_monitoring": True,
    "service.health_checks.active": "weekly",
    "service.health_checks.passive": True,
    **{f"responsibilities.{job}": "provider" for job in OPERATING_JOBS},
    "responsibilities.incident_response": "shared",
    "responsibilities.serving_stack": "customer",
    "responsibilities.release_validation": "customer",
    "responsibilities.capacity_planning": "customer",
    "performance.stack": "dynamo-sglang",
    "performance.points": "25:640; 50:450; 100:215; 150:90",
    "performance.points_source": "measured",
    "performance.quality_pass_rate": 1,
    "contract.escalator": 0.03,
    "contract.exit.offboarding": 15000,
    "contract.exit.egress_tb": 200,
    "contract.exit.egress_per_tb": 20,
    "contract.sla_credits.rate_per_point": 0.1,
    "contract.sla_credits.cap": 0.3,
    # Nebius: claims within 14 days of the month's end (public SLA terms, 2026)
    "contract.sla_credits.claim_window_days": 14,
    "pricing.commit_options": "1024:36:3.60",
    "service.node_gpus": 8,
    "operator.published_tier": "gold",
    "operator.evidence.reliability.node_replacement_hours": 24,
    "operator.evidence.monitoring.tenant_isolated": True,
    "notes": "Example row: replace it with your offer, one row per offer.",
}
# The template's example checklist columns (any operator.evidence.<category>.<criterion> is read).
EXAMPLE_EVIDENCE: tuple[str, ...] = (
    "operator.evidence.reliability.node_replacement_hours",
    "operator.evidence.monitoring.tenant_isolated",
)


# --- reading the sheet ----------------------------------------------------------------------------


# --- the header -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    index: int
    name: str
    kind: str
    fee: tuple[str, str] | None = None  # (fee name, fee kind) for fee columns
    evidence: tuple[str, str] | None = None  # (category, criterion) for checklist columns


def parse_header(sheet: Sheet, problems: list[Problem]) -> list[Column]:
    columns: list[Column] = []
    seen: dict[str, int] = {}
    width = max([len(sheet.header), *(len(cells) for _, cells in sheet.rows)])
    header = list(sheet.header) + [None] * (width - len(sheet.header))
    for index, raw in enumerate(header):
        if raw is None:
            if any(index < len(cells) and cells[index] is not None for _, cells in sheet.rows):
                problems.append(
                    Problem(sheet.display, 1, "", f"column {_letters(index)} has values but no name in the header row")
                )
            continue
        if isinstance(raw, Formula):
            problems.append(
                Problem(
                    sheet.display,
                    1,
                    "",
                    f"column {_letters(index)}: the header is a formula ({raw.text!r}); type the field path",
                )
            )
            continue
        name = str(raw).strip()
        if name in seen:
            problems.append(
                Problem(
                    sheet.display, 1, name, f"column given twice (columns {_letters(seen[name])} and {_letters(index)})"
                )
            )
            continue
        seen[name] = index
        found = _column(index, name)
        if isinstance(found, Column):
            columns.append(found)
        else:
            problems.append(Problem(sheet.display, 1, name, found))
    return columns


def _column(index: int, name: str) -> Column | str:
    """The column a header's field path names, or why it names none."""
    if name in COLUMN_KINDS:
        return Column(index, name, COLUMN_KINDS[name])
    if name.startswith("fees."):
        fee_name, _, kind = name[len("fees.") :].rpartition(".")
        if fee_name and kind in FEE_KINDS:
            return Column(index, name, NUMBER, (fee_name, kind))
        return f"unknown column: a fee column is fees.<name>.<kind>, the kind one of {', '.join(FEE_KINDS)}"
    if name.startswith("operator.evidence."):
        category, _, criterion = name[len("operator.evidence.") :].partition(".")
        if category and criterion and "." not in criterion:
            return Column(index, name, ANSWER, evidence=(category, criterion))
        return "unknown column: a checklist column is operator.evidence.<category>.<criterion>"
    if name.startswith("responsibilities."):
        return f"unknown column: not an operating job (expected one of: {', '.join(OPERATING_JOBS)})"
    return (
        "unknown column (the header names field paths such as pricing.gpu_hour; `procure import --template "
        "rfp.xlsx` writes a sheet with every column)"
    )


# --- cells to values ------------------------------------------------------------------------------


# --- rows to offers -------------------------------------------------------------------------------


@dataclass
class RowOffer:
    row: int
    data: dict[str, Any]
    offer: Offer


def _row_data(
    row: int, cells: list[Any], columns: list[Column], display: str, problems: list[Problem]
) -> tuple[dict[str, Any], list[str], set[str]]:
    """The offer's fields in the example files' order, the fee names in order, and the columns whose
    cells could not be read."""
    values: dict[str, Any] = {}
    fees: dict[str, dict[str, Any]] = {}
    evidence: dict[str, dict[str, Any]] = {}
    failed: set[str] = set()
    for column in columns:
        raw = cells[column.index] if column.index < len(cells) else None
        if raw is None:
            continue
        try:
            value = convert(column.kind, raw)
        except CellError as exc:
            problems.append(Problem(display, row, column.name, str(exc)))
            failed.add(column.name)
            if column.fee is not None:  # the fee, and (for the missing-parent check) its place in pricing
                failed.update((f"fees.{column.fee[0]}", "pricing.fees"))
            continue
        if column.fee is not None:
            fees.setdefault(column.fee[0], {})[column.fee[1]] = value
        elif column.evidence is not None:
            evidence.setdefault(column.evidence[0], {})[column.evidence[1]] = value
        else:
            values[column.name] = value

    data: dict[str, Any] = {}
    for name, kind in COLUMNS:
        if kind == FEES:
            if fees:
                data.setdefault("pricing", {})["fees"] = [
                    {"name": fee_name, **{k: kinds[k] for k in FEE_KINDS if k in kinds}}
                    for fee_name, kinds in fees.items()
                ]
            continue
        if kind == EVIDENCE:
            if evidence:
                data.setdefault("operator", {})["evidence"] = evidence
            continue
        if name not in values:
            continue
        *parents, leaf = name.split(".")
        target = data
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = values[name]
    return data, list(fees), failed


_FEE_PATH = re.compile(r"^pricing\.fees\[(\d+)\]")
# Parents whose problem is about one column: a missing SLA is a missing availability.
_PARENT_COLUMN = {"service.sla": "service.sla.availability"}


def _column_of(field: str, fee_names: list[str]) -> str:
    """A model field path as the spreadsheet column: pricing.fees[1].once -> fees.storage.once,
    performance.points[0][1] -> performance.points."""
    found = _FEE_PATH.match(field)
    if found and int(found.group(1)) < len(fee_names):
        field = f"fees.{fee_names[int(found.group(1))]}" + field[found.end() :]
    field = re.sub(r"\[\d+\].*$", "", field)
    return _PARENT_COLUMN.get(field, field)


_TUPLE_TAG = re.compile(r"^tuple\[(.*)\]$")


def _matching_branches(exc: ValidationError, data: dict[str, Any]) -> ValidationError:
    """Pydantic reports a value that fails a union of tuples (a point is [x, y] or [x, y, ttft])
    against every member: keep the errors of the member whose length the value has."""
    kept = []
    for err in exc.errors(include_url=False):
        value: Any = data
        matches = True
        for part in err["loc"]:
            tag = _TUPLE_TAG.match(part) if isinstance(part, str) else None
            if tag is not None:
                if isinstance(value, (list, tuple)) and len(value) != tag.group(1).count(",") + 1:
                    matches = False
                    break
                continue
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                break
        if matches:
            kept.append(err)
    if not kept or len(kept) == len(exc.errors()):
        return exc
    try:
        return ValidationError.from_exception_data(exc.title, kept)  # type: ignore[arg-type]
    except (TypeError, KeyError, ValueError):
        return exc


# The importer does not see the target workspace: curve names and the index are checked when the
# workspace loads, so these stand-ins switch off only those two checks of check_offer.
_ANY_INDEX = [IndexLevel(date.min, 1.0)]


def _validate_row(
    row: int, data: dict[str, Any], fee_names: list[str], failed: set[str], display: str
) -> tuple[Offer | None, list[Problem]]:
    doc = Document(data, LineMap({(): row}), display)
    try:
        offer = Offer.model_validate(data)
    except ValidationError as exc:
        found = validation_problems(_matching_branches(exc, data), doc) + responsibility_problems(doc)
        offer = None
    else:
        if failed:  # a cell that could not be read is already reported; the cross-field rules would only echo it
            return None, []
        curves = {offer.performance.reference} if offer.performance.reference else set()
        found = check_offer(offer, doc, None, curves, _ANY_INDEX)
    problems = []
    for problem in found:
        column = _column_of(problem.field, fee_names)
        # A field (or a parent of one) left out because its cell was unreadable: the cell's problem says it.
        if column in failed or any(column.startswith(f + ".") or f.startswith(column + ".") for f in failed):
            continue
        problems.append(Problem(display, row, column, problem.message))
    return offer, problems


def read_offers(path: Path) -> list[RowOffer]:
    """Every offer of an RFP sheet, validated; InputError lists every problem of every row."""
    sheet = read_sheet(path)
    problems: list[Problem] = []
    columns = parse_header(sheet, problems)
    offers: list[RowOffer] = []
    ids: dict[str, int] = {}
    for row, cells in sheet.rows:
        if all(cell is None for cell in cells):
            continue
        data, fee_names, failed = _row_data(row, cells, columns, sheet.display, problems)
        offer, found = _validate_row(row, data, fee_names, failed, sheet.display)
        problems.extend(found)
        if offer is None:
            continue
        key = offer.id.lower()  # file names: distinct ids must differ beyond letter case
        if key in ids:
            problems.append(
                Problem(
                    sheet.display,
                    row,
                    "id",
                    f"duplicate offer id '{offer.id}' (also on row {ids[key]}; ids name the files, letter case aside)",
                )
            )
            continue
        ids[key] = row
        offers.append(RowOffer(row, data, offer))
    if not offers and not problems:
        problems.append(Problem(sheet.display, None, "", "no offers: expected one row per offer under the header"))
    if problems:
        raise InputError(sorted(set(problems), key=lambda p: (p.line or 0, p.field, p.message)))
    return offers


# --- writing YAML ---------------------------------------------------------------------------------


class _FlowList(list):
    pass


class _FlowDict(dict):
    pass


class _Dumper(yaml.SafeDumper):
    """The example files' layout: block mappings, indented lists, short leaves in flow style."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(_FlowList, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(_FlowDict, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))
_Dumper.add_representer(str, _represent_str)

_FLOW_PATHS = {
    *(("pricing", kind.field) for kind in KINDS if kind.template_flow),
    ("service", "sla"),
    ("service", "attestations"),
    ("service", "health_checks"),
    ("performance", "points"),
    *(
        ("contract", key)
        for key in ("escalator_schedule", "ramp", "late_delivery", "termination", "exit", "sla_credits")
    ),
}


def _styled(value: Any, path: tuple[str, ...] = ()) -> Any:
    if path in _FLOW_PATHS:
        return _FlowDict(value) if isinstance(value, dict) else _FlowList(value)
    if path == ("pricing", "fees"):
        return [_FlowDict(fee) for fee in value]
    if isinstance(value, dict):
        return {key: _styled(item, path + (key,)) for key, item in value.items()}
    return value


def offer_yaml(data: dict[str, Any], source: str, row: int) -> str:
    """An offer file: a comment naming the sheet and row, then the fields in the examples' order."""
    body = yaml.dump(_styled(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    # The sheet's file name is text from outside: quoted and escaped (JSON, ASCII) so that a line break
    # or any other character in it stays inside this comment line; the fields come from the YAML library.
    shown = source if re.fullmatch(r"[A-Za-z0-9 _.,()+-]{1,200}", source) else json.dumps(source, ensure_ascii=True)
    return f"# Imported from {shown}, row {row}.\n{body}"


def _existing_ids(out_dir: Path) -> dict[str, Path]:
    """Offer ids (lower-cased) of the files already in out_dir; unreadable files are skipped (the
    workspace check reports them)."""
    found: dict[str, Path] = {}
    if not out_dir.is_dir():
        return found
    for path in sorted(out_dir.iterdir()):
        if path.name.startswith(".") or path.suffix.lower() not in (".yaml", ".yml"):
            continue
        try:
            data = load_yaml(path, str(path)).data
        except InputError:
            continue
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            found.setdefault(data["id"].lower(), path)
    return found


def import_offers(path: Path, out_dir: Path, force: bool = False) -> list[Path]:
    """Write one `<id>.yaml` per row of the RFP sheet into out_dir (a workspace's offers/ folder).

    Every row is checked, and every target, before anything is written: a bad row, a duplicate id,
    or an existing file without `force` raises InputError listing all problems, and nothing is
    written. Returns the files written, in row order.
    """
    path, out_dir = Path(path), Path(out_dir)
    offers = read_offers(path)
    problems: list[Problem] = []
    existing = _existing_ids(out_dir)
    targets: list[tuple[Path, RowOffer]] = []
    for item in offers:
        target = out_dir / f"{item.offer.id}.yaml"
        holder = existing.get(item.offer.id.lower())
        if holder is not None and holder.name != target.name:
            problems.append(
                Problem(
                    str(holder),
                    None,
                    "id",
                    f"already holds offer id '{item.offer.id}' (row {item.row} of {path.name}): remove that file or "
                    "change the id",
                )
            )
        elif target.exists() and not force:
            problems.append(
                Problem(
                    str(target),
                    None,
                    "",
                    f"already exists (offer on row {item.row} of {path.name}): use --force to replace it",
                )
            )
        targets.append((target, item))
    if problems:
        raise InputError(problems)
    # All or nothing: a run killed midway leaves offers/ as it was, never half imported.
    return write_files_atomic(
        out_dir, {target.name: offer_yaml(item.data, path.name, item.row) for target, item in targets}
    )


# --- the template ---------------------------------------------------------------------------------


def template_columns() -> list[str]:
    """The header: every field column, with the example's fee columns in the fees position."""
    names: list[str] = []
    for name, kind in COLUMNS:
        if kind == FEES:
            names += [f"fees.{fee}.{k}" for fee, kinds in EXAMPLE_FEES for k in kinds]
        elif kind == EVIDENCE:
            names += list(EXAMPLE_EVIDENCE)
        else:
            names.append(name)
    return names


def _example_values() -> dict[str, Any]:
    values = dict(EXAMPLE_ROW)
    for fee, kinds in EXAMPLE_FEES:
        for kind, amount in kinds.items():
            values[f"fees.{fee}.{kind}"] = amount
    return values


def _describe(name: str, fixed: dict[str, tuple[str, ...]] | None = None) -> str:
    """The columns sheet's line for a column; `fixed` (fixed_values()) names the values of a drop-down."""
    if fixed and name in fixed:  # the drop-down's own values, read from the offer model
        values = fixed[name]
        return f"{EXPECTS[COLUMN_KINDS[name]]}: " + (
            f"{', '.join(values[:-1])} or {values[-1]}" if len(values) > 1 else values[0]
        )
    if name.startswith("fees."):
        return (
            "a number; one fee per fees.<name>: once, monthly, gpu_hour (per GPU-hour) or per_tb with tb_per_month; "
            "add columns for more fees"
        )
    if name.startswith("operator.evidence."):
        return (
            EXPECTS[ANSWER]
            + "; one column per checklist item, operator.evidence.<category>.<criterion> (`procure schema workspace` "
            "lists the criteria under rating.categories)"
        )
    kind = COLUMN_KINDS[name]
    return f"{EXPECTS[kind]}: {CHOICES[name]}" if name in CHOICES else EXPECTS[kind]


def fixed_values() -> dict[str, tuple[str, ...]]:
    """The template columns whose values are fixed, with those values, read from the offer model's
    Literal types (service.kind, health checks, points source, published tier, every responsibility)."""
    import types
    import typing

    from pydantic import BaseModel

    def kinds(annotation: Any) -> list[Any]:
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType, typing.Annotated):
            return [k for a in typing.get_args(annotation) for k in kinds(a)]
        return [annotation]

    def literal(path: str) -> tuple[str, ...] | None:
        model: Any = Offer
        annotation: Any = None
        for part in path.split("."):
            mapping = [k for k in kinds(annotation) if typing.get_origin(k) is dict]
            if mapping:  # responsibilities: job -> owner
                annotation, model = typing.get_args(mapping[0])[1], None
                continue
            field = model.model_fields.get(part) if model is not None else None
            if field is None:
                return None
            annotation, model = field.annotation, None
            for k in kinds(annotation):
                if isinstance(k, type) and issubclass(k, BaseModel):
                    model = k
        values = [v for k in kinds(annotation) if typing.get_origin(k) is typing.Literal for v in typing.get_args(k)]
        return tuple(str(v) for v in values) or None

    found = {}
    for name in template_columns():
        values = literal(name)
        if values:
            found[name] = values
    return found


# Rows of the template's offers sheet that carry the data-validation lists (one offer a row).
TEMPLATE_ROWS = 500


def write_template(path: Path) -> None:
    """An RFP sheet for vendors: the header of every column and one example row (a managed
    cluster). CSV when the path ends in .csv, else XLSX (numbers, dates and true/false as such,
    with a second sheet explaining each column)."""
    path = Path(path)
    names = template_columns()
    values = _example_values()
    if path.suffix.lower() == ".csv":
        out = io.StringIO()
        writer = csv_writer(out)
        writer.writerow(names)
        writer.writerow([_csv_cell(values.get(name)) for name in names])
        write_atomic(path, out.getvalue())
        return

    try:
        from openpyxl import Workbook
        from openpyxl.styles import Font
    except ImportError:
        raise _openpyxl_missing(str(path)) from None

    book = Workbook()
    sheet = book.active
    sheet.title = "offers"
    sheet.append(names)
    for index, name in enumerate(names, start=1):
        value = values.get(name)
        cell = sheet.cell(row=2, column=index, value=value)
        if isinstance(value, date):
            cell.number_format = "yyyy-mm-dd"
        elif name in COLUMN_KINDS and COLUMN_KINDS[name] in (
            TEXT,
            LIST,
            POINTS,
            INTS,
            SCHEDULE,
            COMMITS,
            CREDITS,
            SIGNED,
            CONDITIONS,
        ):
            cell.number_format = "@"  # text, so that 25:640 is not read as a time
        sheet.cell(row=1, column=index).font = Font(bold=True)
        sheet.column_dimensions[_letters(index - 1)].width = max(12, min(40, len(name) + 2))
    sheet.freeze_panes = "B2"
    from openpyxl.worksheet.datavalidation import DataValidation

    fixed = fixed_values()
    for index, name in enumerate(names, start=1):
        values = fixed.get(name)
        if values:  # a drop-down of the values the field takes; anything else is refused as typed
            letter = _letters(index - 1)
            rule = DataValidation(
                type="list", formula1='"' + ",".join(values) + '"', allow_blank=True, showErrorMessage=True
            )
            rule.error, rule.errorTitle = f"{name} is one of: {', '.join(values)}", name
            rule.add(f"{letter}2:{letter}{TEMPLATE_ROWS + 1}")
            sheet.add_data_validation(rule)
    help_sheet = book.create_sheet("columns")
    help_sheet.append(["column", "expects"])
    for name in names:
        help_sheet.append([name, _describe(name, fixed)])
    help_sheet.append([])
    help_sheet.append(
        [
            "",
            "One row per offer on the first sheet; leave a cell empty when it does not apply. Formulas are refused: "
            "type values.",
        ]
    )
    help_sheet.column_dimensions["A"].width = 40
    help_sheet.column_dimensions["B"].width = 100
    buffer = io.BytesIO()
    book.save(buffer)
    write_atomic(path, buffer.getvalue())


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)
