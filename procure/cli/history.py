"""Saved runs and what changed between them: history, diff, reevaluate."""

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from procure.cli.options import (
    ListFormat,
    ListFormatOption,
    Output,
    as_day,
    chosen_format,
    format_option,
    output_options,
    parse_date,
)
from procure.cli.output import emit, enveloped, nothing_to_show, say, show, warn_expiring
from procure.status import ExitStatus

if TYPE_CHECKING:
    from procure.analysis.history import FirstRun, Reevaluation

HISTORY_AS_OF = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        metavar="DATE",
        callback=parse_date,
        help="Only the runs evaluated as of this date or earlier, YYYY-MM-DD (default: every run).",
        show_default=False,
    ),
]


@output_options(format=ListFormatOption, as_of=HISTORY_AS_OF)
def history(
    *,
    output: Output,
) -> ExitStatus:
    """List the saved runs: id, time saved, as-of date, label, top offer.

    With --as-of DATE, only the runs evaluated as of that date or earlier: the
    history as it stood for that date.

    Examples:

    \b
        procure history
        procure history --format json
        procure history --as-of 2026-11-01
    """
    from procure.analysis.history import saved_runs

    format = chosen_format(output.format, output.out, ListFormat.table)
    day = as_day(output.as_of)
    result = saved_runs(output.workspace, day)
    if format is ListFormat.json:
        from procure.render.history import history_json

        emit(enveloped("history", history_json(result), format, as_of=day), output.out)
        return ExitStatus.OK
    if not result.runs:
        nothing_to_show(
            f"No saved runs{f' evaluated as of {day} or earlier' if day else ' yet'}: save one with `procure evaluate "
            "--save`",
            output.out,
        )
        return ExitStatus.OK
    from procure.render.history import history_table

    show(history_table(result.runs), output)
    return ExitStatus.OK


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    text = "text"  # the Markdown as plain text, for mail or chat (textsafe.plain_text)


DIFF_FORMAT = Annotated[
    DiffFormat | None, format_option(help="Output format; text is the Markdown as plain text, for mail or chat")
]
REEVALUATE_FORMAT = Annotated[
    DiffFormat | None,
    format_option(
        help="Output format; markdown fits a pull-request comment, text (the same without Markdown escapes) a mail or "
        "chat message"
    ),
]


DIFF_AS_OF = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        metavar="DATE",
        callback=parse_date,
        help="Without BASE and HEAD: the last two runs evaluated as of this date or earlier, YYYY-MM-DD (default: "
        "the last two runs).",
        show_default=False,
    ),
]


@output_options(format=DIFF_FORMAT, as_of=DIFF_AS_OF)
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
    *,
    output: Output,
) -> ExitStatus:
    """Compare two evaluations: rank, grade, gate and cost changes, new, removed and expired offers, changed \
assumptions.

    Without arguments, the last two saved runs; with one, that run against the latest.
    With --as-of DATE, the runs evaluated as of that date or earlier stand for them.

    Examples:

    \b
        procure diff
        procure diff 3 7
        procure diff old.json new.json --format markdown
        procure diff --as-of 2026-11-01
    """
    from procure.analysis.history import compare_runs

    format = chosen_format(output.format, output.out, DiffFormat.table)
    result, head_ev = compare_runs(output.workspace, base, head, as_day(output.as_of))
    from procure.render.history import diff_table, diff_text

    if format is DiffFormat.table:
        show(diff_table(result), output)
    else:
        text = diff_text(result, format.value, title="Changes between two evaluations")
        emit(enveloped("diff", text, format, head_ev), output.out)
    return ExitStatus.OK


ReevaluateMaxIncreaseOption = Annotated[
    str | None,
    typer.Option(
        "--max-increase",
        metavar="SHARE",
        help="Fail when an acceptable offer's cost per task rises more than this, e.g. 5%.",
        show_default=False,
    ),
]
ReevaluateFailOnOption = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        metavar="LIST",
        help="Comma-separated: rank-change, grade-change, new-cheapest, gate-change (default: all, or "
        "reevaluate.fail_on).",
        show_default=False,
    ),
]
ReevaluateAcceptOption = Annotated[
    bool,
    typer.Option(
        "--accept",
        help="Save the run as the new baseline even when a threshold is breached (with --baseline: rewrite FILE).",
    ),
]
ReevaluateBaselineOption = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="FILE",
        help="Compare with this Evaluation JSON file (kept in git) instead of the saved runs; nothing is saved, "
        "and only --accept rewrites FILE.",
        dir_okay=False,
        show_default=False,
    ),
]
ReevaluateLabelOption = Annotated[
    str | None, typer.Option("--label", metavar="TEXT", help="A label for the saved run.", show_default=False)
]
ReevaluateMaxDeliveredOverrunOption = Annotated[
    str | None,
    typer.Option(
        "--max-delivered-overrun",
        metavar="SHARE",
        help="Signed vendors: fail when the latest month's delivered cost per task exceeds the promised by more "
        "than this, e.g. 10% (default: actuals.max_cost_overrun).",
        show_default=False,
    ),
]


@output_options(format=REEVALUATE_FORMAT)
def reevaluate(
    max_increase: ReevaluateMaxIncreaseOption = None,
    fail_on: ReevaluateFailOnOption = None,
    accept: ReevaluateAcceptOption = False,
    baseline: ReevaluateBaselineOption = None,
    label: ReevaluateLabelOption = None,
    max_delivered_overrun: ReevaluateMaxDeliveredOverrunOption = None,
    *,
    output: Output,
) -> ExitStatus:
    """Evaluate, compare with the last saved run, and exit 3 when a threshold is breached.

    Thresholds come from the flags, which replace `reevaluate:` in procure.yaml. A
    breached run is not saved as the new baseline unless --accept is given, so a rerun
    stays red until someone acts; otherwise the run is saved and the exit status is 0.
    The first run only saves the baseline.

    With --baseline FILE (for CI: the saved runs live in .procure/, which git does not
    keep) the comparison is with FILE, an Evaluation JSON kept in the repository;
    nothing is saved, and --accept rewrites FILE (create it the same way). A missing
    FILE without --accept is an error, exit 2.

    Examples:

    \b
        procure reevaluate --max-increase 5%
        procure reevaluate --baseline baseline.json --max-increase 5%
        procure reevaluate --baseline baseline.json --accept
        procure reevaluate --fail-on new-cheapest,gate-change --format markdown > comment.md
        procure reevaluate --max-increase 5% --format text > mail.txt
        procure reevaluate --accept --label "Dec re-check"
    """
    from procure.analysis.history import reevaluate as run_reevaluation
    from procure.render.history import diff_table, diff_text

    format = chosen_format(output.format, output.out, DiffFormat.table)
    found = run_reevaluation(
        output.workspace,
        as_day(output.as_of),
        max_increase,
        fail_on,
        max_delivered_overrun,
        accept,
        label,
        evaluated=warn_expiring,
        baseline=baseline,
    )
    ev, result, breached, saved, previous = found.evaluation, found.diff, found.breached, found.saved, found.baseline
    if found.first_run is not None:
        return _first_run(found.first_run, found, format, output.out)
    extra = {"saved_run": saved, "baseline_run": previous, "baseline_file": found.baseline_file}
    # Only what changed: a re-evaluation that changed nothing says so in one line.
    if format is DiffFormat.table:
        show(diff_table(result, breached, changed_only=True), output)
    else:
        text = diff_text(result, format.value, breached, extra, changed_only=True)
        emit(enveloped("reevaluate", text, format, ev), output.out)
    if saved is not None:
        say(f"saved run {saved}" + (" (accepted despite the breach)" if breached else ""))
    if found.written:
        say(f"wrote this evaluation to {found.baseline_file} as the baseline; commit it")
    if breached and not accept:
        kept = f"run {previous}" if found.baseline_file is None else found.baseline_file
        say(
            f"{len(breached)} threshold(s) breached ({', '.join(dict.fromkeys(b.condition for b in breached))}); the "
            f"baseline stays {kept} (use --accept to move it)"
        )
        return ExitStatus.THRESHOLD_BREACHED
    return ExitStatus.OK


def _first_run(first: "FirstRun", found: "Reevaluation", format: DiffFormat, out: Path | None) -> ExitStatus:
    """No earlier run to compare with: this one became the baseline, unless delivered evidence
    breaches a threshold (then exit 3, unless --accept)."""
    from procure.render.history import first_run_text

    emit(enveloped("reevaluate", first_run_text(first, format.value), format, found.evaluation), out)
    delivered = first.breached
    if delivered and not found.accepted:
        say(
            f"{len(delivered)} threshold(s) breached by delivered evidence "
            f"({', '.join(dict.fromkeys(b.condition for b in delivered))})"
        )
        return ExitStatus.THRESHOLD_BREACHED
    return ExitStatus.OK
