"""Grade files against the current default grades (the example workspace's grades/): which of a
workspace's grade files lack a requirement the default of the same id has, and the file that adds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from procure.model.inputs import Grade


@dataclass(frozen=True)
class StaleGrade:
    """A workspace grade that lacks requirements the current default grade of the same id has."""

    grade_id: str
    file: str  # relative to the workspace
    missing: list[tuple[str, str]]  # (requires.field, what the default adds)
    current_text: str
    updated_text: str


def default_grades() -> dict[str, tuple[Grade, str]]:
    """The current default grades (the example workspace's grades/), by id, with their file text."""
    from procure.io.example import example_root
    from procure.io.yamlsafe import load_yaml, read_text

    found: dict[str, tuple[Grade, str]] = {}
    folder = example_root() / "grades"
    for path in sorted(folder.glob("*.yaml")):
        doc = load_yaml(path, f"grades/{path.name}")
        grade = Grade.model_validate(doc.data)
        found[grade.id] = (grade, read_text(path, f"grades/{path.name}"))
    return found


def missing_requirements(grade: Grade, default: Grade) -> list[tuple[str, str]]:
    """Requirements the default states and `grade` does not: list items it lacks, bounds and flags it leaves out."""
    missing = []
    have, want = grade.requires, default.requires
    for name in type(want).model_fields:
        ours, theirs = getattr(have, name), getattr(want, name)
        if isinstance(theirs, list):
            # service kinds widen a grade rather than require more of an offer: not a missing requirement
            lacking = [item for item in theirs if item not in ours] if name != "service_kinds" else []
            if lacking:
                missing.append((f"requires.{name}", ", ".join(map(str, lacking))))
        elif theirs not in (None, False) and ours in (None, False):
            missing.append((f"requires.{name}", f"{theirs:g}" if isinstance(theirs, float) else str(theirs).lower()))
    return missing


def stale_grades(root: Any) -> list[StaleGrade]:
    """The workspace's grade files that lack requirements of the default grade with the same id."""
    from pathlib import Path

    import yaml

    from procure.io.yamlsafe import load_yaml, read_text

    defaults = default_grades()
    found = []
    folder = Path(root) / "grades"
    for path in sorted(list(folder.glob("*.yaml")) + list(folder.glob("*.yml"))):
        display = f"grades/{path.name}"
        doc = load_yaml(path, display)
        grade = Grade.model_validate(doc.data)
        if grade.id not in defaults:
            continue
        default, default_text = defaults[grade.id]
        missing = missing_requirements(grade, default)
        if not missing:
            continue
        requires = grade.requires.model_dump(exclude_defaults=True)
        for field_path, _ in missing:
            name = field_path.split(".", 1)[1]
            theirs = getattr(default.requires, name)
            ours = getattr(grade.requires, name)
            requires[name] = (list(ours) + [i for i in theirs if i not in ours]) if isinstance(theirs, list) else theirs
        updated = grade.model_copy(update={"requires": type(grade.requires).model_validate(requires)})
        if updated.model_dump() == default.model_dump():
            text = default_text  # the default file itself, comments included
        else:
            text = yaml.safe_dump(
                updated.model_dump(exclude_defaults=True, mode="json"), sort_keys=False, allow_unicode=True, width=100
            )
        found.append(StaleGrade(grade.id, display, missing, read_text(path, display), text))
    return found


def stale_grade_warnings(grades: list[Grade], root: Any) -> list[str]:
    """One warning per stale grade file, with the difference and the command that updates it."""
    if not grades:
        return []
    return [
        f"{stale.file}: grade {stale.grade_id} lacks what the current default {stale.grade_id} requires ("
        + "; ".join(f"{name}: {what}" for name, what in stale.missing)
        + "): offers may grade higher than they should; `procure grades update` shows the change, `procure grades "
        "update --write` makes it"
        for stale in stale_grades(root)
    ]
