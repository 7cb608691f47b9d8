"""Text renderings of an Evaluation: terminal table, JSON, CSV and Markdown.

Renderers format; they never compute a figure. Every number comes from the Evaluation.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Callable

from procure.evaluate import EXTRA_METRIC_KEYS, METRIC_KEYS, Evaluation, OfferRecord

if TYPE_CHECKING:
    from rich.table import Table

    from procure.grading import GradeCheck, GradeResult
    from procure.models import Offer

DASH = "—"


def money(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def per_task(value: float | None) -> str:
    """Costs per task are fractions of a cent to a few cents: five decimals keep them comparable."""
    return DASH if value is None else f"{value:.5f}"


def percent(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{value:.{digits}%}"


def number(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def first_reason(record: OfferRecord) -> str:
    return record.reasons[0] if record.reasons else ""


def grade_label(record: OfferRecord) -> str:
    return record.grade or "ungraded"


# One definition of the comparison columns, shared by the table, CSV and Markdown.
Column = tuple[str, Callable[[OfferRecord], str]]


def comparison_columns(currency: str) -> list[Column]:
    return [
        ("Rank", lambda r: str(r.rank) if r.rank else DASH),
        ("Offer", lambda r: r.id),
        ("Vendor", lambda r: r.vendor),
        ("Grade", grade_label),
        ("OK", lambda r: "yes" if r.acceptable else "no"),
        (f"List {currency}/GPU-h", lambda r: money(r.metrics["list_price"])),
        (f"Full {currency}/GPU-h", lambda r: money(r.metrics["full"])),
        ("tok/s/GPU", lambda r: number(r.metrics["throughput"])),
        ("Avail.", lambda r: percent(r.metrics["availability"])),
        ("Fill", lambda r: percent(r.metrics["fill"], 0)),
        (f"{currency}/task", lambda r: per_task(r.metrics["cost_per_task"])),
        (f"{currency}/M tok", lambda r: money(r.metrics["cost_per_mtok"])),
        ("Reason", first_reason),
    ]


def workload_line(ev: Evaluation) -> str:
    wl = ev.workload
    demand = f", {wl.tasks_per_month:,.0f} tasks/month" if wl.tasks_per_month else ""
    return (
        f"{wl.name}: {wl.input_tokens:,} in / {wl.output_tokens:,} out tokens at {wl.interactivity:g} tok/s per user, "
        f"success {wl.success_rate:.0%}, utilization {wl.utilization:.0%}{demand}; as of {ev.as_of}; {ev.currency}"
    )


def comparison_table(ev: Evaluation) -> Table:
    from rich.table import Table

    table = Table(title="Cost per successful task", caption=workload_line(ev), caption_justify="left", header_style="bold")
    columns = comparison_columns(ev.currency)
    numeric = {5, 6, 7, 8, 9, 10, 11}
    for i, (title, _) in enumerate(columns):
        table.add_column(title, justify="right" if i in numeric or i == 0 else "left", overflow="fold")
    for record in ev.offers:
        style = None if record.acceptable else "dim"
        table.add_row(*(cell(record) for _, cell in columns), style=style)
    return table


def to_json(ev: Evaluation) -> str:
    return ev.to_json()


def to_csv(ev: Evaluation) -> str:
    """One row per offer: identity, gates and every metric, numbers unformatted for spreadsheets."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    keys = METRIC_KEYS + EXTRA_METRIC_KEYS
    writer.writerow(["rank", "id", "vendor", "grade", "acceptable", "kind", "pricing_basis", *keys, "reasons"])
    for r in ev.offers:
        values = ["" if r.metrics[k] is None else repr(r.metrics[k]) for k in keys]
        writer.writerow([r.rank or "", r.id, r.vendor, r.grade or "", str(r.acceptable).lower(), r.kind, r.pricing_basis, *values, "; ".join(r.reasons)])
    return buffer.getvalue()


def _md_cell(text: str) -> str:
    """Vendor text is data: escape what Markdown would read as table syntax or markup."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def markdown_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right or set()
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(ev: Evaluation) -> str:
    columns = comparison_columns(ev.currency)
    headers = [title for title, _ in columns]
    rows = [[cell(r) for _, cell in columns] for r in ev.offers]
    parts = [
        f"# Offer comparison: cost per successful task ({ev.currency})",
        "",
        _md_cell(workload_line(ev)),
        "",
        markdown_table(headers, rows, right={0, 5, 6, 7, 8, 9, 10, 11}),
    ]
    ranked = ev.ranked
    if ranked:
        best = ranked[0]
        parts += ["", f"**Lowest cost per successful task:** {_md_cell(best.vendor)} (`{best.id}`), {per_task(best.metrics['cost_per_task'])} {ev.currency} per task."]
    rejected = [r for r in ev.offers if not r.acceptable]
    if rejected:
        parts += ["", "## Not acceptable", ""]
        parts += [f"- `{r.id}` ({_md_cell(r.vendor)}): {_md_cell('; '.join(r.reasons))}" for r in rejected]
    noted = [r for r in ev.offers if r.notes]
    if noted:
        parts += ["", "## Notes", ""]
        parts += [f"- `{r.id}`: {_md_cell('; '.join(r.notes))}" for r in noted]
    parts += ["", "Inputs:", ""] + [f"- `{f.path}` sha256 `{f.sha256}`" for f in ev.inputs]
    return "\n".join(parts) + "\n"


RENDERERS: dict[str, Callable[[Evaluation], str]] = {"json": to_json, "csv": to_csv, "markdown": to_markdown}


# --- grades -------------------------------------------------------------------------------------


def grades_table(results: list[tuple[Offer, GradeResult]]) -> Table:
    from rich.table import Table

    table = Table(title="Grades", header_style="bold")
    for title in ("Offer", "Vendor", "Kind", "Grade", "Requirements"):
        table.add_column(title, overflow="fold")
    for offer, result in results:
        shown = result.assigned or result.nearest
        if shown is None:
            detail = "no grades defined"
        elif result.grade:
            detail = f"all {len(shown.results)} requirements of {shown.grade.id} pass"
        else:
            detail = f"nearest {shown.grade.id}; fails " + "; ".join(
                f"{q.requirement} (expected {q.expected}, offer states {q.observed})" for q in shown.failures
            )
        table.add_row(offer.id, offer.vendor, offer.service.kind, result.grade or "ungraded", detail)
    return table


def explain_table(offer_id: str, vendor: str, checks: list[GradeCheck], assigned: str | None) -> Table:
    from rich.table import Table

    verdict = f"grade {assigned}" if assigned else "ungraded"
    table = Table(title=f"{offer_id} ({vendor}): {verdict}", header_style="bold")
    for title in ("Grade", "Requirement", "Expected", "Offer states", "Result"):
        table.add_column(title, overflow="fold")
    for check in checks:
        for i, result in enumerate(check.results):
            table.add_row(check.grade.id if i == 0 else "", result.requirement, result.expected, result.observed, "pass" if result.passed else "FAIL")
        table.add_section()
    return table
