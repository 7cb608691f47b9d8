"""What the commands write: the requested format on standard output, or a file with --out (written
atomically); tables fitted to the terminal; JSON in its envelope; progress and messages for people
on standard error, never mixed into the output."""

import contextlib
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer

from procure.environment import current

_spinner: dict[str, Callable[[], None]] = {}


def _may_be_terminal() -> bool:
    """False when rich would find no terminal on standard error (rich.console.Console.is_terminal: not a tty,
    and neither TTY_COMPATIBLE nor FORCE_COLOR set), told without importing rich (a tenth of a second)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty()) or current().forces_terminal


@contextlib.contextmanager
def working():  # type: ignore[no-untyped-def]
    """A spinner on standard error once a command has run PROGRESS_AFTER seconds, if that is a
    terminal; nothing in pipes. Output (and a command's own progress bar) stops it first."""
    if not _may_be_terminal():
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    import threading

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(
        SpinnerColumn(),
        TextColumn("working"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    )
    bar.add_task("working", total=None)
    lock = threading.Lock()
    stopped = []

    def start() -> None:
        with lock:  # never after stop(), even when the timer fires while output begins
            if not stopped:
                bar.start()

    timer = threading.Timer(current().progress_after, start)
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


def quiet() -> None:
    """Stop the spinner before anything is written."""
    _spinner.pop("stop", lambda: None)()


def say(message: str) -> None:
    """A line for people on standard error (the spinner stopped first). Notes and warnings echo
    label values, file names and vendor text: escape sequences and separators are shown, never run."""
    from procure.textsafe import printable_lines

    quiet()
    typer.echo(printable_lines(message), err=True)


def pipe_closed() -> NoReturn:
    """The reader of standard output went away (`procure compare | head -1`): end quietly with the status Unix
    tools give (128 + SIGPIPE), which `set -o pipefail` scripts expect; nothing more is written, and the flush at
    exit goes to /dev/null rather than raise again."""
    from procure.status import ExitStatus

    with contextlib.suppress(OSError, ValueError):  # a stream with no descriptor (a test's) has nothing to flush
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    raise SystemExit(ExitStatus.PIPE_CLOSED)


_CONSOLE: list[Any] = []


def console(**options: Any) -> Any:
    """A rich Console whose closed pipe ends as pipe_closed() says (rich's own on_broken_pipe exits 1, the status
    of a bug). Every console procure writes standard output with is made here."""
    if not _CONSOLE:
        from rich.console import Console

        class PipedConsole(Console):
            def on_broken_pipe(self) -> None:
                pipe_closed()

        _CONSOLE.append(PipedConsole)
    return _CONSOLE[0](**options)


def plain_console(stderr: bool = False):  # type: ignore[no-untyped-def]
    """A rich console that prints text as it is, as wide as the terminal (200 columns when piped)."""
    # Vendor text is data: no rich markup, emoji codes or highlighting is read into it.
    plain = {"markup": False, "emoji": False, "highlight": False}
    made = console(stderr=stderr, **plain)
    if not piped(made):  # piped: do not squeeze tables into 80 columns
        return made
    return console(stderr=stderr, width=200, **plain)


def piped(made: Any) -> bool:
    """Output to a pipe or a file with no width asked for (COLUMNS): every column and every cell whole."""
    return not made.is_terminal and not current().width_asked


@contextlib.contextmanager
def progress_bar(label: str, enabled: bool = True):  # type: ignore[no-untyped-def]
    """A progress bar on standard error when it is a terminal; nothing in pipes, files or JSON."""
    quiet()
    if not enabled or not _may_be_terminal():
        yield None
        return
    from rich.console import Console

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
def stages(enabled: bool = True):  # type: ignore[no-untyped-def]
    """Progress by stage on standard error when it is a terminal, nothing in pipes or files.

    Yields stage(what, done=None, total=None): a spinner with the stage's name, and a count (pages,
    charts, draws) where one is known.
    """
    quiet()
    if not enabled or not _may_be_terminal():
        yield lambda what, done=None, total=None: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda what, done=None, total=None: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        current = {"what": "", "task": bar.add_task("starting", total=None)}

        def stage(what: str, done: int | None = None, total: int | None = None) -> None:
            if what != current["what"]:  # a new stage: its own count (or none) and its own clock
                bar.remove_task(current["task"])
                current.update(what=what, task=bar.add_task(what, total=total, completed=done or 0))
            else:
                bar.update(current["task"], completed=done or 0, total=total)

        yield stage


def emit(text: str, out: Path | None, replace_inputs: bool = False, into: str | None = None) -> None:
    """Standard output carries only the requested format; --out writes the file atomically."""
    quiet()
    if out is None:
        sys.stdout.write(text)
        return
    from procure.io.files import write_atomic

    write_atomic(out, text, replace_inputs, into)
    say(f"wrote {out}")


def emit_document(markdown: str, fmt: str, out: Path | None) -> None:
    """A Markdown document (a claim) as `fmt` (markdown or text) to --out or a pipe; on a terminal, read: the
    sentences wrapped at spaces and each table's row as one item, "header: cell; ...", wrapped at spaces too,
    so no word is cut in two by the terminal's own wrap."""
    from procure.render.formats import written

    if out is not None or not plain_console().is_terminal:
        emit(written(markdown, fmt), out)
        return
    from rich.text import Text

    from procure.textsafe import markdown_runs, plain_text, table_cells

    quiet()
    shown = plain_console()
    lines = markdown.split("\n")
    while lines and not lines[-1]:
        lines.pop()
    for line in markdown_runs(lines):
        if isinstance(line, list):
            rows, _ = table_cells(line)
            for row in rows[1:]:
                shown.print(Text("- " + "; ".join(f"{h}: {c}" for h, c in zip(rows[0], row) if c)))
        else:
            shown.print(Text(plain_text(line) if fmt == "text" else line))


def nothing_to_show(message: str, out: Path | None) -> None:
    """A command with nothing to show says so in one line (exit 0) rather than print an empty table;
    JSON callers get their document with its empty list instead."""
    emit(message.rstrip(".") + ".\n", out)


def enveloped(
    command: str,
    text: str,
    format: Any,
    ev: Any = None,
    schema: str | None = None,
    as_of: Any = None,
    inputs: Any = None,
) -> str:
    """JSON in the envelope every JSON output shares (envelope.py); other formats as rendered."""
    if getattr(format, "value", format) != "json":
        return text
    from procure.render.envelope import dumps

    if ev is not None:
        as_of, inputs = ev.as_of, ev.inputs
    return dumps(command, text, as_of, inputs, schema)


def emit_table(
    table: Any,
    out: Path | None,
    wide: bool = False,
    first: str | None = None,
    columns: list[str] | None = None,
    after: list[str] | None = None,
    notes: bool = False,
    every_row: bool = False,
) -> None:
    """A table on the terminal fits its width (least important columns left out, and named) unless --wide,
    and its height (render/fit.py screen(): the decision and the table first, the notes summarised in at
    most three lines unless --notes, the first rows of a table taller than the screen unless --all);
    `first` is a line printed above it (the recommendation), `after` lines below it (notes);
    `columns` (--columns) chooses and orders them. A file (--out) gets everything."""
    if columns:
        from procure.render.fit import choose, column_names

        unknown = choose(table, columns)
        if unknown:
            import difflib

            from procure.errors import InputError, Problem

            known = column_names(table)
            problems = []
            for name in unknown:
                near = difflib.get_close_matches(name.lower(), known, n=2, cutoff=0.6)
                hint = f"; did you mean {' or '.join(near)}?" if near else ""
                problems.append(
                    Problem("--columns", None, "", f"no column named '{name}'{hint} (columns: {', '.join(known)})")
                )
            raise InputError(problems)
    quiet()
    if out is None:
        from rich.text import Text

        from procure.render.fit import fit, natural_width, screen

        shown = plain_console()
        dropped = None
        if wide or piped(shown):  # a pipe gets everything, as --wide: a script or a file reads every cell whole
            shown = console(
                width=max(shown.width, natural_width(shown, table)),
                markup=False,
                emoji=False,
                highlight=False,
                height=shown.height,
            )
        else:
            dropped = fit(shown, table, shown.width)
        height = screen_height(shown)
        for part in screen(shown, table, shown.width, height, first, after, dropped, notes, every_row):
            # in a pipe a sentence stays on one line, whole for grep and mail; tables keep their width
            shown.print(part, soft_wrap=height == UNFOLDED and isinstance(part, Text))
        return
    from rich.console import Console

    recorded = Console(record=True, width=200, file=io.StringIO(), markup=False, emoji=False, highlight=False)
    if first:
        recorded.print(first)
    recorded.print(table)
    for line in after or []:
        recorded.print(line)
    emit(recorded.export_text(), out)


UNFOLDED = 1_000_000_000  # lines: no fold


def screen_height(console: Any) -> int:
    """The lines a default output may take: the terminal's (LINES when set), never fewer than the 24 of
    the terminal the outputs are designed for (render/fit.py SCREEN_LINES). A pipe or a file is not a
    screen: a script or a mail reads every row and note, as it did before the fold."""
    from procure.render.fit import SCREEN_LINES

    lines = current().lines
    if lines is not None:
        try:
            return max(SCREEN_LINES, int(lines))
        except ValueError:
            return SCREEN_LINES
    return max(SCREEN_LINES, console.height) if console.is_terminal else UNFOLDED


def warn_plan_failed(rec) -> None:  # type: ignore[no-untyped-def]
    """The recommendation fell back to the best single offer: say why, on standard error."""
    if rec.plan_failed:
        say(
            f"warning: the purchase plan could not be solved ({rec.plan_failed}); the best single offer is recommended "
            "instead"
        )


def warn_expiring(ev) -> None:  # type: ignore[no-untyped-def]
    """Offers whose validity ends soon, one warning each on standard error."""
    quiet()
    for record in ev.offers:
        for note in record.notes:
            if note.startswith("expires in"):
                say(f"warning: {record.id} {note}")


def show(table: Any, output: Any, first: str | None = None, after: list[str] | None = None) -> None:
    """A table as the command's Output (procure/cli/options.py) shapes it: to --out, or fitted to the terminal
    unless --wide, with the --columns chosen, every note with --notes and every row with --all."""
    emit_table(table, output.out, output.wide, first, output.columns, after, output.notes, output.every_row)
