"""Offer -> grade: only services of the same grade are comparable.

An offer gets the highest-ranked grade whose every requirement holds. Each requirement is reported
with what was expected, what the offer states, and pass/fail, so a buyer sees why an offer landed
where it did and what an ungraded offer misses for the nearest grade.

Shared jobs. `shared` means the provider does its part of a job and the buyer the rest (for monitoring:
the provider watches the machines and fabric, the buyer its application). A grade's `provider_jobs`
asks the provider to own a job outright, `provider_or_shared_jobs` accepts a share; a job a grade names
in both is judged by the looser entry, since the grade then says a share is enough (a grade file
written before the default B200-MC accepted shared monitoring keeps monitoring in `provider_jobs`, and
`procure grades update` adds it to `provider_or_shared_jobs`: the managed cluster is then graded one).

Requirements that cannot apply to a kind of offer are not asked of it (procure/model/scope.py): a
token API has no nodes of the buyer's to replace, so node replacement is shown as not applicable and
passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from procure.model.inputs import Grade, Offer
from procure.model.scope import requirement_exemption


@dataclass(frozen=True)
class RequirementResult:
    requirement: str
    expected: str
    observed: str
    passed: bool


@dataclass(frozen=True)
class GradeCheck:
    grade: Grade
    results: list[RequirementResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> list[RequirementResult]:
        return [r for r in self.results if not r.passed]


@dataclass(frozen=True)
class GradeResult:
    """The grade given (None: ungraded) and every grade's requirement results."""

    grade: str | None
    checks: list[GradeCheck]  # all grades, by rank

    @property
    def assigned(self) -> GradeCheck | None:
        return next((c for c in self.checks if c.grade.id == self.grade), None)

    @property
    def nearest(self) -> GradeCheck | None:
        """For an ungraded offer: the grade with fewest failed requirements (higher rank on ties)."""
        if not self.checks:
            return None
        return min(self.checks, key=lambda c: (len(c.failures), c.grade.rank, c.grade.id))

    @property
    def summary(self) -> str:
        if self.grade is not None:
            return self.grade
        near = self.nearest
        if near is None:
            return "ungraded (no grades defined)"
        missing = "; ".join(f"{r.requirement}: {r.observed}" for r in near.failures)
        return f"ungraded (nearest {near.grade.id}: {missing})"


def check_grade(offer: Offer, grade: Grade) -> GradeCheck:
    req = grade.requires
    service = offer.service
    sla = service.sla
    results = [
        RequirementResult("gpu", grade.gpu, offer.gpu, offer.gpu.casefold() == grade.gpu.casefold()),
        RequirementResult(
            "service kind", " or ".join(req.service_kinds), service.kind, service.kind in req.service_kinds
        ),
    ]
    shareable = set(req.provider_or_shared_jobs)
    owned_outright = [job for job in req.provider_jobs if job not in shareable]
    if owned_outright:
        not_provider = [job for job in owned_outright if offer.responsibilities.get(job) != "provider"]
        observed = (
            "all provider"
            if not not_provider
            else "not provider: "
            + ", ".join(f"{job} ({offer.responsibilities.get(job, 'missing')})" for job in not_provider)
        )
        results.append(RequirementResult("provider owns", ", ".join(owned_outright), observed, not not_provider))
    if req.provider_or_shared_jobs:
        # A job the provider shares (it watches the infrastructure, the buyer the application) still
        # has the provider doing its part: a managed cluster with shared monitoring is a managed cluster.
        not_taken = [
            job for job in req.provider_or_shared_jobs if offer.responsibilities.get(job) not in ("provider", "shared")
        ]
        observed = (
            "all provider or shared"
            if not not_taken
            else "customer: " + ", ".join(f"{job} ({offer.responsibilities.get(job, 'missing')})" for job in not_taken)
        )
        results.append(
            RequirementResult(
                "provider owns or shares", ", ".join(req.provider_or_shared_jobs), observed, not not_taken
            )
        )
    exempt = requirement_exemption("node replacement", offer)
    if req.max_node_replacement_hours is not None and exempt is not None:
        results.append(RequirementResult("node replacement", f"<= {req.max_node_replacement_hours:g} h", exempt, True))
    elif req.max_node_replacement_hours is not None:
        hours = sla.node_replacement_hours if sla else None
        results.append(
            RequirementResult(
                "node replacement",
                f"<= {req.max_node_replacement_hours:g} h",
                "not stated" if hours is None else f"{hours:g} h",
                hours is not None and hours <= req.max_node_replacement_hours,
            )
        )
    if req.min_sla_availability is not None:
        availability = sla.availability if sla else None
        results.append(
            RequirementResult(
                "SLA availability",
                f">= {req.min_sla_availability:.2%}",
                "no SLA" if availability is None else f"{availability:.2%}",
                availability is not None and availability >= req.min_sla_availability,
            )
        )
    if req.attestations_any:
        held = [a for a in req.attestations_any if a in service.attestations]
        results.append(
            RequirementResult(
                "attestation",
                "any of " + ", ".join(req.attestations_any),
                ", ".join(service.attestations) or "none",
                bool(held),
            )
        )
    if req.tenant_isolation:
        results.append(
            RequirementResult(
                "tenant isolation", "yes", "yes" if service.tenant_isolation else "no", service.tenant_isolation
            )
        )
    return GradeCheck(grade, results)


def grade_offer(offer: Offer, grades: list[Grade]) -> GradeResult:
    checks = [check_grade(offer, g) for g in sorted(grades, key=lambda g: (g.rank, g.id))]
    assigned = next((c.grade.id for c in checks if c.passed), None)
    return GradeResult(assigned, checks)
