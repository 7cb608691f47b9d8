"""The factors the point evaluation multiplies availability and utilization by when a workspace leaves
`uncertainty.availability` and `uncertainty.utilization` at their defaults (procure/model/inputs.py,
UncertaintyConfig): the means of their triangular distributions, (low + mode + high) / 3. The point takes
every drawn factor at its mean (docs/uncertainty.md), so a figure worked by hand with availability or
utilization as stated is multiplied by these."""

from __future__ import annotations

AVAILABILITY_MEAN = (0.99 + 1.0 + 1.0) / 3  # triangular 0.99 / 1 / 1: 0.996667
UTILIZATION_MEAN = (
    0.85 + 1.0 + 1.1
) / 3  # triangular 0.85 / 1 / 1.1: 0.983333 (0.8 x 1.1 = 0.88 never reaches the cap of 1)
DELIVERY_MEAN = AVAILABILITY_MEAN * UTILIZATION_MEAN  # on successful tasks per paid GPU-hour: 0.980056


FIXED_AT_MEANS = (
    "  # availability and utilization fixed at their default factors' means: the point is what it was and every draw\n"
    "  # is the point, so the expected cost (the mean of the draws) is the figure worked out by hand\n"
    f"  availability: {{triangular: [{AVAILABILITY_MEAN!r}, {AVAILABILITY_MEAN!r}, {AVAILABILITY_MEAN!r}]}}\n"
    f"  utilization: {{triangular: [{UTILIZATION_MEAN!r}, {UTILIZATION_MEAN!r}, {UTILIZATION_MEAN!r}]}}\n"
    "  # and staff cost, the index, exchange rates and demand as stated\n"
    + "".join(f"  {name}: {{triangular: [1.0, 1.0, 1.0]}}\n" for name in ("fte_cost", "index", "fx", "demand"))
)


def fixed_at_means(root):
    """A copied workspace whose procure.yaml ends in its `uncertainty:` block (tests/data/basic's), with nothing left
    drawn: what-if and position arithmetic worked by hand at the typical inputs, which are
    then also the expected figures. Returns the root."""
    path = root / "procure.yaml"
    text = path.read_text()
    assert text.rstrip().split("\n")[-1].startswith("  ") and "\nuncertainty:" in text
    path.write_text(text.rstrip("\n") + "\n" + FIXED_AT_MEANS)
    return root
