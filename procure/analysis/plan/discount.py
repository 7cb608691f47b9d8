"""Time's price: the present value of money a month, as the cash flow discounts it (`procure cashflow`)."""

from __future__ import annotations

import numpy as np


def pv_months(delta: np.ndarray, first: int, last: int) -> float:
    """Present value of 1 a month over months first..last (0-based, inclusive), past the end of `delta` too:
    delta_m = d^(m + 1) with d = delta[0] (monthly discounting, as `discount_factors`)."""
    if last < first:
        return 0.0
    inside = float(delta[first : min(last, len(delta) - 1) + 1].sum()) if first < len(delta) else 0.0
    if last >= len(delta):
        d = float(delta[0])
        lo = max(first, len(delta))
        inside += sum(d ** (k + 1) for k in range(lo, last + 1))
    return inside


def pv_shares(delta: np.ndarray, first: int, shares: np.ndarray) -> float:
    """Present value of `shares` of a month's amount in the months from `first` on (a block's partly held months: a
    calendar term touches its first and last month in part), past the end of `delta` too, as `pv_months`."""
    inside = min(len(shares), max(0, len(delta) - first))
    total = float(delta[first : first + inside] @ shares[:inside]) if inside else 0.0
    if inside < len(shares):
        d = float(delta[0])
        total += sum(float(w) * d ** (first + k + 1) for k, w in enumerate(shares) if k >= inside)
    return total


def discount_factors(months: int, cost_of_capital: float) -> np.ndarray:
    """Present value of a month-m amount, as in the cash flow: (1 + r)^-(m / 12)."""
    return (1 + cost_of_capital) ** -(np.arange(1, months + 1) / 12)
