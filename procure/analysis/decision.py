"""The recommendation, computed once and read by every surface.

With `demand:` in procure.yaml the recommendation is the procurement plan over the demand scenarios;
without it (or when no plan can be solved) it is the best acceptable offer. `compare` prints it on its
first line, `plan` and `hedge` start from it, and both reports and the board memo state it, so a buyer
never sees two answers.

"Best single offer" has one definition: the single offer with the lowest expected cost per successful
task on the recommendation's own basis. With a plan that basis is the plan's demand scenarios (the
plan's `single_best`: each usable offer alone, sized for every scenario, costed as the plan is, present
value of spend over present value of tasks); without one it is today's stated demand, where the best
single offer is the top of the ranking. The ranking of `compare` is always at today's demand.

The commitment is defined once, in `procure.analysis.commitment` (`offer_commitment`, `line_commitments`,
named here too): what signing binds us to pay. The ask, the options table, the risk register and the
plan's term sheet (`committed_cost`) all read it.
"""

from __future__ import annotations

import math
from datetime import date
from typing import TYPE_CHECKING

from procure.analysis.commitment import line_commitments, offer_commitment
from procure.analysis.recommendation import AskLine, BestSingle, Recommendation, line_words, merge_lines
from procure.model.calendar import earliest
from procure.model.kinds import kind_of
from procure.model.units import per_thousand

if TYPE_CHECKING:
    from procure.analysis.evaluate import CostInputs, Evaluation
    from procure.analysis.plan import PlanCase, PlanLine, PlanResult
    from procure.analysis.plan.frontier import Solves
    from procure.analysis.record import OfferRecord
    from procure.errors import Problem
    from procure.io.workspace import Workspace


def _deadline(lines: list[AskLine], plan: PlanResult) -> dict[str, date | str | None]:
    """The decide-by date of a plan and what sets it: the first of its asked offers' expiry and the last days to sign
    its contracts and still start on time (PlanResult.sign_by)."""
    found = [(x.valid_until, f"the offer of {x.vendor} expires then") for x in lines]
    if plan.sign_by is not None:
        found.append((plan.sign_by, plan.sign_by_reason))
    day, why = earliest(found)
    return {"deadline": day, "deadline_reason": why}


def condition_words(record: OfferRecord) -> list[str]:
    """The offer's conditions of signing not yet confirmed, each with what it decides (offer `conditions:`)."""
    return [f"{c.text} ({c.gates})" for c in record.terms.open_conditions]


def _line_from_plan(line: PlanLine, record: OfferRecord, bound: float | None) -> AskLine:
    commit = line.role == "commit"
    return AskLine(
        offer=line.offer,
        vendor=line.vendor,
        role=line.role,
        gpus=line.gpus,
        first_month=line.start_month if commit else None,
        last_month=line.end_month if commit else None,
        term_months=line.term_months if commit else None,
        price=line.price,
        price_unit=line.price_unit,
        commitment=bound if commit else None,
        valid_until=record.valid_until,
        conditions=condition_words(record),
    )


def _reserved(record: OfferRecord, gpus: int | None, billed_more: bool) -> str | None:
    """A reservation larger than what is owed, in its kind's words ('100 GPUs reserved, 70 owed', as the headline
    words it), with the GPUs the demand bills when they are more than is owed (never the reservation as billed)."""
    words = kind_of(record.terms.pricing).reserved_words(record.terms, "GPUs")
    return f"{words} ({gpus:,} billed at today's demand)" if words is not None and billed_more else words


def _line_from_offer(record: OfferRecord) -> AskLine:
    """The offer as signed: the GPUs the stated demand bills (at least the committed ones) for its term."""
    kind = kind_of(record.terms.pricing)
    per_token = kind.per_task
    billed = record.metrics.get("billed_gpus")
    gpus = None if per_token else (math.ceil(billed - 1e-9) if billed else record.gpus)
    # the commitment prices what the kind commits (offer_commitment: the offer's minimum, a take-or-pay floor), in
    # whole GPUs; GPUs the demand bills above it are billed as used
    owed = math.ceil(kind.committed(record.terms) - 1e-9)
    committed = owed if gpus is not None and owed and owed < gpus else None
    # billed for the time it runs (Offer.usage_billed): pay-as-used, as the plan takes it, binding nothing
    used = record.terms.usage_billed
    return AskLine(
        offer=record.id,
        vendor=record.vendor,
        role="pay_as_used" if used else "commit",
        gpus=gpus,
        gpus_committed=committed,
        reserved=_reserved(record, gpus, committed is not None),
        first_month=None if used else 1,
        last_month=None if used else record.term_months,
        term_months=None if used else record.term_months,
        price=record.metrics.get("cost_per_task")
        if per_token
        else record.metrics.get("rent_today", record.metrics.get("rent")),
        price_unit="task" if per_token else "gpu_hour",
        commitment=None if used else offer_commitment(record),
        valid_until=record.valid_until,
        conditions=condition_words(record),
    )


def as_planned(plan: PlanResult) -> PlanCase | None:
    """The plan's fixed portfolio at the demand as planned (every path as sampled or stated)."""
    from procure.analysis.plan.stress import DEMAND_SHIFTS

    name = next(n for change, n in DEMAND_SHIFTS if change == 0)
    return next((c for c in plan.stress.cases if c.name == name), None) if plan.stress is not None else None


def _per_k(value: float | None) -> float | None:
    return per_thousand(value)


def _by_vendor(lines: list[AskLine]) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in lines:
        if line.commitment is not None:
            found[line.vendor] = found.get(line.vendor, 0.0) + line.commitment
    return found


def today_basis(ev: Evaluation) -> str:
    tasks = ev.workload.tasks_per_month
    return (
        f"at today's stated demand ({tasks:,.0f} tasks a month)"
        if tasks
        else "with every committed GPU in use (no demand is stated)"
    )


def plan_basis(plan: PlanResult) -> str:
    return f"expected over the plan's {plan.demand.scenarios:,} demand scenarios of {plan.demand.months} months"


def _plan_months(plan: PlanResult, offer: str) -> tuple[list[tuple[int, int]], int]:
    """The months an offer's commitments cover in the plan (merged runs) and its most GPUs committed at once."""
    spans = sorted(
        (x.start_month or 1, x.end_month or 1, x.gpus or 0)
        for x in plan.plan
        if x.offer == offer and x.role == "commit"
    )
    runs: list[tuple[int, int]] = []
    for first, last, _ in spans:
        if runs and first <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], max(runs[-1][1], last))
        else:
            runs.append((first, last))
    return runs, max((g for _, _, g in spans), default=0)


def _use_words(plan: PlanResult, offer: str) -> str:
    """An offer's commitments in the plan by what they are: held (contract.signed), signed now, decided later."""
    words = {"held": "held", "later": "a later decision", "sign_now": "committed now", None: "committed"}
    found: dict[str | None, list[str]] = {}
    for x in sorted(
        (x for x in plan.plan if x.offer == offer and x.role == "commit"), key=lambda x: x.start_month or 0
    ):
        found.setdefault(x.decision, []).append(f"{x.start_month}–{x.end_month}")
    return ", ".join(f"{words[k]} for months {', '.join(v)}" for k, v in found.items())


def _limits(record: OfferRecord, plan: PlanResult, as_of: date, committed: bool) -> list[str]:
    """What can stop the plan using an offer more: its delivery, its term, its minimum (when the plan commits none of
    it), the vendor share cap (when its vendor is at the cap), no on-demand capacity of its own."""
    found = []
    if record.terms.delivery is not None and record.terms.delivery > as_of:
        found.append(f"delivery {record.terms.delivery.isoformat()}")
    if record.term_months > 1:
        found.append(f"{record.term_months}-month term")
    if record.gpus and not committed:
        kind = kind_of(record.terms.pricing)
        found.append(kind.reserved_words(record.terms, "GPUs") or f"a minimum of {record.gpus:,} GPUs")
    cap = plan.policy.max_vendor_share
    share = sum(x.expected_tasks_share for x in plan.plan if x.vendor == record.vendor)
    if cap < 1 and share >= cap - 0.01:
        found.append(f"the vendor share cap, {cap:.0%} (plan.max_vendor_share)")
    if record.terms.pricing.burst is None and not kind_of(record.terms.pricing).per_task:
        found.append("no on-demand capacity of its own")
    return found


def _place(record: OfferRecord, first: bool, as_of: date) -> str:
    """Where the offer stands, in words: ranked first or N, or why it is not ranked."""
    if first:
        return "ranked first at today's demand"
    if record.rank is not None:
        return f"ranked {record.rank}"
    if record.valid_until < as_of:
        return f"its quote expired on {record.valid_until}, not ranked"
    failing = [g.gate for g in record.gates if not g.passed]
    return (
        f"not ranked: it fails the {', '.join(failing)} gate{'s' if len(failing) > 1 else ''}"
        if failing
        else ("not ranked")
    )


def usage_notes(ev: Evaluation, plan: PlanResult) -> list[str]:
    """One line for each offer ranked first or signed (delivered evidence) that the plan uses less than it could:
    not at all, for fewer than the plan's months, or below its most GPUs; with what limits it."""
    notes = []
    wanted = [o for o in ev.ranked[:1]] + [o for o in ev.offers if o.evidence and o not in ev.ranked[:1]]
    months = plan.demand.months
    for record in wanted:
        runs, gpus = _plan_months(plan, record.id)
        covered = sum(b - a + 1 for a, b in runs)
        payg = any(x.offer == record.id and x.role == "pay_as_used" for x in plan.plan)
        most = record.max_gpus or record.gpus or 0
        others = any(x.offer != record.id for x in plan.plan)  # the plan buys elsewhere what it might have bought here
        if covered >= months and (not most or gpus >= most or not others):
            continue
        first = ev.ranked and ev.ranked[0].id == record.id
        place = _place(record, bool(first), ev.as_of)
        signed = ("signed, " if record.rank is not None else "signed; ") if record.evidence else ""
        who = f"{record.vendor} ({signed}{place})"
        if covered:
            use = _use_words(plan, record.id) + f" of {months}, {gpus:,} of up to {most:,} GPUs"
        else:
            use = "used on demand only" if payg else "not in the plan"
        alone = plan.single_offers.get(record.id, 0.0) if record.id in plan.single_offers else 0.0
        single = (
            "; alone it cannot serve every scenario"
            if alone is None
            else f"; alone it costs {per_thousand(alone):,.2f} per 1,000 tasks over the scenarios"
            if alone
            else ""
        )
        limits = _limits(record, plan, ev.as_of, bool(covered))
        notes.append(f"{who}: {use}{single}" + (f"; what can limit it: {', '.join(limits)}" if limits else "") + ".")
    return notes


def _dearer_why(plan: PlanResult) -> str:
    """Why a plan costs more than the best single offer: the policy that rules the single offer out."""
    why = []
    if plan.policy.max_vendor_share < 1:
        why.append(
            f"no vendor may provide more than {plan.policy.max_vendor_share:.0%} of the capacity "
            "(plan.max_vendor_share)"
        )
    if plan.policy.cvar_weight > 0 or plan.policy.cvar_limit is not None:
        why.append("the plan weighs its worst months (plan.cvar_weight, plan.cvar_limit)")
    return "; ".join(why) if why else "the plan keeps to its policy (plan:)"


HEADLINE_LINES = 2  # ask lines written out in the one-line recommendation; more are named by vendor


def _headline(rec: Recommendation, currency: str) -> str:
    if rec.kind == "none":
        return "Recommended: none; no offer passes every requirement."
    if len(rec.lines) <= HEADLINE_LINES:
        what = "; ".join(line_words(line, currency) for line in rec.lines)
    else:  # a plan of many lines: its vendors here, the lines in `procure plan` and the reports
        committed = {x.vendor for x in rec.lines if x.role == "commit"}
        what = (
            ", ".join(v + ("" if v in committed else " on demand") for v in rec.vendors)
            + "; GPUs, months and prices: procure plan"
        )
    cost = (
        f"{rec.cost_per_1000_tasks:,.2f} {currency} per 1,000 tasks"
        if rec.cost_per_1000_tasks is not None
        else "cost not known"
    )
    kind = "the plan" if rec.kind == "plan" else "the single offer"
    # a per-token offer's line already states its price per 1,000 tasks: the same figure is not said twice
    said = rec.kind == "offer" and f"{cost.split(' per ')[0]} per 1,000 tasks" in what
    text = f"Recommended: {kind} ({what}) " + ("" if said else f"at {cost} ") + rec.basis
    best = rec.best_single
    if rec.kind == "plan" and best.offer is not None:
        if rec.saving_share is None:
            text += f"; it is the best single offer ({best.vendor})"
        else:
            text += (
                f"; best single offer {best.vendor} at {best.cost_per_1000_tasks:,.2f}, so the plan costs "
                f"{abs(rec.saving_share):.1%} {'less' if rec.saving_share >= 0 else 'more'}"
            )
            if rec.saving_share < 0 and rec.dearer_why:
                text += f" because {rec.dearer_why}"
    elif rec.kind == "plan":
        text += "; no single offer can serve every demand scenario alone"
    else:
        text += "; it is the best single offer"
    if rec.plan_failed:
        text += f". The plan could not be solved ({rec.plan_failed}): this offer is the fallback"
    # the usage lines (rec.usage) follow the ranking, so the first line stays a few lines long
    return text + "." + (f" Decide by {rec.deadline.isoformat()}." if rec.deadline is not None else "")


def decide(ev: Evaluation, plan: PlanResult | None = None, plan_failed: str | None = None) -> Recommendation:
    """The recommendation from the evaluation and, with `demand:`, the solved plan (or why it failed)."""
    leader = ev.offer(ev.summary.recommended) if ev.summary.recommended else None
    if plan is not None and plan.plan:
        rec = _plan_recommendation(ev, plan)
    elif leader is None:
        rec = _no_recommendation(ev, plan_failed)
    else:
        rec = _offer_recommendation(ev, leader, plan_failed)
    rec.headline = _headline(rec, ev.currency)
    return rec


def _plan_recommendation(ev: Evaluation, plan: PlanResult) -> Recommendation:
    """The solved plan as the recommendation: what is signed now and what is bought as used, by vendor."""
    records = {o.id: o for o in ev.offers}
    first: dict[str, int] = {}
    for x in plan.plan:
        if x.role == "commit":
            first[x.offer] = min(first.get(x.offer, x.start_month or 0), x.start_month or 0)
    # By when each offer's capacity starts, one offer's commitments together (so a run of months can merge). Only
    # what
    # is signed now is asked for: later decisions are intentions to re-plan, held contracts are already signed.
    commits = sorted(
        (x for x in plan.plan if x.role == "commit" and x.decision in (None, "sign_now")),
        key=lambda x: (first[x.offer], x.vendor, x.offer, x.start_month or 0),
    )
    floats = [x for x in plan.plan if x.role == "pay_as_used"]
    bound = dict(zip(map(id, plan.plan), line_commitments(plan, records)))
    lines = merge_lines([_line_from_plan(x, records[x.offer], bound[id(x)]) for x in commits + floats])
    single = plan.single_best
    single_vendor = records[single.offer].vendor if single.offer in records else None
    is_single = len({x.offer for x in plan.plan}) == 1 and single.offer == plan.plan[0].offer
    planned = as_planned(plan)
    total = planned.total_spend if planned is not None else plan.expected_monthly_spend * plan.demand.months
    committed = [x.commitment for x in lines if x.commitment is not None]
    rec = Recommendation(
        kind="plan",
        offer=None,
        lines=lines,
        vendors=list(dict.fromkeys(x.vendor for x in lines)),
        cost_per_task=plan.expected_cost_per_task,
        cost_per_1000_tasks=_per_k(plan.expected_cost_per_task),
        basis=plan_basis(plan),
        months=plan.demand.months,
        total_spend=total,
        spend_per_year=total * 12 / plan.demand.months,
        total_commitment=sum(committed) if committed else None,
        commitment_by_vendor=_by_vendor(lines),
        **_deadline(lines, plan),
        best_single=BestSingle(
            offer=single.offer,
            vendor=single_vendor,
            cost_per_task=single.expected_cost_per_task,
            cost_per_1000_tasks=_per_k(single.expected_cost_per_task),
            basis=plan_basis(plan),
        ),
        saving_share=None if is_single else plan.saving_share,
        headline="",
        usage=usage_notes(ev, plan),
        dearer_why=_dearer_why(plan) if not is_single and (plan.saving_share or 0) < 0 else None,
    )
    return rec


def _no_recommendation(ev: Evaluation, plan_failed: str | None) -> Recommendation:
    """No offer passes every requirement: nothing to recommend."""
    return Recommendation(
        kind="none",
        offer=None,
        lines=[],
        vendors=[],
        cost_per_task=None,
        cost_per_1000_tasks=None,
        basis=today_basis(ev),
        months=None,
        total_spend=None,
        spend_per_year=None,
        total_commitment=None,
        deadline=None,
        best_single=BestSingle(
            offer=None, vendor=None, cost_per_task=None, cost_per_1000_tasks=None, basis=today_basis(ev)
        ),
        saving_share=None,
        plan_failed=plan_failed,
        headline="",
    )


def _offer_recommendation(ev: Evaluation, leader: OfferRecord, plan_failed: str | None) -> Recommendation:
    """The cheapest acceptable offer as the recommendation, without a plan."""
    line = _line_from_offer(leader)
    figure = leader.metrics.get(ev.rank_by)
    basis = today_basis(ev) if ev.rank_by == "cost_per_task" else f"over {ev.horizon_months} months"
    monthly = leader.metrics.get("monthly_spend")
    horizon_total = leader.metrics.get("total_cost")
    months = ev.horizon_months if horizon_total is not None else leader.term_months
    total = horizon_total if horizon_total is not None else (monthly * months if monthly is not None else None)
    return Recommendation(
        kind="offer",
        offer=leader.id,
        lines=[line],
        vendors=[leader.vendor],
        cost_per_task=figure,
        cost_per_1000_tasks=_per_k(figure),
        basis=basis,
        months=months,
        total_spend=total,
        spend_per_year=monthly * 12 if monthly is not None else None,
        total_commitment=line.commitment,
        commitment_by_vendor=_by_vendor([line]),
        deadline=leader.valid_until,
        deadline_reason=f"the offer of {leader.vendor} expires then",
        best_single=BestSingle(
            offer=leader.id, vendor=leader.vendor, cost_per_task=figure, cost_per_1000_tasks=_per_k(figure), basis=basis
        ),
        saving_share=None,
        plan_failed=plan_failed,
        headline="",
    )


def plan_failure(problems: list[Problem]) -> str:
    """Why the plan cannot be solved, in the solver check's own words (without the file and field)."""
    return "; ".join(p.message for p in problems)


def recommend(
    ws: Workspace,
    ev: Evaluation,
    inputs: CostInputs | None = None,
    frontier: bool = False,
    solves: Solves | None = None,
) -> tuple[Recommendation, PlanResult | None]:
    """Solve the plan when procure.yaml has `demand:` (a plan that cannot be solved is recorded with its
    reason, never dropped in silence), then decide. The recommendation is also set on the evaluation. `solves`
    runs the frontier's solves (procure.analysis.plan.frontier.Solves)."""
    plan = None
    failed = None
    if ws.config.demand is not None and ev.ranked:
        from procure.analysis.plan import make_plan
        from procure.errors import InputError

        try:
            plan = make_plan(
                ws, ev.as_of, frontier=frontier, evaluation=(ev, inputs) if inputs is not None else None, solves=solves
            )
        except InputError as exc:
            failed = plan_failure(list(exc.problems))
    rec = decide(ev, plan, failed)
    ev.recommendation = rec
    return rec, plan
