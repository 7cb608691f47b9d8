"""One-at-a-time sensitivity (the tornado): every input at its expected value, then one input at a time moved to
each end of its range (a posterior to its 2.5% and 97.5% points), and the top offers' costs per task at each end.
The draws and the cost model are procure/analysis/uncertainty.py's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from procure.analysis.uncertainty import (
    DRAWN_GATES,
    GAP_COLUMN,
    POINT_COLUMN,
    Draws,
    Gates,
    Posterior,
    availability_distribution,
    costs_for,
    number_or_none,
    outputs_for,
    point_throughput_factor,
    stack_group,
    throughput_distribution,
)
from procure.model.costing import AVAILABILITY_POINT, UTILIZATION_POINT, CostModel
from procure.model.inputs import Offer, UncertaintyConfig
from procure.model.units import PerThousand

# The ends of a posterior in the one-at-a-time sensitivity: its 2.5% and 97.5% points.
POSTERIOR_TAIL = 0.025


# the standard normal's 97.5% point  # draws costed at once: arrays of chunk x offers stay in cache (faster) and memory
# stays small
POSTERIOR_Z = 1.959963984540054


class SensitivityRow(PerThousand):
    PER_TASK = (
        "costs_low",
        "costs_high",
        "swing",
        "leader_cost_low",
        "leader_cost_high",
    )  # costs per task, each with its figure per 1,000 tasks in JSON

    input: str
    low: float = Field(description="the factor at the low end")
    high: float
    costs_low: dict[str, float | None] = Field(description="cost per task of each top offer with this input low")
    costs_high: dict[str, float | None]
    swing: float | None = Field(
        description="the largest change in a top offer's cost per task between the low and high input"
    )
    swing_offer: str | None = Field(description="the top offer that swings most")
    leader_low: str | None
    leader_high: str | None
    flips: bool = Field(
        description="the order of the top offers changes at either end, or one of them fails a gate there"
    )
    fails_low: dict[str, list[str]] = Field(
        default_factory=dict, description="top offers that fail a gate with this input low, and the gates"
    )
    fails_high: dict[str, list[str]] = Field(default_factory=dict)
    leader_cost_low: float | None = Field(None, description="the cost per task of the leader at the low end")
    leader_cost_high: float | None = None


class Sensitivity(PerThousand):
    PER_TASK = ("baseline",)  # the top offers' costs per task, each with its figure per 1,000 tasks in JSON
    offers: list[str]
    baseline: dict[str, float | None] = Field(
        description="each top offer's cost per task at the typical inputs (point_cost_per_task), from which one input "
        "moves"
    )
    rows: list[SensitivityRow] = Field(description="by swing, largest first")


Scenario = tuple[str, str, Draws, float, float]  # (input, end "low"/"high", its draws, the input's low, its high)


@dataclass
class _Expected:
    """Every input at its expected value: the throughput factors at their means, as the point evaluation reads
    them. Each end of the tornado starts from a fresh copy and moves one input."""

    point: np.ndarray  # each offer's throughput factor at the point evaluation
    n: int
    distinct: list[str]  # the currencies, sorted: the columns of fx
    column: np.ndarray  # each offer's column in fx
    availability: np.ndarray  # each offer's availability factor at the point (its mean; 1 on a posterior)
    utilization: float  # the utilization factor's mean

    def draws(self) -> Draws:
        """One draw with every input at its expected value."""
        return Draws(
            self.point[None, :].copy(),
            self.availability[None, :].copy(),
            np.full((1, 1), self.utilization),
            np.ones((1, 1)),
            np.ones((1, 1)),
            np.ones((1, len(self.distinct))),
            self.column,
            np.ones((1, 1)),
        )


def _throughput_ends(
    offers: list[Offer],
    top: list[int],
    config: UncertaintyConfig,
    posteriors: dict[str, Posterior],
    expected: _Expected,
) -> list[Scenario]:
    """Each top offer's throughput at its ends: a signed vendor's posterior 2.5% and 97.5% points (exp(-/+1.96 s)
    on the evaluated, blended figure), else the ends of its throughput curve with the rest at their means. An
    offer billed per token has no GPU throughput to vary."""
    point = expected.point
    scenarios: list[Scenario] = []
    for i in top:
        if offers[i].per_token:
            continue
        spread = posteriors[offers[i].id].throughput_log_sd if offers[i].id in posteriors else None
        if spread is not None:
            low, high = float(np.exp(-POSTERIOR_Z * spread)), float(np.exp(POSTERIOR_Z * spread))
            for end, value in (("low", low), ("high", high)):
                d = expected.draws()
                d.throughput[0, i] = value * point[i]  # a factor on the evaluated (blended) figure
                scenarios.append((f"throughput: {offers[i].id}", end, d, low, high))
            continue
        low, _, high = throughput_distribution(offers[i], config).bounds
        for end, value in (("low", low), ("high", high)):
            d = expected.draws()
            d.throughput[0, i] = (
                value * point[i] / throughput_distribution(offers[i], config).mean
            )  # the curve at its end, the rest at their means
            scenarios.append((f"throughput: {offers[i].id}", end, d, low, high))
    return scenarios


def _stack_ends(
    offers: list[Offer],
    top: list[int],
    config: UncertaintyConfig,
    posteriors: dict[str, Posterior],
    expected: _Expected,
) -> list[Scenario]:
    """Each serving stack a top offer runs on, at the ends of the stack factor: every GPU-hour offer on the stack moves
    together, as in the draws (a signed vendor's throughput is its posterior's, which the stack factor does not
    move)."""
    if config.stack.bounds[0] == config.stack.bounds[2]:
        return []
    moved = [
        not o.per_token and not (o.id in posteriors and posteriors[o.id].throughput_log_sd is not None) for o in offers
    ]
    keys = [stack_group(o) for o in offers]
    low, _, high = config.stack.bounds
    scenarios: list[Scenario] = []
    # An offer alone on a stack it does not name moves with its own throughput row; its stack is not an input of its
    # own.
    for key in dict.fromkeys(keys[i] for i in top if moved[i] and not keys[i].startswith("offer:")):
        on = np.array([k == key and m for k, m in zip(keys, moved)], dtype=bool)
        first = offers[int(np.flatnonzero(on)[0])]
        name = (
            " ".join(first.performance.stack.split())
            if key.startswith("stack:")
            else first.performance.reference
            if key.startswith("curve:")
            else first.id
        )
        for end, value in (("low", low), ("high", high)):
            d = expected.draws()
            d.throughput = np.where(on, expected.point / config.stack.mean * value, expected.point)[None, :]
            scenarios.append((f"serving stack: {name}", end, d, low, high))
    return scenarios


def _availability_ends(
    offers: list[Offer], config: UncertaintyConfig, posteriors: dict[str, Posterior], expected: _Expected
) -> list[Scenario]:
    """Every offer's availability at its low, then its high end together; a signed vendor's are its Beta
    posterior's quantiles over its mean."""
    low_a = np.array([availability_distribution(o, config).bounds[0] for o in offers])
    high_a = np.array([availability_distribution(o, config).bounds[2] for o in offers])
    signed_a = [
        (i, posteriors[o.id].availability)
        for i, o in enumerate(offers)
        if o.id in posteriors and posteriors[o.id].availability is not None
    ]
    if signed_a:
        # The Beta quantile is the inverse regularized incomplete beta function: scipy.special's betaincinv gives the
        # very bits scipy.stats.beta.ppf gives (checked on 120,000 draws of a, b and six tails), and importing
        # scipy.stats would cost every report and sensitivity run about 0.9 s.
        from scipy.special import betaincinv

        for i, (a, b) in signed_a:
            low_a[i], high_a[i] = (
                float(betaincinv(a, b, q)) / (a / (a + b)) for q in (POSTERIOR_TAIL, 1 - POSTERIOR_TAIL)
            )
    scenarios: list[Scenario] = []
    for end, values in (("low", low_a), ("high", high_a)):
        d = expected.draws()
        d.availability = values[None, :]
        scenarios.append(("availability (every offer)", end, d, float(low_a.min()), float(high_a.max())))
    return scenarios


def _common_ends(
    offers: list[Offer], model: CostModel, config: UncertaintyConfig, expected: _Expected
) -> list[Scenario]:
    """The inputs common to every offer at their ends: benchmark to production (GPU-hour offers, each curve at its
    mean), utilization, staff cost, the index level and demand (when a demand is stated and drawn)."""
    scenarios: list[Scenario] = []
    gpu_hour = np.array([not o.per_token for o in offers], dtype=bool)
    if gpu_hour.any() and config.production.bounds[0] != config.production.bounds[2]:
        low, _, high = config.production.bounds
        for end, value in (("low", low), ("high", high)):
            d = expected.draws()
            d.throughput = np.where(gpu_hour, expected.point / config.production.mean * value, 1.0)[
                None, :
            ]  # each curve at its mean
            scenarios.append(("benchmark to production (every GPU-hour offer)", end, d, low, high))
    for name, label in (
        ("utilization", "utilization"),
        ("fte_cost", "staff cost"),
        ("index", "index level"),
        ("demand", "demand"),
    ):
        if name == "demand" and (
            model.workload.tasks_per_month is None or config.demand.bounds[0] == config.demand.bounds[2]
        ):
            continue  # no demand stated, or none drawn: nothing to vary
        low, _, high = getattr(config, name).bounds
        for end, value in (("low", low), ("high", high)):
            d = expected.draws()
            setattr(d, name, np.full((1, 1), value))
            scenarios.append((label, end, d, low, high))
    return scenarios


def _fx_ends(
    currencies: list[str], top: list[int], home_currency: str, config: UncertaintyConfig, expected: _Expected
) -> list[Scenario]:
    """The exchange rate of each foreign currency a top offer is priced in, at its ends."""
    scenarios: list[Scenario] = []
    for currency in sorted({currencies[i] for i in top if currencies[i] != home_currency}):
        low, _, high = config.fx.bounds
        for end, value in (("low", low), ("high", high)):
            d = expected.draws()
            d.fx[0, expected.distinct.index(currency)] = value
            scenarios.append((f"exchange rate {currency}", end, d, low, high))
    return scenarios


@dataclass
class _Ends:
    """The costs per task at every end (one row per end, low then high), the drawn gates each offer fails there,
    and what the rows of the tornado read from them: rankings, leaders and failures."""

    offers: list[Offer]
    top: list[int]
    gates: Gates | None
    costs: np.ndarray
    failed: dict[str, np.ndarray]
    position: dict[str, int] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.position = {o.id: i for i, o in enumerate(self.offers)}

    def order(self, row: np.ndarray) -> list[str]:
        """The top offers by cost per task at one end (no figure last)."""
        offers = self.offers
        return [
            offers[i].id for i in sorted(self.top, key=lambda i: (np.inf if np.isnan(row[i]) else row[i], offers[i].id))
        ]

    def cost_of(self, offer_id: str | None, row: np.ndarray) -> float | None:
        """An offer's cost per task at one end."""
        return None if offer_id is None else number_or_none(row[self.position[offer_id]])

    def gate_failures(self, k: int) -> dict[str, list[str]]:
        """The drawn gates each top offer (acceptable on the others) fails at end k."""
        offers, failed, gates = self.offers, self.failed, self.gates
        return {
            offers[i].id: [g for g in DRAWN_GATES if failed[g][k, i]]
            for i in self.top
            if gates is not None and gates.others_pass[i] and any(failed[g][k, i] for g in DRAWN_GATES)
        }

    def leader(self, k: int, row: np.ndarray) -> str | None:
        """The leader at end k: without gates the cheapest top offer; with them the cheapest offer acceptable at
        this end, among all offers (one that fails here gives way)."""
        offers, gates, failed = self.offers, self.gates, self.failed
        if gates is None:
            return self.order(row)[0] if self.top else None
        ok = gates.others_pass & ~failed["availability"][k] & ~failed["capacity"][k] & ~np.isnan(row)
        pool = np.flatnonzero(ok)
        return offers[min(pool, key=lambda i: (row[i], offers[i].id))].id if len(pool) else None

    def row(self, k: int, scenario: Scenario, baseline_order: list[str]) -> SensitivityRow:
        """One input's row: both ends' costs, the largest swing among the top offers, the leaders, and whether the
        ranking flips or a top offer fails a gate at either end."""
        offers, top = self.offers, self.top
        label, _, _, low, high = scenario
        lo, hi = self.costs[k], self.costs[k + 1]
        swings = {offers[i].id: abs(float(hi[i] - lo[i])) for i in top if not (np.isnan(lo[i]) or np.isnan(hi[i]))}
        swing_offer = max(swings, key=lambda key: (swings[key], key), default=None)
        if swing_offer is not None and swings[swing_offer] == 0:
            swing_offer = None
        return SensitivityRow(
            input=label,
            low=low,
            high=high,
            costs_low={offers[i].id: number_or_none(lo[i]) for i in top},
            costs_high={offers[i].id: number_or_none(hi[i]) for i in top},
            swing=swings.get(swing_offer) if swing_offer else None,
            swing_offer=swing_offer,
            leader_low=self.leader(k, lo),
            leader_high=self.leader(k + 1, hi),
            flips=self.order(lo) != baseline_order
            or self.order(hi) != baseline_order
            or bool(self.gate_failures(k))
            or bool(self.gate_failures(k + 1)),
            fails_low=self.gate_failures(k),
            fails_high=self.gate_failures(k + 1),
            leader_cost_low=self.cost_of(self.leader(k, lo), lo),
            leader_cost_high=self.cost_of(self.leader(k + 1, hi), hi),
        )


def sensitivity(
    col: dict[str, np.ndarray],
    model: CostModel,
    offers: list[Offer],
    currencies: list[str],
    home_currency: str,
    top: list[int],
    config: UncertaintyConfig,
    gates: Gates | None = None,
    posteriors: dict[str, Posterior] | None = None,
) -> Sensitivity:
    """Each uncertain input at its low and high value, the others at their typical values (each drawn factor at its
    mean: the baseline is each offer's point_cost_per_task, the cost at the typical inputs), for the top
    offers. With `gates`, each end re-applies the drawn gates: a top offer that fails one there is a
    flip, and the end's leader is the cheapest offer still acceptable. A signed vendor with
    `posteriors` has its posteriors' 2.5% and 97.5% points as its ends: throughput exp(-/+1.96 s) on
    the evaluated figure (the log-normal's), availability Beta's quantiles over its mean."""
    from procure.model.performance import reading_mean

    n = len(offers)
    home = np.array([c == home_currency for c in currencies], dtype=bool)
    distinct = sorted(set(currencies))
    column = np.array([distinct.index(c) for c in currencies], dtype=int)
    gaps = col.get(GAP_COLUMN, np.zeros(n))
    point = (
        col[POINT_COLUMN]
        if POINT_COLUMN in col
        else np.array(
            [point_throughput_factor(o, config) * reading_mean(float(g)) for o, g in zip(offers, gaps)], dtype=float
        )
    )
    availability = (
        col[AVAILABILITY_POINT]
        if AVAILABILITY_POINT in col
        else np.array([availability_distribution(o, config).mean for o in offers], dtype=float)
    )
    # the point's utilization factor (its mean below the cap of 1 on the product), so the baseline is the evaluated
    # figure
    utilization = (
        float(col[UTILIZATION_POINT][0])
        if UTILIZATION_POINT in col and n
        else config.utilization.capped_mean(1 / model.workload.utilization)
    )
    expected = _Expected(
        np.asarray(point, dtype=float), n, distinct, column, np.asarray(availability, dtype=float), utilization
    )
    posteriors = posteriors or {}
    scenarios = [
        *_throughput_ends(offers, top, config, posteriors, expected),
        *_stack_ends(offers, top, config, posteriors, expected),
        *_availability_ends(offers, config, posteriors, expected),
        *_common_ends(offers, model, config, expected),
        *_fx_ends(currencies, top, home_currency, config, expected),
    ]
    stacked = (
        Draws(
            *(
                np.concatenate([getattr(s[2], f) for s in scenarios])
                for f in ("throughput", "availability", "utilization", "fte_cost", "index", "fx")
            ),
            column,
            np.concatenate([s[2].demand for s in scenarios]),
        )  # type: ignore[misc]
        if scenarios
        else expected.draws()
    )
    found = (
        outputs_for(col, model, stacked, home, gates=gates is not None)
        if scenarios
        else {"cost_per_task": np.empty((0, n))}
    )
    failed = gates.failures(found["availability"], found["gpus_needed"]) if gates is not None and scenarios else {}
    base = costs_for(col, model, expected.draws(), home)[0]
    ends = _Ends(offers, top, gates, found["cost_per_task"], failed)
    baseline_order = ends.order(base)
    rows = [ends.row(k, scenarios[k], baseline_order) for k in range(0, len(scenarios), 2)]
    rows.sort(key=lambda r: (-(r.swing or 0.0), r.input))
    return Sensitivity(
        offers=[offers[i].id for i in top], baseline={offers[i].id: number_or_none(base[i]) for i in top}, rows=rows
    )


def top_offer_positions(ranked_ids: list[str], offers: list[Offer], top_n: int) -> list[int]:
    """Positions in `offers` of the first `top_n` ranked offers."""
    where = {o.id: i for i, o in enumerate(offers)}
    return [where[offer_id] for offer_id in ranked_ids[:top_n]]
