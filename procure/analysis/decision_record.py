"""The decision as one record: what to sign now, what we hold, what is left for later, what it costs, what it
leaves unserved, the risks and the hedge, the best single offer, the horizon and the demand it assumes.

`procure decide` writes it (JSON, `procure schema decision`); the board memo, the comparison report, `compare`,
`plan` and `hedge` state the same figures, read from the same recommendation, plan and memo figures it collects
(tests/test_one_decision.py checks each surface against it). Versioned in its envelope (`schema_version`, as every
JSON document is: render/envelope.py).
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from procure.analysis.evaluate import Evaluation
from procure.analysis.memo import HedgeSums
from procure.analysis.memo_document import HedgeAsk, Risk
from procure.analysis.plan.result import HeldContract, PlanLine, PlanResult, TermSheetRow
from procure.analysis.recommendation import Recommendation
from procure.model.inputs import WorkspaceConfig
from procure.model.units import PerThousand


class DemandAssumed(BaseModel):
    months: int = Field(description="the horizon every surface counts (demand.months)")
    start: float | None = Field(description="tasks in month 1 (demand.start, else workload.tasks_per_month)")
    growth: float | None = Field(description="expected growth a month")
    volatility: float | None = Field(description="lognormal sd of the level after 12 months")
    scenarios: int | None = Field(description="demand paths the plan is solved over")
    stated: bool = Field(description="false: procure.yaml has no demand: and the record is today's stated demand")


class CashFigures(PerThousand):
    total_spend: float | None = Field(description="expected cash over the horizon, undiscounted")
    spend_per_year: float | None
    expected_monthly_spend: float | None = Field(description="the plan's expected cash a month")
    p90_monthly_spend: float | None = Field(description="the plan's 90th percentile of a month's cash")
    commitment: float | None = Field(description="what signing the ask binds us to pay (commitment.py's rule)")
    cost_per_task: float | None = Field(description="expected cost per successful task on the recommendation's basis")


class Shortfall(PerThousand):
    unserved_tasks: float = Field(description="expected tasks left unserved over the horizon")
    unserved_share: float = Field(description="share of the expected demand left unserved")
    shortfall_cost: float = Field(description="those tasks at the unserved price: apart from the cash")
    price_per_task: float | None = Field(description="the unserved price per task")


class HedgeDecision(BaseModel):
    asked: bool = Field(description="the board is asked to approve contracts")
    contracts: int = Field(0, description="price contracts to buy")
    gpu_hours: float = Field(0.0, description="GPU-hours they hedge")
    first_month: int | None = None
    last_month: int | None = None
    question: str = Field(description="the question put to the board, or why none is")
    detail: str


class DecisionRecord(PerThousand):
    """What the buyer decides, once."""

    as_of: date
    currency: str
    decide_by: date | None = Field(description="the last day the ask can be signed and start on time")
    decide_by_reason: str
    demand: DemandAssumed
    recommendation: Recommendation = Field(description="what we buy: the plan, or the single offer")
    sign_now: list[TermSheetRow] = Field(description="the contracts to sign now, with their calendar days")
    held: list[HeldContract] = Field(description="contracts already signed, in every plan")
    later: list[PlanLine] = Field(description="intentions to re-plan: not asked for today")
    cash: CashFigures
    shortfall: Shortfall | None = Field(description="demand the plan leaves unserved (a plan only)")
    risks: list[Risk] = Field(description="the risk register: likelihood, impact and the arithmetic behind it")
    hedge: HedgeDecision


def demand_assumed(config: WorkspaceConfig, plan: PlanResult | None, months: int | None = None) -> DemandAssumed:
    """The horizon and the demand the decision assumes: the plan's, else today's stated demand over the months the
    recommendation's cash counts (`months`: the horizon, or the single offer's term where no horizon is set)."""
    if plan is not None:
        d = plan.demand
        return DemandAssumed(
            months=d.months,
            start=d.start,
            growth=d.growth,
            volatility=d.volatility,
            scenarios=d.scenarios,
            stated=config.demand is not None,
        )
    return DemandAssumed(
        months=months or config.horizon.months or 0,
        start=config.workload.tasks_per_month,
        growth=None,
        volatility=None,
        scenarios=None,
        stated=False,
    )


def decision_record(
    ev: Evaluation,
    config: WorkspaceConfig,
    rec: Recommendation,
    plan: PlanResult | None,
    risks: list[Risk],
    hedge: HedgeAsk,
    sums: HedgeSums | None,
) -> DecisionRecord:
    """The record from what the memo states: the recommendation, the plan behind it, the register and the hedge."""
    is_plan = rec.kind == "plan" and plan is not None
    return DecisionRecord(
        as_of=ev.as_of,
        currency=ev.currency,
        decide_by=rec.deadline,
        decide_by_reason=rec.deadline_reason,
        demand=demand_assumed(config, plan if is_plan else None, rec.months),
        recommendation=rec,
        sign_now=plan.term_sheet if is_plan else [],
        held=plan.held if is_plan else [],
        later=[x for x in plan.plan if x.decision == "later"] if is_plan else [],
        cash=CashFigures(
            total_spend=rec.total_spend,
            spend_per_year=rec.spend_per_year,
            expected_monthly_spend=plan.expected_monthly_spend if is_plan else None,
            p90_monthly_spend=plan.p90_monthly_spend if is_plan else None,
            commitment=rec.total_commitment,
            cost_per_task=rec.cost_per_task,
        ),
        shortfall=Shortfall(
            unserved_tasks=plan.unserved_tasks,
            unserved_share=plan.unserved_share,
            shortfall_cost=plan.shortfall_cost,
            price_per_task=plan.unserved_penalty_per_task,
        )
        if is_plan
        else None,
        risks=risks,
        hedge=HedgeDecision(
            asked=hedge.ask,
            contracts=sums.contracts if sums is not None and hedge.ask else 0,
            gpu_hours=sums.hedged if sums is not None and hedge.ask else 0.0,
            first_month=sums.first_month if sums is not None and hedge.ask else None,
            last_month=sums.last_month if sums is not None and hedge.ask else None,
            question=hedge.question,
            detail=hedge.detail,
        ),
    )
