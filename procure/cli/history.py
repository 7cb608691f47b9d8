"""Saved runs and what changed between them: history, diff, reevaluate."""

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from procure.cli.options import (
    AllOption,
    AsOfOption,
    ColumnsOption,
    ListFormat,
    ListFormatOption,
    NotesOption,
    OutOption,
    WideOption,
    WorkspaceOption,
    as_day,
    chosen_format,
    format_option,
    parse_date,
)
from procure.cli.output import emit, emit_table, enveloped, say, warn_expiring
from procure.status import ExitStatus


def history(
    format: ListFormatOption = None,
    out: OutOption = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            metavar="DATE",
            callback=parse_date,
            help="Only the runs evaluated as of this date or earlier, YYYY-MM-DD (default: every run).",
            show_default=False,
        ),
    ] = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    notes: NotesOption = False,
    every_row: AllOption = False,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """List the saved runs: id, time saved, as-of date, label, top offer.

    With --as-of DATE, only the runs evaluated as of that date or earlier: the
    history as it stood for that date.

    Examples:

    \b
        procure history
        procure history --format json
        procure history --as-of 2026-11-01
    """
    from procure.analysis.history import list_runs
    from procure.io.workspace import find_workspace

    format = chosen_format(format, out, ListFormat.table)
    day = as_day(as_of)
    runs = [r for r in list_runs(find_workspace(workspace)) if day is None or r.as_of <= day]
    if not runs and format is not ListFormat.json:
        emit(
            f"No saved runs{f' evaluated as of {day} or earlier' if day else ' yet'}: save one with `procure evaluate --save`.\n",
            out,
        )
        return
    if format is ListFormat.json:
        from procure.render.envelope import dumps

        emit(dumps("history", {"runs": [r.model_dump(mode="json") for r in runs]}, day), out)
        return
    from procure.render.history import history_table

    emit_table(history_table(runs), out, wide, columns=columns, notes=notes, every_row=every_row)


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    text = "text"  # the Markdown as plain text, for mail or chat (textsafe.plain_text)


def _written(markdown: str, format: DiffFormat) -> str:
    """Markdown as it is, or as plain text for --format text."""
    if format is DiffFormat.text:
        from procure.textsafe import plain_text

        return plain_text(markdown)
    return markdown


def diff(
    base: Annotated[
        str | None,
        typer.Argument(
            metavar="[BASE]",
            help="A run id or an Evaluation JSON file (default: the run before HEAD).",
            show_default=False,
        ),
    ] = None,
    head: Annotated[
        str | None,
        typer.Argument(
            metavar="[HEAD]", help="A run id or an Evaluation JSON file (default: the latest run).", show_default=False
        ),
    ] = None,
    format: Annotated[
        DiffFormat | None, format_option(help="Output format; text is the Markdown as plain text, for mail or chat")
    ] = None,
    out: OutOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    notes: NotesOption = False,
    every_row: AllOption = False,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Compare two evaluations: rank, grade, gate and cost changes, new, removed and expired offers, changed assumptions.

    Without arguments, the last two saved runs; with one, that run against the latest.

    Examples:

    \b
        procure diff
        procure diff 3 7
        procure diff old.json new.json --format markdown
    """
    from procure.analysis.history import diff as compare_runs
    from procure.analysis.history import latest_run_id, load_evaluation, run_id
    from procure.errors import InputError
    from procure.io.workspace import find_workspace

    format = chosen_format(format, out, DiffFormat.table)
    root = find_workspace(workspace)
    if head is None:
        latest = latest_run_id(root)
        if latest is None:
            from procure.errors import Problem

            raise InputError(
                [
                    Problem(
                        ".procure/history.sqlite",
                        None,
                        "",
                        "no saved runs yet: save one with `procure evaluate --save`",
                    )
                ]
            )
        head = str(latest)
    if base is None:
        previous = latest_run_id(root, before=run_id(head)) if run_id(head) is not None else None
        if previous is None:
            from procure.errors import Problem

            raise InputError([Problem("diff", None, "", "only one run to compare: name BASE, or save another run")])
        base = str(previous)
    base_ev, base_label = load_evaluation(root, base)
    head_ev, head_label = load_evaluation(root, head)
    if base == head:
        from procure.errors import Problem

        raise InputError(
            [Problem("diff", None, "", f"BASE and HEAD are the same ({base}): name two different runs or files")]
        )
    result = compare_runs(base_ev, head_ev, base_label, head_label)
    from procure.render.history import diff_json, diff_markdown, diff_table

    if format is DiffFormat.table:
        emit_table(diff_table(result), out, wide, columns=columns, notes=notes, every_row=every_row)
    elif format is DiffFormat.json:
        emit(enveloped("diff", diff_json(result), format, head_ev), out)
    else:
        emit(_written(diff_markdown(result, title="Changes between two evaluations"), format), out)


def reevaluate(
    max_increase: Annotated[
        str | None,
        typer.Option(
            "--max-increase",
            metavar="SHARE",
            help="Fail when an acceptable offer's cost per task rises more than this, e.g. 5%.",
            show_default=False,
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="LIST",
            help="Comma-separated: rank-change, grade-change, new-cheapest, gate-change (default: all, or reevaluate.fail_on).",
            show_default=False,
        ),
    ] = None,
    accept: Annotated[
        bool, typer.Option("--accept", help="Save the run as the new baseline even when a threshold is breached.")
    ] = False,
    label: Annotated[
        str | None, typer.Option("--label", metavar="TEXT", help="A label for the saved run.", show_default=False)
    ] = None,
    max_delivered_overrun: Annotated[
        str | None,
        typer.Option(
            "--max-delivered-overrun",
            metavar="SHARE",
            help="Signed vendors: fail when the latest month's delivered cost per task exceeds the promised by more than this, e.g. 10% (default: actuals.max_cost_overrun).",
            show_default=False,
        ),
    ] = None,
    format: Annotated[
        DiffFormat | None,
        format_option(
            help="Output format; markdown fits a pull-request comment, text (the same without Markdown escapes) a mail or chat message"
        ),
    ] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    notes: NotesOption = False,
    every_row: AllOption = False,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Evaluate, compare with the last saved run, and exit 3 when a threshold is breached.

    Thresholds come from the flags, which replace `reevaluate:` in procure.yaml. A
    breached run is not saved as the new baseline unless --accept is given, so a rerun
    stays red until someone acts; otherwise the run is saved and the exit status is 0.
    The first run only saves the baseline.

    Examples:

    \b
        procure reevaluate --max-increase 5%
        procure reevaluate --fail-on new-cheapest,gate-change --format markdown > comment.md
        procure reevaluate --max-increase 5% --format text > mail.txt
        procure reevaluate --accept --label "Dec re-check"
    """
    from procure.analysis.evaluate import evaluate as run_evaluation
    from procure.analysis.history import breaches, latest_run_id, load_run, save_run
    from procure.analysis.history import diff as compare_runs
    from procure.io.workspace import load_workspace
    from procure.render.history import diff_json, diff_markdown, diff_table

    format = chosen_format(format, out, DiffFormat.table)
    ws = load_workspace(workspace)
    limit, conditions = _thresholds(ws.config.reevaluate, max_increase, fail_on)
    ev = run_evaluation(ws, as_day(as_of))
    warn_expiring(ev)
    delivered = _delivered_breaches(ws, ev, max_delivered_overrun)
    previous = latest_run_id(ws.root) if (ws.root / ".procure" / "history.sqlite").exists() else None
    if previous is None:
        _first_run(ws, ev, delivered, accept, label, format, out)
        return
    result = compare_runs(load_run(ws.root, previous), ev, f"run {previous}", "this evaluation")
    breached = breaches(result, limit, conditions) + delivered
    saved = None
    if not breached or accept:
        saved = save_run(ws.root, ev, label)
    extra = {"saved_run": saved, "baseline_run": previous}
    # Only what changed: a re-evaluation that changed nothing says so in one line.
    if format is DiffFormat.table:
        emit_table(
            diff_table(result, breached, changed_only=True),
            out,
            wide,
            columns=columns,
            notes=notes,
            every_row=every_row,
        )
    elif format is DiffFormat.json:
        emit(enveloped("reevaluate", diff_json(result, breached, extra), format, ev), out)
    else:
        emit(_written(diff_markdown(result, breached, changed_only=True), format), out)
    if saved is not None:
        say(f"saved run {saved}" + (" (accepted despite the breach)" if breached else ""))
    if breached and not accept:
        say(
            f"{len(breached)} threshold(s) breached ({', '.join(dict.fromkeys(b.condition for b in breached))}); the baseline stays run {previous} (use --accept to move it)"
        )
        raise typer.Exit(ExitStatus.THRESHOLD_BREACHED)


def _thresholds(settings: Any, max_increase: str | None, fail_on: str | None) -> tuple[Any, tuple[str, ...]]:
    """The cost increase and the conditions that fail a re-evaluation: the flags, else `reevaluate:`
    in procure.yaml; an unknown condition is refused."""
    from procure.analysis.history import CONDITIONS

    limit = settings.max_increase
    if max_increase is not None:
        limit = _share(max_increase, "--max-increase")
    conditions = tuple(settings.fail_on)
    if fail_on is not None:
        conditions = tuple(c.strip() for c in fail_on.split(",") if c.strip())
        unknown = [c for c in conditions if c not in CONDITIONS]
        if unknown:
            from procure.errors import InputError, Problem

            raise InputError(
                [
                    Problem(
                        "--fail-on",
                        None,
                        "",
                        f"unknown condition {', '.join(unknown)} (expected: {', '.join(CONDITIONS)})",
                    )
                ]
            )
    return limit, conditions


def _first_run(
    ws: Any, ev: Any, delivered: list, accept: bool, label: str | None, format: DiffFormat, out: Path | None
) -> None:
    """No earlier run to compare with: this one becomes the baseline, unless delivered evidence
    breaches a threshold (then exit 3, unless --accept)."""
    from procure.analysis.history import save_run

    run_id = save_run(ws.root, ev, label) if not delivered or accept else None
    message = (
        f"No earlier run: saved this evaluation as the baseline (run {run_id})."
        if run_id
        else "No earlier run; not saved as the baseline while delivered evidence breaches a threshold (use --accept)."
    )
    lines = [f"- {b.condition}: {b.detail}" for b in delivered]
    if format is DiffFormat.json:
        import json  # here, not at start-up: `procure --help` does without it

        emit(
            enveloped(
                "reevaluate",
                json.dumps({"baseline_saved": run_id, "breached": [b.model_dump() for b in delivered]}),
                format,
                ev,
            ),
            out,
        )
    elif format in (DiffFormat.markdown, DiffFormat.text):
        emit(
            _written(f"## Re-evaluation\n\n{message}\n" + ("\n" + "\n".join(lines) + "\n" if lines else ""), format),
            out,
        )
    else:
        emit(message + "\n" + "".join(line + "\n" for line in lines), out)
    if delivered and not accept:
        say(
            f"{len(delivered)} threshold(s) breached by delivered evidence ({', '.join(dict.fromkeys(b.condition for b in delivered))})"
        )
        raise typer.Exit(ExitStatus.THRESHOLD_BREACHED)


def _delivered_breaches(ws: Any, ev: Any, overrun: str | None) -> list:
    """Signed vendors' latest month: an SLA breach, credits owed, a delivered cost per task past the limit."""
    if not ws.actuals:
        return []
    from procure.analysis.evaluate import evaluate as run_evaluation
    from procure.analysis.history import Breach
    from procure.analysis.scorecard import breaches, scorecard

    limit = ws.config.actuals.max_cost_overrun if overrun is None else _share(overrun, "--max-delivered-overrun")
    promise = run_evaluation(ws, ev.as_of, delivered=False)  # delivered figures are set against the promise
    result = scorecard(ws, promise, ev.as_of)
    found = breaches(result, limit) + _claim_deadline_breaches(ws, result, ev.as_of)
    return [Breach(condition=c, detail=d) for c, d in found]


def _claim_deadline_breaches(ws: Any, result: Any, as_of: Any) -> list[tuple[str, str]]:
    """SLA credit claims worth more than reevaluate.claim_min_amount whose window closes within reevaluate.claim_warning_days."""
    from procure.analysis.claims import claim_breaches, draft_claims

    settings = ws.config.reevaluate
    return claim_breaches(
        ws, draft_claims(ws, result, as_of), as_of, settings.claim_warning_days, settings.claim_min_amount
    )


def _share(text: str, option: str) -> float:
    """'5%' or 0.05 -> 0.05."""
    from procure.errors import InputError, Problem

    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1]) / 100 if percent else float(raw)
    except ValueError:
        raise InputError([Problem(option, None, "", f"expected a share like 5% or 0.05 (got {text!r})")]) from None
    if not percent and value > 1:  # a bare 5 would mean +500%: say which was meant
        raise InputError(
            [
                Problem(
                    option,
                    None,
                    "",
                    f"a bare number is a share from 0 to 1 (0.05 = 5%): write {raw}% for {raw} percent (got {text!r})",
                )
            ]
        )
    if not 0 <= value <= 10 or value != value:  # at most +1000%
        raise InputError(
            [Problem(option, None, "", f"expected a share like 5% or 0.05, from 0 to 1000% (got {text!r})")]
        )
    return value
