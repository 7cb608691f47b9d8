"""The board memo when the plan is the ask: the portfolio in one sentence, its term sheet and headline, what we
hold and decide later, the plan as the options' first row and under each demand case (the figures: the plan's and
procure/analysis/memo.py's)."""

from __future__ import annotations

from procure.analysis.evaluate import Evaluation
from procure.analysis.memo import (
    MemoFigures,
)
from procure.analysis.memo_document import (
    OptionRow,
    PlanAsk,
    PlanCaseRow,
    PlanTerm,
)
from procure.analysis.plan import PlanLine, PlanResult
from procure.analysis.plan.decisions import TOO_LITTLE_HISTORY
from procure.analysis.plan.result import TermSheetRow
from procure.analysis.plan.stress import DEMAND_SHIFTS, PRICE_CASE
from procure.analysis.scenarios import ScenarioRow
from procure.model.units import per_thousand
from procure.render.board_words import (
    basis_words,
    evidence_words,
    per_k,
    with_words,
)
from procure.render.formats import cash, clip, month_range, prose_count, small_share


def _months(line_start: int | None, line_end: int | None) -> str:
    return "as needed" if line_start is None else f"{line_start}–{line_end}"


def _portfolio_words(commits: list[PlanLine], floats: list[PlanLine]) -> str:
    """ "224 B200 GPUs with Petrel Cloud for months 1–12 and 256 with Keel Systems for months 13–24, on-demand capacity
    for peaks"."""
    parts = [
        f"{c.gpus:,} B200 GPUs with {clip(c.vendor, 40)} for {month_range(c.start_month, c.end_month)}" for c in commits
    ]
    if not parts and not floats:
        return "nothing new to sign now: we keep what we hold and re-plan the later decisions"
    if not parts:
        return f"on-demand capacity only ({with_words([f.vendor for f in floats])})"
    parts[1:] = [p.replace(" B200 GPUs", "", 1) for p in parts[1:]]
    what = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return what + (", on-demand capacity for peaks" if floats else "")


def plan_summary(plan: PlanResult) -> str:
    """The plan in one sentence for the comparison's summary: what it buys and what it costs against the best single
    offer."""
    commits = sorted(
        (line for line in plan.plan if line.role == "commit"), key=lambda x: (x.start_month or 0, x.vendor)
    )
    floats = [line for line in plan.plan if line.role == "pay_as_used"]
    return (
        f"The procurement plan over {plan.demand.months} months of uncertain demand: "
        f"{_portfolio_words(commits, floats)}. {_plan_statement(plan)}"
    )


TERM_SHEET_HEADERS = [
    "Vendor",
    "GPUs",
    "Start",
    "End",
    "Price and escalator",
    "SLA and credits",
    "Exit",
    "Offer expires",
]


def term_sheet_row(row: TermSheetRow, cur: str) -> list[str]:
    """One contract signed now, in the memo's words (the figures are the plan's)."""
    sla = f"{row.sla:.2%}; " if row.sla is not None else ""
    return [
        clip(row.vendor, 40),
        f"{row.gpus:,}",
        f"{row.start:%-d %b %Y}",
        f"{row.end:%-d %b %Y}",
        f"{row.price:.2f} {cur} per GPU-hour; escalator {row.escalator}",
        sla + row.credits,
        row.exit,
        f"{row.offer_expires:%-d %b %Y}",
    ]


def holding_words(plan: PlanResult, fig: MemoFigures) -> list[str]:
    """What we hold, what we ask for on top, and what is left to decide later, from the plan's fields."""
    words = []
    if plan.held:
        held = "; ".join(f"{h.gpus:,} GPUs with {clip(h.vendor, 40)} until {h.end:%-d %B %Y}" for h in plan.held)
        more = (
            f"we ask for {plan.ask_gpus:,} more GPUs committed now"
            if plan.ask_gpus
            else "we ask for no more committed GPUs now"
        )
        first = fig.ask_after_held
        if first is not None:  # the ask follows what we hold: no GPUs on top of it
            ends = "it ends" if len(plan.held) == 1 else "they end"
            more = f"we ask to commit {plan.ask_gpus:,} GPUs now for when {ends}, from {first:%-d %B %Y}"
        words.append(
            f"We hold {held}; {more}"
            + (", and capacity paid for as used" if any(x.role == "pay_as_used" for x in plan.plan) else "")
            + "."
        )
    later = [x for x in plan.plan if x.decision == "later"]
    if later:
        words.append(
            "Not asked for today: "
            + "; ".join(
                f"{x.gpus:,} GPUs with {clip(x.vendor, 40)} from {x.start_date:%B %Y} (expected {x.expected_price:.2f} "
                f"{plan.currency} per GPU-hour"
                + (
                    f", 8 in 10 chances between {x.price_p10:.2f} and {x.price_p90:.2f}"
                    if x.price_p10 is not None and x.price_p90 is not None
                    else f"; {TOO_LITTLE_HISTORY}"
                )
                + ")"
                for x in later
                if x.start_date and x.expected_price
            )
            + (f": decisions after {plan.decide_by:%-d %B %Y}, to re-plan then." if plan.decide_by else ".")
        )
    if plan.unserved_tasks > 0 and not plan.served.startswith("Every"):
        # the plan's sentence in the memo's figures: counts and money to three significant figures
        words.append(
            f"{small_share(plan.unserved_share)} of the expected demand is left unserved "
            f"({prose_count(plan.unserved_tasks)} tasks over the horizon; the scenarios below give the worst), "
            f"priced apart from the cash at {cash(plan.shortfall_cost, plan.currency)}."
        )
    return words


def _plan_statement(plan: PlanResult) -> str:
    """The plan against the best single offer (README, "Best single offer"), or why a single offer is the plan."""
    cur = plan.currency
    single = plan.single_best
    single_vendor = single.plan[0].vendor if single.plan else None
    offers = {line.offer for line in plan.plan}
    expected = plan.expected_cost_per_task
    if len(offers) == 1 and single.offer in offers:
        return (
            f"A single offer is the plan: no mix of commitments and on-demand capacity costs less per task "
            f"over the {plan.demand.scenarios:,} demand scenarios than {clip(single_vendor or '', 40)} alone."
        )
    if single.expected_cost_per_task is not None and plan.saving_share is not None:
        return (
            f"Expected {per_k(expected)} {cur} per 1,000 tasks over the {plan.demand.scenarios:,} demand scenarios, "
            f"{abs(plan.saving_share):.1%} {'below' if plan.saving_share >= 0 else 'above'} the best single offer "
            f"({clip(single_vendor or '', 40)} alone, {per_k(single.expected_cost_per_task)})."
        )
    return f"Expected {per_k(expected)} {cur} per 1,000 tasks; no single offer can serve every demand scenario alone."


def plan_ask(plan: PlanResult, fig: MemoFigures) -> tuple[str, PlanAsk]:
    """The headline and term sheet when the recommendation is the plan: each commitment as the recommendation
    binds it (procure.analysis.commitment.line_commitments, the figure the ask and the risk register read)."""
    cur = plan.currency
    bound = dict(zip(map(id, plan.plan), fig.line_commitments))
    nodes = dict(zip(map(id, plan.plan), fig.nodes))
    # Only what is signed now is asked for; later decisions and held contracts are said apart (holding_words).
    commits = sorted(
        (line for line in plan.plan if line.role == "commit" and line.decision in (None, "sign_now")),
        key=lambda x: (x.start_month or 0, x.vendor),
    )
    floats = [line for line in plan.plan if line.role == "pay_as_used"]
    lines = []
    for line in commits + floats:
        if line.role == "commit":
            total = bound[id(line)]
            price = f"{line.price:.2f} per GPU-hour"
        else:
            total = None
            price = (
                f"{per_thousand(line.price):,.2f} per 1,000 tasks"
                if line.price_unit == "task"
                else f"{line.price:.2f} per GPU-hour"
            )
        lines.append(
            PlanTerm(
                vendor=line.vendor,
                role="commit" if line.role == "commit" else "pay as used",
                gpus=line.gpus,
                nodes=nodes[id(line)],
                months=_months(line.start_month, line.end_month),
                price=price,
                total_commitment=total,
            )
        )
    single = plan.single_best
    single_vendor = single.plan[0].vendor if single.plan else None
    offers = {line.offer for line in plan.plan}
    expected = plan.expected_cost_per_task
    statement = _plan_statement(plan)
    what = _portfolio_words(commits, floats)
    total = fig.ask_total
    if len(offers) == 1 and single.offer in offers:
        headline = (
            f"Approve the plan, a single offer: {what}; {cash(total, cur)} committed, {per_k(expected)} {cur} "
            "per 1,000 tasks expected."
        )
    else:
        saving = (
            f", {abs(plan.saving_share):.1%} {'below' if plan.saving_share >= 0 else 'above'} the best single offer"
            if plan.saving_share is not None
            else ""
        )
        headline = (
            f"Approve a portfolio: {what}; {cash(total, cur)} committed, {per_k(expected)} {cur} per 1,000 "
            f"tasks expected{saving}."
        )
    return headline, PlanAsk(
        lines=lines,
        total_commitment=total,
        expected_per_task=expected,
        single_vendor=single_vendor,
        single_per_task=single.expected_cost_per_task,
        saving_share=plan.saving_share,
        statement=statement,
    )


SINGLE_CASE = {
    "Demand as planned": "Demand as stated",
    "Market prices +20%": "Index +20%",
}  # the single-offer case that matches a plan case


CASE_WORDS = {
    "low": "Lowest third of the paths",
    "base": "Middle third",
    "high": "Highest third",
    "worst 10%": "Worst 10% of paths (cost per task)",
}


PLAN_CON_WORDS = {
    "idle": lambda v: f"{v:.0%} of the commitment idle",
    "on_demand": lambda v: f"{v:.0%} of tasks on demand",
}


def plan_option(plan: PlanResult, ask: PlanAsk, ev: Evaluation, fig: MemoFigures) -> OptionRow:
    """The plan as the options' first row, costed over the demand scenarios as each single offer is beside it."""
    floats = [x for x in ask.lines if x.role != "commit"]
    offers = [ev.offer(line.offer) for line in plan.plan]
    bases = list(
        dict.fromkeys(basis_words(o.pricing_basis) for o, line in zip(offers, plan.plan) if line.role == "commit")
    )
    evidence = list(dict.fromkeys(evidence_words(o) for o in offers))
    pros: list[str] = []
    cons: list[str] = []
    if plan.saving_share is not None and plan.saving_share > 0 and ask.single_vendor:
        pros.append(
            f"{plan.saving_share:.1%} below the best single offer ({clip(ask.single_vendor, 30)} alone, "
            f"{per_k(ask.single_per_task)})"
        )
    cons += [PLAN_CON_WORDS[f.name](f.value) for f in fig.plan_cons]
    vendors = {x.vendor for x in ask.lines}
    if len(vendors) > 1:
        cons.append(f"{len(vendors)} vendors")
    return OptionRow(
        offer="",
        vendor="Recommended portfolio",
        rank=0,
        price_basis=", ".join(bases + (["as used"] if floats else [])),
        evidence="see below" if len(evidence) > 1 else evidence[0],
        operator="see the offers below",
        commitment=ask.total_commitment,
        snapshot_per_task=None,
        horizon_per_task=None,
        pros="; ".join(pros),
        cons="; ".join(cons),
        scenarios_per_task=plan.expected_cost_per_task,
    )


def plan_cases(plan: PlanResult, rows: list[ScenarioRow], fig: MemoFigures) -> tuple[list[PlanCaseRow], str]:
    """The plan's fixed portfolio under each demand case, beside the single offer the matching re-evaluation ranks
    first."""
    assert plan.stress is not None
    singles = {r.name: r for r in rows}
    months = plan.demand.months
    found = []
    shifts = {name for _, name in DEMAND_SHIFTS} | {PRICE_CASE[1]}

    def label(name: str) -> str:
        if name in shifts or name == "worst 10%" or plan.demand.sampled:
            return CASE_WORDS.get(name, name)
        return f"Path: {name}"  # an explicit demand path of procure.yaml, by its own name

    for case, unused_monthly in zip(plan.stress.cases, fig.unused_monthly):
        single = singles.get(SINGLE_CASE.get(case.name, case.name))
        found.append(
            PlanCaseRow(
                name=label(case.name),
                probability=case.probability,
                cost_per_task=case.cost_per_task,
                monthly_spend=case.monthly_spend,
                unused_monthly=unused_monthly,
                pay_as_used_share=case.pay_as_used_share,
                unserved_share=case.unserved_share,
                cheapest_single=single.cheapest if single else None,
            )
        )
    note = (
        f"The plan held fixed over {months} months: commitments paid whatever the demand, on-demand capacity for the "
        "rest. "
        f"The first four lines scale each of the {plan.demand.scenarios:,} demand paths, the fifth raises on-demand "
        "prices and those that follow the index; the others are parts of the paths. "
        "Ranked first at today's volume: every offer re-evaluated at today's volume with the same change (page 1's "
        "best single offer is costed over the scenarios)."
    )
    most, least = fig.unserved_most, fig.unserved_least
    if most is not None and least is not None:
        # one sentence, not one clause per case: the memo's second page has room for the range, not the list
        span = (
            f"{most.unserved_share:.1%}"
            if fig.short_cases == 1
            else f"{least:.1%} to {most.unserved_share:.1%} by case"
        )
        note += f" Demand beyond what the plan's sources can serve: {span} (most: {label(most.name).lower()})."
    return found, note
