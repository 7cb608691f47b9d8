"""The use cases of validate and grade: every file of the workspace checked, and each offer's grade with its
requirements."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from procure.analysis.evaluate import Evaluation

# The documents of `grade --format json` and `validate --format json` (procure schema grading, validation).


class Requirement(BaseModel):
    requirement: str
    expected: str
    observed: str
    passed: bool


class GradeCheckRecord(BaseModel):
    grade: str
    passed: bool
    requirements: list[Requirement]


class GradedOffer(BaseModel):
    id: str
    vendor: str
    grade: str | None
    valid_until: date = Field(description="the offer's valid_until")
    valid: bool = Field(
        description="the offer is still valid on as_of (an expired offer keeps the grade its terms earn)"
    )
    summary: str
    checks: list[GradeCheckRecord]


class Grading(BaseModel):
    offers: list[GradedOffer]


class Validation(BaseModel):
    offers: int
    grades: int
    reference_curves: int
    index_levels: int
    acceptable: int = Field(description="offers that pass every gate as of as_of")
    warnings: list[str] = Field(
        description="what validate warns about on standard error: contradicting claims, stale grade files, assumed "
        "units"
    )
    verdict: list[str] = Field(
        description="what a buyer must know beside the ranking (no acceptable offer and why, unrated offers, burst "
        "sources)"
    )


@dataclass
class Grades:
    """What `procure grade` prints: each offer (the ones named, else all) with its grading, on the day validity is
    judged; for named offers, the evaluation behind their throughput factors, or the problem that stopped it."""

    as_of: date
    inputs: Any
    results: list[tuple[Any, Any]]
    evaluation: Evaluation | None = None
    not_evaluated: Any = None

    def document(self) -> Grading:
        """Every offer graded, as `procure schema grading` describes it: each grade's requirements pass/fail."""
        return Grading(
            offers=[
                GradedOffer(
                    id=o.id,
                    vendor=o.vendor,
                    grade=r.grade,
                    valid_until=o.valid_until,
                    valid=o.valid_until >= self.as_of,
                    summary=r.summary,
                    checks=[
                        GradeCheckRecord(
                            grade=c.grade.id,
                            passed=c.passed,
                            requirements=[Requirement(**vars(x)) for x in c.results],
                        )
                        for c in r.checks
                    ],
                )
                for o, r in self.results
            ]
        )


def grades(workspace: Path, as_of: date | None, named: list[str], factors: bool = False) -> Grades:
    """Every offer graded (the `named` ones, each once, when given: an unknown id is an error); with `factors`, the
    workspace is also evaluated for the throughput factors, and a workspace that cannot be is told, not raised."""
    from procure.analysis.evaluate import evaluate, resolve_as_of
    from procure.errors import InputError, unknown_offer
    from procure.io.workspace import load_workspace
    from procure.model.grading import grade_offer

    ws = load_workspace(workspace)
    day = resolve_as_of(ws, as_of)  # validity: an offer is graded on terms that still hold
    offers = ws.offers
    if named:
        by_id = {o.id: o for o in ws.offers}
        unknown = [unknown_offer(i, list(by_id)) for i in named if i not in by_id]
        if unknown:
            raise InputError(unknown)
        offers = [by_id[i] for i in dict.fromkeys(named)]
    found = Grades(day, ws.inputs, [(o, grade_offer(o, ws.grades)) for o in offers])
    if factors:
        try:
            found.evaluation = evaluate(ws)
        except InputError as exc:  # the grades stand without an evaluation
            found.not_evaluated = exc.problems[0]
    return found


@dataclass
class Validated:
    """What `procure validate` prints: the counts of what was read, the warnings and notes on it, the evaluation."""

    evaluation: Evaluation
    inputs: Any
    counts: dict[str, int]
    warnings: list[str]
    notes: list[str]

    def document(self) -> Validation:
        """The counts, the warnings and the verdict, as `procure schema validation` describes them."""
        from procure.analysis.evaluate import verdict_lines

        return Validation(**self.counts, warnings=self.warnings, verdict=verdict_lines(self.evaluation))


def validation(workspace: Path, as_of: date | None) -> Validated:
    """Every file of the workspace checked (a problem raises InputError) and evaluated; the warnings: checklist
    claims the service terms do not back, offers' scope, stale grade files, measured curves and trials against the
    public curves."""
    from procure.analysis.evaluate import evaluate
    from procure.io.grades import stale_grade_warnings
    from procure.io.offer_trials import offer_point_lines, reference_lines
    from procure.io.workspace import load_workspace
    from procure.model.rating import contradiction_warnings
    from procure.model.scope import offer_warnings

    ws = load_workspace(workspace)
    ev = evaluate(ws, as_of)
    warnings = [
        w
        for offer in ws.offers
        for w in contradiction_warnings(offer, ws.lines[offer.id]) + offer_warnings(offer, ws.lines[offer.id])
    ]
    warnings += stale_grade_warnings(ws.grades, ws.root)
    cfg = ws.config
    if cfg.demand is not None and cfg.demand.months and cfg.horizon.months and cfg.demand.months != cfg.horizon.months:
        warnings.append(
            f"procure.yaml: horizon.months {cfg.horizon.months} is not used: with demand: every surface counts the "
            f"plan's {cfg.demand.months} months (demand.months); set horizon.months to {cfg.demand.months} or pass "
            "--horizon to cashflow and compare for another"
        )
    found, said = reference_lines(ws)  # measured curves and post-signing trials against the public curves
    own, own_said = offer_point_lines(ws)  # the offers' own points against them
    found, said = [*own, *found], said + own_said
    # a signed vendor's months or trials far from its promise (procure.analysis.scorecard.FAR_FROM_PROMISE)
    found += [f"{r.id}: {w}" for r in ev.offers if r.evidence for w in r.evidence.get("warnings") or []]
    counts = {
        "offers": len(ws.offers),
        "grades": len(ws.grades),
        "reference_curves": len(ws.curves),
        "index_levels": len(ws.index),
        "acceptable": len(ev.ranked),
    }
    # each warning as the line validate prints (a Problem reads `file:line: field: message`): the document's
    # warnings are text, whatever type each check returns them as
    return Validated(ev, ws.inputs, counts, [str(w) for w in warnings + found], [str(n) for n in said])
