"""The sensitivity (sensitivity): each input at its low and high value, as a terminal table, JSON, CSV
and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from procure.render.fit import prioritise
from procure.render.formats import DASH, factor, markdown_table, per_k, per_thousand
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from rich.table import Table

    from procure.analysis.sensitivity import Sensitivity


def sensitivity_rows(result: Sensitivity, currency: str) -> tuple[list[str], list[list[str]]]:
    # Each end's leader with its own cost per task (not the baseline leader's).
    headers = [
        "Input",
        "Low",
        "High",
        f"Leader at low ({per_k(currency)})",
        f"Leader at high ({per_k(currency)})",
        f"Largest swing ({per_k(currency)})",
        "Ranking flips",
    ]

    def leader(offer: str | None, cost: float | None, fails: dict[str, list[str]]) -> str:
        # a gate that fails at this end is named before the leader it leaves
        failing = "; ".join(f"{o} fails {' and '.join(g)}" for o, g in fails.items())
        shown = f"{offer} {per_thousand(cost)}" if offer else DASH
        return f"{failing}; {shown} leads" if failing else shown

    rows = []
    for r in result.rows:
        rows.append(
            [
                r.input,
                factor(r.low),
                factor(r.high),
                leader(
                    r.leader_low,
                    r.leader_cost_low if r.leader_cost_low is not None else r.costs_low.get(r.leader_low or ""),
                    r.fails_low,
                ),
                leader(
                    r.leader_high,
                    r.leader_cost_high if r.leader_cost_high is not None else r.costs_high.get(r.leader_high or ""),
                    r.fails_high,
                ),
                f"{per_thousand(r.swing)} ({r.swing_offer})" if r.swing_offer else DASH,
                "yes" if r.flips else "no",
            ]
        )
    return headers, rows


def sensitivity_table(result: Sensitivity, currency: str) -> Table:
    from rich.table import Table

    headers, rows = sensitivity_rows(result, currency)
    baseline = ", ".join(f"{k} {per_thousand(v)}" for k, v in result.baseline.items())
    table = Table(
        title="Sensitivity: each input at its low and high value, the rest as stated",
        caption=f"Baseline cost per 1,000 successful tasks at typical inputs ({currency}): {baseline}",
        caption_justify="left",
        header_style="bold",
    )
    for i, h in enumerate(headers):
        table.add_column(h, justify="right" if i in (1, 2, 5) else "left")
    for row in rows:
        table.add_row(*row)
    # The input, its low and high values and the swing stay longest; the leaders at each end go first.
    return prioritise(table, {h: 1 for h in headers if h.startswith("Leader at")} | {"Ranking flips": 2, headers[5]: 3})


def sensitivity_text(result: Sensitivity, currency: str, fmt: str) -> str:
    if fmt == "json":
        return result.model_dump_json(indent=2) + "\n"
    headers, rows = sensitivity_rows(result, currency)
    if fmt == "markdown":
        return "# Sensitivity\n\n" + markdown_table(headers, rows, right={1, 2, 5}) + "\n"
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(
        [
            "input",
            "low",
            "high",
            *[f"{o}_low" for o in result.offers],
            *[f"{o}_high" for o in result.offers],
            "swing",
            "swing_offer",
            "leader_low",
            "leader_high",
            "flips",
        ]
    )
    for r in result.rows:
        writer.writerow(
            [
                r.input,
                r.low,
                r.high,
                *["" if r.costs_low[o] is None else repr(r.costs_low[o]) for o in result.offers],
                *["" if r.costs_high[o] is None else repr(r.costs_high[o]) for o in result.offers],
                "" if r.swing is None else repr(r.swing),
                r.swing_offer or "",
                r.leader_low,
                r.leader_high,
                str(r.flips).lower(),
            ]
        )
    return buffer.getvalue()
