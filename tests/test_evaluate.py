"""The pipeline's gates, ranking and the Evaluation's shape."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from pointmeans import AVAILABILITY_MEAN, DELIVERY_MEAN

from procure.analysis.evaluate import evaluate
from procure.analysis.gates import GATES
from procure.analysis.record import METRIC_KEYS
from procure.errors import InputError
from procure.io.workspace import load_workspace

AS_OF = date(2026, 11, 29)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new))


def run(root: Path, as_of: date = AS_OF):
    return evaluate(load_workspace(root), as_of)


def gate(record, name: str):
    return next(g for g in record.gates if g.gate == name)


@pytest.fixture
def basic(workspace_copy) -> Path:
    return workspace_copy("basic")


def test_basic_workspace_passes_every_gate_for_alpha_and_bravo(data_dir):
    evaluation = run(data_dir / "basic")
    for offer_id in ("alpha", "bravo"):
        record = evaluation.offer(offer_id)
        # every gate but ttft, which applies only when the workload sets max_ttft_s
        assert [g.gate for g in record.gates] == [g for g in GATES if g != "ttft"]
        assert all(g.passed for g in record.gates), record.gates
        assert record.acceptable and record.reasons == []


# --- gates ----------------------------------------------------------------------------------------


def test_quality_gate(basic):
    edit(
        basic / "offers" / "alpha.yaml",
        "  points_source: measured\n",
        "  points_source: measured\n  quality_pass_rate: 0.85\n",
    )
    edit(
        basic / "offers" / "bravo.yaml",
        "  reference: test-curve\n",
        "  reference: test-curve\n  quality_pass_rate: 0.9\n",
    )
    evaluation = run(basic)
    alpha, bravo = evaluation.offer("alpha"), evaluation.offer("bravo")
    # 0.9 x 0.85 = 0.765 < 0.80; 0.9 x 0.9 = 0.81 >= 0.80
    assert not gate(alpha, "quality").passed
    assert alpha.reasons == ["success rate 76.50% is below the 80.00% minimum"]
    assert not alpha.acceptable and alpha.rank is None
    assert gate(bravo, "quality").passed
    assert gate(bravo, "quality").detail == "success rate 81.00% meets the 80.00% minimum"


def test_latency_gate(basic):
    edit(basic / "procure.yaml", "  interactivity: 100\n", "  interactivity: 140\n")
    edit(basic / "offers" / "charlie.yaml", "  points: [[100, 300]]\n", "  points: [[100, 300], [130, 200]]\n")
    evaluation = run(basic)
    alpha, charlie = evaluation.offer("alpha"), evaluation.offer("charlie")
    assert gate(alpha, "latency").passed
    assert gate(alpha, "latency").detail == "reaches 140 tok/s per user (fastest point 150)"
    assert not gate(charlie, "latency").passed
    assert gate(charlie, "latency").detail == (
        "cannot reach 140 tok/s per user: target 140 tok/s/user is above the fastest point (130)"
    )
    assert charlie.reasons[0] == gate(charlie, "latency").detail
    assert charlie.metrics["throughput"] is None
    assert charlie.metrics["cost_per_task"] is None


def test_availability_gate(basic):
    edit(basic / "offers" / "alpha.yaml", "availability: 0.995", "availability: 0.955")
    evaluation = run(basic)
    alpha = evaluation.offer("alpha")
    assert not gate(alpha, "availability").passed
    # alpha is unrated (no operator block): its SLA is judged unverified at basic's stated haircut 0.97, as it is
    # costed:
    # 0.955 x 0.97 = 0.92635 (printed 92.63%: 0.92635 is 0.926349999... in binary); every infrastructure job is the
    # provider's.
    # At the mean of the availability factor, x (0.99 + 1 + 1) / 3: 0.923262 < 0.93; it would need a factor of 0.93 /
    # 0.92635 > 1
    # to pass, so no draw passes
    assert gate(alpha, "availability").probability == 0.0
    assert (
        "unrated: availability unverified: stated availability 92.63% (SLA 95.50% unverified x the unrated haircut "
        "0.97), 92.33% expected at the mean of its draws "
        "is below the 93.00% minimum; passes in 0.0% of the draws, under policy.gate_confidence 50% (decided by the "
        "availability it delivers)"
    ) in alpha.reasons
    # bravo (bare metal, unrated): the provider repairs the hardware (its layer, 0.99 x 0.97, is the host); the eight
    # operating jobs above it are ours at 0.98^(1/8) each, 0.98 together: 0.99 x 0.97 x 0.98 = 0.941094; x 0.996667 at
    # the mean of its
    # factor = 0.937957; its lowest draw (factor 0.99) 0.931683 >= 0.93: it passes in every draw
    assert gate(evaluation.offer("bravo"), "availability").detail == (
        "unrated: availability unverified: stated availability 94.11% (SLA 99.00% unverified x the unrated haircut "
        "0.97 x ours 0.98 for 8 jobs), "
        "93.80% expected at the mean of its draws meets the 93.00% minimum; passes in 100.0% of the draws, at least "
        "policy.gate_confidence 50%"
    )


def test_availability_gate_owned_uses_self_operated_reliability(workspace_copy):
    root = workspace_copy("offer_kinds")
    owned = run(root).offer("owned")
    # no provider: our host (hardware repair) 0.98 x our eight operating jobs 0.98 = 0.9604; x 0.996667 (the mean of its
    # factor)
    # = 0.957199; its lowest draw 0.9604 x 0.99 = 0.950796 >= 0.95: every draw passes
    assert gate(owned, "availability").detail == (
        "self-operated availability 96.04%, 95.72% expected at the mean of its draws meets the 95.00% minimum; passes "
        "in 100.0% of the draws, at least policy.gate_confidence 50%"
    )
    edit(root / "procure.yaml", "  min_availability: 0.95", "  min_availability: 0.99")
    owned = run(root).offer("owned")
    assert not gate(owned, "availability").passed
    # 0.99 / 0.9604 > 1: no draw passes
    assert (
        "self-operated availability 96.04%, 95.72% expected at the mean of its draws is below the 99.00% minimum "
        "(set by assumptions.self_operated_reliability, or assumptions.self_operated_jobs per job); "
        "passes in 0.0% of the draws, "
        "under policy.gate_confidence 50% (decided by the availability it delivers)"
    ) in owned.reasons


def test_security_gate(basic):
    edit(basic / "offers" / "alpha.yaml", "  tenant_isolation: true\n", "  tenant_isolation: false\n")
    evaluation = run(basic)
    charlie = evaluation.offer("charlie")
    assert not gate(charlie, "security").passed
    assert charlie.reasons[0] == (
        "security: no SOC 2 Type II or ISO 27001 attestation; monitoring is not isolated between tenants"
    )
    alpha = evaluation.offer("alpha")
    assert not gate(alpha, "security").passed
    assert "security: no tenant isolation" in alpha.reasons
    assert gate(evaluation.offer("bravo"), "security").detail == "meets the security policy"


def test_security_gate_any_attestation_of_the_policy_will_do(basic):
    edit(basic / "offers" / "charlie.yaml", "  attestations: []\n", "  attestations: [iso27001]\n")
    edit(basic / "offers" / "charlie.yaml", "  isolated_monitoring: false\n", "  isolated_monitoring: true\n")
    assert gate(run(basic).offer("charlie"), "security").passed


def test_security_gate_owned_is_exempt(data_dir):
    # offer_kinds/owned.yaml states no attestation, no tenant isolation, no isolated monitoring.
    owned = run(data_dir / "offer_kinds").offer("owned")
    assert gate(owned, "security").passed
    assert gate(owned, "security").detail == "owned and self-operated: you answer for your own controls"
    assert owned.acceptable


def test_region_gate(basic):
    edit(basic / "procure.yaml", "  allowed_regions: null\n", "  allowed_regions: [us-west, eu-central]\n")
    evaluation = run(basic)
    alpha = evaluation.offer("alpha")
    assert not gate(alpha, "region").passed
    assert alpha.reasons == ["region us-east is not among the allowed regions (us-west, eu-central)"]
    assert gate(evaluation.offer("bravo"), "region").detail == "region us-west allowed"


def test_capacity_gate(basic):
    # alpha's capacity: 300 x 3600 / 1000 x 0.96515 x 0.9 x 0.8 = 750.50064 tasks per GPU-hour as stated, x the means of
    # the availability and utilization factors (DELIVERY_MEAN, 0.980056) at the point: 735.5327;
    # 735.5327 x 730 x 200 = 107,387,774 tasks a month need 200 GPUs; alpha supplies 100.
    tasks = 750.50064 * DELIVERY_MEAN * 730 * 200
    edit(basic / "procure.yaml", "  utilization: 0.8\n", f"  utilization: 0.8\n  tasks_per_month: {tasks!r}\n")
    alpha = run(basic).offer("alpha")
    assert alpha.metrics["gpus_needed"] == pytest.approx(200)
    assert not gate(alpha, "capacity").passed
    # 100 GPUs cover the demand only when availability x utilization is at least twice its mean: never in the draws
    assert alpha.reasons == [
        "can supply 100 GPUs; the demand needs 200.0 (short); passes in 0.0% of the draws, under "
        "policy.gate_confidence 50% "
        "(decided by its throughput at the target, availability, utilization and demand)"
    ]
    edit(basic / "offers" / "alpha.yaml", "gpus: 100\n", "gpus: 100\nmax_gpus: 300\n")
    alpha = run(basic).offer("alpha")
    assert gate(alpha, "capacity").passed
    # 300 GPUs cover 200 at the means; the lowest draws (availability x 0.99, utilization x 0.85) need 200 / 0.8415 =
    # 237.7
    assert (
        gate(alpha, "capacity").detail
        == "can supply 300 GPUs; the demand needs 200.0; passes in 100.0% of the draws, at least "
        "policy.gate_confidence 50%"
    )
    assert alpha.metrics["fill"] == pytest.approx(1.0)


def test_capacity_gate_with_partial_coverage(basic):
    edit(
        basic / "procure.yaml",
        "  utilization: 0.8\n",
        f"  utilization: 0.8\n  tasks_per_month: {750.50064 * DELIVERY_MEAN * 730 * 200!r}\n",
    )
    edit(basic / "procure.yaml", "  min_demand_coverage: 1.0\n", "  min_demand_coverage: 0.4\n")
    alpha = run(basic).offer("alpha")
    # 200 x 0.4 = 80 at the means (test_capacity_gate); short only when the drawn demand (factor triangular 0.8 / 1 /
    # 1.2) over
    # the drawn availability x utilization exceeds its mean by 25% (e.g. demand x 1.15 with utilization x 0.89): a
    # corner of the draws
    capacity = gate(alpha, "capacity")
    assert capacity.passed and 0.98 < capacity.probability < 1.0
    assert (
        capacity.detail
        == f"can supply 100 GPUs; the demand needs 80.0; passes in {capacity.probability:.1%} of the draws, at least "
        "policy.gate_confidence 50%"
    )


def test_capacity_gate_without_demand_and_for_per_token(data_dir):
    assert gate(run(data_dir / "basic").offer("alpha"), "capacity").detail == (
        "no demand stated: the committed GPUs are taken as fully used"
    )
    # no rate limits stated: passes by the default policy with a warning; peak = 3 x 40,000,000 / (730 x 60) = 2,739.7 a
    # minute
    tokens = run(data_dir / "offer_kinds").offer("tokens")
    assert gate(tokens, "capacity").passed
    assert gate(tokens, "capacity").detail == (
        "rate limits not stated (service.rate_limits: requests/min, output tokens/min); the peak is 2,740 requests/min"
    )
    assert tokens.not_stated == ["capacity: " + gate(tokens, "capacity").detail]


def test_capacity_reason_for_zero_success_does_not_blame_throughput(basic):
    edit(basic / "procure.yaml", "  utilization: 0.8\n", "  utilization: 0.8\n  tasks_per_month: 1000000\n")
    edit(
        basic / "offers" / "alpha.yaml",
        "  points_source: measured\n",
        "  points_source: measured\n  quality_pass_rate: 0\n",
    )
    alpha = run(basic).offer("alpha")
    assert alpha.metrics["throughput"] == 300
    assert not any("no throughput" in reason for reason in alpha.reasons), alpha.reasons


def test_grade_gate(basic):
    edit(basic / "procure.yaml", "  acceptable_grades: [T-MC, T-BM]\n", "  acceptable_grades: [T-MC]\n")
    evaluation = run(basic)
    bravo = evaluation.offer("bravo")
    assert bravo.grade == "T-BM"
    assert bravo.reasons == ["grade T-BM is not among the acceptable grades (T-MC)"]
    charlie = evaluation.offer("charlie")
    assert charlie.grade is None
    assert "ungraded (nearest T-MC: attestation: none)" in charlie.reasons
    assert gate(evaluation.offer("alpha"), "grade").detail == "grade T-MC"


def test_grade_record_lists_the_checked_requirements(data_dir):
    evaluation = run(data_dir / "basic")
    charlie = evaluation.offer("charlie").grading
    assert charlie.grade is None and charlie.checked_grade == "T-MC"
    failed = [r for r in charlie.requirements if not r.passed]
    assert [(r.requirement, r.observed) for r in failed] == [("attestation", "none")]
    assert evaluation.offer("bravo").grading.checked_grade == "T-BM"


def test_validity_gate(data_dir):
    last_day = run(data_dir / "basic", date(2027, 6, 30)).offer("alpha")
    assert gate(last_day, "validity").passed
    assert gate(last_day, "validity").detail == "valid until 2027-06-30"
    expired = run(data_dir / "basic", date(2027, 7, 1))
    alpha = expired.offer("alpha")
    assert not gate(alpha, "validity").passed
    assert alpha.reasons == ["expired on 2027-06-30 (as of 2027-07-01)"]
    assert expired.ranked == []


# --- ranking and order ----------------------------------------------------------------------------


def test_acceptable_first_by_rank_then_the_rest_by_id(basic):
    # Make the cheapest offers fail: charlie (security) and a cheap copy 'aaa' out of region.
    cheap = (
        (basic / "offers" / "alpha.yaml")
        .read_text()
        .replace("id: alpha", "id: aaa")
        .replace("gpu_hour: 4.00", "gpu_hour: 1.00")
    )
    (basic / "offers" / "aaa.yaml").write_text(cheap.replace("region: us-east", "region: mars-1"))
    edit(basic / "procure.yaml", "  allowed_regions: null\n", "  allowed_regions: [us-east, us-west]\n")
    evaluation = run(basic)
    assert [(o.id, o.rank, o.acceptable) for o in evaluation.offers] == [
        ("bravo", 1, True),  # 3.95 full / 754.4 tasks
        ("alpha", 2, True),  # 4.75 full / 750.5 tasks
        ("aaa", None, False),
        ("charlie", None, False),
    ]
    # the failing offers are cheaper per task but never ranked
    assert evaluation.offer("aaa").metrics["cost_per_task"] < evaluation.offer("bravo").metrics["cost_per_task"]
    assert evaluation.offer("charlie").metrics["cost_per_task"] < evaluation.offer("bravo").metrics["cost_per_task"]
    assert [o.id for o in evaluation.ranked] == ["bravo", "alpha"]


def test_ties_rank_by_id(basic):
    twin = (basic / "offers" / "alpha.yaml").read_text().replace("id: alpha", "id: aardvark")
    (basic / "offers" / "aardvark.yaml").write_text(twin)
    ranked = [(o.id, o.rank) for o in run(basic).ranked]
    assert ranked == [("bravo", 1), ("aardvark", 2), ("alpha", 3)]


# --- shape of the Evaluation ----------------------------------------------------------------------


def test_every_offer_carries_every_metric_key(data_dir, basic):
    edit(basic / "procure.yaml", "  interactivity: 100\n", "  interactivity: 120\n")  # charlie cannot reach it
    for evaluation in (run(data_dir / "basic"), run(data_dir / "offer_kinds"), run(basic)):
        for record in evaluation.offers:
            assert set(METRIC_KEYS) <= set(record.metrics), record.id
        data = json.loads(evaluation.to_json())
        for record in data["offers"]:
            assert set(METRIC_KEYS) <= set(record["metrics"])
            for key in ("id", "vendor", "grade", "acceptable", "rank", "reasons", "metrics"):
                assert key in record
    unreachable = run(basic).offer("charlie").metrics
    for key in ("throughput", "successful_tasks_per_gpu_hour", "cost_per_task", "rent_per_task", "cost_per_mtok"):
        assert unreachable[key] is None, key
    assert unreachable["rent"] == pytest.approx(2.5)  # what can be computed still is
    tokens = run(data_dir / "offer_kinds").offer("tokens").metrics
    for key in (
        "rent",
        "fees",
        "financing",
        "ops",
        "software",
        "full",
        "throughput",
        "utilization",
        "fill",
        "successful_tasks_per_gpu_hour",
        "gpus_needed",
    ):
        assert tokens[key] is None, key
    assert tokens["cost_per_task"] is not None


def test_json_has_no_wall_clock_time(data_dir):
    first = run(data_dir / "offer_kinds").to_json()
    second = run(data_dir / "offer_kinds").to_json()
    assert first == second
    data = json.loads(first)
    assert data["schema_version"] == "1.3"
    assert data["as_of"] == "2026-11-29"
    assert {"schema_version", "as_of", "workload", "offers"} <= set(data)
    assert not re.search(r"\d\d:\d\d:\d\d", first)  # no time of day anywhere


def test_as_of_comes_from_the_argument_not_today(data_dir):
    assert run(data_dir / "basic", date(2027, 1, 15)).as_of == date(2027, 1, 15)


# --- index-linked pricing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("as_of", "level", "rent"),
    [
        (date(2026, 9, 30), 5.00, (5.00 + 0.35) * 0.9),  # on the first level's date
        (date(2026, 10, 30), 5.00, (5.00 + 0.35) * 0.9),
        (date(2026, 10, 31), 4.50, (4.50 + 0.35) * 0.9),
        (date(2026, 11, 29), 4.50, (4.50 + 0.35) * 0.9),
        (date(2026, 11, 30), 6.00, 6.00 * 0.9),  # 6.35 is above the 6.00 cap
        (date(2027, 3, 1), 6.00, 6.00 * 0.9),
    ],
)
def test_index_linked_uses_the_latest_level_on_or_before_as_of(data_dir, as_of, level, rent):
    indexed = run(data_dir / "offer_kinds", as_of).offer("indexed")
    assert indexed.index_level == pytest.approx(level)
    assert indexed.metrics["rent"] == pytest.approx(rent)
    assert indexed.metrics["rent_at_cap"] == pytest.approx(6.00 * 0.9)


def test_index_linked_floor(workspace_copy):
    root = workspace_copy("offer_kinds")
    edit(root / "offers" / "indexed.yaml", "spread: 0.35", "spread: -1.00")
    # 4.50 - 1.00 = 3.50 is below the 4.00 floor
    assert run(root).offer("indexed").metrics["rent"] == pytest.approx(4.00 * 0.9)


def test_as_of_before_the_first_index_level_is_an_input_error(data_dir):
    workspace = load_workspace(data_dir / "offer_kinds")
    with pytest.raises(InputError) as caught:
        evaluate(workspace, date(2026, 9, 29))
    [problem] = caught.value.problems
    assert problem.file == "market/index.csv"
    assert "no index level on or before 2026-09-29" in str(problem)
    assert "indexed" in str(problem)


def test_index_history_does_not_matter_without_index_linked_offers(data_dir):
    assert run(data_dir / "basic", date(2026, 1, 1)).as_of == date(2026, 1, 1)


# --- the availability gate on expected availability ------------------------------------------------


def test_an_sla_above_the_minimum_is_not_enough_when_the_expected_figure_is_below(basic):
    edit(basic / "procure.yaml", "  min_availability: 0.93 ", "  min_availability: 0.98 ")
    # a published Bronze tier: basic's published factors are the defaults (bronze 0.98)
    with open(basic / "offers" / "alpha.yaml", "a") as handle:
        handle.write("operator: {published_tier: bronze}\n")
    alpha = run(basic).offer("alpha")
    # SLA 0.995 >= 0.98, but rated Bronze: 0.995 x 0.98 = 0.9751 < 0.98; x 0.996667 (the mean of its factor) = 0.971850,
    # and no draw (factor at most 1) reaches 0.98
    assert alpha.sla_availability == 0.995
    assert alpha.metrics["availability"] == pytest.approx(0.9751 * AVAILABILITY_MEAN)
    assert not gate(alpha, "availability").passed
    assert gate(alpha, "availability").detail == (
        "stated availability 97.51% (SLA 99.50% x reliability 0.98), 97.18% expected at the mean of its draws is below "
        "the 98.00% minimum; "
        "passes in 0.0% of the draws, under policy.gate_confidence 50% (decided by the availability it delivers)"
    )
    assert gate(alpha, "availability").margin == pytest.approx(0.9751 * AVAILABILITY_MEAN / 0.98 - 1)
    assert not alpha.acceptable


def test_the_json_carries_sla_expected_availability_and_the_reliability_source(data_dir):
    payload = json.loads(run(data_dir / "rated").to_json())
    by_id = {o["id"]: o for o in payload["offers"]}
    # alpha: checklist 100 -> 1.0. bravo: bare metal with no tier, unrated: its SLA 0.99 judged and costed at the
    # stated haircut 0.97 x our eight operating jobs 0.98 = 0.941094. echo: managed, unrated: 0.995 x 0.97 = 0.96515.
    # The layers' expected figure is the gate's label; the cost's availability is it x the factor's mean 0.996667.
    assert (by_id["alpha"]["sla_availability"], by_id["alpha"]["reliability_source"]) == (0.995, "checklist")
    assert by_id["alpha"]["metrics"]["availability"] == pytest.approx(0.995 * AVAILABILITY_MEAN)
    assert by_id["alpha"]["rating_state"] == "rated"
    assert by_id["bravo"]["reliability_source"] == "unrated" and by_id["bravo"]["rating_state"] == "unrated"
    assert by_id["bravo"]["metrics"]["availability"] == pytest.approx(0.941094 * AVAILABILITY_MEAN, rel=1e-9)
    assert by_id["bravo"]["availability_layers"]["expected"] == pytest.approx(0.941094, rel=1e-9)
    assert by_id["bravo"]["availability_layers"]["drawn_mean"] == pytest.approx(AVAILABILITY_MEAN)
    assert by_id["echo"]["reliability_source"] == "unrated"
    assert by_id["echo"]["metrics"]["availability"] == pytest.approx(0.96515 * AVAILABILITY_MEAN)
    assert by_id["echo"]["availability_layers"]["expected"] == pytest.approx(0.96515)
    assert {o["reliability_source"] for o in payload["offers"]} <= {
        "checklist",
        "published",
        "status_history",
        "unrated",
        "self_operated",
    }


# --- per-token offers: speed, time to first token, rate limits --------------------------------------


@pytest.fixture
def kinds(workspace_copy) -> Path:
    return workspace_copy("offer_kinds")


def tokens_of(root: Path):
    return run(root).offer("tokens")


def test_per_token_speed_stated_is_gated(kinds):
    tokens = tokens_of(kinds)
    assert gate(tokens, "latency").passed  # states 100, the target is 100
    assert gate(tokens, "latency").detail == "states 100 tok/s per user (P50) meeting the 100 target"
    edit(kinds / "offers" / "tokens.yaml", "  interactivity: 100 ", "  interactivity: 80 ")
    slow = tokens_of(kinds)
    assert not gate(slow, "latency").passed and not slow.acceptable
    assert gate(slow, "latency").margin == pytest.approx(80 / 100 - 1)


def test_per_token_speed_not_stated_fails_latency(kinds):
    edit(kinds / "offers" / "tokens.yaml", "  interactivity: 100 ", "  quality_pass_rate: 1.0 ")
    tokens = tokens_of(kinds)
    assert not gate(tokens, "latency").passed
    assert (
        gate(tokens, "latency").detail
        == "speed per user not stated (performance.interactivity; the target is 100 tok/s per user)"
    )
    assert "latency: " + gate(tokens, "latency").detail in tokens.not_stated
    assert not tokens.acceptable


def test_per_token_time_to_first_token(kinds):
    edit(kinds / "procure.yaml", "  utilization: 0.8\n", "  utilization: 0.8\n  max_ttft_s: 1.0\n")
    unstated = tokens_of(kinds)
    # not stated fails unless policy.ttft_unstated says pass
    assert not gate(unstated, "ttft").passed
    assert gate(unstated, "ttft").detail == "time to first token not stated (performance.ttft_s; the maximum is 1 s)"
    assert "ttft: " + gate(unstated, "ttft").detail in unstated.not_stated
    edit(kinds / "procure.yaml", "  min_demand_coverage: 1.0\n", "  min_demand_coverage: 1.0\n  ttft_unstated: pass\n")
    by_policy = tokens_of(kinds)
    assert gate(by_policy, "ttft").passed
    assert gate(by_policy, "ttft").detail.endswith("; passed by policy.ttft_unstated")
    edit(kinds / "procure.yaml", "  ttft_unstated: pass\n", "")
    edit(kinds / "offers" / "tokens.yaml", "  interactivity: 100 ", "  interactivity: 100\n  ttft_s: 0.8 ")
    stated = tokens_of(kinds)
    assert gate(stated, "ttft").passed
    assert gate(stated, "ttft").margin == pytest.approx(1.0 / 0.8 - 1)


def add_limits(kinds: Path, text: str) -> None:
    edit(
        kinds / "offers" / "tokens.yaml",
        "  isolated_monitoring: true\n",
        f"  isolated_monitoring: true\n  rate_limits: {text}\n",
    )


def test_rate_limits_against_the_peak(kinds):
    # peak = 3 x 40,000,000 tasks / (730 x 60 minutes) = 2,739.73 requests a minute; x 1,000 output tokens = 2,739,726
    # tokens
    add_limits(kinds, "{requests_per_minute: 3000, output_tokens_per_minute: 2800000}")
    tokens = tokens_of(kinds)
    assert gate(tokens, "capacity").passed
    assert gate(tokens, "capacity").margin == pytest.approx(
        2_800_000 / (3 * 40e6 / 43800 * 1000) - 1
    )  # tokens bind: 2.2%
    assert tokens.not_stated == []


def test_rate_limits_short_of_the_peak_fail(kinds):
    add_limits(kinds, "{requests_per_minute: 2000, output_tokens_per_minute: 5000000}")
    tokens = tokens_of(kinds)
    assert not gate(tokens, "capacity").passed
    assert gate(tokens, "capacity").detail == "rate limits short of the peak: 2,000 requests/min < 2,740 needed"
    assert gate(tokens, "capacity").margin == pytest.approx(2000 / (3 * 40e6 / 43800) - 1)


def test_peak_factor_scales_the_need(kinds):
    add_limits(kinds, "{requests_per_minute: 2000, output_tokens_per_minute: 5000000}")
    edit(kinds / "procure.yaml", "  utilization: 0.8\n", "  utilization: 0.8\n  peak_factor: 2\n")
    # 2 x 40,000,000 / 43,800 = 1,826.5 requests a minute: 2,000 is enough
    assert gate(tokens_of(kinds), "capacity").passed


def test_unstated_rate_limits_pass_with_a_warning_or_fail_by_policy(kinds):
    tokens = tokens_of(kinds)
    assert gate(tokens, "capacity").passed
    assert any(
        note.startswith("capacity gate passed by policy although rate limits not stated") for note in tokens.notes
    )
    edit(
        kinds / "procure.yaml",
        "  min_demand_coverage: 1.0\n",
        "  min_demand_coverage: 1.0\n  rate_limits_unstated: fail\n",
    )
    strict = tokens_of(kinds)
    assert not gate(strict, "capacity").passed and not strict.acceptable
    # one limit stated, the other not: the stated one is judged, the other is "not stated"
    add_limits(kinds, "{requests_per_minute: 3000}")
    partial = tokens_of(kinds)
    assert not gate(partial, "capacity").passed
    assert (
        "output tokens/min" in gate(partial, "capacity").detail
        and "3,000 requests/min for 2,740 at the peak" in gate(partial, "capacity").detail
    )


# --- the real-offer workspace ------------------------------------------------------------------------

REAL = Path(__file__).parent / "data" / "real_offers"


@pytest.fixture(scope="module")
def real():
    return evaluate(load_workspace(REAL), date(2026, 11, 30))


def test_real_managed_clusters_grade_as_managed_clusters(real):
    grades = {o.id: o.grade for o in real.offers}
    assert grades == {
        "coreweave-b200": "B200-MC",
        "nebius-b200": "B200-MC",  # shared monitoring and storage still qualify
        "aws-p6-b200": "B200-BM",  # the customer rolls out node images: OS patching is shared, not the provider's
        "lambda-b200": "B200-BM",
        "runpod-b200": "B200-BM",
        "packet-ai-b200": None,
        "spheron-b200": None,  # no attestation published
        "together-deepseek-r1": "B200-MS",
        "fireworks-deepseek-r1-basic": "B200-MS",
        "deepinfra-deepseek-r1": "B200-MS",
    }
    aws = real.offer("aws-p6-b200")
    assert aws.grading.checked_grade == "B200-BM"


def test_real_published_tiers_set_the_reliability(real):
    found = {o.id: (o.reliability_source, o.reliability_factor) for o in real.offers}
    # ClusterMAX 3.0 (2026-09-23) rates managed clusters only
    assert found["coreweave-b200"] == ("published", 1.0)  # Platinum
    # CoreWeave's published SLO for instances in a single region is 99%: 0.99 x 1.0
    assert real.offer("coreweave-b200").metrics["availability"] == pytest.approx(
        0.99 * AVAILABILITY_MEAN
    )  # x the factor's mean
    assert found["nebius-b200"] == ("published", 1.0)  # Platinum in 3.0 (Gold in 2.0)
    assert found["aws-p6-b200"] == ("published", 0.98)  # Bronze in 3.0 (Silver in 2.0)
    # unrated: judged and costed at the default haircut, the Participation Ribbon's 0.965 (below Bronze's 0.98)
    assert found["lambda-b200"] == ("unrated", 0.965)  # bare metal: no tier rates it; no incident history either
    assert found["together-deepseek-r1"] == ("unrated", 0.965)  # a token API: no tier rates it
    assert found["runpod-b200"] == ("unrated", 0.965)  # no evidence: unrated, judged and costed at the haircut
    assert found["deepinfra-deepseek-r1"] == ("unrated", 0.965)  # no checklist, no incident history
    assert real.offer("nebius-b200").metrics["availability"] == pytest.approx(0.999 * 1.0 * AVAILABILITY_MEAN)
    # AWS: EC2 SLA 0.995 x Bronze 0.98 = 0.9751 < the 98% minimum (Silver's 0.99 gave 0.98505, above it); x 0.996667 at
    # the
    # mean of its factor = 0.971850, and no draw reaches 0.98 (it would need a factor of 1.005)
    aws = real.offer("aws-p6-b200")
    assert aws.metrics["availability"] == pytest.approx(0.995 * 0.98 * AVAILABILITY_MEAN, rel=1e-12)
    assert not aws.acceptable and aws.reasons == [
        "stated availability 97.51% (SLA 99.50% x reliability 0.98), 97.18% expected at the mean of its draws is below "
        "the 98.00% minimum; "
        "passes in 0.0% of the draws, under policy.gate_confidence 50% (decided by the availability it delivers)"
    ]
    # Lambda: SLA 0.99 (assumed) x the unrated haircut 0.965 (the host) x our eight operating jobs at 0.99^(1/8) each,
    # 0.99 together: 0.99 x 0.965 x 0.99 = 0.9457965 < the 98% minimum
    lambda_ = real.offer("lambda-b200")
    assert lambda_.metrics["availability"] == pytest.approx(0.9457965 * AVAILABILITY_MEAN, rel=1e-12)
    assert not lambda_.acceptable
    assert (
        lambda_.reasons[0].startswith("unrated: availability unverified")
        and "rate before signing: add operator.status_history" in lambda_.notes[0]
    )
    # RunPod: unrated, judged and costed at the same default 0.965: the same 94.58%, unverified
    runpod = real.offer("runpod-b200")
    assert runpod.availability_layers.expected == pytest.approx(0.9457965, rel=1e-12)
    assert runpod.metrics["availability"] == pytest.approx(0.9457965 * AVAILABILITY_MEAN, rel=1e-12)


def test_real_per_token_offers_are_gated_on_what_they_state(real):
    for offer_id in ("together-deepseek-r1", "fireworks-deepseek-r1-basic", "deepinfra-deepseek-r1"):
        record = real.offer(offer_id)
        assert not record.acceptable
        assert not gate(record, "latency").passed
        # rate limits are not stated either: passed by the default policy, with a note
        assert gate(record, "capacity").passed
        assert [reason.split(":")[0] for reason in record.not_stated] == ["latency", "capacity"]


def test_real_per_token_costs_with_the_prompt_cache(real):
    # staff the buyer keeps: release_validation (customer, 0.5 FTE) + capacity_planning (shared: 0.5 x 0.25)
    # = 0.625 FTE x 250,000 / 12 a month over 20,000,000 tasks
    staff = 0.625 * 250_000 / 12 / 20_000_000
    # Together: no cached price, so both halves of the 8,192 input tokens at 3.00; 1,024 output at 7.00; success 0.97
    together = (8192 * 3.00 + 1024 * 7.00) / 1e6 / 0.97 + staff
    assert real.offer("together-deepseek-r1").metrics["point_cost_per_task"] == pytest.approx(together)
    # Fireworks basic: half the input at 0.55, half at the cached 0.275; output 2.19
    fireworks = (8192 * (0.5 * 0.55 + 0.5 * 0.275) + 1024 * 2.19) / 1e6 / 0.97 + staff
    assert real.offer("fireworks-deepseek-r1-basic").metrics["point_cost_per_task"] == pytest.approx(fireworks)


def test_real_ranking_and_the_leader_by_hand(real):
    # list prices (offer files): Nebius 7.15, CoreWeave 8.60, Lambda 6.69, RunPod 6.79, AWS 14.24 per GPU-hour
    # bare metal falls short of the 98% minimum once our own jobs count as a layer, and AWS at ClusterMAX 3.0's
    # Bronze (test_real_published_tiers...)
    assert [o.id for o in real.ranked] == ["nebius-b200", "coreweave-b200"]
    # Nebius: 300 tok/s/GPU on its reference curve, read at the expected production throughput: the
    # reference factor's mean (0.85 + 0.95 + 1.05) / 3 = 0.95 x benchmark to production (0.85 + 0.95 + 1.0) / 3
    # = 0.93333 (procure's default uncertainty) -> 266.0 tok/s/GPU;
    # x 3,600 / 1,024 x availability 0.999 x 1.0 (Platinum) x success 0.97 x utilization 0.8, availability and
    # utilization
    # each x the mean of its factor (DELIVERY_MEAN = 0.996667 x 0.983333)
    capacity = 300 * 0.95 * (2.8 / 3) * 3600 / 1024 * 0.999 * 1.0 * 0.97 * 0.8 * DELIVERY_MEAN
    billed = 20_000_000 / (capacity * 730)  # above the 32 committed GPUs: billed as needed, fill 1
    assert billed > 32
    # staff: shared storage, monitoring, incident response at 0.5; customer serving stack, release validation,
    # capacity planning: fixed 0.5 x (0.25 + 0.25 + 1.0) + (1.0 + 0.5 + 0.25) = 2.5 FTE,
    # per 1,000 GPUs 0.5 x (0.5 + 0.5 + 1.0) + (1.0 + 0.5 + 0.25) = 2.75
    ops = (2.5 + 2.75 * billed / 1000) * 250_000 / (billed * 8760)
    full = 7.15 + ops + 0.05  # rent (nebius.com/prices, Sep 2026), staff, serving software for whoever runs the stack
    nebius = real.offer("nebius-b200")
    assert nebius.metrics["full"] == pytest.approx(full)
    assert nebius.metrics["point_cost_per_task"] == pytest.approx(full / capacity)


def test_real_runner_up_managed_cluster_beats_cheaper_bare_metal_by_hand(real):
    # CoreWeave: $8.60 (coreweave.com/pricing), single-region SLO 0.99 x Platinum 1.0; the same jobs left to us as
    # Nebius
    def per_task(rent: float, availability: float, fixed_fte: float, fte_per_1000: float) -> float:
        capacity = (
            300 * 0.95 * (2.8 / 3) * 3600 / 1024 * availability * 0.97 * 0.8 * DELIVERY_MEAN
        )  # successful tasks per GPU-hour, as for Nebius
        billed = 20_000_000 / (capacity * 730)
        assert billed > 32  # billed as needed above the 32 committed GPUs
        ops = (fixed_fte + fte_per_1000 * billed / 1000) * 250_000 / (billed * 8760)
        return (rent + ops + 0.05) / capacity

    coreweave = per_task(8.60, 0.99 * 1.0, 2.5, 2.75)
    # Lambda: $6.69 (lambda.ai/instances, 8 x B200), bare metal: every job but hardware repair is ours:
    # fixed 0.25 x 6 (firmware, OS, fabric, health checks, storage, monitoring) + 0.5 (scheduler) + 1.0 (incidents)
    # + 1.0 (serving) + 0.5 (releases) + 0.25 (capacity) = 4.75 FTE; per 1,000 GPUs, in the same order,
    # 0.5 + 0.5 + 0.5 + 1.0 + 0.5 + 0.5 + 0.5 + 1.0 + 1.0 + 0.5 + 0.25 = 6.75;
    # availability: no published SLA, 0.99 assumed, x the unrated haircut 0.965 (no tier rates bare metal), x our eight
    # operating jobs 0.99 = 0.9457965
    lambda_ = per_task(6.69, 0.99 * 0.965 * 0.99, 4.75, 6.75)
    assert real.offer("coreweave-b200").metrics["point_cost_per_task"] == pytest.approx(coreweave)
    assert real.offer("lambda-b200").metrics["point_cost_per_task"] == pytest.approx(lambda_, rel=1e-6)
    # At the expected production throughput (266 tok/s/GPU) and the mean availability and utilization (x 0.980056) the
    # demand bills about 15% more GPUs, so bare metal's two more engineers spread over more of them; costed at the
    # unrated default (0.965, not a rated provider's figure) Lambda is 1-2% above CoreWeave per task, and its 94.58%
    # availability fails the 98% minimum, so CoreWeave is the runner-up and Lambda is not ranked
    assert 1.01 < lambda_ / coreweave < 1.02
    assert real.offer("coreweave-b200").rank == 2 and real.offer("lambda-b200").rank is None


def _untiered_copy(root: Path, unrated: float | None = None) -> Path:
    """real_offers with an untiered copy of AWS's Bronze offer (the same file without its published tier)."""
    import shutil

    ws = root / "real"
    shutil.copytree(REAL, ws)
    bronze = (ws / "offers" / "aws-p6-b200.yaml").read_text()
    assert "  published_tier: bronze\n" in bronze
    copy = bronze.replace("id: aws-p6-b200\n", "id: aws-untiered\n")
    copy = copy.replace("operator:\n  published_tier: bronze\n", "").replace('  published_edition: "3.0"\n', "")
    assert "published" not in copy.split("quality_pass_rate")[1]
    (ws / "offers" / "aws-untiered.yaml").write_text(copy)
    if unrated is not None:
        text = (ws / "procure.yaml").read_text()
        stated = text.replace("  reliability:\n", f"  reliability:\n    unrated: {unrated}\n", 1)
        (ws / "procure.yaml").write_text(stated)
    return ws


def test_an_untiered_copy_of_a_bronze_offer_never_costs_less(tmp_path):
    ev = evaluate(load_workspace(_untiered_copy(tmp_path)), date(2026, 11, 30))
    bronze, copy = ev.offer("aws-p6-b200"), ev.offer("aws-untiered")
    assert (bronze.reliability_source, copy.reliability_source) == ("published", "unrated")
    # the provider's layer: SLA 0.995 x Bronze 0.98 = 0.9751 against 0.995 x the unrated default, the Participation
    # Ribbon's 0.965, = 0.960175: the copy is costed as less available, never more
    assert bronze.availability_layers.provider == pytest.approx(0.995 * 0.98, rel=1e-12)
    assert copy.availability_layers.provider == pytest.approx(0.995 * 0.965, rel=1e-12)
    assert copy.metrics["cost_per_task"] > bronze.metrics["cost_per_task"]  # expected, and at the typical inputs:
    # same rent, fees and jobs; demand bills as many GPUs as it needs (above the 32 committed), so the staff per
    # GPU-hour shrinks a little with the copy's extra GPUs: the copy costs more, by less than 0.98 / 0.965 - 1 = 1.554%
    ratio = copy.metrics["point_cost_per_task"] / bronze.metrics["point_cost_per_task"]
    assert 1.0 < ratio < 0.98 / 0.965


def test_the_unrated_haircut_can_still_be_stated(tmp_path):
    # at Bronze's own factor the copy costs exactly the same; at 0.99 (stated above Bronze) it costs less: the
    # workspace's statement is used as stated
    same = evaluate(load_workspace(_untiered_copy(tmp_path / "a", unrated=0.98)), date(2026, 11, 30))
    assert same.offer("aws-untiered").reliability_factor == 0.98
    assert same.offer("aws-untiered").metrics["point_cost_per_task"] == pytest.approx(
        same.offer("aws-p6-b200").metrics["point_cost_per_task"], rel=1e-12
    )
    above = evaluate(load_workspace(_untiered_copy(tmp_path / "b", unrated=0.99)), date(2026, 11, 30))
    assert above.offer("aws-untiered").reliability_factor == 0.99
    assert (
        above.offer("aws-untiered").metrics["point_cost_per_task"]
        < above.offer("aws-p6-b200").metrics["point_cost_per_task"]
    )
