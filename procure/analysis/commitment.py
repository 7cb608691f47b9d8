"""What signing binds us to pay: the one commitment rule of the analysis layer (`procure.analysis.decision`
names it for the recommendation; the ask, the options table, the risk register and the plan's term sheet
read it). For an offer as offered it is the offer's own cash flow's figure (procure cashflow: the term's rent with its
escalators on the
committed GPUs, per-GPU-hour fees on those hours, fixed monthly fees, one-off fees and the prepayment;
a ramp, a minimum monthly bill and a termination clause as stated; for an owned cluster the capital).
A plan line of other GPUs or another option prices its own GPUs by the same rule: its price with the
offer's escalators x GPUs x 730 hours x the term's months, plus the per-GPU-hour fees on those hours,
the fixed monthly fees of months no earlier line of the offer pays, and the one-off fees on the
offer's first line. A held contract binds what is left of it; a later decision, pay-as-used capacity
and per-token serving bind nothing today.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from procure.model.costing import HOURS_PER_MONTH
from procure.model.kinds import kind_named, kind_of

if TYPE_CHECKING:
    from procure.analysis.plan.result import PlanResult
    from procure.analysis.record import OfferRecord


def offer_commitment(record: OfferRecord) -> float | None:
    """What signing one offer as offered binds us to pay: its cash flow's figure when the evaluation has a
    horizon, else the same rule on its committed GPUs over its term (`_bound`)."""
    found = record.metrics.get("total_commitment")
    if found is not None:
        return found
    rent = record.metrics.get("rent_today", record.metrics.get("rent"))
    kind = kind_named(record.pricing_basis)
    committed = kind.committed(record.terms)
    if rent is None or not committed or kind.per_task:
        return None
    return _bound(record, committed, record.term_months, rent, set(), True)


def _fx(record: OfferRecord) -> float:
    """Workspace currency per unit of the offer's: its list price over its own GPU-hour price, as its kind gives it to
    the cost model (1 when no such price)."""
    p = record.terms.pricing
    own = kind_of(p).cost_columns(record.terms, math.nan).get("gpu_hour", p.gpu_hour)
    listed = record.metrics.get("list_price")
    return listed / own if own and listed else 1.0


def _bound(
    record: OfferRecord,
    gpus: float,
    term: int,
    price: float,
    paid: set[int],
    first: bool,
    start: int = 1,
    escalated: bool = True,
) -> float:
    """The rule: price with the offer's escalators (when `escalated`) x GPUs x 730 x the term, per-GPU-hour fees on
    those hours, the fixed monthly fees of the months not in `paid` (then added to it), and the one-off fees when
    `first`."""
    from procure.analysis.cashflow import term_average_rent

    fees, fx = record.terms.pricing.fees, _fx(record)
    hours = gpus * HOURS_PER_MONTH * term
    rent = ((term_average_rent(price, record.terms.contract, term) if escalated else price) or 0.0) * hours
    per_hour = sum(f.gpu_hour for f in fees if f.gpu_hour is not None) * fx * hours
    months = set(range(start, start + term)) - paid
    paid |= months
    monthly = sum(f.monthly for f in fees if f.monthly is not None) * fx * len(months)
    once = sum(f.once for f in fees if f.once is not None) * fx if first else 0.0
    return rent + per_hour + monthly + once


def line_commitments(plan: PlanResult, records: dict[str, OfferRecord]) -> list[float | None]:
    """Each plan line's commitment, in the order of plan.plan: what it binds us to pay from the plan's as-of date.

    A contract signed now: the offer as offered when the line is its own terms in full, else the rule of `_bound`
    for the line's GPUs, price (a renewal's escalated price) and term. A held contract (contract.signed): what it
    still binds, its remaining months at the price the plan costs it, per-GPU-hour and monthly fees (its one-off
    fees were paid when it was signed). None for a later decision (nothing is bound today), pay-as-used capacity
    and per-token serving. The term sheet's `committed_cost`, the ask, the risk register and the memo read this."""
    paid: dict[str, set[int]] = {}
    order = sorted(range(len(plan.plan)), key=lambda i: (plan.plan[i].start_month or 0, i))
    found: dict[int, float | None] = {}
    for i in order:
        line = plan.plan[i]
        record = records[line.offer]
        if line.role != "commit" or line.price_unit != "gpu_hour" or not line.gpus or line.decision == "later":
            found[i] = None
            continue
        first = line.offer not in paid
        months = paid.setdefault(line.offer, set())
        start = line.start_month or 1
        if line.decision == "held":
            remaining = (line.term_end_month or line.end_month or start) - start + 1
            found[i] = _bound(
                record,
                line.gpus,
                remaining,
                line.expected_price or line.price or 0.0,
                months,
                False,
                start,
                escalated=False,
            )
            continue
        as_offered = (
            first
            and line.option == "base"
            and line.renewal == 0
            and line.gpus == record.gpus
            and line.term_months == record.term_months
            and record.metrics.get("total_commitment") is not None
        )
        if as_offered:
            months |= set(range(start, start + record.term_months))
            found[i] = record.metrics["total_commitment"]
        else:
            price = line.expected_price if line.renewal and line.expected_price else line.price
            found[i] = _bound(record, line.gpus, line.term_months or 0, price or 0.0, months, first, start)
    return [found[i] for i in range(len(plan.plan))]
