"""Contract terms and cash flow over one horizon.

A per-GPU-hour snapshot hides what a board signs: a 36-month commitment with a prepayment and an
escalator is not comparable to a 6-month deal at the same hourly rate. Each offer becomes a monthly
schedule over the horizon (month 0 is signing): prepayment and its draw-down, rent with escalation,
fees by kind, the buyer's operating staff, software, expected SLA credits (shown; counted only when
asked), a late-delivery credit, renewal after the term (an explicit assumption, one rule shared with
hedging), the expected loss on unearned prepayment, the remaining value of owned equipment and exit
costs in the last month. From it: what the contract binds the buyer to pay, the total and
present-value cost, and the present value of cost per present value of successful tasks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from procure.analysis.cashflow_notes import RENEWAL_RULES, below_commitment, horizon_notes
from procure.model.costing import HOURS_PER_MONTH
from procure.model.inputs import ContractTerms, HorizonConfig
from procure.model.kinds import kind_named
from procure.model.units import PerThousand


class MonthFlow(BaseModel):
    month: int = Field(description="0 = signing; 1 = the first month after the as-of date")
    gpus: float
    prepayment: float = 0.0
    rent: float = 0.0
    fees: float = 0.0
    staff: float = 0.0
    software: float = 0.0
    power_colo: float = 0.0
    capital: float = 0.0
    credits: float = Field(
        0.0,
        description="credits counted in the total (negative): late delivery, and SLA credits when "
        "horizon.count_sla_credits",
    )
    sla_credits: float = Field(
        0.0, description="expected SLA credits (negative), shown whether or not they are counted"
    )
    prepay_risk: float = Field(
        0.0, description="expected loss on unearned prepayment at assumptions.vendor_default_rate"
    )
    exit: float = 0.0
    total: float = 0.0
    successful_tasks: float = 0.0
    index_level: float | None = Field(None, description="the index level the horizon assumes in this month")
    phase: str = Field(
        "", description="before delivery, term, renewal (owned: replacement, equipment bought again after its life)"
    )

    def row_total(self) -> float:
        """The month's total: every column that is paid or credited (the SLA credits only when counted)."""
        return (
            self.prepayment
            + self.rent
            + self.fees
            + self.staff
            + self.software
            + self.power_colo
            + self.capital
            + self.credits
            + self.prepay_risk
            + self.exit
        )


class HorizonResult(PerThousand):
    horizon_months: int
    renewal: str
    renewal_rule: str = Field("", description="the renewal rule in words")
    total_commitment: float = Field(description="what the contract binds the buyer to pay")
    total_cost: float
    npv_cost: float
    npv_tasks: float
    horizon_cost_per_task: float | None = Field(
        description="present value of costs / present value of successful tasks"
    )
    sla_credits_expected: float = Field(0.0, description="expected SLA credits over the horizon (positive), shown")
    sla_credits_counted: bool = Field(
        False, description="whether they are in total_cost, npv_cost and horizon_cost_per_task"
    )
    prepay_risk: float = Field(0.0, description="expected loss on unearned prepayment over the horizon")
    residual_value: float = Field(
        0.0, description="owned equipment: the remaining annuity balance credited in the last month"
    )
    delivery_month: int
    months: list[MonthFlow]
    notes: list[str]
    bridge: str | None = Field(
        None,
        description="delivered after month 1: what serves the months before delivery, and what they cost (null: "
        "delivered in month 1, or no tasks_per_month)",
    )
    bridge_by: str | None = Field(
        None,
        description="the offer that bridges the months before delivery; null when none is acceptable and delivered in "
        "month 1 (the tasks are priced unserved)",
    )
    bridge_cost: float = Field(
        0.0,
        description="what the months before delivery cost: their tasks at the bridging offer's cost per task, or at "
        "the unserved price; undiscounted, shown beside the horizon figures, not in them",
    )


def bridge_horizons(records, demand: Sequence[float] | None, penalty: float, basis: str, currency: str) -> None:  # type: ignore[no-untyped-def]
    """For every offer delivered after month 1, the months before its delivery: their demand (`demand`, the tasks
    of months 1..horizon the cash flows count) served by the cheapest acceptable offer delivered in month 1 at its
    cost per task, or, when none is, priced unserved at `penalty` (the plan's unserved price:
    plan.unserved_penalty_per_task, else bought on demand at the market price, procure/analysis/unserved.py), `basis`
    saying where it comes from. Written into each HorizonResult (`bridge`, `bridge_by`, `bridge_cost`) and its
    notes."""
    if not demand or not any(demand):
        return
    usable = [r for r in records if r.acceptable and r.cashflow is not None and r.metrics.get("cost_per_task")]
    ready = [r for r in usable if r.cashflow.delivery_month == 1]
    best = min(ready, key=lambda r: (r.metrics["cost_per_task"], r.id), default=None)
    for record in records:
        flow = record.cashflow
        if flow is None or flow.delivery_month <= 1:
            continue
        before = flow.delivery_month - 1
        tasks = sum(demand[:before])
        span, verb = ("month 1", "is") if before == 1 else (f"months 1-{before}", "are")
        if best is not None and best is not record:
            cost_per_task = float(best.metrics["cost_per_task"])
            flow.bridge_by = best.id
            flow.bridge_cost = tasks * cost_per_task
            flow.bridge = (
                f"delivered in month {flow.delivery_month}: {span} ({tasks:,.0f} tasks) {verb} bridged by {best.id}, "
                "the cheapest acceptable offer "
                f"delivered in month 1, at {cost_per_task * 1000:.4f} {currency} per 1,000 tasks: "
                f"{flow.bridge_cost:,.0f} {currency}, not in this offer's horizon figures"
            )
        else:
            flow.bridge_cost = tasks * penalty
            flow.bridge = (
                f"delivered in month {flow.delivery_month}: no acceptable offer is delivered in month 1, so {span} "
                f"({tasks:,.0f} tasks) {'goes' if before == 1 else 'go'} unserved, "
                f"priced at {penalty * 1000:.4f} {currency} per 1,000 tasks ({basis}): {flow.bridge_cost:,.0f} "
                f"{currency}, not in this offer's horizon figures"
            )
        if flow.bridge:
            flow.notes.append(flow.bridge)


def escalation(terms_escalator: float | None, schedule: list[tuple[int, float]] | None, contract_month: int) -> float:
    """The price factor in a contract month (1 = the offered price)."""
    factor = 1.0
    if terms_escalator:
        factor *= (1 + terms_escalator) ** ((contract_month - 1) // 12)
    for start, rise in schedule or []:
        if contract_month >= start:
            factor *= 1 + rise
    return factor


def term_average_rent(rent: float | None, contract: ContractTerms, term: int) -> float | None:
    """The rent averaged over the contract's months with its escalator: a 3% rise from month 7 is not free."""
    if rent is None or term <= 0:
        return rent
    return rent * sum(escalation(contract.escalator, contract.escalator_schedule, k) for k in range(1, term + 1)) / term


def renewal_step(contract: ContractTerms, term: int) -> float:
    """The price a renewal starts from, over the term's first price: the price the contract's escalators reach in the
    month after the term (a +10% a year escalator renews a 12-month term at 1.10; +2% from month 7 at 1.02), or 1 when
    the terms say a renewal restarts at the list price (contract.renewal_price: list)."""
    if contract.renewal_price == "list" or term <= 0:
        return 1.0
    return escalation(contract.escalator, contract.escalator_schedule, term + 1)


def contract_factor(contract: ContractTerms, term: int, contract_month: int) -> float:
    """The price factor in a contract month (1 = the offered price), renewals included: the one renewal rule of the
    cash flow, the hedge and the plan. A renewal repeats the terms from where the term before ended: the k-th renewal
    starts at renewal_step ** k and its own escalators run again within it (12 months at +10% a year: 1.00, then 1.10,
    then 1.21; Keel's +2% from month 7: 1.00 and 1.02, then 1.02 and 1.0404)."""
    if term <= 0 or contract_month <= term:
        return escalation(contract.escalator, contract.escalator_schedule, max(1, contract_month))
    renewals, within = divmod(contract_month - 1, term)
    return renewal_step(contract, term) ** renewals * escalation(
        contract.escalator, contract.escalator_schedule, within + 1
    )


def delivery_month(promised: date | None, as_of: date, delay_weeks: float) -> int:
    """The first month (1-based: month 1 is the as-of month, procure.model.calendar) in which the GPUs are delivered."""
    from procure.model.calendar import starts_from

    if promised is None:
        return 1
    return 1 + starts_from(as_of, promised + timedelta(weeks=delay_weeks))[0]


def index_in(index_now: float, growth: float, month: int) -> float:
    """The index level the horizon assumes `month` months after the as-of date."""
    return index_now * (1 + growth) ** (month / 12)


def renewal_rent(
    policy: str,
    rent: float,
    index_now: float | None,
    index_then: float | None,
    indexed: Callable[[float], float] | None,
    h: float = 1.0,
) -> float:
    """The rent per GPU-hour of a renewal: the one rule the cash flow and the hedge share. `rent` is today's rent at
    the renewal's contract factor (`contract_factor`, the plan's rule: the k-th renewal from renewal_step ** k).

    basis (default): a fixed-price offer keeps its basis to the index, so it renews at that rent
    moved by h x the index change (h = 1 in the cash flow; hedging passes its hedge ratio); a kind
    priced off the index keeps its link (`indexed`: its rent at an index level, the kind's `index_rent`;
    index-linked: its spread, floor and cap). index: a fixed-price offer renews at the raw
    index. escalate: that rent, whatever the index does.
    """
    if policy == "escalate":
        return rent
    if index_then is None or index_now is None:
        return rent  # no index: nothing to reprice against
    if indexed is not None:
        return indexed(index_then)
    if policy == "index":
        return index_then
    return rent + h * (index_then - index_now)


def billed_for(record, tasks: float) -> float:  # type: ignore[no-untyped-def]
    """The GPUs a month whose demand is `tasks` bills: the cost model's demand fit (step 11) at that month's demand,
    min(max(needed, committed), most available), needed = tasks / (capacity x 730)."""
    capacity = record.metrics.get("capacity_per_gpu_hour")
    if not capacity:
        return record.metrics.get("billed_gpus") or 0.0
    needed = tasks / (capacity * HOURS_PER_MONTH)
    committed = kind_named(record.pricing_basis).committed(record.terms)
    most = float(record.max_gpus) if record.max_gpus else math.inf
    return min(max(needed, committed), most)


def service_months(  # type: ignore[no-untyped-def]
    record, horizon: int, config: HorizonConfig, as_of: date, demand: Sequence[float] | None = None
) -> list[tuple[int, float, str, int]]:
    """(month, GPUs, phase, contract month) for months 1..horizon: nothing before delivery, the ramp
    from delivery, then every GPU the month's demand bills (`demand`: tasks in months 1..horizon, the workspace's
    expected demand; None: the GPUs today's demand fit bills, every month); the term counts from delivery."""
    terms = record.terms
    start = delivery_month(terms.delivery, as_of, config.expected_delay_weeks)
    flat = record.metrics.get("billed_gpus") or 0.0
    ramp = terms.contract.ramp.gpus_by_month if terms.contract.ramp else None
    found = []
    for month in range(1, horizon + 1):
        k = month - start + 1
        if month < start:
            found.append((month, 0.0, "before delivery", k))
            continue
        target = flat if demand is None else billed_for(record, demand[month - 1])
        gpus = float(min(target, ramp[k - 1])) if ramp is not None and k - 1 < len(ramp) else float(target)
        after = (
            "replacement" if kind_named(record.pricing_basis).month_rule == "equipment" else "renewal"
        )  # owned equipment past its life is replaced
        found.append((month, gpus, "term" if k <= record.term_months else after, k))
    return found


def expected_credit_share(sla: float, expected: float, rate_per_point: float, cap: float, cv: float) -> float:
    """The expected SLA credit as a share of the month's fee, from a distribution of monthly availability.

    Monthly downtime U = 1 - availability is Gamma-distributed with mean 1 - expected and coefficient
    of variation cv (shape k = 1 / cv^2): most months run close to the SLA, a few badly. The credit
    is min(cap, rate_per_point x 100 x (U - (1 - sla))+), whose expectation is
    R x (E[(U - s)+] - E[(U - s - cap / R)+]) with E[(U - t)+] = m Q(k + 1, t / theta) - t Q(k, t / theta)
    (Q the regularized upper incomplete gamma function). Credits follow from the bad months, not
    from the mean alone: a mean exactly at the SLA still earns some.
    """
    mean = 1.0 - expected
    if mean <= 0 or rate_per_point <= 0 or cap <= 0:
        return 0.0
    from scipy.special import gammaincc

    shape = 1.0 / (cv * cv)
    theta = mean / shape
    slope = rate_per_point * 100  # credit share per unit of downtime

    def excess(t: float) -> float:  # E[(U - t)+]
        if t <= 0:
            return mean - t
        return mean * float(gammaincc(shape + 1, t / theta)) - t * float(gammaincc(shape, t / theta))

    threshold = max(0.0, 1.0 - sla)
    return slope * (excess(threshold) - excess(threshold + cap / slope))


def remaining_balance(capital: float, rate: float, life_years: float, years_used: float) -> float:
    """What owned equipment is still worth after `years_used` of its life: the remaining balance of the
    annuity that the capital recovery factor charges, C x ((1 + r)^n - (1 + r)^t) / ((1 + r)^n - 1)."""
    if years_used >= life_years:
        return 0.0
    if years_used <= 0:
        return capital
    if rate == 0:
        return capital * (1 - years_used / life_years)
    grow_n, grow_t = (1 + rate) ** life_years, (1 + rate) ** years_used
    return capital * (grow_n - grow_t) / (grow_n - 1)


@dataclass
class _Offer:
    """One offer on the horizon's calendar: its delivery month, term, ramp and prepaid share, and the rent it
    pays today, which every month of the schedule, the prepayment and the commitment price from alike."""

    record: Any
    config: HorizonConfig
    fx: float
    index_level: float | None
    start: int
    term: int
    ramp: list[int] | None
    prepay: float
    indexed: Callable[[float], float] | None  # the kind's rent at an index level (None: a price not linked to it)
    rent_now: float

    def index_at(self, month: int) -> float | None:
        """The index level the horizon assumes in `month` (None without an index)."""
        return index_in(self.index_level, self.config.index_growth, month) if self.index_level is not None else None

    def rent_in(self, contract_month: int) -> float:
        """The rent per GPU-hour in a contract month (1 = delivery)."""
        contract, indexed, term = self.record.terms.contract, self.indexed, self.term
        month = self.start + contract_month - 1
        if contract_month <= term:
            factor = escalation(contract.escalator, contract.escalator_schedule, contract_month)
            if indexed is not None and self.index_level is not None:
                return indexed(self.index_at(month)) * factor  # type: ignore[arg-type]
            return self.rent_now * factor
        return renewal_rent(
            self.config.renewal,
            self.rent_now * contract_factor(contract, term, contract_month),
            self.index_level,
            self.index_at(month),
            indexed,
        )


def _offer_on_calendar(
    record, config: HorizonConfig, as_of: date, fx: float, index_level: float | None, price_shift: float
) -> _Offer:  # type: ignore[no-untyped-def]
    """Where the offer's months fall and what it charges today: delivery after the expected delay, the prepaid
    share (none for owned or per-token offers), and today's rent moved by `price_shift` (an index-linked
    offer's spread instead), so that the price to tie can move the list price and nothing else."""
    terms = record.terms
    pricing = terms.pricing
    prepay = pricing.prepay_fraction if kind_named(record.pricing_basis).rented else 0.0
    rule = kind_named(record.pricing_basis).index_rent
    indexed = None if rule is None else partial(rule, pricing, fx=fx, shift=price_shift)
    rent_now = (record.metrics.get("rent_today", record.metrics.get("rent")) or 0.0) + (
        price_shift * (1 - pricing.discount) if indexed is None else 0.0
    )
    if indexed is not None and index_level is not None:
        rent_now = indexed(index_level)
    return _Offer(
        record=record,
        config=config,
        fx=fx,
        index_level=index_level,
        start=delivery_month(terms.delivery, as_of, config.expected_delay_weeks),
        term=record.term_months,
        ramp=terms.contract.ramp.gpus_by_month if terms.contract.ramp else None,
        prepay=prepay,
        indexed=indexed,
        rent_now=rent_now,
    )


class _Charges(NamedTuple):
    """The offer's charges besides rent, in the workspace currency: fees by kind, software, the buyer's staff."""

    once: float
    fixed_fees: float
    monthly_fees: float
    usage_fee: float
    software: float
    staff_month: float


def _charges(record, fx: float, fte_cost_year: float) -> _Charges:  # type: ignore[no-untyped-def]
    """One-off fees are paid at signing; fixed monthly and per-TB fees every month; per-GPU-hour fees on the hours
    used; software per GPU-hour and the buyer's operating staff (FTEs x a year's cost / 12) every month."""
    fees = record.terms.pricing.fees
    m = record.metrics
    once = sum(f.once for f in fees if f.once is not None) * fx
    fixed_fees = sum(f.monthly for f in fees if f.monthly is not None) * fx
    monthly_fees = fixed_fees + sum(f.per_tb * (f.tb_per_month or 0) for f in fees if f.per_tb is not None) * fx
    usage_fee = sum(f.gpu_hour for f in fees if f.gpu_hour is not None) * fx
    return _Charges(
        once,
        fixed_fees,
        monthly_fees,
        usage_fee,
        m.get("software") or 0.0,
        (m.get("ops_fte") or 0.0) * fte_cost_year / 12,
    )


def _sla_credit_share(record, config: HorizonConfig, notes: list[str]) -> float:  # type: ignore[no-untyped-def]
    """The expected SLA credit as a share of the month's rent, from a distribution of monthly availability around
    the expected one; credits the buyer must claim count at horizon.claim_success of their value."""
    contract = record.terms.contract
    sla = record.terms.service.sla
    credit_share = 0.0
    if contract.sla_credits and sla is not None and record.metrics.get("availability") is not None:
        credit_share = expected_credit_share(
            sla.availability,
            record.metrics["availability"],
            contract.sla_credits.rate_per_point,
            contract.sla_credits.cap,
            config.downtime_cv,
        )
        automatic = (
            contract.sla_credits.automatic if contract.sla_credits.automatic is not None else sla.automatic_credits
        )
        if not automatic and credit_share > 0:
            credit_share *= config.claim_success
            notes.append(f"SLA credits must be claimed: counted at {config.claim_success:.0%} of their expected value")
    return credit_share


class _Equipment(NamedTuple):
    """Owned equipment on the horizon: capital paid at signing and again at each replacement, running cost per GPU
    a month, and the value left at the horizon. All zero for an offer that is not owned."""

    capital: float
    running: float
    replacements: set[int]
    residual: float


def _owned_equipment(
    record, horizon: int, start: int, fx: float, cost_of_capital: float, notes: list[str]
) -> _Equipment:  # type: ignore[no-untyped-def]
    """Equipment past its life is replaced like for like (at today's capex), as the capital recovery factor of the
    snapshot assumes: a horizon longer than the life never serves on free hardware. What is left at the horizon
    is the remaining balance of the annuity, credited in the last month."""
    bought = kind_named(record.pricing_basis).equipment
    if bought is None:
        return _Equipment(0.0, 0.0, set(), 0.0)
    owned = bought(record.terms, fx)
    replacements: set[int] = set()
    capital, running, life_months = owned.capital, owned.running_per_gpu_month, owned.life_months
    latest = start
    while latest + life_months <= horizon:
        latest += life_months
        replacements.add(latest)
    if replacements:
        notes.append(
            f"owned equipment is replaced at the end of its {owned.life_years:g}-year life, at today's capex "
            f"({capital:,.0f}), in month " + ", ".join(str(m) for m in sorted(replacements))
        )
    years_used = max(0, horizon - latest + 1) / 12
    residual = remaining_balance(capital, cost_of_capital, owned.life_years, years_used)
    if residual:
        notes.append(
            f"owned equipment keeps {residual:,.0f} of value at the horizon (the remaining balance of its "
            f"{owned.life_years:g}-year annuity "
            f"at {cost_of_capital:.0%} after {years_used * 12:g} months from "
            f"{'delivery' if latest == start else 'its replacement'}), credited in the last month"
        )
    return _Equipment(capital, running, replacements, residual)


def _prepayment(offer: _Offer) -> dict[int, float]:
    """The prepayment drawn in each contract month: the prepaid share of that month's rent on the billed GPUs,
    with the ramp and the escalator; their sum is paid at signing."""
    drawn: dict[int, float] = {}
    if offer.prepay:
        ramp = offer.ramp
        target = offer.record.metrics.get("billed_gpus") or 0.0
        for k in range(1, offer.term + 1):
            gpus_k = float(min(target, ramp[k - 1])) if ramp is not None and k - 1 < len(ramp) else float(target)
            drawn[k] = offer.prepay * offer.rent_in(k) * gpus_k * HOURS_PER_MONTH
    return drawn


def _token_month(flow: MonthFlow, offer: _Offer, charges: _Charges, k: int, tasks_per_month: float | None) -> None:
    """The token charges (rent_per_task: what the tokens of a successful task cost) escalate; the fees and the
    buyer's staff are their own columns, as for a GPU-hour offer (the one-off fee is paid at signing, not spread
    over the tasks as the snapshot's cost per task does)."""
    record, contract = offer.record, offer.record.terms.contract
    factor = contract_factor(contract, offer.term, k)
    # rent_per_task is the term's average (the snapshot ranks on it): today's charge is it over the average factor
    today = (record.metrics.get("rent_per_task") or 0.0) / (term_average_rent(1.0, contract, offer.term) or 1.0)
    flow.rent = today * (tasks_per_month or 0.0) * factor
    flow.fees = charges.monthly_fees
    flow.staff = charges.staff_month
    flow.successful_tasks = tasks_per_month or 0.0


def _equipment_month(flow: MonthFlow, charges: _Charges, equipment: _Equipment) -> None:
    """Owned equipment's running costs (power and colocation), the buyer's staff and software."""
    flow.power_colo = equipment.running * flow.gpus
    flow.staff = charges.staff_month
    hours = flow.gpus * HOURS_PER_MONTH
    flow.software = charges.software * hours


def _rent_month(flow: MonthFlow, offer: _Offer, charges: _Charges, credit_share: float, k: int) -> None:
    """Rent on the billed GPU-hours (net of the prepaid share in the term), fees topped up to a minimum monthly
    bill, staff, software and the expected SLA credits (counted only with horizon.count_sla_credits)."""
    contract, fx = offer.record.terms.contract, offer.fx
    hours = flow.gpus * HOURS_PER_MONTH
    rent = offer.rent_in(k) * hours
    flow.rent = rent * (1 - offer.prepay) if flow.phase == "term" else rent
    flow.fees = charges.monthly_fees + charges.usage_fee * hours
    if contract.minimum_monthly is not None and flow.phase == "term":
        flow.fees += max(0.0, contract.minimum_monthly * fx - (rent + flow.fees))
    flow.staff = charges.staff_month
    flow.software = charges.software * hours
    flow.sla_credits = -credit_share * rent if credit_share else 0.0  # never a negative zero
    if offer.config.count_sla_credits:
        flow.credits = flow.sla_credits


def _price_month(
    flow: MonthFlow,
    offer: _Offer,
    charges: _Charges,
    equipment: _Equipment,
    credit_share: float,
    k: int,
    tasks_per_month: float | None,
) -> None:
    """A served month's costs by the offer kind's month rule (`Kind.month_rule`): the token charges on the tasks,
    owned equipment's running costs, or rent."""
    rule = kind_named(offer.record.pricing_basis).month_rule
    if rule == "tokens":
        _token_month(flow, offer, charges, k, tasks_per_month)
    elif rule == "equipment":
        _equipment_month(flow, charges, equipment)
    else:
        _rent_month(flow, offer, charges, credit_share, k)


def _month_flows(
    offer: _Offer,
    charges: _Charges,
    equipment: _Equipment,
    credit_share: float,
    drawn: dict[int, float],
    horizon: int,
    as_of: date,
    demand: Sequence[float] | None,
    vendor_default_rate: float,
) -> list[MonthFlow]:
    """Months 1..horizon: each month's costs, the expected loss on the prepayment not yet earned, the successful
    tasks, the late-delivery credit in the month of delivery, and replacement, exit and residual value."""
    record, config, fx, start = offer.record, offer.config, offer.fx, offer.start
    contract = record.terms.contract
    # successful tasks per GPU-hour at full use, at which a GPU-hour's cost per task is its expected one (the harmonic
    # mean of the draws), so that the horizon's cost per task is an expected figure as the headline is
    capacity = record.metrics.get("costed_capacity_per_gpu_hour") or record.metrics.get("capacity_per_gpu_hour")
    unearned = sum(drawn.values())
    flows = []
    for month, gpus, phase, k in service_months(record, horizon, config, as_of, demand):
        flow = MonthFlow(month=month, gpus=gpus, phase=phase, index_level=offer.index_at(month))
        hours = gpus * HOURS_PER_MONTH
        tasks_per_month = demand[month - 1] if demand is not None else None
        if month >= start:
            _price_month(flow, offer, charges, equipment, credit_share, k, tasks_per_month)
        # The prepayment not yet earned is lost if the vendor fails: the expected loss is the monthly
        # default probability x the balance outstanding at mid-month.
        if unearned > 0:
            used = drawn.get(k, 0.0) if month >= start else 0.0
            flow.prepay_risk = vendor_default_rate / 12 * (unearned - used / 2)
            unearned = max(0.0, unearned - used)
        if kind_named(record.pricing_basis).month_rule != "tokens" and capacity and month >= start:
            delivered = capacity * hours
            flow.successful_tasks = min(delivered, tasks_per_month) if tasks_per_month is not None else delivered
        if (
            month == start
            and contract.late_delivery
            and config.expected_delay_weeks
            and record.terms.delivery is not None
        ):
            late = contract.late_delivery.per_week * config.expected_delay_weeks * fx
            if contract.late_delivery.cap is not None:
                late = min(late, contract.late_delivery.cap * fx)
            flow.credits -= late
        if month in equipment.replacements:
            flow.capital += equipment.capital
        if month == horizon:
            if contract.exit:
                flow.exit = (contract.exit.offboarding + contract.exit.egress_tb * contract.exit.egress_per_tb) * fx
            flow.capital -= equipment.residual
        flows.append(flow)
    return flows


def _committed_payments(offer: _Offer, charges: _Charges, last: int) -> float:
    """The term's rent on the committed GPUs (limited by the ramp), net of the prepayment, the
    per-GPU-hour surcharges on those hours (billed whether used or not) and the fixed monthly fees,
    topped up to a minimum monthly bill; per-TB fees depend on use and bind nothing."""
    contract, ramp = offer.record.terms.contract, offer.ramp
    committed = kind_named(offer.record.pricing_basis).committed(offer.record.terms)
    paid = 0.0
    for k in range(1, min(offer.term, last) + 1):
        available = committed if ramp is None or k > len(ramp) else min(committed, float(ramp[k - 1]))
        hours = available * HOURS_PER_MONTH
        rent = offer.rent_in(k) * hours
        fees = charges.fixed_fees + charges.usage_fee * hours
        if contract.minimum_monthly is not None:
            fees += max(0.0, contract.minimum_monthly * offer.fx - (rent + fees))
        paid += rent * (1 - offer.prepay) + fees
    return paid


def _commitment(offer: _Offer, charges: _Charges, months: list[MonthFlow], total_prepay: float) -> float:
    """What signing binds the buyer to pay: owned equipment's capital; else the prepayment, one-off fees and the
    term's committed payments, or less when a termination clause lets the buyer leave after its notice for a fee."""
    record = offer.record
    if kind_named(record.pricing_basis).month_rule == "equipment":
        return months[0].capital
    termination = record.terms.contract.termination
    commitment = total_prepay + charges.once + _committed_payments(offer, charges, offer.term)
    if termination is not None:
        commitment = min(
            commitment,
            total_prepay
            + charges.once
            + _committed_payments(offer, charges, termination.notice_months)
            + termination.fee * offer.fx,
        )
    return commitment


def schedule(
    record,  # type: ignore[no-untyped-def]
    horizon: int,
    config: HorizonConfig,
    as_of: date,
    fx: float,
    index_level: float | None,
    cost_of_capital: float,
    fte_cost_year: float,
    demand: Sequence[float] | None,
    vendor_default_rate: float = 0.0,
    price_shift: float = 0.0,
) -> HorizonResult:
    """The monthly cash flow of one evaluated offer (an OfferRecord) over `horizon` months, `demand` the tasks wanted
    in months 1..horizon (procure.model.demand.expected_demand; None: every billed GPU is used).

    `price_shift` moves the list price per GPU-hour (workspace currency; an index-linked offer's
    spread) for the price to tie."""
    notes: list[str] = []
    offer = _offer_on_calendar(record, config, as_of, fx, index_level, price_shift)
    charges = _charges(record, fx, fte_cost_year)
    credit_share = _sla_credit_share(record, config, notes)
    equipment = _owned_equipment(record, horizon, offer.start, fx, cost_of_capital, notes)
    signing = MonthFlow(month=0, gpus=0.0, phase="signing", index_level=index_level)
    if kind_named(record.pricing_basis).equipment is not None:
        signing.capital = equipment.capital
    drawn = _prepayment(offer)
    total_prepay = 0.0
    if offer.prepay:
        total_prepay = sum(drawn.values())
        signing.prepayment = total_prepay
    signing.fees = charges.once
    months = [
        signing,
        *_month_flows(offer, charges, equipment, credit_share, drawn, horizon, as_of, demand, vendor_default_rate),
    ]
    for flow in months:
        flow.total = flow.row_total()
    sla_total, risk_total = horizon_notes(offer, months, horizon, vendor_default_rate, notes)
    npv_cost = sum(f.total / (1 + cost_of_capital) ** (f.month / 12) for f in months)
    npv_tasks = sum(f.successful_tasks / (1 + cost_of_capital) ** (f.month / 12) for f in months)
    commitment = _commitment(offer, charges, months, total_prepay)
    total_cost = sum(f.total for f in months)
    if total_cost < commitment - 0.5:
        notes.append(below_commitment(offer, total_cost, commitment, horizon, months, equipment.residual))
    return HorizonResult(
        horizon_months=horizon,
        renewal=config.renewal,
        renewal_rule=RENEWAL_RULES[config.renewal],
        total_commitment=commitment,
        total_cost=total_cost,
        npv_cost=npv_cost,
        npv_tasks=npv_tasks,
        horizon_cost_per_task=npv_cost / npv_tasks if npv_tasks > 0 else None,
        sla_credits_expected=sla_total,
        sla_credits_counted=config.count_sla_credits,
        prepay_risk=risk_total,
        residual_value=equipment.residual,
        delivery_month=offer.start,
        months=months,
        notes=notes,
    )


def horizon_price_to_tie(record, target: float, solve: Callable[[float], float | None]) -> float | None:  # type: ignore[no-untyped-def]
    """The list price per GPU-hour at which the offer's horizon cost per task equals `target`.

    `solve(shift)` returns the horizon cost per task with the list price moved by `shift`. PV cost is
    linear in the price (PV tasks do not move), so two points give the answer; a kink (a minimum
    monthly bill, an index floor or cap) is handled by bisection. Owned and per-token offers have no
    rental price to negotiate: None.
    """
    if not kind_named(record.pricing_basis).rented:
        return None
    list_price = record.metrics.get("list_price")
    base, probe = solve(0.0), solve(-1.0)
    if list_price is None or base is None or probe is None:
        return None
    slope = base - probe
    if slope <= 0:
        return None  # the price does not move the figure (a floor or cap binds throughout)
    shift = (target - base) / slope
    found = solve(shift)
    tolerance = 1e-9 * max(abs(target), 1e-12)
    if found is not None and abs(found - target) <= tolerance:
        return list_price + shift
    low, high = min(0.0, shift) - 1.0, max(0.0, shift) + 1.0
    f_low, f_high = solve(low), solve(high)
    for _ in range(60):  # widen the bracket until it holds the target
        if f_low is not None and f_high is not None and f_low <= target <= f_high:
            break
        low, high = low * 2, high * 2
        f_low, f_high = solve(low), solve(high)
    else:
        return None
    if f_low is None or f_high is None or not f_low <= target <= f_high:
        return None
    for _ in range(100):
        mid = (low + high) / 2
        value = solve(mid)
        if value is None:
            return None
        if value < target:
            low = mid
        else:
            high = mid
    return list_price + (low + high) / 2
