"""A what-if (whatif) and the prices that would win (whatif --price-to-win) as text: terminal table,
JSON, CSV and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING

from procure.render.fit import prioritise
from procure.render.formats import DASH, count, markdown_table, md_cell, money, number, per_k, per_thousand, percent
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table

    from procure.analysis.whatif import PriceToWin, WhatIf


WHATIF_ROWS: list[tuple[str, str, Callable[[float | None], str]]] = [
    ("cost_per_task", "Cost per 1,000 successful tasks", per_thousand),
    ("full", "Full cost per paid GPU-hour", money),
    ("rent", "Rent per GPU-hour", money),
    ("throughput", "Output tok/s/GPU at the target", lambda v: number(v, 1)),
    ("availability", "Availability", percent),
    ("utilization", "Utilization", lambda v: percent(v, 0)),
    ("fill", "Fill (share of billed GPUs used)", lambda v: percent(v, 1)),
    ("gpus_needed", "GPUs the demand needs", lambda v: number(v, 1)),
    ("billed_gpus", "GPUs billed", count),
    ("monthly_spend", "Monthly spend", lambda v: money(v, 0)),
]


def whatif_lines(result: WhatIf) -> list[str]:
    """The verdict in sentences; every figure from the result."""
    cur = result.currency
    lines = [f"{result.vendor} ({result.offer}) with {', '.join(result.changes) or 'no change'}:"]
    if result.before == result.after:
        lines.append("no figure changes: the offer already has these values, or the change does not reach the cost.")
    if result.monthly_saving is not None:
        lines.append(
            f"cost per 1,000 successful tasks from {per_thousand(result.before.cost_per_task)} to "
            f"{per_thousand(result.after.cost_per_task)} {cur}; "
            f"monthly saving {money(result.monthly_saving, 0)} {cur} at {number(result.tasks_per_month)} tasks a month "
            f"({result.tasks_basis})."
        )
    if result.monthly_cost or result.one_off:
        payback = (
            "never"
            if result.payback_months is None
            else f"{result.payback_months:.1f} months (discounted"
            + (f"; beyond the {result.term_months}-month term)" if result.payback_beyond_term else ")")
        )
        # only the costs the change has: no "net of 0 a month" for a one-off, no "payback of 0" for a monthly fee
        net = (
            f"net of {money(result.monthly_cost, 0)} {cur} a month: {money(result.net_monthly, 0)} {cur} a month"
            if result.monthly_cost
            else f"{money(result.net_monthly, 0)} {cur} a month"
        )
        lines.append(f"{net}; payback of {money(result.one_off, 0)} {cur}: {payback}." if result.one_off else f"{net}.")
    if result.break_even_throughput_gain is not None and (result.monthly_cost or result.one_off):
        lines.append(f"break-even throughput gain (alone): {result.break_even_throughput_gain:+.1%}.")
    lines += [f"note: {n}." for n in result.notes]
    return lines


def whatif_table(result: WhatIf) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"What if: {result.offer}", header_style="bold")
    table.add_column("Figure")
    table.add_column("Before", justify="right")
    table.add_column("After", justify="right")
    for key, label, fmt in WHATIF_ROWS:
        table.add_row(label, fmt(getattr(result.before, key)), fmt(getattr(result.after, key)))
    return Group(table, Text("\n".join(whatif_lines(result))))


def whatif_json(result: WhatIf) -> str:
    return result.model_dump_json(indent=2) + "\n"


def whatif_csv(result: WhatIf) -> str:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["figure", "before", "after"])
    for key, _, _ in WHATIF_ROWS:
        before, after = getattr(result.before, key), getattr(result.after, key)
        writer.writerow([key, "" if before is None else repr(before), "" if after is None else repr(after)])
    for key in (
        "tasks_per_month",
        "monthly_saving",
        "monthly_cost",
        "net_monthly",
        "one_off",
        "payback_months",
        "payback_simple_months",
        "break_even_throughput_gain",
    ):
        value = getattr(result, key)
        writer.writerow([key, "", "" if value is None else repr(value)])
    return buffer.getvalue()


def whatif_markdown(result: WhatIf) -> str:
    rows = [
        [label, fmt(getattr(result.before, key)), fmt(getattr(result.after, key))] for key, label, fmt in WHATIF_ROWS
    ]
    return (
        f"# What if: {md_cell(result.offer)}\n\n"
        + markdown_table(["Figure", "Before", "After"], rows, right={1, 2})
        + "\n\n"
        + "\n".join(md_cell(line) for line in whatif_lines(result))
        + "\n"
    )


def whatif_text(result: WhatIf, fmt: str) -> str:
    """The what-if as JSON, CSV or Markdown (the table is `whatif_table`)."""
    return {"json": whatif_json, "csv": whatif_csv, "markdown": whatif_markdown}[fmt](result)


def price_to_win_rows(rows: list[PriceToWin], currency: str) -> tuple[list[str], list[list[str]]]:
    headers = [
        "Rank",
        "Offer",
        "Vendor",
        per_k(currency),
        f"List {currency}/GPU-h",
        f"Price to tie {currency}/GPU-h",
        "Change",
        "Note",
    ]
    body = [
        [
            str(r.rank),
            r.id,
            r.vendor,
            per_thousand(r.cost_per_task),
            money(r.list_price, 3),
            money(r.price_to_tie, 3),
            percent(r.change, 1) if r.change is not None else DASH,
            r.note,
        ]
        for r in rows
    ]
    return headers, body


def price_to_win_table(rows: list[PriceToWin], currency: str) -> Table:
    from rich.table import Table

    headers, body = price_to_win_rows(rows, currency)
    table = Table(
        title="Price to win: the GPU-hour list price at which each offer ties the leader", header_style="bold"
    )
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if i in (0, 3, 4, 5, 6) else "left")
    for row in body:
        table.add_row(*row)
    # The offer, its list price and the price that ties the leader stay longest.
    return prioritise(table, {"Vendor": 1, "Note": 2, per_k(currency): 3, "Rank": 4, "Change": 5}, one_line=("Note",))


def price_to_win_text(rows: list[PriceToWin], currency: str, fmt: str) -> str:
    import json

    if fmt == "json":
        return json.dumps({"currency": currency, "offers": [r.model_dump(mode="json") for r in rows]}, indent=2) + "\n"
    headers, body = price_to_win_rows(rows, currency)
    if fmt == "markdown":
        return "# Price to win\n\n" + markdown_table(headers, body, right={0, 3, 4, 5, 6}) + "\n"
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["rank", "id", "vendor", "cost_per_task", "list_price", "price_to_tie", "change", "note"])
    for r in rows:
        writer.writerow(
            [
                r.rank,
                r.id,
                r.vendor,
                repr(r.cost_per_task),
                "" if r.list_price is None else repr(r.list_price),
                "" if r.price_to_tie is None else repr(r.price_to_tie),
                "" if r.change is None else repr(r.change),
                r.note,
            ]
        )
    return buffer.getvalue()
