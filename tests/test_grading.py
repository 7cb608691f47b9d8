"""Offer -> grade: every requirement passing and failing, the highest-ranked grade, the nearest one."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from procure.model.grading import check_grade, grade_offer
from procure.model.inputs import Grade, Offer

DATA = Path(__file__).parent / "data" / "basic"
ALPHA = yaml.safe_load((DATA / "offers" / "alpha.yaml").read_text())  # a managed cluster meeting T-MC
T_MC = yaml.safe_load((DATA / "grades" / "T-MC.yaml").read_text())


def offer(**changes) -> Offer:
    """alpha with changes: keys are dotted paths ('service.sla.availability'); None deletes."""
    data = copy.deepcopy(ALPHA)
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = data
        for part in parents:
            node = node[part]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return Offer.model_validate(data)


def grade(requires: dict | None = None, **fields) -> Grade:
    data = copy.deepcopy(T_MC)
    if requires is not None:
        data["requires"] = requires
    data.update(fields)
    return Grade.model_validate(data)


def result(check, requirement: str):
    found = [r for r in check.results if r.requirement == requirement]
    assert len(found) == 1, [r.requirement for r in check.results]
    return found[0]


def test_alpha_meets_every_t_mc_requirement():
    check = check_grade(offer(), grade())
    assert check.passed
    assert [r.requirement for r in check.results] == [
        "gpu",
        "service kind",
        "provider owns",
        "node replacement",
        "SLA availability",
        "attestation",
        "tenant isolation",
    ]


def test_gpu():
    assert result(check_grade(offer(gpu="b200"), grade()), "gpu").passed  # case does not matter
    failed = result(check_grade(offer(gpu="H100"), grade()), "gpu")
    assert not failed.passed
    assert (failed.expected, failed.observed) == ("B200", "H100")


def test_service_kind():
    failed = result(check_grade(offer(**{"service.kind": "bare_metal"}), grade()), "service kind")
    assert not failed.passed
    assert failed.observed == "bare_metal"
    two_kinds = grade({"service_kinds": ["managed_cluster", "bare_metal"]})
    assert result(check_grade(offer(**{"service.kind": "bare_metal"}), two_kinds), "service kind").passed


@pytest.mark.parametrize("owner", ["customer", "shared"])
def test_provider_jobs_need_the_provider(owner):
    check = check_grade(offer(**{"responsibilities.monitoring": owner}), grade())
    failed = result(check, "provider owns")
    assert not failed.passed  # `shared` never counts as provider-owned
    assert failed.observed == f"not provider: monitoring ({owner})"
    assert not check.passed


def test_provider_jobs_pass_when_provider_owns_them():
    passed = result(check_grade(offer(), grade()), "provider owns")
    assert passed.passed
    assert passed.observed == "all provider"


def test_node_replacement_hours():
    assert result(check_grade(offer(**{"service.sla.node_replacement_hours": 48}), grade()), "node replacement").passed
    too_slow = result(check_grade(offer(**{"service.sla.node_replacement_hours": 72}), grade()), "node replacement")
    assert not too_slow.passed
    assert (too_slow.expected, too_slow.observed) == ("<= 48 h", "72 h")


def test_node_replacement_hours_not_stated_fails():
    failed = result(check_grade(offer(**{"service.sla.node_replacement_hours": None}), grade()), "node replacement")
    assert not failed.passed
    assert failed.observed == "not stated"


def test_sla_availability():
    assert result(check_grade(offer(**{"service.sla.availability": 0.99}), grade()), "SLA availability").passed
    failed = result(check_grade(offer(**{"service.sla.availability": 0.985}), grade()), "SLA availability")
    assert not failed.passed
    assert (failed.expected, failed.observed) == (">= 99.00%", "98.50%")
    no_sla = result(check_grade(offer(**{"service.sla": None}), grade()), "SLA availability")
    assert not no_sla.passed
    assert no_sla.observed == "no SLA"


def test_attestations_any_of():
    assert result(check_grade(offer(**{"service.attestations": ["iso27001"]}), grade()), "attestation").passed
    assert result(check_grade(offer(**{"service.attestations": ["pci", "soc2_type2"]}), grade()), "attestation").passed
    failed = result(check_grade(offer(**{"service.attestations": ["pci"]}), grade()), "attestation")
    assert not failed.passed
    assert failed.observed == "pci"
    none = result(check_grade(offer(**{"service.attestations": []}), grade()), "attestation")
    assert not none.passed
    assert none.observed == "none"


def test_tenant_isolation():
    failed = result(check_grade(offer(**{"service.tenant_isolation": False}), grade()), "tenant isolation")
    assert not failed.passed
    assert failed.observed == "no"
    assert result(check_grade(offer(), grade()), "tenant isolation").passed


def test_requirements_not_set_are_not_checked():
    loose = grade({"service_kinds": ["managed_cluster"]})
    check = check_grade(offer(**{"service.tenant_isolation": False, "service.attestations": []}), loose)
    assert check.passed
    assert [r.requirement for r in check.results] == ["gpu", "service kind"]


def test_highest_ranked_passing_grade_wins():
    premium = grade(id="PREMIUM", rank=1)
    basic = grade({"service_kinds": ["managed_cluster"]}, id="BASIC", rank=2)
    assert grade_offer(offer(), [basic, premium]).grade == "PREMIUM"
    # alpha misses PREMIUM once monitoring is shared: the next grade that holds.
    downgraded = grade_offer(offer(**{"responsibilities.monitoring": "shared"}), [basic, premium])
    assert downgraded.grade == "BASIC"
    assert downgraded.assigned.grade.id == "BASIC"


def test_ungraded_shows_the_nearest_grades_failures():
    bare_metal = grade({"service_kinds": ["bare_metal"], "provider_jobs": ["hardware_repair"]}, id="T-BM", rank=2)
    result_ = grade_offer(offer(**{"service.attestations": []}), [grade(), bare_metal])
    assert result_.grade is None
    assert result_.nearest.grade.id == "T-MC"  # one failure against T-BM's one: the higher rank
    assert [r.requirement for r in result_.nearest.failures] == ["attestation"]
    assert result_.summary == "ungraded (nearest T-MC: attestation: none)"


def test_nearest_grade_is_the_one_with_fewest_failures():
    bare_metal = grade({"service_kinds": ["bare_metal"], "provider_jobs": ["hardware_repair"]}, id="T-BM", rank=2)
    metal = offer(
        **{
            "service.kind": "bare_metal",
            "responsibilities.hardware_repair": "customer",
        }
    )
    result_ = grade_offer(metal, [grade(), bare_metal])
    assert result_.grade is None
    # T-MC: service kind and hardware_repair fail (2); T-BM: only hardware_repair (1).
    assert result_.nearest.grade.id == "T-BM"
    assert result_.summary == "ungraded (nearest T-BM: provider owns: not provider: hardware_repair (customer))"


def test_no_grades_defined():
    result_ = grade_offer(offer(), [])
    assert result_.grade is None
    assert result_.summary == "ungraded (no grades defined)"


# --- jobs the provider owns or shares -----------------------------------------------------------

EXAMPLE_GRADES = Path(__file__).parent.parent / "grades"


@pytest.mark.parametrize("owner, passed", [("provider", True), ("shared", True), ("customer", False)])
def test_provider_or_shared_jobs(owner, passed):
    g = grade({"service_kinds": ["managed_cluster"], "provider_or_shared_jobs": ["monitoring"]})
    result = next(
        r
        for r in check_grade(offer(**{"responsibilities.monitoring": owner}), g).results
        if r.requirement == "provider owns or shares"
    )
    assert result.passed is passed
    assert result.observed == ("all provider or shared" if passed else "customer: monitoring (customer)")


def test_the_example_managed_cluster_grade_accepts_shared_monitoring():
    mc = Grade.model_validate(yaml.safe_load((EXAMPLE_GRADES / "B200-MC.yaml").read_text()))
    # a real managed cluster: the provider watches machines and fabric, the buyer the application
    shared = offer(**{"gpu": "B200", "responsibilities.monitoring": "shared", "responsibilities.storage": "customer"})
    assert check_grade(shared, mc).passed
    # the buyer monitoring alone is not a managed cluster: the failed requirement is named
    alone = check_grade(offer(**{"gpu": "B200", "responsibilities.monitoring": "customer"}), mc)
    assert [f.requirement for f in alone.failures] == ["provider owns or shares"]
