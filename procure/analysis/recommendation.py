"""The recommendation as a document: what the buyer is asked to sign, line by line, and the words for a line.

Its own module, below the evaluation that carries it and the plan it may come from; procure.analysis.decision
computes it.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from procure.model.units import per_thousand


class AskLine(BaseModel):
    """One line of what the buyer is asked to sign: a vendor, its GPUs, the months and the price."""

    offer: str
    vendor: str
    role: Literal["commit", "pay_as_used"] = Field(
        description="commit: capacity bound for a term; pay_as_used: billed only when used"
    )
    gpus: int | None = Field(
        description="commit: GPUs committed; pay_as_used: the most GPUs used in any month; null for per-token serving"
    )
    gpus_low: int | None = Field(None, description="the fewest GPUs of the merged commitments, when they differ")
    gpus_committed: int | None = Field(
        None,
        description="the GPUs the contract commits when the demand bills more (a single offer's minimum, what "
        "`commitment` prices; the rest are billed as used); null when they are the same",
    )
    reserved: str | None = Field(
        None,
        exclude=True,
        description="a kind that reserves more GPUs than it owes (take-or-pay): both in its own words ('100 GPUs "
        "reserved, 70 owed'), and the GPUs billed when the demand bills more than is owed; words for the documents, "
        "not part of the JSON (`gpus` is what the demand bills)",
    )
    first_month: int | None = Field(description="first month of the horizon the line covers (null: as needed)")
    last_month: int | None
    term_months: int | None = Field(
        description="the months one commitment of the line runs (1 for a run of month-by-month commitments)"
    )
    commitments: int = Field(
        1, description="commitments of the plan this line merges (consecutive one-month blocks are one line)"
    )
    price: float | None = Field(description="per GPU-hour, or per successful task for per-token serving (price_unit)")
    price_unit: Literal["gpu_hour", "task"]
    commitment: float | None = Field(
        description="what signing binds us to pay (procure.analysis.decision: rent with escalators, fees bound by the "
        "term); null when nothing is bound"
    )
    valid_until: date
    conditions: list[str] = Field(
        default_factory=list,
        description="conditions of signing still to confirm (the offer's `conditions:`): the ask rests on them",
    )

    @property
    def runs_past(self) -> bool:
        """A commitment whose term runs past the months it covers here (its term is counted whole)."""
        span = (self.last_month or 0) - (self.first_month or 1) + 1
        return self.role == "commit" and bool(self.term_months) and (self.term_months or 0) > span


class BestSingle(BaseModel):
    offer: str | None
    vendor: str | None
    cost_per_task: float | None
    cost_per_1000_tasks: float | None
    basis: str = Field(
        description="what the cost is measured over: the plan's demand scenarios, or today's stated demand"
    )


class Recommendation(BaseModel):
    kind: Literal["plan", "offer", "none"] = Field(
        description="plan: the procurement plan; offer: one offer; none: nothing can be recommended"
    )
    offer: str | None = Field(description="kind offer: the offer's id")
    lines: list[AskLine]
    vendors: list[str] = Field(description="the vendors asked for, in the order of the lines")
    cost_per_task: float | None = Field(description="expected cost per successful task on the basis")
    cost_per_1000_tasks: float | None
    basis: str
    months: int | None = Field(
        description="the months the spend is counted over: the plan's horizon, else the offer's term"
    )
    total_spend: float | None = Field(description="expected spend over the months, undiscounted")
    spend_per_year: float | None = Field(description="total_spend per 12 months")
    total_commitment: float | None = Field(description="sum of the lines' commitments")
    commitment_by_vendor: dict[str, float] = Field(default_factory=dict, description="one commitment figure per vendor")
    deadline: date | None = Field(
        description="the decide-by date: the last day the ask can be signed and start on time, the earliest of the "
        "expiry (valid_until) of the offers asked for and, for a plan, the last day to sign each contract it starts "
        "(PlanResult.sign_by); every surface states this one date"
    )
    deadline_reason: str = Field("", description="what sets the deadline, in words")
    best_single: BestSingle
    saving_share: float | None = Field(
        description="share the recommendation costs below the best single offer (negative: above); null when it is the "
        "best single offer"
    )
    plan_failed: str | None = Field(
        None, description="why the plan could not be solved; the best offer is then asked for as the fallback"
    )
    usage: list[str] = Field(
        default_factory=list,
        description="plan: one line for each offer ranked first or signed that the plan uses less than it could, with "
        "what limits it",
    )
    dearer_why: str | None = Field(
        None,
        description="plan: why it costs more than the best single offer (the policy that rules that offer out), when "
        "it does",
    )
    headline: str = Field(description="the recommendation in one line, as `compare` prints it first")


def merge_lines(lines: list[AskLine]) -> list[AskLine]:
    """Consecutive one-month commitments of one offer at one price become one line: a board reads
    'months 5-9', not five lines of 'months 5-5'."""
    out: list[AskLine] = []
    for line in lines:
        prev = out[-1] if out else None
        if (
            prev is not None
            and line.role == "commit"
            and prev.role == "commit"
            and prev.offer == line.offer
            and prev.price == line.price
            and prev.term_months == 1
            and line.term_months == 1
            and prev.last_month is not None
            and line.first_month == prev.last_month + 1
        ):
            low = min(x for x in (prev.gpus_low, prev.gpus, line.gpus) if x is not None)
            high = max(x for x in (prev.gpus, line.gpus) if x is not None)
            out[-1] = prev.model_copy(
                update={
                    "last_month": line.last_month,
                    "gpus": high,
                    "gpus_low": low if low != high else None,
                    "commitments": prev.commitments + 1,
                    "commitment": (prev.commitment or 0.0) + (line.commitment or 0.0),
                }
            )
            continue
        out.append(line)
    return out


def months_words(line: AskLine) -> str:
    """'months 1–12', 'month 5', or 'any month' (on demand)."""
    if line.first_month is None:
        return "any month"
    if line.last_month is None or line.last_month == line.first_month:
        return f"month {line.first_month}"
    return f"months {line.first_month}–{line.last_month}"


def gpus_words(line: AskLine) -> str:
    """'512 GPUs', '1 GPU', '8–24 GPUs', '38 GPUs (32 committed)', 'up to 64 GPUs', 'billed per token', or a
    reservation in its kind's words: '100 GPUs reserved, 70 owed'."""
    if line.reserved is not None:
        return line.reserved
    if line.gpus is None:
        return "billed per token"
    unit = "GPU" if line.gpus == 1 and line.gpus_low is None else "GPUs"
    if line.role == "pay_as_used":
        return f"up to {line.gpus:,} {unit} on demand"
    if line.gpus_low is not None:
        return f"{line.gpus_low:,}–{line.gpus:,} {unit}"
    if line.gpus_committed is not None:
        return f"{line.gpus:,} {unit} ({line.gpus_committed:,} committed)"
    return f"{line.gpus:,} {unit}"


def price_words(line: AskLine, currency: str) -> str:
    if line.price is None:
        return "—"
    if line.price_unit == "task":
        return f"{per_thousand(line.price):,.2f} {currency} per 1,000 tasks"
    return f"{line.price:.2f} {currency} per GPU-hour"


def line_words(line: AskLine, currency: str) -> str:
    """'Keel Systems: 512 GPUs, months 1–12, 4.85 USD per GPU-hour'."""
    return f"{line.vendor}: {gpus_words(line)}, {months_words(line)}, {price_words(line, currency)}"
