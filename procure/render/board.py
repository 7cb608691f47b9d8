"""The board paper's decision memo: the ask, the term sheet, the options, the scenarios and the risks.

Everything the memo states is computed here from the Evaluation and the workspace; the template only
lays it out. Scenarios re-run the whole evaluation with one input changed (demand, the index level,
vendor throughput claims at the low end of their range), so a flip of the cheapest offer shows
exactly as the ranking would show it, not as an approximation.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from procure.analysis.decision import decide, line_commitments, offer_commitment
from procure.analysis.evaluate import Evaluation
from procure.analysis.hedging import PLAN_HEDGE_ID, HedgePlan, plan_floating
from procure.analysis.plan import PlanCase, PlanLine, PlanResult
from procure.analysis.plan.result import TermSheetRow, VendorStress
from procure.analysis.plan.stress import DEMAND_SHIFTS, PRICE_CASE
from procure.analysis.position import Position
from procure.analysis.recommendation import Recommendation, gpus_words, months_words, price_words
from procure.analysis.record import OfferRecord
from procure.analysis.scenarios import Case, ScenarioRow, scenario_rows
from procure.model.costing import HOURS_PER_MONTH
from procure.model.inputs import HedgeConfig
from procure.render.formats import cash, clip, month_range, prose_count

BASIS_WORDS = {"gpu_hour": "fixed price", "index": "follows the index", "per_token": "per token", "owned": "owned"}
# How throughput between two measured speeds is read, in the board's words (assumptions.interpolation).
READING_WORDS = {
    "linear": "on a straight line between the two nearest measured speeds",
    "log": "on a straight line on a log scale of speed",
    "step": "as the nearest faster measured speed's figure",
    "monotone": "on a smooth curve through the measured speeds",
}
EVIDENCE_WORDS = {"measured": "measured", "vendor_claim": "vendor claim", None: "reference curve"}


class TermSheet(BaseModel):
    vendor: str
    offer: str
    gpus: int | None = Field(description="GPUs committed; null for per-token offers")
    nodes: int | None = Field(description="8-GPU nodes committed")
    term_months: int
    price: str = Field(description="the price as contracted, in words and figures")
    escalator: str
    total_commitment: float | None
    cash_at_signing: float | None = Field(description="prepayment and one-off fees due in month 0")
    delivery: date | None
    exit_terms: str


class PlanTerm(BaseModel):
    """One line of the portfolio's term sheet, as the board reads it: vendor, capacity, months, price, money bound."""

    vendor: str
    role: str = Field(description="'commit' or 'pay as used'")
    gpus: int | None = Field(
        description="commit: GPUs committed; pay as used: the most GPUs used in any scenario-month"
    )
    nodes: int | None
    months: str = Field(description="'1–12' for a commitment; 'as needed' for on-demand capacity")
    price: str
    total_commitment: float | None = Field(
        description="what signing binds us to pay (procure.analysis.decision.line_commitments); none for pay-as-used"
    )


class PlanAsk(BaseModel):
    lines: list[PlanTerm]
    total_commitment: float
    expected_per_task: float | None
    single_vendor: str | None = Field(description="the best single offer's vendor")
    single_per_task: float | None
    saving_share: float | None = Field(description="share below the best single offer")
    statement: str = Field(description="the saving against the best single offer, or why a single offer is the plan")


class AgainstToday(BaseModel):
    label: str = Field(description="where today's figure comes from")
    current_per_task: float
    new_per_task: float
    monthly_saving: float | None = Field(
        description="(today - new) x tasks a month; negative: the new offer costs more"
    )
    annual_saving: float | None
    tasks_per_month: float | None = Field(None, description="the tasks a month the saving is priced at")
    of_plan: bool = Field(False, description="new_per_task is the plan's expected cost over its demand scenarios")


class OptionRow(BaseModel):
    offer: str
    vendor: str
    rank: int
    price_basis: str
    evidence: str = Field(description="where the throughput comes from: measured, vendor claim, reference curve")
    operator: str = Field(description="operator tier and where it comes from")
    commitment: float | None
    snapshot_per_task: float | None
    horizon_per_task: float | None
    pros: str
    cons: str
    scenarios_per_task: float | None = Field(
        None, description="expected cost over the plan's demand scenarios (the plan's lines, or the offer alone)"
    )


class PlanCaseRow(BaseModel):
    """One line of the plan's scenario table: the plan's fixed portfolio under a demand case."""

    name: str
    probability: float
    cost_per_task: float | None
    monthly_spend: float
    unused_monthly: float = Field(description="money paid for idle committed capacity, a month on average")
    pay_as_used_share: float
    unserved_share: float
    cheapest_single: str | None = Field(
        description="the cheapest single offer in the matching re-evaluation at today's volume, if any"
    )


class Risk(BaseModel):
    risk: str
    likelihood: str
    impact: float | None = Field(description="cash at stake, workspace currency")
    impact_basis: str = Field(description="how the impact is computed")
    shortfall: float | None = Field(
        None,
        description="demand it leaves unserved, at the plan's unserved price: apart from the cash, never added to it",
    )
    mitigation: str
    owner: str


class HedgeAsk(BaseModel):
    ask: bool
    question: str
    detail: str


class VendorAsk(BaseModel):
    """One vendor of the ask: its one commitment figure and its lines (GPUs, months, price)."""

    vendor: str
    commitment: float | None = Field(description="what signing binds us to pay this vendor (the recommendation's rule)")
    lines: list[str]


class BoardMemo(BaseModel):
    currency: str
    offer: str | None
    headline: str
    terms: TermSheet | None
    today: AgainstToday | None
    options: list[OptionRow]
    near_tie: str | None
    scenarios: list[ScenarioRow]
    scenario_note: str
    risks: list[Risk]
    hedge: HedgeAsk
    glossary: list[str]
    plan: PlanAsk | None = None
    plan_option: OptionRow | None = Field(None, description="the plan as the first row of the options")
    plan_cases: list[PlanCaseRow] = Field(default_factory=list)
    plan_note: str = ""
    ask: list[VendorAsk] = Field(
        default_factory=list, description="what the board is asked to sign, one entry per vendor"
    )
    cost_words: list[str] = Field(
        default_factory=list,
        description="the spend over the horizon and a year, against today and the best single offer",
    )
    deadline: date | None = Field(None, description="the earliest valid_until of the offers asked for")
    deadline_words: str | None = None
    options_more: int = Field(
        0, description="acceptable offers left out of the options table (the comparison report lists them)"
    )
    plan_failed: str | None = Field(
        None, description="why the plan could not be solved; the single offer is then the fallback"
    )
    signed: list[str] = Field(
        default_factory=list, description="one line per signed vendor: what it delivered against its promise (actuals/)"
    )
    holding: list[str] = Field(
        default_factory=list,
        description="what we hold, what we ask for on top, and what is decided later (the plan's fields)",
    )
    plan_terms: list[list[str]] = Field(
        default_factory=list,
        description="the plan's term sheet, one row per contract signed now: vendor, GPUs, start, end, price and escalator, SLA and credits, exit, offer expiry",
    )
    knife_edge: str | None = Field(
        None, description="the leader's acceptance hangs on a margin under one standard deviation of its own inputs"
    )


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


def _pros_cons(record: OfferRecord, ev: Evaluation) -> tuple[str, str]:
    m, t = record.metrics, record.terms
    pros, cons = [], []
    ranked = ev.ranked
    if ranked and min(ranked, key=lambda o: (o.metrics["cost_per_task"], o.id)).id == record.id:
        pros.append("lowest cost today")
    horizon = [o for o in ranked if o.metrics.get("horizon_cost_per_task") is not None]
    if horizon and min(horizon, key=lambda o: (o.metrics["horizon_cost_per_task"], o.id)).id == record.id:
        pros.append(f"lowest over {ev.horizon_months} months")
    if record.points_source == "measured":
        pros.append("throughput measured")
    elif record.points_source == "vendor_claim":
        cons.append("throughput is the vendor's claim")
    customer = [j for j, owner in record.responsibilities.items() if owner != "provider"]
    if record.kind in ("managed_serving",) or not customer:
        pros.append("provider runs the service")
    elif record.kind in ("bare_metal", "owned"):
        cons.append(f"we operate it ({m.get('ops_fte') or 0:.1f} staff)")
    prepay = t.pricing.prepay_fraction or 0
    if prepay:
        cons.append(f"{prepay:.0%} prepaid")
    if record.pricing_basis == "index":
        cons.append("price moves with the market")
    fill = m.get("fill")
    if fill is not None and fill < 0.9:
        cons.append(f"{1 - fill:.0%} of the commitment idle at stated demand")
    if record.pricing_basis == "per_token":
        pros.append("no commitment to fill")
    if record.kind == "owned":
        cons.append(f"capital for {record.term_months // 12} years")
    if record.term_months <= 12 and record.pricing_basis != "per_token":
        pros.append(f"short term ({record.term_months} month{'s' if record.term_months != 1 else ''})")
    elif record.term_months >= 36:
        cons.append(f"long term ({record.term_months} months)")
    return "; ".join(pros), "; ".join(cons)


def _term_sheet(record: OfferRecord, ev: Evaluation) -> TermSheet:
    t, c = record.terms, record.terms.contract
    p = t.pricing
    cur = record.currency
    if p.per_mtok is not None:
        price = f"{p.per_mtok.input:.2f} input and {p.per_mtok.output:.2f} output {cur} per million tokens"
    elif p.index_linked is not None:
        li = p.index_linked
        bounds = ", ".join(
            x
            for x in (
                f"floor {li.floor:.2f}" if li.floor is not None else "",
                f"cap {li.cap:.2f}" if li.cap is not None else "",
            )
            if x
        )
        price = (
            f"index {li.spread:+.2f} {cur} per GPU-hour"
            + (f" ({bounds})" if bounds else "")
            + f", {record.metrics.get('rent_today', record.metrics['rent']):.2f} today"
        )
    elif p.owned is not None:
        price = f"owned: {p.owned.capex_per_gpu:,.0f} {cur} per GPU all-in, {record.metrics['rent']:.2f} {ev.currency} per GPU-hour with power and space"
    elif p.gpu_hour is None and p.burst is not None:  # on demand only: billed as used, nothing committed
        price = f"{p.burst.gpu_hour:.2f} {cur} per GPU-hour on demand, billed as used"
    else:
        price = f"{p.gpu_hour:.2f} {cur} per GPU-hour" + (f", {p.discount:.0%} discount" if p.discount else "")
    if c.escalator:
        escalator = f"+{c.escalator:.1%} a contract year"
    elif c.escalator_schedule:
        escalator = "; ".join(f"{rise:+.1%} from month {start}" for start, rise in c.escalator_schedule)
    else:
        escalator = "none"
    flows = record.cashflow.months if record.cashflow else []
    signing = next((f.total for f in flows if f.month == 0), None)
    exits = []
    if c.termination:
        exits.append(
            f"termination for convenience on {c.termination.notice_months} months' notice, fee {cash(c.termination.fee, ev.currency)}"
        )
    else:
        exits.append("no termination for convenience")
    if c.exit:
        exits.append(f"exit costs {cash(c.exit.offboarding + c.exit.egress_tb * c.exit.egress_per_tb, ev.currency)}")
    if c.late_delivery:
        exits.append(f"late delivery credit {cash(c.late_delivery.per_week, ev.currency)} a week")
    gpus = record.gpus
    return TermSheet(
        vendor=record.vendor,
        offer=record.id,
        gpus=gpus,
        nodes=-(-gpus // 8) if gpus else None,
        term_months=record.term_months,
        price=price,
        escalator=escalator,
        total_commitment=offer_commitment(record),
        cash_at_signing=signing,
        delivery=t.delivery,
        exit_terms="; ".join(exits),
    )


def _today(position: Position | None, record: OfferRecord, tasks: float | None) -> AgainstToday | None:
    if position is None or position.label.startswith("the recommended offer"):
        return None  # no figure for what we pay today: the memo says so instead of comparing with itself
    new = record.metrics["cost_per_task"]
    assert new is not None
    monthly = (position.cost_per_task - new) * tasks if tasks else None
    return AgainstToday(
        label=position.label,
        current_per_task=position.cost_per_task,
        new_per_task=new,
        monthly_saving=monthly,
        annual_saving=monthly * 12 if monthly is not None else None,
    )


def _risks(
    record: OfferRecord,
    ev: Evaluation,
    rows: list[ScenarioRow],
    hedge: HedgePlan | None,
    today: AgainstToday | None,
    runner: OfferRecord | None,
) -> list[Risk]:
    cur = ev.currency
    m = record.metrics
    spend = m.get("monthly_spend") or 0.0
    stated = ev.workload.tasks_per_month
    # Without a stated demand, the tasks the committed GPUs deliver a month.
    tasks = (
        stated
        or ((m.get("successful_tasks_per_gpu_hour") or 0) * (m.get("billed_gpus") or 0) * HOURS_PER_MONTH)
        or None
    )
    risks = []
    # Delivery: each month late we keep paying today's cost (or, without one, run on the runner-up).
    late_month = today.monthly_saving if today and today.monthly_saving and today.monthly_saving > 0 else None
    late = record.terms.contract.late_delivery
    risks.append(
        Risk(
            risk=f"Delivery later than {record.terms.delivery}"
            if record.terms.delivery
            else "Delivery date not promised",
            likelihood="medium" if record.terms.delivery is None or not late else "low",
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
    premium = (
        (runner.metrics["cost_per_task"] - m["cost_per_task"]) * tasks * 12
        if runner and tasks and runner.metrics.get("cost_per_task") is not None
        else None
    )
    prepaid = (record.terms.pricing.prepay_fraction or 0) * (offer_commitment(record) or 0)
    switch = premium * record.term_months / 12 if premium is not None else None
    risks.append(
        Risk(
            risk="Vendor fails or is sold during the term",
            likelihood="low" if record.rating.tier in ("platinum", "gold") else "medium",
            impact=prepaid + (switch or 0) if prepaid or switch else None,
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
            likelihood="high" if record.pricing_basis != "owned" else "medium",
            impact=premium,
            impact_basis=f"a year on the runner-up, {runner.vendor}, instead"
            if premium is not None and runner
            else "not priced: no acceptable fallback to price a year on",
            mitigation="keep the runner-up qualified; a portfolio plan can split the commitment",
            owner="Head of infrastructure",
        )
    )
    tier = record.rating.tier
    risks.append(
        Risk(
            risk="Operator delivers less availability than expected",
            likelihood={"platinum": "low", "gold": "low", "silver": "medium"}.get(
                tier or "", "medium" if record.kind in ("owned", "bare_metal") else "high"
            ),
            impact=spend * 0.01 * 12 if spend else None,
            impact_basis="a year at one point less availability (1% more GPU-hours per task)"
            if spend
            else "not priced: no monthly spend at the stated demand",
            mitigation="automatic SLA credits and a health-check clause"
            if not (record.terms.service.sla and record.terms.service.sla.automatic_credits)
            else "SLA credits are automatic; review monthly",
            owner="Head of infrastructure",
        )
    )
    up = next((r for r in hedge.stress if abs(r.index_move - 0.2) < 1e-9), None) if hedge else None
    risks.append(
        Risk(
            risk="GPU rental prices rise (months priced by the index, and renewals)",
            likelihood="medium",
            impact=up.unhedged_change if up and up.unhedged_change else None,
            impact_basis=f"index +20% over {hedge.horizon_months} months, unhedged"
            if up and up.unhedged_change
            else "nothing floats with the market in the horizon",
            mitigation="the hedge below" if up and up.unhedged_change else "fixed price over the term",
            owner="Treasury",
        )
    )
    low = next((r for r in rows if r.name == "Demand −30%"), None)
    idle = low.unused_monthly * record.term_months if low and low.unused_monthly is not None else None
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
    claims = next((r for r in rows if r.name.startswith("Vendor throughput claims")), None)
    base = next((r for r in rows if r.name in ("Demand as stated", "As evaluated (no demand stated)")), None)
    if (
        record.points_source == "vendor_claim"
        and claims
        and base
        and claims.monthly_spend is not None
        and base.monthly_spend is not None
    ):
        risks.append(
            Risk(
                risk="Throughput below the vendor's claim",
                likelihood="medium",
                impact=(claims.monthly_spend - base.monthly_spend) * 12,
                impact_basis="a year at the low end of the claim",
                mitigation="acceptance test on our workload before the commitment starts",
                owner="Head of infrastructure",
            )
        )
    return risks


def _hedge_ask(hedge: HedgePlan | None, missing: str) -> HedgeAsk:
    if hedge is None:
        return HedgeAsk(ask=False, question="No hedge is proposed.", detail=missing)
    bought = [r for r in hedge.ladder if r.contracts]
    up = next((r for r in hedge.stress if abs(r.index_move - 0.2) < 1e-9), None)
    if not bought or hedge.floating_gpu_hours <= 0:
        return HedgeAsk(
            ask=False,
            question="No hedge is needed.",
            detail=f"Nothing floats with the market over the {hedge.horizon_months} months: the price is fixed for the whole horizon.",
        )
    months = month_range(bought[0].first_month, bought[-1].last_month)
    contracts = sum(r.contracts for r in bought)
    hedged = sum(r.hedged_gpu_hours for r in bought)
    removes = (
        f"If the index rises 20%, the floating cost rises {cash(up.unhedged_change, hedge.currency)}; the hedge pays {cash(up.hedge_payoff, hedge.currency)} of it."
        if up
        else ""
    )
    return HedgeAsk(
        ask=True,
        question=f"Approve buying {contracts:,} GPU-hour price contracts ({prose_count(hedged)} GPU-hours) for {months}?",
        detail=(
            f"{prose_count(hedge.floating_gpu_hours)} GPU-hours of the recommendation float with the market (months priced by the index, and renewals after the term). "
            + removes
            + " Futures carry no premium: the exchange holds margin against the position, and if the index falls the hedge pays back what the lower price saves."
            + (
                f" Contracts: {hedge.contract.label}."
                if hedge.contract is not None and hedge.contract.unverified
                else ""
            )
        ),
    )


GLOSSARY = [
    "Cost per 1,000 tasks: everything we pay (rent, fees, our own staff, software, financing) over the successful tasks it buys.",
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
    """ "224 B200 GPUs with Petrel Cloud for months 1–12 and 256 with Keel Systems for months 13–24, on-demand capacity for peaks"."""
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
    """The plan in one sentence for the comparison's summary: what it buys and what it costs against the best single offer."""
    commits = sorted(
        (line for line in plan.plan if line.role == "commit"), key=lambda x: (x.start_month or 0, x.vendor)
    )
    floats = [line for line in plan.plan if line.role == "pay_as_used"]
    return f"The procurement plan over {plan.demand.months} months of uncertain demand: {_portfolio_words(commits, floats)}. {_plan_statement(plan)}"


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


def holding_words(plan: PlanResult) -> list[str]:
    """What we hold, what we ask for on top, and what is left to decide later, from the plan's fields."""
    words = []
    if plan.held:
        held = "; ".join(f"{h.gpus:,} GPUs with {clip(h.vendor, 40)} until {h.end:%-d %B %Y}" for h in plan.held)
        more = (
            f"we ask for {plan.ask_gpus:,} more GPUs committed now"
            if plan.ask_gpus
            else "we ask for no more committed GPUs now"
        )
        last_held = max(h.end for h in plan.held)
        if plan.term_sheet and all(
            r.start >= last_held for r in plan.term_sheet
        ):  # the ask follows what we hold: no GPUs on top of it
            first = min(r.start for r in plan.term_sheet)
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
                f"{x.gpus:,} GPUs with {clip(x.vendor, 40)} from {x.start_date:%B %Y} (expected {x.expected_price:.2f} {plan.currency} per GPU-hour"
                + (
                    f", 8 in 10 chances between {x.price_p10:.2f} and {x.price_p90:.2f}"
                    if x.price_p10 is not None and x.price_p90 is not None
                    else ""
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
            f"{share} of the expected demand is left unserved ({prose_count(plan.unserved_tasks)} tasks over the horizon; the scenarios below give the worst), "
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


def plan_ask(plan: PlanResult, ev: Evaluation) -> tuple[str, PlanAsk]:
    """The headline and term sheet when the recommendation is the plan: each commitment as the recommendation
    binds it (procure.analysis.decision.line_commitments, the figure the ask and the risk register read)."""
    cur = plan.currency
    bound = dict(zip(map(id, plan.plan), line_commitments(plan, {o.id: o for o in ev.offers})))
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
                nodes=-(-line.gpus // 8) if line.gpus and line.role == "commit" else None,
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
    total = sum(x.total_commitment or 0 for x in lines)
    if len(offers) == 1 and single.offer in offers:
        headline = f"Approve the plan, a single offer: {what}; {cash(total, cur)} committed, {_per_k(expected)} {cur} per 1,000 tasks expected."
    else:
        saving = (
            f", {abs(plan.saving_share):.1%} {'below' if plan.saving_share >= 0 else 'above'} the best single offer"
            if plan.saving_share is not None
            else ""
        )
        headline = f"Approve a portfolio: {what}; {cash(total, cur)} committed, {_per_k(expected)} {cur} per 1,000 tasks expected{saving}."
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
            if line.role == "commit"
            and line.term_months
            and line.term_months > 1
            and rec.months
            and line.term_months > (line.last_month or 0) - (line.first_month or 1) + 1
            else ""
        )
        month_by_month = ", month by month" if line.commitments > 1 else ""
        entry.lines.append(f"{gpus_words(line)}, {months_words(line)}{month_by_month}{term}, {price_words(line, cur)}")
    return list(found.values())


def _today_figure(position: Position | None) -> tuple[float, str] | None:
    if position is None or position.label.startswith("the recommended offer"):
        return None
    return position.cost_per_task, position.label


def cost_words(rec: Recommendation, ev: Evaluation, position: Position | None, plan: PlanResult | None) -> list[str]:
    """What the recommendation costs, in sentences that agree with each other: the spend over the months
    and a year, against the best single offer, and against what we pay today."""
    cur = ev.currency
    words: list[str] = []
    if rec.kind == "none" or rec.cost_per_task is None:
        return words
    per_k = _per_k(rec.cost_per_task)
    if rec.total_spend is not None and rec.months:
        spend = f"Expected spend {cash(rec.total_spend, cur)} over {rec.months} month{'s' if rec.months != 1 else ''}, {cash(rec.spend_per_year, cur)} a year"
        if rec.total_commitment:
            spend += f"; signing binds us to {cash(rec.total_commitment, cur)}" + (
                " (terms that run past the last month counted whole)"
                if rec.kind == "plan"
                and any(
                    x.term_months and x.first_month and x.first_month - 1 + x.term_months > rec.months
                    for x in rec.lines
                )
                else ""
            )
        words.append(spend + ".")
    best = rec.best_single
    plan_tasks = None
    if rec.kind == "plan" and plan is not None and plan.stress is not None:
        plan_tasks = _as_planned(plan).demand_per_month
    if rec.kind == "plan":
        if best.offer is None:
            words.append(
                f"{per_k} {cur} per 1,000 tasks expected over the demand scenarios; no single offer can serve them all alone."
            )
        elif rec.saving_share is None:
            words.append(
                f"{per_k} {cur} per 1,000 tasks expected over the demand scenarios: the plan is the best single offer, {clip(best.vendor, 40)} alone; no mix costs less."
            )
        else:
            gap = (best.cost_per_task or 0.0) - rec.cost_per_task
            monthly = (
                f", about {cash(abs(gap) * plan_tasks, cur)} a month {'less' if gap >= 0 else 'more'}"
                if plan_tasks
                else ""
            )
            words.append(
                f"{per_k} {cur} per 1,000 tasks expected over the demand scenarios, {abs(rec.saving_share):.1%} {'below' if gap >= 0 else 'above'} "
                f"the best single offer ({clip(best.vendor, 40)} alone, {_per_k(best.cost_per_task)} on the same scenarios){monthly}"
                + (f", because {rec.dearer_why}." if gap < 0 and rec.dearer_why else ".")
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
                f"{per_k} {cur} per 1,000 tasks {rec.basis}: the best single offer; the next, {clip(runner.vendor, 40)}, costs {ev.summary.gap_share:.1%} more."
            )
        else:
            words.append(f"{per_k} {cur} per 1,000 tasks {rec.basis}: the only acceptable offer.")
    today = _today_figure(position)
    tasks_now = ev.workload.tasks_per_month
    if today is not None and tasks_now:
        price_now, label = today
        spend_now = price_now * tasks_now
        if rec.kind == "plan" and plan_tasks and rec.total_spend is not None and rec.months:
            new_spend = rec.total_spend / rec.months
            diff = new_spend - spend_now
            volume = (plan_tasks - tasks_now) * price_now
            price = diff - volume
            growth = plan.demand.growth if plan is not None else 0.0
            why = []
            if abs(volume) >= 0.005 * spend_now:
                why.append(
                    f"{cash(abs(volume), cur)} because we expect {'more' if volume > 0 else 'fewer'} tasks ({prose_count(plan_tasks)} a month on average{f', demand growing {growth:.0%} a month' if growth > 0 else ''}) at today's price"
                )
            if abs(price) >= 0.005 * spend_now:
                why.append(
                    f"{cash(abs(price), cur)} because each task costs {'more' if price > 0 else 'less'} than today's {_per_k(price_now)} {cur} per 1,000"
                )
            words.append(
                f"Today we pay {cash(spend_now, cur)} a month ({_per_k(price_now)} {cur} per 1,000 tasks, {label}, for {prose_count(tasks_now)} tasks). The plan spends "
                f"{cash(new_spend, cur)} a month on average, {cash(abs(diff), cur)} {'more' if diff > 0 else 'less'}"
                + (": " + "; ".join(why) if why else "")
                + "."
            )
        elif rec.kind == "offer":
            new_spend = rec.cost_per_task * tasks_now if ev.rank_by == "cost_per_task" else None
            if new_spend is not None:
                diff = new_spend - spend_now
                words.append(
                    f"Today we pay {_per_k(price_now)} {cur} per 1,000 tasks ({label}); at today's {prose_count(tasks_now)} tasks a month the recommendation "
                    f"{'saves' if diff < 0 else 'costs'} {cash(abs(diff), cur)} a month{' more' if diff > 0 else ''}, {cash(abs(diff) * 12, cur)} a year."
                )
    elif rec.kind in ("plan", "offer"):
        words.append("No figure for what we pay today is recorded, so no saving against today can be stated.")
    return words


def deadline_words(rec: Recommendation) -> str | None:
    if rec.deadline is None:
        return None
    first = list(dict.fromkeys(x.vendor for x in rec.lines if x.valid_until == rec.deadline))
    many = len({x.vendor for x in rec.lines}) > 1
    offers = f"the offer of {_with(first)} expires" if len(first) == 1 else f"the offers of {_with(first)} expire"
    return f"Decide by {rec.deadline.isoformat()}: {offers} then" + (
        ", the first of the offers asked for to expire."
        if many and len(first) < len({x.vendor for x in rec.lines})
        else "."
    )


def board_memo(
    ev: Evaluation,
    cases: list[Case],
    position: Position | None,
    hedge: HedgePlan | None,
    hedge_missing: str,
    plan: PlanResult | None = None,
    hedge_config: HedgeConfig | None = None,
    rec: Recommendation | None = None,
) -> BoardMemo:
    """The memo for the recommendation: the plan when there is one (every part then speaks of the plan's
    fixed portfolio), else the recommended offer; without either, the reasons none can be recommended."""
    rec = rec or decide(ev, plan)
    memo = _board_memo(
        ev, cases, position, hedge, hedge_missing, plan if rec.kind == "plan" else None, hedge_config, rec
    )
    memo.options_more = max(0, len(ev.ranked) - len(memo.options))
    memo.ask = vendor_asks(rec, ev.currency)
    if rec.kind == "plan" and plan is not None:
        memo.holding = holding_words(plan)
        memo.plan_terms = [term_sheet_row(r, ev.currency) for r in plan.term_sheet]
    memo.cost_words = cost_words(rec, ev, position, plan if rec.kind == "plan" else None)
    memo.deadline = rec.deadline
    memo.deadline_words = deadline_words(rec)
    if (
        rec.kind == "plan"
        and plan is not None
        and plan.sign_by is not None
        and (rec.deadline is None or plan.sign_by < rec.deadline)
    ):
        # a contract signed now must be signed before the capacity it brings is counted on, not only before its offer expires
        memo.deadline, memo.deadline_words = (
            plan.sign_by,
            f"Decide by {plan.sign_by.isoformat()}: {plan.sign_by_reason}.",
        )
    memo.plan_failed = rec.plan_failed
    memo.signed = [signed_line(o) for o in ev.offers if o.evidence]
    cur = ev.currency
    if rec.kind == "plan":
        on_demand = {x.vendor for x in rec.lines if x.role == "pay_as_used"} - {
            x.vendor for x in rec.lines if x.role == "commit"
        }
        names = [clip(v, 40) + (" (on demand)" if v in on_demand else "") for v in rec.vendors]
        committed = f"{cash(rec.total_commitment, cur)} committed, " if rec.total_commitment else ""
        if not names:  # nothing the plan needs can be signed today: what we hold serves until the later decisions
            memo.headline = (
                f"Nothing new to sign today: we keep what we hold and re-plan the later decisions; {cash(rec.spend_per_year, cur)} a year expected, "
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


def signed_line(record: OfferRecord) -> str:
    """A signed vendor's delivery in one line: the posteriors its figures are blended with."""
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
    # months of any evidence: capacity months move throughput, incident months availability
    months = max(e.get("months") or 0, e.get("availability_months") or 0)
    return (
        f"{clip(record.vendor, 40)}, signed, {months} month{'s' if months != 1 else ''} measured: "
        + ", ".join(parts)
        + " (the comparison report's scorecard)"
    )


def _board_memo(
    ev: Evaluation,
    cases: list[Case],
    position: Position | None,
    hedge: HedgePlan | None,
    hedge_missing: str,
    plan: PlanResult | None,
    hedge_config: HedgeConfig | None,
    rec: Recommendation,
) -> BoardMemo:
    cur = ev.currency
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
            hedge=_hedge_ask(None, hedge_missing),
            glossary=GLOSSARY,
        )
    runner = ev.offer(ev.summary.runner_up) if ev.summary.runner_up else None
    terms = _term_sheet(leader, ev)
    line = rec.lines[0] if rec.kind == "offer" and rec.lines else None
    # the GPUs the contract commits; where the stated demand bills more, the headline says so beside the commitment
    gpus = (line.gpus_committed or line.gpus) if line is not None else terms.gpus
    what = f"{gpus:,} B200 GPU{'s' if gpus != 1 else ''}" if gpus else "per-token B200 serving"
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
        headline = f"Approve using {what} with {clip(leader.vendor, 60)} on demand, billed as used (nothing committed), at {cost}."
    ask = None
    if plan is not None and plan.plan:
        headline, ask = plan_ask(plan, ev)  # the plan over the demand scenarios is the recommendation
    tasks = ev.workload.tasks_per_month
    today = _today(position, leader, tasks)
    options = []
    for o in ev.ranked:
        pros, cons = _pros_cons(o, ev)
        options.append(
            OptionRow(
                offer=o.id,
                vendor=o.vendor,
                rank=o.rank or 0,
                price_basis=BASIS_WORDS.get(o.pricing_basis, o.pricing_basis),
                evidence=EVIDENCE_WORDS.get(o.points_source, "reference curve")
                if o.pricing_basis != "per_token"
                else "vendor's rate limits",
                operator=_operator(o),
                commitment=offer_commitment(o),
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
    near_tie = _near_tie(ev)
    knife = knife_edge_words(ev)
    rows = scenario_rows(cases, leader.id)
    flips = [r for r in rows if r.flips]
    note = (
        "The recommendation stays the cheapest in every case."
        if not flips
        else "The cheapest offer changes in: " + "; ".join(f"{r.name.lower()} ({r.cheapest})" for r in flips) + "."
    )
    if ask is not None and plan is not None and plan.stress is not None:
        for o in options:
            if o.offer in plan.single_offers:
                o.scenarios_per_task = plan.single_offers[o.offer]
        plan_cases, plan_note = _plan_cases(plan, rows)
        asked = _plan_hedge(plan, ev, hedge, hedge_missing, hedge_config)
        return BoardMemo(
            currency=cur,
            offer=leader.id,
            headline=headline,
            terms=terms,
            today=_plan_today(position, plan),
            options=options,
            near_tie=near_tie,
            scenarios=rows,
            scenario_note=note,
            risks=_plan_risks(plan, ev, asked.ask),
            hedge=asked,
            glossary=GLOSSARY + PLAN_GLOSSARY,
            plan=ask,
            plan_option=_plan_option(plan, ask, ev),
            plan_cases=plan_cases,
            plan_note=plan_note,
            knife_edge=knife,
        )
    return BoardMemo(
        currency=cur,
        offer=leader.id,
        headline=headline,
        terms=terms,
        today=today,
        options=options,
        near_tie=near_tie,
        scenarios=rows,
        scenario_note=note,
        risks=_risks(leader, ev, rows, hedge, today, runner),
        hedge=_hedge_ask(hedge, hedge_missing),
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


def _near_tie(ev: Evaluation) -> str | None:
    """When today's cheapest and the cheapest over the horizon differ, say so and why."""
    ranked = ev.ranked
    with_horizon = [o for o in ranked if o.metrics.get("horizon_cost_per_task") is not None]
    if len(ranked) < 2 or not with_horizon:
        return None
    snap = min(ranked, key=lambda o: (o.metrics["cost_per_task"], o.id))
    hor = min(with_horizon, key=lambda o: (o.metrics["horizon_cost_per_task"], o.id))
    if snap.id == hor.id:
        return None
    gap = abs(snap.metrics["cost_per_task"] - hor.metrics["cost_per_task"]) / snap.metrics["cost_per_task"]
    reasons = []
    for o in (snap, hor):
        why = [BASIS_WORDS.get(o.pricing_basis, o.pricing_basis), f"{o.term_months}-month term"]
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
UNSERVED_PRICED = (
    0.01  # without a vendor, above this share of demand unserved the extra spend is no measure of the loss
)
PRICE_MOVE = PRICE_CASE[0]  # the price stress: market prices 20% higher, as the hedging stress moves the index


def _as_planned(plan: PlanResult) -> PlanCase:
    assert plan.stress is not None
    name = next(n for change, n in DEMAND_SHIFTS if change == 0)
    return next(c for c in plan.stress.cases if c.name == name)


def _plan_today(position: Position | None, plan: PlanResult) -> AgainstToday | None:
    """Today's cost per task against the plan's expected one, priced at the plan's expected tasks a month."""
    if (
        position is None
        or position.label.startswith("the recommended offer")
        or plan.expected_cost_per_task is None
        or plan.stress is None
    ):
        return None
    tasks = _as_planned(plan).demand_per_month
    monthly = (position.cost_per_task - plan.expected_cost_per_task) * tasks
    return AgainstToday(
        label=position.label,
        current_per_task=position.cost_per_task,
        new_per_task=plan.expected_cost_per_task,
        monthly_saving=monthly,
        annual_saving=monthly * 12,
        tasks_per_month=tasks,
        of_plan=True,
    )


def _plan_option(plan: PlanResult, ask: PlanAsk, ev: Evaluation) -> OptionRow:
    """The plan as the options' first row, costed over the demand scenarios as each single offer is beside it."""
    floats = [x for x in ask.lines if x.role != "commit"]
    offers = [ev.offer(line.offer) for line in plan.plan]
    bases = list(
        dict.fromkeys(
            BASIS_WORDS.get(o.pricing_basis, o.pricing_basis)
            for o, line in zip(offers, plan.plan)
            if line.role == "commit"
        )
    )
    evidence = list(
        dict.fromkeys(
            EVIDENCE_WORDS.get(o.points_source, "reference curve")
            if o.pricing_basis != "per_token"
            else "vendor's rate limits"
            for o in offers
        )
    )
    pros, cons = [], []
    if plan.saving_share is not None and plan.saving_share > 0 and ask.single_vendor:
        pros.append(
            f"{plan.saving_share:.1%} below the best single offer ({clip(ask.single_vendor, 30)} alone, {_per_k(ask.single_per_task)})"
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


def _plan_cases(plan: PlanResult, rows: list[ScenarioRow]) -> tuple[list[PlanCaseRow], str]:
    """The plan's fixed portfolio under each demand case, beside the single offer the matching re-evaluation ranks first."""
    assert plan.stress is not None
    singles = {r.name: r for r in rows}
    months = plan.demand.months
    found = []
    shifts = {name for _, name in DEMAND_SHIFTS} | {PRICE_CASE[1]}

    def label(name: str) -> str:
        if name in shifts or name == "worst 10%" or plan.demand.sampled:
            return CASE_WORDS.get(name, name)
        return f"Path: {name}"  # an explicit demand path of procure.yaml, by its own name

    for case in plan.stress.cases:
        single = singles.get(SINGLE_CASE.get(case.name, case.name))
        found.append(
            PlanCaseRow(
                name=label(case.name),
                probability=case.probability,
                cost_per_task=case.cost_per_task,
                monthly_spend=case.monthly_spend,
                unused_monthly=case.unused_commitment / months,
                pay_as_used_share=case.pay_as_used_share,
                unserved_share=case.unserved_share,
                cheapest_single=single.cheapest if single else None,
            )
        )
    short = [c for c in plan.stress.cases if c.unserved_share >= 0.0005]
    note = (
        f"The plan held fixed over {months} months: commitments paid whatever the demand, on-demand capacity for the rest. "
        f"The first four lines scale each of the {plan.demand.scenarios:,} demand paths, the fifth raises on-demand prices and those that follow the index; the others are parts of the paths. "
        "Ranked first at today's volume: every offer re-evaluated at today's volume with the same change (page 1's best single offer is costed over the scenarios)."
    )
    if short:
        # one sentence, not one clause per case: the memo's second page has room for the range, not the list
        most = max(short, key=lambda c: c.unserved_share)
        least = min(c.unserved_share for c in short)
        span = f"{most.unserved_share:.1%}" if len(short) == 1 else f"{least:.1%} to {most.unserved_share:.1%} by case"
        note += f" Demand beyond what the plan's sources can serve: {span} (most: {label(most.name).lower()})."
    return found, note


def _tier_likelihood(record: OfferRecord) -> str:
    return {"platinum": "low", "gold": "low", "silver": "medium"}.get(
        record.rating.tier or "", "medium" if record.kind in ("owned", "bare_metal") else "high"
    )


# A vendor that fails while nothing else in the plan serves its demand: the months until a qualified fallback offer
# delivers, its demand unserved meanwhile (the fastest delivery the example's offers promise is about four weeks).
REPLACE_MONTHS = 1
OPTIONS_SHOWN = (
    1  # offers in the memo's options table (with the best single offer and those of the ask, if further down)
)
VENDOR_ROWS = 2  # committed vendors named in the risk register; the rest are summed in one row of each


def _plan_risks(plan: PlanResult, ev: Evaluation, hedge_asked: bool) -> list[Risk]:
    """The register for the plan: every impact from the plan's own dispatch of its fixed portfolio.

    Each committed vendor's late delivery and failure (the largest by committed spend named, the rest
    summed), the concentration of committed spend, then the risks of the plan as a whole."""
    assert plan.stress is not None
    cur, st, months = plan.currency, plan.stress, plan.demand.months
    committed, prepaid = _committed_by_vendor(plan, ev)
    total = sum(committed.values())
    others = {line.vendor for line in plan.plan if line.role == "pay_as_used"}
    # The vendors with the most committed spend each get their delivery and failure rows; the rest are
    # summed in one row of each, so the register (and the memo) keeps to its page whatever the plan.
    ranked = sorted(st.vendors, key=lambda v: (-committed.get(v.vendor, 0.0), v.vendor))
    named, rest_vendors = ranked[:VENDOR_ROWS], ranked[VENDOR_ROWS:]
    # A delivery is at risk only for what is signed now: a held contract is in service, a later decision is re-planned.
    # A renewal signed now of a contract held today continues capacity in service: no delivery to wait for.
    in_service = {line.vendor for line in plan.plan if line.decision == "held"}
    signing = {
        line.vendor for line in plan.plan if line.role == "commit" and line.decision in (None, "sign_now")
    } - in_service
    delivery, failure = [], []
    for v in ranked:
        record = ev.offer(v.offers[0])
        stranded = v.unserved_share >= UNSERVED_PRICED
        delivery.append(_late_delivery_risk(v, record, stranded, cur, plan) if v.vendor in signing else None)
        failure.append(
            _vendor_failure_risk(
                v, record, stranded, prepaid.get(v.vendor, 0.0), sorted(others - {v.vendor}), months, cur, plan
            )
        )
    risks = [r for r in delivery[: len(named)] if r is not None]
    late_rest = [(r, v) for r, v in zip(delivery[len(named) :], rest_vendors) if r is not None]
    if late_rest:
        risks.append(_smaller_vendors_late([r for r, _ in late_rest], [v for _, v in late_rest]))
    risks += failure[: len(named)]
    if rest_vendors:
        risks.append(_smaller_vendor_fails(failure[len(named) :], rest_vendors))
    if committed:
        risks.append(_concentration_risk(plan, committed, total, cur))
    return risks + _plan_wide_risks(plan, ev, hedge_asked)


def _committed_by_vendor(plan: PlanResult, ev: Evaluation) -> tuple[dict[str, float], dict[str, float]]:
    """Each committed vendor's commitment over the plan, and the part of it prepaid (lost if it fails)."""
    committed: dict[str, float] = {}
    prepaid: dict[str, float] = {}
    for line, amount in zip(plan.plan, line_commitments(plan, {o.id: o for o in ev.offers})):
        if line.role != "commit" or amount is None:
            continue
        committed[line.vendor] = committed.get(line.vendor, 0.0) + amount
        prepaid[line.vendor] = (
            prepaid.get(line.vendor, 0.0) + (ev.offer(line.offer).terms.pricing.prepay_fraction or 0) * amount
        )
    return committed, prepaid


def _tasks(count: float) -> str:
    """A count of tasks as a board reads it: '115 M' from a million up."""
    return f"{count / 1e6:,.0f} M" if count >= 1e6 else f"{count:,.0f}"


def _stranded_tasks(v: VendorStress, plan: PlanResult) -> tuple[float, float | None]:
    """Tasks a month and over the horizon that nothing else in the plan serves without the vendor (its unserved share of
    the demand as planned), and the price the plan puts on an unserved task."""
    monthly = v.unserved_share * _as_planned(plan).demand_per_month
    return monthly, plan.unserved_penalty_per_task


def _unserved_words(tasks: float, share: float, shortfall: float, price: float | None, cur: str) -> str:
    """The demand a risk leaves unserved and its shortfall, apart from the cash."""
    priced = (
        f" at {price * 1000:,.2f} {cur} per 1,000 (the shortfall)"
        if price is not None and shortfall > 0
        else ", not priced (plan.unserved_penalty_per_task)"
    )
    return f"{share:.0%} of demand ({_tasks(tasks)} tasks) unserved{priced}"


def _late_delivery_risk(v: VendorStress, record: OfferRecord, stranded: bool, cur: str, plan: PlanResult) -> Risk:
    """A committed vendor delivering late: the cash of a month without it (its capacity bought on demand), and the
    demand nothing else in the plan serves meanwhile apart, at the plan's unserved price (the plan's stress)."""
    late = record.terms.contract.late_delivery
    monthly, price = _stranded_tasks(v, plan)
    if v.first_month > 1:
        what = f"{clip(v.vendor, 30)} not in service by month {v.first_month}"
    elif record.terms.delivery:
        what = f"{clip(v.vendor, 30)} delivers later than {record.terms.delivery}"
    else:
        what = f"{clip(v.vendor, 30)}: no delivery date promised"
    extra = max(v.extra_first_month, 0.0)
    basis = "per month late: its capacity bought on demand" if extra > 0 else "per month late: no extra cash"
    if stranded:
        basis += "; " + _unserved_words(monthly, v.unserved_share, v.extra_shortfall_first_month, price, cur)
    elif extra <= 0:
        basis = "none: the rest of the plan's capacity covers the demand meanwhile"
    return Risk(
        risk=what,
        likelihood="medium" if record.terms.delivery is None or not late else "low",
        impact=extra,
        impact_basis=basis,
        shortfall=v.extra_shortfall_first_month if stranded and price is not None else None,
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


def _vendor_failure_risk(
    v: VendorStress,
    record: OfferRecord,
    stranded: bool,
    lost: float,
    rest: list[str],
    months: int,
    cur: str,
    plan: PlanResult,
) -> Risk:
    """A committed vendor failing during its term. Cash: its prepayment lost, plus its capacity bought on demand over
    the horizon (the plan's stress without it). Apart, when nothing else in the plan serves its demand: that demand
    unserved for REPLACE_MONTHS, until a fallback delivers, at the plan's unserved price."""
    monthly, price = _stranded_tasks(v, plan)
    extra = max(v.extra_spend, 0.0)
    basis = (f"{cash(lost, cur)} prepaid lost; " if lost else "") + (
        f"its capacity bought on demand over {months} months"
        if extra > 0
        else "no extra cash: the rest of the plan's capacity serves the demand"
        if not stranded
        else "no extra cash"
    )
    shortfall = None
    if stranded:
        shortfall = monthly * REPLACE_MONTHS * price if price is not None else None
        basis += (
            f"; {REPLACE_MONTHS} month{'s' if REPLACE_MONTHS > 1 else ''} until a fallback delivers: "
            + _unserved_words(monthly * REPLACE_MONTHS, v.unserved_share, shortfall or 0.0, price, cur)
        )
    return Risk(
        risk=f"{clip(v.vendor, 30)} fails during its term",
        likelihood="low" if record.rating.tier in ("platinum", "gold") else "medium",
        impact=lost + extra,
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


def _smaller_vendors_late(others_late: list[Risk], rest_vendors: list[VendorStress]) -> Risk:
    """The smaller commitments' late deliveries in one row: their priced impacts summed."""
    priced = [r.impact for r in others_late if r.impact is not None]
    return Risk(
        risk=f"{len(rest_vendors)} smaller commitment{'s' if len(rest_vendors) > 1 else ''} delivered late",
        likelihood=max((r.likelihood for r in others_late), key=("low", "medium", "high").index),
        impact=sum(priced) if priced else None,
        impact_basis="a month of their capacity bought on demand, per month late, all of them"
        + ("; with demand unserved apart (shortfall)" if any(r.shortfall for r in others_late) else ""),
        shortfall=sum(r.shortfall for r in others_late if r.shortfall) or None,
        mitigation="a late-delivery credit in each contract",
        owner="Procurement",
    )


def _smaller_vendor_fails(others_fail: list[Risk], rest_vendors: list[VendorStress]) -> Risk:
    """The smaller committed vendors' failures in one row: the costliest of them."""
    worst = max(others_fail, key=lambda r: (r.impact or 0.0, r.risk))
    return Risk(
        risk=f"One of {len(rest_vendors)} smaller committed vendors fails"
        if len(rest_vendors) > 1
        else "The smallest committed vendor fails",
        likelihood=max((r.likelihood for r in others_fail), key=("low", "medium", "high").index),
        impact=worst.impact,
        impact_basis=f"the costliest: {worst.risk.removesuffix(' fails during its term')}, {worst.impact_basis}",
        shortfall=worst.shortfall,
        mitigation="pay monthly in arrears; keep the other offers qualified",
        owner="CFO",
    )


def _concentration_risk(plan: PlanResult, committed: dict[str, float], total: float, cur: str) -> Risk:
    """The committed spend concentrated with one vendor: the largest commitment and every vendor's share."""
    top = max(committed, key=lambda k: (committed[k], k))
    shares = ", ".join(
        f"{clip(k, 30)} {committed[k] / total:.0%}" for k in sorted(committed, key=lambda k: (-committed[k], k))
    )
    share = committed[top] / total
    cap = plan.policy.max_vendor_share
    return Risk(
        risk="Concentration of committed spend",
        likelihood="high" if share >= 0.9 else "medium" if share > 0.5 else "low",
        impact=committed[top],
        impact_basis=f"with {clip(top, 30)}: {shares} of {cash(total, cur)} bound (held and signed now)",
        mitigation=(
            f"no vendor above {cap:.0%} of expected capacity"
            if cap < 1
            else "a vendor share limit (plan.max_vendor_share)"
        )
        + "; keep the other offers qualified",
        owner="Head of infrastructure",
    )


def _plan_wide_risks(plan: PlanResult, ev: Evaluation, hedge_asked: bool) -> list[Risk]:
    """The risks of the plan as a whole: availability below the expected, market prices 20% up, demand
    30% down, and throughput below a vendor's claim, each from the plan's stress cases."""
    assert plan.stress is not None
    cur, st, months = plan.currency, plan.stress, plan.demand.months
    risks: list[Risk] = []
    committed_records = [ev.offer(v.offers[0]) for v in st.vendors]
    order = ("low", "medium", "high")
    risks.append(
        Risk(
            risk="Operators deliver less availability than expected",
            likelihood=max((_tier_likelihood(r) for r in committed_records), key=order.index, default="medium"),
            impact=st.availability_point,
            impact_basis=f"cash over {months} months at one point less availability, the lost tasks bought on demand"
            + ("; the rest unserved (the shortfall)" if st.availability_shortfall > 0.5 else ""),
            shortfall=st.availability_shortfall if st.availability_shortfall > 0.5 else None,
            mitigation="automatic SLA credits and a health-check clause in every commitment",
            owner="Head of infrastructure",
        )
    )
    hours, rent, task_rent = plan_floating(plan, ev)
    floating = sum(rent) + task_rent
    dearer = next(c for c in st.cases if c.name == PRICE_CASE[1])
    risks.append(
        Risk(
            risk="Market prices rise 20% (on demand, or following the index)",
            likelihood="medium",
            impact=dearer.total_spend - _as_planned(plan).total_spend if floating else None,
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
    low = next(c for c in st.cases if c.name == "Demand −30%")
    lower = next(c for c in st.cases if c.name == "Demand −50%")
    risks.append(
        Risk(
            risk="Demand 30% below the plan",
            likelihood="medium",
            impact=low.unused_commitment if low.unused_commitment > 0 else None,
            impact_basis=f"commitment idle over {months} months ({cash(lower.unused_commitment, cur)} at −50%)"
            if low.unused_commitment > 0
            else "no commitment left idle",
            mitigation="commit to the base load, peaks on demand; resize at renewal",
            owner="Head of product",
        )
    )
    if st.claims_low_end is not None:
        claimed = _with([line.vendor for line in plan.plan if ev.offer(line.offer).points_source == "vendor_claim"])
        risks.append(
            Risk(
                risk=f"Throughput below the vendor's claim ({claimed})",
                likelihood="medium",
                impact=st.claims_low_end,
                impact_basis=f"cash over {months} months at the low end of the claim (×{st.claims_factor:g}), the lost tasks bought on demand"
                + ("; the rest unserved (the shortfall)" if st.claims_shortfall and st.claims_shortfall > 0.5 else ""),
                shortfall=st.claims_shortfall if st.claims_shortfall and st.claims_shortfall > 0.5 else None,
                mitigation="acceptance test on our workload before the commitment starts",
                owner="Head of infrastructure",
            )
        )
    return risks


def _plan_hedge(
    plan: PlanResult, ev: Evaluation, hedge: HedgePlan | None, missing: str, config: HedgeConfig | None
) -> HedgeAsk:
    """The hedge of what floats in the plan, as the comparison report's hedging chapter computes it
    (procure.analysis.hedging.plan_hedge): the same contracts for the same months."""
    hours, rent, task_rent = plan_floating(plan, ev)
    cur, months = plan.currency, plan.demand.months
    token = (
        f" Capacity billed per token ({cash(task_rent, cur)} expected) does not move with a GPU-hour price index."
        if task_rent > 0
        else ""
    )
    if sum(hours) <= 0:
        return HedgeAsk(
            ask=False,
            question="No hedge is needed.",
            detail=f"Every commitment in the plan is at a fixed price and the plan buys no GPU-hours at market prices over its {months} months: nothing moves with the market price."
            + token,
        )
    if hedge is None or hedge.offer != PLAN_HEDGE_ID:
        return HedgeAsk(
            ask=False,
            question="No hedge is proposed.",
            detail=f"The plan's on-demand GPU-hours move with the market price ({prose_count(sum(hours))} expected over {months} months, {cash(sum(rent), cur)}). {missing}"
            + token,
        )
    span = hedge.horizon_months
    bought = [r for r in hedge.ladder if r.contracts]
    exposed_rent = sum(rent[:span])
    if not bought:
        return HedgeAsk(
            ask=False,
            question="No hedge is needed.",
            detail=f"The plan's GPU-hours at market prices ({prose_count(sum(hours[:span]))} expected over {month_range(1, span)}) are too few for one contract of {hedge.contract_gpu_hours:,.0f} GPU-hours."
            + token,
        )
    contracts = sum(r.contracts for r in bought)
    hedged = sum(r.hedged_gpu_hours for r in bought)
    linked = [
        line.vendor for line in plan.plan if line.role == "commit" and ev.offer(line.offer).pricing_basis == "index"
    ]
    rise = PRICE_MOVE * exposed_rent
    payoff = hedged * hedge.stress_level * PRICE_MOVE
    shares = ", ".join(
        f"{r.share:.0%} of months {r.first_month}–{r.last_month}"
        if r.first_month != r.last_month
        else f"{r.share:.0%} of month {r.first_month}"
        for r in hedge.ladder
    )
    first, last = bought[0].first_month, bought[-1].last_month
    return HedgeAsk(
        ask=True,
        question=f"Approve buying {contracts:,} GPU-hour price contracts ({prose_count(hedged)} GPU-hours) for {month_range(first, last)}, against the plan's GPU-hours at market prices?",
        detail=(
            (
                f"The commitments whose price follows the market index ({_with(linked)}) and the capacity bought on demand move with the market: "
                if linked
                else "The commitments are at fixed prices; what moves with the market is the capacity bought on demand: "
            )
            + f"{prose_count(sum(hours[:span]))} GPU-hours expected over {month_range(1, span)} ({cash(exposed_rent, cur)}). "
            f"If the index and these prices rise 20%, that cost rises {cash(rise, cur)}; the contracts pay {cash(payoff, cur)} of it. "
            f"The hours are expected, not promised (on-demand use falls first when demand falls), so a falling share is covered: {shares}. "
            "No premium: the exchange holds margin, and if the index falls the contracts pay back what the lower price saves."
            + token
        ),
    )
