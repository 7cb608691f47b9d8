"""The cost position (position) as text: the cost curve, cheapest first, as a terminal table, JSON, CSV
and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from procure.render.fit import prioritise
from procure.render.formats import markdown_table, md_cell, per_thousand
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from rich.console import Group

    from procure.analysis.position import Position


def position_rows(pos: Position) -> tuple[list[str], list[list[str]]]:
    headers = ["#", "Who", "Kind", "Figure", "Per 1k tasks", "Date"]
    figure = {"us": "our cost", "offer": "our cost if signed"}
    rows = [
        [
            str(i),
            "US" if p.kind == "us" else p.name,
            p.kind,
            figure.get(p.kind, "their price" if p.figure == "price" else "their cost"),
            per_thousand(p.cost_per_task),
            str(p.date),
        ]
        for i, p in enumerate(pos.curve, start=1)
    ]
    return headers, rows


def position_table(pos: Position) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    headers, rows = position_rows(pos)
    table = Table(title="Cost position: the cost curve, cheapest first", header_style="bold")
    for i, title in enumerate(headers):
        table.add_column(title, justify="right" if i in (0, 3) else "left")
    for row, point in zip(rows, pos.curve):
        table.add_row(*row, style="bold" if point.kind == "us" else None)
    prioritise(table, {"Kind": 1, "Date": 2, "Figure": 3})  # who and the cost per task stay
    if pos.gate_failures:  # a failing offer is said to fail before the table calls it cheap
        return Group(Text(pos.sentences[0]), table, *(Text(s) for s in pos.sentences[1:]))
    return Group(
        table, *(Text(s) for s in pos.sentences)
    )  # each sentence whole on a screen, or folded (render/fit.py screen)


def position_text(pos: Position, fmt: str) -> str:
    if fmt == "json":
        return pos.model_dump_json(indent=2) + "\n"
    headers, rows = position_rows(pos)
    if fmt == "markdown":
        warning = f"**{md_cell(pos.sentences[0])}**\n\n" if pos.gate_failures else ""
        rest = pos.sentences[1:] if pos.gate_failures else pos.sentences
        return (
            "# Cost position\n\n"
            + warning
            + markdown_table(headers, rows, right={0, 4})
            + "\n\n"
            + "\n".join(md_cell(s) for s in rest)
            + "\n"
        )
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(["rank", "name", "kind", "cost_per_task", "date"])
    for i, p in enumerate(pos.curve, start=1):
        writer.writerow([i, p.name, p.kind, repr(p.cost_per_task), p.date])
    return buffer.getvalue()
