"""The commands that make and update the workspace's files: init, import, grades update, index build, schema."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from procure.cli.options import (
    JsonFormat,
    ListFormat,
    ListFormatOption,
    OutDirAlias,
    OutOption,
    Output,
    TextFormat,
    WorkspaceOption,
    chosen_format,
    columns_need_a_table,
    format_option,
    one_of,
    output_options,
    parse_date,
    problem,
    workspace_folder,
)
from procure.cli.output import emit, enveloped, plain_console, say, show
from procure.status import ExitStatus


def init(
    directory: Annotated[
        Path | None,
        typer.Argument(
            metavar="DIR",
            help="Folder for the new workspace (created; must not hold a workspace already).",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    workspace: Annotated[
        Path | None,
        typer.Option("--workspace", "-w", metavar="DIR", help="The same as DIR.", file_okay=False, show_default=False),
    ] = None,
    example: Annotated[
        bool,
        typer.Option(
            "--example",
            help="Write the complete example workspace (12 fictional offers, market data, a signed vendor's evidence) "
            "instead of an empty one.",
        ),
    ] = False,
) -> ExitStatus:
    """Write a new workspace: an empty one with commented templates, or with --example the example.

    The empty workspace has procure.yaml (workload, assumptions, policy; the optional
    sections commented out), an empty offers/ with offer-template.yaml beside it and
    offer-templates/ (one template per kind: managed cluster, bare metal, managed serving,
    per-token, owned), the
    grade definitions and the public reference curves: nothing of the example's vendors,
    prices or history.

    Examples:

    \b
        procure init rfp-2027 && cd rfp-2027 && cp offer-template.yaml offers/acme.yaml
        procure init demo --example && cd demo && procure compare
    """
    from procure.errors import InputError

    if (directory is None) == (workspace is None):
        raise InputError([problem("init", "name the folder for the new workspace once: procure init DIR")])
    directory = directory if directory is not None else workspace
    assert directory is not None
    if example:
        from procure.io.example import write_example

        written = write_example(Path(directory))
        say(f"wrote {len(written)} files to {directory}; next: procure validate --workspace {directory}")
        return ExitStatus.OK
    from procure.io.blank import write_blank

    written = write_blank(Path(directory))
    say(
        f"wrote {len(written)} files to {directory}; next: copy offer-template.yaml into {Path(directory) / 'offers'} "
        f"once per offer, then procure validate --workspace {directory}"
    )
    return ExitStatus.OK


def import_rfp(
    sheet: Annotated[
        Path | None,
        typer.Argument(
            metavar="[FILE]",
            help="RFP responses, one offer per row: .xlsx or .csv.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            metavar="DIR",
            help="The offers folder to write to (default: offers/ of the workspace, else ./offers).",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace offer files that already exist.")] = False,
    template: Annotated[
        Path | None,
        typer.Option(
            "--template",
            metavar="FILE",
            help="Write a blank RFP template (.xlsx or .csv) instead, to send to vendors.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    workspace: WorkspaceOption = Path("."),
    out: OutDirAlias = None,
) -> ExitStatus:
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
    from procure.errors import InputError

    out = one_of("--out-dir", out_dir, "--out", out)
    if template is not None:
        if sheet is not None:
            from procure.errors import Problem

            raise InputError(
                [Problem("import", None, "", "give either an RFP file to import or --template FILE to write, not both")]
            )
        from procure.io.importers import write_template

        write_template(template)
        say(f"wrote {template}")
        return ExitStatus.OK
    if sheet is None:
        from procure.errors import Problem

        raise InputError(
            [Problem("import", None, "", "name the RFP file to import (or --template FILE for a blank one)")]
        )
    from procure.io.importers import import_offers

    written = import_offers(sheet, out if out is not None else workspace_folder(workspace, "offers"), force)
    for path in written:
        say(f"wrote {path}")
    say(f"{len(written)} offer file{'s' if len(written) != 1 else ''} written; check them with: procure validate")
    return ExitStatus.OK


def grades_update(
    write: Annotated[
        bool, typer.Option("--write", help="Write the updated grade files (without it, nothing is written).")
    ] = False,
    format: ListFormatOption = None,
    out: OutOption = None,
    workspace: WorkspaceOption = Path("."),
) -> ExitStatus:
    """Show, and with --write make, the requirements a grade file lacks that the current default grade of the same \
id has.

    A grade file written before a requirement was added (for example
    provider_or_shared_jobs: [monitoring] in B200-MC) grades offers by the old rule;
    `procure validate` warns about it. Without --write this prints the change as a
    unified diff and writes nothing. --format json lists each file, what it lacks
    and its diff (procure schema grades-update); --out writes that list or the diff
    to a file (the grade files only with --write).

    Examples:

    \b
        procure grades update
        procure grades update --format json
        procure grades update --write
    """
    from procure.io.grades import grade_updates

    format = chosen_format(format, out, ListFormat.table)
    found = grade_updates(workspace, write)
    if format is ListFormat.json:
        emit(
            enveloped(
                "grades update",
                found.document.model_dump_json(),
                format,
                inputs=found.inputs,
                schema="grades-update",
            ),
            out,
        )
    elif not found.stale:
        emit("Every grade file has the requirements of the current default grade of its id: nothing to update.\n", out)
    else:
        emit("".join(found.diffs), out)
    for written in found.write() if write else ():
        say(f"wrote {written}")
    if found.stale and not write:
        say(
            f"{len(found.stale)} grade file{'s' if len(found.stale) != 1 else ''} to update: nothing written; rerun "
            "with --write to write them"
        )
    return ExitStatus.OK


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


INDEX_AS_OF = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        metavar="DATE",
        callback=parse_date,
        help="Only the observations dated on or before this day, YYYY-MM-DD: the index as it stood then (default: "
        "every observation).",
        show_default=False,
    ),
]


IndexBuildQuotesArgument = Annotated[
    Path,
    typer.Argument(
        metavar="FILE",
        help="Observations CSV: date, gpu, price, kind, term_months, seller, grade, gpu_hours.",
        dir_okay=False,
    ),
]
IndexBuildKindOption = Annotated[
    Kind, typer.Option("--kind", help="Which prices: advertised offers, completed trades, or all.")
]
IndexBuildTermOption = Annotated[
    Term | None, typer.Option("--term", help="Only these contract terms, in months.", show_default=False)
]
IndexBuildGradeOption = Annotated[
    str | None,
    typer.Option("--grade", metavar="ID", help="Only observations of this grade.", show_default=False),
]
IndexBuildScopeAdjustOption = Annotated[
    bool,
    typer.Option(
        "--scope-adjust", help="Add the ops cost per GPU-hour of the jobs each row's grade leaves to the buyer."
    ),
]
IndexBuildFormatOption = Annotated[
    TextFormat | None,
    format_option("csv", "csv: the index (period, level, observations); the others add the methodology"),
]
IndexBuildReplaceOption = Annotated[
    bool,
    typer.Option(
        "--replace",
        help="Allow --out to replace a file of the workspace's market/ folder, e.g. market/index.csv (never the "
        "observations read).",
    ),
]


@output_options(as_of=INDEX_AS_OF)
def index_build(
    quotes: IndexBuildQuotesArgument,
    method: Annotated[Method, typer.Option("--method", help="How a period's prices become its level.")] = Method.median,
    kind: IndexBuildKindOption = Kind.all,
    term: IndexBuildTermOption = None,
    grade: IndexBuildGradeOption = None,
    gpu: Annotated[str, typer.Option("--gpu", metavar="NAME", help="Only observations of this GPU.")] = "B200",
    scope_adjust: IndexBuildScopeAdjustOption = False,
    period: Annotated[Period, typer.Option("--period", help="Index period.")] = Period.month,
    format: IndexBuildFormatOption = None,
    out: OutOption = None,
    replace: IndexBuildReplaceOption = False,
    *,
    output: Output,
) -> ExitStatus:
    """Build a rental price index from price observations, and show how its level depends on the method.

    Strata (term bucket x kind x grade; index.strata) get fixed weights (their share of
    the base period's quotes, index.base_period, or index.weights), each stratum's level
    by the chosen method (median, trimmed mean, or volume-weighted mean), no seller above
    index.seller_cap of a stratum, thin strata (under index.min_quotes) carried forward
    and flagged. The index is chain-linked: each period moves by the weighted strata's
    price changes, so added or removed quotes never revise an earlier month. A reading
    in index.readings is spliced in, flagged with its level jump. The
    methodology (on standard error with csv; on a terminal in one line when the screen
    is full, --notes shows it) gives the latest period's level under every method x
    kind x scope, the strata and the rules. Only procure.yaml
    and grades/ are read, never the offers. The CSV can serve as market/index.csv.

    Examples:

    \b
        procure index build market/quotes.csv --method volume-weighted --kind transacted
        procure index build market/quotes.csv --term 13-36 --scope-adjust --out market/index-long.csv
        procure index build market/quotes.csv --period week --format table
        procure index build market/quotes.csv --out market/index.csv --replace
        procure index build market/quotes.csv --as-of 2026-06-30
    """
    from procure.analysis.usecases.market import IndexAsked
    from procure.analysis.usecases.market import index_build as build_index

    format = chosen_format(format, out, TextFormat.csv)
    columns_need_a_table({"columns": output.columns, "wide": output.wide, "format": format})  # csv by default here
    asked = IndexAsked(
        method.value, kind.value, gpu, term.value if term else None, grade, period.value, scope_adjust, output.as_of
    )
    found = build_index(quotes, output.workspace, asked)
    build = found.build
    if format is TextFormat.table:
        from procure.render.market import index_table

        show(index_table(build), output)
        return ExitStatus.OK
    from procure.render.market import index_text

    # Rebuilding market/index.csv from the observations is what the built index is for: with --replace.
    # A new index CSV in market/ is what `index build` is for (an index-linked offer names it).
    csv_out = format is TextFormat.csv
    text = enveloped("index", index_text(build, format.value), format, as_of=output.as_of, inputs=found.inputs)
    emit(text, out, replace_inputs=replace and csv_out, into="market" if csv_out else None)
    if format is TextFormat.csv:
        _methodology(build, text.count("\n") if out is None else 0, output.notes)
    return ExitStatus.OK


def _methodology(build, shown: int, notes: bool) -> None:  # type: ignore[no-untyped-def]
    """index build's methodology and notes on standard error, below the CSV. On a terminal they take the lines
    the CSV leaves of the screen (output.screen_height, one for the prompt): what does not fit is one line
    naming how to see it (--notes, or --format table)."""
    from procure.cli.output import screen_height
    from procure.render.fit import fit
    from procure.render.market import methodology_table

    console = plain_console(stderr=True)
    table = methodology_table(build)
    lines = [f"note: {note}" for note in build.notes]
    room = screen_height(console) - 1 - (shown if plain_console().is_terminal else 0)
    fit(console, table, console.width)
    height = len(console.render_lines(table, console.options, pad=False))
    if notes or height + len(lines) <= room:
        console.print(table)
        for line in lines:
            say(line)
        return
    if height + 1 <= room:
        console.print(table)
    else:
        say(f"Methodology ({len(table.rows)} rows): in full with --notes or --format table")
    if lines:
        say(f"{len(lines)} note{'s' if len(lines) != 1 else ''}: in full with --notes (or --format json)")


def _complete_schema(incomplete: str) -> list[str]:
    from procure.render.schemas import KINDS, schema_names

    return [n for n in [*KINDS, *schema_names()] if n.startswith(incomplete)]


def schema(
    kind: Annotated[
        str,
        typer.Argument(
            metavar="[KIND]",
            help="input (a file procure reads) or output (a command's --format json); without it, NAME alone as "
            "before (an input's name first).",
            autocompletion=_complete_schema,
            show_default=False,
        ),
    ] = "workspace",
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="NAME",
            help="input: offer, grade, workspace; output: a command (grade, compare, grades-update, index-build, "
            "scorecard-claim, ...) or its document's name (grading, evaluation, ...).",
            show_default=False,
        ),
    ] = None,
    format: Annotated[JsonFormat | None, format_option("json", "Output format: a JSON Schema is JSON")] = None,
    out: OutOption = None,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            "-w",
            metavar="DIR",
            help="Accepted as by every command; the schemas are the same for every workspace.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
) -> ExitStatus:
    """Print the JSON Schema of an input file or of a command's JSON output.

    procure schema input NAME: offer, grade (grades/*.yaml), workspace (procure.yaml).
    procure schema output NAME: what a command's --format json writes, named by the
    command (grade, compare, validate, grades-update, index-build, whatif-price-to-win,
    scorecard-claim, ...) or by its document (grading, evaluation, validation, ...);
    each has schema_version, tool, command, as_of and inputs at its top level.
    The one-word form stays: schema NAME is the input of that name, else the output
    document or command (schema grade is the grade file; schema output grade the
    grade command's output). An unknown name gets "did you mean".

    Examples:

    \b
        procure schema input offer > offer.schema.json
        procure schema output grade
        procure schema output compare --out evaluation.schema.json
    """
    from procure.render.schemas import schema_named, schema_of

    chosen_format(format, out, JsonFormat.json)  # a .csv or .md --out is refused
    emit(schema_named(kind) if name is None else schema_of(kind, name), out)
    return ExitStatus.OK
