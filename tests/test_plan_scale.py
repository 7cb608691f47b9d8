"""A market whose whole program is too large to hold: planned over its shortlist, with what is not proven said
(docs/plan.md, "No offer is dropped unseen")."""

from __future__ import annotations

from datetime import date

import pytest
from planws import config, offer, write

from procure.analysis.plan import make, make_plan, program
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)


@pytest.fixture(autouse=True)
def _solved_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")


def test_a_market_too_large_to_hold_whole_is_planned_over_its_shortlist(tmp_path, monkeypatch):
    # Twelve offers, each of its own size (no two near-copies), a shortlist of four, and a whole-program limit below
    # the whole program's size but above the shortlist's: the plan is made, and the check over every offer is said
    # not to be proven, with the relaxation's bound as the most a left-out offer could save.
    cfg = config(plan={"max_vendor_share": 1.0, "max_candidates": 4})
    offers = [
        offer(f"c{k}", gpus=0, max_gpus=150 + 10 * k, gpu_hour=round(3.0 + 0.1 * k, 2), vendor=f"V{k}")
        for k in range(12)
    ]
    ws = load_workspace(write(tmp_path / "ws", cfg, offers))
    sizes: list[int] = []
    size = program.model_size

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append(size(*args, **kwargs))
        return sizes[-1]

    monkeypatch.setattr(make, "model_size", counted)
    whole = make_plan(ws, AS_OF)
    assert whole.solver.shortlist_check is not None and whole.solver.shortlist_check.startswith("proven")
    limit = sizes[-1] - 1  # the whole program's size, less one
    monkeypatch.setattr(make, "MAX_NONZEROS", limit)
    monkeypatch.setattr(program, "MAX_NONZEROS", limit)
    big = make_plan(ws, AS_OF)
    check = big.solver.shortlist_check
    assert check is not None and check.startswith("not proven: the program over all 12 usable offers")
    assert f"{big.solver.bound_gap:.2%} from the relaxation's bound" in check
    # the shortlist's plan is the one the whole program proved: the same commitments
    assert [(x.offer, x.gpus) for x in big.plan] == [(x.offer, x.gpus) for x in whole.plan]
