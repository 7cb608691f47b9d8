"""How robust is the ranking? Monte Carlo ranges (the one-at-a-time sensitivity: procure/analysis/sensitivity.py).

A vendor's throughput claim, the availability it will deliver, utilization, staff cost, the index
level, exchange rates and demand are estimates. Each gets a distribution, as a factor on the stated
figure, and the cost model runs on arrays of draws x offers in one pass of numpy (no Python loop per
draw). Draws are correlated the way the world is: throughput is one factor per serving stack (every
offer on the stack shares it) times one residual per curve (offers on the same reference curve move
together; an offer's own points are its own curve), times one factor for the gap between benchmark
and production shared by every GPU-hour offer; availability one draw per operator (two offers of one
vendor share it);
utilization, staff cost, the index (shared by every index-linked offer), each exchange rate and
demand one draw for all offers. Demand reaches the cost through the demand fit: less demand leaves
committed GPUs idle. The same seed gives the same numbers.

A signed vendor with delivered evidence (procure/analysis/scorecard.py) is drawn from its posteriors instead:
its throughput is the blended figure times exp(s z), z standard normal and s the posterior sd of the
log delivered-to-promised ratio (so the ratio drawn is the log-normal posterior itself, its median the
figure evaluated), its availability a draw of its Beta posterior and its share of requests served a
draw of that Beta posterior. These are drawn after every other factor, so a workspace without
evidence draws exactly what it drew before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from procure.model.costing import AVAILABILITY_POINT, UTILIZATION_POINT, CostModel, Variation, cost_arrays
from procure.model.inputs import Distribution, Offer, UncertaintyConfig
from procure.model.units import PerThousand

# The factor the point evaluation put on each offer's stated throughput (a column beside the cost
# model's inputs): its throughput column is the stated reading times this.
POINT_COLUMN = "throughput_point_factor"
# Each offer's reading between frontier points: its gap as a share of the target (0 on a point), whose
# calibrated range (procure.model.performance.reading_spread) the draws sample, one draw per curve.
GAP_COLUMN = "reading_gap_share"
CHUNK_DRAWS = 100


def _params(dists: Sequence[Distribution]) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    bounds = np.array([d.bounds for d in dists], dtype=float).reshape(-1, 3)
    uniform = np.array([d.uniform is not None for d in dists], dtype=bool)
    return (bounds[:, 0], bounds[:, 1], bounds[:, 2]), uniform


def throughput_distribution(offer: Offer, config: UncertaintyConfig) -> Distribution:
    override = config.offers.get(offer.id)
    if override and override.throughput is not None:
        return override.throughput
    source = offer.performance.points_source if offer.performance.points else "reference"
    return config.throughput[source] if source in config.throughput else Distribution(triangular=(1.0, 1.0, 1.0))


def throughput_group(offer: Offer, config: UncertaintyConfig) -> str:
    """The curve an offer's throughput draw belongs to: offers on the same reference curve share it."""
    override = config.offers.get(offer.id)
    if offer.performance.points or (override and override.throughput is not None) or not offer.performance.reference:
        return f"offer:{offer.id}"
    return f"curve:{offer.performance.reference}"


def stack_group(offer: Offer) -> str:
    """The serving stack an offer's shared throughput factor belongs to: performance.stack; unnamed, the
    reference curve it reads (one curve is one stack), else its own."""
    stack = offer.performance.stack
    if stack and stack.strip():
        return f"stack:{' '.join(stack.split()).casefold()}"
    if not offer.performance.points and offer.performance.reference:
        return f"curve:{offer.performance.reference}"
    return f"offer:{offer.id}"


def operator_group(offer: Offer, config: UncertaintyConfig) -> str:
    """The operator an offer's availability draw belongs to: two offers of one vendor share it (one fleet,
    one operations team), unless procure.yaml gives the offer a distribution of its own."""
    override = config.offers.get(offer.id)
    if override and override.availability is not None:
        return f"offer:{offer.id}"
    return f"vendor:{' '.join(offer.vendor.split()).casefold()}"


def point_throughput_factor(offer: Offer, config: UncertaintyConfig) -> float:
    """The factor the point evaluation puts on a stated throughput: the mean of the offer's curve
    factor times the mean of its serving stack's factor times, for a GPU-hour offer, the mean of
    benchmark to production. The point is then the cost at the draws' own expected throughput, and
    every draw is a factor on it (mean 1)."""
    if offer.per_token:
        return 1.0
    return throughput_distribution(offer, config).mean * config.stack.mean * config.production.mean


def availability_distribution(offer: Offer, config: UncertaintyConfig) -> Distribution:
    override = config.offers.get(offer.id)
    return override.availability if override and override.availability is not None else config.availability


@dataclass(frozen=True)
class Posterior:
    """A signed vendor's delivered evidence as the draws read it (procure.analysis.scorecard.Evidence): the
    posterior sd of log(delivered / promised throughput), and the Beta parameters (alpha, beta) of
    its availability and of its share of requests served; None where there is no such evidence."""

    throughput_log_sd: float | None = None
    availability: tuple[float, float] | None = None
    served: tuple[float, float] | None = None


@dataclass
class Draws:
    """Factors for every draw: per offer (draws, n) or common to all offers (draws, 1)."""

    throughput: np.ndarray
    availability: np.ndarray
    utilization: np.ndarray
    fte_cost: np.ndarray
    index: np.ndarray
    fx: np.ndarray  # (draws, currencies): one draw per currency
    currency_column: np.ndarray  # (n,): each offer's column in fx
    demand: np.ndarray | None = None  # (draws, 1): factor on tasks per month, common to all offers
    # Signed vendors drawn from their posteriors (Posterior): the offers' columns and (draws, k) draws.
    lognormal_columns: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=int))
    lognormal: np.ndarray | None = None  # exp(s z): factor on the blended throughput
    beta_availability_columns: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=int))
    beta_availability: np.ndarray | None = None  # Beta draw / its mean: factor on the point (the posterior mean)
    beta_served_columns: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=int))
    beta_served: np.ndarray | None = None  # Beta draw / its mean: factor on the point's share served


def sample(rng: np.random.Generator, dists: Sequence[Distribution], draws: int) -> np.ndarray:
    """(draws, len(dists)) factors, one column per distribution, with numpy's own samplers.

    Columns are drawn in a fixed order (triangular, then uniform); a zero-width distribution is its
    value exactly, so that "no uncertainty" reproduces the evaluated figures bit for bit.
    """
    (low, mode, high), uniform = _params(dists)
    fixed = high <= low
    if not fixed.any() and not uniform.any():  # the common case, without a copy through masks
        return rng.triangular(low, mode, high, size=(draws, len(dists)))
    out = np.empty((draws, len(dists)))
    tri = ~fixed & ~uniform
    uni = ~fixed & uniform
    out[:, fixed] = low[fixed]
    if tri.any():
        out[:, tri] = rng.triangular(low[tri], mode[tri], high[tri], size=(draws, int(tri.sum())))
    if uni.any():
        out[:, uni] = rng.uniform(low[uni], high[uni], size=(draws, int(uni.sum())))
    return out


def draw_factors(
    offers: list[Offer],
    currencies: list[str],
    config: UncertaintyConfig,
    draws: int,
    seed: int,
    gaps: np.ndarray | None = None,
    posteriors: dict[str, Posterior] | None = None,
) -> Draws:
    """All factors, in a fixed order from one seeded generator: same seed, same numbers. `gaps`: each
    offer's reading gap as a share of the target (GAP_COLUMN); its range is drawn after the factors,
    one per curve. `posteriors`: signed vendors' evidence by offer id, drawn last (the module docstring).

    The draws are kept per process under what they are drawn from (`_drawn_from`): a report evaluates the workspace
    again for each what-if case and draws the same factors each time (the gates' odds, the Monte Carlo). Their arrays
    are read-only, so that no user of one set can change another's."""
    key = _drawn_from(offers, currencies, config, draws, seed, gaps, posteriors)
    with _kept_lock:  # a report's what-if cases are evaluated beside the plan's solve (analysis/report.py)
        if key in _kept_draws:
            _kept_draws.move_to_end(key)
            return _kept_draws[key]
    found = _draw(offers, currencies, config, draws, seed, gaps, posteriors)
    arrays = [v for v in vars(found).values() if isinstance(v, np.ndarray)]
    for array in arrays:
        array.setflags(write=False)
    if sum(a.nbytes for a in arrays) <= KEPT_DRAW_BYTES:
        with _kept_lock:
            _kept_draws[key] = found
            while len(_kept_draws) > KEPT_DRAWS:
                _kept_draws.popitem(last=False)
    return found


KEPT_DRAWS = 4  # sets of draws kept per process
KEPT_DRAW_BYTES = 64 * 1024 * 1024  # a larger set (a thousand offers) is drawn each time, never held
_kept_draws: OrderedDict[str, Draws] = OrderedDict()
_kept_lock = threading.Lock()


def _drawn_from(
    offers: list[Offer],
    currencies: list[str],
    config: UncertaintyConfig,
    draws: int,
    seed: int,
    gaps: np.ndarray | None,
    posteriors: dict[str, Posterior] | None,
) -> str:
    """The SHA-256 of everything `_draw` reads: the settings, and of each offer its curve, operator and stack groups,
    its distributions, whether it has GPU-hours, its currency, its reading gap and its posterior."""
    each = [
        (
            throughput_group(o, config),
            throughput_distribution(o, config),
            operator_group(o, config),
            availability_distribution(o, config),
            stack_group(o),
            o.per_token,
            (posteriors or {}).get(o.id),
        )
        for o in offers
    ]
    given = (config, draws, seed, currencies, each, None if gaps is None else np.asarray(gaps, dtype=float).tobytes())
    return hashlib.sha256(pickle.dumps(given, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()


def stream(seed: int, *key: str) -> np.random.Generator:
    """The generator of one factor's draws: seeded by the settings' seed and the factor's own name (the curve, the
    operator, the currency...), so that an offer's draws never depend on which other offers are evaluated beside it
    (DESIGN: adding or removing another bid never changes an offer's cost, the mean of its draws included), while
    offers that share a factor share its draws (common random numbers)."""
    digest = hashlib.sha256("\x1f".join(key).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def _columns(seed: int, kind: str, keyed: dict[str, Distribution], draws: int) -> np.ndarray:
    """(draws, len(keyed)) factors, one column per key, each from its own stream."""
    out = np.empty((draws, len(keyed)))
    for i, (key, dist) in enumerate(keyed.items()):
        out[:, i] = sample(stream(seed, kind, key), [dist], draws)[:, 0]
    return out


def _draw(
    offers: list[Offer],
    currencies: list[str],
    config: UncertaintyConfig,
    draws: int,
    seed: int,
    gaps: np.ndarray | None = None,
    posteriors: dict[str, Posterior] | None = None,
) -> Draws:
    groups: dict[str, Distribution] = {}
    keys = [throughput_group(o, config) for o in offers]
    for o, key in zip(offers, keys):
        groups.setdefault(key, throughput_distribution(o, config))
    group_column = {key: i for i, key in enumerate(groups)}
    curves = _columns(seed, "throughput", groups, draws)  # one column per curve
    where = np.array([group_column[key] for key in keys], dtype=int)
    production = _columns(seed, "production", {"": config.production}, draws)  # benchmark to production
    gpu_hour = np.array([not o.per_token for o in offers], dtype=bool)
    throughput = curves[:, where] if len(offers) else np.empty((draws, 0))  # a copy: this function's own array
    np.multiply(throughput, production, out=throughput, where=gpu_hour)
    # Availability: one draw per operator (two offers of one vendor share its fleet and its team).
    operators: dict[str, Distribution] = {}
    operator_keys = [operator_group(o, config) for o in offers]
    for o, key in zip(offers, operator_keys):
        operators.setdefault(key, availability_distribution(o, config))
    operator_column = {key: i for i, key in enumerate(operators)}
    availability = _columns(seed, "availability", operators, draws) if len(offers) else np.empty((draws, 0))
    if len(operators) < len(offers):  # else every offer has an operator of its own, in offer order: no copy
        availability = availability[:, [operator_column[k] for k in operator_keys]]
    utilization, fte_cost, index = (
        _columns(seed, name, {"": getattr(config, name)}, draws) for name in ("utilization", "fte_cost", "index")
    )
    distinct = sorted(set(currencies))
    per_currency = _columns(seed, "fx", {c: config.fx for c in distinct}, draws)
    column = np.array([distinct.index(c) for c in currencies], dtype=int)
    demand = _columns(seed, "demand", {"": config.demand}, draws)
    # Throughput per serving stack: a factor shared by every offer on the stack, times each curve's own
    # residual above (per-token offers have no GPU throughput to move).
    stack_keys = [stack_group(o) for o in offers]
    stacks = list(dict.fromkeys(stack_keys))
    if len(offers) and config.stack.bounds[0] != config.stack.bounds[2]:
        shared = _columns(seed, "stack", {k: config.stack for k in stacks}, draws)
        column_of = {k: i for i, k in enumerate(stacks)}
        on = np.array([column_of[k] for k in stack_keys], dtype=int)
        for rows in _row_blocks(draws, len(offers)):
            np.multiply(throughput[rows], shared[rows][:, on], out=throughput[rows], where=gpu_hour)
    if gaps is not None and len(offers) and (gaps > 0).any():
        from procure.model.performance import reading_spread

        # One standard normal per curve (offers reading one curve at one target share its error), scaled
        # by the two-piece spread of each offer's gap: P10 and P90 at the calibrated range, median 1.
        normal = np.empty((draws, len(groups)))
        for i, key in enumerate(groups):
            normal[:, i] = stream(seed, "reading", key).standard_normal(draws)
        spread = np.array([reading_spread(float(g)) for g in gaps]).reshape(-1, 2)
        for rows in _row_blocks(draws, len(offers)):
            z = normal[rows][:, where]
            below = z < 0
            np.multiply(z, spread[:, 0], out=z, where=below)
            np.multiply(z, spread[:, 1], out=z, where=~below)
            throughput[rows] *= np.exp(z, out=z)
    found = Draws(throughput, availability, utilization, fte_cost, index, per_currency, column, demand)
    if posteriors:
        _draw_posteriors(seed, offers, posteriors, draws, found)
    return found


BLOCK_VALUES = 1 << 20  # values of a temporary array while the draws are scaled (8 MB)


def _row_blocks(draws: int, offers: int, blocks: int = 1, most: int | None = None) -> list[slice]:
    """The draws in blocks of rows of about `blocks` x BLOCK_VALUES values (at most `most` rows), so that a figure
    spread over every offer is held a block at a time: at 10,000 offers x 10,000 draws a whole one is 800 MB. Each
    value is computed as it would be at once."""
    step = max(1, blocks * BLOCK_VALUES // max(1, offers))
    if most is not None:
        step = min(step, most)
    return [slice(start, min(draws, start + step)) for start in range(0, draws, step)]


def _draw_posteriors(
    seed: int, offers: list[Offer], posteriors: dict[str, Posterior], draws: int, found: Draws
) -> None:
    """The signed vendors' posterior draws, each offer from its own stream: the log-normal throughput factor, then
    the Beta availability, then the Beta share served."""
    signed = [(i, posteriors[o.id]) for i, o in enumerate(offers) if o.id in posteriors]
    normal: dict[int, np.ndarray] = {}
    betas: dict[str, dict[int, np.ndarray]] = {"availability": {}, "served": {}}
    for i, p in signed:
        rng = stream(seed, "posterior", offers[i].id)
        if p.throughput_log_sd is not None and not offers[i].per_token:
            normal[i] = np.exp(rng.standard_normal(draws) * p.throughput_log_sd)
        for kind in ("availability", "served"):
            ab = getattr(p, kind)
            if ab is not None:
                betas[kind][i] = rng.beta(ab[0], ab[1], size=draws) / (ab[0] / (ab[0] + ab[1]))
    if normal:
        found.lognormal_columns = np.array(list(normal), dtype=int)
        found.lognormal = np.column_stack(list(normal.values()))
    for kind, drawn in betas.items():
        if drawn:
            setattr(found, f"beta_{kind}_columns", np.array(list(drawn), dtype=int))
            setattr(found, f"beta_{kind}", np.column_stack(list(drawn.values())))


def costs_for(
    col: dict[str, np.ndarray], model: CostModel, factors: Draws, home: np.ndarray, rows: slice = slice(None)
) -> np.ndarray:
    """Cost per successful task for the draws in `rows`: (draws, n)."""
    return outputs_for(col, model, factors, home, rows)["cost_per_task"]


# The gates whose inputs are drawn, re-applied in every draw: expected availability against
# policy.min_availability, and the GPUs a GPU-hour offer can supply against the demand's need.
DRAWN_GATES = ("availability", "capacity")


@dataclass(frozen=True)
class Gates:
    """What every draw re-applies: per offer (n,), whether the gates not drawn passed at the point, and
    whether the capacity gate is judged on drawn GPUs needed (GPU-hour offers with a stated demand)."""

    others_pass: np.ndarray
    min_availability: float
    capacity_drawn: np.ndarray
    supply: np.ndarray
    coverage: float

    def failures(self, availability: np.ndarray, gpus_needed: np.ndarray) -> dict[str, np.ndarray]:
        """(draws, n) masks of the drawn gates that fail, by gate."""
        with np.errstate(invalid="ignore"):
            low = ~(availability >= self.min_availability - 1e-12)
            short = self.capacity_drawn & ~(self.supply >= gpus_needed * self.coverage)
        return {"availability": low, "capacity": short}


def outputs_for(
    col: dict[str, np.ndarray],
    model: CostModel,
    factors: Draws,
    home: np.ndarray,
    rows: slice = slice(None),
    gates: bool = False,
    only: tuple[str, ...] | None = None,
) -> dict[str, np.ndarray]:
    """Cost per successful task (and, with `gates`, availability and GPUs needed; or the outputs named
    in `only`) for the draws in `rows`."""
    varied = dict(col)
    # The throughput column is the point evaluation's (the stated reading x POINT_COLUMN); the draws are
    # factors on the stated reading. A signed vendor's is its posterior's factor on the blended figure.
    throughput = (
        factors.throughput[rows] / col[POINT_COLUMN]
        if POINT_COLUMN in col
        else np.array(factors.throughput[rows], dtype=float)
    )
    availability = factors.availability[rows]
    if factors.lognormal is not None:
        throughput[:, factors.lognormal_columns] = factors.lognormal[rows]
    if factors.beta_availability is not None:
        # the point availability of a signed vendor is its posterior mean (scorecard.apply_evidence): this
        # factor makes it the drawn one
        availability = np.array(np.broadcast_to(availability, throughput.shape), dtype=float)
        availability[:, factors.beta_availability_columns] = factors.beta_availability[rows]
    if factors.beta_served is not None:
        share = np.ones(throughput.shape)
        share[:, factors.beta_served_columns] = factors.beta_served[rows]
        varied["quality_pass_rate"] = col["quality_pass_rate"] * share
    varied["throughput"] = col["throughput"] * throughput
    # The point's expected availability and utilization factors give way to the drawn ones.
    varied[AVAILABILITY_POINT] = np.ones(len(col["throughput"]))
    varied[UTILIZATION_POINT] = np.ones(len(col["throughput"]))
    varied["index_level"] = col["index_level"] * factors.index[rows]
    # The workspace currency never moves against itself.
    if not home.all():
        varied["fx"] = np.where(home, col["fx"], col["fx"] * factors.fx[rows][:, factors.currency_column])
    demand = model.workload.tasks_per_month
    variation = Variation(
        availability_factor=availability,
        utilization=model.workload.utilization * factors.utilization[rows],
        fte_cost_year=model.assumptions.fte_cost_year * factors.fte_cost[rows],
        tasks_per_month=demand * factors.demand[rows] if (demand is not None and factors.demand is not None) else None,
    )
    found = cost_arrays(
        varied,
        model,
        variation,
        only=only or (("cost_per_task", "availability", "gpus_needed") if gates else ("cost_per_task",)),
    )
    if "cost_per_task" in found:
        found["cost_per_task"] = np.where(np.isfinite(found["cost_per_task"]), found["cost_per_task"], np.nan)
    return found


@dataclass(frozen=True)
class DrawnOutcome:
    """What the draws give every evaluation (the uncertainty settings' draws and seed), per offer in offer order:
    the probability of passing each drawn gate (DRAWN_GATES), and the expected figures: the mean of the drawn cost
    per successful task and of the drawn rent per task, and the harmonic mean of the drawn capacity (successful tasks
    per GPU-hour at full use), at which a fully used GPU-hour's cost per task is its expected cost per task. NaN
    where no draw gives a finite figure."""

    odds: list[dict[str, float]]
    mean_cost_per_task: np.ndarray
    mean_rent_per_task: np.ndarray
    costed_capacity: np.ndarray


class _Mean:
    """A running mean over blocks of draws (draws, n), finite values only; where every draw gave one value it is that
    value exactly (a workspace without uncertainty keeps its figures bit for bit)."""

    def __init__(self, n: int) -> None:
        self.total, self.count = np.zeros(n), np.zeros(n)
        self.low, self.high = np.full(n, np.inf), np.full(n, -np.inf)

    def add(self, values: np.ndarray) -> None:
        finite = np.isfinite(values)
        # row after row onto the running total (numpy reduces the outer axis in order), so that the sum is the same bits
        # whatever blocks of rows the draws come in
        self.total = np.add.reduce(np.vstack([self.total[None, :], np.where(finite, values, 0.0)]), axis=0)
        self.count += finite.sum(axis=0)
        self.low = np.fmin(self.low, np.where(finite, values, np.inf).min(axis=0, initial=np.inf))
        self.high = np.fmax(self.high, np.where(finite, values, -np.inf).max(axis=0, initial=-np.inf))

    def mean(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            found = np.where(self.count > 0, self.total / np.maximum(self.count, 1), np.nan)
        return np.where((self.count > 0) & (self.low == self.high), self.low, found)


def gate_odds(
    col: dict[str, np.ndarray],
    model: CostModel,
    offers: list[Offer],
    currencies: list[str],
    home_currency: str,
    config: UncertaintyConfig,
    supply: np.ndarray,
    min_availability: float,
    coverage: float,
    posteriors: dict[str, Posterior] | None = None,
) -> DrawnOutcome:
    """Each offer's probability of passing each drawn gate (DRAWN_GATES): the share of the draws (the
    uncertainty settings' number of draws and seed) in which its drawn availability reaches `min_availability`
    and, for a GPU-hour offer with a stated demand, its `supply` covers the drawn GPUs needed x `coverage`.
    Each offer's own factors are drawn as the Monte Carlo draws them, so its marginal probability is the
    Monte Carlo's (to sampling error) even when asked for one offer alone. A gate whose drawn figure does not
    move across the draws (a workspace without uncertainty) is left out: the point decides it, as it always did.

    The same draws give each offer's expected cost per successful task, the mean of its drawn costs (common random
    numbers across offers, as the Monte Carlo draws them): cost per task goes as one over throughput and committed
    GPUs idle in low-demand draws, so the mean lies above the cost at the typical inputs (docs/uncertainty.md)."""
    draws, seed = config.draws, config.seed
    factors = draw_factors(offers, currencies, config, draws, seed, col.get(GAP_COLUMN), posteriors)
    home = np.array([c == home_currency for c in currencies], dtype=bool)
    n = len(offers)
    passing = {gate: np.zeros(n) for gate in DRAWN_GATES}
    low = {gate: np.full(n, np.inf) for gate in DRAWN_GATES}
    high = {gate: np.full(n, -np.inf) for gate in DRAWN_GATES}
    cost, rent, inverse_capacity = _Mean(n), _Mean(n), _Mean(n)
    capacity = model.workload.tasks_per_month is not None and n > 0
    wanted = ("availability", "gpus_needed") if capacity else ("availability",)
    for rows in _row_blocks(draws, n, 4, CHUNK_DRAWS * 10):  # about 15 arrays a block
        found = outputs_for(
            col, model, factors, home, rows, only=wanted + ("cost_per_task", "rent_per_task", "capacity_per_gpu_hour")
        )
        cost.add(found["cost_per_task"])
        rent.add(found["rent_per_task"])
        with np.errstate(divide="ignore", invalid="ignore"):
            inverse_capacity.add(
                np.where(found["capacity_per_gpu_hour"] > 0, 1.0 / found["capacity_per_gpu_hour"], np.nan)
            )
        drawn = {"availability": found["availability"], **({"capacity": found["gpus_needed"]} if capacity else {})}
        with np.errstate(invalid="ignore"):
            passing["availability"] += (found["availability"] >= min_availability - 1e-12).sum(axis=0)
            if capacity:
                passing["capacity"] += (supply >= found["gpus_needed"] * coverage).sum(axis=0)
            for gate, values in drawn.items():
                low[gate] = np.fmin(low[gate], np.nanmin(values, axis=0, initial=np.inf))
                high[gate] = np.fmax(high[gate], np.nanmax(values, axis=0, initial=-np.inf))
    per_token = [o.per_token for o in offers]
    # A gate whose drawn figure never moves (every factor of its inputs fixed) has no probability to report: the point
    # decides it.
    with np.errstate(invalid="ignore"):  # an offer with no finite figure in any draw (inf - inf) is not drawn
        drawn_at = {gate: high[gate] - low[gate] > 1e-12 * np.maximum(1.0, np.abs(high[gate])) for gate in DRAWN_GATES}
    odds = [
        {
            **({"availability": float(passing["availability"][i] / draws)} if drawn_at["availability"][i] else {}),
            **(
                {"capacity": float(passing["capacity"][i] / draws)}
                if capacity and not per_token[i] and drawn_at["capacity"][i]
                else {}
            ),
        }
        for i in range(n)
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        costed_capacity = 1.0 / inverse_capacity.mean()
    return DrawnOutcome(odds, cost.mean(), rent.mean(), costed_capacity)


class OfferRange(PerThousand):
    PER_TASK = ("mean", "p10", "p50", "p90")  # costs per task, each with its figure per 1,000 tasks in JSON

    mean: float | None = Field(
        None, description="the mean of the drawn costs per successful task: the expected cost (the headline)"
    )
    p10: float | None
    p50: float | None
    p90: float | None
    prob_cheapest: float | None = Field(
        description="share of the draws with an acceptable offer in which this offer is acceptable and the cheapest"
    )
    prob_fails_gate: float | None = Field(
        None, description="share of draws in which a gate re-applied to the draw (availability, capacity) fails"
    )
    fails_by_gate: dict[str, float] = Field(
        default_factory=dict, description="per gate re-applied in the draws, the share of draws in which it fails"
    )


class UncertaintyInfo(BaseModel):
    draws: int
    seed: int
    method: str


def monte_carlo(
    col: dict[str, np.ndarray],
    model: CostModel,
    offers: list[Offer],
    currencies: list[str],
    home_currency: str,
    acceptable: np.ndarray,
    config: UncertaintyConfig,
    draws: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
    gates: Gates | None = None,
    posteriors: dict[str, Posterior] | None = None,
) -> tuple[list[OfferRange], np.ndarray]:
    """P10/P50/P90 of cost per task per offer and each offer's probability of being the cheapest
    acceptable one. With `gates`, every draw re-applies the drawn gates (availability, capacity): an
    offer counts in a draw only if it is acceptable in that draw, and each offer gets the share of
    draws in which each gate fails. Without, `acceptable` holds in every draw. `posteriors`: signed
    vendors drawn from their delivered evidence (the module docstring)."""
    factors = draw_factors(offers, currencies, config, draws, seed, col.get(GAP_COLUMN), posteriors)
    home = np.array([c == home_currency for c in currencies], dtype=bool)
    n = len(offers)
    result = np.empty((draws, n))
    ok = np.empty((draws, n), dtype=bool)
    fails = {gate: np.zeros(n) for gate in DRAWN_GATES}
    for start in range(0, draws, CHUNK_DRAWS):
        rows = slice(start, min(draws, start + CHUNK_DRAWS))
        found = outputs_for(col, model, factors, home, rows, gates=gates is not None)
        result[rows] = found["cost_per_task"]
        if gates is None:
            ok[rows] = acceptable
        else:
            failed = gates.failures(found["availability"], found["gpus_needed"])
            for gate, mask in failed.items():
                fails[gate] += mask.sum(axis=0)
            ok[rows] = gates.others_pass & ~failed["availability"] & ~failed["capacity"]
        if progress:
            progress(rows.stop, draws)
    with np.errstate(all="ignore"), _quiet_nan_warnings():
        percentiles = np.nanpercentile(result, [10, 50, 90], axis=0)
        means = _Mean(n)
        means.add(result)
        mean = means.mean()
    wins = np.zeros(n)
    chosen = np.flatnonzero(ok.any(axis=0))
    if len(chosen):
        # Only the offers acceptable in a draw compete in it; a draw with none decides nothing.
        sub = np.where(np.isnan(result[:, chosen]) | ~ok[:, chosen], np.inf, result[:, chosen])
        decided = np.isfinite(sub).any(axis=1)
        sub = sub[decided]
        # Offers tied for the lowest cost in a draw share that draw's win.
        tied = sub == sub.min(axis=1, keepdims=True)
        wins[chosen] = (tied / tied.sum(axis=1, keepdims=True)).sum(axis=0) / max(1, int(decided.sum()))
    ranges = []
    for i in range(n):
        p10, p50, p90 = (None if np.isnan(v) else float(v) for v in percentiles[:, i])
        drawn = gates is not None and bool(gates.others_pass[i])
        by_gate = {gate: float(fails[gate][i] / draws) for gate in DRAWN_GATES if drawn and fails[gate][i] > 0}
        ranges.append(
            OfferRange(
                mean=None if np.isnan(mean[i]) else float(mean[i]),
                p10=p10,
                p50=p50,
                p90=p90,
                prob_cheapest=float(wins[i]) if (acceptable[i] or (drawn and ok[:, i].any())) else None,
                prob_fails_gate=float(1 - ok[:, i].mean()) if drawn else None,
                fails_by_gate=by_gate,
            )
        )
    return ranges, result


class _quiet_nan_warnings:
    """np.nanpercentile warns on an all-NaN column (an offer without a cost): that is expected here."""

    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc: object) -> None:
        self._catch.__exit__(*exc)


def method_text(
    config: UncertaintyConfig, draws: int, seed: int, posteriors: dict[str, Posterior] | None = None
) -> str:
    def show(d: Distribution) -> str:
        return (
            f"triangular {d.triangular[0]:g}/{d.triangular[1]:g}/{d.triangular[2]:g}"
            if d.triangular
            else f"uniform {d.bounds[0]:g}-{d.bounds[2]:g}"
        )

    throughput = ", ".join(f"{k.replace('_', ' ')} {show(v)}" for k, v in config.throughput.items())
    return (
        f"{draws:,} draws, seed {seed}. Each offer's expected cost per successful task (the headline and the ranking) "
        "is the mean of its drawn costs, above its cost at the typical inputs where cost goes as one over throughput "
        "or commitments idle. Each factor draws from its own stream (seed and the factor's name), so another bid never "
        "moves an offer's draws. Factors on the stated figures: throughput ("
        f"{throughput}), one per curve "
        "(offers on the same "
        f"reference curve move together), times serving stack {show(config.stack)}, one per stack (offers on one stack "
        "move together), "
        f"times benchmark to production {show(config.production)}, one for every GPU-hour offer; "
        f"availability {show(config.availability)}, one per operator (two offers of one vendor move together); "
        f"utilization {show(config.utilization)}, staff cost {show(config.fte_cost)}, "
        f"index level {show(config.index)} (every index-linked offer), each exchange rate {show(config.fx)} and demand "
        f"{show(config.demand)} "
        f"(through the demand fit: less demand idles committed GPUs), common to all offers"
        + (f"; overrides for {', '.join(sorted(config.offers))}" if config.offers else "")
        + ". Every draw re-applies the availability and capacity gates to its own figures (the other gates as "
        "evaluated); "
        "the probability of being cheapest counts only the offers acceptable in each draw, and each offer's "
        "probability of failing a gate is shown."
        + (
            f" Signed vendors with delivered evidence ({', '.join(sorted(posteriors))}) are drawn from their "
            "posteriors instead: throughput as the "
            "evaluated figure x exp(s z), z standard normal, s the posterior sd of log(delivered / promised), so the "
            "ratio drawn is the "
            "log-normal posterior; availability and the share of requests served from their Beta posteriors "
            "(docs/actuals.md)."
            if posteriors
            else ""
        )
    )


# --- one-at-a-time sensitivity --------------------------------------------------------------------


def number_or_none(value: float) -> float | None:
    return None if np.isnan(value) else float(value)
