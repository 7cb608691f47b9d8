"""Small plan workspaces written on the fly, with round numbers that can be worked out by hand.

Every GPU delivers 300 output tok/s at the target, 1,000 output tokens a task, and availability,
success rate and utilization are all 1, so one GPU-hour serves 300 x 3600 / 1000 = 1,080 tasks and
one GPU-month 788,400 (every factor of `uncertainty:` is stated at 1, so the point evaluation, which takes each
drawn factor at its mean, reads 300, availability 1 and utilization 1 as they are, and the expected cost, the mean of
the draws, is that figure). Staff, software and the cost of capital are zero unless a test sets them, so
a GPU-hour costs exactly its price and present values are plain sums.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

TASKS_PER_GPU_HOUR = 1080.0
TASKS_PER_GPU_MONTH = TASKS_PER_GPU_HOUR * 730

JOBS = (
    "hardware_repair",
    "firmware_drivers",
    "os_patching",
    "fabric_isolation",
    "health_checks",
    "scheduler",
    "storage",
    "monitoring",
    "incident_response",
    "serving_stack",
    "release_validation",
    "capacity_planning",
)


def config(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "currency": "USD",
        "as_of": "2026-12-01",
        "workload": {
            "name": "plan-test",
            "input_tokens": 1000,
            "output_tokens": 1000,
            "interactivity": 100,
            "success_rate": 1.0,
            "utilization": 1.0,
            "tasks_per_month": 100 * TASKS_PER_GPU_MONTH,
        },
        "assumptions": {
            "fte_cost_year": 200000,
            "cost_of_capital": 0.0,
            "software_gpu_hour": 0.0,
            "fx": {"EUR": 1.25},
            "reliability": {"unrated": 1.0, "bands": [[0, 1.0]]},
            "jobs": {job: {"fte_fixed": 0.0, "fte_per_1000_gpus": 0.0} for job in JOBS},
        },
        "policy": {"acceptable_grades": ["P-MC", "P-MS"], "min_availability": 0.99},
        "demand": {
            "months": 12,
            "start": 100 * TASKS_PER_GPU_MONTH,
            "growth": 0.0,
            "paths": [
                {"name": "low", "factor": 1.0, "probability": 0.5},
                {"name": "high", "factor": 2.0, "probability": 0.5},
            ],
        },
        "plan": {"max_vendor_share": 1.0, "mip_gap": 0.0},
        # Stated, so that 300 tok/s, availability 1 and utilization 1 are what the point evaluation reads: every
        # throughput factor's mean is 1, and so are the availability and utilization factors' (defaults 0.99667,
        # 0.98333).
        "uncertainty": {
            "throughput": {
                source: {"triangular": [1.0, 1.0, 1.0]} for source in ("measured", "reference", "vendor_claim")
            },
            "production": {"triangular": [1.0, 1.0, 1.0]},
            "availability": {"triangular": [1.0, 1.0, 1.0]},
            "utilization": {"triangular": [1.0, 1.0, 1.0]},
            # and nothing else drawn: the expected cost (the mean of the draws) is the stated one, so the plan's
            # figures are worked out by hand (tests/test_expected.py covers what the draws add)
            **{name: {"triangular": [1.0, 1.0, 1.0]} for name in ("stack", "fte_cost", "index", "fx", "demand")},
        },
    }
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def offer(
    offer_id: str,
    *,
    gpus: int = 0,
    max_gpus: int | None = None,
    gpu_hour: float | None = None,
    burst: dict | None = None,
    node_gpus: int = 1,
    term_months: int = 12,
    currency: str = "USD",
    vendor: str | None = None,
    per_mtok: dict | None = None,
    **extra: Any,
) -> dict[str, Any]:
    pricing: dict[str, Any] = {"currency": currency}
    if gpu_hour is not None:
        pricing["gpu_hour"] = gpu_hour
    if burst is not None:
        pricing["burst"] = burst
    if per_mtok is not None:
        pricing["per_mtok"] = per_mtok
    pricing.update(extra.pop("pricing", {}))
    data: dict[str, Any] = {
        "id": offer_id,
        "vendor": vendor or f"Vendor {offer_id}",
        "received": "2026-11-01",
        "valid_until": "2027-06-30",
        "region": "us-east",
        "gpu": "B200",
        "term_months": term_months,
        "pricing": pricing,
        "service": {
            "kind": "managed_serving" if per_mtok is not None else "managed_cluster",
            "sla": {"availability": 1.0, "node_replacement_hours": 24},
            "attestations": ["soc2_type2"],
            "tenant_isolation": True,
            "isolated_monitoring": True,
            "node_gpus": node_gpus,
        },
        "responsibilities": {job: "provider" for job in JOBS},
        # a per-token offer states the speed it serves at (else it fails the latency gate as "not stated")
        "performance": {"points": [[50, 400], [100, 300], [150, 100]], "points_source": "measured"}
        if per_mtok is None
        else {"interactivity": 100},
    }
    if per_mtok is None:
        data["gpus"] = gpus
        if max_gpus is not None:
            data["max_gpus"] = max_gpus
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


GRADES = [
    {
        "id": "P-MC",
        "name": "Plan test cluster",
        "rank": 2,
        "gpu": "B200",
        "expect": "A managed cluster.",
        "requires": {"service_kinds": ["managed_cluster"]},
    },
    {
        "id": "P-MS",
        "name": "Plan test serving",
        "rank": 1,
        "gpu": "B200",
        "expect": "Managed serving.",
        "requires": {"service_kinds": ["managed_serving"]},
    },
]


def write(root: Path, cfg: dict[str, Any], offers: list[dict[str, Any]], names: list[str] | None = None) -> Path:
    """Write a workspace; `names` gives the offer file names (default: the ids)."""
    (root / "offers").mkdir(parents=True, exist_ok=True)
    (root / "grades").mkdir(exist_ok=True)
    (root / "performance").mkdir(exist_ok=True)
    (root / "procure.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    for grade in GRADES:
        (root / "grades" / f"{grade['id']}.yaml").write_text(yaml.safe_dump(grade, sort_keys=False))
    for i, data in enumerate(offers):
        name = names[i] if names else data["id"]
        (root / "offers" / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root
