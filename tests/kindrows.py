"""One offer's cost-model inputs and a plain cost model, for the tests of each offer kind (tests/test_kind_*.py).

The offer: 100 GPUs for 12 months in the workspace currency (fx 1), no fees, prepayment or software, every job the
provider's (no staff cost), 1,000 output tok/s/GPU at the target, SLA 0.99 at a reliability factor of 1, quality 1.
The workload: 8,000 input and 1,000 output tokens a task, success 0.9, utilization 0.8, half the input tokens
served from the prompt cache. So a GPU-hour at full use yields 1000 x 3600 / 1000 x 0.99 x 0.9 x 0.8 = 2,566.08
successful tasks.
"""

from __future__ import annotations

import math

import numpy as np

from procure.model.costing import INPUT_COLUMNS, CostModel, cost_arrays
from procure.model.inputs import OPERATING_JOBS, Assumptions, Workload

TASKS_PER_GPU_HOUR = 1000 * 3600 / 1000 * 0.99 * 0.9 * 0.8  # 2,566.08


def cost_model(tasks_per_month: float | None = None) -> CostModel:
    workload = Workload(
        input_tokens=8000,
        output_tokens=1000,
        interactivity=100,
        success_rate=0.9,
        utilization=0.8,
        tasks_per_month=tasks_per_month,
        cached_input_share=0.5,
    )
    zero = {"fte_fixed": 0.0, "fte_per_1000_gpus": 0.0}
    assumptions = Assumptions(
        fte_cost_year=219000,
        shared_weight=0.5,
        cost_of_capital=0.10,
        software_gpu_hour=0.0,
        self_operated_reliability=0.98,
        jobs={job: dict(zero) for job in OPERATING_JOBS},
    )
    return CostModel(workload, assumptions)


def costs(tasks_per_month: float | None = None, **values: object) -> dict[str, float]:
    """The cost model's outputs for one offer: the plain offer above with `values` in its input columns."""
    out = cost_arrays(columns(**values), cost_model(tasks_per_month))
    return {name: float(value[0]) for name, value in out.items()}


def columns(**values: object) -> dict[str, np.ndarray]:
    """The cost model's input columns for one offer: the plain offer above with `values` in its input columns."""
    row: dict[str, object] = {name: math.nan for name in INPUT_COLUMNS}
    row.update(
        basis="gpu_hour",
        fx=1.0,
        discount=0.0,
        gpus=100.0,
        max_gpus=100.0,
        term_months=12.0,
        fees_once=0.0,
        fees_monthly=0.0,
        fees_gpu_hour=0.0,
        fees_per_tb_month=0.0,
        prepay_fraction=0.0,
        software_gpu_hour=0.0,
        throughput=1000.0,
        sla_availability=0.99,
        reliability_factor=1.0,
        quality_pass_rate=1.0,
        escalation=1.0,
        **{f"owner_{job}": "provider" for job in OPERATING_JOBS},
    )
    unknown = set(values) - set(INPUT_COLUMNS)
    assert not unknown, f"not input columns: {unknown}"
    row.update(values)
    return {name: np.array([value], dtype=object if isinstance(value, str) else float) for name, value in row.items()}


def problems(check, offer, has_index: bool = True) -> list[tuple[tuple, str]]:
    """What a kind's checks report for an offer: (field path, message) pairs."""
    found: list[tuple[tuple, str]] = []
    check(offer, lambda loc, message: found.append((loc, message)), has_index)
    return found


def example_offer(name: str, **changes: object):
    """An offer of the example workspace (offers/<name>.yaml) with top-level `changes` (None removes a key)."""
    from pathlib import Path

    import yaml

    from procure.model.inputs import Offer

    data = yaml.safe_load((Path(__file__).parents[1] / "offers" / f"{name}.yaml").read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return Offer.model_validate(data)
