"""Many offers: every held contract in the plan whatever the shortlist keeps, and near-copies (offers identical but for
their prices, from other vendors) left out of the program only where no plan over every offer is cheaper."""

from __future__ import annotations

import random
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pytest
import yaml
from planws import config, offer, write

from procure.analysis.plan import make, make_plan
from procure.analysis.plan.classes import Reduction
from procure.io.workspace import load_workspace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from rfp import make_market  # noqa: E402

AS_OF = date(2026, 11, 29)


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


@pytest.mark.slow
def test_every_held_contract_is_in_the_plan_when_the_shortlist_is_smaller(tmp_path):
    # The example cycled to 36 offers, every copy of Keel's offer keeping its signed contract: 3 held contracts
    # (Keel's offer and its 2 copies), more than the shortlist's 2.
    root = make_market(tmp_path / "ws", 36, spread=0.0, keep_signed=True)
    cfg = yaml.safe_load((root / "procure.yaml").read_text())
    cfg["plan"]["max_candidates"] = 2
    cfg["demand"]["scenarios"] = 60  # a lighter solve: the held contracts are what is checked
    (root / "procure.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    signed = yaml.safe_load((ROOT / "offers" / "keel-b200-mc.yaml").read_text())["contract"]["signed"]
    held_offers = sorted(p.stem for p in (root / "offers").glob("keel-b200-mc*.yaml"))
    assert len(held_offers) == 3

    result = make_plan(load_workspace(root), AS_OF)

    assert sorted(h.offer for h in result.held) == held_offers
    assert all(h.gpus == signed["gpus"] for h in result.held)
    assert result.held_gpus == 3 * signed["gpus"]
    # the shortlist was used, and the plan is not below the relaxation's bound over every offer
    assert result.solver.bound_gap is not None and result.solver.bound_gap >= 0
    assert any("chose among the" in n for n in result.notes)


def _market(rng: random.Random, share: float) -> tuple[dict, list[dict]]:
    """A small market of three offers (a commitment with a tier, on-demand capacity, per-token) and near-copies of
    each from other vendors at prices x U(0.85, 1.15)."""
    cfg = config(plan={"max_vendor_share": share, "mip_gap": 0.0})
    cfg["demand"]["paths"] = [
        {"name": "low", "factor": 0.6, "probability": 0.3},
        {"name": "mid", "factor": 1.0, "probability": 0.4},
        {"name": "high", "factor": 2.0, "probability": 0.3},
    ]
    bases = [
        lambda f, i: offer(
            f"commit-{i}", gpus=40, max_gpus=150, gpu_hour=round(3.0 * f, 4), vendor=f"Commit vendor {i}"
        ),
        lambda f, i: offer(
            f"burst-{i}",
            gpus=0,
            burst={"gpu_hour": round(5.0 * f, 4), "max_gpus": 80},
            vendor=f"Burst vendor {i}",
            term_months=1,
        ),
        lambda f, i: offer(
            f"tokens-{i}",
            per_mtok={"input": 0.0, "output": round(6.0 * f, 4)},
            vendor=f"Token vendor {i}",
            term_months=1,
        ),
    ]
    offers = [make(rng.uniform(0.85, 1.15), i) for make in bases for i in range(6)]
    return cfg, offers


@pytest.mark.parametrize(("seed", "share"), [(1, 1.0), (2, 1.0), (3, 0.6), (4, 0.6)])
def test_the_program_without_near_copies_plans_as_the_whole_one(tmp_path, monkeypatch, seed, share):
    cfg, offers = _market(random.Random(seed), share)
    ws = load_workspace(write(tmp_path / "ws", cfg, offers))
    seen: list[Reduction] = []
    reduce = make.reduce_near_copies

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = reduce(*args, **kwargs)
        seen.append(found)
        return found

    monkeypatch.setattr(make, "reduce_near_copies", spy)
    reduced = make_plan(ws, AS_OF)
    # peak demand 200 GPUs' worth: commitments of at most 150 carry it in 2 (3 kept of 6), on-demand of 80 in 3
    # (4 kept), per-token capacity without limits in 1 (2 kept); a 60% vendor share caps each at 120: 2, 3, 2
    kept = {1.0: 3 + 4 + 2, 0.6: 3 + 4 + 3}[share]
    assert len(seen[0].keep) == kept
    assert seen[0].dropped == 18 - kept
    assert any("near-copies" in n for n in reduced.notes)

    monkeypatch.setattr(make, "reduce_near_copies", lambda cands, *_: Reduction(list(range(len(cands))), []))
    whole = make_plan(ws, AS_OF)
    assert not any("near-copies" in n for n in whole.notes)
    assert reduced.expected_cost_per_task == pytest.approx(whole.expected_cost_per_task, rel=1e-7)
    assert reduced.cvar == pytest.approx(whole.cvar, rel=1e-6)


def test_a_near_copy_dearer_in_one_figure_and_cheaper_in_another_is_kept(tmp_path, monkeypatch):
    # Six copies of one commitment, each cheaper by the hour and dearer in fixed fees than the one before: no copy is
    # undercut in every money figure by another, so the program keeps them all.
    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0})
    offers = [
        offer(
            f"c-{i}",
            gpus=40,
            max_gpus=150,
            gpu_hour=3.0 - 0.1 * i,
            vendor=f"V{i}",
            pricing={"fees": [{"name": "support", "monthly": 1000.0 * i}]},
        )
        for i in range(6)
    ]
    seen: list[Reduction] = []
    reduce = make.reduce_near_copies
    monkeypatch.setattr(make, "reduce_near_copies", lambda *a: seen.append(reduce(*a)) or seen[-1])
    make_plan(load_workspace(write(tmp_path / "ws", cfg, offers)), AS_OF)
    assert seen[0].dropped == 0 and len(seen[0].keep) == 6


def test_a_plan_that_uses_every_kept_copy_is_solved_again_with_more(tmp_path, monkeypatch):
    # Keep one member of each class only: the plan uses it, so the program is solved again keeping two, then four,
    # until the plan leaves a kept member unused; the plan is then the whole program's.
    cfg, offers = _market(random.Random(3), 0.6)
    ws = load_workspace(write(tmp_path / "ws", cfg, offers))
    monkeypatch.setattr(make, "reduce_near_copies", lambda cands, *_: Reduction(list(range(len(cands))), []))
    whole = make_plan(ws, AS_OF)
    monkeypatch.undo()
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")
    from procure.analysis.plan import classes

    monkeypatch.setattr(classes, "class_keep", lambda *_: 1)
    scales: list[int] = []
    reduce = classes.reduce_near_copies

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = reduce(*args, **kwargs)
        scales.append(found.scale)
        return found

    monkeypatch.setattr(classes, "reduce_near_copies", spy)
    reduced = make_plan(ws, AS_OF)
    assert scales[-1] > 1  # solved again with more kept
    assert reduced.expected_cost_per_task == pytest.approx(whole.expected_cost_per_task, rel=1e-7)


def _whole(cands, *_):  # type: ignore[no-untyped-def]
    return Reduction(list(range(len(cands))), [])


@pytest.mark.slow
@pytest.mark.parametrize(("source", "count"), [(ROOT, 48), (ROOT / "tests" / "data" / "real_offers", 50)])
def test_near_copies_of_slightly_other_capacities_plan_as_the_whole_program(tmp_path, monkeypatch, source, count):
    # RFP-like markets (benchmarks/rfp.py): each copy's vendor draws its own availability, so copies deliver capacities
    # about 0.1% apart and are a class only with capacities compared as well as prices. The reduced program (under the
    # share rule raised by that spread, where the workspace has one) plans at the whole program's cost and CVaR.
    root = make_market(tmp_path / "ws", count, source=source)
    cfg = yaml.safe_load((root / "procure.yaml").read_text())
    cfg.setdefault("plan", {})["mip_gap"] = 0.0
    cfg.setdefault("demand", {})["scenarios"] = 30
    cfg["demand"]["months"] = 12  # half the example's horizon: a program quicker to prove optimal
    (root / "procure.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    ws = load_workspace(root)
    seen: list[Reduction] = []
    reduce = make.reduce_near_copies
    monkeypatch.setattr(make, "reduce_near_copies", lambda *a, **k: seen.append(reduce(*a, **k)) or seen[-1])
    reduced = make_plan(ws, AS_OF)
    assert seen[0].dropped > 0 and 0 < seen[0].spread < 0.01
    monkeypatch.setattr(make, "reduce_near_copies", _whole)
    whole = make_plan(ws, AS_OF)
    assert reduced.expected_cost_per_task == pytest.approx(whole.expected_cost_per_task, rel=1e-7)
    assert reduced.cvar == pytest.approx(whole.cvar, rel=1e-6)


def test_the_capacity_spread_raises_the_share_the_reduced_program_is_solved_under():
    from procure.analysis.plan.classes import capacity_spread, share_allowed
    from procure.model.inputs import PlanConfig

    # node tasks 100, 100.1 and 99.9 a month, the same room: the largest exceeds the smallest by 0.2/99.9
    rows = np.array([[100.0, 50.0], [100.1, 50.0], [99.9, 50.0]])
    assert capacity_spread(rows) == pytest.approx(0.2 / 99.9, rel=1e-12)
    assert capacity_spread(np.array([[100.0, np.inf], [100.0, np.inf]])) == 0.0
    assert capacity_spread(np.array([[0.0], [1.0]])) == np.inf
    policy = PlanConfig(max_vendor_share=0.7)
    reduced = Reduction([0, 1], [(3, 2)], [[0, 1]], spread=0.002)
    assert share_allowed(policy, reduced).max_vendor_share == pytest.approx(0.7 * 1.002, rel=1e-12)
    assert share_allowed(policy, Reduction([0, 1], [(3, 2)], [[0, 1]])) is policy  # capacities equal: as stated
    assert share_allowed(PlanConfig(max_vendor_share=1.0), reduced).max_vendor_share == 1.0
