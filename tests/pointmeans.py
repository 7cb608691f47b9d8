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
