"""The differences between two Evaluations: each offer's move in cost per task and the inputs behind it, the
assumptions that changed, and the thresholds a re-evaluation breaches (`procure diff`, `procure reevaluate`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from procure.analysis.evaluate import Evaluation
from procure.errors import InputError, Problem
from procure.model.kinds import kind_named
from procure.model.units import PerThousand


class Driver(PerThousand):
    """One input behind a move of an offer's cost per task: its old and new value, and its share."""

    PER_TASK = ("contribution",)  # costs per task, each with its figure per 1,000 tasks in JSON

    field: str = Field(
        description="the figure that changed, as the Evaluation names it (metrics.<key>, or workload.<key>)"
    )
    label: str
    before: float | None
    after: float | None
    contribution: float = Field(
        description="the part of the cost-per-task change it explains (workspace currency per task)"
    )
    share: float = Field(description="contribution / the whole change of the cost per task (the shares add up to 1)")


# What a GPU-hour offer's cost per task is made of (docs/cost-model.md): full cost per GPU-hour, the
# sum of these, over successful tasks per GPU-hour, the product of those (and 3,600 / output tokens).
COST_PARTS = {
    "rent": "rent/GPU-h",
    "fees": "fees/GPU-h",
    "financing": "financing/GPU-h",
    "prepay_risk": "prepay risk/GPU-h",
    "ops": "staff/GPU-h",
    "software": "software/GPU-h",
}


TASK_FACTORS = {
    "throughput": "throughput tok/s/GPU",
    "availability": "availability",
    "success_rate": "success rate",
    "utilization": "utilization",
    "fill": "fill",
}


# Per-token offers: the cost per task is the sum of these.
TOKEN_PARTS = {"rent_per_task": "tokens/task", "fees_per_task": "fees/task", "ops_per_task": "staff/task"}


def explain_move(before: Any, after: Any, output_tokens: tuple[float, float]) -> list[Driver]:
    """Which inputs moved an offer's cost per task, and how much of the move each explains.

    cost = F / T with F = rent + fees + financing + prepay risk + staff + software (per GPU-hour)
    and T = throughput x 3,600 / output tokens x availability x success rate x utilization x fill.
    The change splits exactly in two at the midpoint, dC = dF x mean(1/T) + d(1/T) x mean(F); dF
    among the parts of F by their own changes, d(1/T) among the factors of T by their changes of
    logarithm (ln T is their sum). Per-token offers: the parts of the cost per task add up.
    A rent that moved with an unchanged list price is named by the discount (or the index).
    The headline is the expected cost (the mean of the draws); the split is made on the cost at the typical inputs,
    whose formula this is, and each part scaled by the ratio of the two moves, so the parts add up to the headline's
    move and each input keeps its share (a run saved before the headline was the mean has only the typical figure).
    """
    mb, ma = before.metrics, after.metrics
    cost_b, cost_a = mb.get("cost_per_task"), ma.get("cost_per_task")
    if cost_b is None or cost_a is None or cost_a == cost_b:
        return []
    point_b, point_a = mb.get("point_cost_per_task", cost_b), ma.get("point_cost_per_task", cost_a)
    if point_b is None or point_a is None or point_a == point_b:
        return []
    total, scale = point_a - point_b, (cost_a - cost_b) / (point_a - point_b)
    raw: list[tuple[str, str, float | None, float | None, float]] = []
    if kind_named(after.pricing_basis).per_task or kind_named(before.pricing_basis).per_task:
        for key, label in TOKEN_PARTS.items():
            b, a = mb.get(key) or 0.0, ma.get(key) or 0.0
            if a != b:
                raw.append((f"metrics.{key}", label, b, a, a - b))
    else:
        full_b, full_a = mb.get("full"), ma.get("full")
        tasks_b, tasks_a = mb.get("successful_tasks_per_gpu_hour"), ma.get("successful_tasks_per_gpu_hour")
        if not all(isinstance(x, (int, float)) and x > 0 for x in (full_b, full_a, tasks_b, tasks_a)):
            return []
        per_task = (1 / tasks_b + 1 / tasks_a) / 2
        for key, label in COST_PARTS.items():
            b, a = mb.get(key) or 0.0, ma.get(key) or 0.0
            if a != b:
                if key == "rent" and mb.get("list_price") != ma.get("list_price"):
                    raw.append(
                        (
                            "metrics.list_price",
                            "list price/GPU-h",
                            mb.get("list_price"),
                            ma.get("list_price"),
                            (a - b) * per_task,
                        )
                    )
                else:
                    raw.append((f"metrics.{key}", label, b, a, (a - b) * per_task))
        inverse_change = (1 / tasks_a - 1 / tasks_b) * (full_b + full_a) / 2
        logs: list[tuple[str, str, float, float, float]] = []
        for key, label in TASK_FACTORS.items():
            b, a = mb.get(key), ma.get(key)
            if b and a and a != b:
                logs.append((f"metrics.{key}", label, b, a, math.log(a / b)))
        if output_tokens[0] != output_tokens[1]:
            logs.append(
                (
                    "workload.output_tokens",
                    "output tokens/task",
                    output_tokens[0],
                    output_tokens[1],
                    -math.log(output_tokens[1] / output_tokens[0]),
                )
            )
        log_total = math.log(tasks_a / tasks_b)
        if logs and log_total:
            for field, label, b, a, d in logs:
                raw.append((field, label, b, a, inverse_change * d / log_total))
    drivers = [
        Driver(field=f, label=lab, before=b, after=a, contribution=c * scale, share=c / total)
        for f, lab, b, a, c in raw
        if c
    ]
    return sorted(drivers, key=lambda d: -abs(d.contribution))


class OfferDiff(PerThousand):
    PER_TASK = (
        "cost_before",
        "cost_after",
        "cost_change",
    )  # costs per task, each with its figure per 1,000 tasks in JSON

    id: str
    vendor: str
    status: str = Field(description="new, removed, expired or present")
    rank_before: int | None = None
    rank_after: int | None = None
    grade_before: str | None = None
    grade_after: str | None = None
    acceptable_before: bool | None = None
    acceptable_after: bool | None = None
    gates_failed_before: list[str] = Field(default_factory=list)
    gates_failed_after: list[str] = Field(default_factory=list)
    cost_before: float | None = None
    cost_after: float | None = None
    cost_change: float | None = None
    cost_change_share: float | None = None
    explained_by: list[Driver] = Field(
        default_factory=list,
        description="for a moved cost per task: the inputs that changed, old and new, and the share of the move each "
        "explains",
    )

    @property
    def rank_changed(self) -> bool:
        return self.status == "present" and self.rank_before != self.rank_after

    @property
    def changed(self) -> bool:
        """Anything differs: presence, rank, grade, acceptance, failed gates or cost."""
        return (
            self.status != "present"
            or self.rank_before != self.rank_after
            or self.grade_before != self.grade_after
            or self.acceptable_before != self.acceptable_after
            or self.gates_failed_before != self.gates_failed_after
            or self.cost_before != self.cost_after
        )

    @property
    def grade_changed(self) -> bool:
        return self.status == "present" and self.grade_before != self.grade_after

    @property
    def gates_changed(self) -> bool:
        return self.status in ("present", "expired") and (
            self.acceptable_before != self.acceptable_after or self.gates_failed_before != self.gates_failed_after
        )


class AssumptionChange(BaseModel):
    path: str
    before: Any
    after: Any


class Diff(BaseModel):
    base: str
    head: str
    base_as_of: date
    head_as_of: date
    leader_before: str | None
    leader_after: str | None
    offers: list[OfferDiff]
    assumptions: list[AssumptionChange] = Field(
        description="changes in the workload, assumptions and policy of procure.yaml"
    )

    @property
    def new_cheapest(self) -> bool:
        return self.leader_before != self.leader_after

    @property
    def unchanged(self) -> bool:
        """Nothing differs between the two evaluations but, perhaps, their dates."""
        return not self.assumptions and not self.new_cheapest and not any(o.changed for o in self.offers)


def _failed(record: Any) -> list[str]:
    return sorted(g.gate for g in record.gates if not g.passed)


def _side(record: Any, when: str) -> dict[str, Any]:
    """An offer's figures on one side of a diff ("before" or "after"), as OfferDiff names them."""
    return {
        f"rank_{when}": record.rank,
        f"grade_{when}": record.grade,
        f"acceptable_{when}": record.acceptable,
        f"gates_failed_{when}": _failed(record),
        f"cost_{when}": record.metrics["cost_per_task"],
    }


def diff(base: Evaluation, head: Evaluation, base_label: str, head_label: str) -> Diff:
    before = {o.id: o for o in base.offers}
    after = {o.id: o for o in head.offers}
    changes = []
    for offer_id in sorted(set(before) | set(after)):
        b, a = before.get(offer_id), after.get(offer_id)
        if b is None and a is not None:
            changes.append(OfferDiff(id=offer_id, vendor=a.vendor, status="new", **_side(a, "after")))
            continue
        if a is None and b is not None:
            changes.append(OfferDiff(id=offer_id, vendor=b.vendor, status="removed", **_side(b, "before")))
            continue
        assert a is not None and b is not None
        cost_b, cost_a = b.metrics["cost_per_task"], a.metrics["cost_per_task"]
        change = cost_a - cost_b if cost_a is not None and cost_b is not None else None
        expired = "validity" in _failed(a) and "validity" not in _failed(b)
        changes.append(
            OfferDiff(
                id=offer_id,
                vendor=a.vendor,
                status="expired" if expired else "present",
                **_side(b, "before"),
                **_side(a, "after"),
                cost_change=change,
                cost_change_share=change / cost_b if change is not None and cost_b else None,
                explained_by=explain_move(b, a, (base.workload.output_tokens, head.workload.output_tokens)),
            )
        )
    return Diff(
        base=base_label,
        head=head_label,
        base_as_of=base.as_of,
        head_as_of=head.as_of,
        leader_before=base.summary.recommended,
        leader_after=head.summary.recommended,
        offers=changes,
        assumptions=_assumption_changes(base, head),
    )


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        found: dict[str, Any] = {}
        for key, item in value.items():
            found.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return found
    return {prefix: value}


def _assumption_changes(base: Evaluation, head: Evaluation) -> list[AssumptionChange]:
    def settings(ev: Evaluation) -> dict[str, Any]:
        return _flatten(
            {
                "workload": ev.workload.model_dump(mode="json"),
                "assumptions": ev.assumptions.model_dump(mode="json"),
                "policy": ev.policy.model_dump(mode="json"),
            }
        )

    b, a = settings(base), settings(head)
    return [
        AssumptionChange(path=key, before=b.get(key), after=a.get(key))
        for key in sorted(set(b) | set(a))
        if b.get(key) != a.get(key)
    ]


CONDITIONS = ("rank-change", "grade-change", "new-cheapest", "gate-change")
# The conditions an offer breaches on its own: what changed and from what to what, or None when it did not.
OFFER_CHANGES: dict[str, Callable[[OfferDiff], tuple[str, object, object] | None]] = {
    "rank-change": lambda o: (
        ("rank", o.rank_before or "unranked", o.rank_after or "unranked") if o.rank_changed else None
    ),
    "grade-change": lambda o: (
        ("grade", o.grade_before or "ungraded", o.grade_after or "ungraded") if o.grade_changed else None
    ),
    "gate-change": lambda o: (
        ("failed gates", ", ".join(o.gates_failed_before) or "none", ", ".join(o.gates_failed_after) or "none")
        if o.gates_changed
        else None
    ),
}


class Breach(BaseModel):
    condition: str
    detail: str


def breaches(result: Diff, max_increase: float | None, fail_on: tuple[str, ...]) -> list[Breach]:
    """The thresholds a re-evaluation breaches: cost increases past `max_increase` on each offer
    acceptable in both runs, and the conditions named in `fail_on`."""
    found = []
    if max_increase is not None:
        for o in result.offers:
            # A rise of exactly the limit is within it (float dust aside).
            if (
                o.acceptable_before
                and o.acceptable_after
                and o.cost_change_share is not None
                and o.cost_change_share > max_increase + 1e-9
            ):
                found.append(
                    Breach(
                        condition="max-increase",
                        detail=f"{o.id}: cost per task up {o.cost_change_share:.1%} (limit {max_increase:.1%})",
                    )
                )
    for condition in CONDITIONS:
        if condition not in fail_on:
            continue
        if condition == "new-cheapest":
            if result.new_cheapest:
                found.append(
                    Breach(
                        condition="new-cheapest",
                        detail=f"cheapest acceptable offer from {result.leader_before or 'none'} to "
                        f"{result.leader_after or 'none'}",
                    )
                )
            continue
        for o in result.offers:
            change = OFFER_CHANGES[condition](o)
            if change is not None:
                what, before, after = change
                found.append(Breach(condition=condition, detail=f"{o.id}: {what} from {before} to {after}"))
    return found


def share(text: str, option: str) -> float:
    """A share as a threshold option writes it: '5%' or 0.05 -> 0.05 (`option` names it in a problem)."""
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1]) / 100 if percent else float(raw)
    except ValueError:
        raise InputError([Problem(option, None, "", f"expected a share like 5% or 0.05 (got {text!r})")]) from None
    if not percent and value > 1:  # a bare 5 would mean +500%: say which was meant
        raise InputError(
            [
                Problem(
                    option,
                    None,
                    "",
                    f"a bare number is a share from 0 to 1 (0.05 = 5%): write {raw}% for {raw} percent (got {text!r})",
                )
            ]
        )
    if not 0 <= value <= 10 or value != value:  # at most +1000%
        raise InputError(
            [Problem(option, None, "", f"expected a share like 5% or 0.05, from 0 to 1000% (got {text!r})")]
        )
    return value


def thresholds(settings: Any, max_increase: str | None, fail_on: str | None) -> tuple[float | None, tuple[str, ...]]:
    """The cost increase and the conditions that fail a re-evaluation: `--max-increase` and `--fail-on` as given,
    else `reevaluate:` in procure.yaml (`settings`); an unknown condition is refused."""
    limit = settings.max_increase
    if max_increase is not None:
        limit = share(max_increase, "--max-increase")
    conditions = tuple(settings.fail_on)
    if fail_on is not None:
        conditions = tuple(c.strip() for c in fail_on.split(",") if c.strip())
        unknown = [c for c in conditions if c not in CONDITIONS]
        if unknown:
            raise InputError(
                [
                    Problem(
                        "--fail-on",
                        None,
                        "",
                        f"unknown condition {', '.join(unknown)} (expected: {', '.join(CONDITIONS)})",
                    )
                ]
            )
    return limit, conditions
