"""Now, later and held (docs/plan.md, "What we sign now, what we decide later, what we hold"): each commitment of the
plan as a contract to sign now (its offer valid today and its start within the decision window), a later decision
(an intention to re-plan, priced at the expected price then), or a contract already held; the term sheet of what is
signed now; and the cash the plan pays apart from the price of the demand it leaves unserved."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import date, timedelta

import numpy as np

from procure.analysis.plan.candidates import Candidate, Unit
from procure.analysis.plan.dispatch import Outcome
from procure.analysis.plan.figures import Figures
from procure.analysis.plan.result import HeldContract, PlanLine, TermSheetRow
from procure.model.calendar import day_of_share, month_index, term_end
from procure.model.costing import HOURS_PER_MONTH
from procure.model.inputs import Offer
from procure.model.kinds import kind_of


def block_dates(cand: Candidate, unit: Unit, offer: Offer, as_of: date, delay_weeks: float) -> tuple[date, date]:
    """A block's first and last day on the plan's calendar (procure.model.calendar): from the day its share of its
    first month begins (the delivery, plus the expected delay, for the first block; the day after a held term for its
    renewal), for N calendar months."""
    first = max(as_of, day_of_share(as_of, unit.first, unit.first_share))
    if unit.first == cand.start and unit.renewal == 0 and offer.delivery is not None:
        first = max(first, offer.delivery + timedelta(weeks=delay_weeks))
    return first, term_end(first, unit.commit.term_months)


def sign_by(offer: Offer, start: date, renews_held: bool, as_of: date) -> date:
    """The last day a contract can be signed and still start on `start`: the offer's own lead time before it (its
    delivery date less the day it was received), the day before for a renewal of what we hold (the GPUs are already
    running), never after the offer expires; today when that day is past."""
    lead = 1
    if not renews_held and offer.delivery is not None and offer.received is not None:
        lead = max(1, (offer.delivery - offer.received).days)
    return max(as_of, min(offer.valid_until, start - timedelta(days=lead)))


def escalator_text(offer: Offer) -> str:
    c = offer.contract
    parts = []
    if c.escalator:
        parts.append(f"{c.escalator:+.1%} a contract year")
    for start, rise in c.escalator_schedule or []:
        parts.append(f"{rise:+.1%} from contract month {start}")
    kind = kind_of(offer.pricing)
    if kind.index_rent is not None:  # its price follows the index by contract: the term's escalation is the index's
        parts.append(kind.label)
    return ", ".join(parts) or "none stated"


def credits_text(offer: Offer) -> str:
    """SLA credits as the offer states them: rate or tiers, cap, and whether they are paid automatically or on claim
    (no offer field states a claim window; the text says so when credits are on claim)."""
    credits = offer.contract.sla_credits
    if credits is None:
        return "none stated"
    how = []
    if credits.rate_per_point:
        how.append(f"{credits.rate_per_point:.0%} of the month's fee per point below the SLA")
    for tier in credits.tiers:
        how.append(f"{tier.credit:.0%} below {tier.below:.2%}")
    automatic = (
        credits.automatic
        if credits.automatic is not None
        else offer.service.sla.automatic_credits
        if offer.service.sla
        else False
    )
    paid = "paid automatically" if automatic else "on claim (claim window not stated)"
    return f"{'; '.join(how) or 'credits'}; cap {credits.cap:.0%} of the month's fee; {paid}"


def exit_text(offer: Offer, currency: str) -> str:
    c = offer.contract
    parts = []
    if c.termination is not None:
        parts.append(
            f"termination on {c.termination.notice_months} months' notice, fee {c.termination.fee:,.0f} "
            f"{offer.pricing.currency}"
        )
    elif offer.usage_billed:
        parts.append("billed for the hours used: nothing is owed for capacity not used")
    else:
        parts.append("no termination for convenience stated: the whole term is owed")
    if c.exit is not None and (c.exit.offboarding or c.exit.egress_tb):
        fee = c.exit.offboarding + c.exit.egress_tb * c.exit.egress_per_tb
        parts.append(f"exit costs {fee:,.0f} {offer.pricing.currency}")
    return "; ".join(parts)


def decisions(
    cands: list[Candidate],
    units: list[Unit],
    nodes: np.ndarray,
    lines: list[PlanLine],
    offers: dict[str, Offer],
    as_of: date,
    delay_weeks: float,
    currency: str,
    sigma: float | None = None,
) -> tuple[list[TermSheetRow], list[HeldContract]]:
    """Mark each commit line sign-now, later or held (in the order `plan_lines` wrote them), and write the term sheet
    of what is signed now and the contracts held."""
    sheet: list[TermSheetRow] = []
    held: list[HeldContract] = []
    chosen = [(u, int(n)) for u, n in zip(units, nodes) if n > 0]
    commit_lines = [line for line in lines if line.role == "commit"]
    for (u, n), line in zip(chosen, commit_lines):
        cand = cands[u.commit.offer]
        offer = offers[cand.id]
        gpus = n * u.commit.node_gpus
        line.expected_price = u.commit.price * (u.commit.renewal_step**u.renewal) * u.market
        line.renewal = u.renewal
        if u.held:
            tranche = next(
                c
                for c in offer.contract.signed or []
                if c.gpus == gpus and max(0, month_index(as_of, c.start) - 1) == u.first
            )
            line.decision, line.start_date, line.end_date = "held", tranche.start, tranche.end
            held.append(
                HeldContract(
                    offer=cand.id,
                    vendor=cand.vendor,
                    gpus=gpus,
                    signed=tranche.date,
                    start=tranche.start,
                    end=tranche.end,
                    months_in_plan=u.last - u.first + 1,
                    monthly_cost=n * u.cost_node_month + cand.fixed_monthly,
                    cost_in_horizon=(n * u.cost_node_month + cand.fixed_monthly) * u.charged_months(last=u.last),
                    exit=exit_text(offer, currency),
                )
            )
            continue
        start, end = block_dates(cand, u, offer, as_of, delay_weeks)
        line.start_date, line.end_date = start, end
        line.decision = "later" if u.later else "sign_now"
        if u.later:
            line.price_p10, line.price_p90 = price_band(line.expected_price, u.first, sigma)
            continue
        sheet.append(
            TermSheetRow(
                offer=cand.id,
                vendor=cand.vendor,
                gpus=gpus,
                start=start,
                end=end,
                term_months=u.commit.term_months,
                option=u.commit.option,
                price=u.commit.price,
                price_unit="gpu_hour",
                escalator=escalator_text(offer),
                sla=offer.service.sla.availability if offer.service.sla is not None else None,
                credits=credits_text(offer),
                exit=exit_text(offer, currency),
                offer_expires=offer.valid_until,
                sign_by=sign_by(
                    offer, start, any(c.end + timedelta(days=1) == start for c in offer.contract.signed or []), as_of
                ),
                rent=n * u.commit.node_gpus * HOURS_PER_MONTH * u.commit.price * u.commit.term_months,
            )
        )
    return sheet, held


P90_Z = 1.2815515655446004  # the standard normal's 90th percentile

# The fewest monthly index changes a price band rests on: a year of them, the same minimum as the hedge ratio's
# (procure.analysis.hedging.MIN_CHANGES: fewer than 12 aligned changes is insufficient history). Under it the memo and
# the plan's notes say "too little price history for a band" instead of figures.
MIN_BAND_CHANGES = 12
TOO_LITTLE_HISTORY = "too little price history for a band"

# The median absolute deviation scaled to a normal standard deviation: 1 / Phi^-1(3/4) = 1.4826 (Hampel 1974;
# Rousseeuw and Croux, "Alternatives to the Median Absolute Deviation", JASA 88(424), 1993). One outlier month among
# a year of changes moves it little, where it can double the sample standard deviation.
MAD_TO_SIGMA = 1.4826
# When more than half the changes are equal (an index that rarely moves) the MAD is 0; the mean absolute deviation from
# the median, scaled by sqrt(pi / 2) = 1.2533 to a normal standard deviation, then measures the moves there are.
MEAN_AD_TO_SIGMA = 1.2533


def robust_sigma(changes: Sequence[float]) -> float:
    """An outlier-robust standard deviation of `changes`: 1.4826 x the median absolute deviation from their median;
    1.2533 x the mean absolute deviation from the median when the MAD is 0 (over half the changes equal)."""
    # statistics.median, not numpy's: np.median imports numpy.ma, which a plan read back from the solve cache avoids
    values = [float(x) for x in changes]
    middle = statistics.median(values)
    deviations = [abs(x - middle) for x in values]
    mad = statistics.median(deviations)
    return MAD_TO_SIGMA * mad if mad > 0 else MEAN_AD_TO_SIGMA * statistics.fmean(deviations)


def monthly_log_changes(levels: list[tuple[date, float]], as_of: date) -> np.ndarray:
    """The index's monthly log changes: each calendar month's last level, up to the as-of date."""
    last: dict[tuple[int, int], float] = {}
    for day, price in sorted(levels):
        if day <= as_of and price > 0:
            last[(day.year, day.month)] = price
    prices = [last[k] for k in sorted(last)]
    return np.diff(np.log(prices)) if len(prices) > 1 else np.zeros(0)


def index_monthly_volatility(levels: list[tuple[date, float]], as_of: date) -> tuple[float | None, int]:
    """The robust standard deviation of the index's monthly log changes (`robust_sigma`: 1.4826 x their MAD), and how
    many changes it rests on; None with fewer than MIN_BAND_CHANGES (12). The index's own history is the scenario set
    a later decision's price is drawn from: a lognormal random walk, its spread growing with the square root of the
    months to the decision."""
    changes = monthly_log_changes(levels, as_of)
    return (robust_sigma(changes), len(changes)) if len(changes) >= MIN_BAND_CHANGES else (None, len(changes))


def price_band(expected: float, months: int, sigma: float | None) -> tuple[float | None, float | None]:
    """P10 and P90 of a later decision's price: `expected` x exp(-/+ z90 sigma sqrt(months)) (median at the expected
    price: the band is the index's spread, not a drift)."""
    if sigma is None:
        return None, None
    spread = P90_Z * sigma * months**0.5
    return expected * float(np.exp(-spread)), expected * float(np.exp(spread))


def served_statement(fig: Figures, scenario_unserved: list[tuple[str, float]], currency: str) -> str:
    """The one sentence on whether demand is served, from the figures: "every scenario served" only when no scenario
    row leaves a task unserved (to the share's rounding, 0.05%); else the share and the shortfall's price."""
    worst = max(scenario_unserved, key=lambda kv: kv[1], default=("", 0.0))
    if fig.unserved_tasks <= 0 or worst[1] < 0.0005:
        return "Every scenario is served in full."
    share = f"{fig.unserved:.1%}" if fig.unserved >= 0.001 else f"{fig.unserved:.2%}"
    return (
        f"{share} of the expected demand is left unserved ({fig.unserved_tasks:,.0f} tasks over the horizon; up to "
        f"{worst[1]:.1%} in the "
        f"{worst[0]} scenarios), priced apart from the cash at {fig.shortfall:,.0f} {currency}"
    ) + "."


def remedies(
    cands: list[Candidate],
    excluded: dict[str, str],
    units: list[Unit],
    nodes: np.ndarray,
    out: Outcome,
    prob: np.ndarray,
    currency: str,
) -> list[str]:
    """What could serve the demand the plan leaves unserved, and what asking for it would cost: the offers in the plan
    at
    their most (max_gpus, burst), then offers left out (their reason: capacity, a missing field, a gate)."""
    unserved = prob @ out.unserved  # (H,) expected tasks a month
    if float(unserved.sum()) <= 0:
        return []
    month = int(np.argmax(unserved))
    tasks = float(unserved.sum())
    lines = []
    used = {u.commit.offer for u, n in zip(units, nodes) if n > 0}
    for i, cand in enumerate(cands):
        room = []
        for u, n in zip(units, nodes):
            if u.commit.offer == i and n > 0 and u.first <= month <= u.last and n < u.commit.max_nodes and not u.held:
                per_task = u.cost_node_month / u.commit.tasks_node_month if u.commit.tasks_node_month else float("nan")
                room.append(
                    f"{cand.id}: more of its commitment, up to {u.commit.max_nodes * u.commit.node_gpus:,} GPUs "
                    f"({n * u.commit.node_gpus:,} in the plan), "
                    f"at {per_task * 1000:.2f} {currency} per 1,000 tasks when used: at least {per_task * tasks:,.0f} "
                    f"{currency} for these tasks (committed GPUs are paid used or not)"
                )
        if cand.source is not None and i in used and cand.source.price_per_task == cand.source.price_per_task:
            room.append(
                f"{cand.id}: its pay-as-used capacity, full in those months at {cand.source.price_per_task * 1000:.2f} "
                f"{currency} per 1,000 tasks (capacity stops it)"
            )
        lines += room
    for oid, why in sorted(excluded.items()):
        lines.append(f"{oid}: left out ({why})")
    return [
        f"{tasks:,.0f} tasks are left unserved in expectation, most in month {month + 1}; what could serve them:"
    ] + lines[:8]
