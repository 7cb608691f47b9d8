"""Market price observations: market/quotes.csv, or any file of the same columns named to `procure index build`.

Each row is one price seen on one date: the GPU, the price per GPU-hour, whether it was advertised or transacted,
the term in months (0: on-demand), the seller, the grade and the GPU-hours it covered. The index built from them is
procure/analysis/market.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from procure.errors import InputError, Problem
from procure.io.tables import parse_date, parse_number, read_csv_rows

QUOTE_COLUMNS = ("date", "gpu", "price", "kind", "term_months", "seller", "grade", "gpu_hours")
MAX_PRICE = 10_000.0  # per GPU-hour: anything above is a typo, and sums of it could overflow
MAX_VOLUME = 1e12  # GPU-hours in one observation


@dataclass(frozen=True)
class Quote:
    line: int
    date: date
    gpu: str
    price: float
    kind: str
    term_months: int
    seller: str
    grade: str
    gpu_hours: float


def read_quotes(path: Path, display: str) -> list[Quote]:
    """Observations with exactly QUOTE_COLUMNS; every bad row is reported with its line number."""
    from procure.io.files import own_input

    own_input(path)  # the index built from it may never replace it
    rows, _, problems = read_csv_rows(path, display, QUOTE_COLUMNS)
    quotes = []
    for line, row in rows:
        before = len(problems)
        day = parse_date(row["date"], display, line, "date", problems)
        price = parse_number(row["price"], display, line, "price", problems)
        volume = parse_number(row["gpu_hours"], display, line, "gpu_hours", problems, positive=False)
        term = parse_number(row["term_months"], display, line, "term_months", problems, positive=False)
        kind = row["kind"].lower()
        if kind not in ("advertised", "transacted"):
            problems.append(Problem(display, line, "kind", f"must be advertised or transacted (got {row['kind']!r})"))
        if term is not None and (term < 0 or term != int(term)):
            problems.append(
                Problem(
                    display,
                    line,
                    "term_months",
                    f"must be a whole number of months, 0 for on-demand (got {row['term_months']})",
                )
            )
        if price is not None and price > MAX_PRICE:
            problems.append(
                Problem(display, line, "price", f"must be at most {MAX_PRICE:,.0f} per GPU-hour (got {row['price']})")
            )
        if volume is not None and volume > MAX_VOLUME:
            problems.append(
                Problem(display, line, "gpu_hours", f"must be at most {MAX_VOLUME:,.0f} (got {row['gpu_hours']})")
            )
        if volume is not None and volume < 0:
            problems.append(Problem(display, line, "gpu_hours", f"must be at least 0 (got {row['gpu_hours']})"))
        elif volume == 0 and kind == "transacted":
            problems.append(
                Problem(display, line, "gpu_hours", "a transacted row needs its volume (gpu_hours above 0)")
            )
        for column in ("gpu", "seller", "grade"):
            if not row[column]:
                problems.append(Problem(display, line, column, "must not be empty"))
        if len(problems) == before:
            quotes.append(Quote(line, day, row["gpu"], price, kind, int(term), row["seller"], row["grade"], volume))  # type: ignore[arg-type]
    if not rows and not problems:
        problems.append(Problem(display, None, "", "no observations: expected at least one row"))
    if problems:
        raise InputError(problems)
    return quotes
