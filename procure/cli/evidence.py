"""Delivered evidence set against the promise: scorecard, perf import (reference curves, trials), actuals import."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from procure.cli.options import (
    AsOfOption,
    MailFormat,
    MailFormatOption,
    OutDirAlias,
    Output,
    WorkspaceOption,
    as_day,
    chosen_format,
    offer_option,
    one_of,
    output_options,
    parse_date,
    problem,
    workspace_folder,
)
from procure.cli.output import emit, emit_document, enveloped, say, show
from procure.status import ExitStatus


@output_options(format=MailFormatOption)
def scorecard(
    offer: Annotated[
        str | None, offer_option("One signed vendor's offer (default: every offer with evidence in actuals/).")
    ] = None,
    months: Annotated[
        int | None,
        typer.Option(
            "--months",
            metavar="N",
            min=1,
            help="Show the last N complete months (and the partial month of --as-of); credits owed and breaches are "
            "counted over those.",
            show_default=False,
        ),
    ] = None,
    claim: Annotated[
        bool,
        typer.Option(
            "--claim",
            help="Draft the SLA credit claims for the months shown (Markdown; --format text for mail, json for "
            "scripts): each month's credit with its incidents and deadline, and why a claim is 0.",
        ),
    ] = False,
    *,
    output: Output,
) -> ExitStatus:
    """Delivered against promised, per signed vendor and month, with the SLA credits owed.

    For every offer with evidence in actuals/ (procure actuals import): output
    tokens per billed GPU-hour against the curve at the target, requests served,
    TTFT and latency quantiles, availability against the SLA, billed against
    contracted GPU-hours, credits owed under the contract's terms, and the
    delivered cost per successful task against the promised. A month without
    evidence is "no data". Only complete months are scored: the month of --as-of
    is shown as partial, and a month whose metric samples cover less than
    actuals.min_coverage is not scored for throughput and cost. --claim drafts the
    credit claims as Markdown for the months shown: each month below the SLA
    with its incidents as evidence, the amount, the last day to file under the
    terms' claim window, and why a claim is 0 (no terms, above the credit
    thresholds, window closed); --format text is the same as plain text, for mail,
    and --format json the claims as data (procure schema claims). Without signed
    vendors with evidence it says so in one line. See docs/actuals.md.

    Examples:

    \b
        procure scorecard
        procure scorecard --offer northwind-b200-mc --months 6 --format markdown
        procure scorecard --claim --out claim.md
        procure scorecard --claim --format text > claim.txt
    """
    from procure.analysis.usecases.evidence import scorecards
    from procure.errors import InputError
    from procure.render.scorecard import scorecard_table, scorecard_text

    format = chosen_format(output.format, output.out, MailFormat.markdown if claim else MailFormat.table)
    if format is MailFormat.csv and claim:
        raise InputError(
            [problem("--format", "claims are Markdown, text or json; csv is the scorecard's (drop --claim)")]
        )
    found = scorecards(output.workspace, as_day(output.as_of), offer, months, claim)
    ev, result = found.evaluation, found.result
    for v in result.vendors:
        for note in v.notes:
            say(f"note: {v.offer}: {note}")
    if not result.vendors and format is not MailFormat.json:  # nothing to show: one line, not an empty table
        emit(
            f"No signed vendor has evidence in actuals/ as of {ev.as_of}: import it with procure actuals import FILE "
            "--offer ID.\n",
            output.out,
        )
        return ExitStatus.OK
    if found.claims is not None:
        _claims(found.claims, ev, format, output.out)
    elif format is MailFormat.table:
        show(scorecard_table(result), output)
    else:
        emit(enveloped("scorecard", scorecard_text(result, format.value), format, ev), output.out)
    return ExitStatus.OK


def _claims(claims, ev, format: MailFormat, out: Path | None) -> None:  # type: ignore[no-untyped-def]
    """scorecard --claim: the claims drafted as Markdown, plain text or JSON (procure schema claims)."""
    from procure.render.claims import claims_markdown, claims_text

    if format is MailFormat.table:  # a claim is a document: a table of it is its Markdown
        format = MailFormat.markdown
    if format is MailFormat.json:
        emit(enveloped("scorecard", claims_text(claims, ev.as_of, format.value), format, ev, schema="claims"), out)
    else:  # on a terminal, wrapped at spaces (emit_document)
        emit_document(claims_markdown(claims, ev.as_of), format.value, out)


class PerGpuBasis(str, Enum):
    all = "all"
    decode = "decode"


PerfImportSourcesArgument = Annotated[
    list[Path],
    typer.Argument(
        metavar="FILE...",
        help="InferenceX benchmark rows (JSON: a list, or one row), or trial results: guidellm benchmark reports, "
        "`vllm bench serve` saved results, genai-perf or AIPerf profile exports.",
        dir_okay=False,
    ),
]
PerfImportOutDirOption = Annotated[
    Path | None,
    typer.Option(
        "--out-dir",
        metavar="DIR",
        help="The performance folder to write curves to (default: performance/ of the workspace, else ./performance).",
        file_okay=False,
        show_default=False,
    ),
]
PerfImportGpuOption = Annotated[
    str | None,
    typer.Option(
        "--gpu",
        metavar="NAME",
        help="Keep rows of this hardware (case-insensitive), e.g. b200. Trials: the GPU they ran on (default with "
        "--offer: the offer's gpu).",
        show_default=False,
    ),
]
PerfImportModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="NAME",
        help="Keep rows of this model, when the file holds several. Trials: the model served (default: the one "
        "the result files state; another is refused).",
        show_default=False,
    ),
]
PerfImportPrecisionOption = Annotated[
    str | None,
    typer.Option(
        "--precision",
        metavar="NAME",
        help="Trials: the precision served (fp8, fp4, ...); with --gpu and --model, sets the trial beside the "
        "public curves.",
        show_default=False,
    ),
]
PerfImportIslOption = Annotated[
    int | None,
    typer.Option(
        "--isl", metavar="N", min=1, help="Input tokens (default: the workload's input_tokens).", show_default=False
    ),
]
PerfImportOslOption = Annotated[
    int | None,
    typer.Option(
        "--osl",
        metavar="N",
        min=1,
        help="Output tokens (default: the workload's output_tokens).",
        show_default=False,
    ),
]
PerfImportPerGpuBasisOption = Annotated[
    PerGpuBasis | None,
    typer.Option(
        "--per-gpu-basis",
        help="What disaggregated rows' per-GPU figures are divided by, for rows whose own figures do not show it: "
        "all GPUs, or the decode GPUs.",
        show_default=False,
    ),
]
PerfImportGpusOption = Annotated[
    int | None,
    typer.Option(
        "--gpus",
        metavar="N",
        help="Trials: the GPUs that served the endpoint (billed), which the tools do not record.",
        show_default=False,
    ),
]
PerfImportNameOption = Annotated[
    str | None,
    typer.Option(
        "--name",
        metavar="NAME",
        help="Trials: the curve's name (default: trial-{first file's name}).",
        show_default=False,
    ),
]
PerfImportTrialDateOption = Annotated[
    str | None,
    typer.Option(
        "--date",
        metavar="DATE",
        callback=parse_date,
        help="Trials: the trial's date, YYYY-MM-DD (default: the file's own; genai-perf states none).",
        show_default=False,
    ),
]
PerfImportOfferOption = Annotated[
    str | None,
    offer_option(
        "Trials run against this signed offer after signing: kept in actuals/ID/trials.csv as evidence of its "
        "capacity, not as a curve."
    ),
]


def perf_import(
    sources: PerfImportSourcesArgument,
    out_dir: PerfImportOutDirOption = None,
    gpu: PerfImportGpuOption = None,
    model: PerfImportModelOption = None,
    precision: PerfImportPrecisionOption = None,
    isl: PerfImportIslOption = None,
    osl: PerfImportOslOption = None,
    force: Annotated[bool, typer.Option("--force", help="Replace curves that already exist.")] = False,
    per_gpu_basis: PerfImportPerGpuBasisOption = None,
    gpus: PerfImportGpusOption = None,
    name: PerfImportNameOption = None,
    trial_date: PerfImportTrialDateOption = None,
    offer: PerfImportOfferOption = None,
    as_of: AsOfOption = None,
    workspace: WorkspaceOption = Path("."),
    out: OutDirAlias = None,
) -> ExitStatus:
    """Import InferenceX benchmark rows, or your own trial results, as reference curves.

    Trials (guidellm, `vllm bench serve`, genai-perf and AIPerf result files, found by
    their layout): every run in the files is one point of one curve, performance/NAME.csv,
    in output tok/s per billed GPU (the run's output throughput / --gpus), marked
    points_source: measured with the trial's date. A run whose mean input or output
    length is more than 20% off the workload's is flagged (a warning and a line in the
    curve). An offer that names the curve as performance.reference is then ranked on
    measured throughput. With --offer ID the trial was run against a signed vendor
    after signing: its runs go to actuals/ID/trials.csv (merged; the same file and
    date again replaces its runs), where the scorecard reads them as evidence of the
    vendor's capacity. A trial or curve more than 1.25x the best public curve of the
    same GPU, model and precision at the workload's interactivity is warned about.
    See docs/actuals.md.

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
        procure perf import bench.json --gpus 8 --offer keel-b200-mc --date 2026-11-20 --model DeepSeek-R1 \
--precision fp4
    """
    from procure.analysis.usecases.evidence import import_performance

    curve_options = {"--name": name, "--out-dir": out_dir, "--out": out, "--force": force or None}  # a curve's
    out = one_of("--out-dir", out_dir, "--out", out)
    trials = _trials(gpus, name, trial_date, offer, {"gpu": gpu, "model": model, "precision": precision}, curve_options)
    found = import_performance(
        workspace,
        sources,
        out if out is not None else workspace_folder(workspace, "performance"),
        trials,
        (isl, osl),
        gpu,
        model,
        force,
        per_gpu_basis.value if per_gpu_basis else None,
        as_day(as_of),
    )
    _told(found)
    return ExitStatus.OK


def _trials(gpus, name, trial_date, offer, labels, curve_options):  # type: ignore[no-untyped-def]
    """What the options say of a trial, with the curve's options that were given (refused with --offer)."""
    from procure.analysis.usecases.evidence import Trials

    given = [flag for flag, value in curve_options.items() if value is not None]
    return Trials(gpus=gpus, name=name, day=as_day(trial_date), offer=offer, labels=labels, curve_options=given)


def _told(found) -> None:  # type: ignore[no-untyped-def]
    """An import's warnings and notes, then the files it wrote, on standard error."""
    for line in found.said:
        say(line)
    for path in found.written:
        say(f"wrote {path}")


def _gpu_filter(rules: list[str] | None, per_unit: float):  # type: ignore[no-untyped-def]
    """--gpu-filter COLUMN=VALUE ... and --gpus-per-unit N as a focus.GpuFilter (None without --gpu-filter)."""
    from procure.errors import InputError
    from procure.io.focus import GpuFilter

    if not rules:
        if per_unit != 1.0:
            raise InputError([problem("--gpus-per-unit", "counts the GPUs of the rows --gpu-filter names: give it")])
        return None
    parsed = []
    for rule in rules:
        column, sep, text = rule.partition("=")
        if not sep or not column.strip() or not text.strip():
            raise InputError(
                [problem("--gpu-filter", f"COLUMN=VALUE, a FOCUS column and the text its GPU rows hold (got {rule!r})")]
            )
        parsed.append((column.strip(), text.strip()))
    return GpuFilter(tuple(parsed), per_unit)


ActualsImportSourcesArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="FILE",
        help="Prometheus text snapshots (.prom, .txt) or query_range JSON, a Statuspage incidents.json or "
        "incidents CSV, an invoices CSV or a FOCUS billing export (CSV, or CSV compressed with gzip).",
        dir_okay=False,
        show_default=False,
    ),
]
ActualsImportPrometheusOption = Annotated[
    str | None,
    typer.Option(
        "--prometheus",
        metavar="URL",
        help="Read the serving metrics from this Prometheus server's HTTP API (range queries, month by month).",
        show_default=False,
    ),
]
ActualsImportSinceOption = Annotated[
    str | None,
    typer.Option(
        "--since",
        metavar="DATE",
        callback=parse_date,
        help="With --prometheus: the first day to read, YYYY-MM-DD (UTC).",
        show_default=False,
    ),
]
ActualsImportUntilOption = Annotated[
    str | None,
    typer.Option(
        "--until",
        metavar="DATE",
        callback=parse_date,
        help="With --prometheus: the day to stop at, not included (default: now).",
        show_default=False,
    ),
]
ActualsImportStepOption = Annotated[
    int,
    typer.Option(
        "--step", metavar="SECONDS", min=1, help="With --prometheus: the range queries' step, the scrape interval."
    ),
]
ActualsImportBearerTokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--bearer-token-file",
        metavar="FILE",
        help="With --prometheus: a file holding the bearer token sent to the server.",
        dir_okay=False,
        show_default=False,
    ),
]
ActualsImportTimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="With --prometheus: the most the whole download may take, every answer together.",
    ),
]
ActualsImportGpuFilterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--gpu-filter",
        metavar="COLUMN=VALUE",
        help="A FOCUS export's rows whose COLUMN holds VALUE (any case) bill GPU capacity: their hours are "
        "GPU-hours (times --gpus-per-unit). Repeat for more; rows naming a machine procure knows need none.",
        show_default=False,
    ),
]
ActualsImportGpusPerUnitOption = Annotated[
    float,
    typer.Option(
        "--gpus-per-unit",
        metavar="N",
        min=0.001,
        help="With --gpu-filter: the GPUs in one unit of those rows' hours (8 for an hour of an 8-GPU machine).",
    ),
]


def actuals_import(
    sources: ActualsImportSourcesArgument = None,
    offer: Annotated[str, offer_option("The signed offer the evidence belongs to.")] = ...,  # type: ignore[assignment]
    prometheus: ActualsImportPrometheusOption = None,
    since: ActualsImportSinceOption = None,
    until: ActualsImportUntilOption = None,
    step: ActualsImportStepOption = 60,
    bearer_token_file: ActualsImportBearerTokenFileOption = None,
    timeout: ActualsImportTimeoutOption = 300.0,
    gpu_filter: ActualsImportGpuFilterOption = None,
    gpus_per_unit: ActualsImportGpusPerUnitOption = 1.0,
    workspace: WorkspaceOption = Path("."),
) -> ExitStatus:
    """Check delivered evidence and keep it in actuals/ID/ of the workspace.

    Serving metrics (vLLM's metric names by default, actuals.metrics in procure.yaml)
    are summed per calendar month as Prometheus does (counter resets counted from
    zero, quantiles from histogram buckets) into actuals/ID/metrics.csv; with
    --prometheus URL --since DATE they are read from the server's HTTP API instead
    of files (the same range queries, the same checks). Incident histories go to
    incidents.json or incidents.csv, invoices (month, gpu_hours, output_tokens,
    amount, optionally invoice_id) to invoices.csv; a FOCUS billing export gives each
    billing month's invoice, its credits kept apart in credits.csv. Evidence is
    merged, never replaced: by month, by invoice month and id, by incident start
    and components; each kept entry an import replaces is named. Imports into one
    workspace wait for each other. Resets and gaps are stated; duplicate series,
    unknown labels or outcomes, clock skew, histograms without +Inf, overlapping
    incidents, months out of range and counts implausible for the offer's size are
    errors: nothing is written. See docs/actuals.md.

    Examples:

    \b
        procure actuals import vllm-2026-11.json --offer northwind-b200-mc
        procure actuals import snapshots/*.prom --offer northwind-b200-mc
        procure actuals import incidents.json invoices.csv --offer northwind-b200-mc
        procure actuals import focus-2026-11.csv --offer northwind-b200-mc
        procure actuals import focus-2026-11.csv.gz --gpu-filter SkuId=B200X8-NODE --gpus-per-unit 8 --offer \
northwind-b200-mc
        procure actuals import --prometheus https://prom.example:9090 --since 2026-10-01 --bearer-token-file token \
--offer northwind-b200-mc
    """
    from procure.analysis.usecases.evidence import Server, import_evidence
    from procure.errors import InputError

    live = {"--since": since, "--until": until, "--bearer-token-file": bearer_token_file}
    if prometheus is None and any(v is not None for v in live.values()):
        raise InputError(
            [
                problem(
                    next(k for k, v in live.items() if v is not None),
                    "reads a Prometheus server: give --prometheus URL",
                )
            ]
        )
    if prometheus is None and not sources:
        raise InputError([problem("actuals import", "give the files to import, or --prometheus URL --since DATE")])
    if prometheus is not None and since is None:
        raise InputError([problem("--since", "with --prometheus, the first day to read (YYYY-MM-DD)")])
    server = Server(prometheus, since, until, step, bearer_token_file, timeout) if prometheus is not None else None
    _told(import_evidence(workspace, offer, list(sources or []), server, _gpu_filter(gpu_filter, gpus_per_unit)))
    return ExitStatus.OK
