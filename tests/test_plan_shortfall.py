"""The price of a task the plan does not serve, bought where the market sells it (procure/analysis/unserved.py), and
the shortfall the plan reports instead of refusing demand beyond its offers (docs/plan.md, "In plain words" 4).

Worked by hand on tests/planws.py: every offer reads 300 output tok/s per GPU at the target of 100 tok/s per user,
1,000 output tokens a task, success and utilization 1, so a GPU-hour at availability a serves 1,080 x a tasks."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from planws import TASKS_PER_GPU_MONTH, config, offer, write

from procure.analysis.plan import make_plan
from procure.io.workspace import load_workspace

AS_OF = date(2026, 12, 1)
ROOT = Path(__file__).resolve().parent.parent
INDEX = "date,price\n2026-10-31,4.40\n2026-11-15,4.80\n2026-12-15,9.99\n"  # the last is after the as-of date


def with_index(root: Path, text: str = INDEX) -> Path:
    (root / "market").mkdir(exist_ok=True)
    (root / "market" / "index.csv").write_text(text)
    return root


def slow(offer_id: str, tok_s: float, **kw) -> dict:
    """An offer whose curve reads `tok_s` output tok/s per GPU at 100 tok/s per user."""
    return offer(
        offer_id,
        **kw,
        performance={"points": [[50, tok_s * 1.2], [100, tok_s], [150, tok_s / 3]], "points_source": "measured"},
    )


def test_the_default_price_by_hand_from_the_index(tmp_path):
    # Three offers read 300, 200 and 120 tok/s per GPU at the target (median 200); the per-token one has no reading.
    # The index's latest level on or before 2026-11-29 is 4.80 (2026-11-15; the 9.99 of 2026-12-15 is later).
    # Tasks a market GPU-hour delivers: 200 x 3,600 / 1,000 output tokens x 0.99 (policy.min_availability) x 1 x 1
    # = 712.8. At plan.unserved_premium 1.5: 4.80 x 1.5 / 712.8 = 0.0101010 a task.
    cfg = config(plan={"max_vendor_share": 1.0, "mip_gap": 0.0, "unserved_premium": 1.5})
    offers = [
        offer("fast", gpus=0, max_gpus=1000, gpu_hour=4.0),
        slow("middle", 200, gpus=0, burst={"gpu_hour": 7.0, "max_gpus": 100}),
        slow("slowest", 120, gpus=0, max_gpus=1000, gpu_hour=2.0),
        offer("tokens", per_mtok={"input": 0.1, "output": 1.0}),
    ]
    ws = with_index(write(tmp_path, cfg, offers))
    result = make_plan(load_workspace(ws), AS_OF)
    by_hand = 4.80 * 1.5 / (200 * 3600 / 1000 * 0.99)
    assert result.unserved_penalty_per_task == pytest.approx(by_hand, rel=1e-12)
    assert by_hand == pytest.approx(0.0101010, rel=1e-5)
    basis = result.unserved_penalty_basis
    assert "the rental index's 4.80 USD per GPU-hour on 2026-11-15" in basis
    assert "x plan.unserved_premium 1.5" in basis and "712.8 successful tasks a GPU-hour" in basis
    assert "the median throughput of the 3 offers with a reading" in basis
    assert any(f"{by_hand:.5f} USD per task" in note for note in result.notes)


def test_the_stated_price_overrides_the_default(tmp_path):
    cfg = config(plan={"max_vendor_share": 1.0, "unserved_penalty_per_task": 0.02})
    ws = with_index(write(tmp_path, cfg, [offer("fast", gpus=0, max_gpus=1000, gpu_hour=4.0)]))
    result = make_plan(load_workspace(ws), AS_OF)
    assert (result.unserved_penalty_per_task, result.unserved_penalty_basis) == (0.02, "plan.unserved_penalty_per_task")


def test_without_an_index_the_dearest_on_demand_list_price_in_any_currency(tmp_path):
    # On-demand list prices: 5.00 USD (a burst), 6.00 EUR = 7.50 USD at 1.25 (a pure on-demand offer, failing the
    # availability gate: it still counts), and spot at 9.00 (left out: it can be taken back). The dearest is 7.50:
    # 7.50 x 2 (the default premium) / (300 x 3.6 x 0.99) = 15 / 1,069.2.
    cfg = config()
    offers = [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0, burst={"gpu_hour": 5.0, "max_gpus": 100}),
        offer(
            "euro",
            gpus=0,
            currency="EUR",
            burst={"gpu_hour": 6.0, "max_gpus": 100},
            service={"sla": {"availability": 0.95, "node_replacement_hours": 24}},
        ),
        offer(
            "spot",
            gpus=0,
            max_gpus=100,
            gpu_hour=9.0,
            term_months=1,
            service={"preemptible": True, "interruptions_per_month": 6, "restart_minutes": 73},
        ),
    ]
    result = make_plan(load_workspace(write(tmp_path, cfg, offers)), AS_OF)
    assert result.unserved_penalty_per_task == pytest.approx(7.5 * 2 / (300 * 3.6 * 0.99), rel=1e-12)
    assert "the dearest on-demand list price, 7.50 USD per GPU-hour (euro)" in result.unserved_penalty_basis
    assert "euro" in result.excluded  # it fails a gate and still prices the market


def gate_flip_market(sla: float) -> list[dict]:
    """An expensive offer at 20 a GPU-hour that passes the availability gate (0.99) at SLA 0.995 and fails it at
    0.98; the plan never uses it (a commit at 4 and on-demand at 6 serve every task for less)."""
    return [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
        offer(
            "dear",
            gpus=0,
            max_gpus=1000,
            gpu_hour=20.0,
            service={"sla": {"availability": sla, "node_replacement_hours": 24}},
        ),
    ]


@pytest.mark.parametrize("index", [True, False])
def test_an_unused_offer_passing_or_failing_a_gate_moves_neither_the_price_nor_the_plan(tmp_path, index):
    # Under the rule this default replaced (3x the dearest acceptable cost per task) the price would be 3 x 20 / 1,080
    # with "dear" acceptable and 3 x 6 / 1,080 without it.
    results = []
    for sla in (0.995, 0.98):
        root = write(tmp_path / str(sla), config(), gate_flip_market(sla))
        if index:
            with_index(root)
        results.append(make_plan(load_workspace(root), AS_OF))
    passing, failing = results
    assert "dear" in passing.candidates and "dear" not in failing.candidates
    assert "dear" not in {line.offer for line in passing.plan}
    assert passing.unserved_penalty_per_task == failing.unserved_penalty_per_task
    assert passing.unserved_penalty_basis == failing.unserved_penalty_basis
    assert [(x.offer, x.role, x.gpus, x.start_month) for x in passing.plan] == [
        (x.offer, x.role, x.gpus, x.start_month) for x in failing.plan
    ]
    assert passing.expected_cost_per_task == pytest.approx(failing.expected_cost_per_task, rel=1e-12)


def test_the_example_price_does_not_move_when_meridian_passes_its_availability_gate(tmp_path):
    """The example workspace: Meridian's SLA 0.99 fails the 98% availability minimum (98.01% stated, less once drawn);
    at 0.995 it passes. The unserved price is the index's, the same either way."""
    prices = []
    for sla in ("0.99", "0.995"):
        root = tmp_path / sla
        root.mkdir()
        for name in ("procure.yaml", "offers", "performance", "grades", "market", "actuals"):
            source = ROOT / name
            (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
        path = root / "offers" / "meridian-b200-mc.yaml"
        text = path.read_text()
        assert "sla: {availability: 0.99," in text
        path.write_text(text.replace("sla: {availability: 0.99,", f"sla: {{availability: {sla},"))
        result = make_plan(load_workspace(root), date(2026, 11, 29))
        lines = [(x.offer, x.role, x.gpus, x.start_month) for x in result.plan]
        prices.append((result.unserved_penalty_per_task, result.unserved_penalty_basis, result.candidates, lines))
    (before, basis_before, cands_before, plan_before), (after, basis_after, cands_after, plan_after) = prices
    assert "meridian-b200-mc" not in cands_before and "meridian-b200-mc" in cands_after
    assert before == after and basis_before == basis_after
    assert "rental index" in basis_before
    # and the plan: Meridian is not used either way (under the old default the flip switched Lumen Forge on)
    assert plan_before == plan_after and "meridian-b200-mc" not in {line[0] for line in plan_after}


def test_demand_beyond_every_offer_is_planned_and_its_shortfall_priced_by_month(tmp_path):
    """A commitment of at most 100 GPUs at 4 and on-demand capacity of 50 at 6; demand of 100 GPUs' worth (low) or
    200 (high), equally likely. Nothing serves 50 GPUs' worth of the high path: the plan is made, not refused, and
    leaves them unserved, priced at the market: index 4.80 x 2 / (1,080 x 0.99) = 9.6 / 1,069.2 a task (above 6 and
    4 a GPU-hour's worth, so everything the offers can serve is served)."""
    cfg = config()
    offers = [
        offer("commit", gpus=0, max_gpus=100, gpu_hour=4.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 50}),
    ]
    result = make_plan(load_workspace(with_index(write(tmp_path, cfg, offers))), AS_OF)
    price = 4.80 * 2 / (1080 * 0.99)
    assert result.unserved_penalty_per_task == pytest.approx(price, rel=1e-12)
    assert {(x.offer, x.role) for x in result.plan} == {("commit", "commit"), ("ondemand", "pay_as_used")}
    unserved_month = 0.5 * 50 * TASKS_PER_GPU_MONTH  # 19,710,000 tasks expected a month
    assert len(result.shortfall_by_month) == 12
    for month in result.shortfall_by_month:
        assert month.demand == pytest.approx(150 * TASKS_PER_GPU_MONTH)
        assert month.unserved_tasks == pytest.approx(unserved_month, rel=1e-9)
        assert month.unserved_share == pytest.approx(50 / 300, rel=1e-9)
        assert month.beyond_offers_tasks == pytest.approx(unserved_month, rel=1e-6)
        assert month.by_scenario["low"] == pytest.approx(0.0, abs=1e-6)
        assert month.by_scenario["high"] == pytest.approx(50 * TASKS_PER_GPU_MONTH, rel=1e-9)
        assert month.most_unserved_tasks == pytest.approx(50 * TASKS_PER_GPU_MONTH, rel=1e-9)
        # 19,710,000 x 9.6 / 1,069.2 = 176,969.70 a month, apart from the cash
        assert month.shortfall_cost == pytest.approx(176_969.697, rel=1e-6)
    assert result.unserved_tasks == pytest.approx(12 * unserved_month, rel=1e-9)
    assert result.shortfall_cost == pytest.approx(12 * 176_969.697, rel=1e-6)
    high = next(r for r in result.scenarios if r.name == "high")
    assert high.shortfall_cost == pytest.approx(2 * 12 * 176_969.697, rel=1e-6)
    # the cash is what the offers are paid: 100 committed at 4 every hour, 50 on demand at 6 half the time
    assert result.expected_monthly_spend == pytest.approx((100 * 4 + 0.5 * 50 * 6) * 730, rel=1e-9)
    # 50 of the expected 150 GPUs' worth is beyond every offer half the time: 25 / 150 = 16.7% of the expected demand
    assert any(n.endswith("; 16.7% of the expected demand is left unserved") for n in result.notes)


def test_a_plan_that_serves_every_task_says_none_is_left_unserved(tmp_path):
    cfg = config()
    offers = [offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000})]
    result = make_plan(load_workspace(with_index(write(tmp_path, cfg, offers))), AS_OF)
    assert result.unserved_tasks == 0
    assert any(n.endswith("; none of the expected demand is left unserved") for n in result.notes)


def test_the_real_market_with_growing_demand_is_planned_with_its_shortfall(tmp_path):
    """tests/data/real_offers (public on-demand list prices, billed by the hour) with 24 months of demand growing 5% a
    month from 300 M tasks: the two usable clouds (Nebius and CoreWeave, up to 1,024 GPUs each) cannot serve the high
    paths' last months. Planned, not refused; the shortfall is priced at the index's 5.03 of 2026-11-23."""
    import json

    from clihelp import run

    root = tmp_path / "real"
    shutil.copytree(ROOT / "tests" / "data" / "real_offers", root)
    with open(root / "procure.yaml", "a") as handle:
        handle.write("demand:\n  months: 24\n  start: 300000000\n  growth: 0.05\n  volatility: 0.3\n  scenarios: 100\n")
    result = run("plan", "-w", root, "--as-of", "2026-11-30", "--format", "json")
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert {(x["offer"], x["role"]) for x in plan["plan"]} == {
        ("nebius-b200", "pay_as_used"),
        ("coreweave-b200", "pay_as_used"),
    }
    assert "the rental index's 5.03 USD per GPU-hour on 2026-11-23" in plan["unserved_penalty_basis"]
    months = plan["shortfall_by_month"]
    assert len(months) == 24 and max(m["beyond_offers_tasks"] for m in months) > 0
    for m in months:
        assert m["shortfall_cost"] == pytest.approx(m["unserved_tasks"] * plan["unserved_penalty_per_task"], rel=1e-9)
    assert sum(m["unserved_tasks"] for m in months) == pytest.approx(plan["unserved_tasks"], rel=1e-9)
    text = run("plan", "-w", root, "--as-of", "2026-11-30")
    assert text.exit_code == 0 and "Unserved demand by month" in text.stdout
