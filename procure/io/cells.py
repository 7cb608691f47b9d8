"""One cell of an offer sheet as the value of its field: the column types (how a cell becomes a value), what each
expects in words for the template's help sheet (`EXPECTS`), and `convert`, which refuses a formula, a time of day or
a value of the wrong type with a `CellError` saying why."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any, TypeVar

from procure.io.sheets import Formula

T = TypeVar("T")

# Column types: how a cell becomes a field value.
TEXT, DATE, INT, NUMBER, BOOL, LIST, POINTS = "text", "date", "int", "number", "bool", "list", "points"


INTS, SCHEDULE = "ints", "schedule"  # "128, 256" -> [128, 256]; "7:0.02; 13:0.03" -> [[7, 0.02], [13, 0.03]]


FEES = "fees"  # where the fee columns go in the field order


CREDITS = "credits"  # "0.995:0.10; 0.99:0.25" -> [{below, credit}, ...]


COMMITS = "commits"  # "128:12:3.90; 256:24:3.60" -> [{gpus, term_months, gpu_hour}, ...]


SIGNED = "signed"  # "2026-04-20:256:2026-05-01:2027-04-30" -> [{date, gpus, start, end}, ...]: a contract held


CONDITIONS = "conditions"  # "attestation: ISO 27001 certificate received; price: in writing" -> [{gates, text}, ...]


EVIDENCE = "evidence"  # where the operator.evidence.<category>.<criterion> columns go; true/false or a number


ANSWER = "answer"  # a checklist answer: true/false, or a number


# What each type expects, for the template's help sheet.
EXPECTS = {
    TEXT: "text",
    DATE: "a date, YYYY-MM-DD",
    INT: "a whole number",
    NUMBER: "a number",
    BOOL: "true or false (yes/no)",
    LIST: "a comma-separated list",
    INTS: "whole numbers separated by commas, e.g. 128, 256",
    SCHEDULE: "from-month:rise pairs separated by ';', e.g. 13:0.03; 25:0.03 (format the cell as text)",
    POINTS: "interactivity:throughput points separated by ';', e.g. 50:420; 100:300, each optionally with :ttft "
    "seconds (format the cell as text)",
    COMMITS: "gpus:term_months:gpu_hour options separated by ';', e.g. 128:12:3.90; 256:24:3.60 (format the cell as "
    "text)",
    CREDITS: "below:credit tiers separated by ';', e.g. 0.995:0.10; 0.99:0.25 (format the cell as text)",
    SIGNED: "a contract already signed on this offer, date:gpus:start:end, tranches separated by ';', e.g. "
    "2026-04-20:256:2026-05-01:2027-04-30 (format the cell as text)",
    CONDITIONS: "conditions of signing still to confirm, gates: text separated by ';', e.g. attestation: ISO 27001 "
    "certificate received; price: the price confirmed in writing",
    ANSWER: "a checklist answer: true or false, or a number (e.g. node_replacement_hours)",
}


class CellError(ValueError):
    pass


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise CellError(f"must be a number (got {_show(value)})")
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise CellError(f"must be a number (got {_show(value)})") from None
    else:
        number = float(value)
    if not math.isfinite(number):
        raise CellError(f"must be a finite number (got {_show(value)})")
    # Whole numbers stay whole: `gpus: 512`, `once: 40000`, not 512.0.
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def convert(kind: str, value: Any) -> Any:
    """One non-empty cell as the value of a field of this kind; CellError says why not.

    A formula or a time of day is refused whatever the kind (procure does not evaluate a sheet, and a
    time is what a spreadsheet makes of 50:420 typed into a cell not formatted as text)."""
    if isinstance(value, Formula):
        raise CellError(f"formulas are not evaluated: type the value itself (got {_show(value.text)})")
    if isinstance(value, (time, timedelta)) and not isinstance(value, datetime):
        hint = "; format the cell as text" if kind == POINTS else ""
        raise CellError(f"the spreadsheet holds a time of day here ({value}), not {EXPECTS[kind]}{hint}")
    converter = _CONVERTERS.get(kind)
    if converter is None:
        raise AssertionError(f"unknown column kind {kind}")
    return converter(value)


def _text(value: Any) -> str:
    """Text as typed; a number the spreadsheet made of it back as text (512, not 512.0); a date or a
    true/false is no text."""
    if isinstance(value, bool) or isinstance(value, (date, datetime)):
        raise CellError(f"must be text (got {_show(value)})")
    if isinstance(value, (int, float)):
        number = _number(value)
        return str(number)
    return str(value).strip()


def _int(value: Any) -> int:
    """A whole number (a number cell holding 512.0 is 512)."""
    try:
        number = _number(value)
    except CellError:
        raise CellError(f"must be a whole number (got {_show(value)})") from None
    if not isinstance(number, int):
        raise CellError(f"must be a whole number (got {_show(value)})")
    return number


def _bool(value: Any) -> bool:
    """A true/false cell, or true, yes, false, no as text."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    raise CellError(f"must be true or false (got {_show(value)})")


def _date(value: Any) -> date:
    """A date cell (a date-time only at midnight: a time of day is no date) or YYYY-MM-DD as text."""
    if isinstance(value, datetime):
        if value.time() != time(0):
            raise CellError(f"must be a date like 2026-11-30 (got {value}, with a time of day)")
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise CellError(f"must be a date like 2026-11-30 (got {_show(value)})")


def _names(value: Any) -> list[str]:
    """A comma-separated list of names, empty items left out."""
    if not isinstance(value, str):
        raise CellError(f"must be a comma-separated list of names (got {_show(value)})")
    return [item.strip() for item in value.split(",") if item.strip()]


def _credits(value: Any) -> list[dict[str, int | float]]:
    """ "0.995:0.10; 0.99:0.25" -> [{below: 0.995, credit: 0.10}, ...]: the SLA's credit tiers."""
    bad = CellError(f"must be below:credit tiers like 0.995:0.10; 0.99:0.25 (got {_show(value)})")
    if not isinstance(value, str):
        raise bad
    tiers = []
    for part in value.split(";"):
        if part.strip():
            pieces = part.split(":")
            if len(pieces) != 2:
                raise bad
            try:
                tiers.append({"below": _number(pieces[0]), "credit": _number(pieces[1])})
            except CellError:
                raise bad from None
    if not tiers:
        raise bad
    return tiers


def _answer(value: Any) -> bool | int | float:
    """A checklist answer: true/false, or a number (e.g. node_replacement_hours)."""
    if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no")):
        return convert(BOOL, value)
    try:
        return _number(value)
    except CellError:
        raise CellError(f"must be true or false, or a number (got {_show(value)})") from None


def _ints(value: Any) -> list[int]:
    """Whole numbers separated by commas (one number cell is a list of one)."""
    items = value.split(",") if isinstance(value, str) else [value]
    try:
        return [convert(INT, item) for item in items if not isinstance(item, str) or item.strip()]
    except CellError:
        raise CellError(f"must be whole numbers separated by commas, e.g. 128, 256 (got {_show(value)})") from None


def _items(value: Any, bad: CellError, sizes: tuple[int, ...], read: Callable[[list[str]], T]) -> list[T]:
    """A cell of items separated by ";", each of pieces separated by ":" ("50:420; 100:300"): each item, of one of
    `sizes` pieces, read by `read`; `bad` for anything else, a piece `read` refuses, or no item at all."""
    if not isinstance(value, str):
        raise bad
    items = []
    for part in value.split(";"):
        if not part.strip():
            continue
        pieces = part.split(":")
        if len(pieces) not in sizes:
            raise bad
        try:
            items.append(read(pieces))
        except CellError:
            raise bad from None
    if not items:
        raise bad
    return items


def _record(*fields: tuple[str, str]) -> Callable[[list[str]], dict[str, Any]]:
    """Reads an item's pieces as the fields named, in order, each of its kind ("128:12:3.90" with gpus INT, term_months
    INT, gpu_hour NUMBER -> {gpus: 128, term_months: 12, gpu_hour: 3.9})."""
    return lambda pieces: {key: convert(kind, piece.strip()) for (key, kind), piece in zip(fields, pieces)}


def _points(value: Any) -> list[list[int | float]]:
    """ "50:420; 100:300" -> [[50, 420], [100, 300]]; a third value is the time to first token (s)."""
    bad = CellError(
        "must be interactivity:throughput points like 50:420; 100:300, a third value (:ttft seconds) optional (got "
        f"{_show(value)})"
    )
    return _items(value, bad, (2, 3), lambda parts: [_number(part) for part in parts])


def _commits(value: Any) -> list[dict[str, int | float]]:
    """ "128:12:3.90; 256:24:3.60" -> [{gpus: 128, term_months: 12, gpu_hour: 3.90}, ...]."""
    bad = CellError(f"must be gpus:term_months:gpu_hour options like 128:12:3.90; 256:24:3.60 (got {_show(value)})")
    return _items(value, bad, (3,), _record(("gpus", INT), ("term_months", INT), ("gpu_hour", NUMBER)))


def _conditions(value: Any) -> list[dict[str, Any]]:
    """ "attestation: ISO 27001 certificate received; price: in writing" -> [{gates, text}, ...] (the offer model checks
    what a condition may gate)."""
    if not isinstance(value, str):
        raise CellError(f"must be gates: text conditions like attestation: ISO 27001 received (got {_show(value)})")
    found = []
    for part in value.split(";"):
        if not part.strip():
            continue
        gates, sep, text = part.partition(":")
        if not sep or not text.strip():
            raise CellError(
                f"must be gates: text conditions like attestation: ISO 27001 received (got {_show(part.strip())})"
            )
        found.append({"gates": gates.strip(), "text": text.strip()})
    return found


def _signed(value: Any) -> list[dict[str, Any]]:
    """ "2026-04-20:256:2026-05-01:2027-04-30" -> [{date, gpus: 256, start, end}, ...]: the tranches of a contract held
    (contract.signed; the offer model checks their dates)."""
    bad = CellError(
        f"must be date:gpus:start:end tranches like 2026-04-20:256:2026-05-01:2027-04-30 (got {_show(value)})"
    )
    return _items(value, bad, (4,), _record(("date", DATE), ("gpus", INT), ("start", DATE), ("end", DATE)))


def _schedule(value: Any) -> list[list[int | float]]:
    """ "7:0.02; 13:0.03" -> [[7, 0.02], [13, 0.03]]: from that contract month on, the price rises so much."""
    bad = CellError(f"must be from-month:rise pairs like 13:0.03; 25:0.03 (got {_show(value)})")
    return _items(value, bad, (2,), lambda parts: [convert(INT, parts[0].strip()), _number(parts[1])])


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    TEXT: _text,
    NUMBER: _number,
    INT: _int,
    BOOL: _bool,
    DATE: _date,
    LIST: _names,
    POINTS: _points,
    SCHEDULE: _schedule,
    COMMITS: _commits,
    CREDITS: _credits,
    SIGNED: _signed,
    CONDITIONS: _conditions,
    ANSWER: _answer,
    INTS: _ints,
}
