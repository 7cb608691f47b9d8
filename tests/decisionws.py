"""A small plan workspace whose recommendation can be worked out by hand, for the tests that read it
from every surface (terminal, JSON, both reports, the hedge).

Every GPU serves 1,080 tasks an hour (tests/planws.py). Demand is 100 GPUs' worth in the low path and
200 in the high one, each with probability 1/2, for 12 months. Alpha commits at 3.00 a GPU-hour for 12
months, at most 100 GPUs; Bravo has no commitment, only on-demand capacity at 5.00 a GPU-hour.

- The plan commits 100 Alpha GPUs for months 1-12 (a committed GPU costs 3.00 every hour and saves
  5.00 only in the high path, 2.50 expected; a GPU fewer costs 5.00 instead of 3.00 in both paths)
  and buys the rest on demand from Bravo: up to 100 GPUs.
- Expected cost an hour 0.5 x 300 + 0.5 x (300 + 500) = 550 for 0.5 x 108,000 + 0.5 x 216,000 =
  162,000 tasks: 3.3951 per 1,000 tasks (no cost of capital, so present values are plain sums).
- Best single offer on the same scenarios: Alpha alone cannot serve the high path; Bravo alone costs
  5.00 / 1,080 = 4.6296 per 1,000 tasks, so the plan is 1 - 550/750 = 26.67% below it.
- Spend over the 12 months 550 x 730 x 12 = 4,818,000; Alpha's commitment 3 x 100 x 730 x 12 = 2,628,000.
- The decision deadline is the as-of date (2026-12-01): Alpha states no delivery, so the plan counts on it from
  then, before its valid_until, 2027-03-31 (Bravo's is later).
- The hedge: Bravo's expected on-demand hours, 0.5 x 100 x 730 = 36,500 a month, laddered 75% of months
  1-3 (82,125 GPU-hours: 113 contracts of 730, rounded half up from 112.5), 50% of months 4-6 (75) and
  25% of months 7-12 (75): 263 contracts for months 1-12.
"""

from __future__ import annotations

from pathlib import Path

import planws

INDEX = "date,price\n2026-08-31,4.90\n2026-09-30,5.00\n2026-10-31,5.00\n"


def write(root: Path, *, high: float = 2.0, today: float | None = 0.004, vendor_share: float | None = None) -> Path:
    """`vendor_share`: plan.max_vendor_share (0.4 with the two vendors: no plan, the vendor share refused)."""
    cfg = planws.config(
        demand={
            "months": 12,
            "start": 100 * planws.TASKS_PER_GPU_MONTH,
            "growth": 0.0,
            "paths": [
                {"name": "low", "factor": 1.0, "probability": 0.5},
                {"name": "high", "factor": high, "probability": 0.5},
            ],
        },
        hedge={"horizon_months": 12, "contract_gpu_hours": 730},
    )
    if vendor_share is not None:
        cfg["plan"]["max_vendor_share"] = vendor_share
    if today is not None:
        cfg["market"] = {"own": [{"cost_per_task": today, "date": "2026-10-31"}]}
    offers = [
        planws.offer(
            "alpha",
            vendor="Alpha Compute",
            gpus=0,
            max_gpus=100,
            gpu_hour=3.0,
            term_months=12,
            valid_until="2027-03-31",
        ),
        planws.offer(
            "bravo",
            vendor="Bravo Cloud",
            gpus=0,
            burst={"gpu_hour": 5.0, "max_gpus": 300},
            term_months=1,
            valid_until="2027-05-31",
        ),
    ]
    planws.write(root, cfg, offers)
    (root / "market").mkdir(exist_ok=True)
    (root / "market" / "index.csv").write_text(INDEX)
    return root
