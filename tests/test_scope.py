"""What applies to which kind of offer: ClusterMAX 3.0 tiers and their scope, the billing unit an offer leaves
implicit, and grade requirements a kind of offer cannot meet (procure/model/scope.py, model/grading.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from clihelp import run

from procure.model.grading import check_grade
from procure.model.inputs import Assumptions, Grade, Offer, RatingConfig
from procure.model.rating import rate_offer, reliability_of
from procure.model.scope import billing_warning, current_rating, published_warnings

ROOT = Path(__file__).resolve().parents[1]
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


def offer(
    kind: str = "managed_cluster",
    vendor: str = "Nebius",
    operator: dict | None = None,
    pricing: dict | None = None,
    **extra: Any,
) -> Offer:
    data: dict[str, Any] = {
        "id": "x",
        "vendor": vendor,
        "received": "2026-11-01",
        "valid_until": "2027-06-30",
        "region": "eu",
        "gpu": "B200",
        "gpus": 16,
        "term_months": 12,
        "pricing": pricing or {"gpu_hour": 5.0},
        "service": {
            "kind": kind,
            "sla": {"availability": 0.995, "node_replacement_hours": 24},
            "attestations": ["soc2_type2"],
            "tenant_isolation": True,
            "isolated_monitoring": True,
        },
        "responsibilities": {job: "provider" for job in JOBS},
        "operator": operator or {},
    }
    data.update(extra)
    return Offer.model_validate(data)


# --- ClusterMAX 3.0 ---------------------------------------------------------------------------------


def test_the_participation_ribbon_sits_between_bronze_and_underperform():
    published = Assumptions().reliability.published
    # (0.98 + 0.95) / 2, the midpoint of the tiers either side of it
    assert published["participation_ribbon"] == pytest.approx(0.965)
    assert published["bronze"] > published["participation_ribbon"] > published["underperform"]
    cluster = offer(operator={"published_tier": "participation_ribbon", "published_edition": "3.0"})
    result = reliability_of(cluster, rate_offer(cluster, RatingConfig()), Assumptions())
    assert (result.factor, result.source, result.basis) == (0.965, "published", "published tier Participation Ribbon")


def test_the_current_edition_names_the_reported_medals():
    assert current_rating("Nebius").tier == "platinum"
    assert current_rating("Amazon Web Services").tier == "bronze"
    assert current_rating("AWS").tier == "bronze"
    assert current_rating("Oracle Cloud Infrastructure").tier == "gold"
    assert current_rating("Fluidstack").tier is None  # "unable to test"
    assert current_rating("Northwind Compute") is None


def test_an_older_edition_is_warned_about_with_the_newer_tier():
    old = offer(operator={"published_tier": "gold", "published_edition": 2})  # unquoted YAML 2 reads as '2.0'
    assert old.operator.published_edition == "2.0"
    assert published_warnings(old) == [
        (
            ("operator", "published_edition"),
            "Gold is from ClusterMAX 2.0 (2025-11-06); ClusterMAX 3.0 (2026-09-23) rates Nebius Platinum: update "
            "operator.published_tier and operator.published_edition",
        )
    ]
    # no edition named, and the current one differs: said too; the current tier as stated: nothing
    ((path, message),) = published_warnings(offer(operator={"published_tier": "gold"}))
    assert path == ("operator", "published_tier") and "ClusterMAX 3.0 (2026-09-23) rates Nebius Platinum" in message
    assert published_warnings(offer(operator={"published_tier": "platinum", "published_edition": "3.0"})) == []
    ((_, untested),) = published_warnings(
        offer(vendor="Fluidstack", operator={"published_tier": "gold", "published_edition": "2.0"})
    )
    assert "ClusterMAX 3.0 (2026-09-23) could not test Fluidstack (unable to test): no current tier" in untested


def test_a_tier_on_a_kind_clustermax_does_not_rate_is_shown_not_used():
    for kind in ("bare_metal", "managed_serving"):
        warned = published_warnings(
            offer(kind=kind, operator={"published_tier": "platinum", "published_edition": "3.0"})
        )
        assert [path for path, _ in warned] == [("operator", "published_tier")]
        assert warned[0][1].startswith("ClusterMAX rates managed clusters only")


# --- the billing unit -------------------------------------------------------------------------------


def test_an_endpoint_priced_per_gpu_hour_is_pay_as_used_by_default_and_the_assumption_is_named():
    endpoint = offer(kind="managed_serving")
    assert endpoint.billing_unit == "hour" and endpoint.usage_billed
    assert billing_warning(endpoint).startswith("not stated: taken as hour")
    cluster = offer()
    assert cluster.billing_unit == "month" and not cluster.usage_billed
    assert billing_warning(cluster).startswith("not stated: taken as month")
    # an endpoint with a burst price above its commitment has committed GPUs
    assert (
        offer(
            kind="managed_serving", pricing={"gpu_hour": 5.0, "burst": {"gpu_hour": 6.0, "max_gpus": 64}}
        ).billing_unit
        == "month"
    )
    # stated: no warning; per token: no GPU-hour billing unit at all
    assert billing_warning(offer(kind="managed_serving", pricing={"gpu_hour": 5.0, "billed_per": "month"})) is None
    tokens = offer(kind="managed_serving", pricing={"per_mtok": {"input": 1.0, "output": 2.0}})
    assert tokens.billing_unit is None and billing_warning(tokens) is None


def test_validate_warns_about_the_implicit_unit_and_the_old_tier_with_file_and_line(workspace_copy):
    ws = workspace_copy("real_offers")
    path = ws / "offers" / "nebius-b200.yaml"
    text = path.read_text().replace(
        "  billed_per: hour               # an on-demand list price: billed for the time the instances run\n", ""
    )
    text = text.replace(
        '  published_tier: platinum\n  published_edition: "3.0"\n',
        '  published_tier: gold\n  published_edition: "2.0"\n',
    )
    path.write_text(text)
    lines = text.splitlines()
    edition_line = lines.index('  published_edition: "2.0"') + 1
    result = run("validate", "-w", ws)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "nebius" in line]
    assert warnings == [
        f"warning: offers/nebius-b200.yaml:{lines.index('pricing:') + 1}: pricing.billed_per: not stated: taken as "
        "month, the committed GPUs billed every month "
        "of the term (a commitment in the plan); state billed_per: hour, minute or second if it is billed for the time "
        "it runs",
        f"warning: offers/nebius-b200.yaml:{edition_line}: operator.published_edition: Gold is from ClusterMAX 2.0 "
        "(2025-11-06); "
        "ClusterMAX 3.0 (2026-09-23) rates Nebius Platinum: update operator.published_tier and "
        "operator.published_edition",
    ]


# --- grade requirements -----------------------------------------------------------------------------


def grade(path: str) -> Grade:
    return Grade.model_validate(yaml.safe_load((ROOT / path).read_text()))


def test_node_replacement_is_not_asked_of_a_token_api():
    ms = grade("grades/B200-MS.yaml")
    tokens = offer(
        kind="managed_serving",
        pricing={"per_mtok": {"input": 1.0, "output": 2.0}},
        service={
            "kind": "managed_serving",
            "sla": {"availability": 0.999},
            "attestations": ["soc2_type2"],
            "tenant_isolation": True,
        },
    )
    check = check_grade(tokens, ms)
    node = next(r for r in check.results if r.requirement == "node replacement")
    assert node.passed and node.observed.startswith("not applicable")
    assert check.passed
    # a dedicated endpoint (GPU-hours) still has nodes: not stated fails
    endpoint = offer(
        kind="managed_serving",
        service={
            "kind": "managed_serving",
            "sla": {"availability": 0.999},
            "attestations": ["soc2_type2"],
            "tenant_isolation": True,
        },
    )
    assert not next(r for r in check_grade(endpoint, ms).results if r.requirement == "node replacement").passed


def test_a_job_a_grade_accepts_shared_is_never_failed_for_being_shared():
    # A grade file from before the default accepted shared monitoring, updated by `procure grades update`: monitoring in
    # both provider_jobs and provider_or_shared_jobs. The looser entry judges it: the Platinum cluster stays a managed
    # cluster.
    data = yaml.safe_load((ROOT / "grades/B200-MC.yaml").read_text())
    data["requires"]["provider_jobs"].append("monitoring")
    mc = Grade.model_validate(data)
    shared = offer(
        operator={"published_tier": "platinum"},
        responsibilities={**{job: "provider" for job in JOBS}, "monitoring": "shared"},
    )
    check = check_grade(shared, mc)
    assert check.passed, [r for r in check.results if not r.passed]
    owns = next(r for r in check.results if r.requirement == "provider owns")
    assert "monitoring" not in owns.expected
    # a grade that names monitoring only as provider-owned still asks the provider to own it
    data["requires"]["provider_or_shared_jobs"] = []
    assert not check_grade(shared, Grade.model_validate(data)).passed
