"""Contract terms and cash flow over one horizon.

A per-GPU-hour snapshot hides what a board signs: a 36-month commitment with a prepayment and an
escalator is not comparable to a 6-month deal at the same hourly rate. Each offer becomes a monthly
schedule over the horizon (month 0 is signing): prepayment and its draw-down, rent with escalation,
fees by kind, the buyer's operating staff, software, expected SLA credits, a late-delivery credit,
renewal after the term (an explicit assumption), and exit costs in the last month. From it: what the
contract binds the buyer to pay, the total and present-value cost, and the present value of cost per
present value of successful tasks.
"""

from __future__ import annotations

import math
from datetime import date, timedelta

from pydantic import BaseModel, Field

from procure.costing import HOURS_PER_MONTH, index_linked_rent
from procure.models import HorizonConfig

DAYS_PER_MONTH = 365.25 / 12


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
    credits: float = Field(0.0, description="expected SLA and late-delivery credits (negative)")
    exit: float = 0.0
    total: float = 0.0
    successful_tasks: float = 0.0
    phase: str = Field("", description="before delivery, term, renewal")


class HorizonResult(BaseModel):
    horizon_months: int
    renewal: str
    total_commitment: float = Field(description="what the contract binds the buyer to pay")
    total_cost: float
    npv_cost: float
    npv_tasks: float
    horizon_cost_per_task: float | None = Field(description="present value of costs / present value of successful tasks")
    delivery_month: int
    months: list[MonthFlow]
    notes: list[str]


def escalation(terms_escalator: float | None, schedule: list[tuple[int, float]] | None, contract_month: int) -> float:
    """The price factor in a contract month (1 = the offered price)."""
    factor = 1.0
    if terms_escalator:
        factor *= (1 + terms_escalator) ** ((contract_month - 1) // 12)
    for start, rise in schedule or []:
        if contract_month >= start:
            factor *= 1 + rise
    return factor


def delivery_month(promised: date | None, as_of: date, delay_weeks: float) -> int:
    """The first month (1-based after as-of) in which the GPUs are delivered."""
    if promised is None:
        return 1
    actual = promised + timedelta(weeks=delay_weeks)
    return 1 + max(0, math.floor((actual - as_of).days / DAYS_PER_MONTH))


def schedule(record, horizon: int, config: HorizonConfig, as_of: date, fx: float, index_level: float | None, cost_of_capital: float, fte_cost_year: float, tasks_per_month: float | None) -> HorizonResult:  # type: ignore[no-untyped-def]
    """The monthly cash flow of one evaluated offer (an OfferRecord) over `horizon` months."""
    terms = record.terms
    contract = terms.contract
    m = record.metrics
    notes: list[str] = []
    start = delivery_month(terms.delivery, as_of, config.expected_delay_weeks)
    term = record.term_months
    months = [MonthFlow(month=0, gpus=0.0, phase="signing")]
    capacity = m.get("capacity_per_gpu_hour")  # successful tasks per GPU-hour at full use
    target = m.get("billed_gpus") or 0.0
    ramp = contract.ramp.gpus_by_month if contract.ramp else None
    pricing = terms.pricing
    prepay = pricing.prepay_fraction if record.pricing_basis not in ("owned", "per_token") else 0.0

    def gpus_in(month: int) -> float:
        if month < start:
            return 0.0
        k = month - start
        return float(min(target, ramp[k])) if ramp is not None and k < len(ramp) else target

    def rent_in(contract_month: int) -> float:
        rent = m.get("rent") or 0.0
        if contract_month <= term:
            return rent * escalation(contract.escalator, contract.escalator_schedule, contract_month)
        if config.renewal == "escalate":
            return rent * escalation(contract.escalator, contract.escalator_schedule, contract_month)
        # Renewal at the market: the index on or before as-of plus the offer's spread (a fixed-price
        # offer has none: it renews at the index itself).
        if index_level is None:
            return rent
        linked = pricing.index_linked
        if linked is None:
            return index_level  # a fixed-price offer renews at the market: the index itself
        return index_linked_rent(index_level, linked.spread, linked.floor, linked.cap, fx, pricing.discount)

    once = sum(f.once for f in pricing.fees if f.once is not None) * fx
    monthly_fees = (sum(f.monthly for f in pricing.fees if f.monthly is not None) + sum(f.per_tb * (f.tb_per_month or 0) for f in pricing.fees if f.per_tb is not None)) * fx
    usage_fee = sum(f.gpu_hour for f in pricing.fees if f.gpu_hour is not None) * fx
    software = m.get("software") or 0.0
    staff_month = (m.get("ops_fte") or 0.0) * fte_cost_year / 12

    # Expected SLA credits: a share of the month's rent per point of availability below the SLA.
    credit_share = 0.0
    sla = terms.service.sla
    if contract.sla_credits and sla is not None and m.get("availability") is not None:
        shortfall_points = max(0.0, sla.availability - m["availability"]) * 100
        credit_share = min(contract.sla_credits.cap, contract.sla_credits.rate_per_point * shortfall_points)
        automatic = contract.sla_credits.automatic if contract.sla_credits.automatic is not None else sla.automatic_credits
        if not automatic and credit_share > 0:
            credit_share *= config.claim_success
            notes.append(f"SLA credits must be claimed: counted at {config.claim_success:.0%} of their expected value")

    owned = pricing.owned
    if record.pricing_basis == "owned" and owned is not None:
        capital = owned.capex_per_gpu * fx * (terms.gpus or 0)
        months[0].capital = capital
        running = (owned.power_kw_per_gpu * owned.pue * owned.electricity_kwh * HOURS_PER_MONTH + owned.colo_kw_month * owned.power_kw_per_gpu) * fx
        life_months = owned.life_years * 12
        residual = capital * max(0.0, 1 - horizon / life_months)
        if residual:
            notes.append(f"owned equipment keeps {residual:,.0f} of value at the horizon (straight line over {owned.life_years:g} years), credited in the last month")
    else:
        running = 0.0
        residual = 0.0

    total_prepay = 0.0
    if prepay:
        total_prepay = prepay * sum(rent_in(k) * gpus_in(start + k - 1) * HOURS_PER_MONTH for k in range(1, term + 1))
        months[0].prepayment = total_prepay
    months[0].fees = once
    # A per-token offer's cost per task already spreads its one-off fees over the term's tasks: take
    # them out of the monthly figure, since they are paid at signing.
    once_per_task = once / max(1, term) / tasks_per_month if (record.pricing_basis == "per_token" and tasks_per_month) else 0.0

    for month in range(1, horizon + 1):
        gpus = gpus_in(month)
        k = month - start + 1
        phase = "before delivery" if month < start else ("term" if k <= term else "renewal")
        flow = MonthFlow(month=month, gpus=gpus, phase=phase)
        hours = gpus * HOURS_PER_MONTH
        if record.pricing_basis == "per_token":
            factor = escalation(contract.escalator, contract.escalator_schedule, max(1, k)) if month >= start else 0.0
            flow.rent = ((m.get("cost_per_task") or 0.0) - once_per_task) * (tasks_per_month or 0.0) * factor
            flow.successful_tasks = (tasks_per_month or 0.0) if month >= start else 0.0
        elif record.pricing_basis == "owned":
            if month >= start:
                flow.power_colo = running * gpus
                flow.staff = staff_month
                flow.software = software * hours
        elif month >= start:
            rent = rent_in(k) * hours
            flow.rent = rent * (1 - prepay) if phase == "term" else rent
            flow.fees = monthly_fees + usage_fee * hours
            if contract.minimum_monthly is not None and phase == "term":
                flow.fees += max(0.0, contract.minimum_monthly * fx - (rent + flow.fees))
            flow.staff = staff_month
            flow.software = software * hours
            flow.credits = -credit_share * rent
        if record.pricing_basis != "per_token" and capacity and month >= start:
            delivered = capacity * hours
            flow.successful_tasks = min(delivered, tasks_per_month) if tasks_per_month is not None else delivered
        if month == start and contract.late_delivery and config.expected_delay_weeks and terms.delivery is not None:
            late = contract.late_delivery.per_week * config.expected_delay_weeks * fx
            if contract.late_delivery.cap is not None:
                late = min(late, contract.late_delivery.cap * fx)
            flow.credits -= late
        if month == horizon:
            if contract.exit:
                flow.exit = (contract.exit.offboarding + contract.exit.egress_tb * contract.exit.egress_per_tb) * fx
            flow.capital -= residual
        months.append(flow)
    for flow in months:
        flow.total = flow.prepayment + flow.rent + flow.fees + flow.staff + flow.software + flow.power_colo + flow.capital + flow.credits + flow.exit

    if start > 1:
        notes.append(f"delivered in month {start}: nothing to serve before")
    if horizon > start - 1 + term and record.pricing_basis not in ("owned", "per_token"):
        basis = "the index on or before the as-of date plus the offer's spread" if config.renewal == "index" else "the last price plus the escalator"
        notes.append(f"after its {term}-month term the offer renews at {basis}")

    def pv(value: float, month: int) -> float:
        return value / (1 + cost_of_capital) ** (month / 12)

    npv_cost = sum(pv(f.total, f.month) for f in months)
    npv_tasks = sum(pv(f.successful_tasks, f.month) for f in months)
    def committed_payments(last: int) -> float:
        """The term's rent on the committed GPUs (limited by the ramp), net of the prepayment, and its fixed fees."""
        committed = float(terms.gpus or 0)
        paid = 0.0
        for k in range(1, min(term, last) + 1):
            available = committed if ramp is None or k > len(ramp) else min(committed, float(ramp[k - 1]))
            paid += rent_in(k) * available * HOURS_PER_MONTH * (1 - prepay) + monthly_fees
        return paid

    if record.pricing_basis == "owned":
        commitment = months[0].capital
    else:
        commitment = total_prepay + once + committed_payments(term)
        if contract.termination is not None:
            commitment = min(commitment, total_prepay + once + committed_payments(contract.termination.notice_months) + contract.termination.fee * fx)
    return HorizonResult(
        horizon_months=horizon,
        renewal=config.renewal,
        total_commitment=commitment,
        total_cost=sum(f.total for f in months),
        npv_cost=npv_cost,
        npv_tasks=npv_tasks,
        horizon_cost_per_task=npv_cost / npv_tasks if npv_tasks > 0 else None,
        delivery_month=start,
        months=months,
        notes=notes,
    )
