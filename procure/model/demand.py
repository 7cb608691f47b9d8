"""Demand scenarios for the plan: tasks per month over the planning horizon.

A trend (start x (1 + growth)^(month - 1)) times a random level: sampled lognormal paths (a random
walk in the logarithm whose standard deviation after 12 months is `volatility`, growing with the
square root of time, mean-corrected so that the expected level is the trend), seeded by
`uncertainty.seed`; or explicit paths, each a factor on the trend with its probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from procure.errors import InputError, Problem
from procure.model.inputs import DemandConfig, WorkspaceConfig

DEFAULT_MONTHS = 24
DEFAULT_CASH_MONTHS = 36  # a cash flow with no demand stated: a three-year view, the longest usual term


@dataclass(frozen=True)
class Scenarios:
    """Demand per scenario and month (successful tasks wanted), with each scenario's probability."""

    names: list[str]
    probability: np.ndarray  # (S,), sums to 1
    demand: np.ndarray  # (S, H) tasks per month
    sampled: bool
    months: int
    start: float
    growth: float
    volatility: float | None
    seed: int | None

    @property
    def count(self) -> int:
        return len(self.names)


def demand_config(config: WorkspaceConfig) -> DemandConfig:
    return config.demand or DemandConfig()


def surface_horizon(config: WorkspaceConfig) -> int | None:
    """The horizon the offers' cash flows are counted over (cashflow, compare --horizon, the reports' horizon
    figures), when horizon.months asks for one: the plan's own, demand.months, where `demand:` states it, so that
    one workspace has one horizon on every surface; else horizon.months (None: not asked for)."""
    if config.horizon.months is None:
        return None
    return (config.demand.months if config.demand is not None else None) or config.horizon.months


def cash_horizon(config: WorkspaceConfig) -> int:
    """The horizon a cash flow is counted over when no option asks for another (`procure cashflow`, the workbook's
    horizon sheet): with `demand:`, the plan's (horizon_months), so that the cash flow and the plan count the same
    months whether or not horizon.months is stated; else horizon.months, else 36 (DEFAULT_CASH_MONTHS)."""
    if config.demand is not None:
        return horizon_months(config)
    return config.horizon.months or DEFAULT_CASH_MONTHS


def horizon_months(config: WorkspaceConfig) -> int:
    """demand.months, else horizon.months, else 24."""
    spec = demand_config(config)
    return spec.months or config.horizon.months or DEFAULT_MONTHS


def expected_demand(config: WorkspaceConfig, months: int) -> list[float] | None:
    """The demand every surface counts, months 1..`months`: the scenarios' expected level, the trend start x (1 +
    growth)^(month - 1) (sampled paths are mean-corrected; explicit paths put their expected factor on it), so that the
    cash flow of one offer and the plan count one demand; without `demand:`, workload.tasks_per_month every month.
    None: no demand stated (every billed GPU is taken as used)."""
    spec = config.demand
    if spec is None:
        flat = config.workload.tasks_per_month
        return None if flat is None else [float(flat)] * months
    start = spec.start if spec.start is not None else config.workload.tasks_per_month
    if start is None:
        return None
    factor = 1.0
    if spec.paths is not None:
        factor = sum(p.factor * p.probability for p in spec.paths) / sum(p.probability for p in spec.paths)
    return [start * factor * (1 + spec.growth) ** month for month in range(months)]


def scenarios(config: WorkspaceConfig, count: int | None = None) -> Scenarios:
    """The demand scenarios procure.yaml describes (`count` replaces demand.scenarios)."""
    spec = demand_config(config)
    months = horizon_months(config)
    start = spec.start if spec.start is not None else config.workload.tasks_per_month
    if start is None:
        raise InputError(
            [
                Problem(
                    "procure.yaml",
                    None,
                    "demand.start",
                    "required when workload.tasks_per_month is absent (tasks in month 1)",
                )
            ]
        )
    trend = start * (1 + spec.growth) ** np.arange(months)
    if spec.paths is not None:
        factors = np.array([p.factor for p in spec.paths])
        probability = np.array([p.probability for p in spec.paths])
        return Scenarios(
            names=[p.name for p in spec.paths],
            probability=probability / probability.sum(),
            demand=factors[:, None] * trend[None, :],
            sampled=False,
            months=months,
            start=start,
            growth=spec.growth,
            volatility=None,
            seed=None,
        )
    n = count or spec.scenarios
    seed = config.uncertainty.seed
    rng = np.random.default_rng(seed)
    step = spec.volatility / math.sqrt(12)  # sd of one month's change in the log level
    shocks = rng.standard_normal((n, months - 1)) * step - step * step / 2  # E[exp(shock)] = 1
    log_level = np.concatenate([np.zeros((n, 1)), np.cumsum(shocks, axis=1)], axis=1)
    return Scenarios(
        names=[f"s{i + 1}" for i in range(n)],
        probability=np.full(n, 1.0 / n),
        demand=trend[None, :] * np.exp(log_level),
        sampled=True,
        months=months,
        start=start,
        growth=spec.growth,
        volatility=spec.volatility,
        seed=seed,
    )


def from_as_of(scen: Scenarios, share: float) -> Scenarios:
    """The scenarios from the as-of date: the first month's demand is the share of the month left
    (procure.model.calendar.share_from); the plan does not buy for days already past."""
    if share >= 1:
        return scen
    demand = scen.demand.copy()
    demand[:, 0] *= share
    return replace(scen, demand=demand)
