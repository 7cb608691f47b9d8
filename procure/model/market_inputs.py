"""procure.yaml's market sections: the market's competitor and own price points (`market`), the hedge (`hedge`:
the futures ladder, the contract and the basis prior) and the market index (`index`: its strata and readings)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import (
    Field,
    StringConstraints,
)

from procure.model.fields import Count, Fraction, Number, Positive, Strict
from procure.model.input_types import (
    Text,
)


class CompetitorPoint(Strict):
    name: Text
    cost_per_task: Positive
    date: date
    figure: Literal["cost", "price"] = Field(
        "cost",
        description="cost: what serving a task costs the competitor (an estimate of its own cost); price: what it "
        "charges its customers per task (public pricing)",
    )


class OwnPoint(Strict):
    cost_per_task: Positive
    date: date


class MarketConfig(Strict):
    competitors: list[CompetitorPoint] = Field(
        default_factory=list, description="competitors' cost per successful task, by date"
    )
    own: list[OwnPoint] = Field(default_factory=list, description="our own cost per successful task, by date")


class LadderBucket(Strict):
    """Hedge `share` of the exposure in months first_month..last_month after the as-of date."""

    first_month: Annotated[Count, Field(ge=1)]
    last_month: Annotated[Count, Field(ge=1)]
    share: Fraction


class FuturesContract(Strict):
    """The futures contract a hedge is built of. The defaults are CME's B200 GPU-hour futures on Silicon Data's index:
    announced 2026-05-12, reported (CNBC, 2026-08-11: secondary) to list from 2026-10-05, cash-settled on Silicon
    Data's rental indices, "each contract represents one month's rent" of a GPU. The size in GPU-hours, the tick and
    the final-settlement averaging were not found published: the 730 GPU-hours (one GPU for a 730-hour month) is an
    inference, unconfirmed until `confirmed` lists gpu_hours."""

    venue: Text = Field("CME Group", description="the exchange that lists the contract")
    index: Text = Field("Silicon Data SDB200RT (B200 rental index)", description="the index the contract settles on")
    settlement: Literal["cash", "physical"] = Field("cash", description="how the contract settles")
    gpu_hours: Positive | None = Field(
        None, description="GPU-hours per contract; default hedge.contract_gpu_hours (730)"
    )
    confirmed: list[Literal["venue", "index", "settlement", "gpu_hours"]] = Field(
        default_factory=lambda: ["venue", "index", "settlement"],
        description="the terms checked against the exchange's published contract specification; every other term is "
        "labelled unverified in every output",
    )


class BasisPrior(Strict):
    """The basis assumed without a rent history: rent changes with `volatility_ratio` x the index's volatility and
    correlation `correlation` with it. Default 0.928, Hull's cross-hedge example (Options, Futures, and Other
    Derivatives, ch. 3: jet fuel hedged with heating oil futures, rho 0.928), the same volatility as the index."""

    correlation: Annotated[Number, Field(ge=-1, le=1)] = Field(
        0.928, description="assumed correlation of rent changes with index changes"
    )
    volatility_ratio: Annotated[Number, Field(gt=0, le=10)] = Field(
        1.0, description="assumed volatility of rent changes over the index's"
    )


class HedgeConfig(Strict):
    horizon_months: Annotated[Count, Field(ge=1, le=120)] = 12
    period: Literal["week", "month"] = Field(
        "month", description="the period over which rent and index changes are aligned"
    )
    contract_gpu_hours: Positive = Field(
        730,
        description="GPU-hours per futures contract (one GPU for a 730-hour month); hedge.contract.gpu_hours replaces "
        "it",
    )
    contract: FuturesContract = Field(
        default_factory=FuturesContract,
        description="the futures contract: venue, settlement index, settlement, size, and which terms are confirmed",
    )
    basis_prior: BasisPrior = Field(
        default_factory=BasisPrior, description="the basis assumed without a rent history (never 0)"
    )
    # Layered ladder, a common procurement practice: hedge most of the near months, less further out.
    ladder: list[LadderBucket] = Field(
        default_factory=lambda: [
            LadderBucket(first_month=1, last_month=3, share=0.75),
            LadderBucket(first_month=4, last_month=6, share=0.50),
            LadderBucket(first_month=7, last_month=12, share=0.25),
        ]
    )
    offer: str | None = Field(None, description="the offer to hedge; default: the top-ranked acceptable one")
    forward: Positive | None = Field(
        None, description="the futures price per GPU-hour at which hedges are bought; default: today's index level"
    )

    @property
    def contract_size(self) -> float:
        """GPU-hours per contract: hedge.contract.gpu_hours, else hedge.contract_gpu_hours."""
        return self.contract.gpu_hours if self.contract.gpu_hours is not None else self.contract_gpu_hours


class StratumWeight(Strict):
    """The fixed weight of one stratum (term bucket x kind x grade) of the rental price benchmark."""

    term: Literal["0-3", "4-12", "13-36", "37+"]
    kind: Literal["advertised", "transacted"]
    grade: Annotated[str, StringConstraints(min_length=1, max_length=40)]
    weight: Positive


class IndexReading(Strict):
    """A level entered by hand or read from an external series, spliced into the built index in its period."""

    date: date
    level: Annotated[Positive, Field(le=10_000)]
    source: Text = Field(description="where the reading comes from, e.g. 'Silicon Data SDB200RT, entered by hand'")


class IndexConfig(Strict):
    scope_gpus: Annotated[Count, Field(gt=0)] = Field(
        512, description="fleet size at which scope adjustment prices the buyer's operating jobs"
    )
    min_quotes: Annotated[Count, Field(ge=1, le=1000)] = Field(
        3, description="fewest quotes a stratum needs in a period to publish its own level"
    )
    seller_cap: Annotated[Number, Field(gt=0, le=1)] = Field(
        0.5, description="most weight one seller carries within a stratum and period"
    )
    weights: Annotated[list[StratumWeight], Field(min_length=1)] | None = Field(
        None, description="fixed stratum weights; default: each stratum's share of the quotes in the base period"
    )
    base_period: date | None = Field(
        None,
        description="the period (any day in it) whose quotes fix the stratum weights when index.weights is absent; "
        "default: the first period",
    )
    readings: list[IndexReading] = Field(
        default_factory=list,
        description="external or hand-entered levels spliced into the built index, each shown with its level jump",
    )
    strata: list[Literal["term", "kind", "grade"]] = Field(
        default_factory=lambda: ["term", "kind", "grade"],
        description="the dimensions of the strata; [] pools every quote (the mix then moves the level)",
    )
