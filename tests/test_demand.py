"""Demand scenarios: the trend, the lognormal spread after 12 months, explicit paths, the seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procure.model.demand import horizon_months, scenarios
from procure.model.inputs import WorkspaceConfig

WORKLOAD = {
    "input_tokens": 1000,
    "output_tokens": 1000,
    "interactivity": 100,
    "success_rate": 0.9,
    "tasks_per_month": 1e6,
}


def cfg(demand: dict | None = None, **extra) -> WorkspaceConfig:
    data = {"workload": WORKLOAD, **extra}
    if demand is not None:
        data["demand"] = demand
    return WorkspaceConfig.model_validate(data)


def test_sampled_paths_follow_the_trend_on_average():
    s = scenarios(cfg({"months": 24, "start": 100.0, "growth": 0.02, "volatility": 0.3, "scenarios": 20000}))
    trend = 100.0 * 1.02 ** np.arange(24)
    assert s.demand[:, 0] == pytest.approx(np.full(20000, 100.0))  # month 1 is known
    # the mean-corrected lognormal keeps the expected level on the trend (standard error ~0.3%)
    assert s.demand.mean(axis=0) == pytest.approx(trend, rel=0.02)


def test_volatility_is_the_sd_of_the_log_level_after_12_months():
    s = scenarios(cfg({"months": 25, "start": 1.0, "volatility": 0.3, "scenarios": 20000}))
    assert np.log(s.demand[:, 12]).std() == pytest.approx(0.3, rel=0.03)  # month 13: 12 monthly steps
    assert np.log(s.demand[:, 24]).std() == pytest.approx(0.3 * math.sqrt(2), rel=0.03)  # sqrt(time)


def test_same_seed_same_paths_and_another_seed_others():
    a = scenarios(cfg({"months": 6, "scenarios": 50}))
    b = scenarios(cfg({"months": 6, "scenarios": 50}))
    c = scenarios(cfg({"months": 6, "scenarios": 50}, uncertainty={"seed": 8}))
    assert np.array_equal(a.demand, b.demand) and not np.array_equal(a.demand, c.demand)
    assert a.seed == 7


def test_explicit_paths_are_factors_on_the_trend():
    s = scenarios(
        cfg(
            {
                "months": 3,
                "start": 10.0,
                "growth": 0.1,
                "paths": [
                    {"name": "low", "factor": 0.5, "probability": 0.25},
                    {"name": "base", "factor": 1.0, "probability": 0.75},
                ],
            }
        )
    )
    assert s.names == ["low", "base"] and list(s.probability) == [0.25, 0.75]
    assert s.demand.ravel() == pytest.approx([5.0, 5.5, 6.05, 10.0, 11.0, 12.1])


def test_defaults_come_from_the_workload_and_the_horizon():
    assert horizon_months(cfg()) == 24
    assert horizon_months(cfg(horizon={"months": 36})) == 36
    assert horizon_months(cfg({"months": 6}, horizon={"months": 36})) == 6
    s = scenarios(cfg({"months": 2, "volatility": 0.0, "scenarios": 3}))
    assert s.demand.tolist() == [[1e6, 1e6]] * 3


@settings(max_examples=40, deadline=None)
@given(
    months=st.integers(1, 60),
    start=st.floats(1e-3, 1e12),
    growth=st.floats(-0.5, 1.0),
    volatility=st.floats(0, 3),
    count=st.integers(1, 200),
)
def test_any_valid_demand_gives_finite_non_negative_paths(months, start, growth, volatility, count):
    s = scenarios(
        cfg({"months": months, "start": start, "growth": growth, "volatility": volatility, "scenarios": count})
    )
    assert s.demand.shape == (count, months)
    assert np.isfinite(s.demand).all() and (s.demand >= 0).all()
    assert s.probability.sum() == pytest.approx(1.0)
