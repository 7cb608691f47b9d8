"""The board memo's figures, computed once from one evaluation: what signing binds us to pay (each offer, each plan
line, each vendor), the saving against today, the risk register's impacts and shortfalls, the concentration of
committed spend, the hedge's sums and what the recommendation costs against today and the best single offer.

procure/render/board.py puts them in words; every commitment reads procure/analysis/commitment.py's rule. Scenarios
re-run the whole evaluation with one input changed (procure/analysis/scenarios.py), so a flip of the cheapest offer
shows exactly as the ranking would show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from pydantic import BaseModel, Field

from procure.analysis.commitment import line_commitments, offer_commitment
from procure.analysis.decision import decide
from procure.analysis.evaluate import Evaluation
from procure.analysis.hedging import PLAN_HEDGE_ID, HedgePlan, plan_floating
from procure.analysis.plan import PlanCase, PlanResult
from procure.analysis.plan.result import VendorStress
from procure.analysis.plan.stress import DEMAND_SHIFTS, PRICE_CASE
from procure.analysis.position import Position
from procure.analysis.recommendation import Recommendation
from procure.analysis.record import OfferRecord
from procure.analysis.scenarios import Case, ScenarioRow, scenario_rows
from procure.model.costing import HOURS_PER_MONTH
from procure.model.kinds import kind_named

PRICE_MOVE = PRICE_CASE[0]  # the price stress: market prices 20% higher, as the hedging stress moves the index
# A vendor that fails while nothing else in the plan serves its demand: the months until a qualified fallback offer
# delivers, its demand unserved meanwhile (the fastest delivery the example's offers promise is about four weeks).
REPLACE_MONTHS = 1
# Without a vendor, above this share of demand unserved the extra spend is no measure of the loss.
UNSERVED_PRICED = 0.01
VENDOR_ROWS = 2  # committed vendors named in the risk register; the rest are summed in one row of each


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


@dataclass
class TermFigures:
    """The recommended offer's term sheet: GPUs in 8-GPU nodes, its commitment, cash at signing, exit costs."""

    nodes: int | None
    commitment: float | None
    at_signing: float | None  # prepayment and one-off fees due in month 0
    exit_cost: float | None  # offboarding and egress


@dataclass
class OfferRisks:
    """The register's impacts when one offer is the recommendation."""

    late_month: float | None  # a month's saving forgone per month late
    prepaid: float  # the prepayment lost if the vendor fails
    switch: float | None  # the term on the runner-up instead
    failure: float | None  # prepaid + switch
    premium: float | None  # a year on the runner-up instead
    availability: float | None  # a year at one point less availability
    index_up: float | None  # index +20% over the hedge's horizon, unhedged
    idle: float | None  # commitment idle over the term at demand -30%
    claims: float | None  # a year at the low end of the vendor's throughput claim
    late_likelihood: str = "medium"  # the likelihoods of the register's rows (late_likelihood and its siblings)
    failure_likelihood: str = "medium"
    availability_likelihood: str = "medium"
    concentration_likelihood: str = "high"  # the whole workload with one vendor: high, medium for owned equipment


@dataclass
class VendorRisks:
    """One committed vendor of the plan: its late delivery and its failure, from the plan's stress without it."""

    vendor: str
    offer: str
    first_month: int
    signing: bool  # signed now and not in service yet: its delivery is at risk
    late_likelihood: str  # late_likelihood of its offer
    failure_likelihood: str  # failure_likelihood of its offer
    stranded: bool  # nothing else in the plan serves its demand
    unserved_share: float
    monthly_tasks: float  # tasks a month nothing else serves without it
    unserved_price: float | None  # the plan's price of an unserved task
    late_extra: float  # cash of a month late: its capacity bought on demand
    late_shortfall_tasks: float  # the stress's unserved tasks in its first month, at the unserved price
    late_shortfall: float | None
    lost: float  # its prepayment
    fail_extra: float  # its capacity bought on demand over the horizon
    fail_tasks: float  # tasks unserved until a fallback delivers
    fail_shortfall: float | None
    fail_impact: float
    rest: list[str]  # the other pay-as-used vendors of the plan


@dataclass
class PlanRisks:
    """The register when the plan is the recommendation."""

    vendors: list[VendorRisks]  # by committed spend, largest first; the first VENDOR_ROWS are named
    named: int
    committed: dict[str, float]  # vendor -> commitment (commitment.py's rule)
    prepaid: dict[str, float]
    total: float
    concentration: list[tuple[str, float]]  # vendor, share of the committed total, largest first
    top_vendor: str | None
    top_commitment: float | None
    top_share: float | None
    late_rest: list[VendorRisks]  # smaller vendors signed now
    late_rest_impact: float | None
    late_rest_shortfall: float | None
    fail_worst: VendorRisks | None  # the costliest failure among the smaller vendors
    floating: float  # rent at market prices over the horizon, per-token capacity included
    price_impact: float | None  # market prices +20% against the plan as planned
    idle_30: float  # commitment idle at demand -30% and -50%
    idle_50: float
    claimed: list[str]  # vendors whose throughput is their claim
    availability_likelihood: str  # the likeliest of the committed operators delivering less (tier_likelihood)
    concentration_likelihood: str  # high from 90% of committed spend with one vendor, medium above half, else low
    # the demand a plan-wide risk leaves unserved, priced apart (the plan's stress), when there is any to speak of
    availability_shortfall: float | None = None
    claims_shortfall: float | None = None


# A shortfall below half a unit of the currency is rounding, not demand left unserved: the memo does not state it.
SHORTFALL_STATED = 0.5


def stated_shortfall(shortfall: float | None) -> float | None:
    return shortfall if shortfall and shortfall > SHORTFALL_STATED else None


@dataclass
class HedgeSums:
    """The hedge the memo asks for: contracts bought, GPU-hours hedged, their months, and the +20% stress."""

    contracts: int
    hedged: float
    first_month: int | None
    last_month: int | None
    rise: float | None  # what the floating cost rises if prices rise 20%
    payoff: float | None  # what the contracts pay of it
    hours: float = 0.0  # the plan's GPU-hours at market prices over its months
    rent: float = 0.0
    task_rent: float = 0.0  # per-token capacity: no GPU-hour index moves it
    exposed_hours: float = 0.0  # within the hedge's horizon
    exposed_rent: float = 0.0
    linked: list[str] = field(default_factory=list)  # committed vendors whose price follows the index
    later: list[str] = field(default_factory=list)  # vendors of later decisions within the hedge's months
    on_demand_hours: float = 0.0  # pay-as-used GPU-hours within the hedge's months
    of_plan: bool = False  # the hedge is the plan's


@dataclass
class CostFigures:
    """What the recommendation costs, against the best single offer and against today."""

    past_horizon: bool = False  # a plan term runs past the last month (counted whole)
    plan_tasks: float | None = None  # the plan's expected tasks a month
    gap: float | None = None  # best single offer's cost per task less the plan's
    gap_monthly: float | None = None
    spend_now: float | None = None  # today's cost per task x today's tasks a month
    new_spend: float | None = None  # a month, the recommendation
    diff: float | None = None  # new - today
    volume: float | None = None  # of which: more or fewer tasks at today's price
    price: float | None = None  # of which: the cost per task
    volume_told: bool = False  # each part is told when it is at least half a percent of today's spend
    price_told: bool = False
    diff_year: float | None = None


@dataclass(frozen=True)
class Fact:
    """A pro or con of an offer, decided here and worded by the memo (render/board.py's PRO_WORDS and CON_WORDS):
    its name and the figure its words carry."""

    name: str
    value: float | int | str | None = None


@dataclass
class MemoFigures:
    """Every figure the board memo prints, computed once; the memo's words are render/board.py's."""

    rec: Recommendation
    rows: list[ScenarioRow] = field(default_factory=list)
    plan: PlanResult | None = None  # when the plan is the recommendation
    position: Position | None = None
    hedge: HedgePlan | None = None
    hedge_missing: str = ""
    commitments: dict[str, float | None] = field(default_factory=dict)  # offer id -> commitment as offered
    idle: dict[str, float] = field(default_factory=dict)  # offer id -> share of the commitment idle at demand
    cheapest_today: str | None = None
    cheapest_horizon: str | None = None
    near_tie_gap: float | None = None  # today's cost apart, cheapest today against cheapest over the horizon
    near_tie: tuple[str, str] | None = None  # the offers cheapest today and over the horizon, when they differ
    facts: dict[str, tuple[list[Fact], list[Fact]]] = field(default_factory=dict)  # each offer's pros and cons
    plan_cons: list[Fact] = field(default_factory=list)  # the plan's, as the options' first row states them
    # each offer not acceptable at any price, with the first gate it fails (its root cause; "cost" when it passes
    # every gate but has no cost): the memo words them, whatever their number
    rejected: list[tuple[str, str]] = field(default_factory=list)
    terms: TermFigures | None = None
    today: AgainstToday | None = None
    offer_risks: OfferRisks | None = None
    plan_risks: PlanRisks | None = None
    hedge_sums: HedgeSums | None = None
    line_commitments: list[float | None] = field(default_factory=list)  # in the order of plan.plan
    nodes: list[int | None] = field(default_factory=list)  # a committed line's 8-GPU nodes, order of plan.plan
    ask_total: float = 0.0  # committed now by the plan's ask
    unused_monthly: list[float] = field(default_factory=list)  # each stress case's idle commitment a month
    unserved_least: float | None = None  # the least and most unserved share over the cases that leave some
    unserved_most: PlanCase | None = None
    short_cases: int = 0
    cost: CostFigures = field(default_factory=CostFigures)
    signed_months: dict[str, int] = field(default_factory=dict)  # offer id -> months of delivered evidence
    ask_after_held: date | None = None  # the first start of the ask when it all follows what we hold, else None


def memo_figures(
    ev: Evaluation,
    cases: list[Case],
    position: Position | None,
    hedge: HedgePlan | None,
    hedge_missing: str,
    plan: PlanResult | None = None,
    rec: Recommendation | None = None,
) -> MemoFigures:
    """The memo's figures for the recommendation: the plan when there is one (every part then speaks of the plan's
    fixed portfolio), else the recommended offer; without either, only the hedge and the evidence."""
    rec = rec or decide(ev, plan)
    plan = plan if rec.kind == "plan" else None
    fig = MemoFigures(rec=rec, plan=plan, position=position, hedge=hedge, hedge_missing=hedge_missing)
    fig.signed_months = {
        o.id: max((o.evidence or {}).get("months") or 0, (o.evidence or {}).get("availability_months") or 0)
        for o in ev.offers
        if o.evidence
    }
    fig.cost = cost_figures(rec, ev, position, plan)
    fig.rejected = [
        (o.vendor, next((g.gate for g in o.gates if not g.passed), "cost")) for o in ev.offers if not o.acceptable
    ]
    if plan is not None and plan.held and plan.term_sheet:
        last_held = max(h.end for h in plan.held)
        if all(r.start >= last_held for r in plan.term_sheet):
            fig.ask_after_held = min(r.start for r in plan.term_sheet)
    leader = ev.offer(ev.summary.recommended) if ev.summary.recommended else None
    if leader is None:
        return fig
    fig.commitments = {o.id: offer_commitment(o) for o in ev.offers}
    fig.idle = {o.id: 1 - o.metrics["fill"] for o in ev.offers if o.metrics.get("fill") is not None}
    _cheapest(fig, ev)
    fig.facts = {o.id: pros_and_cons(o, ev, fig) for o in ev.offers}
    tie = near_tie(ev, fig)
    fig.near_tie = (tie[0].id, tie[1].id) if tie is not None else None
    fig.terms = _term_figures(leader)
    fig.rows = scenario_rows(cases, leader.id)
    if plan is not None and plan.plan:
        records = {o.id: o for o in ev.offers}
        fig.line_commitments = line_commitments(plan, records)
        fig.nodes = [-(-x.gpus // 8) if x.gpus and x.role == "commit" else None for x in plan.plan]
        bound = dict(zip(map(id, plan.plan), fig.line_commitments))
        asked = sorted(
            (x for x in plan.plan if x.role == "commit" and x.decision in (None, "sign_now")),
            key=lambda x: (x.start_month or 0, x.vendor),
        )
        fig.ask_total = sum(bound[id(x)] or 0 for x in asked)
        fig.plan_cons = plan_cons(plan)
    if plan is not None and plan.plan and plan.stress is not None:
        fig.today = _plan_today(position, plan)
        _plan_cases(fig, plan)
        fig.hedge_sums = plan_hedge_sums(plan, ev, hedge)
        fig.plan_risks = plan_risks(plan, ev, fig.line_commitments)
        return fig
    fig.today = _today(position, leader, ev.workload.tasks_per_month)
    runner = ev.offer(ev.summary.runner_up) if ev.summary.runner_up else None
    fig.offer_risks = _offer_risks(leader, ev, fig.rows, hedge, fig.today, runner)
    fig.hedge_sums = _hedge_sums(hedge)
    return fig


def _cheapest(fig: MemoFigures, ev: Evaluation) -> None:
    """The cheapest acceptable offer today and over the horizon, and how far apart they are today."""
    ranked = ev.ranked
    if not ranked:
        return
    snap = min(ranked, key=lambda o: (o.metrics["cost_per_task"], o.id))
    fig.cheapest_today = snap.id
    horizon = [o for o in ranked if o.metrics.get("horizon_cost_per_task") is not None]
    if horizon:
        hor = min(horizon, key=lambda o: (o.metrics["horizon_cost_per_task"], o.id))
        fig.cheapest_horizon = hor.id
        fig.near_tie_gap = (
            abs(snap.metrics["cost_per_task"] - hor.metrics["cost_per_task"]) / snap.metrics["cost_per_task"]
        )


def _term_figures(record: OfferRecord) -> TermFigures:
    c = record.terms.contract
    flows = record.cashflow.months if record.cashflow else []
    gpus = record.gpus
    return TermFigures(
        nodes=-(-gpus // 8) if gpus else None,
        commitment=offer_commitment(record),
        at_signing=next((f.total for f in flows if f.month == 0), None),
        exit_cost=c.exit.offboarding + c.exit.egress_tb * c.exit.egress_per_tb if c.exit else None,
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


def as_planned(plan: PlanResult) -> PlanCase:
    """The plan's stress case with demand as planned."""
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
    tasks = as_planned(plan).demand_per_month
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


def _plan_cases(fig: MemoFigures, plan: PlanResult) -> None:
    """Each stress case's idle commitment a month, and the range of unserved demand over the cases that leave some."""
    assert plan.stress is not None
    months = plan.demand.months
    fig.unused_monthly = [case.unused_commitment / months for case in plan.stress.cases]
    short = [c for c in plan.stress.cases if c.unserved_share >= 0.0005]
    fig.short_cases = len(short)
    if short:
        fig.unserved_most = max(short, key=lambda c: c.unserved_share)
        fig.unserved_least = min(c.unserved_share for c in short)


def _offer_risks(
    record: OfferRecord,
    ev: Evaluation,
    rows: list[ScenarioRow],
    hedge: HedgePlan | None,
    today: AgainstToday | None,
    runner: OfferRecord | None,
) -> OfferRisks:
    m = record.metrics
    spend = m.get("monthly_spend") or 0.0
    stated = ev.workload.tasks_per_month
    # Without a stated demand, the tasks the committed GPUs deliver a month.
    tasks = (
        stated
        or ((m.get("successful_tasks_per_gpu_hour") or 0) * (m.get("billed_gpus") or 0) * HOURS_PER_MONTH)
        or None
    )
    # Delivery: each month late we keep paying today's cost (or, without one, run on the runner-up).
    late_month = today.monthly_saving if today and today.monthly_saving and today.monthly_saving > 0 else None
    premium = (
        (runner.metrics["cost_per_task"] - m["cost_per_task"]) * tasks * 12
        if runner and tasks and runner.metrics.get("cost_per_task") is not None
        else None
    )
    prepaid = (record.terms.pricing.prepay_fraction or 0) * (offer_commitment(record) or 0)
    switch = premium * record.term_months / 12 if premium is not None else None
    up = next((r for r in hedge.stress if abs(r.index_move - 0.2) < 1e-9), None) if hedge else None
    low = next((r for r in rows if r.name == "Demand −30%"), None)
    claims = next((r for r in rows if r.name.startswith("Vendor throughput claims")), None)
    base = next((r for r in rows if r.name in ("Demand as stated", "As evaluated (no demand stated)")), None)
    claimed = (
        (claims.monthly_spend - base.monthly_spend) * 12
        if record.points_source == "vendor_claim"
        and claims
        and base
        and claims.monthly_spend is not None
        and base.monthly_spend is not None
        else None
    )
    return OfferRisks(
        late_likelihood=late_likelihood(record),
        failure_likelihood=failure_likelihood(record),
        availability_likelihood=tier_likelihood(record),
        concentration_likelihood="high" if kind_named(record.pricing_basis).equipment is None else "medium",
        late_month=late_month,
        prepaid=prepaid,
        switch=switch,
        failure=prepaid + (switch or 0) if prepaid or switch else None,
        premium=premium,
        availability=spend * 0.01 * 12 if spend else None,
        index_up=up.unhedged_change if up and up.unhedged_change else None,
        idle=low.unused_monthly * record.term_months if low and low.unused_monthly is not None else None,
        claims=claimed,
    )


def _hedge_sums(hedge: HedgePlan | None) -> HedgeSums | None:
    """The recommended offer's hedge: the contracts of its ladder and the +20% index stress."""
    if hedge is None:
        return None
    bought = [r for r in hedge.ladder if r.contracts]
    up = next((r for r in hedge.stress if abs(r.index_move - 0.2) < 1e-9), None)
    return HedgeSums(
        contracts=sum(r.contracts for r in bought),
        hedged=sum(r.hedged_gpu_hours for r in bought),
        first_month=bought[0].first_month if bought else None,
        last_month=bought[-1].last_month if bought else None,
        rise=up.unhedged_change if up else None,
        payoff=up.hedge_payoff if up else None,
    )


def plan_hedge_sums(plan: PlanResult, ev: Evaluation, hedge: HedgePlan | None) -> HedgeSums:
    """The hedge of what floats in the plan, as the comparison report's hedging chapter computes it
    (procure.analysis.hedging.plan_hedge): the same contracts for the same months."""
    hours, rent, task_rent = plan_floating(plan, ev)
    sums = HedgeSums(
        contracts=0,
        hedged=0.0,
        first_month=None,
        last_month=None,
        rise=None,
        payoff=None,
        hours=sum(hours),
        rent=sum(rent),
        task_rent=task_rent,
        of_plan=hedge is not None and hedge.offer == PLAN_HEDGE_ID,
    )
    if hedge is None or not sums.of_plan:
        return sums
    span = hedge.horizon_months
    bought = [r for r in hedge.ladder if r.contracts]
    sums.exposed_hours, sums.exposed_rent = sum(hours[:span]), sum(rent[:span])
    if bought:
        sums.contracts = sum(r.contracts for r in bought)
        sums.hedged = sum(r.hedged_gpu_hours for r in bought)
        sums.first_month, sums.last_month = bought[0].first_month, bought[-1].last_month
        sums.rise = PRICE_MOVE * sums.exposed_rent
        sums.payoff = sums.hedged * hedge.stress_level * PRICE_MOVE
    sums.linked = [
        line.vendor
        for line in plan.plan
        if line.role == "commit" and kind_named(ev.offer(line.offer).pricing_basis).index_rent is not None
    ]
    # what floats, by its cause: the words name only what the plan holds (no "capacity bought on demand" without any)
    sums.later = list(
        dict.fromkeys(
            line.vendor
            for line in plan.plan
            if line.role == "commit" and line.decision == "later" and (line.start_month or span + 1) <= span
        )
    )
    sums.on_demand_hours = sum(plan.stress.pay_as_used_gpu_hours[:span]) if plan.stress is not None else 0.0
    return sums


def committed_by_vendor(
    plan: PlanResult, ev: Evaluation, bound: list[float | None]
) -> tuple[dict[str, float], dict[str, float]]:
    """Each committed vendor's commitment over the plan (`bound`: line_commitments), and the part of it prepaid
    (lost if it fails)."""
    committed: dict[str, float] = {}
    prepaid: dict[str, float] = {}
    for line, amount in zip(plan.plan, bound):
        if line.role != "commit" or amount is None:
            continue
        committed[line.vendor] = committed.get(line.vendor, 0.0) + amount
        prepaid[line.vendor] = (
            prepaid.get(line.vendor, 0.0) + (ev.offer(line.offer).terms.pricing.prepay_fraction or 0) * amount
        )
    return committed, prepaid


def _vendor_risks(
    v: VendorStress,
    plan: PlanResult,
    ev: Evaluation,
    signing: set[str],
    prepaid: dict[str, float],
    others: set[str],
) -> VendorRisks:
    """A committed vendor late or failing: the cash from the plan's stress without it, and the demand nothing else
    in the plan serves meanwhile apart, at the plan's unserved price."""
    stranded = v.unserved_share >= UNSERVED_PRICED
    monthly = v.unserved_share * as_planned(plan).demand_per_month
    price = plan.unserved_penalty_per_task
    lost = prepaid.get(v.vendor, 0.0)
    extra = max(v.extra_spend, 0.0)
    record = ev.offer(v.offers[0])
    return VendorRisks(
        vendor=v.vendor,
        offer=v.offers[0],
        first_month=v.first_month,
        signing=v.vendor in signing,
        late_likelihood=late_likelihood(record),
        failure_likelihood=failure_likelihood(record),
        stranded=stranded,
        unserved_share=v.unserved_share,
        monthly_tasks=monthly,
        unserved_price=price,
        late_extra=max(v.extra_first_month, 0.0),
        # the stress prices the month's unserved tasks at the unserved price: the tasks are that over the price
        late_shortfall_tasks=v.extra_shortfall_first_month / price if price else 0.0,
        late_shortfall=v.extra_shortfall_first_month if stranded and price is not None else None,
        lost=lost,
        fail_extra=extra,
        fail_tasks=monthly * REPLACE_MONTHS,
        fail_shortfall=monthly * REPLACE_MONTHS * price if stranded and price is not None else None,
        fail_impact=lost + extra,
        rest=sorted(others - {v.vendor}),
    )


def plan_risks(plan: PlanResult, ev: Evaluation, bound: list[float | None]) -> PlanRisks:
    """The register's figures for the plan: every impact from the plan's own dispatch of its fixed portfolio.

    Each committed vendor's late delivery and failure (the largest by committed spend named, the rest summed),
    the concentration of committed spend, then the risks of the plan as a whole."""
    assert plan.stress is not None
    st = plan.stress
    committed, prepaid = committed_by_vendor(plan, ev, bound)
    total = sum(committed.values())
    others = {line.vendor for line in plan.plan if line.role == "pay_as_used"}
    ranked = sorted(st.vendors, key=lambda v: (-committed.get(v.vendor, 0.0), v.vendor))
    # A delivery is at risk only for what is signed now: a held contract is in service, a later decision is re-planned.
    # A renewal signed now of a contract held today continues capacity in service: no delivery to wait for.
    in_service = {line.vendor for line in plan.plan if line.decision == "held"}
    signing = {
        line.vendor for line in plan.plan if line.role == "commit" and line.decision in (None, "sign_now")
    } - in_service
    vendors = [_vendor_risks(v, plan, ev, signing, prepaid, others) for v in ranked]
    named = min(VENDOR_ROWS, len(vendors))
    late_rest = [v for v in vendors[named:] if v.signing]
    priced = [v.late_extra for v in late_rest]
    fail_rest = vendors[named:]
    top = max(committed, key=lambda k: (committed[k], k)) if committed else None
    hours, rent, task_rent = plan_floating(plan, ev)
    floating = sum(rent) + task_rent
    dearer = next(c for c in st.cases if c.name == PRICE_CASE[1])
    return PlanRisks(
        vendors=vendors,
        named=named,
        committed=committed,
        prepaid=prepaid,
        total=total,
        concentration=[(k, committed[k] / total) for k in sorted(committed, key=lambda k: (-committed[k], k))],
        top_vendor=top,
        top_commitment=committed[top] if top is not None else None,
        top_share=committed[top] / total if top is not None else None,
        late_rest=late_rest,
        late_rest_impact=sum(priced) if priced else None,
        late_rest_shortfall=sum(v.late_shortfall for v in late_rest if v.late_shortfall) or None,
        fail_worst=max(fail_rest, key=lambda v: (v.fail_impact, v.vendor)) if fail_rest else None,
        floating=floating,
        price_impact=dearer.total_spend - as_planned(plan).total_spend if floating else None,
        idle_30=next(c for c in st.cases if c.name == "Demand −30%").unused_commitment,
        idle_50=next(c for c in st.cases if c.name == "Demand −50%").unused_commitment,
        claimed=[line.vendor for line in plan.plan if ev.offer(line.offer).points_source == "vendor_claim"],
        availability_shortfall=stated_shortfall(st.availability_shortfall),
        claims_shortfall=stated_shortfall(st.claims_shortfall),
        concentration_likelihood=(
            "low"
            if top is None or committed[top] / total <= 0.5
            else "high"
            if committed[top] / total >= 0.9
            else "medium"
        ),
        availability_likelihood=max(
            (tier_likelihood(ev.offer(v.offers[0])) for v in st.vendors), key=LIKELIHOODS.index, default="medium"
        ),
    )


def cost_figures(
    rec: Recommendation, ev: Evaluation, position: Position | None, plan: PlanResult | None
) -> CostFigures:
    """What the recommendation costs a month against the best single offer and against what we pay today, the
    difference split into volume (more or fewer tasks at today's price) and price."""
    out = CostFigures()
    if rec.kind == "none" or rec.cost_per_task is None:
        return out
    out.past_horizon = bool(
        rec.kind == "plan"
        and rec.months
        and any(x.term_months and x.first_month and x.first_month - 1 + x.term_months > rec.months for x in rec.lines)
    )
    if rec.kind == "plan" and plan is not None and plan.stress is not None:
        out.plan_tasks = as_planned(plan).demand_per_month
    if rec.kind == "plan" and rec.best_single.offer is not None and rec.saving_share is not None:
        out.gap = (rec.best_single.cost_per_task or 0.0) - rec.cost_per_task
        out.gap_monthly = abs(out.gap) * out.plan_tasks if out.plan_tasks else None
    tasks_now = ev.workload.tasks_per_month
    if position is None or position.label.startswith("the recommended offer") or not tasks_now:
        return out
    price_now = position.cost_per_task
    out.spend_now = price_now * tasks_now
    if rec.kind == "plan" and out.plan_tasks and rec.total_spend is not None and rec.months:
        out.new_spend = rec.total_spend / rec.months
        out.diff = out.new_spend - out.spend_now
        out.volume = (out.plan_tasks - tasks_now) * price_now
        out.price = out.diff - out.volume
        out.volume_told = abs(out.volume) >= 0.005 * out.spend_now
        out.price_told = abs(out.price) >= 0.005 * out.spend_now
    elif rec.kind == "offer" and ev.rank_by == "cost_per_task":
        out.new_spend = rec.cost_per_task * tasks_now
        out.diff = out.new_spend - out.spend_now
        out.diff_year = abs(out.diff) * 12
    return out


# The risk register's likelihoods: one rule each, decided here so that every surface that rates a risk rates it alike.
LIKELIHOODS = ("low", "medium", "high")


def operator_tier(record: OfferRecord) -> str | None:
    """The operator's tier: ours (procure rate) where we rated it, else the one it publishes (ClusterMAX)."""
    return record.rating.tier or record.terms.operator.published_tier


def tier_likelihood(record: OfferRecord) -> str:
    """An operator delivering less availability than expected: low for Platinum and Gold, medium for Silver (and for
    an owned cluster or bare metal, where the operating layer is ours), high otherwise."""
    return {"platinum": "low", "gold": "low", "silver": "medium"}.get(
        operator_tier(record) or "", "medium" if record.operated_by_us else "high"
    )


def late_likelihood(record: OfferRecord) -> str:
    """A late delivery: low when a delivery date is promised with a late-delivery credit, else medium."""
    return "medium" if record.terms.delivery is None or not record.terms.contract.late_delivery else "low"


def failure_likelihood(record: OfferRecord) -> str:
    """A vendor failing during its term: low for a Platinum or Gold operator, else medium."""
    return "low" if operator_tier(record) in ("platinum", "gold") else "medium"


STATED_SHARE = 0.005  # a share the memo states: from half a percent (below it, it would read 0%)


def plan_cons(plan: PlanResult) -> list[Fact]:
    """The plan's cons beside the single offers: commitment left idle and tasks bought on demand, each when stated."""
    found = []
    if plan.expected_unused_share > STATED_SHARE:
        found.append(Fact("idle", plan.expected_unused_share))
    if plan.pay_as_used_share > STATED_SHARE:
        found.append(Fact("on_demand", plan.pay_as_used_share))
    return found


def pros_and_cons(record: OfferRecord, ev: Evaluation, fig: MemoFigures) -> tuple[list[Fact], list[Fact]]:
    """What speaks for and against an offer in the memo's options table, in the order a board reads them."""
    from procure.model.kinds import kind_named

    kind = kind_named(record.pricing_basis)
    m, t = record.metrics, record.terms
    pros: list[Fact] = []
    cons: list[Fact] = []
    if fig.cheapest_today == record.id:
        pros.append(Fact("cheapest_today"))
    if fig.cheapest_horizon == record.id:
        pros.append(Fact("cheapest_horizon", ev.horizon_months))
    if record.points_source == "measured":
        pros.append(Fact("measured"))
    elif record.points_source == "vendor_claim":
        cons.append(Fact("vendor_claim"))
    customer = [j for j, owner in record.responsibilities.items() if owner != "provider"]
    if record.kind == "managed_serving" or not customer:
        pros.append(Fact("provider_runs"))
    elif record.operated_by_us:
        cons.append(Fact("we_operate", m.get("ops_fte") or 0.0))
    if t.pricing.prepay_fraction:
        cons.append(Fact("prepaid", t.pricing.prepay_fraction))
    if kind.index_rent is not None:
        cons.append(Fact("market_price"))
    if record.rating_state == "unrated":
        cons.append(Fact("unrated_no_medal" if ev.assumptions.reliability.unrated is None else "unrated_allowance"))
    fill = m.get("fill")
    if fill is not None and fill < 0.9:
        cons.append(Fact("idle", fig.idle[record.id]))
    if kind.per_task:
        pros.append(Fact("no_commitment"))
    if record.kind == "owned":
        cons.append(Fact("capital", record.term_months // 12))
    if record.term_months <= 12 and not kind.per_task:
        pros.append(Fact("short_term", record.term_months))
    elif record.term_months >= 36:
        cons.append(Fact("long_term", record.term_months))
    return pros, cons


def near_tie(ev: Evaluation, fig: MemoFigures) -> tuple[OfferRecord, OfferRecord, float | None] | None:
    """A near-tie: the offer cheapest today and the one cheapest over the horizon differ (with the gap between them
    today); None when one offer is both, or fewer than two are ranked."""
    if len(ev.ranked) < 2 or fig.cheapest_today is None or fig.cheapest_horizon is None:
        return None
    if fig.cheapest_today == fig.cheapest_horizon:
        return None
    return ev.offer(fig.cheapest_today), ev.offer(fig.cheapest_horizon), fig.near_tie_gap
