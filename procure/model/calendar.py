"""The plan's calendar: calendar months from the first of the as-of month (docs/plan.md, "Months").

Plan month 1 (index 0 here) is the month the as-of date falls in, from the as-of date on (the days before it are
past: neither demand nor capacity is planned for them); month m is m - 1 calendar months later. A day splits its
month by whole days: capacity delivered on 29 December is there for 3 of December's 31 days, so that
month carries 3/31 of a month's capacity and is charged 3/31 of a month's rent. A term of N months runs N calendar
months from its first day (29 December 2026 to 28 December 2027), so a term that starts within a month touches N + 1
plan months, the first and the last in part. `procure plan`, `procure cashflow`, the hedge and the memo all count
months here.
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta


def add_months(day: date, months: int) -> date:
    """The same day `months` calendar months later, or the month's last day where it is shorter (31 Jan + 1: 28 Feb)."""
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def first_of_month(day: date) -> date:
    return day.replace(day=1)


def days_in_month(day: date) -> int:
    return calendar.monthrange(day.year, day.month)[1]


def month_start(as_of: date, month: int) -> date:
    """The first day of plan month `month` (0-based)."""
    return add_months(first_of_month(as_of), month)


def month_end(as_of: date, month: int) -> date:
    """The last day of plan month `month` (0-based)."""
    return month_start(as_of, month + 1) - timedelta(days=1)


def month_index(as_of: date, day: date) -> int:
    """The 1-based plan month `day` falls in (0 or less: before the as-of month)."""
    return (day.year - as_of.year) * 12 + day.month - as_of.month + 1


def share_from(day: date) -> float:
    """The share of `day`'s month from `day` on, by whole days (1 on the first of the month)."""
    return (days_in_month(day) - day.day + 1) / days_in_month(day)


def share_through(day: date) -> float:
    """The share of `day`'s month up to and including `day` (1 on the month's last day)."""
    return day.day / days_in_month(day)


def starts_from(as_of: date, day: date | None) -> tuple[int, float]:
    """The plan month (0-based) capacity from `day` on first touches, and the share of it from that day: the plan
    begins on the as-of date, so capacity there already (no day given, or a day up to the as-of date) holds the part
    of the as-of month from the as-of date on."""
    if day is None or day <= as_of:
        return 0, share_from(as_of)
    return month_index(as_of, day) - 1, share_from(day)


def day_of_share(as_of: date, month: int, share: float) -> date:
    """The day in plan month `month` from which `share` of the month is left (the inverse of `share_from`)."""
    first = month_start(as_of, month)
    days = days_in_month(first)
    return first + timedelta(days=days - round(share * days))


def term_end(start: date, months: int) -> date:
    """The last day of a term of `months` calendar months from `start` (1 Jan: 31 Dec; 29 Dec 2026: 28 Dec 2027;
    31 Mar for 8 months: 30 Nov)."""
    target = add_months(first_of_month(start), months)
    if start.day > days_in_month(target):
        return target.replace(day=days_in_month(target))
    return target.replace(day=start.day) - timedelta(days=1)


def earliest(found: list[tuple[date, str]]) -> tuple[date | None, str]:
    """The first of dated reasons, with every reason that falls on it (once each, in order): a decide-by date and
    what sets it."""
    if not found:
        return None, ""
    day = min(d for d, _ in found)
    return day, "; ".join(dict.fromkeys(why for d, why in found if d == day))
