"""The comparison report and the board report, as PDF or HTML: report."""

import contextlib
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from procure.cli.options import (
    STDOUT,
    AsOfOption,
    RankBy,
    RankByOption,
    WorkspaceOption,
    as_day,
    chosen_format,
    format_option,
    out_file,
)
from procure.cli.output import say, stages, warn_plan_failed
from procure.environment import current
from procure.status import ExitStatus


class ReportFormat(str, Enum):
    pdf = "pdf"
    html = "html"


ReportBoardOption = Annotated[
    bool, typer.Option("--board", help="The short board report instead of the full comparison.")
]
ReportOutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="FILE",
        help="File to write (default: comparison.pdf, or board.pdf with --board; - standard output); .html writes "
        "HTML.",
        parser=out_file,
        show_default=False,
    ),
]
ReportFormatOption = Annotated[
    ReportFormat | None, format_option("pdf", "pdf, or html (the same document, no WeasyPrint needed)")
]
ReportFrontierOption = Annotated[
    bool,
    typer.Option(
        "--frontier",
        help=("Draw the plan's efficient frontier (expected cost against CVaR) in the comparison: a few more solves."),
    ),
]


def report(
    board: ReportBoardOption = False,
    out: ReportOutOption = None,
    format: ReportFormatOption = None,
    as_of: AsOfOption = None,
    rank_by: RankByOption = RankBy.snapshot,
    frontier: ReportFrontierOption = False,
    workspace: WorkspaceOption = Path("."),
) -> ExitStatus:
    """Write the comparison report (or, with --board, the board report) as PDF or HTML.

    The comparison has a cover, an executive summary, the offers at a glance, the
    cost curve and other charts, the horizon, grades, ratings, plan and hedging, a
    page per offer with its arithmetic, and an appendix of assumptions, method and
    the input files' SHA-256. The board report is a two-page decision memo: the ask
    and its term sheet, the options, then the scenarios, risks and the hedge question.
    --rank-by horizon ranks by the cost over horizon.months; --frontier adds the
    plan's efficient frontier to the comparison. With SOURCE_DATE_EPOCH
    set, the output is byte-for-byte reproducible.

    Examples:

    \b
        procure report
        procure report --board --out reports/board.pdf
        procure report --rank-by horizon --board
        procure report --frontier
        procure report --as-of 2026-11-29 --out comparison.html
    """
    from procure.analysis.usecases.report import reporting
    from procure.render.documents import ReportError, check_source_date_epoch
    from procure.render.report import render_report, report_workers

    check_source_date_epoch(current())
    if frontier and board:  # asked for a chart the memo does not have: said, not ignored (exit 2)
        raise _no_frontier_on_the_board()

    format = chosen_format(format, None if out == STDOUT else out, ReportFormat.pdf)
    kind = "board" if board else "comparison"
    target = out or Path(f"{kind}.{format.value}")
    with stages() as stage, contextlib.ExitStack() as stack:
        workers = []  # the layout processes start once the workspace is read, loading WeasyPrint meanwhile
        found = reporting(
            workspace,
            as_day(as_of),
            rank_by_horizon=rank_by is RankBy.horizon,
            board=board,
            frontier=frontier,
            stage=stage,
            loaded=lambda: workers.append(stack.enter_context(report_workers(kind, format.value))),
        )
        pool = workers[0] if workers else None

        def extras():  # type: ignore[no-untyped-def]  # the frontier's solves go to the layout workers, idle meanwhile
            return found.extras(solves=pool.map if pool is not None else None)

        try:
            data = render_report(found.evaluation, kind, format.value, extras, stage, pool)
        except ReportError as exc:
            stage("failed")
            say(f"error: {exc}")
            raise typer.Exit(ExitStatus.INTERNAL_ERROR) from None
    from procure.io.files import write_atomic

    if target == STDOUT:
        sys.stdout.buffer.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        sys.stdout.flush()
    else:
        write_atomic(target, data)
        from procure.io import resultcache

        resultcache.wrote(target, data)  # kept with the answer: the same command on the same inputs writes it again
    if found.recommendation is not None:
        warn_plan_failed(found.recommendation)
    if target != STDOUT:
        say(f"wrote {target}")
    return ExitStatus.OK


def _no_frontier_on_the_board() -> Exception:
    from procure.errors import InputError, Problem

    return InputError(
        [
            Problem(
                "--frontier",
                None,
                "",
                "the efficient frontier is a chart of the comparison; the board memo has no charts: drop --board "
                "or --frontier",
            )
        ]
    )
