"""Operator rating (DESIGN.md "Operator rating", cost model step 8).

Tiers are relative to the peers (mid-rank percentile among rated offers without a critical
failure); the reliability factor on SLA availability comes from the absolute score, so adding or
removing a bid never moves another offer's cost. Every expected figure is worked out by hand in
the test, never with procure's own helpers.

Hand-calculation conventions for tests/data/basic: alpha costs 4.00 rent + 0.10 fees + 0.60 serving
staff + 0.05 software = 4.75 per GPU-hour and delivers 300 tok/s/GPU x 3,600 / 1,000 = 1,080 tasks
per GPU-hour at full availability, times availability x success 0.9 x utilization 0.8.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pointmeans import AVAILABILITY_MEAN, DELIVERY_MEAN

from procure.analysis.evaluate import evaluate
from procure.errors import InputError
from procure.io.workspace import load_workspace
from procure.model.inputs import Criterion, Offer, RatingCategory, RatingConfig, Reliability, TierThresholds
from procure.model.rating import (
    NOT_RATED_NO_EVIDENCE,
    NOT_RATED_SELF_OPERATED,
    UNDERPERFORM,
    Rating,
    assign_tiers,
    percentile_ranks,
    rate_offer,
    reliability_from_score,
    tier_for,
)

AS_OF = date(2026, 11, 29)
DEFAULT = RatingConfig(min_peers=1)  # peer tiers among any number of offers; "too few peers" is tested on its own
CATEGORIES = (
    "security",
    "lifecycle",
    "orchestration",
    "storage",
    "networking",
    "reliability",
    "monitoring",
    "pricing",
    "partnerships",
    "availability",
)


# --- helpers ------------------------------------------------------------------------------------


def rating(
    offer_id: str, score: float | None, *, critical: bool = False, rated: bool = True, published: str | None = None
) -> Rating:
    return Rating(
        offer_id,
        rated,
        "rated" if rated else NOT_RATED_NO_EVIDENCE,
        score=score if rated else None,
        critical_failures=["monitoring.tenant_isolated: not met"] if critical else [],
        published_tier=published,
    )


def tiers_of(ratings: list[Rating], config: RatingConfig = DEFAULT) -> dict[str, str | None]:
    assign_tiers(ratings, config)
    return {r.offer_id: r.tier for r in ratings}


ALL_PROVIDER = {
    "hardware_repair": "provider",
    "firmware_drivers": "provider",
    "os_patching": "provider",
    "fabric_isolation": "provider",
    "health_checks": "provider",
    "scheduler": "provider",
    "storage": "provider",
    "monitoring": "provider",
    "incident_response": "provider",
    "serving_stack": "customer",
    "release_validation": "provider",
    "capacity_planning": "provider",
}


def make_offer(
    offer_id: str = "x",
    *,
    kind: str = "managed_cluster",
    evidence: dict | None = None,
    published: str | None = None,
    **service: Any,
) -> Offer:
    """A managed-cluster offer like basic's alpha; `service` replaces fields of its service terms."""
    # The service terms back every claim of FULL_EVIDENCE: where they differ, the contract wins.
    terms: dict[str, Any] = {
        "kind": kind,
        "sla": {"availability": 0.995, "node_replacement_hours": 24, "automatic_credits": True},
        "attestations": ["soc2_type2", "iso27001"],
        "tenant_isolation": True,
        "isolated_monitoring": True,
        "health_checks": {"active": "weekly", "passive": True},
    }
    terms.update(service)
    pricing: dict[str, Any] = {"gpu_hour": 4.0}
    responsibilities = dict(ALL_PROVIDER)
    if kind == "owned":
        terms.pop("sla")
        pricing = {
            "owned": {
                "capex_per_gpu": 43800,
                "life_years": 5,
                "power_kw_per_gpu": 1.0,
                "pue": 1.5,
                "electricity_kwh": 0.1,
                "colo_kw_month": 146,
            }
        }
        responsibilities = {job: "customer" for job in ALL_PROVIDER}
    operator: dict[str, Any] = {}
    if evidence is not None:
        operator["evidence"] = evidence
    if published is not None:
        operator["published_tier"] = published
    return Offer.model_validate(
        {
            "id": offer_id,
            "vendor": f"Vendor {offer_id}",
            "received": "2026-11-01",
            "valid_until": "2027-06-30",
            "region": "us-east",
            "gpu": "B200",
            "gpus": 100,
            "term_months": 12,
            "pricing": pricing,
            "service": terms,
            "responsibilities": responsibilities,
            "performance": {"points": [[100, 300]], "points_source": "measured"},
            "operator": operator,
        }
    )


def results_by_name(r: Rating) -> dict[str, Any]:
    return {f"{c.category}.{c.criterion}": c for c in r.results}


# Every item of the default checklist answered in full (score 100 by hand).
FULL_EVIDENCE_YAML = """\
operator:
  evidence:
    security: {iso27001: true, pentest_fabric: true, isolation_beyond_namespaces: true, patched_min_versions: true, audit_log_days: 90}
    lifecycle: {transparent_onboarding_costs: true, delivery_dates_met: true, no_punitive_egress: true, no_offboarding_fee: true}
    orchestration: {managed_control_plane: true, topology_aware_scheduling: true, slurm: true}
    storage: {parallel_filesystem: true, object_store: true, read_gb_s_per_gpu: 2.5}
    networking: {infiniband: true, rail_optimized: true, nccl_tests_published: true, allreduce_busbw_gb_s: 400}
    reliability: {passive_health_checks: true, active_health_checks: true, automatic_drain: true, sdc_checks: true, automatic_sla_credits: true}
    monitoring: {managed_dashboards: true, alerting: true, dcgm_metrics: true}
    pricing: {published_prices: true, no_hidden_fees: true, term_discounts: true}
    partnerships: {nvidia_cloud_partner: true, serving_stack_partnerships: true, upstream_contributions: true}
    availability: {lead_time_weeks: 2, gpus_available_now: 512, can_expand_to: 1024}
"""  # noqa: E501

# As above but lifecycle and orchestration answered all false: 100 - 100 x (0.10 + 0.10) = 80 by hand.
EIGHTY_EVIDENCE_YAML = FULL_EVIDENCE_YAML.replace(
    "lifecycle: {transparent_onboarding_costs: true, delivery_dates_met: true, no_punitive_egress: true, "
    "no_offboarding_fee: true}",
    "lifecycle: {transparent_onboarding_costs: false, delivery_dates_met: false, no_punitive_egress: false, "
    "no_offboarding_fee: false}",
).replace(
    "orchestration: {managed_control_plane: true, topology_aware_scheduling: true, slurm: true}",
    "orchestration: {managed_control_plane: false, topology_aware_scheduling: false, slurm: false, kubernetes: false}",
)


def full_evidence() -> dict[str, dict[str, Any]]:
    import yaml

    return yaml.safe_load(FULL_EVIDENCE_YAML)["operator"]["evidence"]


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def add_offer(ws: Path, source: str, new_id: str, evidence_yaml: str) -> None:
    """A copy of offers/{source}.yaml under a new id, with its own evidence instead of the source's."""
    text = (ws / "offers" / f"{source}.yaml").read_text().split("operator:\n")[0]
    text = text.replace(f"id: {source}\n", f"id: {new_id}\n", 1)
    (ws / "offers" / f"{new_id}.yaml").write_text(text + evidence_yaml)


# --- percentiles and tiers on hand-made peer sets --------------------------------------------------


def test_percentiles_of_distinct_scores():
    # mid-rank percentile = (offers below + half the other equals) / (n - 1)
    assert percentile_ranks([10.0, 20.0, 30.0, 40.0, 50.0]) == pytest.approx([0 / 4, 1 / 4, 2 / 4, 3 / 4, 4 / 4])
    assert percentile_ranks([50.0, 10.0, 30.0]) == pytest.approx([1.0, 0.0, 0.5])


def test_tiers_of_distinct_scores_with_default_thresholds():
    # thresholds: platinum >= 0.9, gold >= 0.6, silver >= 0.3, else bronze
    assert [tier_for(p, DEFAULT) for p in (0.0, 0.25, 0.299, 0.3, 0.5, 0.599, 0.6, 0.75, 0.899, 0.9, 1.0)] == [
        "bronze",
        "bronze",
        "bronze",
        "silver",
        "silver",
        "silver",
        "gold",
        "gold",
        "gold",
        "platinum",
        "platinum",
    ]
    peers = [rating("a", 10), rating("b", 20), rating("c", 30), rating("d", 40), rating("e", 50)]
    # percentiles 0, 0.25, 0.5, 0.75, 1
    assert tiers_of(peers) == {"a": "bronze", "b": "bronze", "c": "silver", "d": "gold", "e": "platinum"}
    assert [r.percentile for r in peers] == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])


def test_custom_thresholds():
    config = RatingConfig(tiers=TierThresholds(platinum=1.0, gold=0.5, silver=0.25))
    peers = [rating("a", 10), rating("b", 20), rating("c", 30), rating("d", 40), rating("e", 50)]
    assert tiers_of(peers, config) == {"a": "bronze", "b": "silver", "c": "gold", "d": "gold", "e": "platinum"}


def test_equal_scores_share_a_percentile_and_a_tier():
    # 50: 0 below -> 0; 70 (twice): 1 below + 0.5 x 1 other equal = 1.5 / 3 = 0.5; 90: 3 below -> 1
    assert percentile_ranks([50.0, 70.0, 70.0, 90.0]) == pytest.approx([0.0, 0.5, 0.5, 1.0])
    peers = [rating("a", 50), rating("b", 70), rating("c", 70), rating("d", 90)]
    assert tiers_of(peers) == {"a": "bronze", "b": "silver", "c": "silver", "d": "platinum"}
    # a tie at the top: 60 -> 0; 80 (twice): (1 + 0.5) / 2 = 0.75 -> gold, both
    peers = [rating("a", 60), rating("b", 80), rating("c", 80)]
    assert tiers_of(peers) == {"a": "bronze", "b": "gold", "c": "gold"}


def test_a_single_rated_offer_sits_at_the_median():
    assert percentile_ranks([73.0]) == [0.5]
    only = [rating("solo", 73.0)]
    assert tiers_of(only) == {"solo": "silver"}
    assert only[0].percentile == 0.5


def test_all_equal_scores_sit_at_the_median():
    # each: 0 below + 0.5 x 2 other equals = 1 / 2 = 0.5
    assert percentile_ranks([80.0, 80.0, 80.0]) == pytest.approx([0.5, 0.5, 0.5])
    peers = [rating("a", 80), rating("b", 80), rating("c", 80)]
    assert set(tiers_of(peers).values()) == {"silver"}


def test_critical_failure_is_underperform_whatever_the_score_and_not_a_peer():
    peers = [rating("top", 99.0, critical=True), rating("b", 60.0), rating("c", 80.0)]
    tiers = tiers_of(peers)
    assert tiers["top"] == UNDERPERFORM == "underperform"
    assert peers[0].percentile is None
    # the peers are b and c alone: b at 0 (bronze), c at 1 (platinum); counting "top" would put c at 0.5
    assert tiers["b"] == "bronze" and tiers["c"] == "platinum"
    assert peers[1].percentile == 0.0 and peers[2].percentile == 1.0


def test_only_critical_failures_leaves_no_peers():
    peers = [rating("a", 90.0, critical=True), rating("b", 10.0, critical=True)]
    assert tiers_of(peers) == {"a": "underperform", "b": "underperform"}


def test_unrated_offers_have_no_tier_and_are_not_peers():
    peers = [rating("na", None, rated=False), rating("b", 60.0), rating("c", 80.0)]
    assert tiers_of(peers) == {"na": None, "b": "bronze", "c": "platinum"}
    assert peers[0].percentile is None


# --- who is rated ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bare_metal", "owned"])
def test_self_operated_offers_are_not_rated_even_with_evidence(kind):
    offer = make_offer(kind=kind, evidence=full_evidence(), published="gold")
    r = rate_offer(offer, DEFAULT)
    assert not r.rated
    # bare metal: no checklist score (it measures a managed service), and no published tier (ClusterMAX rates managed
    # clusters only): its provider is judged by its incident history and SLA
    assert r.note == (NOT_RATED_SELF_OPERATED if kind == "owned" else NOT_RATED_NO_EVIDENCE)
    assert r.score is None and r.categories == {}
    assigned = [r, rating("peer", 50.0)]
    assign_tiers(assigned, DEFAULT)
    assert r.tier is None
    assert not r.disagrees  # a published tier with no computed one is not a disagreement


def test_self_operated_offers_in_an_evaluation(data_dir):
    bravo = evaluate(load_workspace(data_dir / "basic"), AS_OF).offer("bravo")
    assert bravo.kind == "bare_metal"
    assert bravo.rating.rated is False and bravo.rating.tier is None and bravo.rating.score is None
    assert bravo.rating.note == "not rated: no operator evidence"
    assert bravo.reliability_factor == 0.97  # no tier: unrated, basic's stated haircut 0.97
    assert bravo.rating_state == "unrated" and bravo.actions[0].startswith("rate before signing")
    owned = evaluate(load_workspace(data_dir / "offer_kinds"), AS_OF).offer("owned")
    assert owned.rating.rated is False and owned.rating.tier is None
    assert owned.rating.note == "not rated: the operating work is yours"
    assert owned.reliability_factor is None
    # self-operated, no SLA: our host 0.98 x our operating jobs 0.98, x the mean of the availability factor at the point
    assert owned.metrics["availability"] == pytest.approx(0.98 * 0.98 * AVAILABILITY_MEAN)


def test_managed_offer_without_evidence_is_not_rated_and_uses_the_unrated_factor(data_dir):
    r = rate_offer(make_offer(), DEFAULT)
    assert not r.rated and r.note == NOT_RATED_NO_EVIDENCE == "not rated: no operator evidence"
    # the stated haircut as it is (0.97); not stated, the Participation Ribbon's 0.965 (below Bronze's 0.98)
    assert reliability_from_score(r, Reliability(unrated=0.97)) == 0.97
    assert reliability_from_score(r, Reliability()) == 0.965
    alpha = evaluate(load_workspace(data_dir / "basic"), AS_OF).offer("alpha")
    assert alpha.rating.rated is False and alpha.rating.tier is None
    assert alpha.rating.note == "not rated: no operator evidence"
    assert alpha.reliability_factor == 0.97  # basic's stated unrated haircut 0.97
    assert alpha.reliability_source == "unrated"
    assert alpha.metrics["availability"] == pytest.approx(
        0.995 * 0.97 * AVAILABILITY_MEAN
    )  # x the factor's mean at the point


# --- scores by hand -------------------------------------------------------------------------------

# Five categories with small checklists; the other five weigh nothing and ask nothing.
HAND_CONFIG = RatingConfig(
    categories={
        "security": RatingCategory(
            weight=3,
            criteria={
                "soc2_type2": Criterion(),
                "iso27001": Criterion(),
                "audit_log_days": Criterion(weight=2, at_least=90),
            },
        ),
        "reliability": RatingCategory(
            weight=2, criteria={"passive_health_checks": Criterion(), "node_replacement_hours": Criterion(at_most=24)}
        ),
        "monitoring": RatingCategory(
            weight=1, criteria={"tenant_isolated": Criterion(), "managed_dashboards": Criterion()}
        ),
        "orchestration": RatingCategory(
            weight=1,
            criteria={"scheduler": Criterion(any_of=["slurm", "kubernetes"]), "managed_control_plane": Criterion()},
        ),
        "storage": RatingCategory(weight=1, criteria={"parallel_filesystem": Criterion()}),
        **{
            name: RatingCategory(weight=0, criteria={})
            for name in ("lifecycle", "networking", "pricing", "partnerships", "availability")
        },
    }
)


def test_category_and_overall_scores_by_hand():
    offer = make_offer(
        attestations=["soc2_type2"],
        sla={"availability": 0.995, "node_replacement_hours": 48},
        evidence={
            "security": {"iso27001": False, "audit_log_days": 45},
            "reliability": {"passive_health_checks": True},
            "orchestration": {"kubernetes": True, "slurm": False, "managed_control_plane": False},
        },
    )
    r = rate_offer(offer, HAND_CONFIG)
    assert r.rated and r.note == "rated" and not r.critical
    # security: soc2 (from attestations) 1 x 1 + iso27001 false 1 x 0 + audit 2 x 45/90 = 2 of 4 -> 50
    # reliability: passive 1 + node replacement 24/48 (from the SLA) = 1.5 of 2 -> 75
    # monitoring: tenant_isolated (from service terms) 1 + dashboards unanswered 0 = 1 of 2 -> 50
    # orchestration: any_of (kubernetes true) 1 + control plane false 0 -> 50
    # storage: nothing answered -> 0; weightless categories with no criteria -> 0
    expected = {
        "security": 50.0,
        "reliability": 75.0,
        "monitoring": 50.0,
        "orchestration": 50.0,
        "storage": 0.0,
        "lifecycle": 0.0,
        "networking": 0.0,
        "pricing": 0.0,
        "partnerships": 0.0,
        "availability": 0.0,
    }
    assert r.categories == pytest.approx(expected)
    assert list(r.categories) == list(CATEGORIES)
    # overall = (3 x 50 + 2 x 75 + 1 x 50 + 1 x 50 + 1 x 0) / (3 + 2 + 1 + 1 + 1) = 400 / 8
    assert r.score == pytest.approx(50.0)
    found = results_by_name(r)
    assert found["security.audit_log_days"].answer == 45 and found["security.audit_log_days"].met == pytest.approx(0.5)
    assert found["reliability.node_replacement_hours"].answer == 48 and found[
        "reliability.node_replacement_hours"
    ].met == pytest.approx(0.5)
    assert (
        found["orchestration.scheduler"].answer == {"slurm": False, "kubernetes": True}
        and found["orchestration.scheduler"].met == 1.0
    )
    assert found["monitoring.managed_dashboards"].answer is None and found["monitoring.managed_dashboards"].met == 0.0
    assert found["storage.parallel_filesystem"].answer is None


def test_thresholds_cap_at_full_marks_and_any_of_needs_a_true_answer():
    offer = make_offer(
        sla={"availability": 0.995, "node_replacement_hours": 48},
        evidence={
            "security": {"iso27001": True, "audit_log_days": 365},
            "reliability": {"passive_health_checks": True, "node_replacement_hours": 4},  # stated: beats the SLA's 48
            "monitoring": {"managed_dashboards": True},
            "orchestration": {"slurm": False, "kubernetes": False, "managed_control_plane": True},
            "storage": {"parallel_filesystem": True},
        },
    )
    r = rate_offer(offer, HAND_CONFIG)
    # security: 1 + 1 + 2 x min(1, 365/90) = 4 of 4; reliability: 1 + (4 <= 24: 1) = 2 of 2
    # monitoring 2 of 2; orchestration: any_of all false 0 + control plane 1 = 1 of 2; storage 1 of 1
    assert r.categories["security"] == pytest.approx(100.0)
    assert r.categories["reliability"] == pytest.approx(100.0)
    assert r.categories["monitoring"] == pytest.approx(100.0)
    assert r.categories["orchestration"] == pytest.approx(50.0)
    assert r.categories["storage"] == pytest.approx(100.0)
    # (3 x 100 + 2 x 100 + 100 + 50 + 100) / 8 = 750 / 8
    assert r.score == pytest.approx(93.75)
    assert results_by_name(r)["reliability.node_replacement_hours"].answer == 4


def test_any_of_with_nothing_answered_scores_zero():
    offer = make_offer(evidence={"orchestration": {"managed_control_plane": True}})
    r = rate_offer(offer, HAND_CONFIG)
    assert results_by_name(r)["orchestration.scheduler"].answer is None
    assert r.categories["orchestration"] == pytest.approx(50.0)


def test_default_checklist_full_and_partial_by_hand():
    full = rate_offer(make_offer(evidence=full_evidence()), DEFAULT)
    assert full.categories == pytest.approx({c: 100.0 for c in CATEGORIES})
    assert full.score == pytest.approx(100.0)
    partial = full_evidence()
    partial["lifecycle"] = {k: False for k in partial["lifecycle"]}
    partial["storage"] = {"parallel_filesystem": True, "read_gb_s_per_gpu": 1.0}  # object_store unanswered
    partial["availability"] = {"lead_time_weeks": 8, "gpus_available_now": 512, "can_expand_to": 512}
    r = rate_offer(make_offer(evidence=partial), DEFAULT)
    # storage: 1 + 0 + 1.0/2.0 = 1.5 of 3 -> 50; availability: 4/8 + 1 + 512/1024 = 2 of 3 -> 66.67
    assert r.categories["lifecycle"] == 0.0
    assert r.categories["storage"] == pytest.approx(50.0)
    assert r.categories["availability"] == pytest.approx(200 / 3)
    # overall = 100 - 0.10 x 100 - 0.08 x 50 - 0.08 x (100 - 200/3), weights summing to 1
    assert r.score == pytest.approx(100 - 10 - 4 - 0.08 * (100 / 3))


def test_evidence_is_filled_from_service_terms_when_not_stated():
    offer = make_offer(
        attestations=["soc2_type2"],
        isolated_monitoring=True,
        sla={"availability": 0.995, "node_replacement_hours": 12, "automatic_credits": True},
        health_checks={"active": "weekly", "passive": True},
        evidence={"pricing": {"published_prices": True}},
    )
    found = results_by_name(rate_offer(offer, DEFAULT))
    assert found["security.soc2_type2"].answer is True and found["security.soc2_type2"].met == 1.0
    assert found["security.iso27001"].answer is False
    assert found["security.fabric_tenant_isolation"].answer is True
    assert found["monitoring.tenant_isolated"].answer is True
    assert (
        found["reliability.node_replacement_hours"].answer == 12
        and found["reliability.node_replacement_hours"].met == 1.0
    )
    assert found["reliability.active_health_checks"].answer is True
    assert found["reliability.passive_health_checks"].answer is True
    assert found["reliability.automatic_sla_credits"].answer is True


def test_the_contract_wins_over_checklist_claims():
    offer = make_offer(
        attestations=[],
        isolated_monitoring=False,
        health_checks={"active": "none", "passive": False},
        sla={"availability": 0.995, "node_replacement_hours": 12},
        evidence={
            "security": {"soc2_type2": True},
            "monitoring": {"tenant_isolated": True},
            "reliability": {"node_replacement_hours": 48, "active_health_checks": True, "passive_health_checks": True},
        },
    )
    r = rate_offer(offer, DEFAULT)
    found = results_by_name(r)
    # what the service terms promise is what counts: no attestation, shared monitoring, no health checks
    assert found["security.soc2_type2"].answer is False
    assert found["monitoring.tenant_isolated"].answer is False
    assert (
        found["reliability.active_health_checks"].answer is False
        and found["reliability.passive_health_checks"].answer is False
    )
    # node replacement hours are not a contract claim here: the checklist's own answer stands
    assert found["reliability.node_replacement_hours"].answer == 48 and found[
        "reliability.node_replacement_hours"
    ].met == pytest.approx(0.5)
    # so the critical failures apply, and the overridden claims are listed
    assert r.critical_failures == [
        "security.soc2_type2 or security.iso27001: not met",
        "monitoring.tenant_isolated: not met",
    ]
    assert r.contract_overrides == [
        "operator.evidence.security.soc2_type2",
        "operator.evidence.monitoring.tenant_isolated",
        "operator.evidence.reliability.active_health_checks",
        "operator.evidence.reliability.passive_health_checks",
    ]


def test_critical_failures_from_service_terms():
    leaky = rate_offer(
        make_offer(
            attestations=[],
            isolated_monitoring=False,
            evidence=full_evidence() | {"security": {"pentest_fabric": True}},
        ),
        DEFAULT,
    )
    assert leaky.rated
    assert leaky.critical_failures == [
        "security.soc2_type2 or security.iso27001: not met",
        "monitoring.tenant_isolated: not met",
    ]
    iso_only = rate_offer(make_offer(attestations=["iso27001"], evidence=full_evidence()), DEFAULT)
    assert not iso_only.critical  # either attestation will do
    peers = [leaky, iso_only]
    assign_tiers(peers, DEFAULT)
    assert leaky.tier == "underperform" and iso_only.tier == "silver"


# --- reliability factor from the absolute score -----------------------------------------------------


@pytest.mark.parametrize(
    ("score", "factor"),
    [
        (100.0, 1.0),
        (85.0, 1.0),
        (84.9, 0.995),
        (70.0, 0.995),
        (69.9, 0.99),
        (55.0, 0.99),
        (54.9, 0.98),
        (40.0, 0.98),
        (39.9, 0.95),
        (0.0, 0.95),
    ],
)
def test_reliability_factor_through_the_bands(score, factor):
    # default bands: [[85, 1.0], [70, 0.995], [55, 0.99], [40, 0.98], [0, 0.95]]
    assert reliability_from_score(rating("x", score), Reliability()) == factor


def test_critical_failure_takes_the_lowest_band_whatever_the_score():
    assert reliability_from_score(rating("x", 99.0, critical=True), Reliability()) == 0.95
    custom = Reliability(bands=[(90, 1.0), (50, 0.99), (0, 0.9)])
    assert reliability_from_score(rating("x", 99.0, critical=True), custom) == 0.9
    assert reliability_from_score(rating("x", 60.0), custom) == 0.99


def test_unrated_uses_the_stated_haircut_else_the_lowest_published_tier_short_of_underperform():
    unrated = rating("x", None, rated=False)
    # one figure, no cap: 0.96 and 0.94 as stated
    assert reliability_from_score(unrated, Reliability(unrated=0.96)) == 0.96
    assert reliability_from_score(unrated, Reliability(unrated=0.94)) == 0.94
    # not stated: the Participation Ribbon's 0.965, below Bronze's 0.98 (ClusterMAX 3.0 gave most operators no medal)
    assert reliability_from_score(unrated, Reliability()) == 0.965
    # the rule follows the published table: a Ribbon at 0.96 gives 0.96
    ribbon = {"platinum": 1.0, "gold": 0.995, "silver": 0.99, "bronze": 0.98, "participation_ribbon": 0.96}
    assert reliability_from_score(unrated, Reliability(published=ribbon)) == 0.96
    # a table that leaves the Ribbon out keeps the built-in Ribbon's 0.965; one whose Bronze is lower takes Bronze's
    assert reliability_from_score(unrated, Reliability(published={"bronze": 0.98})) == 0.965
    assert reliability_from_score(unrated, Reliability(published={"bronze": 0.96})) == 0.96
    # and never above the middle score band (of three bands the second): 0.95 here
    assert reliability_from_score(unrated, Reliability(bands=[(80, 1.0), (40, 0.95), (0, 0.9)])) == 0.95


def test_a_haircut_above_the_middle_band_is_refused(tmp_path, data_dir):
    import shutil

    from clihelp import run

    ws = tmp_path / "ws"
    shutil.copytree(data_dir / "rated", ws)
    text = (ws / "procure.yaml").read_text()
    assert "    unrated: 0.97\n" in text
    (ws / "procure.yaml").write_text(text.replace("    unrated: 0.97\n", "    unrated: 0.995\n"))
    result = run("validate", "-w", ws)
    assert result.exit_code == 2
    assert "assumptions.reliability.unrated: 0.995 is above the middle band's factor 0.99" in result.stderr
    assert "Traceback" not in result.stderr


# --- the rating in the cost ----------------------------------------------------------------------


def alpha_cost(factor: float) -> float:
    # 4.75 / (1,080 x 0.995 x factor x 0.9 x 0.8), availability and utilization each x the mean of its factor at the
    # point
    return 4.75 / (1080 * 0.995 * factor * 0.9 * 0.8 * DELIVERY_MEAN)


def backed(ws: Path) -> None:
    """basic's alpha with service terms that back FULL_EVIDENCE's claims (the contract wins otherwise)."""
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(
        offer.read_text().replace(
            "  sla: {availability: 0.995, node_replacement_hours: 24}\n  attestations: [soc2_type2]\n",
            "  sla: {availability: 0.995, node_replacement_hours: 24, automatic_credits: true}\n  attestations: "
            "[soc2_type2, iso27001]\n"
            "  health_checks: {active: weekly, passive: true}\n",
        )
    )


def test_full_marks_raise_availability_and_lower_cost_per_task(workspace_copy, data_dir):
    unrated = evaluate(load_workspace(data_dir / "basic"), AS_OF).offer("alpha")
    assert unrated.metrics["point_cost_per_task"] == pytest.approx(alpha_cost(0.97), rel=1e-12)
    ws = workspace_copy("basic")
    backed(ws)
    append(ws / "offers" / "alpha.yaml", FULL_EVIDENCE_YAML)
    alpha = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert alpha.rating.score == pytest.approx(100.0)
    assert alpha.reliability_factor == 1.0  # basic's bands: [[85, 1.0], [0, 0.97]]
    assert alpha.reliability_source == "checklist"
    assert alpha.metrics["availability"] == pytest.approx(
        0.995 * 1.0 * AVAILABILITY_MEAN, rel=1e-12
    )  # x the factor's mean
    assert alpha.metrics["point_cost_per_task"] == pytest.approx(alpha_cost(1.0), rel=1e-12)
    # fully used: cost per task scales by unrated factor / band factor = 0.97 / 1.0
    assert alpha.metrics["point_cost_per_task"] / unrated.metrics["point_cost_per_task"] == pytest.approx(
        0.97 / 1.0, rel=1e-12
    )
    assert alpha.metrics["full"] == pytest.approx(4.75)  # the rating moves availability, not the bill


def test_a_middling_score_lowers_availability_and_raises_cost_per_task(workspace_copy, data_dir):
    unrated = evaluate(load_workspace(data_dir / "basic"), AS_OF).offer("alpha")
    ws = workspace_copy("basic")
    backed(ws)
    append(ws / "offers" / "alpha.yaml", EIGHTY_EVIDENCE_YAML)
    alpha = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert alpha.rating.score == pytest.approx(80.0)
    # operational score: security 100 x 0.15 + lifecycle 0 x 0.10 + reliability 100 x 0.15 + monitoring 100 x 0.12,
    # over 0.52 = 42 / 0.52 = 80.77 (orchestration, unmet, does not count)
    assert alpha.rating.operational_score == pytest.approx(42 / 0.52)
    assert alpha.reliability_factor == 0.97  # 80.77 < 85: basic's lower band, 0.97
    assert alpha.metrics["availability"] == pytest.approx(0.995 * 0.97 * AVAILABILITY_MEAN, rel=1e-12)
    # the lowest band costs what giving no evidence costs: never less
    assert alpha.metrics["cost_per_task"] == pytest.approx(unrated.metrics["cost_per_task"], rel=1e-12)


def test_middle_band_with_five_bands(workspace_copy):
    ws = workspace_copy("basic")
    config = ws / "procure.yaml"
    config.write_text(
        config.read_text().replace(
            "bands: [[85, 1.0], [0, 0.97]]", "bands: [[85, 1.0], [70, 0.995], [55, 0.99], [40, 0.98], [0, 0.95]]"
        )
    )
    backed(ws)
    append(ws / "offers" / "alpha.yaml", EIGHTY_EVIDENCE_YAML)
    alpha = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert alpha.reliability_factor == 0.995  # 70 <= 80.77 (operational) < 85
    assert alpha.metrics["availability"] == pytest.approx(0.995 * 0.995 * AVAILABILITY_MEAN, rel=1e-12)
    assert alpha.metrics["point_cost_per_task"] == pytest.approx(alpha_cost(0.995), rel=1e-12)


def test_critical_failure_costs_the_lowest_band(workspace_copy):
    ws = workspace_copy("basic")
    append(ws / "offers" / "charlie.yaml", "operator:\n  evidence:\n    pricing: {published_prices: true}\n")
    charlie = evaluate(load_workspace(ws), AS_OF).offer("charlie")
    assert charlie.rating.tier == "underperform"
    assert charlie.reliability_factor == 0.97  # basic's lowest band
    # 2.50 rent + 0.60 serving staff + 0.05 software = 3.15; 300 tok/s, 0.995 x 0.97; x the factors' means at the point
    assert charlie.metrics["point_cost_per_task"] == pytest.approx(
        3.15 / (1080 * 0.995 * 0.97 * 0.9 * 0.8 * DELIVERY_MEAN), rel=1e-12
    )


def test_other_bids_never_change_an_offers_cost_but_do_change_its_tier(workspace_copy):
    ws = workspace_copy("basic")
    backed(ws)
    append(ws / "procure.yaml", "rating:\n  min_peers: 1\n")
    append(ws / "offers" / "alpha.yaml", EIGHTY_EVIDENCE_YAML)
    alone = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert alone.rating.tier == "silver"  # the only rated offer: percentile 0.5
    assert alone.metrics["point_cost_per_task"] == pytest.approx(alpha_cost(0.97), rel=1e-12)
    cost = alone.metrics["cost_per_task"]  # the mean of its draws: the other bids move none of them

    add_offer(ws, "alpha", "delta", FULL_EVIDENCE_YAML)  # a better-run peer
    with_peer = evaluate(load_workspace(ws), AS_OF)
    assert with_peer.offer("delta").rating.tier == "platinum"
    assert with_peer.offer("alpha").rating.tier == "bronze"  # percentile 0 now
    assert with_peer.offer("alpha").metrics["cost_per_task"] == pytest.approx(cost, rel=1e-12)
    assert with_peer.offer("alpha").reliability_factor == 0.97

    for gone in ("bravo", "charlie", "delta"):
        (ws / "offers" / f"{gone}.yaml").unlink()
    by_itself = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert by_itself.metrics["cost_per_task"] == pytest.approx(cost, rel=1e-12)


def test_published_tier_disagreement_flag():
    assert rating("a", 90, published="gold").disagrees is False  # no tier assigned yet
    peers = [rating("a", 90, published="gold"), rating("b", 10, published="bronze"), rating("c", 50, published=None)]
    assign_tiers(peers, DEFAULT)
    # a: 1 -> platinum (published gold: differs); b: 0 -> bronze (agrees); c: 0.5 -> silver (none published)
    assert [(r.tier, r.disagrees) for r in peers] == [("platinum", True), ("bronze", False), ("silver", False)]
    critical = rating("d", 90, critical=True, published="underperform")
    assign_tiers([critical], DEFAULT)
    assert critical.tier == "underperform" and critical.disagrees is False


def test_published_tier_in_the_evaluation(data_dir):
    ev = evaluate(load_workspace(data_dir / "rated"), AS_OF)
    alpha, delta, charlie = ev.offer("alpha").rating, ev.offer("delta").rating, ev.offer("charlie").rating
    assert (alpha.tier, alpha.published_tier, alpha.disagrees) == ("platinum", "gold", True)
    assert (delta.tier, delta.published_tier, delta.disagrees) == ("bronze", "bronze", False)
    assert (charlie.tier, charlie.published_tier, charlie.disagrees) == ("underperform", "silver", True)


# --- evidence validation --------------------------------------------------------------------------


def test_evidence_problems_are_reported_with_file_line_and_field(workspace_copy):
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    append(
        offer,
        "operator:\n"
        "  evidence:\n"
        "    securty: {soc2_type2: true}\n"
        "    monitoring: {tenant_isolated: true, dashbords: true}\n"
        "    storage: {read_gb_s_per_gpu: fast}\n"
        "    reliability: {passive_health_checks: 1}\n",
    )
    lines = offer.read_text().splitlines()

    def line(prefix: str) -> int:
        return next(i for i, text in enumerate(lines, start=1) if text.startswith(prefix))

    with pytest.raises(InputError) as caught:
        load_workspace(ws)
    reported = [str(p) for p in caught.value.problems]
    assert (
        f"offers/alpha.yaml:{line('    securty:')}: operator.evidence.securty: unknown rating category (expected one "
        "of: "
        "security, lifecycle, orchestration, storage, networking, reliability, monitoring, pricing, partnerships, "
        "availability)"
    ) in reported
    assert (
        f"offers/alpha.yaml:{line('    monitoring:')}: operator.evidence.monitoring.dashbords: unknown monitoring "
        "criterion "
        "(expected one of: alerting, dcgm_metrics, managed_dashboards, tenant_isolated)"
    ) in reported
    assert (
        f"offers/alpha.yaml:{line('    storage:')}: operator.evidence.storage.read_gb_s_per_gpu: must be a number of "
        "at least 0 (got 'fast')" in reported
    )
    assert (
        f"offers/alpha.yaml:{line('    reliability:')}: operator.evidence.reliability.passive_health_checks: must be "
        "true or false (got 1)" in reported
    )
    assert len(reported) == 4


def test_evidence_on_its_own_lines_points_at_the_answer(workspace_copy):
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    append(
        offer, 'operator:\n  evidence:\n    networking:\n      infiniband: true\n      allreduce_busbw_gb_s: "400"\n'
    )
    line = offer.read_text().splitlines().index('      allreduce_busbw_gb_s: "400"') + 1
    with pytest.raises(InputError) as caught:
        load_workspace(ws)
    assert [str(p) for p in caught.value.problems] == [
        f"offers/alpha.yaml:{line}: operator.evidence.networking.allreduce_busbw_gb_s: must be a number of at least 0 "
        "(got '400')"
    ]


def test_valid_evidence_loads(data_dir):
    ws = load_workspace(data_dir / "rated")
    assert {o.id for o in ws.offers} == {"alpha", "bravo", "charlie", "delta", "echo"}


# --- known problems -------------------------------------------------------------------------------


def test_a_score_exactly_on_a_band_boundary_gets_that_band():
    evidence = full_evidence()
    # the whole reliability category unmet (weight 0.15); the SLA states no node replacement hours
    evidence["reliability"] = {k: False for k in evidence["reliability"]}
    r = rate_offer(
        make_offer(sla={"availability": 0.995}, health_checks={"active": "none", "passive": False}, evidence=evidence),
        DEFAULT,
    )
    assert r.categories["reliability"] == 0.0 and not r.critical
    # overall = 100 - 0.15 x 100 = 85; operational = (15 + 10 + 0 + 12) / 0.52 = 71.15 -> the [70, 0.995] band
    assert r.score == pytest.approx(85.0)
    assert r.operational_score == pytest.approx(37 / 0.52)
    assert reliability_from_score(r, Reliability()) == 0.995
    on_the_line = rating("x", 90.0)
    on_the_line.operational_score = 70.0
    assert reliability_from_score(on_the_line, Reliability()) == 0.995


def test_offers_equal_by_hand_share_a_tier():
    weak_storage = full_evidence()
    weak_storage["storage"] = {"parallel_filesystem": True, "object_store": False, "read_gb_s_per_gpu": 0}
    weak_availability = full_evidence()
    weak_availability["availability"] = {"lead_time_weeks": 2, "gpus_available_now": 0, "can_expand_to": 0}
    a = rate_offer(make_offer("a", evidence=weak_storage), DEFAULT)
    b = rate_offer(make_offer("b", evidence=weak_availability), DEFAULT)
    # both: 100 - 0.08 x (100 - 100/3) = 94.666...
    assert a.score == pytest.approx(100 - 0.08 * 200 / 3) and b.score == pytest.approx(100 - 0.08 * 200 / 3)
    assign_tiers([a, b], DEFAULT)
    assert a.tier == b.tier == "silver"  # two equal peers sit at 0.5


# --- reliability: operational categories, published tiers, the unrated floor, self-operated --------

from procure.model.inputs import Assumptions  # noqa: E402
from procure.model.rating import contradiction_warnings, published_disagrees, rate_before_signing, reliability_of  # noqa: E402

DEFAULT_ASSUMPTIONS = (
    Assumptions()
)  # bands [[85, 1.0], [70, 0.995], [55, 0.99], [40, 0.98], [0, 0.95]], self-operated 0.98


def rated_offer(evidence: dict | None = None, published: str | None = None, **service: Any) -> tuple[Offer, Rating]:
    offer = make_offer(evidence=evidence, published=published, **service)
    r = rate_offer(offer, RatingConfig())
    assign_tiers([r], RatingConfig())
    return offer, r


def test_only_the_operational_categories_move_the_factor():
    evidence = full_evidence()
    for category in ("orchestration", "storage", "networking", "pricing", "partnerships", "availability"):
        evidence[category] = {}  # unanswered: not met
    offer, r = rated_offer(evidence)
    # overall = 100 - 100 x (0.10 + 0.08 + 0.10 + 0.06 + 0.06 + 0.08) = 52: the [40, 0.98] band by the overall score,
    # but security, lifecycle, reliability and monitoring are all met: operational 100 -> the [85, 1.0] band
    assert r.score == pytest.approx(52.0)
    assert r.operational_score == pytest.approx(100.0)
    result = reliability_of(offer, r, DEFAULT_ASSUMPTIONS)
    assert (result.factor, result.source) == (1.0, "checklist")


def test_operational_score_is_the_weighted_mean_of_its_four_categories():
    evidence = full_evidence()
    evidence["monitoring"] = {
        "managed_dashboards": False,
        "alerting": False,
        "dcgm_metrics": True,
    }  # + tenant_isolated from terms: 2 of 4
    offer, r = rated_offer(evidence)
    # security 100 x 0.15 + lifecycle 100 x 0.10 + reliability 100 x 0.15 + monitoring 50 x 0.12 = 46 of 52 -> 88.46
    assert r.categories["monitoring"] == pytest.approx(50.0)
    assert r.operational_score == pytest.approx(46 / 0.52)
    assert reliability_of(offer, r, DEFAULT_ASSUMPTIONS).factor == 1.0  # 88.46 >= 85


@pytest.mark.parametrize(
    "tier, factor", [("platinum", 1.0), ("gold", 0.995), ("silver", 0.99), ("bronze", 0.98), ("underperform", 0.95)]
)
def test_a_published_tier_without_a_checklist_sets_the_factor(tier, factor):
    offer, r = rated_offer(published=tier)
    assert not r.rated and r.note.startswith("not rated here")
    result = reliability_of(offer, r, DEFAULT_ASSUMPTIONS)
    # assumptions.reliability.published defaults: the same factors as the score bands, tier for tier
    assert (result.factor, result.source) == (factor, "published")


def test_published_bands_come_from_procure_yaml():
    custom = Assumptions(reliability={"published": {"gold": 0.97, "silver": 0.96}})
    offer, r = rated_offer(published="gold")
    assert reliability_of(offer, r, custom).factor == 0.97


def test_with_both_the_checklist_decides_and_a_difference_is_flagged():
    offer, r = rated_offer(full_evidence(), published="bronze")
    result = reliability_of(offer, r, DEFAULT_ASSUMPTIONS)
    assert (result.factor, result.source) == (1.0, "checklist")  # operational 100, not bronze's 0.98
    # one rated offer: no peer tier, so the checklist's factor 1.0 is set against bronze's 0.98
    assert r.tier is None and published_disagrees(r, offer, DEFAULT_ASSUMPTIONS)
    agreeing_offer, agreeing = rated_offer(full_evidence(), published="platinum")
    assert not published_disagrees(agreeing, agreeing_offer, DEFAULT_ASSUMPTIONS)  # 1.0 = platinum's 1.0


def test_an_unrated_managed_offer_never_beats_a_published_tier_or_the_middle_band():
    offer, r = rated_offer()
    result = reliability_of(offer, r, DEFAULT_ASSUMPTIONS)
    # no haircut stated: the Participation Ribbon's 0.965, the lowest published tier short of Underperform
    assert (result.factor, result.source) == (0.965, "unrated")
    assert "the default: no better than the lowest published tier" in result.basis
    # a checklist at 40 or above (Bronze's band, 0.98, and better) is never worse than giving none; below it, worse
    for score in (40.0, 54.9, 55.0, 69.9, 70.0, 85.0, 100.0):
        scored = rating("x", score)
        scored.operational_score = score
        assert reliability_from_score(scored, DEFAULT_ASSUMPTIONS.reliability) >= result.factor
    for score in (0.0, 39.9):
        scored = rating("x", score)
        scored.operational_score = score
        assert reliability_from_score(scored, DEFAULT_ASSUMPTIONS.reliability) < result.factor
    # every published tier but Underperform is at least it; Bronze (the lowest medal) is above it
    published = DEFAULT_ASSUMPTIONS.reliability.published
    assert min(v for k, v in published.items() if k != "underperform") >= result.factor
    assert published["bronze"] > result.factor


def test_a_tier_rates_managed_clusters_only_and_its_absence_never_asks_for_one(data_dir):
    # ClusterMAX 3.0 rates managed clusters only: on bare metal and on endpoints a recorded tier is shown, never used
    for kind in ("bare_metal", "managed_serving"):
        offer = make_offer(kind=kind, published="platinum")
        r = rate_offer(offer, RatingConfig())
        result = reliability_of(offer, r, DEFAULT_ASSUMPTIONS)
        # the unrated default (the Participation Ribbon's 0.965), as with no tier at all
        assert (result.factor, result.source) == (0.965, "unrated"), kind
        assert r.published_tier == "platinum" and not r.published_applies
    cluster = make_offer(kind="managed_cluster", published="platinum")
    assert reliability_of(cluster, rate_offer(cluster, RatingConfig()), DEFAULT_ASSUMPTIONS).factor == 1.0
    # the action asks only for evidence the kind can have
    assert rate_before_signing(make_offer(kind="bare_metal")) == "rate before signing: add operator.status_history"
    assert (
        rate_before_signing(make_offer(kind="managed_serving"))
        == "rate before signing: add operator.evidence (the operator checklist) or operator.status_history"
    )
    assert "operator.published_tier" in rate_before_signing(cluster)
    bravo = evaluate(load_workspace(data_dir / "basic"), AS_OF).offer("bravo")
    assert bravo.reliability_source == "unrated"  # no tier
    assert bravo.sla_availability == 0.99
    # judged and costed: 0.99 x haircut 0.97 x ours 0.98 (the eight operating jobs, 0.98^(1/8) each) = 0.941094
    assert bravo.metrics["availability"] == pytest.approx(0.941094 * AVAILABILITY_MEAN, rel=1e-9)  # x the factor's mean


def test_owned_is_self_operated_without_an_sla(data_dir):
    owned = evaluate(load_workspace(data_dir / "offer_kinds"), AS_OF).offer("owned")
    assert owned.reliability_source == "self_operated" and owned.sla_availability is None
    assert owned.metrics["availability"] == pytest.approx(
        0.9604 * AVAILABILITY_MEAN
    )  # our host 0.98 x our operating jobs 0.98, x the factor's mean


def test_the_factor_is_the_band_or_tier_itself_with_no_floor():
    own = Assumptions(self_operated_reliability=0.995)
    # middle band of five: [55, 0.99]: the factor on the provider's layer is the band's, whatever our own
    # reliability (the jobs left to us are a layer of their own: see the layered availability tests)
    middle = rating("m", 60.0)
    middle.operational_score = 60.0
    offer = make_offer()
    assert reliability_of(offer, middle, own).factor == 0.99
    low = rating("l", 45.0)
    low.operational_score = 45.0
    assert reliability_of(offer, low, own).factor == 0.98
    assert (
        reliability_of(
            make_offer(published="silver"), rate_offer(make_offer(published="silver"), RatingConfig()), own
        ).factor
        == 0.99
    )


# --- peer tiers need enough peers ----------------------------------------------------------------


def test_fewer_than_min_peers_shows_too_few_peers_not_bronze_at_90():
    peers = [rating("a", 95.0), rating("b", 90.0), rating("c", 80.0), rating("d", 70.0)]
    assign_tiers(peers, RatingConfig())  # min_peers 5 by default
    assert [r.tier for r in peers] == [None, None, None, None]
    assert {r.tier_note for r in peers} == {"too few peers (4 rated, 5 needed)"}
    assert all(r.percentile is None for r in peers)
    five = [rating("a", 95.0), rating("b", 90.0), rating("c", 80.0), rating("d", 70.0), rating("e", 60.0)]
    assign_tiers(five, RatingConfig())
    # percentiles 1, 0.75, 0.5, 0.25, 0 -> platinum, gold, silver, bronze, bronze
    assert [r.tier for r in five] == ["platinum", "gold", "silver", "bronze", "bronze"]
    assert all(r.tier_note is None for r in five)


def test_critical_failures_are_underperform_even_among_too_few_peers():
    peers = [rating("a", 95.0), rating("x", 99.0, critical=True)]
    assign_tiers(peers, RatingConfig())
    assert peers[1].tier == "underperform"
    assert peers[0].tier is None and peers[0].tier_note == "too few peers (1 rated, 5 needed)"


def test_too_few_peers_in_the_evaluation_shows_the_absolute_band(workspace_copy):
    ws = workspace_copy("rated")
    config = ws / "procure.yaml"
    config.write_text(config.read_text().replace("  min_peers: 2 ", "  min_peers: 5 "))
    ev = evaluate(load_workspace(ws), AS_OF)
    alpha = ev.offer("alpha")
    assert alpha.rating.tier is None and alpha.rating.tier_note == "too few peers (2 rated, 5 needed)"
    assert alpha.reliability_basis == "operational score 100.0 in the 85+ band"
    assert alpha.reliability_factor == 1.0


# --- the contract wins ---------------------------------------------------------------------------


def test_claims_the_terms_do_not_back_are_warned_about_naming_both_places(workspace_copy):
    from clihelp import run

    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    append(
        offer,
        "operator:\n  evidence:\n    security: {iso27001: true}\n    monitoring: {tenant_isolated: true}\n    "
        "reliability: {active_health_checks: true}\n",
    )
    lines = offer.read_text().splitlines()
    at = {
        name: lines.index(text) + 1
        for name, text in (
            ("attestations", "  attestations: [soc2_type2]"),
            ("security", "    security: {iso27001: true}"),
            ("reliability", "    reliability: {active_health_checks: true}"),
        )
    }
    result = run("validate", "-w", ws, "--as-of", "2026-11-29")
    assert result.exit_code == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if "operator.evidence" in line] == [
        f"warning: offers/alpha.yaml:{at['security']}: operator.evidence.security.iso27001: claims ISO 27001, but the "
        "service terms "
        f"(service.attestations, line {at['attestations']}) do not promise it; the rating and the gates use the "
        "service terms",
        f"warning: offers/alpha.yaml:{at['reliability']}: operator.evidence.reliability.active_health_checks: claims "
        "active health checks, "
        "but the service terms (service.health_checks.active: not stated) do not promise it; the rating and the gates "
        "use the service terms",
    ]  # tenant_isolated is backed by isolated_monitoring: true, so no warning


def test_a_claimed_isolation_the_contract_lacks_is_a_critical_failure_and_fails_security(workspace_copy):
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(offer.read_text().replace("  isolated_monitoring: true\n", "  isolated_monitoring: false\n"))
    backed_text = FULL_EVIDENCE_YAML.replace(
        "monitoring: {managed_dashboards: true,", "monitoring: {tenant_isolated: true, managed_dashboards: true,"
    )
    append(offer, backed_text)
    alpha = evaluate(load_workspace(ws), AS_OF).offer("alpha")
    assert alpha.rating.tier == "underperform"
    assert alpha.rating.critical_failures == ["monitoring.tenant_isolated: not met"]
    assert "operator.evidence.monitoring.tenant_isolated" in alpha.rating.contract_overrides
    assert alpha.reliability_factor == 0.97 and alpha.reliability_source == "checklist"  # basic's lowest band
    assert "security: monitoring is not isolated between tenants" in alpha.reasons


def test_contradiction_warnings_are_empty_when_the_terms_back_every_claim(data_dir):
    ws = load_workspace(data_dir / "rated")
    assert contradiction_warnings(ws.offers[0], ws.lines[ws.offers[0].id]) == []


def test_the_unrated_haircut_of_an_even_number_of_bands_is_the_lower_middle_one():
    """Four bands, best first 1.0, 0.99, 0.97, 0.95: the two middle ones are 0.99 and 0.97, and the middle is 0.97, not
    the better median; five bands give the third, one band its own. The unrated default is never above it."""
    from procure.model.rating import middle_factor, unrated_factor

    four = Reliability(bands=[(40, 0.97), (85, 1.0), (0, 0.95), (60, 0.99)])  # in any order
    # the middle is 0.97; the unrated default is the lower of it and the Participation Ribbon's 0.965
    assert middle_factor(four) == 0.97 and unrated_factor(four) == 0.965
    low = Reliability(bands=[(40, 0.96), (85, 1.0), (0, 0.95), (60, 0.99)])
    assert middle_factor(low) == 0.96 and unrated_factor(low) == 0.96
    assert middle_factor(Reliability()) == 0.99  # the default five: 1.0, 0.995, 0.99, 0.98, 0.95
    assert middle_factor(Reliability(bands=[(0, 0.98)])) == 0.98
    assert unrated_factor(Reliability(bands=four.bands, unrated=0.95)) == 0.95  # a stated haircut is used as stated
