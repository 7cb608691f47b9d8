"""Every offer over one horizon: the cash flow of each with the workspace's assumptions and the demand the plan is
solved over (procure/analysis/cashflow.py's schedule, model/demand.py's expected_demand), and the bridge before a late
delivery; the part of an evaluation that a horizon adds."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from pydantic import BaseModel, Field

from procure.analysis.cashflow import HorizonResult
from procure.analysis.record import OfferRecord
from procure.io.workspace import IndexLevel, Workspace
from procure.model.inputs import Offer, WorkspaceConfig


class HorizonDemand(BaseModel):
    """The demand the horizon's cash flows count (procure/model/demand.py's expected_demand): the plan's with
    `demand:`, else today's stated demand every month."""

    first_month: float = Field(description="tasks wanted in month 1")
    growth: float = Field(description="growth a month")
    source: str = Field(description="demand (the plan's expected demand) or workload.tasks_per_month")


def horizon_schedule(
    workspace: Workspace,
    day: date,
    index_level: IndexLevel | None,
    horizon: int | None,
    demand: list[float] | None,
) -> Callable[..., HorizonResult]:
    """The cash flow of one offer over the horizon with the workspace's assumptions and `demand` (the tasks each
    month wants: model/demand.py's expected_demand), its list price moved by `shift` (what the price to tie solves
    for)."""
    from procure.analysis.cashflow import schedule

    config = workspace.config

    def plan_of(record: OfferRecord, shift: float = 0.0) -> HorizonResult:
        return schedule(
            record,
            horizon,
            config.horizon,
            day,
            workspace.fx_rate(record.currency),
            index_level.price if index_level else None,  # type: ignore[arg-type]
            config.assumptions.cost_of_capital,
            config.assumptions.fte_cost_year,
            demand,
            config.assumptions.vendor_default_rate,
            shift,
        )

    return plan_of


def over_horizon(
    records: list[OfferRecord],
    horizon: int,
    plan_of: Callable[..., HorizonResult],
    workspace: Workspace,
    offers: list[Offer],
    index_level: IndexLevel | None,
    demand: list[float] | None,
) -> None:
    """Each offer's cash flow and horizon metrics; an offer with no successful task within the horizon is not
    acceptable. The months before a late delivery are bridged by the cheapest offer delivered in month 1."""
    from procure.analysis.cashflow import bridge_horizons

    for record in records:
        plan = plan_of(record)
        record.cashflow = plan
        record.metrics.update(
            total_commitment=plan.total_commitment,
            total_cost=plan.total_cost,
            npv_cost=plan.npv_cost,
            horizon_cost_per_task=plan.horizon_cost_per_task,
        )
        if record.acceptable and plan.horizon_cost_per_task is None:
            record.acceptable = False
            record.reasons.append(f"no successful task within the {horizon}-month horizon")
    config = workspace.config
    if config.plan.unserved_penalty_per_task is not None:
        penalty, basis = float(config.plan.unserved_penalty_per_task), "plan.unserved_penalty_per_task"
    else:
        from procure.analysis.unserved import market_unserved_price

        found = market_unserved_price(config, offers, [r.metrics for r in records], index_level)
        penalty, basis = found.per_task, found.basis
    bridge_horizons(records, demand, penalty, basis, config.currency)


def horizon_demand(config: WorkspaceConfig, wanted: list[float] | None) -> HorizonDemand | None:
    """What `evaluation.horizon_demand` names: the first month's tasks and the growth the cash flows count."""
    if not wanted:
        return None
    stated = config.demand is not None
    return HorizonDemand(
        first_month=wanted[0],
        growth=config.demand.growth if stated else 0.0,
        source="demand" if stated else "workload.tasks_per_month",
    )
