"""The field types every input model is built from: names, vendor text without control characters, offer ids,
currency codes, the operating jobs and who owns each, the kinds of service, and ClusterMAX's published tiers and
editions."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    StringConstraints,
)

from procure.textsafe import MAX_NAME

# The canonical operating jobs. Every offer names an owner for each; procure.yaml staffs each.
OPERATING_JOBS: tuple[str, ...] = (
    "hardware_repair",
    "firmware_drivers",
    "os_patching",
    "fabric_isolation",
    "health_checks",
    "scheduler",
    "storage",
    "monitoring",
    "incident_response",
    "serving_stack",
    "release_validation",
    "capacity_planning",
)


Owner = Literal["provider", "customer", "shared"]


ServiceKind = Literal["managed_serving", "managed_cluster", "bare_metal", "owned"]


SERVICE_KINDS: tuple[str, ...] = ("managed_serving", "managed_cluster", "bare_metal", "owned")


CURRENCY_PATTERN = r"^[A-Z]{3}$"


CurrencyCode = Annotated[str, StringConstraints(pattern=CURRENCY_PATTERN)]


# Offer ids end up in file names and report anchors: letters, digits, dot, dash, underscore.
OfferId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")]


# Vendor text may hold any printable character (any language, emoji), but no control characters:
# an escape sequence in a vendor name would reach the buyer's terminal.
# No control characters (escape sequences), no carriage return (it forges lines in Markdown and
# terminals), no line or paragraph separator U+2028/U+2029 (a line of its own in a memo), no
# bidirectional overrides U+202A-U+202E / U+2066-U+2069 (they reverse names on screen).
NO_CONTROLS = "^[^\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$"


# One line: the same, and no line feed either (a vendor name with one forges a line of its own on every screen).
ONE_LINE = "^[^\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$"


def _gate(one_line: bool, max_length: int | None = None) -> AfterValidator:
    """The one text gate (procure.textsafe.text_problem) as a field's check: what the patterns cannot say (a run of
    combining marks, a name too long for a screen) is refused here, in the same words."""

    def check(value: str) -> str:
        from procure.textsafe import TextRefused, text_problem

        problem = text_problem(value, one_line, max_length)
        if problem is not None:
            raise TextRefused(problem)
        return value

    return AfterValidator(check)


# Text from outside on one line (no line break of any kind, control character or bidirectional control, no long run
# of combining marks); a Name also fits a screen (procure.textsafe.MAX_NAME characters).
Text = Annotated[str, StringConstraints(min_length=1, max_length=2000, pattern=ONE_LINE), _gate(True)]


Name = Annotated[str, StringConstraints(min_length=1, pattern=ONE_LINE), _gate(True, MAX_NAME)]


Notes = Annotated[str, StringConstraints(max_length=20_000, pattern=NO_CONTROLS), _gate(False)]


# ClusterMAX's tiers, best first. ClusterMAX 3.0 (SemiAnalysis, 2026-09-23,
# newsletter.semianalysis.com/p/clustermax-30-the-industry-standard, read through secondary copies) added the
# Participation Ribbon between Bronze and Underperform (procure/model/scope.py holds the published tiers).
PUBLISHED_TIERS: tuple[str, ...] = ("platinum", "gold", "silver", "bronze", "participation_ribbon", "underperform")


PublishedTier = Literal["platinum", "gold", "silver", "bronze", "participation_ribbon", "underperform"]


def _edition_text(value: Any) -> Any:
    """A ClusterMAX edition written as a number (3, 3.0: what YAML reads unquoted) as its text, '3.0'."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{float(value):.1f}"
    return value


# ClusterMAX editions: 1.0 (2025-03-26), 2.0 (2025-11-06), 3.0 (2026-09-23); procure/model/scope.py has their dates.
PublishedEdition = Annotated[Literal["1.0", "2.0", "3.0"], BeforeValidator(_edition_text)]
