"""Hostile input for the plan's new fields: demand, plan policy, burst, commit options, node size, rate
limits. Every bad value is exit 2 with file, line and field; an impossible plan says which constraint and
which scenario; the solver never hangs or shows a traceback. Bad demand and policy are refused by `procure plan
--out` at the command line (exit 2, nothing written); the other refusals are checked on the problems the use
cases of plan, validate and compare raise, in process (tests/refusals.py)."""

from __future__ import annotations

import json

import pytest
import yaml
from clihelp import assert_error, run
from planws import TASKS_PER_GPU_MONTH, config, offer, write
from refusals import compare, refused, validate


def plan(ws):  # type: ignore[no-untyped-def]
    """`procure plan -w WS --as-of AS_OF` at its use case (procure/analysis/usecases/plans.py planning)."""
    from datetime import date

    from procure.analysis.usecases import planning

    return lambda: planning(ws, date.fromisoformat(AS_OF))


AS_OF = "2026-11-29"


def market(**cfg_changes):
    return config(**cfg_changes), [
        offer("commit", gpus=0, max_gpus=1000, gpu_hour=4.0),
        offer("ondemand", gpus=0, burst={"gpu_hour": 6.0, "max_gpus": 1000}),
    ]


def line_of(path, needle: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(needle)


CONFIG_CASES = [
    (
        {"demand": {"months": 12, "start": 1e6, "volatility": -0.1, "scenarios": 10}},
        "demand.volatility",
        "must be at least 0",
    ),
    ({"demand": {"months": 0, "start": 1e6}}, "demand.months", "must be at least 1"),
    ({"demand": {"months": 12, "start": -5}}, "demand.start", "greater than 0"),
    ({"demand": {"months": 12, "start": 1e6, "scenarios": 0}}, "demand.scenarios", "must be at least 1"),
    ({"demand": {"months": 12, "start": 1e6, "growth": "2%"}}, "demand.growth", "number"),
    (
        {"demand": {"months": 12, "start": 1e6, "paths": [{"name": "a", "factor": 1, "probability": 0.5}]}},
        "demand.paths",
        "add up to 1",
    ),
    (
        {
            "demand": {
                "months": 12,
                "start": 1e6,
                "scenarios": 50,
                "paths": [{"name": "a", "factor": 1, "probability": 1.0}],
            }
        },
        "demand.paths",
        "not both",
    ),
    (
        {
            "demand": {
                "months": 12,
                "start": 1e6,
                "paths": [
                    {"name": "a", "factor": 1, "probability": 0.5},
                    {"name": "a", "factor": 2, "probability": 0.5},
                ],
            }
        },
        "demand.paths[1].name",
        "duplicate",
    ),
    (
        {"demand": {"months": 12, "start": 1e6, "paths": [{"name": "a", "factor": -1, "probability": 1.0}]}},
        "demand.paths[0].factor",
        "must be at least 0",
    ),
    ({"plan": {"max_vendor_share": 0}}, "plan.max_vendor_share", "greater than 0"),
    ({"plan": {"max_vendor_share": 1.5}}, "plan.max_vendor_share", "must be at most 1"),
    ({"plan": {"cvar_alpha": 1}}, "plan.cvar_alpha", "less than 1"),
    ({"plan": {"cvar_weight": -1}}, "plan.cvar_weight", "must be at least 0"),
    ({"plan": {"cvar_weight": 1, "cvar_limit": 1e6}}, "plan.cvar_limit", "not both"),
    ({"plan": {"unserved_penalty_per_task": 0}}, "plan.unserved_penalty_per_task", "greater than 0"),
    ({"plan": {"unserved_premium": 0.5}}, "plan.unserved_premium", "at least 1"),
    ({"plan": {"time_limit_s": 0}}, "plan.time_limit_s", "greater than 0"),
    ({"plan": {"mip_gap": 0.9}}, "plan.mip_gap", "must be at most 0.5"),
    ({"plan": {"surprise": 1}}, "plan.surprise", "unknown field"),
]


@pytest.mark.parametrize(
    "changes, field, needle", CONFIG_CASES, ids=[c[1] + "-" + str(i) for i, c in enumerate(CONFIG_CASES)]
)
def test_bad_demand_and_policy_are_refused_with_line_and_field(tmp_path, changes, field, needle):
    cfg, offers = market()
    for key, value in changes.items():
        cfg[key] = {**cfg.get(key, {}), **value} if key == "plan" else value
    ws = write(tmp_path / "ws", cfg, offers)
    out = tmp_path / "out" / "plan.json"
    stderr = assert_error(run("plan", "--format", "json", "--out", out, "--as-of", AS_OF, "-w", ws), field, needle)
    assert "procure.yaml:" in stderr and not out.exists()
    top = field.split(".")[0]
    assert f"procure.yaml:{line_of(ws / 'procure.yaml', top + ':')}" in stderr or "procure.yaml:" in stderr


OFFER_CASES = [
    ({"pricing": {"burst": {"gpu_hour": -1, "max_gpus": 10}}}, "pricing.burst.gpu_hour", "greater than 0"),
    ({"pricing": {"burst": {"gpu_hour": 5, "max_gpus": 0}}}, "pricing.burst.max_gpus", "greater than 0"),
    ({"pricing": {"burst": {"gpu_hour": 5}}}, "pricing.burst.max_gpus", "required"),
    (
        {"pricing": {"commit_options": [{"gpus": 5000, "term_months": 12, "gpu_hour": 3}]}},
        "pricing.commit_options[0].gpus",
        "at most max_gpus",
    ),
    (
        {"pricing": {"commit_options": [{"gpus": 8, "term_months": 0, "gpu_hour": 3}]}},
        "pricing.commit_options[0].term_months",
        "greater than 0",
    ),
    (
        {"pricing": {"commit_options": [{"gpus": 8, "term_months": 12, "gpu_hour": "3"}]}},
        "pricing.commit_options[0].gpu_hour",
        "number",
    ),
    ({"service": {"node_gpus": 0}}, "service.node_gpus", "must be at least 1"),
    ({"service": {"preemptible": "yes"}}, "service.preemptible", "must be true or false"),
    ({"gpus": -8}, "gpus", "must be at least 0"),
    ({"max_gpus": None, "gpus": 0}, "gpus", "needs pricing.burst"),
]


@pytest.mark.parametrize(
    "changes, field, needle", OFFER_CASES, ids=[c[1] + "-" + str(i) for i, c in enumerate(OFFER_CASES)]
)
def test_bad_offer_fields_are_refused_with_line_and_field(tmp_path, changes, field, needle):
    cfg, offers = market()
    target = offers[0]
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            target[key] = {**target[key], **value}
        else:
            target[key] = value
    ws = write(tmp_path / "ws", cfg, offers)
    stderr = refused(plan(ws), field, needle)
    assert "offers/commit.yaml:" in stderr


def test_burst_and_rate_limits_on_the_wrong_offers(tmp_path):
    cfg, offers = market()
    offers.append(
        offer(
            "tokens",
            per_mtok={"input": 1.0, "output": 4.0},
            pricing={"burst": {"gpu_hour": 5, "max_gpus": 8}},
            service={"rate_limits": {}},
        )
    )
    ws = write(tmp_path / "ws", cfg, offers)
    stderr = refused(validate(ws), "pricing.burst: goes with GPU-hour", "service.rate_limits: give requests_per_minute")
    assert "offers/tokens.yaml:" in stderr


def test_a_pure_on_demand_offer_is_valid_and_priced_in_compare(tmp_path):
    cfg, offers = market()
    ws = write(tmp_path / "ws", cfg, offers)
    od = compare(ws, AS_OF)().evaluation.offer("ondemand")
    # 6 per GPU-hour over 1,080 tasks, billed only as used
    assert od.metrics["cost_per_task"] == pytest.approx(6 / 1080) and od.metrics["fill"] == 1.0


def test_demand_beyond_every_offer_is_planned_and_its_shortfall_shown_by_month(tmp_path):
    """1,000 + 50 GPUs serve 1,050 x 788,400 tasks a month; demand grows 40% a month from 100 GPUs' worth (the high
    path twice that), so from month 6 the high path (200 x 1.4^5 = 1,076 GPUs' worth) is beyond every offer, and from
    month 8 the low path too (100 x 1.4^7 = 1,054). That is
    planned, not refused: the months show what no offer could serve, and the shortfall's price apart."""
    import json

    from planws import TASKS_PER_GPU_MONTH

    cfg, offers = market()
    offers[1]["pricing"]["burst"]["max_gpus"] = 50
    cfg["demand"] = {**cfg["demand"], "growth": 0.4}
    ws = write(tmp_path / "ws", cfg, offers)
    result = run("plan", "--as-of", AS_OF, "-w", ws, "--format", "json")
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    months = plan["shortfall_by_month"]
    assert [m["month"] for m in months] == list(range(1, 13))
    supply = 1050 * TASKS_PER_GPU_MONTH
    for m in months:
        high = 2 * 100 * TASKS_PER_GPU_MONTH * 1.4 ** (m["month"] - 1)
        low = 100 * TASKS_PER_GPU_MONTH * 1.4 ** (m["month"] - 1)
        beyond = 0.5 * max(0.0, high - supply) + 0.5 * max(0.0, low - supply)
        assert m["beyond_offers_tasks"] == pytest.approx(beyond, rel=1e-6, abs=1.0)
        assert m["unserved_tasks"] >= m["beyond_offers_tasks"] - 1.0
        assert m["shortfall_cost"] == pytest.approx(m["unserved_tasks"] * plan["unserved_penalty_per_task"], rel=1e-9)
    assert months[5]["beyond_offers_tasks"] > 0 and months[4]["beyond_offers_tasks"] == 0
    assert sum(m["shortfall_cost"] for m in months) == pytest.approx(plan["shortfall_cost"], rel=1e-9)
    text = run("plan", "--as-of", AS_OF, "-w", ws)
    assert text.exit_code == 0 and "Unserved demand by month" in text.stdout


def test_vendor_share_below_one_with_one_vendor(tmp_path):
    cfg, offers = market(plan={"max_vendor_share": 0.7, "mip_gap": 0.0})
    for o in offers:
        o["vendor"] = "Only Vendor"
    ws = write(tmp_path / "ws", cfg, offers)
    refused(plan(ws), "plan.max_vendor_share", "at least two vendors")


def test_vendor_share_that_no_split_meets(tmp_path):
    cfg, offers = market(plan={"max_vendor_share": 0.4, "mip_gap": 0.0})
    ws = write(tmp_path / "ws", cfg, offers)
    refused(plan(ws), "plan.max_vendor_share", "below 1")


def test_a_cvar_limit_no_plan_reaches(tmp_path):
    cfg, offers = market(plan={"cvar_limit": 1000, "max_vendor_share": 1.0})
    ws = write(tmp_path / "ws", cfg, offers)
    refused(plan(ws), "plan.cvar_limit", "no plan keeps the CVaR")


def test_no_usable_offer(tmp_path):
    cfg, offers = market()
    for o in offers:
        o["service"]["attestations"] = []
    ws = write(tmp_path / "ws", cfg, offers)
    refused(plan(ws), "plan", "no acceptable offer")


def test_no_demand_figure_at_all(tmp_path):
    cfg, offers = market()
    del cfg["workload"]["tasks_per_month"]
    cfg["demand"] = {"months": 12}
    ws = write(tmp_path / "ws", cfg, offers)
    refused(plan(ws), "demand.start", "required when workload.tasks_per_month is absent")


def test_a_tiny_time_limit_gives_a_plan_or_a_clear_message(tmp_path):
    cfg, offers = market(plan={"time_limit_s": 0.001, "max_vendor_share": 1.0})
    cfg["demand"] = {
        "months": 24,
        "start": 100 * TASKS_PER_GPU_MONTH,
        "growth": 0.02,
        "volatility": 0.3,
        "scenarios": 200,
    }
    offers += [
        offer(f"extra{i}", gpus=64, max_gpus=512, gpu_hour=3.5 + i / 10, node_gpus=8, term_months=6 + i)
        for i in range(4)
    ]
    ws = write(tmp_path / "ws", cfg, offers)
    result = run("plan", "--format", "json", "--as-of", AS_OF, "-w", ws)
    combined = result.stdout + result.stderr
    assert "Traceback" not in combined
    if result.exit_code == 0:
        assert json.loads(result.stdout)["solver"]["status"] in ("optimal", "time limit reached: best plan found")
    else:
        assert_error(result, "plan.time_limit_s", "no feasible plan found within 0.001 s")


def test_explicit_paths_with_zero_factor_are_served(tmp_path):
    cfg, offers = market()
    cfg["demand"] = {
        **cfg["demand"],
        "paths": [{"name": "none", "factor": 0, "probability": 0.5}, {"name": "some", "factor": 1, "probability": 0.5}],
    }
    ws = write(tmp_path / "ws", cfg, offers)
    result = run("plan", "--format", "json", "--as-of", AS_OF, "-w", ws)
    assert result.exit_code == 0, result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)["scenarios"]}
    assert rows["none"]["cost_per_task"] is None or rows["none"]["demand_per_month"] == 0


def test_the_yaml_written_by_the_fixture_is_what_the_tests_say(tmp_path):
    cfg, offers = market()
    ws = write(tmp_path / "ws", cfg, offers)
    assert yaml.safe_load((ws / "offers" / "ondemand.yaml").read_text())["gpus"] == 0


def test_too_many_scenarios_are_refused_before_any_work(tmp_path):
    cfg, offers = market()
    cfg["demand"] = {"months": 120, "start": 1e6, "scenarios": 1_000_000}
    ws = write(tmp_path / "ws", cfg, offers)
    refused(plan(ws), "demand.scenarios", "must be at most 20000")


def test_a_reserved_tier_above_the_on_demand_capacity(tmp_path):
    cfg, offers = market()
    offers[1]["pricing"]["commit_options"] = [{"gpus": 2000, "term_months": 12, "gpu_hour": 5.0}]
    ws = write(tmp_path / "ws", cfg, offers)
    refused(
        validate(ws),
        "offers/ondemand.yaml:",
        "pricing.commit_options[0].gpus: must be at most pricing.burst.max_gpus (1000) (got 2000)",
    )
