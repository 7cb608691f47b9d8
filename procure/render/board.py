"""The board paper's decision memo: the ask, the term sheet, the options, the scenarios and the risks.

The memo's words. Every figure it states is computed once in procure/analysis/memo.py (MemoFigures: commitments,
the saving against today, the risk register's impacts, the concentration of committed spend, the hedge's sums);
here they are chosen, put in sentences and formatted, and the template only lays them out.
"""

from __future__ import annotations

from procure.analysis.evaluate import Evaluation
from procure.analysis.memo import (
    CostFigures,
    MemoFigures,
    TermFigures,
)
from procure.analysis.memo_document import (
    BoardMemo,
    OptionRow,
    TermSheet,
    VendorAsk,
)
from procure.analysis.recommendation import Recommendation, gpus_words, months_words, price_words
from procure.analysis.record import OfferRecord
from procure.analysis.scenarios import ScenarioRow
from procure.model.kinds import kind_of
from procure.render.board_plan import holding_words, plan_ask, plan_cases, plan_option, term_sheet_row
from procure.render.board_risks import hedge_ask, offer_risks, plan_hedge_ask, plan_risks
from procure.render.board_words import (
    EVIDENCE_WORDS,
    basis_words,
    evidence_words,
    operator_words,
    per_k,
)
from procure.render.formats import cash, clip, prose_count

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
    elif t.usage_billed:
        exits.append("billed for the hours used: nothing is owed for capacity not used")
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


GLOSSARY = [
    "Cost per 1,000 tasks: everything we pay (rent, fees, our own staff, software, financing) over the successful "
    "tasks it buys, expected: averaged over what throughput, availability and demand may turn out to be.",
    "Index: a published average market price for renting one GPU for an hour.",
    "Horizon cost: the cost over the whole period shown, renewals at today's market price included, in today's money.",
]


PLAN_GLOSSARY = ["On demand: capacity billed only when used (GPU-hours or tokens), dearer than committed capacity."]


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
    each = per_k(rec.cost_per_task)  # per 1,000 tasks
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
                f"{each} {cur} per 1,000 tasks expected over the demand scenarios; no single offer can serve them all "
                "alone."
            )
        elif rec.saving_share is None:
            words.append(
                f"{each} {cur} per 1,000 tasks expected over the demand scenarios: the plan is the best single offer, "
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
                f"{each} {cur} per 1,000 tasks expected over the demand scenarios, {abs(rec.saving_share):.1%} "
                f"{'below' if gap >= 0 else 'above'} "
                f"the best single offer ({clip(best.vendor, 40)} alone, {per_k(best.cost_per_task)} on the same "
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
                f"{each} {cur} per 1,000 tasks {rec.basis}: the best single offer; the next, "
                f"{clip(runner.vendor, 40)}, costs {ev.summary.gap_share:.1%} more."
            )
        else:
            words.append(f"{each} {cur} per 1,000 tasks {rec.basis}: the only acceptable offer.")
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
                    f"{per_k(price_now)} {cur} per 1,000"
                )
            words.append(
                f"Today we pay {cash(spend_now, cur)} a month ({per_k(price_now)} {cur} per 1,000 tasks, {label}, for "
                f"{prose_count(tasks_now)} tasks). The plan spends "
                f"{cash(new_spend, cur)} a month on average, {cash(abs(diff), cur)} {'more' if diff > 0 else 'less'}"
                + (": " + "; ".join(why) if why else "")
                + "."
            )
        elif rec.kind == "offer":
            if c.diff is not None:
                diff = c.diff
                words.append(
                    f"Today we pay {per_k(price_now)} {cur} per 1,000 tasks ({label}); at today's "
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
                f"{per_k(rec.cost_per_task)} {cur} per 1,000 tasks."
            )
        else:
            who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            memo.headline = (
                f"Approve the purchase plan with {who}: {committed}{cash(rec.spend_per_year, cur)} a year expected, "
                f"{per_k(rec.cost_per_task)} {cur} per 1,000 tasks."
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
        return _no_offer_memo(cur, hedge_missing)
    runner = ev.offer(ev.summary.runner_up) if ev.summary.runner_up else None
    assert fig.terms is not None
    terms = _term_sheet(leader, ev, fig.terms)
    headline = _offer_headline(ev, rec, leader, terms)
    ask = None
    if plan is not None and plan.plan:
        headline, ask = plan_ask(plan, fig)  # the plan over the demand scenarios is the recommendation
    options = _options(ev, fig, leader)
    near_tie = _near_tie(ev, fig)
    knife = knife_edge_words(ev)
    rows = fig.rows
    note = _scenario_note(rows)
    option, cases, plan_note = None, [], ""
    if ask is not None and plan is not None and fig.plan_risks is not None and fig.hedge_sums is not None:
        for o in options:
            if o.offer in plan.single_offers:
                o.scenarios_per_task = plan.single_offers[o.offer]
        cases, plan_note = plan_cases(plan, rows, fig)
        asked = plan_hedge_ask(plan, fig.hedge_sums, hedge, hedge_missing)
        risks, glossary = plan_risks(plan, ev, fig.plan_risks, asked.ask), GLOSSARY + PLAN_GLOSSARY
        option = plan_option(plan, ask, ev, fig)
    else:
        assert fig.offer_risks is not None
        asked = hedge_ask(hedge, fig.hedge_sums, hedge_missing)
        risks, glossary = offer_risks(leader, ev, fig.offer_risks, hedge, runner), GLOSSARY
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
        risks=risks,
        hedge=asked,
        glossary=glossary,
        plan=ask,
        plan_option=option,
        plan_cases=cases,
        plan_note=plan_note,
        knife_edge=knife,
    )


def _no_offer_memo(cur: str, hedge_missing: str) -> BoardMemo:
    """The memo when no offer passes every requirement."""
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
        hedge=hedge_ask(None, None, hedge_missing),
        glossary=GLOSSARY,
    )


def _offer_headline(ev: Evaluation, rec: Recommendation, leader: OfferRecord, terms: TermSheet) -> str:
    """The ask when one offer is the recommendation: its GPUs, its commitment and its cost per 1,000 tasks."""
    cur = ev.currency
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
    cost = f"{per_k(leader.metrics[ev.rank_by])} {cur} per 1,000 tasks" + (
        f" over {ev.horizon_months} months" if ev.rank_by == "horizon_cost_per_task" else ""
    )
    if not terms.total_commitment:  # on demand or per token: nothing is committed, so nothing is called a commitment
        return (
            f"Approve using {what} with {clip(leader.vendor, 60)} on demand, billed as used (nothing "
            f"committed), at {cost}."
        )
    return (
        f"Approve a {terms.term_months}-month commitment of {what} with {clip(leader.vendor, 60)}{commit}, at {cost}."
    )


def _options(ev: Evaluation, fig: MemoFigures, leader: OfferRecord) -> list[OptionRow]:
    """The options table of page 1: the cheapest few, the best single offer and the offers asked for (the comparison
    report has the rest)."""
    rec = fig.rec
    options = []
    for o in ev.ranked:
        pros, cons = _pros_cons(o, ev, fig)
        options.append(
            OptionRow(
                offer=o.id,
                vendor=o.vendor,
                rank=o.rank or 0,
                price_basis=basis_words(o.pricing_basis),
                evidence=evidence_words(o),
                operator=operator_words(o),
                commitment=fig.commitments.get(o.id),
                snapshot_per_task=o.metrics.get("cost_per_task"),
                horizon_per_task=o.metrics.get("horizon_cost_per_task"),
                pros=pros,
                cons=cons,
            )
        )
    named = {rec.best_single.offer, leader.id} | {line.offer for line in rec.lines}
    return [o for i, o in enumerate(options) if i < OPTIONS_SHOWN or o.offer in named]


def _scenario_note(rows: list[ScenarioRow]) -> str:
    """Whether the cheapest offer changes in any of the single-offer scenarios, and in which."""
    flips = [r for r in rows if r.flips]
    return (
        "The recommendation stays the cheapest in every case."
        if not flips
        else "The cheapest offer changes in: " + "; ".join(f"{r.name.lower()} ({r.cheapest})" for r in flips) + "."
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
        why = [basis_words(o.pricing_basis), f"{o.term_months}-month term"]
        c = o.terms.contract
        if c.escalator or c.escalator_schedule:
            why.append("price escalator")
        if o.terms.pricing.prepay_fraction:
            why.append(f"{o.terms.pricing.prepay_fraction:.0%} prepaid")
        why.append("throughput " + EVIDENCE_WORDS.get(o.points_source, "from a reference curve"))
        why.append("operator " + operator_words(o).split(";")[0].lower())
        reasons.append(f"{o.vendor}: " + ", ".join(why))
    return (
        f"A near-tie: {snap.vendor} is cheapest today and {hor.vendor} over {ev.horizon_months} months, "
        f"{gap:.1%} apart today: within what the inputs can move. Choose on the terms, not the figure. "
        + "; ".join(reasons)
        + "."
    )


# --- the memo when the plan is the ask ------------------------------------------------------------


OPTIONS_SHOWN = (
    1  # offers in the memo's options table (with the best single offer and those of the ask, if further down)
)
