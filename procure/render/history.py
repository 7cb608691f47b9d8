"""Saved runs (history) and the differences between two evaluations (diff, reevaluate) as text:
terminal tables, JSON and Markdown fit for a pull-request comment. They format; they never compute."""

from __future__ import annotations

from typing import TYPE_CHECKING

from procure.render.fit import prioritise
from procure.render.formats import DASH, markdown_table, md_cell, per_thousand, written

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table

    from procure.analysis.differences import Breach, Diff
    from procure.analysis.history import FirstRun, History, RunInfo


def history_rows(runs: list[RunInfo]) -> tuple[list[str], list[list[str]]]:
    headers = ["Run", "Saved (UTC)", "As of", "Label", "Top offer", "Cost per 1k tasks", "Acceptable"]
    from procure.textsafe import printable

    # The database is a file like any other: what it holds is shown with visible escapes (\x1b), never obeyed.
    rows = [
        [
            str(r.id),
            printable(r.saved_at),
            str(r.as_of),
            printable(r.label or ""),
            printable(r.top_offer) if r.top_offer else DASH,
            per_thousand(r.top_cost_per_task),
            f"{r.acceptable} of {r.offers}",
        ]
        for r in runs
    ]
    return headers, rows


def history_json(result: History) -> str:
    """The saved runs as `procure schema history` describes them (without the envelope)."""
    return result.model_dump_json(indent=2) + "\n"


def first_run_markdown(first: FirstRun) -> str:
    """The first re-evaluation in Markdown: whether this run became the baseline, and the delivered breaches."""
    lines = "".join(f"- {b.condition}: {b.detail}\n" for b in first.breached)
    return f"## Re-evaluation\n\n{first_run_message(first)}\n" + ("\n" + lines if lines else "")


def first_run_text(first: FirstRun, fmt: str) -> str:
    """The first re-evaluation as JSON, Markdown, plain text, or for the terminal (table): the message, then one
    line per delivered breach."""
    if fmt == "json":
        return first_run_json(first)
    if fmt in ("markdown", "text"):
        return written(first_run_markdown(first), fmt)
    return first_run_message(first) + "\n" + "".join(f"- {b.condition}: {b.detail}\n" for b in first.breached)


def first_run_message(first: FirstRun) -> str:
    if first.baseline_file:
        return f"No baseline yet: wrote this evaluation to {first.baseline_file} as the baseline; commit it."
    if first.baseline_saved:
        return f"No earlier run: saved this evaluation as the baseline (run {first.baseline_saved})."
    return "No earlier run; not saved as the baseline while delivered evidence breaches a threshold (use --accept)."


def first_run_json(first: FirstRun) -> str:
    """The first re-evaluation as `procure schema reevaluate` describes it (without the envelope)."""
    return first.model_dump_json(indent=2) + "\n"


def history_table(runs: list[RunInfo]) -> Table:
    from rich.table import Table

    headers, rows = history_rows(runs)
    table = Table(title="Saved runs", header_style="bold")
    for i, h in enumerate(headers):
        table.add_column(h, justify="right" if i in (0, 5) else "left")
    for row in rows:
        table.add_row(*row)
    # The run, when it was saved, and its top offer and cost stay longest.
    return prioritise(table, {"Label": 1, "Acceptable": 2, "As of": 3})


def _change(o: object) -> str:
    share = o.cost_change_share
    return DASH if share is None or share == 0 else f"{share:+.1%}"


def diff_rows(result: Diff, changed_only: bool = False) -> tuple[list[str], list[list[str]]]:
    headers = ["Offer", "Status", "Rank", "Grade", "Acceptable", "Cost per 1k tasks", "Change"]
    rows = []
    for o in result.offers:
        if changed_only and not o.changed:
            continue

        def pair(before: object, after: object) -> str:
            b, a = (DASH if before is None else before), (DASH if after is None else after)
            return str(a) if b == a else f"{b} to {a}"

        acceptable = pair(
            None if o.acceptable_before is None else ("yes" if o.acceptable_before else "no"),
            None if o.acceptable_after is None else ("yes" if o.acceptable_after else "no"),
        )
        cost = pair(
            per_thousand(o.cost_before) if o.cost_before is not None else None,
            per_thousand(o.cost_after) if o.cost_after is not None else None,
        )
        rows.append(
            [
                o.id,
                o.status,
                pair(o.rank_before, o.rank_after),
                pair(o.grade_before, o.grade_after),
                acceptable,
                cost,
                _change(o),
            ]
        )
    return headers, rows


def explanation_lines(result: Diff) -> list[str]:
    """Why each moved offer moved: the inputs that changed (old -> new) and the share of the move each explains."""
    lines = []
    for o in result.offers:
        if o.status != "present":
            continue
        if o.explained_by:
            share = f" ({o.cost_change_share:+.1%})" if o.cost_change_share is not None else ""
            parts = ", ".join(
                f"{d.label} {_figure(d.before)} -> {_figure(d.after)} ({d.share:.0%})" for d in o.explained_by
            )
            lines.append(
                f"{o.id}: cost per 1,000 tasks {per_thousand(o.cost_before)} -> {per_thousand(o.cost_after)}{share}: "
                f"{parts}"
            )
        elif o.rank_changed and o.cost_before is not None and o.cost_before == o.cost_after:
            lines.append(
                f"{o.id}: rank {o.rank_before or DASH} -> {o.rank_after or DASH} with the same cost per task: other "
                "offers moved"
            )
    return lines


def _figure(value: float | None) -> str:
    return DASH if value is None else f"{value:.4g}"


def diff_lines(result: Diff, breached: list[Breach] | None = None, changed_only: bool = False) -> list[str]:
    lines = [f"{result.base} (as of {result.base_as_of}) against {result.head} (as of {result.head_as_of})."]
    if result.unchanged:  # a breach of delivered evidence is named even when the evaluation did not change
        return (
            lines
            + [
                f"No changes: the same {len(result.offers)} offers with the same ranks, grades, gates and costs, and "
                "the same procure.yaml."
            ]
            + [f"BREACH {b.condition}: {b.detail}" for b in breached or []]
        )
    if changed_only:
        same = sum(1 for o in result.offers if not o.changed)
        if same:
            lines.append(f"{same} offer{'s' if same != 1 else ''} unchanged (not listed).")
    if result.new_cheapest:
        lines.append(
            f"The cheapest acceptable offer changed from {result.leader_before or 'none'} to "
            f"{result.leader_after or 'none'}."
        )
    else:
        lines.append(f"The cheapest acceptable offer is still {result.leader_after or 'none'}.")
    if result.assumptions:
        lines.append(
            "procure.yaml changed: " + "; ".join(f"{c.path} from {c.before} to {c.after}" for c in result.assumptions)
        )
    lines += explanation_lines(result)
    for b in breached or []:
        lines.append(f"BREACH {b.condition}: {b.detail}")
    return lines


def diff_table(result: Diff, breached: list[Breach] | None = None, changed_only: bool = False) -> Group:
    """The offers that changed (all of them unless `changed_only`); nothing but a sentence when none did."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if result.unchanged:
        return Group(Text("\n".join(diff_lines(result, breached))))
    headers, rows = diff_rows(result, changed_only)
    table = Table(title="Changes between two evaluations", header_style="bold")
    for h in headers:
        table.add_column(h)
    for row in rows:
        table.add_row(*row)
    prioritise(table, {"Grade": 1, "Acceptable": 2, "Rank": 3})
    return Group(table, Text("\n".join(diff_lines(result, breached, changed_only))))


def diff_markdown(
    result: Diff, breached: list[Breach] | None = None, title: str = "Re-evaluation", changed_only: bool = False
) -> str:
    """Fit for a pull-request comment."""
    verdict = ""
    if breached is not None:
        verdict = (
            "**Thresholds breached:**\n\n"
            + "\n".join(f"- {md_cell(b.condition)}: {md_cell(b.detail)}" for b in breached)
            + "\n\n"
            if breached
            else "**No threshold breached.**\n\n"
        )
    text = (
        f"## {title}\n\n"
        + verdict
        + "\n".join(md_cell(line) for line in diff_lines(result, changed_only=changed_only))
        + "\n"
    )
    if result.unchanged:
        return text
    headers, rows = diff_rows(result, changed_only)
    return text + "\n" + markdown_table(headers, rows) + "\n"


def diff_text(
    result: Diff,
    fmt: str,
    breached: list[Breach] | None = None,
    extra: dict | None = None,
    title: str = "Re-evaluation",
    changed_only: bool = False,
) -> str:
    """The differences as JSON, Markdown (a pull-request comment) or plain text (a mail); the table is `diff_table`."""
    if fmt == "json":
        return diff_json(result, breached, extra)
    return written(diff_markdown(result, breached, title=title, changed_only=changed_only), fmt)


def diff_json(result: Diff, breached: list[Breach] | None = None, extra: dict | None = None) -> str:
    import json

    payload = result.model_dump(mode="json")
    payload["new_cheapest"] = result.new_cheapest
    payload["changed"] = not result.unchanged
    if breached is not None:
        payload["breached"] = [b.model_dump() for b in breached]
    payload.update(extra or {})
    return json.dumps(payload, indent=2) + "\n"
