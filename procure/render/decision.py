"""The decision record (procure decide) as text: JSON as the record is, or its headline figures in lines for a
person. They format; they never compute."""

from __future__ import annotations

from typing import TYPE_CHECKING

from procure.render.formats import cash, md_cell

if TYPE_CHECKING:
    from procure.analysis.decision_record import DecisionRecord


def decision_lines(record: DecisionRecord) -> list[str]:
    """The record's headline figures, one a line."""
    rec, cur = record.recommendation, record.currency
    lines = [rec.headline]
    if record.decide_by is not None:
        lines.append(f"Decide by {record.decide_by}: {record.decide_by_reason}.")
    for row in record.sign_now:
        lines.append(
            f"Sign now: {row.gpus:,} GPUs with {row.vendor} from {row.start} to {row.end} at {row.price:,.2f} {cur} "
            f"per GPU-hour ({row.term_months} months), sign by {row.sign_by}"
            + (f"; binds {cash(row.committed_cost, cur)}" if row.committed_cost is not None else "")
            + "."
        )
    for line in rec.lines:
        for condition in line.conditions:
            lines.append(f"Condition of signing ({line.vendor}): {condition}.")
    for held in record.held:
        lines.append(f"Held: {held.gpus:,} GPUs with {held.vendor} from {held.start} to {held.end}.")
    for later in record.later:
        lines.append(f"Later (not asked for today): {later.gpus:,} GPUs with {later.vendor} from {later.start_date}.")
    c = record.cash
    if c.total_spend is not None:
        lines.append(
            f"Cash: {cash(c.total_spend, cur)} over {record.demand.months} months"
            + (f"; signing binds us to {cash(c.commitment, cur)}" if c.commitment else "")
            + "."
        )
    if record.shortfall is not None and record.shortfall.unserved_tasks > 0:
        s = record.shortfall
        lines.append(
            f"Unserved: {s.unserved_share:.1%} of the expected demand ({s.unserved_tasks:,.0f} tasks), "
            f"{cash(s.shortfall_cost, cur)} at the unserved price, apart from the cash."
        )
    for risk in record.risks:
        impact = cash(risk.impact, cur) if risk.impact is not None else "—"
        lines.append(f"Risk ({risk.likelihood}): {risk.risk}: {impact} ({risk.impact_basis}).")
    lines.append(f"Hedge: {record.hedge.question}")
    return lines


def decision_text(record: DecisionRecord, fmt: str) -> str:
    if fmt == "json":
        return record.model_dump_json(indent=2)
    if fmt == "markdown":
        return "\n".join(f"- {md_cell(line)}" for line in decision_lines(record)) + "\n"
    return "\n".join(decision_lines(record)) + "\n"
