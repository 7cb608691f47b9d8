"""The cash flow over a horizon (cashflow, compare --horizon) as text: every offer over the horizon, or
one offer month by month, as a terminal table, JSON, CSV and Markdown. They format; they never compute."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from procure.analysis.evaluate import Evaluation
from procure.analysis.record import OfferRecord
from procure.render.fit import prioritise
from procure.render.formats import DASH, count, markdown_table, md_cell, money, number, per_k, per_thousand, prose_count
from procure.textsafe import csv_writer

if TYPE_CHECKING:
    from rich.console import Group


# total sums the columns before it; sla_credits, after it, is shown but counted only with horizon.count_sla_credits
# (then it is part of credits too)
FLOW_COLUMNS = (
    "prepayment",
    "rent",
    "fees",
    "staff",
    "software",
    "power_colo",
    "capital",
    "credits",
    "prepay_risk",
    "exit",
    "total",
    "sla_credits",
)
FLOW_LABELS = {"power_colo": "power/colo", "prepay_risk": "prepay risk", "sla_credits": "SLA credits (shown)"}


def horizon_rows(ev: Evaluation) -> tuple[list[str], list[list[str]]]:
    cur = ev.currency
    headers = [
        "Rank",
        "Offer",
        "Term",
        "Delivery month",
        f"Commitment {cur}",
        f"Total {cur}",
        f"NPV {cur}",
        f"{per_k(cur)} over horizon",
        f"{per_k(cur)} snapshot",
    ]
    rows = []
    for r in ev.offers:
        plan = r.cashflow
        rows.append(
            [
                str(r.rank or DASH),
                r.id,
                f"{r.term_months} mo",
                str(plan.delivery_month) if plan else DASH,
                money(r.metrics.get("total_commitment"), 0),
                money(r.metrics.get("total_cost"), 0),
                money(r.metrics.get("npv_cost"), 0),
                per_thousand(r.metrics.get("horizon_cost_per_task")),
                per_thousand(r.metrics["cost_per_task"]),
            ]
        )
    return headers, rows


def bridge_notes(ev: Evaluation) -> list[str]:
    """Each offer delivered after month 1: what serves the months before its delivery, and their cost."""
    return [f"{r.id}: {r.cashflow.bridge}" for r in ev.offers if r.cashflow and r.cashflow.bridge]


def horizon_caption(ev: Evaluation) -> str:
    plan = next((r.cashflow for r in ev.offers if r.cashflow), None)
    rule = f"{plan.renewal_rule} (horizon.renewal: {plan.renewal})" if plan else "the market"
    counted = next((r.cashflow.sla_credits_counted for r in ev.offers if r.cashflow), False)
    rule += "; SLA credits " + ("counted" if counted else "shown, not counted")
    return (
        f"Horizon {ev.horizon_months} months from {ev.as_of}{demand_words(ev)}; after its term an offer renews at "
        f"{rule}; NPV at the cost of capital {ev.assumptions.cost_of_capital:.0%}; ranked by "
        f"{ev.rank_by.replace('_', ' ')}."
    )


def demand_words(ev: Evaluation) -> str:
    """The demand each month wants, named beside the horizon: the plan's, or today's stated demand."""
    d = ev.horizon_demand
    if d is None:
        return ", every billed GPU used (no demand stated)"
    tasks = prose_count(d.first_month, "tasks")
    if d.source == "demand":
        growing = f", growing {d.growth:.1%} a month" if d.growth else ""
        return f", each month wanting the plan's expected demand ({tasks} in month 1{growing})"
    return f", each month wanting the stated {tasks} (workload.tasks_per_month)"


def flow_rows(record: OfferRecord) -> tuple[list[str], list[list[str]]]:
    headers = ["Month", "Phase", "GPUs", *[FLOW_LABELS.get(c, c) for c in FLOW_COLUMNS], "Successful tasks"]
    rows = [
        [
            str(f.month),
            f.phase,
            count(f.gpus),
            *[money(getattr(f, c), 0) for c in FLOW_COLUMNS],
            number(f.successful_tasks),
        ]
        for f in (record.cashflow.months if record.cashflow else [])
    ]
    return headers, rows


def cashflow_table(ev: Evaluation, offer_id: str | None) -> Group:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if offer_id is None:
        headers, rows = horizon_rows(ev)
        title = "Over the horizon"
        # A total below the commitment is explained, offer by offer (the detail: cashflow --offer ID).
        notes: list[str] = [
            f"{r.id}: {n}" for r in ev.offers if r.cashflow for n in r.cashflow.notes if n.startswith("the total (")
        ]
        notes += bridge_notes(ev)
    else:
        record = ev.offer(offer_id)
        headers, rows = flow_rows(record)
        title = f"Cash flow: {record.id} ({record.vendor})"
        notes = record.cashflow.notes if record.cashflow else []
    table = Table(title=title, caption=horizon_caption(ev), caption_justify="left", header_style="bold")
    for i, h in enumerate(headers):
        table.add_column(
            h, justify="left" if (offer_id is None and i == 1) or (offer_id is not None and i == 1) else "right"
        )
    for row in rows:
        table.add_row(*row)
    cur = ev.currency
    if offer_id is None:
        # the offer and its cost per task over the horizon stay longest, then its total and commitment
        prioritise(
            table,
            {
                "Term": 1,
                "Delivery month": 2,
                f"{per_k(cur)} snapshot": 3,
                f"NPV {cur}": 4,
                "Rank": 5,
                f"Commitment {cur}": 6,
                f"Total {cur}": 7,
            },
        )
    else:  # the month and the total stay; then what makes it up, least common parts first (empty ones go first of all)
        parts = [h for h in headers[3:-2] if h not in ("rent", "prepayment", "total")]
        prioritise(
            table,
            {h: 1 for h in parts}
            | {FLOW_LABELS["sla_credits"]: 1, "prepayment": 2, "Phase": 3, "Successful tasks": 4, "GPUs": 5, "rent": 6},
        )
    return Group(table, Text("\n".join(f"note: {n}" for n in notes)))


# The horizon figures of each offer, in the JSON and the CSV alike.
HORIZON_METRICS = ("total_commitment", "total_cost", "npv_cost", "horizon_cost_per_task", "cost_per_task")


def cashflow_text(ev: Evaluation, offer_id: str | None, fmt: str) -> str:
    if fmt == "json":
        return _cashflow_json(ev, offer_id)
    headers, rows = flow_rows(ev.offer(offer_id)) if offer_id else horizon_rows(ev)
    if fmt == "markdown":
        return (
            f"# Cash flow over {ev.horizon_months} months\n\n"
            + md_cell(horizon_caption(ev))
            + "\n\n"
            + markdown_table(headers, rows, right=set(range(2, len(headers))))
            + "\n"
        )
    return _cashflow_csv(ev, offer_id)


def _cashflow_json(ev: Evaluation, offer_id: str | None) -> str:
    import json

    from procure.model.units import with_companions

    records = [ev.offer(offer_id)] if offer_id else ev.offers
    payload = {
        "as_of": str(ev.as_of),
        "currency": ev.currency,
        "horizon_months": ev.horizon_months,
        "rank_by": ev.rank_by,
        "offers": [
            {
                "id": r.id,
                "rank": r.rank,
                **with_companions({k: r.metrics.get(k) for k in HORIZON_METRICS}),
                "cashflow": r.cashflow.model_dump(mode="json") if r.cashflow else None,
            }
            for r in records
        ],
    }
    return json.dumps(payload, indent=2) + "\n"


def _cashflow_csv(ev: Evaluation, offer_id: str | None) -> str:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    if offer_id:
        writer.writerow(["month", "phase", "gpus", *FLOW_COLUMNS, "successful_tasks"])
        for f in ev.offer(offer_id).cashflow.months:  # type: ignore[union-attr]
            writer.writerow(
                [f.month, f.phase, repr(f.gpus), *[repr(getattr(f, c)) for c in FLOW_COLUMNS], repr(f.successful_tasks)]
            )
        return buffer.getvalue()
    writer.writerow(["rank", "id", "term_months", *HORIZON_METRICS])
    for r in ev.offers:
        writer.writerow(
            [
                r.rank or "",
                r.id,
                r.term_months,
                *["" if r.metrics.get(k) is None else repr(r.metrics.get(k)) for k in HORIZON_METRICS],
            ]
        )
    return buffer.getvalue()
