"""The commands that decide what to buy and try changes to it: whatif, position, hedge, cashflow, plan."""

from pathlib import Path
from typing import Annotated, Any

import typer

from procure.cli.options import (
    CompareFormat,
    CompareFormatOption,
    Output,
    RankTopOption,
    TextFormat,
    TextFormatOption,
    alias,
    as_day,
    chosen_format,
    horizon_option,
    offer_option,
    offers_shown,
    one_of,
    output_options,
    top_option,
    workbook_needs_out,
)
from procure.cli.output import emit, enveloped, nothing_to_show, say, show, warn_plan_failed
from procure.status import ExitStatus

WhatifThroughputOption = Annotated[
    str | None,
    typer.Option("--throughput", metavar="CHANGE", help="Change in throughput, e.g. +50%.", show_default=False),
]
WhatifPriceOption = Annotated[
    str | None,
    typer.Option("--price", metavar="CHANGE", help="Change in price, e.g. -5% (owned: capex).", show_default=False),
]
WhatifAvailabilityOption = Annotated[
    float | None,
    typer.Option(
        "--availability",
        metavar="SHARE",
        help="SLA availability, e.g. 0.999 (owned: our host's, self_operated_jobs.hardware_repair).",
        show_default=False,
    ),
]
WhatifUtilizationOption = Annotated[
    float | None,
    typer.Option("--utilization", metavar="SHARE", help="Utilization, e.g. 0.9.", show_default=False),
]
WhatifGpusOption = Annotated[
    int | None,
    typer.Option("--gpus", metavar="N", min=1, help="A different committed GPU count.", show_default=False),
]
WhatifOneOffOption = Annotated[
    float, typer.Option("--one-off", metavar="AMOUNT", help="What the change costs once (workspace currency).")
]
WhatifMonthlyOption = Annotated[
    float, typer.Option("--monthly", metavar="AMOUNT", help="What the change costs every month.")
]
WhatifPriceToWinOption = Annotated[
    bool,
    typer.Option("--price-to-win", help="For every acceptable offer, the GPU-hour price that ties the leader."),
]


@output_options()
def whatif(
    offer: Annotated[str | None, offer_option("The offer to change.")] = None,
    throughput: WhatifThroughputOption = None,
    price: WhatifPriceOption = None,
    availability: WhatifAvailabilityOption = None,
    utilization: WhatifUtilizationOption = None,
    gpus: WhatifGpusOption = None,
    one_off: WhatifOneOffOption = 0.0,
    monthly: WhatifMonthlyOption = 0.0,
    price_to_win: WhatifPriceToWinOption = False,
    top: RankTopOption = None,
    *,
    output: Output,
    offer_id: Annotated[str | None, typer.Argument(metavar="[ID]", hidden=True, show_default=False)] = None,
) -> ExitStatus:
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
    from procure.analysis.usecases import Asked, what_if

    format = chosen_format(output.format, output.out, TextFormat.table)
    offer_id = one_of("--offer", offer, "the offer argument", offer_id)
    asked = Asked(throughput, price, availability, utilization, gpus, one_off, monthly)
    found = what_if(output.workspace, as_day(output.as_of), offer_id, asked, price_to_win, top)
    if found.price_to_win is not None:
        _price_to_win(found, output, top, format)
        return ExitStatus.OK
    if format is TextFormat.table:
        from procure.render.whatif import whatif_table

        show(whatif_table(found.whatif), output)
        return ExitStatus.OK
    from procure.render.whatif import whatif_text

    emit(
        enveloped("whatif", whatif_text(found.whatif, format.value), format, as_of=found.as_of, inputs=found.inputs),
        output.out,
    )
    return ExitStatus.OK


def _price_to_win(found: Any, output: Any, top: int | None, format: TextFormat) -> None:
    """whatif --price-to-win: for every acceptable offer, the list price at which it ties the leader;
    --top cuts the list (JSON carries every offer)."""
    ev, rows = found.evaluation, found.price_to_win
    if top is not None and format is not TextFormat.json:
        rows = rows[:top]
    if not rows and format is not TextFormat.json:
        nothing_to_show(
            f"No acceptable offer as of {ev.as_of}, so no price to win (procure compare gives each offer's reasons)",
            output.out,
        )
        return
    if format is TextFormat.table:
        from procure.render.whatif import price_to_win_table

        show(price_to_win_table(rows, ev.currency), output)
    else:
        from procure.render.whatif import price_to_win_text

        emit(
            enveloped("whatif", price_to_win_text(rows, ev.currency, format.value), format, ev, schema="price-to-win"),
            output.out,
        )


@output_options()
def position(
    current: Annotated[
        float | None,
        typer.Option("--current", metavar="AMOUNT", help="Our cost per successful task to place.", show_default=False),
    ] = None,
    offer: Annotated[str | None, offer_option("Place this offer's cost per task.")] = None,
    top: Annotated[
        int | None,
        top_option(
            "Print only the N cheapest points of the curve (table, Markdown, CSV; JSON carries the whole curve)."
        ),
    ] = None,
    *,
    output: Output,
    current_offer: Annotated[str | None, alias("--current-offer", metavar="ID")] = None,
) -> ExitStatus:
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
    from procure.analysis.usecases import positioning

    format = chosen_format(output.format, output.out, TextFormat.table)
    current_offer = one_of("--offer", offer, "--current-offer", current_offer)
    found = positioning(output.workspace, as_day(output.as_of), current, current_offer)
    ev, result = found.evaluation, found.position
    if top is not None and format is not TextFormat.json:
        result = result.model_copy(update={"curve": result.curve[:top]})
    if format is TextFormat.table:
        from procure.render.position import position_table

        show(position_table(result), output)
        return ExitStatus.OK
    from procure.render.position import position_text

    emit(enveloped("position", position_text(result, format.value), format, ev), output.out)
    return ExitStatus.OK


@output_options()
def hedge(
    offer: Annotated[
        str | None,
        offer_option(
            "The offer to hedge (default: hedge.offer in procure.yaml, else the recommendation: the purchase plan with "
            "demand:, else the top-ranked acceptable offer)."
        ),
    ] = None,
    index: Annotated[
        Path | None,
        typer.Option(
            "--index",
            metavar="FILE",
            help="Index history CSV (default: market/index.csv).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    rent: Annotated[
        Path | None,
        typer.Option(
            "--rent",
            metavar="FILE",
            help="Your rent history CSV: date, price (default: market/rent.csv when present); for an offer's "
            "hedge (refused for the purchase plan's, hedged at ratio 1).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    *,
    output: Output,
) -> ExitStatus:
    """Recommend a rental price hedge for the recommendation: ratio, ladder, contracts, stress, limits.

    With demand: in procure.yaml the recommendation is the purchase plan, and what floats
    is its pay-as-used GPU-hours and index-linked commitments (ratio 1), by month of the
    plan; the reports hedge the same. For an offer, the exposure is its billed GPU-hours each month of \
hedge.horizon_months from
    delivery: index-linked months and months after the term (renewal) float, fixed-price
    months do not. h* = Cov(dS, dF) / Var(dF) comes from aligned period changes of your
    rent S and the index F, with its standard error and 95% interval, rho, R^2 and the
    basis volatility; the ladder uses 1 unless h* differs from 1 significantly, in
    contracts of hedge.contract's size (venue, index and unverified terms shown); the stress table moves the index \
-40% to +40%
    from hedge.forward (else today's index).

    Examples:

    \b
        procure hedge
        procure hedge --offer corvid-b200-idx --format json
        procure hedge --offer corvid-b200-idx --rent market/rent.csv
    """
    from procure.analysis.usecases import hedging

    format = chosen_format(output.format, output.out, TextFormat.table)
    found = hedging(output.workspace, as_day(output.as_of), offer, index, rent)
    if found.recommendation is not None:
        warn_plan_failed(found.recommendation)
    ev, plan = found.evaluation, found.plan
    if format is TextFormat.table:
        from procure.render.hedge import hedge_table

        show(hedge_table(plan), output)
        return ExitStatus.OK
    from procure.render.hedge import hedge_text

    emit(enveloped("hedge", hedge_text(plan, format.value), format, ev), output.out)
    return ExitStatus.OK


@output_options(format=CompareFormatOption)
def cashflow(
    horizon: Annotated[int | None, horizon_option("Months (default: horizon.months in procure.yaml, else 36).")] = None,
    offer: Annotated[str | None, offer_option("Show one offer's month-by-month schedule.")] = None,
    top: RankTopOption = None,
    *,
    output: Output,
) -> ExitStatus:
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
    from procure.analysis.usecases import cash_flows

    format = chosen_format(output.format, output.out, CompareFormat.table)
    workbook_needs_out(format, output.out, "cashflow.xlsx")
    found = cash_flows(output.workspace, as_day(output.as_of), horizon, offer, top)
    ev, inputs = found.evaluation, found.inputs
    if top is not None and offer is None and format in (CompareFormat.table, CompareFormat.csv, CompareFormat.markdown):
        ev = offers_shown(ev, None, top)
    if format is CompareFormat.table:
        from procure.render.cashflow import cashflow_table

        show(cashflow_table(ev, offer), output)
    elif format is CompareFormat.xlsx:
        from procure.io.files import write_atomic
        from procure.render.workbook import to_xlsx

        assert output.out is not None
        write_atomic(output.out, to_xlsx(ev, inputs))
        say(f"wrote {output.out}")
    else:
        from procure.render.cashflow import cashflow_text

        emit(enveloped("cashflow", cashflow_text(ev, offer, format.value), format, ev), output.out)
    return ExitStatus.OK


@output_options()
def plan(
    format: TextFormatOption = None,
    frontier: Annotated[
        bool,
        typer.Option(
            "--frontier", help="Add the efficient frontier: expected cost against CVaR at several risk limits."
        ),
    ] = False,
    *,
    output: Output,
) -> ExitStatus:
    """Plan the purchase: how much to commit, with whom, for how long, and what to leave pay-as-used.

    Over the demand scenarios of procure.yaml's `demand:` (sampled lognormal paths or
    explicit ones), chooses whole-node commitments per offer, option and term, and the
    pay-as-used sources (burst, on-demand, per-token within rate limits) that minimise
    the expected cost per successful task, subject to `plan:` (max_vendor_share, CVaR
    weight or limit at cvar_alpha). A task no source serves is priced as bought on demand
    at the market price (unserved_premium; unserved_penalty_per_task sets it), and the
    demand left unserved is shown by month and scenario with that price, apart from the
    cash. A mixed-integer program solved by HiGHS; its time limit and optimality gap are
    stated. Shows the plan, the best single offer and the saving against it, and the
    scenario table.

    Examples:

    \b
        procure plan --as-of 2026-11-30
        procure plan --frontier --format markdown
        procure plan --out plan.json
    """
    from procure.analysis.usecases import planning

    format = chosen_format(format, output.out, TextFormat.table)
    found = planning(output.workspace, as_day(output.as_of), frontier, headline=format is TextFormat.table)
    result = found.plan
    if format is TextFormat.table:
        from procure.render.plan import plan_table

        show(plan_table(result), output, first=found.headline, after=found.usage)
        return ExitStatus.OK
    from procure.render.plan import plan_text

    emit(
        enveloped("plan", plan_text(result, format.value), format, as_of=result.as_of, inputs=found.inputs), output.out
    )
    return ExitStatus.OK


@output_options()
def decide(format: TextFormatOption = None, *, output: Output) -> ExitStatus:
    """The decision as one record: what to sign now, what we hold, what is left for later, what it costs and leaves
    unserved, the risks, the hedge, the best single offer, the horizon and the demand it assumes.

    The board memo, the comparison report, compare, plan and hedge state the same
    figures; this writes them once, as a versioned JSON document (procure schema
    decision), for a script or an archive of what was decided. The terminal shows its
    headline figures.

    Examples:

    \b
        procure decide --as-of 2026-12-07
        procure decide --format json --out decision.json
    """
    from procure.analysis.decision_record import decision_record
    from procure.analysis.usecases import reporting
    from procure.render.board import board_memo

    format = chosen_format(format, output.out, TextFormat.table)
    found = reporting(output.workspace, as_day(output.as_of), board=True)
    extras = found.extras()
    ev = found.evaluation
    assert extras.memo is not None  # the board's figures: gathered for every workspace, none acceptable included
    memo = board_memo(ev, extras.memo)
    record = decision_record(
        ev,
        found.workspace.config,
        extras.recommendation,
        extras.plan,
        memo.risks,
        memo.hedge,
        extras.memo.hedge_sums,
    )
    from procure.render.decision import decision_text

    emit(enveloped("decide", decision_text(record, format.value), format, ev=ev, schema="decision"), output.out)
    return ExitStatus.OK
