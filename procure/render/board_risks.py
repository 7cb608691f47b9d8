"""The board memo's risk register and hedge ask, for the recommended offer or for the plan: each risk's
likelihood and priced impact from procure/analysis/memo.py (OfferRisks, PlanRisks, HedgeSums), here in words."""

from __future__ import annotations

from procure.analysis.evaluate import Evaluation
from procure.analysis.hedging import HedgePlan
from procure.analysis.memo import (
    LIKELIHOODS,
    REPLACE_MONTHS,
    HedgeSums,
    OfferRisks,
    PlanRisks,
    VendorRisks,
)
from procure.analysis.memo_document import (
    HedgeAsk,
    Risk,
)
from procure.analysis.plan import PlanResult
from procure.analysis.record import OfferRecord
from procure.model.units import per_thousand
from procure.render.board_words import (
    with_words,
)
from procure.render.formats import cash, clip, month_range, prose_count, whole_millions


def offer_risks(
    record: OfferRecord, ev: Evaluation, f: OfferRisks, hedge: HedgePlan | None, runner: OfferRecord | None
) -> list[Risk]:
    """The register when one offer is the recommendation: its impacts are procure.analysis.memo's OfferRisks."""
    return _vendor_risks(record, f, runner, ev.currency) + _market_risks(record, ev, f, hedge)


def _vendor_risks(record: OfferRecord, f: OfferRisks, runner: OfferRecord | None, cur: str) -> list[Risk]:
    """The recommended vendor's own risks: late delivery, failure during the term, and the whole workload with it."""
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
    return risks


def _market_risks(record: OfferRecord, ev: Evaluation, f: OfferRisks, hedge: HedgePlan | None) -> list[Risk]:
    """The risks of what the recommended offer meets: availability below the expected, the market's prices, demand
    falling, throughput below a vendor's claim."""
    stated = ev.workload.tasks_per_month
    risks = []
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


def hedge_ask(hedge: HedgePlan | None, sums: HedgeSums | None, missing: str) -> HedgeAsk:
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


def plan_risks(plan: PlanResult, ev: Evaluation, f: PlanRisks, hedge_asked: bool) -> list[Risk]:
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


def _priced(shortfall: float | None, price: float | None, cur: str) -> str:
    """The price unserved tasks are counted at, when the shortfall is priced."""
    if price is not None and shortfall:
        return f" at {per_thousand(price):,.2f} {cur} per 1,000 (the shortfall)"
    return ", not priced (plan.unserved_penalty_per_task)"


def _unserved_words(tasks: float, share: float, shortfall: float, price: float | None, cur: str) -> str:
    """The demand a risk leaves unserved and its shortfall, apart from the cash."""
    return f"{share:.0%} of demand ({whole_millions(tasks)} tasks) unserved{_priced(shortfall, price, cur)}"


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
        basis += f"; {whole_millions(v.late_shortfall_tasks)} tasks unserved per month late{priced}"
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
            f"; {with_words(rest)} on demand already in the plan"
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
            + ("; the rest unserved (the shortfall)" if f.availability_shortfall is not None else ""),
            shortfall=f.availability_shortfall,
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
        claimed = with_words(f.claimed)
        risks.append(
            Risk(
                risk=f"Throughput below the vendor's claim ({claimed})",
                likelihood="medium",
                impact=st.claims_low_end,
                impact_basis=f"cash over {months} months at the low end of the claim (×{st.claims_factor:g}), the lost "
                "tasks bought on demand"
                + ("; the rest unserved (the shortfall)" if f.claims_shortfall is not None else ""),
                shortfall=f.claims_shortfall,
                mitigation="acceptance test on our workload before the commitment starts",
                owner="Head of infrastructure",
            )
        )
    return risks


def _floating_words(sums: HedgeSums) -> str:
    """What moves with the market in the plan, naming only what it holds."""
    parts = []
    if sums.linked:
        parts.append(f"the commitments whose price follows the market index ({with_words(sums.linked)})")
    if sums.later:
        parts.append(f"the later decisions, priced at the market when they are made ({with_words(sums.later)})")
    if sums.on_demand_hours > 0:
        parts.append("the capacity bought on demand")
    fixed = "" if sums.linked else "The commitments signed now are at fixed prices; "
    what = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + (parts[-1] if parts else "nothing")
    return f"{fixed}{'w' if fixed else 'W'}hat moves with the market is {what}: "


def plan_hedge_ask(plan: PlanResult, sums: HedgeSums, hedge: HedgePlan | None, missing: str) -> HedgeAsk:
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
