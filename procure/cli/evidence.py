"""Delivered evidence set against the promise: scorecard, perf import (reference curves, trials), actuals import."""

from datetime import UTC
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
from procure.cli.output import emit, enveloped, say, show
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
    from procure.analysis.promised import scored_promise
    from procure.errors import InputError, unknown_offer
    from procure.io.workspace import load_workspace
    from procure.render.scorecard import scorecard_csv, scorecard_markdown, scorecard_table

    ws = load_workspace(output.workspace)
    if offer is not None and offer not in {o.id for o in ws.offers}:
        raise InputError([unknown_offer(offer, [o.id for o in ws.offers])])  # a typo gets "did you mean"
    if offer is not None and offer not in ws.actuals:
        known = sorted(ws.actuals)
        raise InputError(
            [
                problem(
                    "--offer",
                    (
                        f"no evidence in actuals/ for {offer!r} (signed offers with evidence: "
                        f"{', '.join(known) or 'none'})"
                    ),
                )
            ]
        )
    format = chosen_format(output.format, output.out, MailFormat.markdown if claim else MailFormat.table)
    if format is MailFormat.csv and claim:
        raise InputError(
            [problem("--format", "claims are Markdown, text or json; csv is the scorecard's (drop --claim)")]
        )
    ev, result = scored_promise(ws, as_day(output.as_of), offer, months)  # the promise, and the months set against it
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
    if claim:
        _claims(ws, result, ev, format, output.out)
    elif format is MailFormat.json:
        emit(enveloped("scorecard", result.model_dump_json(), format, ev), output.out)
    elif format is MailFormat.csv:
        emit(scorecard_csv(result), output.out)
    elif format in (MailFormat.markdown, MailFormat.text):
        emit(_mail(scorecard_markdown(result), format), output.out)
    else:
        show(scorecard_table(result), output)
    return ExitStatus.OK


def _mail(markdown: str, format: MailFormat) -> str:
    """Markdown as it is, or as plain text (--format text) for mail or chat."""
    if format is MailFormat.text:
        from procure.textsafe import plain_text

        return plain_text(markdown)
    return markdown


def _claims(ws, result, ev, format: MailFormat, out: Path | None) -> None:  # type: ignore[no-untyped-def]
    """scorecard --claim: the claims drafted as Markdown, plain text or JSON (procure schema claims)."""
    from procure.analysis.claims import draft_claims
    from procure.render.claims import claims_markdown

    claims = draft_claims(ws, result, ev.as_of)
    if format is MailFormat.json:
        from procure.render.envelope import dumps

        emit(
            dumps(
                "scorecard",
                {"vendors": [c.model_dump(mode="json") for c in claims]},
                ev.as_of,
                ev.inputs,
                schema="claims",
            ),
            out,
        )
        return
    if format is MailFormat.table:  # a claim is a document: a table of it is its Markdown
        format = MailFormat.markdown
    emit(_mail(claims_markdown(claims, ev.as_of), format), out)


class PerGpuBasis(str, Enum):
    all = "all"
    decode = "decode"


def perf_import(
    sources: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE...",
            help="InferenceX benchmark rows (JSON: a list, or one row), or trial results: guidellm benchmark reports, "
            "`vllm bench serve` saved results, genai-perf or AIPerf profile exports.",
            dir_okay=False,
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            metavar="DIR",
            help="The performance folder to write curves to (default: performance/ of the workspace, else "
            "./performance).",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            metavar="NAME",
            help="Keep rows of this hardware (case-insensitive), e.g. b200. Trials: the GPU they ran on (default with "
            "--offer: the offer's gpu).",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="NAME",
            help="Keep rows of this model, when the file holds several. Trials: the model served.",
            show_default=False,
        ),
    ] = None,
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision",
            metavar="NAME",
            help="Trials: the precision served (fp8, fp4, ...); with --gpu and --model, sets the trial beside the "
            "public curves.",
            show_default=False,
        ),
    ] = None,
    isl: Annotated[
        int | None,
        typer.Option(
            "--isl", metavar="N", min=1, help="Input tokens (default: the workload's input_tokens).", show_default=False
        ),
    ] = None,
    osl: Annotated[
        int | None,
        typer.Option(
            "--osl",
            metavar="N",
            min=1,
            help="Output tokens (default: the workload's output_tokens).",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace curves that already exist.")] = False,
    per_gpu_basis: Annotated[
        PerGpuBasis | None,
        typer.Option(
            "--per-gpu-basis",
            help="What disaggregated rows' per-GPU figures are divided by, for rows whose own figures do not show it: "
            "all GPUs, or the decode GPUs.",
            show_default=False,
        ),
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option(
            "--gpus",
            metavar="N",
            help="Trials: the GPUs that served the endpoint (billed), which the tools do not record.",
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="Trials: the curve's name (default: trial-{first file's name}).",
            show_default=False,
        ),
    ] = None,
    trial_date: Annotated[
        str | None,
        typer.Option(
            "--date",
            metavar="DATE",
            callback=parse_date,
            help="Trials: the trial's date, YYYY-MM-DD (default: the file's own; genai-perf states none).",
            show_default=False,
        ),
    ] = None,
    offer: Annotated[
        str | None,
        offer_option(
            "Trials run against this signed offer after signing: kept in actuals/ID/trials.csv as evidence of its "
            "capacity, not as a curve."
        ),
    ] = None,
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
        procure perf import bench.json --gpus 8 --offer keel-b200-mc --date 2026-11-20 --model DeepSeek-R1 --precision fp4
    """  # noqa: E501
    from procure.errors import InputError
    from procure.io.inferencex import import_curves
    from procure.io.trials import default_name, import_trials, looks_like_inferencex, looks_like_trial

    curve_options = {
        "--name": name,
        "--out-dir": out_dir,
        "--out": out,
        "--force": force or None,
    }  # a curve's, not a kept trial's
    out = one_of("--out-dir", out_dir, "--out", out)
    if isl is None or osl is None:
        from procure.io.workspace import load_workspace

        workload = load_workspace(workspace).config.workload
        isl = isl or workload.input_tokens
        osl = osl or workload.output_tokens
    if out is None:
        out = workspace_folder(workspace, "performance")
    # with --offer every file is a trial (a broken one is told by its own reader: file, line, field)
    trials = [looks_like_trial(path) or (offer is not None and not looks_like_inferencex(path)) for path in sources]
    if any(trials):
        if not all(trials):
            raise InputError([problem("perf import", "give trial results or InferenceX rows, not both in one import")])
        if gpus is None:
            raise InputError(
                [
                    problem(
                        "--gpus",
                        "a trial's curve is per billed GPU: state how many GPUs served the endpoint (--gpus N)",
                    )
                ]
            )
        labels = {"gpu": gpu, "model": model, "precision": precision}
        if offer is not None:
            given = [flag for flag, value in curve_options.items() if value is not None]
            if given:
                raise InputError(
                    [
                        problem(
                            given[0],
                            "a trial with --offer is kept in actuals/ID/trials.csv, not written as a curve: leave it "
                            "out",
                        )
                    ]
                )
            _offer_trials(workspace, offer, sources, gpus, as_day(trial_date), as_day(as_of), isl, osl, labels)
            return ExitStatus.OK
        written, warnings = import_trials(
            sources, out, name or default_name(sources[0]), gpus, isl, osl, as_day(trial_date), force, labels
        )
        for line in _curve_check(workspace, out, written):
            say(line)
    else:
        if offer is not None:
            raise InputError(
                [
                    problem(
                        "--offer",
                        (
                            "InferenceX rows are public curves, not a trial of a signed vendor: import them without "
                            "--offer"
                        ),
                    )
                ]
            )
        if len(sources) != 1:
            raise InputError([problem("perf import", "InferenceX rows come in one file at a time")])
        written, warnings = import_curves(
            sources[0], out, isl, osl, gpu, force, model, per_gpu_basis.value if per_gpu_basis else None
        )
    for warning in warnings:
        say(f"warning: {warning}")
    for path in written:
        say(f"wrote {path}")
    return ExitStatus.OK


def _offer_trials(workspace, offer_id, sources, gpus, day, as_of, isl, osl, labels) -> None:  # type: ignore[no-untyped-def]
    """perf import --offer: the trials stored as the signed vendor's evidence, set beside the public curves."""
    from procure.analysis.evaluate import resolve_as_of
    from procure.errors import InputError, unknown_offer
    from procure.io.offer_trials import public_curves, trial_reference_lines
    from procure.io.trial_evidence import import_offer_trials
    from procure.io.workspace import load_workspace

    ws = load_workspace(workspace, actuals=False)  # the import checks the kept trials it merges into
    known = [o.id for o in ws.offers]
    if offer_id not in known:
        raise InputError([unknown_offer(offer_id, known)])
    signed = next(o for o in ws.offers if o.id == offer_id)
    written, notes, warnings, runs = import_offer_trials(
        ws.root, signed, sources, gpus, day, resolve_as_of(ws, as_of), isl, osl, labels
    )
    found, said = trial_reference_lines(
        offer_id, runs, public_curves(ws.curves.values()), ws.config.workload.interactivity
    )
    for warning in warnings + found:
        say(f"warning: {warning}")
    for note in notes + said:
        say(f"note: {note}")
    for path in written:
        say(f"wrote {path}")


def _curve_check(workspace: Path, folder: Path, written: list[Path]) -> list[str]:
    """Lines on a trial curve just written, set beside the public curves of the same folder at the
    workload's interactivity (procure/model/references.py): warnings, and notes of what was not compared."""
    from procure.errors import InputError
    from procure.io.offer_trials import curve_reference_lines, public_curves
    from procure.io.workspace import load_workspace, read_curve
    from procure.io.yamlsafe import read_text

    try:
        target = load_workspace(workspace).config.workload.interactivity
    except InputError:
        return [
            "note: no valid workspace states the workload's interactivity: the curve is not compared with the public "
            "curves"
        ]
    curves = [
        read_curve(read_text(path, str(path)), str(path), path.stem, []) for path in sorted(Path(folder).glob("*.csv"))
    ]
    curves = [c for c in curves if c is not None]
    ours = [c for c in curves if c.name in {Path(w).stem for w in written}]
    warnings, notes = curve_reference_lines(ours, public_curves(curves), target)
    return [f"warning: {w}" for w in warnings] + [f"note: {n}" for n in notes]


def actuals_import(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE",
            help="Prometheus text snapshots (.prom, .txt) or query_range JSON, a Statuspage incidents.json or "
            "incidents CSV, an invoices CSV or a FOCUS billing export (CSV).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    offer: Annotated[str, offer_option("The signed offer the evidence belongs to.")] = ...,  # type: ignore[assignment]
    prometheus: Annotated[
        str | None,
        typer.Option(
            "--prometheus",
            metavar="URL",
            help="Read the serving metrics from this Prometheus server's HTTP API (range queries, month by month).",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE",
            callback=parse_date,
            help="With --prometheus: the first day to read, YYYY-MM-DD (UTC).",
            show_default=False,
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            metavar="DATE",
            callback=parse_date,
            help="With --prometheus: the day to stop at, not included (default: now).",
            show_default=False,
        ),
    ] = None,
    step: Annotated[
        int,
        typer.Option(
            "--step", metavar="SECONDS", min=1, help="With --prometheus: the range queries' step, the scrape interval."
        ),
    ] = 60,
    bearer_token_file: Annotated[
        Path | None,
        typer.Option(
            "--bearer-token-file",
            metavar="FILE",
            help="With --prometheus: a file holding the bearer token sent to the server.",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", metavar="SECONDS", help="With --prometheus: seconds to wait for each answer.")
    ] = 30.0,
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
        procure actuals import --prometheus https://prom.example:9090 --since 2026-10-01 --bearer-token-file token --offer northwind-b200-mc
    """  # noqa: E501
    from procure.errors import InputError, unknown_offer
    from procure.io.workspace import load_workspace

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
    ws = load_workspace(workspace, actuals=False)  # the import checks the kept evidence it merges into
    known = [o.id for o in ws.offers]
    if offer not in known:
        raise InputError([unknown_offer(offer, known)])
    written, notes = _import_evidence(
        ws, offer, list(sources or []), prometheus, since, until, step, bearer_token_file, timeout
    )
    for note in notes:
        say(f"note: {note}")
    for path in written:
        say(f"wrote {path}")
    return ExitStatus.OK


def _import_evidence(ws, offer, sources, prometheus, since, until, step, token_file, timeout):  # type: ignore[no-untyped-def]
    """The files, and with a server's URL the answers of its range queries saved to a temporary folder
    (procure/io/prometheus_api.py), read and written together: all or nothing."""
    from procure.io.actuals import import_actuals, offer_size

    signed = next(o for o in ws.offers if o.id == offer)
    size = offer_size(signed)  # counts are judged against the offer's own GPUs
    currency = signed.pricing.currency or ws.config.currency  # a FOCUS export's BillingCurrency must be it
    if prometheus is None:
        return import_actuals(ws.root, offer, sources, ws.config.actuals, size, currency)
    import tempfile
    from datetime import datetime

    from procure.errors import InputError
    from procure.io import prometheus_api

    names = ws.config.actuals.metrics
    wanted = [
        names.output_tokens,
        names.requests,
        names.ttft + "_bucket",
        names.e2e_latency + "_bucket",
        names.gpu_busy,
    ] + ([names.requests_running] if names.max_concurrency else [])
    end = datetime(until.year, until.month, until.day, tzinfo=UTC) if until else datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="procure-prometheus-") as folder:
        queries = prometheus_api.fetch_all(prometheus, wanted, since, end, step, token_file, timeout, Path(folder))
        try:
            return import_actuals(
                ws.root, offer, [*sources, *(q.path for q in queries)], ws.config.actuals, size, currency
            )
        except InputError as exc:
            raise InputError(prometheus_api.relabel(exc.problems, queries)) from None
