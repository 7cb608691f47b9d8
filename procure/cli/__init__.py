"""The command line: each command parses, calls the core, renders, and returns an exit status.

This package holds the app, the handling that turns bad input and usage errors into exit statuses,
and the list of commands in the order --help shows them. The commands live in one module per
subject (evaluation, planning, history, evidence, workspace, report); the options they share in
options.py, what they write in output.py.

Heavy libraries (pandas, matplotlib, WeasyPrint) are imported inside the commands that need them,
so `procure --help` and `procure validate` start fast. No `from __future__ import annotations` in
this package: typer reads every command's annotations at start-up, and string annotations cost it
an eval each (67 ms against 10 ms for the whole app).
"""

import functools
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

try:  # typer 0.2x carries its own copy of click
    from typer._click import exceptions as click
except ImportError:  # older typer: click itself
    import click.exceptions as click  # type: ignore[no-redef]

from procure import __version__
from procure.cli import evaluation, evidence, history, planning, report, workspace
from procure.cli.options import columns_need_a_table
from procure.cli.output import pipe_closed, say, working
from procure.status import ExitStatus

SHOWN_PROBLEMS = 100  # problem lines printed; the count line says how many there were in all


def _usage_problem(error: click.UsageError) -> str:
    """A usage error (click's or ours) as procure states problems: `where: what was expected`."""
    param = getattr(error, "param", None)
    where = error.ctx.command_path if error.ctx else "procure"
    if isinstance(error, click.NoSuchOption):
        near = f" (did you mean {' or '.join(sorted(error.possibilities))}?)" if error.possibilities else ""
        return f"{where}: {error.option_name}: no such option{near}"
    if isinstance(error, click.BadParameter) and param is not None:
        name = max(param.opts, key=len) if getattr(param, "opts", None) else param.human_readable_name
        if isinstance(error, click.MissingParameter):
            if (
                not getattr(param, "opts", None) or param.param_type_name == "argument"
            ):  # typer 0.2x's arguments have no make_metavar
                return f"{where}: missing argument {param.metavar or param.name.upper()}"
            return (
                f"{where}: {name}: missing: give "
                f"{param.make_metavar(error.ctx) if error.ctx and hasattr(param, 'make_metavar') else 'a value'}"
            )
        return f"{where}: {name}: {_choice_message(error.message, _choices(param))}"
    message = error.message.rstrip(".")
    return f"{where}: {message[:1].lower()}{message[1:]}"


def _choices(param: Any) -> Any:
    """An option's choices: click's Choice type, or the Enum typer 0.2x keeps in its type descriptor."""
    from enum import Enum

    choices = getattr(getattr(param, "type", None), "choices", None)
    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    return choices or (list(kind) if isinstance(kind, type) and issubclass(kind, Enum) else None)


def _choice_message(message: str, choices: Any) -> str:
    """A value not among an option's choices: the choices, and the nearest ("did you mean")."""
    import re

    found = re.search(r"'(.*?)' is not one of", message) if choices else None
    if found is None:
        return message
    from procure.errors import did_you_mean

    names = [str(getattr(c, "value", c)) for c in choices]
    near = did_you_mean(found.group(1), names, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return f"no choice '{found.group(1)}'{hint} (choices: {', '.join(names)})"


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
        from procure.environment import Environment, using

        try:
            with using(Environment(dict(os.environ))):  # read once, here; the layers below are handed it
                return super().invoke(ctx)
        except click.UsageError as error:
            raise _own_format(error) from None

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names alone: a command is built when it runs (_Commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        commands = self.commands
        if isinstance(commands, _Commands):  # the list in --help reads each command's help text, not its options
            self.commands = commands.listing()
        try:
            super().format_commands(ctx, formatter)
        finally:
            self.commands = commands


class _Commands(MutableMapping):  # type: ignore[type-arg]
    """The app's commands, each turned into a click command (its options read from its signature, a third of
    `procure --help`'s time when done for all of them) only when it is looked up to run; the list in --help is
    made from their help texts (`listing`), as typer words it."""

    def __init__(self, typer_app: typer.Typer) -> None:
        import inspect

        import typer.main as build

        self.built: dict[str, Any] = {}
        self.makers: dict[str, Callable[[], Any]] = {}
        self.light: dict[str, Callable[[], Any]] = {}
        short, markup = typer_app.pretty_exceptions_short, typer_app.rich_markup_mode
        for info in typer_app.registered_commands:
            name = info.name or build.get_command_name(info.callback.__name__)
            self.makers[name] = functools.partial(
                build.get_command_from_info, info, pretty_exceptions_short=short, rich_markup_mode=markup
            )
            text = inspect.getdoc(info.callback) if info.help is None else inspect.cleandoc(info.help)
            self.light[name] = functools.partial(
                typer.core.TyperCommand,
                name=name,
                help=text,
                short_help=info.short_help,
                hidden=info.hidden,
                deprecated=info.deprecated,
            )
        for group in typer_app.registered_groups:
            solved = build.solve_typer_info_defaults(group)
            self.makers[solved.name] = functools.partial(
                build.get_group_from_info,
                group,
                pretty_exceptions_short=short,
                rich_markup_mode=markup,
                suggest_commands=typer_app.suggest_commands,
            )
            self.light[solved.name] = functools.partial(
                TyperGroup,
                name=solved.name,
                help=solved.help,
                short_help=solved.short_help,
                hidden=solved.hidden,
                deprecated=solved.deprecated,
            )

    def listing(self) -> dict[str, Any]:
        return {name: self.built[name] if name in self.built else self.light[name]() for name in self}

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            self.built[name] = self.makers[name]()
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command
        self.makers.setdefault(name, lambda: command)

    def __delitem__(self, name: str) -> None:
        self.built.pop(name, None)
        del self.makers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.makers)

    def __len__(self) -> int:
        return len(self.makers)


def command_line() -> Any:
    """The app as a click group whose commands are built when they run (typer builds every one first)."""
    import typer.main

    registered = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = [], []
    try:
        group = typer.main.get_command(app)  # the root alone: its own options and the completion options
    finally:
        app.registered_commands, app.registered_groups = registered
    group.commands = _Commands(app)
    return group


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


F = TypeVar("F", bound=Callable[..., Any])


def handles_input_errors(command: F) -> F:
    """Bad input: one line per problem on standard error, exit 2, no traceback, nothing written.

    Also shows a spinner on a terminal while a command takes more than PROCURE_PROGRESS_AFTER seconds (1.5).
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from procure.errors import InputError
        from procure.io.files import forget_inputs

        forget_inputs()  # what an earlier command in this process read is not this one's input
        try:
            columns_need_a_table(kwargs)
            with working():
                status = command(*args, **kwargs)
            sys.stdout.flush()  # a reader gone (`| head -1`) is found here, not in the flush at exit
            if status:  # a command returns its ExitStatus; click's exit code is taken from typer.Exit
                raise typer.Exit(int(status))
            return status
        except InputError as exc:
            for problem in exc.problems[:SHOWN_PROBLEMS]:
                say(str(problem))
            count = len(exc.problems)
            if count > SHOWN_PROBLEMS:  # 200,000 bad rows are not 200,000 lines: the first ones show what to fix
                say(
                    f"... and {count - SHOWN_PROBLEMS:,} more problems, not shown (the first {SHOWN_PROBLEMS} are "
                    "above)"
                )
            say(f"{count} problem{'s' if count != 1 else ''} found; nothing was written.")
            raise typer.Exit(ExitStatus.BAD_INPUT) from None
        except BrokenPipeError:  # click would exit 1, the status of a bug
            pipe_closed()
        except KeyboardInterrupt:
            say("interrupted; nothing was written.")
            from procure.analysis.milp import solving

            if solving():  # a solve abandoned in its thread: end now rather than wait up to plan.time_limit_s
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(ExitStatus.INTERRUPTED)
            raise typer.Exit(ExitStatus.INTERRUPTED) from None

    return wrapper  # type: ignore[return-value]


def _command(group: typer.Typer, command: Callable[..., Any], name: str | None = None) -> None:
    """Register a command on the app or a group, its bad input handled (handles_input_errors)."""
    group.command(name)(handles_input_errors(command))


def _group(name: str, help: str) -> typer.Typer:
    """A group of commands, `procure NAME COMMAND`; without a command it shows its help."""
    group = typer.Typer(help=help, no_args_is_help=True)
    app.add_typer(group, name=name)
    return group


# Every command, in the order --help lists them (the groups after the commands): a command, a command and its name,
# or a group's name and help with its one command and that command's name.
COMMANDS: tuple[Any, ...] = (
    evaluation.validate,
    evaluation.grade,
    evaluation.compare,
    evaluation.rate,
    planning.whatif,
    planning.position,
    ("index", "Rental price benchmarks built from price observations.", workspace.index_build, "build"),
    planning.hedge,
    evaluation.sensitivity,
    evaluation.evaluate,
    history.history,
    history.diff,
    history.reevaluate,
    evidence.scorecard,
    workspace.init,
    planning.cashflow,
    planning.plan,
    planning.decide,
    (workspace.import_rfp, "import"),
    ("grades", "Grade files and the current default grades.", workspace.grades_update, "update"),
    ("perf", "Reference throughput curves.", evidence.perf_import, "import"),
    (
        "actuals",
        "Delivered evidence of signed vendors: serving metrics, incidents, invoices.",
        evidence.actuals_import,
        "import",
    ),
    report.report,
    workspace.schema,
)
for entry in COMMANDS:
    if not isinstance(entry, tuple):
        _command(app, entry)
    elif len(entry) == 2:
        _command(app, *entry)
    else:
        _command(_group(entry[0], entry[1]), entry[2], entry[3])


def _version(value: bool) -> None:
    if value:
        typer.echo(f"procure {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Compare vendor offers for B200 GPU hours by expected full cost per successful task."""


def main() -> None:
    """Console entry point: exit statuses as in status.py; an unexpected error exits 1 without a traceback."""
    try:
        command_line()(prog_name="procure")  # the same name (and completion script) under `python -m procure`
    except BrokenPipeError:  # --help or a usage line into a closed pipe
        pipe_closed()
    except Exception as exc:  # usage errors and bad input are handled inside; this is a bug
        say(f"internal error: {type(exc).__name__}: {exc}")
        sys.exit(ExitStatus.INTERNAL_ERROR)
