"""The command line: each command parses, calls the core, renders, and returns an exit status.

Heavy libraries (pandas, matplotlib, WeasyPrint) are imported inside the commands that need them,
so `procure --help` and `procure validate` start fast.
"""

from __future__ import annotations

import functools
import json
import sys
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, TypeVar

import typer

from procure import __version__
from procure.errors import InputError
from procure.status import ExitStatus

app = typer.Typer(
    name="procure",
    help=(
        "Compare vendor offers for B200 GPU hours by expected full cost per successful task.\n\n"
        "Commands work on the workspace in the current folder (procure.yaml, offers/, grades/, "
        "performance/, market/); use --workspace DIR for another."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# --- shared options -----------------------------------------------------------------------------


class TextFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


class ListFormat(str, Enum):
    table = "table"
    json = "json"


class SchemaName(str, Enum):
    offer = "offer"
    grade = "grade"
    workspace = "workspace"
    evaluation = "evaluation"


WorkspaceOption = Annotated[
    Path,
    typer.Option("--workspace", "-w", help="Workspace folder (holds procure.yaml).", file_okay=False, show_default=False),
]
AsOfOption = Annotated[
    Optional[datetime],
    typer.Option("--as-of", formats=["%Y-%m-%d"], help="Evaluate as of this date (default: as_of in procure.yaml, else today).", show_default=False),
]
OutOption = Annotated[
    Optional[Path],
    typer.Option("--out", "-o", help="Write to this file (missing folders are created) instead of standard output.", dir_okay=False, show_default=False),
]

F = TypeVar("F", bound=Callable[..., Any])


def handles_input_errors(command: F) -> F:
    """Bad input: one line per problem on standard error, exit 2, no traceback, nothing written."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as exc:
            for problem in exc.problems:
                typer.echo(str(problem), err=True)
            count = len(exc.problems)
            typer.echo(f"{count} problem{'s' if count != 1 else ''} found; nothing was written.", err=True)
            raise typer.Exit(ExitStatus.BAD_INPUT) from None

    return wrapper  # type: ignore[return-value]


def _day(value: datetime | None) -> date | None:
    return value.date() if value else None


def _evaluation(workspace: Path, as_of: datetime | None):  # type: ignore[no-untyped-def]
    from procure.evaluate import evaluate
    from procure.workspace import load_workspace

    return evaluate(load_workspace(workspace), _day(as_of))


def _console(stderr: bool = False):  # type: ignore[no-untyped-def]
    from rich.console import Console

    console = Console(stderr=stderr)
    if not console.is_terminal:  # piped or captured: do not squeeze the table into 80 columns
        console = Console(stderr=stderr, width=200)
    return console


def _emit(text: str, out: Path | None) -> None:
    """Standard output carries only the requested format; --out writes the file atomically."""
    if out is None:
        sys.stdout.write(text)
        return
    from procure.fileio import write_atomic

    write_atomic(out, text)
    typer.echo(f"wrote {out}", err=True)


def _emit_table(table: Any, out: Path | None) -> None:
    if out is None:
        _console().print(table)
        return
    from rich.console import Console

    console = Console(record=True, width=200, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    _emit(console.export_text(), out)


# --- commands -----------------------------------------------------------------------------------


@app.command()
@handles_input_errors
def validate(workspace: WorkspaceOption = Path("."), as_of: AsOfOption = None) -> None:
    """Check every file of the workspace and list every problem, one line each.

    Exit status 0 when the workspace is valid, 2 when it is not. Problems read
    `file:line: field: message`.

    Example:

    \b
        procure validate --workspace ./rfp-2026-11
    """
    from procure.evaluate import evaluate
    from procure.workspace import load_workspace

    ws = load_workspace(workspace)
    ev = evaluate(ws, _day(as_of))
    curves = len(ws.curves)
    typer.echo(
        f"ok: {len(ws.offers)} offers, {len(ws.grades)} grades, {curves} reference curve{'s' if curves != 1 else ''}, "
        f"{len(ws.index)} index levels; {len(ev.ranked)} acceptable as of {ev.as_of}"
    )


@app.command()
@handles_input_errors
def grade(
    explain: Annotated[Optional[str], typer.Option("--explain", metavar="OFFER_ID", help="Show every grade's requirements for one offer.", show_default=False)] = None,
    format: Annotated[ListFormat, typer.Option("--format", "-f", help="Output format.")] = ListFormat.table,
    workspace: WorkspaceOption = Path("."),
    out: OutOption = None,
) -> None:
    """Show each offer's grade, with every requirement of its grade (or of the nearest grade) pass/fail.

    An offer gets the highest-ranked grade whose every requirement holds; an ungraded
    offer shows what it misses for the nearest grade.

    Examples:

    \b
        procure grade
        procure grade --explain northwind-b200-mc
        procure grade --format json
    """
    from procure.grading import grade_offer
    from procure.workspace import load_workspace

    ws = load_workspace(workspace)
    offers = ws.offers
    if explain is not None:
        offers = [o for o in ws.offers if o.id == explain]
        if not offers:
            raise InputError([_unknown_offer(explain, [o.id for o in ws.offers])])
    results = [(o, grade_offer(o, ws.grades)) for o in offers]
    if format is ListFormat.json:
        payload = [
            {
                "id": o.id,
                "vendor": o.vendor,
                "grade": r.grade,
                "summary": r.summary,
                "checks": [
                    {"grade": c.grade.id, "passed": c.passed, "requirements": [vars(x) for x in c.results]}
                    for c in r.checks
                ],
            }
            for o, r in results
        ]
        _emit(json.dumps(payload if explain is None else payload[0], indent=2) + "\n", out)
        return
    if explain is not None:
        from procure.render.text import explain_table

        offer, result = results[0]
        _emit_table(explain_table(offer.id, offer.vendor, result.checks, result.grade), out)
        return
    from procure.render.text import grades_table

    _emit_table(grades_table(results), out)


def _unknown_offer(offer_id: str, known: list[str]):  # type: ignore[no-untyped-def]
    from procure.errors import Problem

    return Problem("offers/", None, "", f"no offer with id '{offer_id}' (known: {', '.join(known)})")


@app.command()
@handles_input_errors
def compare(
    format: Annotated[TextFormat, typer.Option("--format", "-f", help="Output format.")] = TextFormat.table,
    out: OutOption = None,
    as_of: AsOfOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Rank the offers by expected full cost per successful task.

    Acceptable offers come first by rank; offers failing a gate follow with their
    reasons. JSON is the full Evaluation (every figure and reason).

    Examples:

    \b
        procure compare
        procure compare --format json --as-of 2026-11-29 > evaluation.json
        procure compare --format csv --out out/comparison.csv
    """
    ev = _evaluation(workspace, as_of)
    if format is TextFormat.table:
        from procure.render.text import comparison_table

        _emit_table(comparison_table(ev), out)
        return
    from procure.render.text import RENDERERS

    _emit(RENDERERS[format.value](ev), out)


class ReportFormat(str, Enum):
    pdf = "pdf"
    html = "html"


@app.command()
@handles_input_errors
def report(
    board: Annotated[bool, typer.Option("--board", help="The short board report instead of the full comparison.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="File to write (default: comparison.pdf, or board.pdf with --board).", dir_okay=False, show_default=False)] = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f", help="pdf, or html (the same document, no WeasyPrint needed).")] = ReportFormat.pdf,
    as_of: AsOfOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Write the comparison report (or, with --board, the board report) as PDF or HTML.

    The comparison has a cover with the input files' SHA-256, an executive summary,
    the offers at a glance, the cost curve and other charts, the grades, a page per
    offer with its arithmetic, and an appendix of assumptions and method. The board
    report is two to four pages: the decision, the alternatives, the cost curve, the
    main risks. With SOURCE_DATE_EPOCH set, the output is byte-for-byte reproducible.

    Examples:

    \b
        procure report
        procure report --board --out reports/board.pdf
        procure report --format html --as-of 2026-11-29 --out comparison.html
    """
    from procure.render.documents import ReportError, render_report

    kind = "board" if board else "comparison"
    target = out or Path(f"{kind}.{format.value}")
    ev = _evaluation(workspace, as_of)
    try:
        data = render_report(ev, kind, format.value)
    except ReportError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(ExitStatus.INTERNAL_ERROR) from None
    from procure.fileio import write_atomic

    write_atomic(target, data)
    typer.echo(f"wrote {target}", err=True)


@app.command()
def schema(
    name: Annotated[SchemaName, typer.Argument(help="Which schema.")] = SchemaName.workspace,
    out: OutOption = None,
) -> None:
    """Print the JSON Schema of an input file (generated from the input models).

    `workspace` is procure.yaml; `evaluation` is the output of `compare --format json`.

    Examples:

    \b
        procure schema offer > offer.schema.json
        procure schema workspace
    """
    from procure.models import SCHEMAS

    if name is SchemaName.evaluation:
        from procure.evaluate import Evaluation

        model: Any = Evaluation
    else:
        model = SCHEMAS[name.value]
    _emit(json.dumps(model.model_json_schema(), indent=2) + "\n", out)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"procure {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
) -> None:
    """Compare vendor offers for B200 GPU hours by expected full cost per successful task."""


def main() -> None:
    """Console entry point: exit statuses as in status.py; an unexpected error exits 1 without a traceback."""
    try:
        app()
    except Exception as exc:  # usage errors and bad input are handled inside; this is a bug
        typer.echo(f"internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(ExitStatus.INTERNAL_ERROR)
