"""The board memo as a document: the models render/board.py fills with words and the template lays out. Decided
here, in the analysis layer, so that render holds words and formats only (tests/test_architecture.py)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from procure.analysis.memo import AgainstToday
from procure.analysis.scenarios import ScenarioRow


class TermSheet(BaseModel):
    vendor: str
    offer: str
    gpus: int | None = Field(description="GPUs committed; null for per-token offers")
    nodes: int | None = Field(description="8-GPU nodes committed")
    term_months: int
    price: str = Field(description="the price as contracted, in words and figures")
    escalator: str
    total_commitment: float | None
    cash_at_signing: float | None = Field(description="prepayment and one-off fees due in month 0")
    delivery: date | None
    exit_terms: str


class PlanTerm(BaseModel):
    """One line of the portfolio's term sheet, as the board reads it: vendor, capacity, months, price, money bound."""

    vendor: str
    role: str = Field(description="'commit' or 'pay as used'")
    gpus: int | None = Field(
        description="commit: GPUs committed; pay as used: the most GPUs used in any scenario-month"
    )
    nodes: int | None
    months: str = Field(description="'1–12' for a commitment; 'as needed' for on-demand capacity")
    price: str
    total_commitment: float | None = Field(
        description="what signing binds us to pay (procure.analysis.decision.line_commitments); none for pay-as-used"
    )


class PlanAsk(BaseModel):
    lines: list[PlanTerm]
    total_commitment: float
    expected_per_task: float | None
    single_vendor: str | None = Field(description="the best single offer's vendor")
    single_per_task: float | None
    saving_share: float | None = Field(description="share below the best single offer")
    statement: str = Field(description="the saving against the best single offer, or why a single offer is the plan")


class OptionRow(BaseModel):
    offer: str
    vendor: str
    rank: int
    price_basis: str
    evidence: str = Field(description="where the throughput comes from: measured, vendor claim, reference curve")
    operator: str = Field(description="operator tier and where it comes from")
    commitment: float | None
    snapshot_per_task: float | None
    horizon_per_task: float | None
    pros: str
    cons: str
    scenarios_per_task: float | None = Field(
        None, description="expected cost over the plan's demand scenarios (the plan's lines, or the offer alone)"
    )


class PlanCaseRow(BaseModel):
    """One line of the plan's scenario table: the plan's fixed portfolio under a demand case."""

    name: str
    probability: float
    cost_per_task: float | None
    monthly_spend: float
    unused_monthly: float = Field(description="money paid for idle committed capacity, a month on average")
    pay_as_used_share: float
    unserved_share: float
    cheapest_single: str | None = Field(
        description="the cheapest single offer in the matching re-evaluation at today's volume, if any"
    )


class Risk(BaseModel):
    risk: str
    likelihood: str
    impact: float | None = Field(description="cash at stake, workspace currency")
    impact_basis: str = Field(description="how the impact is computed")
    shortfall: float | None = Field(
        None,
        description="demand it leaves unserved, at the plan's unserved price: apart from the cash, never added to it",
    )
    mitigation: str
    owner: str


class HedgeAsk(BaseModel):
    ask: bool
    question: str
    detail: str


class VendorAsk(BaseModel):
    """One vendor of the ask: its one commitment figure and its lines (GPUs, months, price)."""

    vendor: str
    commitment: float | None = Field(description="what signing binds us to pay this vendor (the recommendation's rule)")
    lines: list[str]


class BoardMemo(BaseModel):
    currency: str
    offer: str | None
    headline: str
    terms: TermSheet | None
    today: AgainstToday | None
    options: list[OptionRow]
    near_tie: str | None
    rejected: str | None = Field(None, description="the offers not acceptable at any price, in the board's words")
    scenarios: list[ScenarioRow]
    scenario_note: str
    risks: list[Risk]
    hedge: HedgeAsk
    glossary: list[str]
    plan: PlanAsk | None = None
    plan_option: OptionRow | None = Field(None, description="the plan as the first row of the options")
    plan_cases: list[PlanCaseRow] = Field(default_factory=list)
    plan_note: str = ""
    ask: list[VendorAsk] = Field(
        default_factory=list, description="what the board is asked to sign, one entry per vendor"
    )
    cost_words: list[str] = Field(
        default_factory=list,
        description="the spend over the horizon and a year, against today and the best single offer",
    )
    deadline: date | None = Field(None, description="the earliest valid_until of the offers asked for")
    deadline_words: str | None = None
    options_more: int = Field(
        0, description="acceptable offers left out of the options table (the comparison report lists them)"
    )
    plan_failed: str | None = Field(
        None, description="why the plan could not be solved; the single offer is then the fallback"
    )
    signed: list[str] = Field(
        default_factory=list, description="one line per signed vendor: what it delivered against its promise (actuals/)"
    )
    holding: list[str] = Field(
        default_factory=list,
        description="what we hold, what we ask for on top, and what is decided later (the plan's fields)",
    )
    plan_terms: list[list[str]] = Field(
        default_factory=list,
        description="the plan's term sheet, one row per contract signed now: vendor, GPUs, start, end, price and "
        "escalator, SLA and credits, exit, offer expiry",
    )
    knife_edge: str | None = Field(
        None, description="the leader's acceptance hangs on a margin under one standard deviation of its own inputs"
    )
