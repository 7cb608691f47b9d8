"""What a plan reports: the pydantic models of `procure plan`'s result (its JSON, docs/plan.md "Output")."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from procure.model.inputs import PlanConfig
from procure.model.units import PerThousand

SOLVER = "HiGHS branch-and-cut through scipy.optimize.milp"


class PlanLine(BaseModel):
    offer: str
    vendor: str
    role: Literal["commit", "pay_as_used"]
    gpus: int | None = Field(
        description="commit: GPUs committed (whole nodes); pay_as_used: the most GPUs used in any scenario-month"
    )
    term_months: int | None
    price: float | None = Field(
        description="commit and burst: per GPU-hour (workspace currency); per-token: per successful task"
    )
    price_unit: Literal["gpu_hour", "task"]
    start_month: int | None = Field(None, description="commit: first month of the commitment in the plan")
    end_month: int | None = Field(None, description="commit: last month within the horizon")
    option: str | None = Field(None, description="commit: 'base' (the offer's own terms) or the commit option used")
    expected_tasks_share: float = Field(description="share of the expected served tasks")
    term_end_month: int | None = Field(
        None,
        description="commit: last month of the whole term (past the horizon when the term runs beyond it: those months "
        "are costed)",
    )
    decision: Literal["sign_now", "later", "held"] | None = Field(
        None,
        description="commit: sign_now (its offer valid today, its start within the decision window), later (an "
        "intention to re-plan, priced at the expected price then) or held (contract.signed)",
    )
    start_date: date | None = Field(
        None, description="commit: first day of service (the delivery for an offer's first block)"
    )
    end_date: date | None = Field(None, description="commit: last day of the term")
    renewal: int = Field(0, description="commit: terms of this commitment before this block (its renewals)")
    expected_price: float | None = Field(
        None,
        description="commit: the price per GPU-hour it is costed at: a renewal's escalated price, a later decision's "
        "expected market price",
    )
    price_p10: float | None = Field(
        None,
        description="later: the 10th percentile of its price, from the index's monthly moves (null: fewer than 12 "
        "monthly index changes, too little price history for a band)",
    )
    price_p90: float | None = Field(None, description="later: the 90th percentile of its price")


class TermSheetRow(BaseModel):
    """One contract to sign now, as the memo asks for it."""

    offer: str
    vendor: str
    gpus: int
    start: date
    end: date
    term_months: int
    option: str
    price: float
    price_unit: Literal["gpu_hour", "task"]
    escalator: str = Field(description="the price's escalators as the offer states them")
    sla: float | None = Field(description="the availability the SLA promises")
    credits: str = Field(description="SLA credits: rate or tiers, cap, automatic or on claim")
    exit: str = Field(description="termination for convenience and exit costs as stated")
    offer_expires: date = Field(description="valid_until: the last day it can be signed")
    sign_by: date = Field(
        description="the last day it can be signed and still start on `start`: its offer's lead time (delivery less "
        "received) before the start, the day before for a renewal of a held contract, never after the offer expires"
    )
    committed_cost: float | None = Field(
        None,
        description="what signing binds us to pay, the one commitment figure "
        "(procure.analysis.commitment.line_commitments): rent with its escalators, per-GPU-hour and monthly fees over "
        "the whole term, one-off fees, undiscounted",
    )
    rent: float = Field(description="the rent alone over the term at the signed price")


class HeldContract(BaseModel):
    """A contract already signed (contract.signed): in the plan as it stands."""

    offer: str
    vendor: str
    gpus: int
    signed: date
    start: date
    end: date
    months_in_plan: int = Field(description="plan months it serves within the horizon")
    monthly_cost: float = Field(description="its full cost a month (its GPUs and the offer's fixed fees)")
    cost_in_horizon: float = Field(
        description="its cost over the months it serves within the horizon, undiscounted: paid whatever the plan does"
    )
    exit: str = Field(description="how it could be ended, as the offer states")


class ScenarioRow(PerThousand):
    name: str
    probability: float
    demand_per_month: float = Field(description="average tasks per month")
    cost_per_task: float | None
    unused_share: float
    pay_as_used_share: float
    max_monthly_spend: float = Field(
        description="the highest month's cash (rent, fees, pay-as-used; the shortfall's price is not cash)"
    )
    unserved_share: float = Field(
        0.0, description="share of the demand left unserved (priced at the plan's unserved penalty)"
    )
    unserved_tasks: float = Field(0.0, description="expected tasks left unserved over the horizon")
    shortfall_cost: float = Field(
        0.0, description="those tasks at the unserved price, over the horizon (not cash, not in the spend)"
    )


class ShortfallMonth(BaseModel):
    """One month of the horizon: the demand the plan leaves unserved and its price, apart from the cash."""

    month: int = Field(description="1 = the first month after the as-of date")
    demand: float = Field(description="expected tasks demanded in the month")
    unserved_tasks: float = Field(description="expected tasks left unserved in the month")
    unserved_share: float = Field(description="share of the month's expected demand left unserved")
    shortfall_cost: float = Field(
        description="those tasks at the unserved price (unserved_penalty_per_task): what buying them where the market "
        "sells them costs, apart from the plan's cash"
    )
    most_unserved_tasks: float = Field(description="the most tasks any scenario leaves unserved in the month")
    beyond_offers_tasks: float = Field(
        description="expected tasks in the month beyond what every usable offer together can serve (spot within "
        "plan.max_spot_share): no plan over these offers serves them"
    )
    by_scenario: dict[str, float] = Field(
        default_factory=dict,
        description="expected unserved tasks in the month in each scenario row (low, base, high or each explicit "
        "path, and the worst 10%)",
    )


class SingleBest(PerThousand):
    offer: str | None
    expected_cost_per_task: float | None
    plan: list[PlanLine] = Field(default_factory=list)


class FrontierPoint(PerThousand):
    cvar_limit: float | None
    expected_cost_per_task: float
    cvar: float
    p90_monthly_spend: float


class SolverInfo(BaseModel):
    method: str = SOLVER
    time_limit_s: float = Field(description="the backstop in seconds (plan.time_limit_s)")
    node_limit: int | None = Field(
        None,
        description="branch-and-bound nodes a solve may explore (plan.node_limit): the limit that keeps the plan the "
        "same on any machine",
    )
    mip_gap: float = Field(description="the relative gap at which the solver may stop")
    status: str
    gap: float | None = Field(description="the gap reached (0: proven optimal)")
    bound_gap: float | None = Field(
        None, description="with a shortlist of offers: the distance from the linear relaxation's bound over every offer"
    )
    shortlist_check: str | None = Field(
        None,
        description="with a shortlist of offers: what the whole program over every offer, with the shortlist's plan as "
        "a cutoff, proved (null: every usable offer was in the program)",
    )
    variables: int
    constraints: int
    integers: int
    nonzeros: int


class DemandInfo(BaseModel):
    months: int
    start: float
    growth: float
    volatility: float | None
    scenarios: int
    seed: int | None
    sampled: bool


class PlanCase(PerThousand):
    """The plan's fixed portfolio under one demand case: committed capacity is paid whatever the demand,
    pay-as-used sources cover the rest (the same dispatch as the plan's own figures)."""

    name: str
    demand_factor: float = Field(description="factor on every demand path (1: the paths as planned)")
    probability: float = Field(
        1.0, description="share of the scenarios the case averages over (a third, the worst 10%, or all)"
    )
    demand_per_month: float = Field(description="expected tasks a month")
    cost_per_task: float | None = Field(description="present value of cash spend over present value of tasks served")
    monthly_spend: float = Field(description="expected cash spend a month, averaged over the horizon")
    total_spend: float = Field(description="expected cash spend over the horizon, undiscounted")
    unused_commitment: float = Field(
        description="expected money paid for committed capacity left idle over the horizon, undiscounted"
    )
    unused_share: float
    pay_as_used_spend: float = Field(description="expected pay-as-used spend over the horizon, undiscounted")
    pay_as_used_share: float = Field(description="share of the served tasks served pay-as-used")
    unserved_share: float = Field(description="share of the demand no source in the plan can serve")
    unserved_tasks: float = Field(0.0, description="expected tasks no source in the plan can serve, over the horizon")
    shortfall_cost: float = Field(
        0.0,
        description="those tasks at the unserved price, over the horizon, undiscounted: apart from the spend, which is "
        "cash",
    )


class VendorStress(BaseModel):
    """What losing one committed vendor costs the plan: its commitments and its pay-as-used capacity gone,
    the rest of the plan's pay-as-used sources serving what they can."""

    vendor: str
    offers: list[str]
    first_month: int = Field(description="the first month of its first commitment in the plan")
    extra_spend: float = Field(
        description="expected extra cash over the horizon, undiscounted (the shortfall's price apart: extra_shortfall)"
    )
    extra_first_month: float = Field(
        description="expected extra cash in its first committed month: the cash of a month's late delivery"
    )
    unserved_share: float = Field(description="share of the demand left unserved without it")
    extra_shortfall: float = Field(
        0.0, description="expected extra tasks left unserved over the horizon at the unserved price: not cash"
    )
    extra_shortfall_first_month: float = Field(0.0, description="the same in its first committed month")


class PlanStress(BaseModel):
    cases: list[PlanCase] = Field(
        description="demand -50%, -30%, as planned, +30%, market prices +20%, then the low, base and high thirds (or "
        "each explicit path) and the worst 10%"
    )
    vendors: list[VendorStress]
    availability_point: float = Field(
        description="expected extra cash over the horizon if every GPU-hour serves one point fewer tasks (availability "
        "one point lower)"
    )
    availability_shortfall: float = Field(
        0.0, description="the extra tasks that case leaves unserved, at the unserved price: not cash"
    )
    claims_low_end: float | None = Field(
        None,
        description="expected extra cash over the horizon with vendor-claimed throughput at the low end of its range; "
        "null: no offer in the plan relies on a claim",
    )
    claims_shortfall: float | None = Field(
        None, description="the extra tasks that case leaves unserved, at the unserved price: not cash"
    )
    claims_factor: float = Field(
        1.0, description="the low end of the vendor-claim throughput factor (uncertainty.throughput.vendor_claim)"
    )
    pay_as_used_gpu_hours: list[float] = Field(
        description="expected pay-as-used GPU-hours billed by the GPU-hour, by month"
    )
    pay_as_used_gpu_hour_rent: list[float] = Field(description="expected rent for them at the price billed, by month")
    pay_as_used_task_rent: float = Field(
        description="expected rent for per-token sources over the horizon at the price billed, undiscounted"
    )


class Bridge(BaseModel):
    """The months before one offer of the plan is delivered: what serves them and what they cost."""

    offer: str
    vendor: str
    delivery_month: int = Field(description="the first month with its capacity (1 = the first month after as-of)")
    served_by: list[str] = Field(
        description="the plan's offers that serve those months (empty: none, the demand is priced unserved)"
    )
    cost: float = Field(description="expected cash over those months, undiscounted (in the plan's figures)")
    unserved_share: float = Field(description="share of those months' demand left unserved")
    shortfall_cost: float = Field(
        0.0, description="their unserved tasks at the plan's unserved price, apart from the cash"
    )


class PlanResult(PerThousand):
    as_of: date
    currency: str
    plan: list[PlanLine]
    expected_cost_per_task: float | None
    p90_monthly_spend: float = Field(description="P90 of a month's cash over all scenario-months")
    cvar: float = Field(
        description="CVaR of a path's whole cost a month, unserved tasks at their price included (the risk the solver "
        "weighs)"
    )
    cvar_alpha: float
    expected_unused_share: float
    pay_as_used_share: float
    expected_monthly_spend: float = Field(
        description="expected cash a month: rent, fees, pay-as-used (the shortfall's price is apart: shortfall_cost)"
    )
    single_best: SingleBest
    saving_per_task: float | None = Field(description="single best minus plan, per task")
    saving_share: float | None
    scenarios: list[ScenarioRow]
    frontier: list[FrontierPoint] | None = None
    demand: DemandInfo
    policy: PlanConfig
    solver: SolverInfo
    candidates: list[str] = Field(description="offers the plan could use")
    excluded: dict[str, str] = Field(description="offers left out, with the reason")
    notes: list[str]
    single_offers: dict[str, float | None] = Field(
        default_factory=dict,
        description="each usable offer alone over the same scenarios: expected cost per task (null: it cannot serve "
        "every scenario alone)",
    )
    stress: PlanStress | None = Field(
        None,
        description="the plan's fixed portfolio under shifted demand, without each committed vendor, at lower "
        "availability",
    )
    headline: str | None = Field(
        None, description="what the buyer must know first (no offer can follow demand; much demand unserved), else null"
    )
    unserved_share: float = Field(0.0, description="expected share of the demand left unserved")
    unserved_penalty_per_task: float | None = Field(
        None, description="the price of a task left unserved the plan used (workspace currency)"
    )
    unserved_penalty_basis: str = Field(
        "",
        description="where that price comes from: plan.unserved_penalty_per_task, or the default (bought on demand at "
        "the market price: the rental index and its date, or the offer whose on-demand list price it is, x "
        "plan.unserved_premium, over the stated tasks per GPU-hour)",
    )
    band_gap: float = Field(
        0.0,
        description=(
            "the chosen plan's cost on every scenario over its cost on the demand bands the solver saw, minus 1"
        ),
    )
    bands: int = Field(0, description="demand bands (scenario groups by month) the last solve saw")
    beyond_horizon_cost: float = Field(
        0.0, description="expected money committed for term months past the horizon, undiscounted, counted in the cost"
    )
    delivery: dict[str, int] = Field(
        default_factory=dict, description="each candidate's first month with capacity (1 = the first month after as-of)"
    )
    bridge: list[str] = Field(
        default_factory=list,
        description="for each offer in the plan delivered after month 1: what serves the months before it, and their "
        "cost",
    )
    bridges: list[Bridge] = Field(
        default_factory=list, description="the same, as figures: each offer in the plan delivered after month 1"
    )
    index_monthly_volatility: float | None = Field(
        None,
        description="the robust standard deviation (1.4826 x the median absolute deviation) of the index's monthly "
        "log changes to the as-of date: the spread of a later decision's price; null under 12 changes",
    )
    index_monthly_changes: int = Field(
        0, description="how many monthly index changes index_monthly_volatility rests on (12 needed for a band)"
    )
    decide_by: date | None = Field(
        None,
        description="the end of the decision window (plan.decide_within, default the earliest expiry of the usable "
        "offers)",
    )
    term_sheet: list[TermSheetRow] = Field(
        default_factory=list, description="the contracts to sign now: the only ones the plan asks for"
    )
    held: list[HeldContract] = Field(
        default_factory=list, description="contracts already signed, in the plan as fixed inputs"
    )
    sign_by: date | None = Field(
        None,
        description="the day the contracts signed now must be signed by: the earliest of their offers' expiry and "
        "their first day of service",
    )
    sign_by_reason: str = Field("", description="what sets sign_by: an offer's expiry or a start the plan depends on")
    held_gpus: int = Field(0, description="GPUs held at the start of the plan (contract.signed)")
    ask_gpus: int = Field(0, description="GPUs the term sheet asks for (sign now)")
    later_gpus: int = Field(0, description="GPUs of the later decisions (intentions to re-plan, not asked for)")
    unserved_tasks: float = Field(0.0, description="expected tasks left unserved over the horizon")
    shortfall_cost: float = Field(
        0.0, description="those tasks at the unserved price over the horizon, undiscounted: apart from the cash figures"
    )
    shortfall_by_month: list[ShortfallMonth] = Field(
        default_factory=list,
        description="each month of the horizon: the demand left unserved, by scenario, and its price at the unserved "
        "price (apart from the cash)",
    )
    served: str = Field("", description="the one sentence on whether demand is served, written from the figures")
    unserved_remedy: list[str] = Field(
        default_factory=list,
        description="with demand left unserved: what could serve it (an offer's capacity, a missing field, a gate) and "
        "what it would cost",
    )

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"
