"""The options the commands share, and the helpers that read them.

One vocabulary for every command: each option is defined once here and every command that takes
it uses that definition, so its name, metavar and help read the same everywhere.
"""

from collections.abc import Callable
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer


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


class MailFormat(str, Enum):
    """Outputs meant for a pull request, mail or chat: Markdown, or the same as plain text (no escapes)."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    text = "text"


class JsonFormat(str, Enum):
    """A command whose only output is JSON (schema): --format json is accepted like everywhere."""

    json = "json"


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


def parse_date(value: str | None) -> date | None:
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


RankByOption = Annotated[
    RankBy,
    typer.Option(
        "--rank-by",
        help="Rank by the cost per task today (snapshot) or over the horizon (horizon: --horizon N, or horizon.months "
        "in procure.yaml).",
    ),
]

AsOfOption = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        metavar="DATE",
        callback=parse_date,
        help="Evaluate as of this date, YYYY-MM-DD (default: as_of in procure.yaml, else today).",
        show_default=False,
    ),
]

STDOUT = Path("-")  # `--out -`: standard output


def out_file(raw: str) -> Path:
    """--out as given: a file name; `-` standard output (STDOUT); a name that ends in a slash names a folder and is
    refused (a file beside it would take the folder's name); an existing folder is refused when written."""
    import os

    if raw == "-":
        return STDOUT
    if raw.endswith(("/", os.sep)) or raw in ("", ".", ".."):
        raise typer.BadParameter(
            f"{raw!r} names a folder: give a file name (for example {raw.rstrip('/' + os.sep) or '.'}/NAME), or - for "
            "standard output"
        )
    return Path(raw)


def out_or_stdout(raw: str) -> Path | None:
    """--out of a command whose default is standard output: `-` is that default (None)."""
    path = out_file(raw)
    return None if path == STDOUT else path


OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="FILE",
        help="Write to this file (missing folders are created) instead of standard output (-); the suffix sets the "
        "format unless --format is given.",
        parser=out_or_stdout,
        show_default=False,
    ),
]

WideOption = Annotated[
    bool, typer.Option("--wide", help="Show every column of a table even when it is wider than the terminal.")
]
NotesOption = Annotated[
    bool,
    typer.Option(
        "--notes",
        help="Print every note, method and limit in full below the table (by default they are summarised in at most "
        "three lines, so the output fits a 24-line terminal).",
    ),
]
AllOption = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Print every row of a table taller than the terminal (by default its first rows, then how many more).",
    ),
]


def _names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise typer.BadParameter("name at least one column, e.g. --columns offer,p10,p90")
    return names


ColumnsOption = Annotated[
    str | None,
    typer.Option(
        "--columns",
        metavar="NAME,...",
        callback=_names,
        help="Show only these table columns, in this order (names as the headers in lower case with hyphens: offer, "
        "usd-1k-tasks, p10; an unknown name lists them all).",
        show_default=False,
    ),
]


def top_option(help: str) -> Any:
    """`--top N`: only the first N of a ranking."""
    return typer.Option("--top", metavar="N", min=1, help=help, show_default=False)


RankTopOption = Annotated[
    int | None, top_option("Print only the N top-ranked offers (table, Markdown, CSV; JSON carries every offer).")
]


def _complete_offer_ids(incomplete: str) -> list[str]:
    """Tab completion of --offer: the ids in offers/ of the workspace found from here (a quick scan,
    no validation)."""
    import re

    from procure.errors import InputError
    from procure.io.workspace import find_workspace

    try:
        offers = find_workspace(Path(".")) / "offers"
    except InputError:
        return []
    ids = []
    for path in sorted(offers.glob("*.y*ml")):
        try:
            found = re.search(
                r"^id:\s*['\"]?([^'\"\s#]+)", path.read_text(encoding="utf-8", errors="replace")[:20_000], re.MULTILINE
            )
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
    return typer.Option(
        "--offer",
        metavar="ID",
        help=help + " Repeat for several.",
        show_default=False,
        autocompletion=_complete_offer_ids,
    )


def alias(*names: str, metavar: str | None = None, **kwargs: Any) -> Any:
    """An older spelling, still accepted but hidden from --help."""
    return typer.Option(*names, metavar=metavar, hidden=True, show_default=False, **kwargs)


# --out, the older spelling of --out-dir (import, perf import).
OutDirAlias = Annotated[Path | None, alias("--out", "-o", metavar="DIR", file_okay=False)]


def horizon_option(help: str) -> Any:
    return typer.Option("--horizon", metavar="N", min=1, max=240, help=help, show_default=False)


def one_of(option: str, value: Any, old: str, old_value: Any) -> Any:
    """The value of an option given under its name or its older alias (not both, unless equal)."""
    from procure.errors import InputError, Problem

    if old_value is not None and value is not None and old_value != value:
        raise InputError([Problem(option, None, "", f"{old} is the older name of {option}: give one of them")])
    return value if value is not None else old_value


SUFFIX_FORMATS = {
    ".json": "json",
    ".csv": "csv",
    ".md": "markdown",
    ".markdown": "markdown",
    ".xlsx": "xlsx",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
}

E = TypeVar("E", bound=Enum)


def chosen_format(given: E | None, out: Path | None, default: E) -> E:
    """--format when given, else the format the --out suffix names, else the default; a contradiction is refused."""
    from procure.errors import InputError, Problem

    choices = type(default)
    implied = SUFFIX_FORMATS.get(out.suffix.lower()) if out is not None else None
    if given is not None:
        given = choices(given)  # a test may pass the plain value
        if implied is not None and implied != given.value:
            raise InputError(
                [
                    Problem(
                        "--format",
                        None,
                        "",
                        f"--format {given.value} contradicts --out {out} (a .{out.suffix.lower().lstrip('.')} file is "
                        f"{implied}): drop one or make them agree",
                    )
                ]
            )  # type: ignore[union-attr]
        return given
    if implied is None:
        return default
    try:
        return choices(implied)
    except ValueError:
        known = ", ".join(
            k for k, v in SUFFIX_FORMATS.items() if v in {c.value for c in choices} and k != ".htm" and k != ".markdown"
        )
        raise InputError(
            [
                Problem(
                    "--out",
                    None,
                    "",
                    f"this command does not write {implied} ({out}); it writes {', '.join(c.value for c in choices)}"
                    + (f" (suffixes {known})" if known else ""),
                )
            ]
        ) from None


def format_option(default: str = "table", help: str = "Output format") -> Any:
    """--format: given, or named by the --out suffix, else `default`."""
    return typer.Option(
        "--format", "-f", help=f"{help} (default: what the --out suffix names, else {default}).", show_default=False
    )


TextFormatOption = Annotated[TextFormat | None, format_option()]
MailFormatOption = Annotated[
    MailFormat | None, format_option(help="Output format; text is the Markdown as plain text, for mail or chat")
]
ListFormatOption = Annotated[ListFormat | None, format_option()]
CompareFormatOption = Annotated[CompareFormat | None, format_option(help="Output format; xlsx needs --out")]


def workbook_needs_out(format: Enum, out: Path | None, example: str) -> None:
    """--format xlsx writes a workbook, which goes to a file: without --out it is refused (exit 2)."""
    if format is CompareFormat.xlsx and out is None:
        from procure.errors import InputError, Problem

        raise InputError([Problem("--format xlsx", None, "", f"a workbook is written to a file: add --out {example}")])


def columns_need_a_table(kwargs: dict[str, Any]) -> None:
    """--columns and --wide shape a table: with another format (given, or named by --out) they are refused, so a
    script that asks for a table's shape and gets JSON learns it at once."""
    option = "--columns" if kwargs.get("columns") else "--wide" if kwargs.get("wide") else None
    if option is None:
        return
    given = kwargs.get("format")
    out = kwargs.get("out")
    fmt = (
        getattr(given, "value", given)
        if given is not None
        else (SUFFIX_FORMATS.get(Path(out).suffix.lower()) if out is not None else None)
    )
    if fmt not in (None, "table"):
        from procure.errors import InputError, Problem

        what = "chooses the columns of a table" if option == "--columns" else "shows every column of a table"
        raise InputError(
            [Problem(option, None, "", f"{what}; {fmt} carries every column: drop {option} or use --format table")]
        )


def as_day(value: date | str | None) -> date | None:
    """--as-of, already parsed by its callback (a string only when a test calls a command directly)."""
    return date.fromisoformat(value) if isinstance(value, str) else value


def offers_shown(ev: Any, offers: list[str] | None, top: int | None, order: Callable[[Any], list] | None = None) -> Any:
    """The Evaluation cut to the offers to print: those named with --offer (an unknown id gets a
    "did you mean"), then the first `top` of them (--top) in the ranking's order (`order`: by score
    for ratings; else acceptable offers by rank)."""
    from procure.errors import InputError, unknown_offer

    if not offers and top is None:
        return ev
    known = [o.id for o in ev.offers]
    unknown = [unknown_offer(i, known) for i in offers or [] if i not in known]
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


def problem(where: str, message: str):  # type: ignore[no-untyped-def]
    """A problem with an option or a command's arguments (no file, no line)."""
    from procure.errors import Problem

    return Problem(where, None, "", message)


def workspace_folder(workspace: Path, folder: str) -> Path:
    """A folder of the workspace found from `workspace` upward; outside any workspace, the one here."""
    from procure.errors import InputError
    from procure.io.workspace import find_workspace

    try:
        return find_workspace(workspace) / folder
    except InputError:
        return Path(workspace) / folder


# --- the options of every command that writes a document ----------------------------------------------------


class Output:
    """--format, --out, --as-of, the table's shape (--wide, --columns, --notes, --all) and -w/--workspace: what
    every command that writes a document takes, defined once (OUTPUT_OPTIONS) and handed to it as one value."""

    def __init__(self, **given: Any) -> None:
        self.format: Any = given.get("format")
        self.out: Path | None = given.get("out")
        self.as_of: date | None = as_day(given.get("as_of"))
        self.wide: bool = bool(given.get("wide", False))
        self.columns: list[str] | None = given.get("columns")
        self.notes: bool = bool(given.get("notes", False))
        self.every_row: bool = bool(given.get("every_row", False))
        self.workspace: Path = given.get("workspace", Path("."))


# Each member of Output: its option (name, short flag, metavar, help) and default, in the order --help lists them.
OUTPUT_OPTIONS: dict[str, tuple[Any, Any]] = {
    "format": (TextFormatOption, None),
    "out": (OutOption, None),
    "as_of": (AsOfOption, None),
    "wide": (WideOption, False),
    "columns": (ColumnsOption, None),
    "notes": (NotesOption, False),
    "every_row": (AllOption, False),
    "workspace": (WorkspaceOption, Path(".")),
}
F = TypeVar("F", bound=Callable[..., Any])


def output_options(format: Any = TextFormatOption, as_of: Any = AsOfOption) -> Callable[[F], F]:
    """A command's `output: Output` parameter becomes the options of OUTPUT_OPTIONS, in their order and at its
    place in the command's --help; the command receives them as one Output. `format`: the command's --format
    (its choices); `as_of`: its --as-of, None for a command without one. A member the command declares itself
    (to list it elsewhere in --help) keeps its place and is also in the Output."""
    import functools
    import inspect

    members = {**OUTPUT_OPTIONS, "format": (format, None), "as_of": (as_of, None)}
    if as_of is None:
        del members["as_of"]

    def decorate(command: F) -> F:
        own = list(inspect.signature(command).parameters.values())
        declared = {p.name for p in own} & set(members)
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = []
        for p in own:
            if p.name != "output":
                params.append(p.replace(kind=kind))
                continue
            params += [
                inspect.Parameter(name, kind, default=default, annotation=annotation)
                for name, (annotation, default) in members.items()
                if name not in declared
            ]

        @functools.wraps(command)
        def wrapper(**given: Any) -> Any:
            output = Output(**{name: given[name] for name in members if name in given})
            mine = {name: value for name, value in given.items() if name not in members or name in declared}
            return command(**mine, output=output)

        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper  # type: ignore[return-value]

    return decorate
