"""Synthetic workspaces of N offers for benchmarks: the example's procure.yaml, grades, curves and
index, plus N generated offers drawn (seeded) around the example's kinds and prices."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
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
MANAGED = {
    "hardware_repair",
    "firmware_drivers",
    "os_patching",
    "fabric_isolation",
    "health_checks",
    "scheduler",
    "monitoring",
}
CURVES = ("b200-dynamo-trt-fp4", "b200-dynamo-sglang-fp4", "b200-trt-fp8", "b200-sglang-fp8")


def offer(i: int, rng: random.Random) -> dict:
    kind = rng.choice(["managed_cluster", "managed_cluster", "bare_metal", "managed_serving"])
    if kind == "bare_metal":
        owners = {job: ("provider" if job == "hardware_repair" else "customer") for job in JOBS}
    elif kind == "managed_serving":
        owners = {job: ("shared" if job == "release_validation" else "provider") for job in JOBS}
    else:
        owners = {job: ("provider" if job in MANAGED else rng.choice(["customer", "shared"])) for job in JOBS}
    gpus = rng.choice([64, 128, 256, 512, 1024])
    return {
        "id": f"synthetic-{i:05d}",
        "vendor": f"Synthetic Vendor {i:05d}",
        "received": "2026-11-01",
        "valid_until": "2027-06-30",
        "region": rng.choice(["us-east", "us-west", "eu-west"]),
        "gpu": "B200",
        "gpus": gpus,
        "max_gpus": gpus * rng.choice([1, 2, 4]),
        "term_months": rng.choice([6, 12, 24, 36]),
        "pricing": {
            "currency": rng.choice(["USD", "USD", "EUR"]),
            "gpu_hour": round(rng.uniform(2.9, 6.7), 2),
            "discount": rng.choice([0.0, 0.05]),
            "prepay_fraction": rng.choice([0.0, 0.25]),
            "fees": [
                {"name": "onboarding", "once": rng.choice([0, 20000, 40000])},
                {"name": "support", "gpu_hour": 0.03},
            ],
        },
        "service": {
            "kind": kind,
            "sla": {
                "availability": rng.choice([0.99, 0.995, 0.999]),
                "node_replacement_hours": rng.choice([12, 24, 48, 72]),
            },
            "attestations": rng.choice([["soc2_type2"], ["iso27001"], ["soc2_type2", "iso27001"], []]),
            "tenant_isolation": rng.random() > 0.1,
            "isolated_monitoring": rng.random() > 0.1,
        },
        "responsibilities": owners,
        "performance": {"reference": rng.choice(CURVES)},
    }


def make_workspace(target: Path, count: int, seed: int = 7) -> Path:
    """Write a workspace of `count` generated offers into `target` (replaced if present)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    # The generated offers carry no rating evidence: the workspace states the unrated haircut at the middle band's
    # 0.99 (not stated, the Participation Ribbon's 0.965 would put every one of them below the 98% availability
    # minimum), so that the benchmarks time evaluations, plans and reports with acceptable offers in them.
    config = (ROOT / "procure.yaml").read_text()
    head, rest = config.split("\n  reliability:", 1)
    line, rest = rest.split("\n", 1)
    (target / "procure.yaml").write_text(f"{head}\n  reliability:{line}\n    unrated: 0.99\n{rest}")
    for folder in ("grades", "performance", "market"):
        shutil.copytree(ROOT / folder, target / folder)
    offers = target / "offers"
    offers.mkdir()
    rng = random.Random(seed)
    for i in range(count):
        data = offer(i, rng)
        (offers / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return target
