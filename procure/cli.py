"""The command line: each command parses, calls the core, renders, and returns an exit status.

Heavy libraries (pandas, matplotlib, WeasyPrint) are imported inside the commands that need them,
so `procure --help` and `procure validate` start fast. No `from __future__ import annotations` here:
typer reads every command's annotations at start-up, and string annotations cost it an eval each
(67 ms against 10 ms for the whole app).
"""

import contextlib
import functools
import io
import json
import os
import sys
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, TypeVar

import typer
from typer.core import TyperGroup

try:  # typer 0.2x carries its own copy of click
    from typer._click import exceptions as click
except ImportError:  # older typer: click itself
    import click.exceptions as click  # type: ignore[no-redef]

from procure import __version__
from procure.errors import InputError
from procure.status import ExitStatus

def _usage_problem(error: click.UsageError) -> str:
    """A usage error (click's or ours) as procure states problems: `where: what was expected`."""
    param = getattr(error, "param", None)
    where = (error.ctx.command_path if error.ctx else "procure")
    if isinstance(error, click.NoSuchOption):
        near = f" (did you mean {' or '.join(sorted(error.possibilities))}?)" if error.possibilities else ""
        return f"{where}: {error.option_name}: no such option{near}"
    if isinstance(error, click.BadParameter) and param is not None:
        name = max(param.opts, key=len) if getattr(param, "opts", None) else param.human_readable_name
        if isinstance(error, click.MissingParameter):
            if not getattr(param, "opts", None) or param.param_type_name == "argument":  # typer 0.2x's arguments have no make_metavar
                return f"{where}: missing argument {param.metavar or param.name.upper()}"
            return f"{where}: {name}: missing: give {param.make_metavar(error.ctx) if error.ctx and hasattr(param, 'make_metavar') else 'a value'}"
        return f"{where}: {name}: {error.message}"
    message = error.message.rstrip(".")
    return f"{where}: {message[:1].lower()}{message[1:]}"


class _UsageError(click.UsageError):
    """Shown in procure's own format: the problem, then where to read the usage; exit 2."""

    exit_code = ExitStatus.BAD_INPUT

    def __init__(self, error: click.UsageError):
        super().__init__(error.message, error.ctx)
        self.error = error

    def show(self, file: Any = None) -> None:
        from procure.textsafe import printable

        command = self.ctx.command_path if self.ctx else "procure"
        typer.echo(printable(_usage_problem(self.error)), err=True)
        typer.echo(f"1 problem found; nothing was written. Usage: {command} --help", err=True)


def _own_format(error: click.UsageError) -> click.UsageError:
    # "no arguments: show the help" is a usage error to click but help to the user: left as it is
    if isinstance(error, _UsageError) or type(error).__name__ == "NoArgsIsHelpError":
        return error
    return _UsageError(error)


class _Group(TyperGroup):
    """The command group: every usage error, click's own included, in procure's format (exit 2)."""

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _own_format(error) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _own_format(error) from None


app = typer.Typer(
    cls=_Group,
    name="procure",
    help=(
        "Compare vendor offers for B200 GPU hours by expected full cost per successful task.\n\n"
        "Commands work on the workspace holding procure.yaml (with offers/, grades/, performance/, "
        "market/), found from the current folder upward as git finds a repository; use --workspace DIR "
        "for another. Tab completion: procure --install-completion (bash, zsh, fish, PowerShell)."
    ),
    no_args_is_help=True,
    add_completion=True,
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


class CompareFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    xlsx = "xlsx"


class RankBy(str, Enum):
    snapshot = "snapshot"
    horizon = "horizon"


class ListFormat(str, Enum):
    table = "table"
    json = "json"


class SchemaName(str, Enum):
    """Inputs (offer, grade, workspace) and every --format json document (schemas.py)."""

    offer = "offer"
    grade = "grade"
    workspace = "workspace"
    evaluation = "evaluation"
    grading = "grading"
    rate = "rate"
    whatif = "whatif"
    price_to_win = "price-to-win"
    position = "position"
    index = "index"
    hedge = "hedge"
    sensitivity = "sensitivity"
    history = "history"
    diff = "diff"
    reevaluate = "reevaluate"
    cashflow = "cashflow"
    plan = "plan"
    scorecard = "scorecard"


# One vocabulary for every command: an offer is `--offer ID`, a count of top offers `--top N`, the
# workspace `-w/--workspace DIR`, files FILE, dates DATE. Older spellings stay as hidden aliases.
# Commands take these definitions rather than spelling their own.

WorkspaceOption = Annotated[
    Path,
    typer.Option(
        "--workspace",
        "-w",
        metavar="DIR",
        help="Workspace folder (default: the nearest folder holding procure.yaml, here or above).",
        file_okay=False,
        show_default=False,
    ),
]


def _ranks_by_horizon(rank_by: RankBy, months: int | None, where: str) -> bool:
    """--rank-by horizon needs a horizon: else a clear error (exit 2)."""
    if rank_by is RankBy.horizon and months is None:
        from procure.errors import Problem

        raise InputError([Problem("--rank-by", None, "", f"ranking by the horizon needs {where}")])
    return rank_by is RankBy.horizon


def _as_of(value: Optional[str]) -> Optional[date]:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"must be a date like 2026-11-30 (got {value!r})") from None
    from procure.io.yamlsafe import FIRST_YEAR, LAST_YEAR

    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise typer.BadParameter(f"must be a date between {FIRST_YEAR} and {LAST_YEAR} (got {value})")
    return day


RankByOption = Annotated[RankBy, typer.Option("--rank-by", help="Rank by the cost per task today (snapshot) or over the horizon (horizon: --horizon N, or horizon.months in procure.yaml).")]
AsOfOption = Annotated[
    Optional[str],
    typer.Option(
        "--as-of", metavar="DATE", callback=_as_of, help="Evaluate as of this date, YYYY-MM-DD (default: as_of in procure.yaml, else today).", show_default=False
    ),
]
OutOption = Annotated[
    Optional[Path],
    typer.Option(
        "--out",
        "-o",
        metavar="FILE",
        help="Write to this file (missing folders are created) instead of standard output; the suffix sets the format unless --format is given.",
        dir_okay=False,
        show_default=False,
    ),
]
WideOption = Annotated[bool, typer.Option("--wide", help="Show every column of a table even when it is wider than the terminal.")]


def _names(value: Optional[str]) -> Optional[list[str]]:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise typer.BadParameter("name at least one column, e.g. --columns offer,p10,p90")
    return names


ColumnsOption = Annotated[
    Optional[str],
    typer.Option(
        "--columns",
        metavar="NAME,...",
        callback=_names,
        help="Show only these table columns, in this order (names as the headers in lower case with hyphens: offer, usd-1k-tasks, p10; an unknown name lists them all).",
        show_default=False,
    ),
]
def top_option(help: str) -> Any:
    """`--top N`: only the first N of a ranking."""
    return typer.Option("--top", metavar="N", min=1, help=help, show_default=False)


RankTopOption = Annotated[Optional[int], top_option("Print only the N top-ranked offers (table, Markdown, CSV; JSON carries every offer).")]


def _complete_offer_ids(incomplete: str) -> list[str]:
    """Tab completion of --offer: the ids in offers/ of the workspace found from here (a quick scan,
    no validation)."""
    import re

    from procure.io.workspace import find_workspace

    try:
        offers = find_workspace(Path(".")) / "offers"
    except InputError:
        return []
    ids = []
    for path in sorted(offers.glob("*.y*ml")):
        try:
            found = re.search(r"^id:\s*['\"]?([^'\"\s#]+)", path.read_text(encoding="utf-8", errors="replace")[:20_000], re.MULTILINE)
        except OSError:
            continue
        if found and found.group(1).startswith(incomplete):
            ids.append(found.group(1))
    return ids


def offer_option(help: str) -> Any:
    """`--offer ID`: one offer, named by its id."""
    return typer.Option("--offer", metavar="ID", help=help, show_default=False, autocompletion=_complete_offer_ids)


def offers_option(help: str) -> Any:
    """`--offer ID`, repeatable: several offers."""
    return typer.Option("--offer", metavar="ID", help=help + " Repeat for several.", show_default=False, autocompletion=_complete_offer_ids)


def alias(*names: str, metavar: str | None = None, **kwargs: Any) -> Any:
    """An older spelling, still accepted but hidden from --help."""
    return typer.Option(*names, metavar=metavar, hidden=True, show_default=False, **kwargs)


def horizon_option(help: str) -> Any:
    return typer.Option("--horizon", metavar="N", min=1, max=240, help=help, show_default=False)


def _one(option: str, value: Any, old: str, old_value: Any) -> Any:
    """The value of an option given under its name or its older alias (not both, unless equal)."""
    from procure.errors import Problem

    if old_value is not None and value is not None and old_value != value:
        raise InputError([Problem(option, None, "", f"{old} is the older name of {option}: give one of them")])
    return value if value is not None else old_value


SUFFIX_FORMATS = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".xlsx": "xlsx", ".pdf": "pdf", ".html": "html", ".htm": "html"}

E = TypeVar("E", bound=Enum)


def _format(given: E | None, out: Path | None, default: E) -> E:
    """--format when given, else the format the --out suffix names, else the default; a contradiction is refused."""
    from procure.errors import Problem

    choices = type(default)
    implied = SUFFIX_FORMATS.get(out.suffix.lower()) if out is not None else None
    if given is not None:
        given = choices(given)  # a test may pass the plain value
        if implied is not None and implied != given.value:
            raise InputError([Problem("--format", None, "", f"--format {given.value} contradicts --out {out} (a .{out.suffix.lower().lstrip('.')} file is {implied}): drop one or make them agree")])  # type: ignore[union-attr]
        return given
    if implied is None:
        return default
    try:
        return choices(implied)
    except ValueError:
        known = ", ".join(f".{k}" for k, v in SUFFIX_FORMATS.items() if v in {c.value for c in choices} and k != ".htm" and k != ".markdown")
        raise InputError([Problem("--out", None, "", f"this command does not write {implied} ({out}); it writes {', '.join(c.value for c in choices)}" + (f" (suffixes {known})" if known else ""))]) from None


def format_option(default: str = "table", help: str = "Output format") -> Any:
    """--format: given, or named by the --out suffix, else `default`."""
    return typer.Option("--format", "-f", help=f"{help} (default: what the --out suffix names, else {default}).", show_default=False)


F = TypeVar("F", bound=Callable[..., Any])


# A command still working after this many seconds shows a spinner on a terminal's standard error.
def _progress_after() -> float:
    try:
        return max(0.0, float(os.environ.get("PROCURE_PROGRESS_AFTER", "1.5")))
    except ValueError:
        return 1.5


PROGRESS_AFTER = _progress_after()
_spinner: dict[str, Callable[[], None]] = {}


@contextlib.contextmanager
def _working():  # type: ignore[no-untyped-def]
    """A spinner on standard error once a command has run PROGRESS_AFTER seconds, if that is a
    terminal; nothing in pipes. Output (and a command's own progress bar) stops it first."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    import threading

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(SpinnerColumn(), TextColumn("working"), TimeElapsedColumn(), console=console, transient=True, redirect_stdout=False, redirect_stderr=False)
    bar.add_task("working", total=None)
    lock = threading.Lock()
    stopped = []

    def start() -> None:
        with lock:  # never after stop(), even when the timer fires while output begins
            if not stopped:
                bar.start()

    timer = threading.Timer(PROGRESS_AFTER, start)
    timer.daemon = True

    def stop() -> None:
        timer.cancel()
        with lock:
            stopped.append(True)
            bar.stop()

    _spinner["stop"] = stop
    timer.start()
    try:
        yield
    finally:
        _spinner.pop("stop", lambda: None)()


def _quiet() -> None:
    """Stop the spinner before anything is written."""
    _spinner.pop("stop", lambda: None)()


def _say(message: str) -> None:
    """A line for people on standard error (the spinner stopped first)."""
    _quiet()
    typer.echo(message, err=True)


def handles_input_errors(command: F) -> F:
    """Bad input: one line per problem on standard error, exit 2, no traceback, nothing written.

    Also shows a spinner on a terminal while a command takes more than PROGRESS_AFTER seconds.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from procure.io.files import forget_inputs

        forget_inputs()  # what an earlier command in this process read is not this one's input
        try:
            _columns_need_a_table(kwargs)
            with _working():
                return command(*args, **kwargs)
        except InputError as exc:
            for problem in exc.problems:
                _say(str(problem))
            count = len(exc.problems)
            _say(f"{count} problem{'s' if count != 1 else ''} found; nothing was written.")
            raise typer.Exit(ExitStatus.BAD_INPUT) from None
        except KeyboardInterrupt:
            _say("interrupted; nothing was written.")
            from procure.io.solvecache import solving

            if solving():  # a solve abandoned in its thread: end now rather than wait up to plan.time_limit_s
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(ExitStatus.INTERRUPTED)
            raise typer.Exit(ExitStatus.INTERRUPTED) from None

    return wrapper  # type: ignore[return-value]


def _columns_need_a_table(kwargs: dict[str, Any]) -> None:
    """--columns chooses a table's columns: with another format (given, or named by --out) it is refused."""
    if not kwargs.get("columns"):
        return
    given = kwargs.get("format")
    out = kwargs.get("out")
    fmt = getattr(given, "value", given) if given is not None else (SUFFIX_FORMATS.get(Path(out).suffix.lower()) if out is not None else None)
    if fmt not in (None, "table"):
        from procure.errors import Problem

        raise InputError([Problem("--columns", None, "", f"chooses the columns of a table; {fmt} carries every column: drop --columns or use --format table")])


def _day(value: date | str | None) -> date | None:
    """--as-of, already parsed by its callback (a string only when a test calls a command directly)."""
    return date.fromisoformat(value) if isinstance(value, str) else value


def _evaluation(workspace: Path, as_of: date | None):  # type: ignore[no-untyped-def]
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    return evaluate(load_workspace(workspace), _day(as_of))


def _console(stderr: bool = False):  # type: ignore[no-untyped-def]
    from rich.console import Console

    # Vendor text is data: no rich markup, emoji codes or highlighting is read into it.
    plain = {"markup": False, "emoji": False, "highlight": False}
    console = Console(stderr=stderr, **plain)
    if not console.is_terminal and "COLUMNS" not in os.environ:  # piped: do not squeeze tables into 80 columns
        console = Console(stderr=stderr, width=200, **plain)
    return console


@contextlib.contextmanager
def _progress(label: str, enabled: bool = True):  # type: ignore[no-untyped-def]
    """A progress bar on standard error when it is a terminal; nothing in pipes, files or JSON."""
    from rich.console import Console

    _quiet()
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


@contextlib.contextmanager
def _stages(enabled: bool = True):  # type: ignore[no-untyped-def]
    """Progress by stage on standard error when it is a terminal, nothing in pipes or files.

    Yields stage(what, done=None, total=None): a spinner with the stage's name, and a count (pages,
    charts, draws) where one is known.
    """
    from rich.console import Console

    _quiet()
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield lambda what, done=None, total=None: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True) as bar:
        current = {"what": "", "task": bar.add_task("starting", total=None)}

        def stage(what: str, done: int | None = None, total: int | None = None) -> None:
            if what != current["what"]:  # a new stage: its own count (or none) and its own clock
                bar.remove_task(current["task"])
                current.update(what=what, task=bar.add_task(what, total=total, completed=done or 0))
            else:
                bar.update(current["task"], completed=done or 0, total=total)

        yield stage


def _emit(text: str, out: Path | None, replace_inputs: bool = False, into: str | None = None) -> None:
    """Standard output carries only the requested format; --out writes the file atomically."""
    _quiet()
    if out is None:
        sys.stdout.write(text)
        return
    from procure.io.files import write_atomic

    write_atomic(out, text, replace_inputs, into)
    _say(f"wrote {out}")


def _doc(command: str, text: str, format: Any, ev: Any = None, schema: str | None = None, as_of: Any = None, inputs: Any = None) -> str:
    """JSON in the envelope every JSON output shares (envelope.py); other formats as rendered."""
    if getattr(format, "value", format) != "json":
        return text
    from procure.render.envelope import dumps

    if ev is not None:
        as_of, inputs = ev.as_of, ev.inputs
    return dumps(command, text, as_of, inputs, schema)


def _hashed(path: Path) -> list[dict[str, str]]:
    """A file read outside a workspace, as the envelope lists inputs: its path and SHA-256."""
    import hashlib

    return [{"path": str(path), "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}]


def _emit_table(table: Any, out: Path | None, wide: bool = False, first: str | None = None, columns: Optional[list[str]] = None) -> None:
    """A table on the terminal fits its width (least important columns left out, and named) unless --wide;
    `first` is a line printed above it (the recommendation); `columns` (--columns) chooses and orders them."""
    if columns:
        from procure.render.fit import choose, column_names

        unknown = choose(table, columns)
        if unknown:
            import difflib

            from procure.errors import Problem

            known = column_names(table)
            problems = []
            for name in unknown:
                near = difflib.get_close_matches(name.lower(), known, n=2, cutoff=0.6)
                hint = f"; did you mean {' or '.join(near)}?" if near else ""
                problems.append(Problem("--columns", None, "", f"no column named '{name}'{hint} (columns: {', '.join(known)})"))
            raise InputError(problems)
    _quiet()
    if out is None:
        from procure.render.fit import clipped, fit, hidden_note, natural_width

        console = _console()
        if first:
            console.print(first)
        if wide:
            from rich.console import Console

            console = Console(width=max(console.width, natural_width(console, table)), markup=False, emoji=False, highlight=False)
            console.print(table)
            return
        dropped = fit(console, table, console.width)
        console.print(table)
        if dropped or clipped(table):
            console.print(hidden_note(dropped, console.width, clipped(table)))
        return
    from rich.console import Console

    console = Console(record=True, width=200, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    if first:
        console.print(first)
    console.print(table)
    _emit(console.export_text(), out)


# --- commands -----------------------------------------------------------------------------------


@app.command()
@handles_input_errors
def validate(workspace: WorkspaceOption = Path("."), as_of: AsOfOption = None) -> None:
    """Check every file of the workspace and list every problem, one line each.

    Exit status 0 when the workspace is valid, 2 when it is not. Problems read
    `file:line: field: message`. Checklist claims the service terms do not back
    (an attestation, isolated monitoring, health checks) are warned about on
    standard error, naming both places; the service terms are used.

    Example:

    \b
        procure validate --workspace ./rfp-2026-11
    """
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    ev = evaluate(ws, _day(as_of))
    from procure.model.rating import contradiction_warnings

    for offer in ws.offers:
        for warning in contradiction_warnings(offer, ws.lines[offer.id]):
            typer.echo(f"warning: {warning}", err=True)
    from procure.analysis.evaluate import verdict_lines
    from procure.io.grades import stale_grade_warnings

    for warning in stale_grade_warnings(ws.grades, ws.root):
        typer.echo(f"warning: {warning}", err=True)
    curves = len(ws.curves)
    typer.echo(
        f"ok: {len(ws.offers)} offers, {len(ws.grades)} grades, {curves} reference curve{'s' if curves != 1 else ''}, "
        f"{len(ws.index)} index levels; {len(ev.ranked)} acceptable as of {ev.as_of}"
    )
    for line in verdict_lines(ev):
        typer.echo(line)


@app.command()
@handles_input_errors
def grade(
    offer: Annotated[Optional[list[str]], offers_option("Show every grade's requirements for this offer.")] = None,
    top: Annotated[Optional[int], top_option("Print only the N offers of the highest grades, ungraded last, then by id (JSON carries every offer).")] = None,
    format: Annotated[Optional[ListFormat], format_option()] = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
    out: OutOption = None,
    explain: Annotated[Optional[str], alias("--explain", metavar="ID")] = None,
) -> None:
    """Show each offer's grade, with every requirement of its grade (or of the nearest grade) pass/fail.

    An offer gets the highest-ranked grade whose every requirement holds; an ungraded
    offer shows what it misses for the nearest grade.

    Examples:

    \b
        procure grade
        procure grade --offer northwind-b200-mc
        procure grade --format json
        procure grade --top 5 --columns offer,grade,requirements
    """
    from procure.model.grading import grade_offer
    from procure.io.workspace import load_workspace

    format = _format(format, out, ListFormat.table)
    named = list(offer or []) + ([explain] if explain is not None else [])
    ws = load_workspace(workspace)
    offers = ws.offers
    if named:
        by_id = {o.id: o for o in ws.offers}
        unknown = [_unknown_offer(i, list(by_id)) for i in named if i not in by_id]
        if unknown:
            raise InputError(unknown)
        offers = [by_id[i] for i in dict.fromkeys(named)]
    results = [(o, grade_offer(o, ws.grades)) for o in offers]
    if top is not None and format is not ListFormat.json:  # the highest grades first: a grade's rank (1 highest), ungraded last
        results = sorted(results, key=lambda pair: (pair[1].assigned.grade.rank if pair[1].assigned else float("inf"), pair[0].id))[:top]
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
        from procure.render.envelope import dumps

        _emit(dumps("grade", {"offers": payload}, None, ws.inputs, schema="grading"), out)
        return
    if named:
        from rich.console import Group

        from procure.render.ranking import explain_table

        _emit_table(Group(*(explain_table(o.id, o.vendor, r.checks, r.grade) for o, r in results)), out, wide, columns=columns)
        return
    from procure.render.ranking import grades_table

    _emit_table(grades_table(results), out, wide, columns=columns)


def _chosen(ev: Any, offers: Optional[list[str]], top: Optional[int], order: Optional[Callable[[Any], list]] = None) -> Any:
    """The Evaluation cut to the offers to print: those named with --offer (an unknown id gets a
    "did you mean"), then the first `top` of them (--top) in the ranking's order (`order`: by score
    for ratings; else acceptable offers by rank)."""
    if not offers and top is None:
        return ev
    known = [o.id for o in ev.offers]
    unknown = [_unknown_offer(i, known) for i in offers or [] if i not in known]
    if unknown:
        raise InputError(unknown)
    records = order(ev) if order is not None else ev.offers
    if offers:
        records = [r for r in records if r.id in set(offers)]
    if top is not None:
        ranking = order(ev) if order is not None else ev.ranked  # what --top counts in
        named = {r.id for r in records}
        records = [r for r in ranking if r.id in named][:top]
    return ev.model_copy(update={"offers": records})


def _problem(where: str, message: str):  # type: ignore[no-untyped-def]
    from procure.errors import Problem

    return Problem(where, None, "", message)


def _unknown_offer(offer_id: str, known: list[str]):  # type: ignore[no-untyped-def]
    from procure.errors import unknown_offer

    return unknown_offer(offer_id, known)


@app.command()
@handles_input_errors
def compare(
    format: Annotated[Optional[CompareFormat], format_option(help="Output format; xlsx needs --out")] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    uncertainty: Annotated[bool, typer.Option("--uncertainty", help="Add Monte Carlo P10/P50/P90 and each offer's probability of being cheapest.")] = False,
    draws: Annotated[Optional[int], typer.Option("--draws", metavar="N", min=100, max=1_000_000, help="Monte Carlo draws (default: uncertainty.draws, 10,000).", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", metavar="N", min=0, help="Random seed (default: uncertainty.seed, 7): same seed, same numbers.", show_default=False)] = None,
    horizon: Annotated[Optional[int], horizon_option("Add the horizon over this many months: the table and Markdown gain its cost per task and commitment columns; JSON, CSV and xlsx also carry its total and NPV cost.")] = None,
    rank_by: RankByOption = RankBy.snapshot,
    offer: Annotated[Optional[list[str]], offers_option("Print only this offer (ranked as among all).")] = None,
    top: RankTopOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Rank the offers by expected full cost per successful task.

    Acceptable offers come first by rank; offers failing a gate follow with their
    reasons. JSON is the full Evaluation (every figure and reason).

    Examples:

    \b
        procure compare
        procure compare --format json --as-of 2026-11-29 > evaluation.json
        procure compare --out out/comparison.csv
        procure compare --uncertainty --draws 20000 --seed 11
        procure compare --out comparison.xlsx
        procure compare --horizon 36 --rank-by horizon
        procure compare --top 3 --columns rank,offer,vendor,usd-1k-tasks
        procure compare --offer keel-b200-mc --uncertainty
    """
    format = _format(format, out, CompareFormat.table)
    if format is CompareFormat.xlsx and out is None:
        from procure.errors import Problem

        raise InputError([Problem("--format xlsx", None, "", "a workbook is written to a file: add --out comparison.xlsx")])
    from procure.analysis.decision import recommend
    from procure.analysis.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    unknown = [_unknown_offer(i, [o.id for o in ws.offers]) for i in offer or [] if i not in {o.id for o in ws.offers}]
    if unknown:  # before the evaluation and the plan: a mistyped id is told at once
        raise InputError(unknown)
    months = horizon or (ws.config.horizon.months if rank_by is RankBy.horizon else None)
    by_horizon = _ranks_by_horizon(rank_by, months, "--horizon N (or horizon.months in procure.yaml)")
    if uncertainty or draws is not None or seed is not None:
        with _progress("Monte Carlo", enabled=format is CompareFormat.table) as progress:
            ev, inputs = evaluate_with_inputs(ws, _day(as_of), MonteCarlo(draws, seed, progress), months, by_horizon)
    else:
        ev, inputs = evaluate_with_inputs(ws, _day(as_of), None, months, by_horizon)
    with _progress("the purchase plan", enabled=format is CompareFormat.table and ws.config.demand is not None):
        rec, purchase = recommend(ws, ev, inputs)
    _warn_plan_failed(rec)
    shown = _chosen(ev, offer, top)  # JSON and the workbook carry every offer
    if format is CompareFormat.table:
        from procure.analysis.evaluate import verdict_lines
        from procure.render.ranking import comparison_table

        _emit_table(comparison_table(shown), out, wide, first=rec.headline, columns=columns)
        if out is None:
            for line in verdict_lines(ev):
                typer.echo(line)
        return
    if format is CompareFormat.xlsx:
        from procure.io.files import write_atomic
        from procure.render.workbook import to_xlsx

        assert out is not None
        # The analyses with a table, each a sheet: the plan as solved above, the offers over the horizon
        # (this evaluation's, or one over horizon.months, else 36, beside it), the sensitivity.
        flows = None
        if not ev.horizon_months:
            flows, _ = evaluate_with_inputs(ws, _day(as_of), None, ws.config.horizon.months or DEFAULT_HORIZON, False)
        write_atomic(out, to_xlsx(ev, inputs, purchase, flows, _sensitivity(ws, ev, inputs, [o.id for o in ev.ranked][:3]) if ev.ranked else None, rec.plan_failed))
        _say(f"wrote {out}")
        return
    from procure.render.ranking import RENDERERS

    _emit(RENDERERS[format.value]((ev if format is CompareFormat.json else shown).model_copy(update={"command": "compare"})), out)


@app.command()
@handles_input_errors
def rate(
    offer: Annotated[Optional[list[str]], offers_option("Print only this offer's rating.")] = None,
    top: Annotated[Optional[int], top_option("Print only the N highest-scored offers (table, Markdown, CSV; JSON carries every offer).")] = None,
    format: Annotated[Optional[TextFormat], format_option()] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Rate the operator of every managed offer from its checklist evidence.

    Scores run 0-100 per category (security, lifecycle, orchestration, storage,
    networking, reliability, monitoring, pricing, partnerships, availability) and
    overall. Tiers are relative to the peers in this evaluation; a critical failure
    (no SOC 2 Type II / ISO 27001, monitoring open to other tenants) is Underperform.
    The absolute score sets the reliability factor on SLA availability. Bare metal and
    owned offers are not rated: the operating work is yours.

    Examples:

    \b
        procure rate
        procure rate --format json | jq '.offers[] | {id, tier, score}'
        procure rate --top 5 --columns offer,score,tier,critical
        procure rate --offer keel-b200-mc
    """
    from procure.render.ranking import by_score

    format = _format(format, out, TextFormat.table)
    ev = _evaluation(workspace, as_of)
    shown = _chosen(ev, offer, top, order=by_score)
    if format is TextFormat.table:
        from procure.render.ranking import rating_table

        _emit_table(rating_table(shown), out, wide, columns=columns)
        return
    from procure.render.ranking import RATING_RENDERERS

    _emit(_doc("rate", RATING_RENDERERS[format.value](ev if format is TextFormat.json else shown), format, ev), out)


def _share(text: str, option: str) -> float:
    """'5%' or 0.05 -> 0.05."""
    from procure.errors import Problem

    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1]) / 100 if percent else float(raw)
    except ValueError:
        raise InputError([Problem(option, None, "", f"expected a share like 5% or 0.05 (got {text!r})")]) from None
    if not percent and value > 1:  # a bare 5 would mean +500%: say which was meant
        raise InputError([Problem(option, None, "", f"a bare number is a share from 0 to 1 (0.05 = 5%): write {raw}% for {raw} percent (got {text!r})")])
    if not 0 <= value <= 10 or value != value:  # at most +1000%
        raise InputError([Problem(option, None, "", f"expected a share like 5% or 0.05, from 0 to 1000% (got {text!r})")])
    return value


def _fraction(value: float | None, option: str) -> float | None:
    if value is not None and not 0 < value <= 1:
        from procure.errors import Problem

        raise InputError([Problem(option, None, "", f"must be a share between 0 and 1, e.g. 0.999 (got {value:g})")])
    return value


def _amount(value: float, option: str) -> float:
    if value < 0 or value != value or value in (float("inf"), float("-inf")):
        from procure.errors import Problem

        raise InputError([Problem(option, None, "", f"must be an amount of at least 0 (got {value:g})")])
    return value


@app.command()
@handles_input_errors
def whatif(
    offer: Annotated[Optional[str], offer_option("The offer to change.")] = None,
    throughput: Annotated[Optional[str], typer.Option("--throughput", metavar="CHANGE", help="Change in throughput, e.g. +50%.", show_default=False)] = None,
    price: Annotated[Optional[str], typer.Option("--price", metavar="CHANGE", help="Change in price, e.g. -5% (owned: capex).", show_default=False)] = None,
    availability: Annotated[Optional[float], typer.Option("--availability", metavar="SHARE", help="SLA availability, e.g. 0.999 (owned: our host's, self_operated_jobs.hardware_repair).", show_default=False)] = None,
    utilization: Annotated[Optional[float], typer.Option("--utilization", metavar="SHARE", help="Utilization, e.g. 0.9.", show_default=False)] = None,
    gpus: Annotated[Optional[int], typer.Option("--gpus", metavar="N", min=1, help="A different committed GPU count.", show_default=False)] = None,
    one_off: Annotated[float, typer.Option("--one-off", metavar="AMOUNT", help="What the change costs once (workspace currency).")] = 0.0,
    monthly: Annotated[float, typer.Option("--monthly", metavar="AMOUNT", help="What the change costs every month.")] = 0.0,
    price_to_win: Annotated[bool, typer.Option("--price-to-win", help="For every acceptable offer, the GPU-hour price that ties the leader.")] = False,
    top: RankTopOption = None,
    format: Annotated[Optional[TextFormat], format_option()] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
    offer_id: Annotated[Optional[str], typer.Argument(metavar="[ID]", hidden=True, show_default=False)] = None,
) -> None:
    """Try a change on one offer: is a better stack or process worth what it costs?

    Recomputes the offer with the change and reports cost per successful task before
    and after, the monthly saving at the workload's demand, the net of the change's
    monthly cost, the payback of its one-off cost (discounted at the cost of capital,
    flagged beyond the offer's term), and the throughput gain that alone
    would break even. When the committed GPUs are already partly idle, a faster stack
    saves nothing until the commitment shrinks: try --gpus. With --price-to-win, the
    list price at which every acceptable offer would tie the leader.

    Examples:

    \b
        procure whatif --offer keel-b200-mc --throughput +50% --one-off 200000 --monthly 15000
        procure whatif --offer northwind-b200-mc --throughput +40% --gpus 384
        procure whatif --offer halvard-b200-ms --price -5% --format json
        procure whatif --price-to-win --top 5 --columns offer,list-usd-gpu-h,price-to-tie-usd-gpu-h
    """
    from procure.io.workspace import load_workspace

    format = _format(format, out, TextFormat.table)
    offer_id = _one("--offer", offer, "the offer argument", offer_id)
    ws = load_workspace(workspace)
    if top is not None and not price_to_win:
        raise InputError([_problem("--top", "ranks the offers of --price-to-win: add --price-to-win")])
    if price_to_win and (offer_id is not None or any(v is not None for v in (throughput, price, availability, utilization, gpus)) or one_off or monthly):
        from procure.errors import Problem

        raise InputError([Problem("whatif", None, "--price-to-win", "lists every acceptable offer: give no --offer and no change with it")])
    if price_to_win:
        from procure.analysis.evaluate import evaluate
        from procure.analysis.whatif import price_to_win as compute_price_to_win

        ev = evaluate(ws, _day(as_of))
        rows = compute_price_to_win(ev)
        if top is not None and format is not TextFormat.json:
            rows = rows[:top]
        if format is TextFormat.table:
            from procure.render.whatif import price_to_win_table

            _emit_table(price_to_win_table(rows, ev.currency), out, wide, columns=columns)
        else:
            from procure.render.whatif import price_to_win_text

            _emit(_doc("whatif", price_to_win_text(rows, ev.currency, format.value), format, ev, schema="price-to-win"), out)
        return
    if offer_id is None:
        from procure.errors import Problem

        raise InputError([Problem("whatif", None, "", "name the offer to change with --offer ID, or use --price-to-win")])
    from procure.analysis.whatif import Change, parse_change
    from procure.analysis.whatif import whatif as run_whatif

    change = Change(
        throughput=parse_change(throughput, "--throughput") if throughput is not None else None,
        price=parse_change(price, "--price") if price is not None else None,
        availability=_fraction(availability, "--availability"),
        utilization=_fraction(utilization, "--utilization"),
        gpus=gpus,
        one_off=_amount(one_off, "--one-off"),
        monthly=_amount(monthly, "--monthly"),
    )
    if all(v is None for v in (throughput, price, availability, utilization, gpus)) and not one_off and not monthly:
        raise InputError([_problem("whatif", "no change to try: give --throughput, --price, --availability, --utilization or --gpus (and what it costs: --one-off, --monthly)")])
    result = run_whatif(ws, offer_id, change, _day(as_of))
    if format is TextFormat.table:
        from procure.render.whatif import whatif_table

        _emit_table(whatif_table(result), out, wide, columns=columns)
        return
    from procure.render.whatif import WHATIF_RENDERERS

    from procure.analysis.evaluate import resolve_as_of

    _emit(_doc("whatif", WHATIF_RENDERERS[format.value](result), format, as_of=resolve_as_of(ws, _day(as_of)), inputs=ws.inputs), out)


@app.command()
@handles_input_errors
def position(
    current: Annotated[Optional[float], typer.Option("--current", metavar="AMOUNT", help="Our cost per successful task to place.", show_default=False)] = None,
    offer: Annotated[Optional[str], offer_option("Place this offer's cost per task.")] = None,
    top: Annotated[Optional[int], top_option("Print only the N cheapest points of the curve (table, Markdown, CSV; JSON carries the whole curve).")] = None,
    format: Annotated[Optional[TextFormat], format_option()] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
    current_offer: Annotated[Optional[str], alias("--current-offer", metavar="ID")] = None,
) -> None:
    """Show where a cost per successful task stands on the cost curve.

    The curve holds the acceptable offers and the competitor benchmarks of procure.yaml
    (market.competitors: name, cost_per_task, date); our own history comes from
    market.own. Without --current or --offer, our latest recorded cost (else the
    recommended offer) is placed. With several dates, each competitor's change is set
    against ours: improving is not the same as getting ahead.

    Examples:

    \b
        procure position
        procure position --current 0.0071
        procure position --offer northwind-b200-mc --format json
        procure position --top 5
    """
    from procure.analysis.evaluate import evaluate
    from procure.analysis.position import position as place
    from procure.io.workspace import load_workspace

    format = _format(format, out, TextFormat.table)
    current_offer = _one("--offer", offer, "--current-offer", current_offer)
    ws = load_workspace(workspace)
    ev = evaluate(ws, _day(as_of))
    result = place(ev, ws.config.market, current, current_offer)
    if top is not None and format is not TextFormat.json:
        result = result.model_copy(update={"curve": result.curve[:top]})
    if format is TextFormat.table:
        from procure.render.position import position_table

        _emit_table(position_table(result), out, wide, columns=columns)
        return
    from procure.render.position import position_text

    _emit(_doc("position", position_text(result, format.value), format, ev), out)


index_app = typer.Typer(help="Rental price benchmarks built from price observations.", no_args_is_help=True)
app.add_typer(index_app, name="index")


class Method(str, Enum):
    median = "median"
    trimmed_mean = "trimmed-mean"
    volume_weighted = "volume-weighted"


class Kind(str, Enum):
    advertised = "advertised"
    transacted = "transacted"
    all = "all"


class Term(str, Enum):
    short = "0-3"
    medium = "4-12"
    long = "13-36"


class Period(str, Enum):
    week = "week"
    month = "month"


@index_app.command("build")
@handles_input_errors
def index_build(
    quotes: Annotated[Path, typer.Argument(metavar="FILE", help="Observations CSV: date, gpu, price, kind, term_months, seller, grade, gpu_hours.", dir_okay=False)],
    method: Annotated[Method, typer.Option("--method", help="How a period's prices become its level.")] = Method.median,
    kind: Annotated[Kind, typer.Option("--kind", help="Which prices: advertised offers, completed trades, or all.")] = Kind.all,
    term: Annotated[Optional[Term], typer.Option("--term", help="Only these contract terms, in months.", show_default=False)] = None,
    grade: Annotated[Optional[str], typer.Option("--grade", metavar="ID", help="Only observations of this grade.", show_default=False)] = None,
    gpu: Annotated[str, typer.Option("--gpu", metavar="NAME", help="Only observations of this GPU.")] = "B200",
    scope_adjust: Annotated[bool, typer.Option("--scope-adjust", help="Add the ops cost per GPU-hour of the jobs each row's grade leaves to the buyer.")] = False,
    period: Annotated[Period, typer.Option("--period", help="Index period.")] = Period.month,
    format: Annotated[Optional[TextFormat], format_option("csv", "csv: the index (period, level, observations); the others add the methodology")] = None,
    out: OutOption = None,
    replace: Annotated[bool, typer.Option("--replace", help="Allow --out to replace a file of the workspace's market/ folder, e.g. market/index.csv (never the observations read).")] = False,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Build a rental price index from price observations, and show how its level depends on the method.

    Strata (term bucket x kind x grade; index.strata) get fixed weights (their share of
    the base period's quotes, index.base_period, or index.weights), each stratum's level
    by the chosen method (median, trimmed mean, or volume-weighted mean), no seller above
    index.seller_cap of a stratum, thin strata (under index.min_quotes) carried forward
    and flagged. The index is chain-linked: each period moves by the weighted strata's
    price changes, so added or removed quotes never revise an earlier month. A reading
    in index.readings is spliced in, flagged with its level jump. The
    methodology, always shown (on standard error with csv), gives the latest period's
    level under every method x kind x scope, the strata and the rules. Only procure.yaml
    and grades/ are read, never the offers. The CSV can serve as market/index.csv.

    Examples:

    \b
        procure index build market/quotes.csv --method volume-weighted --kind transacted
        procure index build market/quotes.csv --term 13-36 --scope-adjust --out market/index-long.csv
        procure index build market/quotes.csv --period week --format table
        procure index build market/quotes.csv --out market/index.csv --replace
    """
    from procure.analysis.market import Filters, StrataSettings, build_index, read_quotes, scope_adjustments, settings_from
    from procure.io.workspace import load_settings

    format = _format(format, out, TextFormat.csv)
    _columns_need_a_table({"columns": columns, "format": format})  # csv by default here
    rows = read_quotes(quotes, str(quotes))
    # procure.yaml and the grades price the scope adjustment and set the strata; offers are not needed
    # (an index-linked offer needs the index first). A plain build does without a workspace.
    try:
        config, grades = load_settings(workspace)
        adjustments: dict[str, float] | None = scope_adjustments(grades, config.assumptions, config.index.scope_gpus)
        settings = settings_from(config.index)
    except InputError:
        if scope_adjust or (Path(workspace) / "procure.yaml").is_file():
            raise  # a procure.yaml with a problem is named, never built around (its weights and readings would be lost)
        adjustments, settings = None, StrataSettings()
    build = build_index(rows, method.value, kind.value, Filters(gpu=gpu, term=term.value if term else None, grade=grade), period.value, adjustments, scope_adjust, str(quotes), settings)
    _refuse_unused_index_settings(Path(workspace), settings, build, period.value)
    if format is TextFormat.table:
        from procure.render.market import index_table

        _emit_table(index_table(build), out, wide, columns=columns)
        return
    from procure.render.market import index_text

    # Rebuilding market/index.csv from the observations is what the built index is for: with --replace.
    # A new index CSV in market/ is what `index build` is for (an index-linked offer names it).
    csv_out = format is TextFormat.csv
    _emit(_doc("index", index_text(build, format.value), format, inputs=_hashed(quotes)), out, replace_inputs=replace and csv_out, into="market" if csv_out else None)
    if format is TextFormat.csv:
        from procure.render.market import methodology_table

        _console(stderr=True).print(methodology_table(build))
        for note in build.notes:
            _say(f"note: {note}")


def _refuse_unused_index_settings(workspace: Path, settings: Any, build: Any, period: str) -> None:
    """index settings the build would silently not use are refused (exit 2, nothing written): a base
    period without quotes or fixed weights for no stratum of the quotes (no level at all), a reading
    before the first period of quotes, and two readings in one period (only one can be its level)."""
    from procure.errors import Problem, format_field_path
    from procure.analysis.market import period_start
    from procure.io.yamlsafe import load_yaml

    if not build.points:
        return
    first, last = build.points[0].period, build.points[-1].period
    found: list[tuple[tuple[str | int, ...], str]] = []
    if settings.base is not None and settings.weights is None and all(p.level is None for p in build.points):
        found.append((("index", "base_period"), f"no quotes in the base period {settings.base} (the quotes run from {first} to {last}): expected a day within them, or index.weights"))
    if settings.weights is not None and all(p.level is None for p in build.points):
        named = ", ".join(" / ".join(s) for s in sorted(settings.weights))
        found.append((("index", "weights"), f"no stratum with a weight has quotes in the selection (weights for: {named}): expected strata of the quotes, as the strata table names them (index.strata: {', '.join(settings.by) or 'none'})"))
    seen: dict[Any, Any] = {}
    for i, reading in enumerate(settings.readings):
        start = period_start(reading.date, period)
        if start < first:
            found.append((("index", "readings", i, "date"), f"{reading.date} is before the first {period} of quotes ({first}): a reading is spliced into a period the quotes build"))
        elif start in seen:
            found.append((("index", "readings", i, "date"), f"{reading.date} is in the same {period} ({start}) as the reading on {seen[start]}: give each {period} one reading"))
        seen.setdefault(start, reading.date)
    if found:
        lines = load_yaml(workspace / "procure.yaml", "procure.yaml").lines
        raise InputError([Problem("procure.yaml", lines.line_of(loc), format_field_path(loc), msg) for loc, msg in found])


@app.command()
@handles_input_errors
def hedge(
    offer: Annotated[Optional[str], offer_option("The offer to hedge (default: hedge.offer in procure.yaml, else the recommendation: the purchase plan with demand:, else the top-ranked acceptable offer).")] = None,
    index: Annotated[Optional[Path], typer.Option("--index", metavar="FILE", help="Index history CSV (default: market/index.csv).", dir_okay=False, show_default=False)] = None,
    rent: Annotated[Optional[Path], typer.Option("--rent", metavar="FILE", help="Your rent history CSV: date, price (default: market/rent.csv when present).", dir_okay=False, show_default=False)] = None,
    format: Annotated[Optional[TextFormat], format_option()] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Recommend a rental price hedge for the recommendation: ratio, ladder, contracts, stress, limits.

    With demand: in procure.yaml the recommendation is the purchase plan, and what floats
    is its pay-as-used GPU-hours and index-linked commitments (ratio 1), by month of the
    plan; the reports hedge the same. For an offer, the exposure is its billed GPU-hours each month of hedge.horizon_months from
    delivery: index-linked months and months after the term (renewal) float, fixed-price
    months do not. h* = Cov(dS, dF) / Var(dF) comes from aligned period changes of your
    rent S and the index F, with its standard error and 95% interval, rho, R^2 and the
    basis volatility; the ladder uses 1 unless h* differs from 1 significantly, in
    contracts of hedge.contract_gpu_hours; the stress table moves the index -40% to +40%
    from hedge.forward (else today's index).

    Examples:

    \b
        procure hedge
        procure hedge --offer corvid-b200-idx --format json
        procure hedge --index market/index-transacted.csv --rent market/rent.csv
    """
    from procure.analysis.decision import recommend
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.hedging import recommended_hedge
    from procure.io.workspace import load_workspace

    format = _format(format, out, TextFormat.table)
    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, _day(as_of))
    purchase = None
    if offer is None and ws.config.hedge.offer is None:
        rec, purchase = recommend(ws, ev, inputs)
        _warn_plan_failed(rec)
    plan = recommended_hedge(ws, ev, purchase, offer, index, rent)
    if format is TextFormat.table:
        from procure.render.hedge import hedge_table

        _emit_table(hedge_table(plan), out, wide, columns=columns)
        return
    from procure.render.hedge import hedge_text

    _emit(_doc("hedge", hedge_text(plan, format.value), format, ev), out)


@app.command()
@handles_input_errors
def sensitivity(
    top: Annotated[Optional[int], top_option("How many of the top-ranked offers to follow (default 3).")] = None,
    offer: Annotated[Optional[list[str]], offers_option("Follow this offer instead of the top-ranked ones.")] = None,
    format: Annotated[Optional[TextFormat], format_option()] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
    offers: Annotated[Optional[int], alias("--offers", metavar="N", min=1)] = None,
) -> None:
    """Which assumption moves the ranking? Each uncertain input at its low and high value.

    One at a time, each input of procure.yaml's uncertainty section (each top offer's
    throughput, availability, utilization, staff cost, index level, exchange rates) is
    set to the low and then the high end of its distribution, the others as stated;
    the table gives the top offers' cost per successful task at each end, the largest
    swing among them, and whether the order of the top offers flips. Largest swing first
    (the reports draw the recommended offer's tornado).

    Examples:

    \b
        procure sensitivity
        procure sensitivity --top 5 --format json
        procure sensitivity --offer northwind-b200-mc --offer keel-b200-mc
    """
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.io.workspace import load_workspace

    format = _format(format, out, TextFormat.table)
    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, _day(as_of))
    if offer and (top is not None or offers is not None):
        raise InputError([_problem("--top", "follows the top-ranked offers, --offer the offers it names: give one of them")])
    if offer:
        acceptable = [o.id for o in ev.ranked]
        unknown = [_unknown_offer(i, [o.id for o in ev.offers]) for i in offer if i not in {o.id for o in ev.offers}]
        failing = [_problem("--offer", f"offer '{i}' fails a gate ({'; '.join(ev.offer(i).reasons)}): only acceptable offers are followed") for i in offer if i in {o.id for o in ev.offers} and i not in acceptable]
        if unknown or failing:
            raise InputError(unknown + failing)
        followed = list(dict.fromkeys(offer))
    else:
        followed = [o.id for o in ev.ranked][: offers if offers is not None else (top if top is not None else 3)]
    result = _sensitivity(ws, ev, inputs, followed)
    if format is TextFormat.table:
        from procure.render.sensitivity import sensitivity_table

        _emit_table(sensitivity_table(result, ev.currency), out, wide, columns=columns)
        return
    from procure.render.sensitivity import sensitivity_text

    _emit(_doc("sensitivity", sensitivity_text(result, ev.currency, format.value), format, ev), out)


def _sensitivity(ws: Any, ev: Any, inputs: Any, followed: list[str]) -> Any:
    """Each uncertain input at its low and high value, for the offers followed."""
    from procure.analysis.evaluate import gates_of
    from procure.analysis.uncertainty import sensitivity as run_sensitivity
    from procure.analysis.uncertainty import top_offer_positions

    top = top_offer_positions(followed, inputs.offers, len(followed))
    posteriors = None
    if ws.actuals:
        from procure.analysis.scorecard import evaluation_posteriors

        posteriors = evaluation_posteriors(ev, inputs, ws.config.uncertainty)
    return run_sensitivity(inputs.columns, inputs.model, inputs.offers, inputs.currencies, ev.currency, top, ws.config.uncertainty, gates_of(ev, inputs, ws.config), posteriors)


def _warn_plan_failed(rec) -> None:  # type: ignore[no-untyped-def]
    if rec.plan_failed:
        _say(f"warning: the purchase plan could not be solved ({rec.plan_failed}); the best single offer is recommended instead")


def _warn_expiring(ev) -> None:  # type: ignore[no-untyped-def]
    _quiet()
    for record in ev.offers:
        for note in record.notes:
            if note.startswith("expires in"):
                _say(f"warning: {record.id} {note}")


@app.command()
@handles_input_errors
def evaluate(
    save: Annotated[bool, typer.Option("--save", help="Store the Evaluation in the workspace history (.procure/history.sqlite).")] = False,
    label: Annotated[Optional[str], typer.Option("--label", metavar="TEXT", help="A label for the saved run, e.g. \"Nov RFP\".", show_default=False)] = None,
    format: Annotated[Optional[ListFormat], format_option(help="table: a one-line summary; json: the Evaluation")] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Run the evaluation, and with --save keep it in the workspace history for later diffs.

    Each saved run stores the whole Evaluation, the input files' SHA-256, the label and
    the time, in one transaction; several processes may save at once. Offers expiring
    within 14 days are warned about on standard error.

    Examples:

    \b
        procure evaluate --save --label "Nov RFP"
        procure evaluate --format json > evaluation.json
    """
    from procure.analysis.evaluate import evaluate as run_evaluation
    from procure.io.workspace import load_workspace

    format = _format(format, out, ListFormat.table)
    ws = load_workspace(workspace)
    ev = run_evaluation(ws, _day(as_of))
    _warn_expiring(ev)
    run_id = None
    if save:
        from procure.analysis.history import save_run

        run_id = save_run(ws.root, ev, label)
        _say(f"saved run {run_id}")
    if format is ListFormat.json:
        _emit(ev.model_copy(update={"command": "evaluate"}).to_json(), out)
        return
    leader = ev.ranked[0] if ev.ranked else None
    from procure.render.formats import per_thousand

    top = f"{leader.id} at {per_thousand(leader.metrics['cost_per_task'])} {ev.currency} per 1,000 successful tasks" if leader else "no acceptable offer"
    _emit(f"as of {ev.as_of}: {len(ev.ranked)} of {len(ev.offers)} offers acceptable; top: {top}" + (f"; saved as run {run_id}" if run_id else "") + "\n", out)


@app.command()
@handles_input_errors
def history(
    format: Annotated[Optional[ListFormat], format_option()] = None,
    out: OutOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """List the saved runs: id, time saved, as-of date, label, top offer.

    Examples:

    \b
        procure history
        procure history --format json
    """
    from procure.analysis.history import list_runs
    from procure.io.workspace import find_workspace

    format = _format(format, out, ListFormat.table)
    runs = list_runs(find_workspace(workspace))
    if not runs and format is not ListFormat.json:
        _emit("No saved runs yet: save one with `procure evaluate --save`.\n", out)
        return
    if format is ListFormat.json:
        from procure.render.envelope import dumps

        _emit(dumps("history", {"runs": [r.model_dump(mode="json") for r in runs]}), out)
        return
    from procure.render.history import history_table

    _emit_table(history_table(runs), out, wide, columns=columns)


class DiffFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


@app.command()
@handles_input_errors
def diff(
    base: Annotated[Optional[str], typer.Argument(metavar="[BASE]", help="A run id or an Evaluation JSON file (default: the run before HEAD).", show_default=False)] = None,
    head: Annotated[Optional[str], typer.Argument(metavar="[HEAD]", help="A run id or an Evaluation JSON file (default: the latest run).", show_default=False)] = None,
    format: Annotated[Optional[DiffFormat], format_option()] = None,
    out: OutOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
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

    from procure.io.workspace import find_workspace

    format = _format(format, out, DiffFormat.table)
    root = find_workspace(workspace)
    if head is None:
        latest = latest_run_id(root)
        if latest is None:
            from procure.errors import Problem

            raise InputError([Problem(".procure/history.sqlite", None, "", "no saved runs yet: save one with `procure evaluate --save`")])
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

        raise InputError([Problem("diff", None, "", f"BASE and HEAD are the same ({base}): name two different runs or files")])
    result = compare_runs(base_ev, head_ev, base_label, head_label)
    from procure.render.history import diff_json, diff_markdown, diff_table

    if format is DiffFormat.table:
        _emit_table(diff_table(result), out, wide, columns=columns)
    elif format is DiffFormat.json:
        _emit(_doc("diff", diff_json(result), format, head_ev), out)
    else:
        _emit(diff_markdown(result, title="Changes between two evaluations"), out)


@app.command()
@handles_input_errors
def reevaluate(
    max_increase: Annotated[Optional[str], typer.Option("--max-increase", metavar="SHARE", help="Fail when an acceptable offer's cost per task rises more than this, e.g. 5%.", show_default=False)] = None,
    fail_on: Annotated[Optional[str], typer.Option("--fail-on", metavar="LIST", help="Comma-separated: rank-change, grade-change, new-cheapest, gate-change (default: all, or reevaluate.fail_on).", show_default=False)] = None,
    accept: Annotated[bool, typer.Option("--accept", help="Save the run as the new baseline even when a threshold is breached.")] = False,
    label: Annotated[Optional[str], typer.Option("--label", metavar="TEXT", help="A label for the saved run.", show_default=False)] = None,
    max_delivered_overrun: Annotated[Optional[str], typer.Option("--max-delivered-overrun", metavar="SHARE", help="Signed vendors: fail when the latest month's delivered cost per task exceeds the promised by more than this, e.g. 10% (default: actuals.max_cost_overrun).", show_default=False)] = None,
    format: Annotated[Optional[DiffFormat], format_option(help="Output format; markdown fits a pull-request comment")] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
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
        procure reevaluate --accept --label "Dec re-check"
    """
    from procure.analysis.evaluate import evaluate as run_evaluation
    from procure.analysis.history import CONDITIONS, breaches, diff as compare_runs, latest_run_id, load_run, save_run
    from procure.render.history import diff_json, diff_markdown, diff_table
    from procure.io.workspace import load_workspace

    format = _format(format, out, DiffFormat.table)
    ws = load_workspace(workspace)
    settings = ws.config.reevaluate
    limit = settings.max_increase
    if max_increase is not None:
        limit = _share(max_increase, "--max-increase")
    conditions = tuple(settings.fail_on)
    if fail_on is not None:
        conditions = tuple(c.strip() for c in fail_on.split(",") if c.strip())
        unknown = [c for c in conditions if c not in CONDITIONS]
        if unknown:
            from procure.errors import Problem

            raise InputError([Problem("--fail-on", None, "", f"unknown condition {', '.join(unknown)} (expected: {', '.join(CONDITIONS)})")])
    ev = run_evaluation(ws, _day(as_of))
    _warn_expiring(ev)
    delivered = _delivered_breaches(ws, ev, max_delivered_overrun)
    previous = latest_run_id(ws.root) if (ws.root / ".procure" / "history.sqlite").exists() else None
    if previous is None:
        run_id = save_run(ws.root, ev, label) if not delivered or accept else None
        message = f"No earlier run: saved this evaluation as the baseline (run {run_id})." if run_id else "No earlier run; not saved as the baseline while delivered evidence breaches a threshold (use --accept)."
        lines = [f"- {b.condition}: {b.detail}" for b in delivered]
        if format is DiffFormat.json:
            _emit(_doc("reevaluate", json.dumps({"baseline_saved": run_id, "breached": [b.model_dump() for b in delivered]}), format, ev), out)
        elif format is DiffFormat.markdown:
            _emit(f"## Re-evaluation\n\n{message}\n" + ("\n" + "\n".join(lines) + "\n" if lines else ""), out)
        else:
            _emit(message + "\n" + "".join(line + "\n" for line in lines), out)
        if delivered and not accept:
            _say(f"{len(delivered)} threshold(s) breached by delivered evidence")
            raise typer.Exit(ExitStatus.THRESHOLD_BREACHED)
        return
    result = compare_runs(load_run(ws.root, previous), ev, f"run {previous}", "this evaluation")
    breached = breaches(result, limit, conditions) + delivered
    saved = None
    if not breached or accept:
        saved = save_run(ws.root, ev, label)
    extra = {"saved_run": saved, "baseline_run": previous}
    # Only what changed: a re-evaluation that changed nothing says so in one line.
    if format is DiffFormat.table:
        _emit_table(diff_table(result, breached, changed_only=True), out, wide, columns=columns)
    elif format is DiffFormat.json:
        _emit(_doc("reevaluate", diff_json(result, breached, extra), format, ev), out)
    else:
        _emit(diff_markdown(result, breached, changed_only=True), out)
    if saved is not None:
        _say(f"saved run {saved}" + (" (accepted despite the breach)" if breached else ""))
    if breached and not accept:
        _say(f"{len(breached)} threshold(s) breached; the baseline stays run {previous} (use --accept to move it)")
        raise typer.Exit(ExitStatus.THRESHOLD_BREACHED)


def _delivered_breaches(ws: Any, ev: Any, overrun: Optional[str]) -> list:
    """Signed vendors' latest month: an SLA breach, credits owed, a delivered cost per task past the limit."""
    if not ws.actuals:
        return []
    from procure.analysis.history import Breach
    from procure.analysis.scorecard import breaches, scorecard

    from procure.analysis.evaluate import evaluate as run_evaluation

    limit = ws.config.actuals.max_cost_overrun if overrun is None else _share(overrun, "--max-delivered-overrun")
    promise = run_evaluation(ws, ev.as_of, delivered=False)  # delivered figures are set against the promise
    found = breaches(scorecard(ws, promise, ev.as_of), limit)
    return [Breach(condition=c, detail=d) for c, d in found]


@app.command()
@handles_input_errors
def scorecard(
    offer: Annotated[Optional[str], offer_option("One signed vendor's offer (default: every offer with evidence in actuals/).")] = None,
    months: Annotated[Optional[int], typer.Option("--months", metavar="N", min=1, help="Show the last N months.", show_default=False)] = None,
    claim: Annotated[bool, typer.Option("--claim", help="Write the claim for the SLA credits owed (Markdown) instead of the scorecard.")] = False,
    format: Annotated[Optional[TextFormat], format_option()] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Delivered against promised, per signed vendor and month, with the SLA credits owed.

    For every offer with evidence in actuals/ (procure actuals import): output
    tokens per billed GPU-hour against the curve at the target, requests served,
    TTFT and latency quantiles, availability against the SLA, billed against
    contracted GPU-hours, credits owed under the contract's terms, and the
    delivered cost per successful task against the promised. A month without
    evidence is "no data". --claim writes a credits claim as Markdown. See
    docs/actuals.md.

    Examples:

    \b
        procure scorecard
        procure scorecard --offer northwind-b200-mc --months 6 --format markdown
        procure scorecard --claim --out claim.md
    """
    from procure.analysis.evaluate import evaluate as run_evaluation
    from procure.analysis.scorecard import scorecard as build
    from procure.render.scorecard import credits_claim, scorecard_csv, scorecard_markdown, scorecard_table
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    if offer is not None and offer not in {o.id for o in ws.offers}:
        raise InputError([_unknown_offer(offer, [o.id for o in ws.offers])])  # a typo gets "did you mean"
    if offer is not None and offer not in ws.actuals:
        known = sorted(ws.actuals)
        raise InputError([_problem("--offer", f"no evidence in actuals/ for {offer!r} (signed offers with evidence: {', '.join(known) or 'none'})")])
    ev = run_evaluation(ws, _day(as_of), delivered=False)  # the promise, which the delivered months are set against
    result = build(ws, ev, ev.as_of, offer, months)
    if claim:
        _emit(credits_claim(result, ev.as_of), out)
        return
    format = _format(format, out, TextFormat.table)
    if format is TextFormat.json:
        _emit(_doc("scorecard", result.model_dump_json(), format, ev), out)
    elif format is TextFormat.csv:
        _emit(scorecard_csv(result), out)
    elif format is TextFormat.markdown:
        _emit(scorecard_markdown(result), out)
    else:
        _emit_table(scorecard_table(result), out, wide, columns=columns)


@app.command()
@handles_input_errors
def init(
    directory: Annotated[Optional[Path], typer.Argument(metavar="DIR", help="Folder for the new workspace (created; must not hold a workspace already).", file_okay=False, show_default=False)] = None,
    workspace: Annotated[Optional[Path], typer.Option("--workspace", "-w", metavar="DIR", help="The same as DIR.", file_okay=False, show_default=False)] = None,
) -> None:
    """Write a fresh workspace from the example: procure.yaml, offers, grades, curves, market data.

    Example:

    \b
        procure init rfp-2027 && cd rfp-2027 && procure compare
    """
    from procure.io.example import write_example

    if (directory is None) == (workspace is None):
        raise InputError([_problem("init", "name the folder for the new workspace once: procure init DIR")])
    directory = directory if directory is not None else workspace
    assert directory is not None
    written = write_example(Path(directory))
    _say(f"wrote {len(written)} files to {directory}; next: procure validate --workspace {directory}")


@app.command()
@handles_input_errors
def cashflow(
    horizon: Annotated[Optional[int], horizon_option("Months (default: horizon.months in procure.yaml, else 36).")] = None,
    offer: Annotated[Optional[str], offer_option("Show one offer's month-by-month schedule.")] = None,
    top: RankTopOption = None,
    format: Annotated[Optional[CompareFormat], format_option(help="Output format; xlsx needs --out")] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Compare offers over one horizon: what each binds you to, costs in total and in present value.

    Each offer becomes a monthly schedule: prepayment at signing and its draw-down,
    rent with its escalator, fees by kind, your operating staff, software, expected SLA
    credits (shown, counted only with horizon.count_sla_credits), a late-delivery credit,
    renewal after the term (horizon.renewal: basis, index or escalate, stated in the
    output) and exit costs in the last month. The horizon figures: total commitment, total cost, NPV at
    the cost of capital, and NPV of cost per NPV of successful tasks.

    Examples:

    \b
        procure cashflow --horizon 36
        procure cashflow --offer northwind-b200-mc --format csv
        procure cashflow --out cashflow.xlsx
        procure cashflow --top 3 --columns rank,offer,total-usd,usd-1k-tasks-over-horizon
    """
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.io.workspace import load_workspace

    format = _format(format, out, CompareFormat.table)
    if format is CompareFormat.xlsx and out is None:
        from procure.errors import Problem

        raise InputError([Problem("--format xlsx", None, "", "a workbook is written to a file: add --out cashflow.xlsx")])
    ws = load_workspace(workspace)
    months = horizon or ws.config.horizon.months or DEFAULT_HORIZON
    ev, inputs = evaluate_with_inputs(ws, _day(as_of), None, months, True)
    if offer is not None and offer not in {o.id for o in ev.offers}:
        raise InputError([_unknown_offer(offer, [o.id for o in ev.offers])])
    if offer is not None and top is not None:
        raise InputError([_problem("--top", "ranks the offers, --offer shows one offer's schedule: give one of them")])
    if top is not None and offer is None and format in (CompareFormat.table, CompareFormat.csv, CompareFormat.markdown):
        ev = _chosen(ev, None, top)
    if format is CompareFormat.table:
        from procure.render.cashflow import cashflow_table

        _emit_table(cashflow_table(ev, offer), out, wide, columns=columns)
    elif format is CompareFormat.xlsx:
        from procure.io.files import write_atomic
        from procure.render.workbook import to_xlsx

        assert out is not None
        write_atomic(out, to_xlsx(ev, inputs))
        _say(f"wrote {out}")
    else:
        from procure.render.cashflow import cashflow_text

        _emit(_doc("cashflow", cashflow_text(ev, offer, format.value), format, ev), out)


DEFAULT_HORIZON = 36


@app.command()
@handles_input_errors
def plan(
    format: Annotated[Optional[TextFormat], format_option()] = None,
    frontier: Annotated[bool, typer.Option("--frontier", help="Add the efficient frontier: expected cost against CVaR at several risk limits.")] = False,
    out: OutOption = None,
    as_of: AsOfOption = None,
    wide: WideOption = False,
    columns: ColumnsOption = None,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Plan the purchase: how much to commit, with whom, for how long, and what to leave pay-as-used.

    Over the demand scenarios of procure.yaml's `demand:` (sampled lognormal paths or
    explicit ones), chooses whole-node commitments per offer, option and term, and the
    pay-as-used sources (burst, on-demand, per-token within rate limits) that minimise
    the expected cost per successful task, subject to `plan:` (max_vendor_share, CVaR
    weight or limit at cvar_alpha, unserved_penalty_per_task). A mixed-integer program
    solved by HiGHS; its time limit and optimality gap are stated. Shows the plan, the
    best single offer and the saving against it, and the scenario table.

    Examples:

    \b
        procure plan --as-of 2026-11-30
        procure plan --frontier --format markdown
        procure plan --out plan.json
    """
    from procure.analysis.decision import decide
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.plan import make_plan
    from procure.io.workspace import load_workspace

    format = _format(format, out, TextFormat.table)
    ws = load_workspace(workspace)
    ev, inputs = evaluate_with_inputs(ws, _day(as_of))
    result = make_plan(ws, ev.as_of, frontier=frontier, evaluation=(ev, inputs))
    if format is TextFormat.table:
        from procure.render.plan import plan_table

        if ws.config.demand is None:  # the recommendation is the single offer until demand: is stated (decision.recommend)
            first = decide(ev).headline + " The plan below is over default demand scenarios (procure.yaml has no demand:), so it is not the recommendation; state demand: to make it one."
        else:
            first = decide(ev, result).headline
        _emit_table(plan_table(result), out, wide, first=first, columns=columns)
        return
    from procure.render.plan import plan_text

    _emit(_doc("plan", plan_text(result, format.value), format, as_of=result.as_of, inputs=ws.inputs), out)


@app.command("import")
@handles_input_errors
def import_rfp(
    sheet: Annotated[Optional[Path], typer.Argument(metavar="[FILE]", help="RFP responses, one offer per row: .xlsx or .csv.", dir_okay=False, show_default=False)] = None,
    out_dir: Annotated[Optional[Path], typer.Option("--out-dir", metavar="DIR", help="The offers folder to write to (default: offers/ of the workspace, else ./offers).", file_okay=False, show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace offer files that already exist.")] = False,
    template: Annotated[Optional[Path], typer.Option("--template", metavar="FILE", help="Write a blank RFP template (.xlsx or .csv) instead, to send to vendors.", dir_okay=False, show_default=False)] = None,
    workspace: WorkspaceOption = Path("."),
    out: Annotated[Optional[Path], alias("--out", "-o", metavar="DIR", file_okay=False)] = None,
) -> None:
    """Turn RFP responses (a spreadsheet, one offer per row) into offer files.

    Columns are named by the offer's field paths (pricing.gpu_hour,
    service.sla.availability, responsibilities.monitoring, fees.onboarding.once, ...);
    every row is validated and every problem is reported with its row and column;
    nothing is written unless every row is valid, and existing files are kept unless
    --force is given.

    Examples:

    \b
        procure import --template rfp.xlsx
        procure import responses.xlsx --out-dir offers/
        procure import responses.csv --out-dir offers/ --force
    """
    out = _one("--out-dir", out_dir, "--out", out)
    if template is not None:
        if sheet is not None:
            from procure.errors import Problem

            raise InputError([Problem("import", None, "", "give either an RFP file to import or --template FILE to write, not both")])
        from procure.io.importers import write_template

        write_template(template)
        _say(f"wrote {template}")
        return
    if sheet is None:
        from procure.errors import Problem

        raise InputError([Problem("import", None, "", "name the RFP file to import (or --template FILE for a blank one)")])
    from procure.io.importers import import_offers

    written = import_offers(sheet, out if out is not None else _workspace_folder(workspace, "offers"), force)
    for path in written:
        _say(f"wrote {path}")
    _say(f"{len(written)} offer file{'s' if len(written) != 1 else ''} written; check them with: procure validate")


def _workspace_folder(workspace: Path, folder: str) -> Path:
    """A folder of the workspace found from `workspace` upward; outside any workspace, the one here."""
    from procure.io.workspace import find_workspace

    try:
        return find_workspace(workspace) / folder
    except InputError:
        return Path(workspace) / folder


grades_app = typer.Typer(help="Grade files and the current default grades.", no_args_is_help=True)
app.add_typer(grades_app, name="grades")


@grades_app.command("update")
@handles_input_errors
def grades_update(
    write: Annotated[bool, typer.Option("--write", help="Write the updated grade files (without it, nothing is written).")] = False,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Show, and with --write make, the requirements a grade file lacks that the current default grade of the same id has.

    A grade file written before a requirement was added (for example
    provider_or_shared_jobs: [monitoring] in B200-MC) grades offers by the old rule;
    `procure validate` warns about it. Without --write this prints the change as a
    unified diff and writes nothing.

    Examples:

    \b
        procure grades update
        procure grades update --write
    """
    import difflib

    from procure.io.files import write_atomic
    from procure.io.grades import stale_grades
    from procure.io.workspace import find_workspace

    root = find_workspace(workspace)
    found = stale_grades(root)
    if not found:
        _say("every grade file has the requirements of the current default grade of its id")
        return
    for stale in found:
        diff = difflib.unified_diff(stale.current_text.splitlines(keepends=True), stale.updated_text.splitlines(keepends=True), f"{stale.file} (now)", f"{stale.file} (updated)")
        sys.stdout.write("".join(diff))
        if write:
            write_atomic(root / stale.file, stale.updated_text, replace_inputs=True)
            _say(f"wrote {stale.file}")
    if not write:
        _say(f"{len(found)} grade file{'s' if len(found) != 1 else ''} to update: nothing written; rerun with --write to write them")


perf_app = typer.Typer(help="Reference throughput curves.", no_args_is_help=True)
app.add_typer(perf_app, name="perf")


class PerGpuBasis(str, Enum):
    all = "all"
    decode = "decode"


@perf_app.command("import")
@handles_input_errors
def perf_import(
    sources: Annotated[list[Path], typer.Argument(metavar="FILE...", help="InferenceX benchmark rows (JSON: a list, or one row), or trial results: guidellm benchmark reports, `vllm bench serve` saved results, genai-perf profile exports.", dir_okay=False)],
    out_dir: Annotated[Optional[Path], typer.Option("--out-dir", metavar="DIR", help="The performance folder to write curves to (default: performance/ of the workspace, else ./performance).", file_okay=False, show_default=False)] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", metavar="NAME", help="Keep rows of this hardware (case-insensitive), e.g. b200.", show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option("--model", metavar="NAME", help="Keep rows of this model, when the file holds several.", show_default=False)] = None,
    isl: Annotated[Optional[int], typer.Option("--isl", metavar="N", min=1, help="Input tokens (default: the workload's input_tokens).", show_default=False)] = None,
    osl: Annotated[Optional[int], typer.Option("--osl", metavar="N", min=1, help="Output tokens (default: the workload's output_tokens).", show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace curves that already exist.")] = False,
    per_gpu_basis: Annotated[
        Optional[PerGpuBasis],
        typer.Option("--per-gpu-basis", help="What disaggregated rows' per-GPU figures are divided by, for rows whose own figures do not show it: all GPUs, or the decode GPUs.", show_default=False),
    ] = None,
    gpus: Annotated[Optional[int], typer.Option("--gpus", metavar="N", help="Trials: the GPUs that served the endpoint (billed), which the tools do not record.", show_default=False)] = None,
    name: Annotated[Optional[str], typer.Option("--name", metavar="NAME", help="Trials: the curve's name (default: trial-{first file's name}).", show_default=False)] = None,
    trial_date: Annotated[Optional[str], typer.Option("--date", metavar="DATE", callback=_as_of, help="Trials: the trial's date, YYYY-MM-DD (default: the file's own; genai-perf states none).", show_default=False)] = None,
    workspace: WorkspaceOption = Path("."),
    out: Annotated[Optional[Path], alias("--out", "-o", metavar="DIR", file_okay=False)] = None,
) -> None:
    """Import InferenceX benchmark rows, or your own trial results, as reference curves.

    Trials (guidellm, `vllm bench serve`, genai-perf result files, found by their
    layout): every run in the files is one point of one curve, performance/NAME.csv,
    in output tok/s per billed GPU (the run's output throughput / --gpus), marked
    points_source: measured with the trial's date. A run whose mean input or output
    length is more than 20% off the workload's is flagged (a warning and a line in the
    curve). An offer that names the curve as performance.reference is then ranked on
    measured throughput. See docs/actuals.md.

    InferenceX rows: one curve per hardware, framework, precision, speculative decoding.

    Rows are kept for the workload's input/output lengths (exactly, or the nearest with
    a warning) and, with --gpu, one hardware. Each curve is named
    {hw}-{framework}-{precision}[-{spec_decoding}] and holds interactivity, output
    tok/s per billed GPU and, where the row states it, the time to first token (for
    workload.max_ttft_s); an offer uses it as performance.reference.

    Disaggregated rows divide output by the decode GPUs only: each row's basis is
    found from its own figures (num_prefill_gpu, num_decode_gpu and total = input +
    output) and converted to output per GPU of the whole configuration; the curve's
    header says which basis how many rows had. A row whose basis cannot be found is
    refused, unless --per-gpu-basis states it. Rows may be in the result-file layout
    or the InferenceX web API's (figures under "metrics").

    Examples:

    \b
        procure perf import inferencex.json --gpu b200
        procure perf import rows.json --out-dir performance/ --isl 8192 --osl 1024 --force
        procure perf import multinode.json --gpu gb200 --per-gpu-basis decode
        procure perf import benchmarks.json --gpus 8 --name trial-northwind
        procure perf import conc16.json conc32.json --gpus 8 --date 2026-11-03
    """
    from procure.io.inferencex import import_curves
    from procure.io.trials import default_name, import_trials, looks_like_trial

    out = _one("--out-dir", out_dir, "--out", out)
    if isl is None or osl is None:
        from procure.io.workspace import load_workspace

        workload = load_workspace(workspace).config.workload
        isl = isl or workload.input_tokens
        osl = osl or workload.output_tokens
    if out is None:
        out = _workspace_folder(workspace, "performance")
    trials = [looks_like_trial(path) for path in sources]
    if any(trials):
        if not all(trials):
            raise InputError([_problem("perf import", "give trial results or InferenceX rows, not both in one import")])
        if gpus is None:
            raise InputError([_problem("--gpus", "a trial's curve is per billed GPU: state how many GPUs served the endpoint (--gpus N)")])
        written, warnings = import_trials(sources, out, name or default_name(sources[0]), gpus, isl, osl, _day(trial_date), force)
    else:
        if len(sources) != 1:
            raise InputError([_problem("perf import", "InferenceX rows come in one file at a time")])
        written, warnings = import_curves(sources[0], out, isl, osl, gpu, force, model, per_gpu_basis.value if per_gpu_basis else None)
    for warning in warnings:
        _say(f"warning: {warning}")
    for path in written:
        _say(f"wrote {path}")


actuals_app = typer.Typer(help="Delivered evidence of signed vendors: serving metrics, incidents, invoices.", no_args_is_help=True)
app.add_typer(actuals_app, name="actuals")


@actuals_app.command("import")
@handles_input_errors
def actuals_import(
    sources: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Prometheus text snapshots (.prom, .txt) or query_range JSON, a Statuspage incidents.json or incidents CSV, an invoices CSV.", dir_okay=False)],
    offer: Annotated[str, offer_option("The signed offer the evidence belongs to.")],
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Check delivered evidence and keep it in actuals/ID/ of the workspace.

    Serving metrics (vLLM's metric names by default, actuals.metrics in procure.yaml)
    are summed per calendar month as Prometheus does (counter resets counted from
    zero, quantiles from histogram buckets) into actuals/ID/metrics.csv; a month
    imported again is replaced. Incident histories are kept as incidents.json or
    incidents.csv, invoices (month, gpu_hours, output_tokens, amount) merged into
    invoices.csv. Resets and gaps are stated; duplicate series, unknown labels or
    outcomes, clock skew, histograms without +Inf and overlapping incidents are
    errors: nothing is written. See docs/actuals.md.

    Examples:

    \b
        procure actuals import vllm-2026-11.json --offer northwind-b200-mc
        procure actuals import snapshots/*.prom --offer northwind-b200-mc
        procure actuals import incidents.json invoices.csv --offer northwind-b200-mc
    """
    from procure.io.actuals import import_actuals
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace)
    known = [o.id for o in ws.offers]
    if offer not in known:
        raise InputError([_unknown_offer(offer, known)])
    written, notes = import_actuals(ws.root, offer, sources, ws.config.actuals)
    for note in notes:
        _say(f"note: {note}")
    for path in written:
        _say(f"wrote {path}")


class ReportFormat(str, Enum):
    pdf = "pdf"
    html = "html"


@app.command()
@handles_input_errors
def report(
    board: Annotated[bool, typer.Option("--board", help="The short board report instead of the full comparison.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", metavar="FILE", help="File to write (default: comparison.pdf, or board.pdf with --board); .html writes HTML.", dir_okay=False, show_default=False)] = None,
    format: Annotated[Optional[ReportFormat], format_option("pdf", "pdf, or html (the same document, no WeasyPrint needed)")] = None,
    as_of: AsOfOption = None,
    rank_by: RankByOption = RankBy.snapshot,
    workspace: WorkspaceOption = Path("."),
) -> None:
    """Write the comparison report (or, with --board, the board report) as PDF or HTML.

    The comparison has a cover, an executive summary, the offers at a glance, the
    cost curve and other charts, the horizon, grades, ratings, plan and hedging, a
    page per offer with its arithmetic, and an appendix of assumptions, method and
    the input files' SHA-256. The board report is a two-page decision memo: the ask
    and its term sheet, the options, then the scenarios, risks and the hedge question.
    --rank-by horizon ranks by the cost over horizon.months. With SOURCE_DATE_EPOCH
    set, the output is byte-for-byte reproducible.

    Examples:

    \b
        procure report
        procure report --board --out reports/board.pdf
        procure report --rank-by horizon --board
        procure report --as-of 2026-11-29 --out comparison.html
    """
    from procure.analysis.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.render.documents import ReportError, check_source_date_epoch
    from procure.render.report import render_report, report_workers
    from procure.io.workspace import load_workspace

    check_source_date_epoch()

    format = _format(format, out, ReportFormat.pdf)
    kind = "board" if board else "comparison"
    target = out or Path(f"{kind}.{format.value}")
    from procure.render.report_data import ReportExtras, gather_extras

    with _stages() as stage, contextlib.ExitStack() as stack:
        stage("loading the workspace")
        ws = load_workspace(workspace)
        # The layout processes start now, loading WeasyPrint while the evaluation runs.
        workers = stack.enter_context(report_workers(kind, format.value))
        by_horizon = _ranks_by_horizon(rank_by, ws.config.horizon.months, "horizon.months in procure.yaml")
        ev, inputs = evaluate_with_inputs(ws, _day(as_of), MonteCarlo(progress=lambda done, total: stage("Monte Carlo draws", done, total)), ws.config.horizon.months, by_horizon)

        gathered: list[ReportExtras] = []

        def extras() -> ReportExtras:  # run by the report when it needs them (the offer pages do not)
            stage("sensitivity, position, hedge, benchmark and the purchase plan")
            gathered.append(gather_extras(ws, ev, inputs, board=board))
            return gathered[-1]

        try:
            data = render_report(ev, kind, format.value, extras, stage, workers)
        except ReportError as exc:
            stage("failed")
            _say(f"error: {exc}")
            raise typer.Exit(ExitStatus.INTERNAL_ERROR) from None
    from procure.io.files import write_atomic

    write_atomic(target, data)
    if gathered and gathered[-1].recommendation is not None:
        _warn_plan_failed(gathered[-1].recommendation)
    _say(f"wrote {target}")


@app.command()
@handles_input_errors
def schema(
    name: Annotated[SchemaName, typer.Argument(help="Which schema.")] = SchemaName.workspace,
    out: OutOption = None,
    workspace: Annotated[Optional[Path], typer.Option("--workspace", "-w", metavar="DIR", help="Accepted as by every command; the schemas are the same for every workspace.", file_okay=False, show_default=False)] = None,
) -> None:
    """Print the JSON Schema of an input file or of a command's JSON output.

    Inputs: offer, grade (grades/*.yaml), workspace (procure.yaml). Outputs, each with
    schema_version, tool, command, as_of and inputs at its top level: evaluation
    (compare, evaluate), grading (grade), rate, whatif, price-to-win (whatif
    --price-to-win), position, index (index build), hedge, sensitivity, history, diff,
    reevaluate, cashflow, plan.

    Examples:

    \b
        procure schema offer > offer.schema.json
        procure schema workspace
        procure schema diff
    """
    from procure.render.schemas import json_schema

    _emit(json.dumps(json_schema(name.value), indent=2) + "\n", out)


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
        app(prog_name="procure")  # the same name (and completion script) under `python -m procure`
    except Exception as exc:  # usage errors and bad input are handled inside; this is a bug
        _say(f"internal error: {type(exc).__name__}: {exc}")
        sys.exit(ExitStatus.INTERNAL_ERROR)
