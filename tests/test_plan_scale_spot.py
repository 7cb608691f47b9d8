"""Spot near-copies (offers identical but for their prices, from other vendors) left out of the program only where no
plan over every offer is cheaper (docs/plan.md, "Near-copies")."""

from __future__ import annotations

import random
from datetime import date

import pytest
from planws import config, offer, write

from procure.analysis.plan import make, make_plan
from procure.analysis.plan.classes import Reduction
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)
# 6 interruptions a node-month x 73 minutes lost each: 1% of the billed time (tests/test_plan_spot.py)
SPOT_SERVICE = {"preemptible": True, "interruptions_per_month": 6, "restart_minutes": 73}


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


def _spot_market(seed: int, share: float) -> tuple[dict, list[dict]]:
    """Demand of 100 or 200 GPUs' worth; a commitment at 4 per GPU-hour, and eight near-copies of a spot offer of at
    most 50 GPUs at 2 x U(0.85, 1.15), each from its own vendor."""
    rng = random.Random(seed)
    cfg = config(plan={"max_vendor_share": share, "mip_gap": 0.0, "max_spot_share": 0.3})
    offers = [offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0)]
    for k in range(8):
        price = round(2.0 * rng.uniform(0.85, 1.15), 4)
        offers.append(offer(f"spot{k}", gpus=0, max_gpus=50, gpu_hour=price, term_months=1, service=SPOT_SERVICE))
    return cfg, offers


@pytest.mark.parametrize(("seed", "share"), [(1, 1.0), (2, 1.0), (3, 0.7)])
def test_spot_near_copies_are_left_out_and_the_plan_is_the_whole_programs(tmp_path, monkeypatch, seed, share):
    cfg, offers = _spot_market(seed, share)
    ws = load_workspace(write(tmp_path / "ws", cfg, offers))
    seen: list[Reduction] = []
    reduce = make.reduce_near_copies
    monkeypatch.setattr(make, "reduce_near_copies", lambda *a, **k: seen.append(reduce(*a, **k)) or seen[-1])
    reduced = make_plan(ws, AS_OF)
    # The peak month (200 GPUs' worth) needs at most ceil(200 / 49.5) = 5 spot copies of 50 GPUs losing 1% to
    # restarts (a 70% vendor share caps none of them), and one more as margin: 6 of the 8 kept, the two dearest left
    # out (each undercut by the six cheaper ones).
    assert seen[0].classes == [(8, 6)]
    by_price = [o["id"] for o in sorted(offers[1:], key=lambda o: o["pricing"]["gpu_hour"])]
    left_out = {reduced.candidates[i] for i in range(len(reduced.candidates)) if i not in seen[0].keep}
    assert left_out == set(by_price[6:])
    assert any("near-copies" in n for n in reduced.notes)

    monkeypatch.setattr(make, "reduce_near_copies", lambda cands, *_a, **_k: Reduction(list(range(len(cands))), []))
    whole = make_plan(ws, AS_OF)
    assert not any("near-copies" in n for n in whole.notes)
    assert reduced.expected_cost_per_task == pytest.approx(whole.expected_cost_per_task, rel=1e-7)
    assert {(line.offer, line.role, line.gpus) for line in reduced.plan} == {
        (line.offer, line.role, line.gpus) for line in whole.plan
    }
