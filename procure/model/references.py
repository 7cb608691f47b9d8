"""Our measured throughput set against the public curves of the same GPU, model and precision.

A trial or a measured curve far above every public benchmark of the same hardware, model and precision
is more often a misreading (per decode GPU instead of per billed GPU, another sequence length, a
speculative-decoding acceptance rate the workload will not see, the wrong --gpus) than a faster
vendor. The public curves of one GPU, model and precision are compared at their best: the spread
between serving stacks on the same GPUs is real (about 1.5x: 3,467 vs 2,265 total tok/s/GPU at peak for
TensorRT-LLM and SGLang, DeepSeek-R1 FP8 8k/1k; SemiAnalysis InferenceX, May 2026), but the best stacks
meet at high interactivity (50.65 and 51.72 output tok/s/GPU at 107.6 and 109.5 tok/s/user, same
source). A reading more than MAX_ABOVE_REFERENCE times the best public curve at the workload's target
is beyond what a stack or its tuning is known to add, so it is warned about, naming both figures; never
refused: the buyer decides.

A curve says what it measures with three marks in its '#' lines (procure/io/workspace.py `read_curve`):
`# gpu: B200`, `# model: DeepSeek-R1`, `# precision: FP8`. They are compared case-insensitively, a
model by the last part of its name (`deepseek-ai/DeepSeek-R1` is `deepseek-r1`). The public curves are
the workspace's own reference curves (performance/, not `points_source: measured`) that carry all
three; a curve or trial without them is not compared, and the caller says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from procure.model.performance import throughput_at

# A reading more than this many times the best public curve of the same GPU, model and precision, at the
# same interactivity target, is warned about (the module docstring says why: the best public stacks meet
# within a few percent at high interactivity; 25% above the best is beyond what tuning is known to add).
MAX_ABOVE_REFERENCE = 1.25


def curve_key(gpu: str | None, model: str | None, precision: str | None) -> tuple[str, str, str] | None:
    """(gpu, model, precision) as compared, or None when any is not stated."""
    if not (gpu and model and precision and gpu.strip() and model.strip() and precision.strip()):
        return None
    return gpu.strip().lower(), model.strip().rsplit("/", 1)[-1].strip().lower(), precision.strip().lower()


def missing_marks(gpu: str | None, model: str | None, precision: str | None) -> list[str]:
    """The marks not stated, by name."""
    return [
        name
        for name, value in (("gpu", gpu), ("model", model), ("precision", precision))
        if not (value and value.strip())
    ]


@dataclass(frozen=True)
class PublicCurve:
    name: str
    key: tuple[str, str, str]
    points: Sequence[Sequence[float]]


@dataclass(frozen=True)
class AboveReference:
    """Our reading and the best public curve's, both at the target interactivity."""

    ours: float
    reference: float
    reference_name: str
    target: float
    basis: str = "of the same GPU, model and precision"  # what the public curves compared share with ours
    check: str = "check --gpus (per billed GPU), the sequence lengths and the precision"

    @property
    def ratio(self) -> float:
        return self.ours / self.reference

    def sentence(self, what: str) -> str:
        return (
            f"{what} reads {self.ours:.1f} output tok/s/GPU at {self.target:g} tok/s/user, {self.ratio:.2f}x the best "
            f"public curve {self.basis} ({self.reference_name}: {self.reference:.1f} at {self.target:g} tok/s/user; "
            f"warned above {MAX_ABOVE_REFERENCE:g}x): {self.check}"
        )


def best_public(
    key: tuple[str, str, str], references: Iterable[PublicCurve], target: float
) -> tuple[float, str] | None:
    """The highest reading at the target among the public curves of the key (None without one that reaches it)."""
    readings = [(r.name, throughput_at(r.points, target).throughput) for r in references if r.key == key]
    found = [(value, name) for name, value in readings if value is not None]
    return max(found) if found else None


def above_reference(
    points: Sequence[Sequence[float]],
    key: tuple[str, str, str],
    references: Iterable[PublicCurve],
    target: float,
    factor: float = MAX_ABOVE_REFERENCE,
) -> AboveReference | None:
    """Our points read at the target against the best public curve of the same key: the finding when
    ours exceeds it by more than `factor`, else None (also when either has no reading at the target)."""
    return above_curves(points, [r for r in references if r.key == key], target, factor)


def above_curves(
    points: Sequence[Sequence[float]],
    curves: Sequence[PublicCurve],
    target: float,
    factor: float = MAX_ABOVE_REFERENCE,
    basis: str = "of the same GPU, model and precision",
    check: str = "check --gpus (per billed GPU), the sequence lengths and the precision",
) -> AboveReference | None:
    """Our points read at the target against the best of `curves` there: the finding when ours exceeds it by more
    than `factor`, else None (also when either has no reading at the target). `basis` says what the curves share
    with ours, `check` what to check, in the warning's words."""
    ours = throughput_at(points, target).throughput
    readings = [(throughput_at(c.points, target).throughput, c.name) for c in curves]
    found = [(value, name) for value, name in readings if value is not None]
    if ours is None or not found:
        return None
    best = max(found)
    if ours <= factor * best[0]:
        return None
    return AboveReference(ours, best[0], best[1], target, basis, check)
