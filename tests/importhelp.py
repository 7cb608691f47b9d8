"""Evidence imported in process, at the use case, for the tests of what an import keeps and refuses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Imported:
    """What an import told: its lines (notes, the files written) with exit code 0, or its problems with 2."""

    exit_code: int
    output: str
    problems: int = 0

    @property
    def stderr(self) -> str:  # where the command says them
        return self.output


def run(*args: object) -> Imported:
    """`procure actuals import FILE... --offer ID -w WS [--gpu-filter C=V] [--gpus-per-unit N]` at the use case,
    in process (procure/analysis/usecases/evidence.py import_evidence): the command's own lines and exit codes are
    tested in tests/test_actuals.py."""
    from procure.analysis.usecases.evidence import import_evidence
    from procure.errors import InputError
    from procure.io.focus import GpuFilter

    assert [str(a) for a in args[:2]] == ["actuals", "import"], args
    words = [str(a) for a in args[2:]]
    files = []
    while words and not words[0].startswith("-"):
        files.append(Path(words.pop(0)))
    options: dict[str, list[str]] = {}
    while words:
        option = words.pop(0)
        options.setdefault(option, []).append(words.pop(0))
    rules = tuple(tuple(rule.split("=", 1)) for rule in options.get("--gpu-filter", []))
    per_unit = float(options.get("--gpus-per-unit", ["1"])[0])
    gpu_filter = GpuFilter(rules, per_unit) if rules else None  # type: ignore[arg-type]
    try:
        found = import_evidence(Path(options["-w"][0]), options["--offer"][0], files, None, gpu_filter)
    except InputError as exc:
        return Imported(2, "\n".join(str(problem) for problem in exc.problems), len(exc.problems))
    return Imported(0, "\n".join([*found.said, *(f"wrote {path}" for path in found.written)]))
