"""Grade files against the current default grades (the example workspace's grades/): which of a
workspace's grade files lack a requirement the default of the same id has, and the file that adds it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

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


class MissingRequirement(BaseModel):
    field: str = Field(description="the grade's requires.FIELD")
    adds: str = Field(description="what the current default grade adds")


class StaleGradeFile(BaseModel):
    grade: str
    file: str = Field(description="relative to the workspace")
    missing: list[MissingRequirement]
    diff: str = Field(description="the change as a unified diff")


class GradesUpdate(BaseModel):
    """What `procure grades update` shows: each stale grade file with its change, and whether they were written."""

    files: list[StaleGradeFile] = Field(
        description="the grade files lacking requirements of the current default grade of their id"
    )
    written: bool = Field(description="the files were updated (--write)")


@dataclass
class GradeUpdates:
    """The stale grade files of a workspace (`stale`), each change as a unified diff (`diffs`), the document of
    `grades update --format json` and the grade files read (`inputs`, as the envelope lists them)."""

    root: Path
    stale: list[StaleGrade]
    diffs: list[str]
    document: GradesUpdate
    inputs: list[dict[str, str]] = field(default_factory=list)

    def write(self) -> Iterator[str]:
        """Write each updated grade file (atomically, in place), yielding it once written (relative to the
        workspace)."""
        from procure.io.files import write_atomic

        for stale in self.stale:
            write_atomic(self.root / stale.file, stale.updated_text, replace_inputs=True)
            yield stale.file


def grade_updates(workspace: Path, write: bool = False) -> GradeUpdates:
    """The grade files of the workspace at or above `workspace` that lack requirements of the current default grade
    of their id, each with its change; `write`: the document says the files are written (GradeUpdates.write)."""
    import difflib

    from procure.io.files import file_hash
    from procure.io.workspace import find_workspace

    root = find_workspace(workspace)
    found = stale_grades(root)
    diffs = [
        "".join(
            difflib.unified_diff(
                s.current_text.splitlines(keepends=True),
                s.updated_text.splitlines(keepends=True),
                f"{s.file} (now)",
                f"{s.file} (updated)",
            )
        )
        for s in found
    ]
    files = [
        StaleGradeFile(
            grade=s.grade_id,
            file=s.file,
            missing=[MissingRequirement(field=f, adds=a) for f, a in s.missing],
            diff=d,
        )
        for s, d in zip(found, diffs, strict=True)
    ]
    read = sorted(p for p in (root / "grades").glob("*.y*ml") if p.is_file())
    inputs = [file_hash(p, f"grades/{p.name}") for p in read]
    return GradeUpdates(root, found, diffs, GradesUpdate(files=files, written=bool(write and found)), inputs)
