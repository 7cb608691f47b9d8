"""The board paper's decision memo: the ask, the term sheet, the options, the scenarios and the risks.

The memo's words. Every figure it states is computed once in procure/analysis/memo.py (MemoFigures: commitments,
the saving against today, the risk register's impacts, the concentration of committed spend, the hedge's sums);
here they are chosen, put in sentences and formatted, and the template only lays them out.
"""

from __future__ import annotations

from procure.analysis.evaluate import Evaluation
from procure.analysis.hedging import HedgePlan
from procure.analysis.memo import (
    LIKELIHOODS,
    REPLACE_MONTHS,
    CostFigures,
    HedgeSums,
    MemoFigures,
    OfferRisks,
    PlanRisks,
    TermFigures,
    VendorRisks,
)
from procure.analysis.memo_document import (
    BoardMemo,
    HedgeAsk,
    OptionRow,
    PlanAsk,
    PlanCaseRow,
    PlanTerm,
    Risk,
    TermSheet,
    VendorAsk,
)
from procure.analysis.plan import PlanLine, PlanResult
from procure.analysis.plan.decisions import TOO_LITTLE_HISTORY
from procure.analysis.plan.result import TermSheetRow
from procure.analysis.plan.stress import DEMAND_SHIFTS, PRICE_CASE
from procure.analysis.recommendation import Recommendation, gpus_words, months_words, price_words
from procure.analysis.record import OfferRecord
from procure.analysis.scenarios import ScenarioRow
from procure.model.kinds import Kind, kind_named, kind_of
from procure.render.formats import cash, clip, month_range, prose_count


def _kind(record: OfferRecord) -> Kind:
    return kind_named(record.pricing_basis)


def _basis_words(basis: str) -> str:
    """The board's words for a pricing basis: its kind's, else the kind's label."""
    kind = kind_named(basis)
    return kind.board_words or kind.label


# How throughput between two measured speeds is read, in the board's words (assumptions.interpolation).
READING_WORDS = {
    "linear": "on a straight line between the two nearest measured speeds",
    "log": "on a straight line on a log scale of speed",
    "step": "as the nearest faster measured speed's figure",
    "monotone": "on a smooth curve through the measured speeds",
}
EVIDENCE_WORDS = {"measured": "measured", "vendor_claim": "vendor claim", None: "reference curve"}


def _per_k(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:,.2f}"


def _operator(record: OfferRecord) -> str:
    """The tier we compute from the operator's checklist evidence, and a published tier beside it."""
    rating = record.rating
    published = rating.published_tier.capitalize() if rating.published_tier else None
    if not rating.rated:
        if record.kind in ("owned", "bare_metal"):
            return "we operate it"
        return f"none; published {published}" if published else "not rated (no evidence)"
    tier = (rating.tier or "no tier").capitalize()  # rated, but its evidence earns no tier
    return f"{tier}; published {published}" if published else f"{tier}; none published"


PRO_WORDS = {
    "cheapest_today": lambda v: "lowest cost today",
    "cheapest_horizon": lambda v: f"lowest over {v} months",
    "measured": lambda v: "throughput measured",
    "provider_runs": lambda v: "provider runs the service",
    "no_commitment": lambda v: "no commitment to fill",
    "short_term": lambda v: f"short term ({v} month{'s' if v != 1 else ''})",
}
CON_WORDS = {
    "vendor_claim": lambda v: "throughput is the vendor's claim",
    "we_operate": lambda v: f"we operate it ({v:.1f} staff)",
    "prepaid": lambda v: f"{v:.0%} prepaid",
    "market_price": lambda v: "price moves with the market",
    "unrated_no_medal": lambda v: (
        "operator unrated: its availability is counted as for an operator with no medal until it is rated"
    ),
    "unrated_allowance": lambda v: (
        "operator unrated: its availability is discounted by our stated allowance until it is rated"
    ),
    "idle": lambda v: f"{v:.0%} of the commitment idle at stated demand",
    "capital": lambda v: f"capital for {v} years",
    "long_term": lambda v: f"long term ({v} months)",
}


def _evidence_words(record: OfferRecord) -> str:
    """What an offer's throughput rests on: the curve's source, or for a per-token offer its stated rate limits
    (none stated: said so)."""
    if not _kind(record).per_task:
        return EVIDENCE_WORDS.get(record.points_source, "reference curve")
    return "vendor's rate limits" if record.terms.service.rate_limits is not None else "no rate limits stated"


def _pros_cons(record: OfferRecord, ev: Evaluation, fig: MemoFigures) -> tuple[str, str]:
    """The pros and cons analysis decides (procure.analysis.memo.pros_and_cons), in the board's words."""
    pros, cons = fig.facts[record.id]
    return "; ".join(PRO_WORDS[f.name](f.value) for f in pros), "; ".join(CON_WORDS[f.name](f.value) for f in cons)


def _term_sheet(record: OfferRecord, ev: Evaluation, figures: TermFigures) -> TermSheet:
    t, c = record.terms, record.terms.contract
    p = t.pricing
    cur = record.currency
    memo_price = kind_of(p).memo_price
    assert memo_price is not None  # every kind words its price for the memo
    price = memo_price(p, cur, record.metrics, ev.currency)
    if c.escalator:
        escalator = f"+{c.escalator:.1%} a contract year"
    elif c.escalator_schedule:
        escalator = "; ".join(f"{rise:+.1%} from month {start}" for start, rise in c.escalator_schedule)
    else:
        escalator = "none"
    exits = []
    if c.termination:
        exits.append(
            f"termination for convenience on {c.termination.notice_months} months' notice, fee "
            f"{cash(c.termination.fee, ev.currency)}"
        )
    else:
        exits.append("no termination for convenience")
    if figures.exit_cost is not None:
        exits.append(f"exit costs {cash(figures.exit_cost, ev.currency)}")
    if c.late_delivery:
        exits.append(f"late delivery credit {cash(c.late_delivery.per_week, ev.currency)} a week")
    return TermSheet(
        vendor=record.vendor,
        offer=record.id,
        gpus=record.gpus,
        nodes=figures.nodes,
        term_months=record.term_months,
        price=price,
        escalator=escalator,
        total_commitment=figures.commitment,
        cash_at_signing=figures.at_signing,
        delivery=t.delivery,
        exit_terms="; ".join(exits),
    )


def _risks(
    record: OfferRecord, ev: Evaluation, f: OfferRisks, hedge: HedgePlan | None, runner: OfferRecord | None
) -> list[Risk]:
    """The register when one offer is the recommendation: its impacts are procure.analysis.memo's OfferRisks."""
    cur = ev.currency
    stated = ev.workload.tasks_per_month
    risks = []
    # Delivery: each month late we keep paying today's cost (or, without one, run on the runner-up).
    late_month = f.late_month
    late = record.terms.contract.late_delivery
    risks.append(
        Risk(
            risk=f"Delivery later than {record.terms.delivery}"
            if record.terms.delivery
            else "Delivery date not promised",
            likelihood=f.late_likelihood,
            impact=late_month,
            impact_basis="a month's saving forgone per month late"
            if late_month
            else "not priced: no figure for today's cost",
            mitigation=(
                f"credit of {cash(late.per_week, cur)} a week late"
                + (f", at most {cash(late.cap, cur)}" if late.cap is not None else "")
            )
            if late
            else (
                "ask for a late-delivery credit"
                if record.terms.delivery
                else "ask for a delivery date with a late-delivery credit"
            ),
            owner="Procurement",
        )
    )
    premium, prepaid, switch = f.premium, f.prepaid, f.switch
    risks.append(
        Risk(
            risk="Vendor fails or is sold during the term",
            likelihood=f.failure_likelihood,
            impact=f.failure,
            impact_basis=("prepayment lost and " if prepaid else "")
            + (
                f"the term on the runner-up, {runner.vendor}"
                if switch is not None and runner
                else "not priced: no acceptable fallback to switch to"
                if not prepaid
                else "no acceptable fallback"
            ),
            mitigation=("prepayment into escrow or a parent guarantee" if prepaid else "pay monthly in arrears")
            + ("; keep the runner-up's offer open" if runner else ""),
            owner="CFO",
        )
    )
    risks.append(
        Risk(
            risk="Concentration: the whole workload with one vendor",
            likelihood=f.concentration_likelihood,
            impact=premium,
            impact_basis=f"a year on the runner-up, {runner.vendor}, instead"
            if premium is not None and runner
            else "not priced: no acceptable fallback to price a year on",
            mitigation="keep the runner-up qualified; a portfolio plan can split the commitment",
            owner="Head of infrastructure",
        )
    )
    risks.append(
        Risk(
            risk="Operator delivers less availability than expected",
            likelihood=f.availability_likelihood,
            impact=f.availability,
            impact_basis="a year at one point less availability (1% more GPU-hours per task)"
            if f.availability is not None
            else "not priced: no monthly spend at the stated demand",
            mitigation="automatic SLA credits and a health-check clause"
            if not (record.terms.service.sla and record.terms.service.sla.automatic_credits)
            else "SLA credits are automatic; review monthly",
            owner="Head of infrastructure",
        )
    )
    risks.append(
        Risk(
            risk="GPU rental prices rise (months priced by the index, and renewals)",
            likelihood="medium",
            impact=f.index_up,
            impact_basis=f"index +20% over {hedge.horizon_months} months, unhedged"
            if f.index_up is not None and hedge is not None
            else "nothing floats with the market in the horizon",
            mitigation="the hedge below" if f.index_up is not None else "fixed price over the term",
            owner="Treasury",
        )
    )
    idle = f.idle
    risks.append(
        Risk(
            risk="Demand falls 30%",
            likelihood="medium",
            impact=idle,
            impact_basis=(
                f"idle commitment over the {record.term_months}-month term" if idle else "no commitment to leave idle"
            )
            if stated
            else "not priced: no demand stated in procure.yaml",
            mitigation="commit to the base load only; buy peaks on demand" if idle else "on-demand pricing",
            owner="Head of product",
        )
    )
    if f.claims is not None:
        risks.append(
            Risk(
                risk="Throughput below the vendor's claim",
                likelihood="medium",
                impact=f.claims,
                impact_basis="a year at the low end of the claim",
                mitigation="acceptance test on our workload before the commitment starts",
                owner="Head of infrastructure",
            )
        )
    return risks


def _hedge_ask(hedge: HedgePlan | None, sums: HedgeSums | None, missing: str) -> HedgeAsk:
    if hedge is None or sums is None:
        return HedgeAsk(ask=False, question="No hedge is proposed.", detail=missing)
    if sums.first_month is None or sums.last_month is None or hedge.floating_gpu_hours <= 0:
        return HedgeAsk(
            ask=False,
            question="No hedge is needed.",
            detail=f"Nothing floats with the market over the {hedge.horizon_months} months: the price is fixed for the "
            "whole horizon.",
        )
    months = month_range(sums.first_month, sums.last_month)
    removes = (
        f"If the index rises 20%, the floating cost rises {cash(sums.rise, hedge.currency)}; the hedge pays "
        f"{cash(sums.payoff, hedge.currency)} of it."
        if sums.rise is not None and sums.payoff is not None
        else ""
    )
    return HedgeAsk(
        ask=True,
        question=f"Approve buying {sums.contracts:,} GPU-hour price contracts ({prose_count(sums.hedged)} GPU-hours) "
        f"for {months}?",
        detail=(
            f"{prose_count(hedge.floating_gpu_hours)} GPU-hours of the recommendation float with the market (months "
            "priced by the index, and renewals after the term). "
            + removes
            + " Futures carry no premium: the exchange holds margin against the position, and if the index falls the "
            "hedge pays back what the lower price saves."
            + (
                f" Contracts: {hedge.contract.label}."
                if hedge.contract is not None and hedge.contract.unverified
                else ""
            )
        ),
    )


GLOSSARY = [
    "Cost per 1,000 tasks: everything we pay (rent, fees, our own staff, software, financing) over the successful "
    "tasks it buys, expected: averaged over what throughput, availability and demand may turn out to be.",
    "Index: a published average market price for renting one GPU for an hour.",
    "Horizon cost: the cost over the whole period shown, renewals at today's market price included, in today's money.",
]


PLAN_GLOSSARY = ["On demand: capacity billed only when used (GPU-hours or tokens), dearer than committed capacity."]


def _months(line_start: int | None, line_end: int | None) -> str:
    return "as needed" if line_start is None else f"{line_start}–{line_end}"


def _with(vendors: list[str]) -> str:
    names = [clip(v, 40) for v in dict.fromkeys(vendors)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _portfolio_words(commits: list[PlanLine], floats: list[PlanLine]) -> str:
    """ "224 B200 GPUs with Petrel Cloud for months 1–12 and 256 with Keel Systems for months 13–24, on-demand capacity
    for peaks"."""
    parts = [
        f"{c.gpus:,} B200 GPUs with {clip(c.vendor, 40)} for {month_range(c.start_month, c.end_month)}" for c in commits
    ]
    if not parts and not floats:
        return "nothing new to sign now: we keep what we hold and re-plan the later decisions"
    if not parts:
        return f"on-demand capacity only ({_with([f.vendor for f in floats])})"
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
        share = f"{plan.unserved_share:.1%}" if plan.unserved_share >= 0.001 else f"{plan.unserved_share:.2%}"
        words.append(
            f"{share} of the expected demand is left unserved ({prose_count(plan.unserved_tasks)} tasks over the "
            "horizon; the scenarios below give the worst), "
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
            f"Expected {_per_k(expected)} {cur} per 1,000 tasks over the {plan.demand.scenarios:,} demand scenarios, "
            f"{abs(plan.saving_share):.1%} {'below' if plan.saving_share >= 0 else 'above'} the best single offer "
            f"({clip(single_vendor or '', 40)} alone, {_per_k(single.expected_cost_per_task)})."
        )
    return f"Expected {_per_k(expected)} {cur} per 1,000 tasks; no single offer can serve every demand scenario alone."


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
                f"{line.price * 1000:,.2f} per 1,000 tasks"
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
            f"Approve the plan, a single offer: {what}; {cash(total, cur)} committed, {_per_k(expected)} {cur} "
            "per 1,000 tasks expected."
        )
    else:
        saving = (
            f", {abs(plan.saving_share):.1%} {'below' if plan.saving_share >= 0 else 'above'} the best single offer"
            if plan.saving_share is not None
            else ""
        )
        headline = (
            f"Approve a portfolio: {what}; {cash(total, cur)} committed, {_per_k(expected)} {cur} per 1,000 "
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


def vendor_asks(rec: Recommendation, cur: str) -> list[VendorAsk]:
    """The ask as a short list: one entry per vendor with its one commitment figure, then its lines."""
    found: dict[str, VendorAsk] = {}
    for line in rec.lines:
        entry = found.setdefault(
            line.vendor, VendorAsk(vendor=line.vendor, commitment=rec.commitment_by_vendor.get(line.vendor), lines=[])
        )
        term = (
            f" ({line.term_months}-month term)"
            if line.runs_past and line.term_months and line.term_months > 1 and rec.months
            else ""
        )
        month_by_month = ", month by month" if line.commitments > 1 else ""
        entry.lines.append(f"{gpus_words(line)}, {months_words(line)}{month_by_month}{term}, {price_words(line, cur)}")
        for condition in line.conditions:
            said = f"on condition, to confirm before signing: {condition}"
            if said not in entry.lines:
                entry.lines.append(said)
    return list(found.values())


def cost_words(rec: Recommendation, ev: Evaluation, fig: MemoFigures) -> list[str]:
    """What the recommendation costs, in sentences that agree with each other: the spend over the months
    and a year, against the best single offer, and against what we pay today (procure.analysis.memo's CostFigures)."""
    cur = ev.currency
    plan, c = fig.plan, fig.cost
    words: list[str] = []
    if rec.kind == "none" or rec.cost_per_task is None:
        return words
    per_k = _per_k(rec.cost_per_task)
    if rec.total_spend is not None and rec.months:
        spend = (
            f"Expected spend {cash(rec.total_spend, cur)} over {rec.months} month{'s' if rec.months != 1 else ''}, "
            f"{cash(rec.spend_per_year, cur)} a year"
        )
        if rec.total_commitment:
            spend += f"; signing binds us to {cash(rec.total_commitment, cur)}" + (
                " (terms that run past the last month counted whole)" if c.past_horizon else ""
            )
        words.append(spend + ".")
    best = rec.best_single
    if rec.kind == "plan":
        if best.offer is None:
            words.append(
                f"{per_k} {cur} per 1,000 tasks expected over the demand scenarios; no single offer can serve them all "
                "alone."
            )
        elif rec.saving_share is None:
            words.append(
                f"{per_k} {cur} per 1,000 tasks expected over the demand scenarios: the plan is the best single offer, "
                f"{clip(best.vendor, 40)} alone; no mix costs less."
            )
        else:
            gap = c.gap or 0.0
            monthly = (
                f", about {cash(c.gap_monthly, cur)} a month {'less' if gap >= 0 else 'more'}"
                if c.gap_monthly is not None
                else ""
            )
            words.append(
                f"{per_k} {cur} per 1,000 tasks expected over the demand scenarios, {abs(rec.saving_share):.1%} "
                f"{'below' if gap >= 0 else 'above'} "
                f"the best single offer ({clip(best.vendor, 40)} alone, {_per_k(best.cost_per_task)} on the same "
                f"scenarios){monthly}" + (f", because {rec.dearer_why}." if gap < 0 and rec.dearer_why else ".")
            )
        words += rec.usage  # an offer ranked first or signed that the plan uses less than it could, and what limits it
        if plan is not None and plan.bridges:
            vendor_of = {line.offer: line.vendor for line in plan.plan}
            words.append(
                "Before delivery: "
                + "; ".join(
                    f"{clip(b.vendor, 40)} delivers from month {b.delivery_month}, the months before served by "
                    + (
                        ", ".join(clip(vendor_of.get(o, o), 40) for o in b.served_by)
                        if b.served_by
                        else "nothing (priced unserved)"
                    )
                    + f", {cash(b.cost, cur)} expected over them"
                    for b in plan.bridges
                )
                + " (in the figures above)."
            )
    else:
        runner = ev.offer(ev.summary.runner_up) if ev.summary.runner_up else None
        if runner is not None and ev.summary.gap_share is not None:
            words.append(
                f"{per_k} {cur} per 1,000 tasks {rec.basis}: the best single offer; the next, "
                f"{clip(runner.vendor, 40)}, costs {ev.summary.gap_share:.1%} more."
            )
        else:
            words.append(f"{per_k} {cur} per 1,000 tasks {rec.basis}: the only acceptable offer.")
    words += _against_today(rec, ev, fig, c)
    return words


def _against_today(rec: Recommendation, ev: Evaluation, fig: MemoFigures, c: CostFigures) -> list[str]:
    """What we pay today against the recommendation a month, the difference told as volume and price."""
    cur, words = ev.currency, []
    tasks_now = ev.workload.tasks_per_month
    if c.spend_now is not None and fig.position is not None and tasks_now:
        price_now, label, spend_now = fig.position.cost_per_task, fig.position.label, c.spend_now
        if rec.kind == "plan" and c.plan_tasks and c.new_spend is not None and c.diff is not None:
            plan_tasks, new_spend, diff = c.plan_tasks, c.new_spend, c.diff
            volume, price = c.volume or 0.0, c.price or 0.0
            growth = fig.plan.demand.growth if fig.plan is not None else 0.0
            why = []
            if c.volume_told:
                why.append(
                    f"{cash(abs(volume), cur)} because we expect {'more' if volume > 0 else 'fewer'} tasks "
                    f"({prose_count(plan_tasks)} a month on "
                    f"average{f', demand growing {growth:.0%} a month' if growth > 0 else ''}) at today's price"
                )
            if c.price_told:
                why.append(
                    f"{cash(abs(price), cur)} because each task costs {'more' if price > 0 else 'less'} than today's "
                    f"{_per_k(price_now)} {cur} per 1,000"
                )
            words.append(
                f"Today we pay {cash(spend_now, cur)} a month ({_per_k(price_now)} {cur} per 1,000 tasks, {label}, for "
                f"{prose_count(tasks_now)} tasks). The plan spends "
                f"{cash(new_spend, cur)} a month on average, {cash(abs(diff), cur)} {'more' if diff > 0 else 'less'}"
                + (": " + "; ".join(why) if why else "")
                + "."
            )
        elif rec.kind == "offer":
            if c.diff is not None:
                diff = c.diff
                words.append(
                    f"Today we pay {_per_k(price_now)} {cur} per 1,000 tasks ({label}); at today's "
                    f"{prose_count(tasks_now)} tasks a month the recommendation "
                    f"{'saves' if diff < 0 else 'costs'} {cash(abs(diff), cur)} a month{' more' if diff > 0 else ''}, "
                    f"{cash(c.diff_year, cur)} a year."
                )
    elif rec.kind in ("plan", "offer"):
        words.append("No figure for what we pay today is recorded, so no saving against today can be stated.")
    return words


def deadline_words(rec: Recommendation) -> str | None:
    if rec.deadline is None:
        return None
    return f"Decide by {rec.deadline:%-d %B %Y}: {rec.deadline_reason}."


# Why an offer is not acceptable, in the board's words, by the first gate it fails (analysis/gates.py): the reasons
# themselves name settings and figures a board does not read (the comparison report gives them in full).
GATE_WORDS = {
    "availability": "availability below our minimum",
    "latency": "too slow for each user",
    "ttft": "first answer too slow",
    "quality": "output quality below our bar",
    "security": "a security requirement not met",
    "region": "outside the regions we allow",
    "grade": "not a service we buy",
    "capacity": "too small for the demand",
    "validity": "quote expired",
    "cost": "its cost cannot be worked out from the offer",
}
REJECTED_NAMED = 2  # up to this many offers are named with their reason; more are counted by reason


def rejected_words(fig: MemoFigures) -> str | None:
    """The offers not acceptable at any price in one sentence of the board's words, whatever their number: named
    with their reason when few, counted by reason when more; the comparison report gives each offer's reasons."""
    if not fig.rejected:
        return None
    if len(fig.rejected) <= REJECTED_NAMED:
        named = "; ".join(f"{clip(vendor, 40)} ({GATE_WORDS.get(gate, gate)})" for vendor, gate in fig.rejected)
        return f"Not acceptable at any price: {named}. The comparison report gives each offer's reasons."
    counts: dict[str, int] = {}
    for _, gate in fig.rejected:
        counts[gate] = counts.get(gate, 0) + 1
    why = ", ".join(f"{GATE_WORDS.get(g, g)} ({n})" for g, n in counts.items())
    return (
        f"Not acceptable at any price: {len(fig.rejected)} offers, {why}; the comparison report gives each offer's "
        "reasons."
    )


def board_memo(ev: Evaluation, fig: MemoFigures) -> BoardMemo:
    """The memo for the recommendation, in words, from its figures (procure.analysis.memo.memo_figures): the plan
    when there is one (every part then speaks of the plan's fixed portfolio), else the recommended offer; without
    either, the reasons none can be recommended."""
    rec, plan = fig.rec, fig.plan
    memo = _board_memo(ev, fig)
    memo.options_more = max(0, len(ev.ranked) - len(memo.options))
    memo.rejected = rejected_words(fig)
    memo.ask = vendor_asks(rec, ev.currency)
    if rec.kind == "plan" and plan is not None:
        memo.holding = holding_words(plan, fig)
        memo.plan_terms = [term_sheet_row(r, ev.currency) for r in plan.term_sheet]
    memo.cost_words = cost_words(rec, ev, fig)
    memo.deadline = rec.deadline
    memo.deadline_words = deadline_words(rec)
    memo.plan_failed = rec.plan_failed
    memo.signed = [signed_line(o, fig.signed_months[o.id]) for o in ev.offers if o.evidence]
    cur = ev.currency
    if rec.kind == "plan":
        on_demand = {x.vendor for x in rec.lines if x.role == "pay_as_used"} - {
            x.vendor for x in rec.lines if x.role == "commit"
        }
        names = [clip(v, 40) + (" (on demand)" if v in on_demand else "") for v in rec.vendors]
        committed = f"{cash(rec.total_commitment, cur)} committed, " if rec.total_commitment else ""
        if not names:  # nothing the plan needs can be signed today: what we hold serves until the later decisions
            memo.headline = (
                "Nothing new to sign today: we keep what we hold and re-plan the later decisions; "
                f"{cash(rec.spend_per_year, cur)} a year expected, "
                f"{_per_k(rec.cost_per_task)} {cur} per 1,000 tasks."
            )
        else:
            who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            memo.headline = (
                f"Approve the purchase plan with {who}: {committed}{cash(rec.spend_per_year, cur)} a year expected, "
                f"{_per_k(rec.cost_per_task)} {cur} per 1,000 tasks."
            )
    if rec.plan_failed and rec.kind == "offer":
        memo.headline = (
            "The purchase plan could not be solved, so the best single offer is asked for instead. " + memo.headline
        )
    return memo


def signed_line(record: OfferRecord, months: int) -> str:
    """A signed vendor's delivery in one line: the posteriors its figures are blended with, over `months` of
    evidence (capacity months move throughput, incident months availability: the larger)."""
    e = record.evidence or {}
    parts = []
    if e.get("throughput_ratio") is not None:
        parts.append(f"throughput {e['throughput_ratio']:.1%} of the promise")
    if e.get("availability") is not None:
        parts.append(
            f"availability {e['availability']:.2%}"
            + (f" (SLA {record.sla_availability:.2%})" if record.sla_availability else "")
        )
    if e.get("served_rate") is not None:
        parts.append(f"requests served {e['served_rate']:.2%}")
    return (
        f"{clip(record.vendor, 40)}, signed, {months} month{'s' if months != 1 else ''} measured: "
        + ", ".join(parts)
        + " (the comparison report's scorecard)"
    )


def _board_memo(ev: Evaluation, fig: MemoFigures) -> BoardMemo:
    cur, rec, plan, hedge, hedge_missing = ev.currency, fig.rec, fig.plan, fig.hedge, fig.hedge_missing
    leader = ev.offer(ev.summary.recommended) if ev.summary.recommended else None
    if leader is None:
        return BoardMemo(
            currency=cur,
            offer=None,
            headline="No offer can be recommended: none passes every requirement.",
            terms=None,
            today=None,
            options=[],
            near_tie=None,
            scenarios=[],
            scenario_note="",
            risks=[],
            hedge=_hedge_ask(None, None, hedge_missing),
            glossary=GLOSSARY,
        )
    runner = ev.offer(ev.summary.runner_up) if ev.summary.runner_up else None
    assert fig.terms is not None
    terms = _term_sheet(leader, ev, fig.terms)
    line = rec.lines[0] if rec.kind == "offer" and rec.lines else None
    # the GPUs the contract commits; where the stated demand bills more, the headline says so beside the commitment
    gpus = (line.gpus_committed or line.gpus) if line is not None else terms.gpus
    what = f"{gpus:,} B200 GPU{'s' if gpus != 1 else ''}" if gpus else "per-token B200 serving"
    # a kind that reserves more than it owes (take-or-pay) says both: the floor alone reads as the whole reservation
    reserved = kind_of(leader.terms.pricing).reserved_words(leader.terms, "B200 GPUs")
    what = f"{reserved}," if reserved else what
    commit = f", {cash(terms.total_commitment, cur)}" if terms.total_commitment else ""
    if line is not None and line.gpus_committed is not None:
        commit += f" ({line.gpus:,} GPUs billed at today's demand)"
    cost = f"{_per_k(leader.metrics[ev.rank_by])} {cur} per 1,000 tasks" + (
        f" over {ev.horizon_months} months" if ev.rank_by == "horizon_cost_per_task" else ""
    )
    headline = (
        f"Approve a {terms.term_months}-month commitment of {what} with {clip(leader.vendor, 60)}{commit}, at {cost}."
    )
    if not terms.total_commitment:  # on demand or per token: nothing is committed, so nothing is called a commitment
        headline = (
            f"Approve using {what} with {clip(leader.vendor, 60)} on demand, billed as used (nothing "
            f"committed), at {cost}."
        )
    ask = None
    if plan is not None and plan.plan:
        headline, ask = plan_ask(plan, fig)  # the plan over the demand scenarios is the recommendation
    options = []
    for o in ev.ranked:
        pros, cons = _pros_cons(o, ev, fig)
        options.append(
            OptionRow(
                offer=o.id,
                vendor=o.vendor,
                rank=o.rank or 0,
                price_basis=_basis_words(o.pricing_basis),
                evidence=_evidence_words(o),
                operator=_operator(o),
                commitment=fig.commitments.get(o.id),
                snapshot_per_task=o.metrics.get("cost_per_task"),
                horizon_per_task=o.metrics.get("horizon_cost_per_task"),
                pros=pros,
                cons=cons,
            )
        )
    # Page 1 holds the cheapest few, the best single offer and the offers asked for; the comparison report has the rest.
    named = {rec.best_single.offer, leader.id} | {line.offer for line in rec.lines}
    shown = [o for i, o in enumerate(options) if i < OPTIONS_SHOWN or o.offer in named]
    options = shown
    near_tie = _near_tie(ev, fig)
    knife = knife_edge_words(ev)
    rows = fig.rows
    flips = [r for r in rows if r.flips]
    note = (
        "The recommendation stays the cheapest in every case."
        if not flips
        else "The cheapest offer changes in: " + "; ".join(f"{r.name.lower()} ({r.cheapest})" for r in flips) + "."
    )
    if ask is not None and plan is not None and fig.plan_risks is not None and fig.hedge_sums is not None:
        for o in options:
            if o.offer in plan.single_offers:
                o.scenarios_per_task = plan.single_offers[o.offer]
        plan_cases, plan_note = _plan_cases(plan, rows, fig)
        asked = _plan_hedge(plan, fig.hedge_sums, hedge, hedge_missing)
        return BoardMemo(
            currency=cur,
            offer=leader.id,
            headline=headline,
            terms=terms,
            today=fig.today,
            options=options,
            near_tie=near_tie,
            scenarios=rows,
            scenario_note=note,
            risks=_plan_risks(plan, ev, fig.plan_risks, asked.ask),
            hedge=asked,
            glossary=GLOSSARY + PLAN_GLOSSARY,
            plan=ask,
            plan_option=_plan_option(plan, ask, ev),
            plan_cases=plan_cases,
            plan_note=plan_note,
            knife_edge=knife,
        )
    assert fig.offer_risks is not None
    return BoardMemo(
        currency=cur,
        offer=leader.id,
        headline=headline,
        terms=terms,
        today=fig.today,
        options=options,
        near_tie=near_tie,
        scenarios=rows,
        scenario_note=note,
        risks=_risks(leader, ev, fig.offer_risks, hedge, runner),
        hedge=_hedge_ask(hedge, fig.hedge_sums, hedge_missing),
        glossary=GLOSSARY,
        plan=ask,
        knife_edge=knife,
    )


def knife_edge_words(ev: Evaluation) -> str | None:
    """'Knife edge: <vendor> passes ... : its acceptance hangs on that margin (it fails a gate in 38% of the
    draws).' for the leader's gates passed by less than one standard deviation of its own inputs."""
    edges = ev.summary.knife_edges
    risks = " Named risk: " + "; ".join(r.words for r in ev.summary.gate_risks) + "." if ev.summary.gate_risks else ""
    if not ev.ranked or not (edges or risks):
        return None
    if not edges:
        return risks.strip()
    leader = ev.ranked[0]
    odds = leader.uncertainty.prob_fails_gate if leader.uncertainty is not None else None
    return (
        "Knife edge: "
        + "; ".join(e.words for e in edges)
        + (f" (it fails a gate in {odds:.0%} of the draws)" if odds else "")
        + "."
        + risks
    )


def _near_tie(ev: Evaluation, fig: MemoFigures) -> str | None:
    """When today's cheapest and the cheapest over the horizon differ, say so and why."""
    if fig.near_tie is None:
        return None
    snap, hor, gap = ev.offer(fig.near_tie[0]), ev.offer(fig.near_tie[1]), fig.near_tie_gap
    reasons = []
    for o in (snap, hor):
        why = [_basis_words(o.pricing_basis), f"{o.term_months}-month term"]
        c = o.terms.contract
        if c.escalator or c.escalator_schedule:
            why.append("price escalator")
        if o.terms.pricing.prepay_fraction:
            why.append(f"{o.terms.pricing.prepay_fraction:.0%} prepaid")
        why.append("throughput " + EVIDENCE_WORDS.get(o.points_source, "from a reference curve"))
        why.append("operator " + _operator(o).split(";")[0].lower())
        reasons.append(f"{o.vendor}: " + ", ".join(why))
    return (
        f"A near-tie: {snap.vendor} is cheapest today and {hor.vendor} over {ev.horizon_months} months, "
        f"{gap:.1%} apart today: within what the inputs can move. Choose on the terms, not the figure. "
        + "; ".join(reasons)
        + "."
    )


# --- the memo when the plan is the ask ------------------------------------------------------------

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


def _plan_option(plan: PlanResult, ask: PlanAsk, ev: Evaluation) -> OptionRow:
    """The plan as the options' first row, costed over the demand scenarios as each single offer is beside it."""
    floats = [x for x in ask.lines if x.role != "commit"]
    offers = [ev.offer(line.offer) for line in plan.plan]
    bases = list(
        dict.fromkeys(_basis_words(o.pricing_basis) for o, line in zip(offers, plan.plan) if line.role == "commit")
    )
    evidence = list(dict.fromkeys(_evidence_words(o) for o in offers))
    pros, cons = [], []
    if plan.saving_share is not None and plan.saving_share > 0 and ask.single_vendor:
        pros.append(
            f"{plan.saving_share:.1%} below the best single offer ({clip(ask.single_vendor, 30)} alone, "
            f"{_per_k(ask.single_per_task)})"
        )
    if plan.expected_unused_share > 0.005:
        cons.append(f"{plan.expected_unused_share:.0%} of the commitment idle")
    if plan.pay_as_used_share > 0.005:
        cons.append(f"{plan.pay_as_used_share:.0%} of tasks on demand")
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


def _plan_cases(plan: PlanResult, rows: list[ScenarioRow], fig: MemoFigures) -> tuple[list[PlanCaseRow], str]:
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


OPTIONS_SHOWN = (
    1  # offers in the memo's options table (with the best single offer and those of the ask, if further down)
)


def _plan_risks(plan: PlanResult, ev: Evaluation, f: PlanRisks, hedge_asked: bool) -> list[Risk]:
    """The register for the plan: every impact from the plan's own dispatch of its fixed portfolio
    (procure.analysis.memo's PlanRisks).

    Each committed vendor's late delivery and failure (the largest by committed spend named, the rest
    summed), the concentration of committed spend, then the risks of the plan as a whole."""
    cur, months = plan.currency, plan.demand.months
    named = f.vendors[: f.named]
    risks = [_late_delivery_risk(v, ev.offer(v.offer), cur) for v in named if v.signing]
    if f.late_rest:
        risks.append(_smaller_vendors_late(f))
    risks += [_vendor_failure_risk(v, ev.offer(v.offer), months, cur) for v in named]
    if f.fail_worst is not None:
        rest = f.vendors[f.named :]
        worst = _vendor_failure_risk(f.fail_worst, ev.offer(f.fail_worst.offer), months, cur)
        risks.append(_smaller_vendor_fails(worst, rest))
    if f.committed:
        risks.append(_concentration_risk(plan, f, cur))
    return risks + _plan_wide_risks(plan, ev, f, hedge_asked)


def _tasks(count: float) -> str:
    """A count of tasks as a board reads it: '115 M' from a million up."""
    return f"{count / 1e6:,.0f} M" if count >= 1e6 else f"{count:,.0f}"


def _priced(shortfall: float | None, price: float | None, cur: str) -> str:
    """The price unserved tasks are counted at, when the shortfall is priced."""
    if price is not None and shortfall:
        return f" at {price * 1000:,.2f} {cur} per 1,000 (the shortfall)"
    return ", not priced (plan.unserved_penalty_per_task)"


def _unserved_words(tasks: float, share: float, shortfall: float, price: float | None, cur: str) -> str:
    """The demand a risk leaves unserved and its shortfall, apart from the cash."""
    return f"{share:.0%} of demand ({_tasks(tasks)} tasks) unserved{_priced(shortfall, price, cur)}"


def _late_delivery_risk(v: VendorRisks, record: OfferRecord, cur: str) -> Risk:
    """A committed vendor delivering late: the cash of a month without it (its capacity bought on demand), and the
    demand nothing else in the plan serves meanwhile apart, at the plan's unserved price (the plan's stress)."""
    late = record.terms.contract.late_delivery
    stranded, price = v.stranded, v.unserved_price
    if v.first_month > 1:
        what = f"{clip(v.vendor, 30)} not in service by month {v.first_month}"
    elif record.terms.delivery:
        what = f"{clip(v.vendor, 30)} delivers later than {record.terms.delivery}"
    else:
        what = f"{clip(v.vendor, 30)}: no delivery date promised"
    extra = v.late_extra
    basis = "per month late: its capacity bought on demand" if extra > 0 else "per month late: no extra cash"
    if stranded:
        priced = _priced(v.late_shortfall, price, cur)
        basis += f"; {_tasks(v.late_shortfall_tasks)} tasks unserved per month late{priced}"
    elif extra <= 0:
        basis = "none: the rest of the plan's capacity covers the demand meanwhile"
    return Risk(
        risk=what,
        likelihood=v.late_likelihood,
        impact=extra,
        impact_basis=basis,
        shortfall=v.late_shortfall,
        mitigation=(
            (
                f"credit of {cash(late.per_week, cur)} a week late"
                + (f", at most {cash(late.cap, cur)}" if late.cap is not None else "")
            )
            if late
            else "ask for a late-delivery credit"
        )
        + ("; qualify a fallback (no other source in the plan)" if stranded else ""),
        owner="Procurement",
    )


def _vendor_failure_risk(v: VendorRisks, record: OfferRecord, months: int, cur: str) -> Risk:
    """A committed vendor failing during its term. Cash: its prepayment lost, plus its capacity bought on demand over
    the horizon (the plan's stress without it). Apart, when nothing else in the plan serves its demand: that demand
    unserved for REPLACE_MONTHS, until a fallback delivers, at the plan's unserved price."""
    stranded, price, lost, rest, extra = v.stranded, v.unserved_price, v.lost, v.rest, v.fail_extra
    basis = (f"{cash(lost, cur)} prepaid lost; " if lost else "") + (
        f"its capacity bought on demand over {months} months"
        if extra > 0
        else "no extra cash: the rest of the plan's capacity serves the demand"
        if not stranded
        else "no extra cash"
    )
    shortfall = v.fail_shortfall
    if stranded:
        basis += (
            f"; {REPLACE_MONTHS} month{'s' if REPLACE_MONTHS > 1 else ''} until a fallback delivers: "
            + _unserved_words(v.fail_tasks, v.unserved_share, shortfall or 0.0, price, cur)
        )
    return Risk(
        risk=f"{clip(v.vendor, 30)} fails during its term",
        likelihood=v.failure_likelihood,
        impact=v.fail_impact,
        impact_basis=basis,
        shortfall=shortfall,
        mitigation=("prepayment into escrow or a parent guarantee" if lost else "pay monthly in arrears")
        + (
            f"; {_with(rest)} on demand already in the plan"
            if rest and not stranded
            else "; qualify a fallback offer (no other source in the plan)"
            if stranded
            else ""
        ),
        owner="CFO",
    )


def _smaller_vendors_late(f: PlanRisks) -> Risk:
    """The smaller commitments' late deliveries in one row: their priced impacts summed (PlanRisks)."""
    count = len(f.late_rest)
    return Risk(
        risk=f"{count} smaller commitment{'s' if count > 1 else ''} delivered late",
        likelihood=max((v.late_likelihood for v in f.late_rest), key=LIKELIHOODS.index),
        impact=f.late_rest_impact,
        impact_basis="a month of their capacity bought on demand, per month late, all of them"
        + ("; with demand unserved apart (shortfall)" if f.late_rest_shortfall else ""),
        shortfall=f.late_rest_shortfall,
        mitigation="a late-delivery credit in each contract",
        owner="Procurement",
    )


def _smaller_vendor_fails(worst: Risk, rest: list[VendorRisks]) -> Risk:
    """The smaller committed vendors' failures in one row: the costliest of them (PlanRisks.fail_worst)."""
    return Risk(
        risk=f"One of {len(rest)} smaller committed vendors fails"
        if len(rest) > 1
        else "The smallest committed vendor fails",
        likelihood=max((v.failure_likelihood for v in rest), key=LIKELIHOODS.index),
        impact=worst.impact,
        impact_basis=f"the costliest: {worst.risk.removesuffix(' fails during its term')}, {worst.impact_basis}",
        shortfall=worst.shortfall,
        mitigation="pay monthly in arrears; keep the other offers qualified",
        owner="CFO",
    )


def _concentration_risk(plan: PlanResult, f: PlanRisks, cur: str) -> Risk:
    """The committed spend concentrated with one vendor: the largest commitment and every vendor's share."""
    assert f.top_vendor is not None and f.top_share is not None
    shares = ", ".join(f"{clip(k, 30)} {share:.0%}" for k, share in f.concentration)
    cap = plan.policy.max_vendor_share
    return Risk(
        risk="Concentration of committed spend",
        likelihood=f.concentration_likelihood,
        impact=f.top_commitment,
        impact_basis=f"with {clip(f.top_vendor, 30)}: {shares} of {cash(f.total, cur)} bound (held and signed now)",
        mitigation=(
            f"no vendor above {cap:.0%} of expected capacity"
            if cap < 1
            else "a vendor share limit (plan.max_vendor_share)"
        )
        + "; keep the other offers qualified",
        owner="Head of infrastructure",
    )


def _plan_wide_risks(plan: PlanResult, ev: Evaluation, f: PlanRisks, hedge_asked: bool) -> list[Risk]:
    """The risks of the plan as a whole: availability below the expected, market prices 20% up, demand
    30% down, and throughput below a vendor's claim, each from the plan's stress cases."""
    assert plan.stress is not None
    cur, st, months = plan.currency, plan.stress, plan.demand.months
    risks: list[Risk] = []
    risks.append(
        Risk(
            risk="Operators deliver less availability than expected",
            likelihood=f.availability_likelihood,
            impact=st.availability_point,
            impact_basis=f"cash over {months} months at one point less availability, the lost tasks bought on demand"
            + ("; the rest unserved (the shortfall)" if st.availability_shortfall > 0.5 else ""),
            shortfall=st.availability_shortfall if st.availability_shortfall > 0.5 else None,
            mitigation="automatic SLA credits and a health-check clause in every commitment",
            owner="Head of infrastructure",
        )
    )
    floating = f.floating
    risks.append(
        Risk(
            risk="Market prices rise 20% (on demand, or following the index)",
            likelihood="medium",
            impact=f.price_impact,
            impact_basis=f"20% of {cash(floating, cur)} at market prices over {months} months"
            if floating
            else "nothing in the plan is priced at the market",
            mitigation="the hedge below covers the GPU-hour part"
            if hedge_asked
            else (
                "commitments at fixed prices; agree on-demand prices for the term"
                if floating
                else "fixed prices throughout"
            ),
            owner="Treasury",
        )
    )
    risks.append(
        Risk(
            risk="Demand 30% below the plan",
            likelihood="medium",
            impact=f.idle_30 if f.idle_30 > 0 else None,
            impact_basis=f"commitment idle over {months} months ({cash(f.idle_50, cur)} at −50%)"
            if f.idle_30 > 0
            else "no commitment left idle",
            mitigation="commit to the base load, peaks on demand; resize at renewal",
            owner="Head of product",
        )
    )
    if st.claims_low_end is not None:
        claimed = _with(f.claimed)
        risks.append(
            Risk(
                risk=f"Throughput below the vendor's claim ({claimed})",
                likelihood="medium",
                impact=st.claims_low_end,
                impact_basis=f"cash over {months} months at the low end of the claim (×{st.claims_factor:g}), the lost "
                "tasks bought on demand"
                + ("; the rest unserved (the shortfall)" if st.claims_shortfall and st.claims_shortfall > 0.5 else ""),
                shortfall=st.claims_shortfall if st.claims_shortfall and st.claims_shortfall > 0.5 else None,
                mitigation="acceptance test on our workload before the commitment starts",
                owner="Head of infrastructure",
            )
        )
    return risks


def _floating_words(sums: HedgeSums) -> str:
    """What moves with the market in the plan, naming only what it holds."""
    parts = []
    if sums.linked:
        parts.append(f"the commitments whose price follows the market index ({_with(sums.linked)})")
    if sums.later:
        parts.append(f"the later decisions, priced at the market when they are made ({_with(sums.later)})")
    if sums.on_demand_hours > 0:
        parts.append("the capacity bought on demand")
    fixed = "" if sums.linked else "The commitments signed now are at fixed prices; "
    what = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + (parts[-1] if parts else "nothing")
    return f"{fixed}{'w' if fixed else 'W'}hat moves with the market is {what}: "


def _plan_hedge(plan: PlanResult, sums: HedgeSums, hedge: HedgePlan | None, missing: str) -> HedgeAsk:
    """The hedge of what floats in the plan, as the comparison report's hedging chapter computes it
    (procure.analysis.hedging.plan_hedge): the same contracts for the same months (HedgeSums)."""
    task_rent = sums.task_rent
    cur, months = plan.currency, plan.demand.months
    token = (
        f" Capacity billed per token ({cash(task_rent, cur)} expected) does not move with a GPU-hour price index."
        if task_rent > 0
        else ""
    )
    if sums.hours <= 0:
        return HedgeAsk(
            ask=False,
            question="No hedge is needed.",
            detail="Every commitment in the plan is at a fixed price and the plan buys no GPU-hours at market prices "
            f"over its {months} months: nothing moves with the market price." + token,
        )
    if hedge is None or not sums.of_plan:
        return HedgeAsk(
            ask=False,
            question="No hedge is proposed.",
            detail=f"The plan's on-demand GPU-hours move with the market price ({prose_count(sums.hours)} expected "
            f"over {months} months, {cash(sums.rent, cur)}). {missing}" + token,
        )
    span = hedge.horizon_months
    if sums.first_month is None or sums.last_month is None:
        return HedgeAsk(
            ask=False,
            question="No hedge is needed.",
            detail=f"The plan's GPU-hours at market prices ({prose_count(sums.exposed_hours)} expected over "
            f"{month_range(1, span)}) are too few for one contract of {hedge.contract_gpu_hours:,.0f} GPU-hours."
            + token,
        )
    contracts, hedged = sums.contracts, sums.hedged
    shares = ", ".join(
        f"{r.share:.0%} of months {r.first_month}–{r.last_month}"
        if r.first_month != r.last_month
        else f"{r.share:.0%} of month {r.first_month}"
        for r in hedge.ladder
    )
    first, last = sums.first_month, sums.last_month
    return HedgeAsk(
        ask=True,
        question=f"Approve buying {contracts:,} GPU-hour price contracts ({prose_count(hedged)} GPU-hours) for "
        f"{month_range(first, last)}, against the plan's GPU-hours at market prices?",
        detail=(
            _floating_words(sums) + f"{prose_count(sums.exposed_hours)} GPU-hours expected over {month_range(1, span)} "
            f"({cash(sums.exposed_rent, cur)}). "
            f"If the index and these prices rise 20%, that cost rises {cash(sums.rise, cur)}; the contracts pay "
            f"{cash(sums.payoff, cur)} of it. "
            "The hours are expected, not promised (on-demand use falls first when demand falls), so a falling share "
            f"is covered: {shares}. "
            "No premium: the exchange holds margin, and if the index falls the contracts pay back what the lower price "
            "saves." + token
        ),
    )
