"""The commands that evaluate the workspace's offers: validate, grade, compare, rate, sensitivity, evaluate."""

from pathlib import Path
from typing import Annotated

import typer

from procure.cli.options import (
    AsOfOption,
    CompareFormat,
    CompareFormatOption,
    ListFormat,
    ListFormatOption,
    OutOption,
    Output,
    RankBy,
    RankByOption,
    RankTopOption,
    TextFormat,
    WorkspaceOption,
    alias,
    as_day,
    chosen_format,
    format_option,
    horizon_option,
    offers_option,
    offers_shown,
    output_options,
    top_option,
    workbook_needs_out,
)
from procure.cli.output import (
    emit,
    emit_table,
    enveloped,
    nothing_to_show,
    progress_bar,
    say,
    show,
    warn_expiring,
    warn_plan_failed,
)
from procure.status import ExitStatus


def validate(
    workspace: WorkspaceOption = Path("."),
    as_of: AsOfOption = None,
    format: ListFormatOption = None,
    out: OutOption = None,
) -> ExitStatus:
    """Check every file of the workspace and list every problem, one line each.

    Exit status 0 when the workspace is valid, 2 when it is not. Problems read
    `file:line: field: message`. Checklist claims the service terms do not back
    (an attestation, isolated monitoring, health checks) are warned about on
    standard error, naming both places; the service terms are used. So are a
    published tier from an older ClusterMAX edition (with the newer tier), a
    tier on a kind of offer ClusterMAX does not rate, and a GPU-hour offer
    that leaves pricing.billed_per out (naming the unit assumed). With --format
    json a valid workspace's counts, warnings and verdict are one document
    (procure schema validation); problems still go to standard error, exit 2.

    Examples:

    \b
        procure validate --workspace ./rfp-2026-11
        procure validate --format json --out checks/validate.json
    """
    from procure.analysis.evaluate import verdict_lines
    from procure.analysis.usecases import validation

    format = chosen_format(format, out, ListFormat.table)
    found = validation(workspace, as_day(as_of))
    ev, counts, warnings, said = found.evaluation, found.counts, found.warnings, found.notes
    if format is ListFormat.json:
        document = found.document().model_dump_json()
        emit(enveloped("validate", document, format, as_of=ev.as_of, inputs=found.inputs, schema="validation"), out)
        return ExitStatus.OK
    for warning in warnings:
        say(f"warning: {warning}")
    for note in said:
        say(f"note: {note}")
    curves = counts["reference_curves"]
    lines = [
        f"ok: {counts['offers']} offers, {counts['grades']} grades, "
        f"{curves} reference curve{'s' if curves != 1 else ''}, "
        f"{counts['index_levels']} index levels; {counts['acceptable']} acceptable as of {ev.as_of}"
    ]
    emit("".join(line + "\n" for line in lines + verdict_lines(ev)), out)
    return ExitStatus.OK


@output_options(format=ListFormatOption)
def grade(
    offer: Annotated[list[str] | None, offers_option("Show every grade's requirements for this offer.")] = None,
    top: Annotated[
        int | None,
        top_option(
            "Print only the N offers of the highest grades, ungraded last, then by id (JSON carries every offer)."
        ),
    ] = None,
    *,
    output: Output,
    out: OutOption = None,
    as_of: AsOfOption = None,
    explain: Annotated[str | None, alias("--explain", metavar="ID")] = None,
) -> ExitStatus:
    """Show each offer's grade, with every requirement of its grade (or of the nearest grade) pass/fail.

    An offer gets the highest-ranked grade whose every requirement holds; an ungraded
    offer shows what it misses for the nearest grade. An offer past its valid_until
    on the --as-of date keeps the grade its terms earn, marked expired (JSON: valid).

    Examples:

    \b
        procure grade
        procure grade --offer northwind-b200-mc
        procure grade --format json
        procure grade --as-of 2027-01-15
        procure grade --top 5 --columns offer,grade,requirements
    """
    from procure.analysis.usecases import grades

    format = chosen_format(output.format, out, ListFormat.table)
    named = list(offer or []) + ([explain] if explain is not None else [])
    factors = bool(named) and format is not ListFormat.json and output.columns is None
    found = grades(output.workspace, as_day(as_of), named, factors)
    day, results = found.as_of, found.results
    if (
        top is not None and format is not ListFormat.json
    ):  # the highest grades first: a grade's rank (1 highest), ungraded last
        results = sorted(
            results, key=lambda pair: (pair[1].assigned.grade.rank if pair[1].assigned else float("inf"), pair[0].id)
        )[:top]
    if format is ListFormat.json:
        emit(
            enveloped(
                "grade", found.document().model_dump_json(), format, as_of=day, inputs=found.inputs, schema="grading"
            ),
            out,
        )
        return ExitStatus.OK
    if named:
        from rich.console import Group

        from procure.render.ranking import explain_table, throughput_factors_table

        shown = [explain_table(o.id, o.vendor, r.checks, r.grade) for o, r in results]
        if output.columns is None:  # the throughput behind the cost, factor by factor (docs/commands.md)
            ev = found.evaluation
            if ev is None:  # the grades stand without an evaluation; say why the factors are missing
                typer.echo(
                    f"note: throughput factors not shown: the workspace cannot be evaluated ({found.not_evaluated})",
                    err=True,
                )
            else:
                shown += [
                    throughput_factors_table(ev.offer(o.id)) for o, _ in results if ev.offer(o.id).throughput_factors
                ]
        # the offer's page, asked for by name: every requirement and every throughput factor, never folded
        emit_table(Group(*shown), out, output.wide, columns=output.columns, notes=True, every_row=True)
        return ExitStatus.OK
    from procure.render.ranking import grades_table

    show(grades_table(results, day), output)
    return ExitStatus.OK


CompareUncertaintyOption = Annotated[
    bool,
    typer.Option("--uncertainty", help="Add Monte Carlo P10/P50/P90 and each offer's probability of being cheapest."),
]
CompareDrawsOption = Annotated[
    int | None,
    typer.Option(
        "--draws",
        metavar="N",
        min=100,
        max=1_000_000,
        help="Monte Carlo draws (default: uncertainty.draws, 10,000).",
        show_default=False,
    ),
]
CompareSeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed",
        metavar="N",
        min=0,
        help="Random seed (default: uncertainty.seed, 7): same seed, same numbers.",
        show_default=False,
    ),
]
CompareHorizonOption = Annotated[
    int | None,
    horizon_option(
        "Add the horizon over this many months: the table and Markdown gain its cost per task and commitment "
        "columns; JSON, CSV and xlsx also carry its total and NPV cost."
    ),
]


@output_options(format=CompareFormatOption)
def compare(
    format: CompareFormatOption = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    uncertainty: CompareUncertaintyOption = False,
    draws: CompareDrawsOption = None,
    seed: CompareSeedOption = None,
    horizon: CompareHorizonOption = None,
    rank_by: RankByOption = RankBy.snapshot,
    offer: Annotated[list[str] | None, offers_option("Print only this offer (ranked as among all).")] = None,
    top: RankTopOption = None,
    *,
    output: Output,
) -> ExitStatus:
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
    from procure.analysis.usecases import comparison

    format = chosen_format(format, out, CompareFormat.table)
    workbook_needs_out(format, out, "comparison.xlsx")
    mc = (draws, seed) if uncertainty or draws is not None or seed is not None else None
    found = comparison(
        output.workspace,
        as_day(as_of),
        offers=offer,
        monte_carlo=mc,
        horizon=horizon,
        rank_by_horizon=rank_by is RankBy.horizon,
        workbook=format is CompareFormat.xlsx,
        progress=lambda label, shown: progress_bar(label, enabled=format is CompareFormat.table and shown),
    )
    ev, rec = found.evaluation, found.recommendation
    warn_plan_failed(rec)
    for warning in found.warnings:
        say(f"warning: {warning}")
    shown = offers_shown(ev, offer, top)  # JSON and the workbook carry every offer
    if format is CompareFormat.table:
        from procure.analysis.evaluate import verdict_lines
        from procure.render.ranking import comparison_table

        after = rec.usage + (verdict_lines(ev) if out is None else [])  # the verdict's lines are notes on a screen
        show(comparison_table(shown), output, first=rec.headline, after=after)
        return ExitStatus.OK
    if format is CompareFormat.xlsx:
        from procure.io.files import write_atomic
        from procure.render.workbook import to_xlsx

        assert out is not None
        workbook = to_xlsx(ev, found.inputs, found.purchase, found.horizon_flows, found.sensitivity, rec.plan_failed)
        write_atomic(out, workbook)
        say(f"wrote {out}")
        return ExitStatus.OK
    from procure.render.ranking import ranking_text

    emit(
        ranking_text(
            (ev if format is CompareFormat.json else shown).model_copy(update={"command": "compare"}), format.value
        ),
        out,
    )
    return ExitStatus.OK


@output_options()
def rate(
    offer: Annotated[list[str] | None, offers_option("Print only this offer's rating.")] = None,
    top: Annotated[
        int | None,
        top_option("Print only the N highest-scored offers (table, Markdown, CSV; JSON carries every offer)."),
    ] = None,
    *,
    output: Output,
) -> ExitStatus:
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

    format = chosen_format(output.format, output.out, TextFormat.table)
    from procure.analysis.usecases import evaluation

    ev = evaluation(output.workspace, as_day(output.as_of)).evaluation
    shown = offers_shown(ev, offer, top, order=by_score)
    if format is TextFormat.table:
        from procure.render.ranking import rating_table

        show(rating_table(shown), output)
        return ExitStatus.OK
    from procure.render.ranking import rating_text

    emit(
        enveloped("rate", rating_text(ev if format is TextFormat.json else shown, format.value), format, ev),
        output.out,
    )
    return ExitStatus.OK


@output_options()
def sensitivity(
    top: Annotated[int | None, top_option("How many of the top-ranked offers to follow (default 3).")] = None,
    offer: Annotated[list[str] | None, offers_option("Follow this offer instead of the top-ranked ones.")] = None,
    *,
    output: Output,
    offers: Annotated[int | None, alias("--offers", metavar="N", min=1)] = None,
) -> ExitStatus:
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
    from procure.analysis.usecases import sensitivities

    format = chosen_format(output.format, output.out, TextFormat.table)
    found = sensitivities(output.workspace, as_day(output.as_of), offer, top, offers)
    ev, followed, result = found.evaluation, found.followed, found.result
    if not followed and format is not TextFormat.json:
        nothing_to_show(
            f"No acceptable offer as of {ev.as_of} to follow (procure compare gives each offer's reasons)", output.out
        )
        return ExitStatus.OK
    if format is TextFormat.table:
        from procure.render.sensitivity import sensitivity_table

        show(sensitivity_table(result, ev.currency), output)
        return ExitStatus.OK
    from procure.render.sensitivity import sensitivity_text

    emit(enveloped("sensitivity", sensitivity_text(result, ev.currency, format.value), format, ev), output.out)
    return ExitStatus.OK


def evaluate(
    save: Annotated[
        bool, typer.Option("--save", help="Store the Evaluation in the workspace history (.procure/history.sqlite).")
    ] = False,
    label: Annotated[
        str | None,
        typer.Option("--label", metavar="TEXT", help='A label for the saved run, e.g. "Nov RFP".', show_default=False),
    ] = None,
    format: Annotated[ListFormat | None, format_option(help="table: a one-line summary; json: the Evaluation")] = None,
    out: OutOption = None,
    as_of: AsOfOption = None,
    workspace: WorkspaceOption = Path("."),
) -> ExitStatus:
    """Run the evaluation, and with --save keep it in the workspace history for later diffs.

    Each saved run stores the whole Evaluation, the input files' SHA-256, the label and
    the time, in one transaction; several processes may save at once. Offers expiring
    within 14 days are warned about on standard error.

    Examples:

    \b
        procure evaluate --save --label "Nov RFP"
        procure evaluate --format json > evaluation.json
    """
    from procure.analysis.usecases import evaluation

    format = chosen_format(format, out, ListFormat.table)
    found = evaluation(workspace, as_day(as_of), save, label)
    ev, run_id = found.evaluation, found.run_id
    warn_expiring(ev)
    if save:
        say(f"saved run {run_id}")
    if format is ListFormat.json:
        emit(ev.model_copy(update={"command": "evaluate"}).to_json(), out)
        return ExitStatus.OK
    leader = ev.ranked[0] if ev.ranked else None
    from procure.render.formats import per_thousand

    top = (
        f"{leader.id} at {per_thousand(leader.metrics['cost_per_task'])} {ev.currency} per 1,000 successful tasks"
        if leader
        else "no acceptable offer"
    )
    emit(
        f"as of {ev.as_of}: {len(ev.ranked)} of {len(ev.offers)} offers acceptable; top: {top}"
        + (f"; saved as run {run_id}" if run_id else "")
        + "\n",
        out,
    )
    return ExitStatus.OK
