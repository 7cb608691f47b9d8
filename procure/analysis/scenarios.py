"""What-if cases for the reports: the whole evaluation re-run with one input changed.

Demand at -50%, -30%, as stated and +30%; the index level -20% and +20%; vendor throughput claims
at the low end of their range (procure.yaml uncertainty.throughput.vendor_claim). Each case is a full
re-evaluation ranked as the base was, so a flip of the cheapest offer shows exactly as the ranking
would show it. The board paper's scenario table and the comparison's football field read them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import Field

from procure.analysis.evaluate import Evaluation, evaluate
from procure.io.workspace import Workspace
from procure.model.kinds import kind_named
from procure.model.units import PerThousand

DEMAND_CASES = ((-0.5, "Demand −50%"), (-0.3, "Demand −30%"), (0.0, "Demand as stated"), (0.3, "Demand +30%"))
INDEX_CASES = ((-0.2, "Index −20%"), (0.2, "Index +20%"))
BASE = "Demand as stated"


@dataclass
class Case:
    name: str
    evaluation: Evaluation


class ScenarioRow(PerThousand):
    name: str
    cheapest: str | None = Field(description="vendor of the cheapest acceptable offer in this case")
    flips: bool = Field(description="the cheapest offer differs from the recommendation")
    rank: int | None = Field(description="the recommendation's rank in this case (null: not acceptable)")
    reason: str | None = Field(description="why the recommendation is not acceptable in this case")
    cost_per_task: float | None
    monthly_spend: float | None
    unused_monthly: float | None = Field(description="committed but idle capacity, money a month: spend x (1 - fill)")


class FieldBar(PerThousand):
    """One offer on the football field: its figures as evaluated and across the cases."""

    PER_TASK = ("p10", "p90")  # costs per task, each with its figure per 1,000 tasks in JSON

    offer: str
    vendor: str
    snapshot: float | None
    horizon: float | None
    low: float | None = Field(description="lowest cost per task across the cases (the ranking's figure)")
    high: float | None
    p10: float | None
    p90: float | None
    low_case: str | None
    high_case: str | None


def _demand_workspace(ws: Workspace, change: float) -> Workspace:
    workload = ws.config.workload
    tasks = workload.tasks_per_month * (1 + change) if workload.tasks_per_month else None
    return replace(
        ws, config=ws.config.model_copy(update={"workload": workload.model_copy(update={"tasks_per_month": tasks})})
    )


def _index_workspace(ws: Workspace, change: float) -> Workspace:
    return replace(ws, index=[replace(level, price=level.price * (1 + change)) for level in ws.index])


def claim_low_end(ws: Workspace) -> float:
    """The low end of the vendor-claim throughput factor (procure.yaml uncertainty.throughput)."""
    spec = ws.config.uncertainty.throughput.get("vendor_claim")
    return spec.bounds[0] if spec is not None else 1.0


def _claims_workspace(ws: Workspace, factor: float) -> Workspace:
    offers = []
    for offer in ws.offers:
        perf = offer.performance
        if perf.points and perf.points_source == "vendor_claim":
            points = [(p[0], p[1] * factor, *p[2:]) for p in perf.points]
            offer = offer.model_copy(update={"performance": perf.model_copy(update={"points": points})})
        offers.append(offer)
    return replace(ws, offers=offers)


def _scenario_row(name: str, ev: Evaluation, offer_id: str) -> ScenarioRow:
    record = ev.offer(offer_id)
    cheapest = ev.ranked[0] if ev.ranked else None
    m = record.metrics
    spend = m.get("monthly_spend")
    fill = m.get("fill")
    unused = spend * (1 - fill) if spend is not None and fill is not None else (0.0 if spend is not None else None)
    return ScenarioRow(
        name=name,
        cheapest=cheapest.vendor if cheapest else None,
        flips=bool(cheapest and cheapest.id != offer_id),
        rank=record.rank,
        reason=None if record.acceptable else "; ".join(record.reasons[:1]),
        cost_per_task=m.get(ev.rank_by),
        monthly_spend=spend,
        unused_monthly=unused,
    )


def cases(ws: Workspace, ev: Evaluation) -> list[Case]:
    """The recommendation under changed inputs, each case a full re-evaluation ranked as `ev` was."""
    horizon = ev.horizon_months
    by_horizon = ev.rank_by == "horizon_cost_per_task"

    def run(changed: Workspace) -> Evaluation:
        return evaluate(changed, ev.as_of, None, horizon, by_horizon)

    found = []
    if ws.config.workload.tasks_per_month:
        for change, name in DEMAND_CASES:
            found.append(Case(name, ev if change == 0 else run(_demand_workspace(ws, change))))
    else:
        found.append(Case("As evaluated (no demand stated)", ev))
    if ws.index and (any(kind_named(o.pricing_basis).index_rent is not None for o in ev.offers) or horizon):
        for change, name in INDEX_CASES:
            found.append(Case(name, run(_index_workspace(ws, change))))
    factor = claim_low_end(ws)
    if factor < 1 and any(o.points_source == "vendor_claim" for o in ev.offers):
        found.append(
            Case(f"Vendor throughput claims at their low end (×{factor:g})", run(_claims_workspace(ws, factor)))
        )
    return found


def scenario_rows(found: list[Case], offer_id: str) -> list[ScenarioRow]:
    return [_scenario_row(case.name, case.evaluation, offer_id) for case in found]


def football_field(ev: Evaluation, found: list[Case], top: int = 6) -> list[FieldBar]:
    """The top offers' cost per task as evaluated, over the horizon, and its range across the cases."""
    bars = []
    key = ev.rank_by
    for record in ev.ranked[:top]:
        values = [(case.evaluation.offer(record.id).metrics.get(key), case.name) for case in found]
        values = [(v, n) for v, n in values if v is not None]
        low = min(values, default=None)
        high = max(values, default=None)
        u = record.uncertainty
        bars.append(
            FieldBar(
                offer=record.id,
                vendor=record.vendor,
                snapshot=record.metrics.get("cost_per_task"),
                horizon=record.metrics.get("horizon_cost_per_task"),
                low=low[0] if low else None,
                high=high[0] if high else None,
                p10=u.p10 if u else None,
                p90=u.p90 if u else None,
                low_case=low[1] if low else None,
                high_case=high[1] if high else None,
            )
        )
    return bars
