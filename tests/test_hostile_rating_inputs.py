"""Hostile values for the inputs of operator ratings and per-token offers: rate limits, cached input
prices and share, published tiers and their bands, the peak factor, min_peers.

Every bad value is refused with exit 2 and one line naming file, line and field; nothing is written.
Bad per-token terms are run through compare --out and validate at the command line; the other cases
are checked on the problems of the same two use cases, in process (tests/refusals.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import refusals
from clihelp import assert_error, run

TOKENS = "offers/tokens.yaml"
GPU_HOUR = "offers/indexed.yaml"
CONFIG = "procure.yaml"


def write(ws: Path, name: str, old: str, new: str) -> int:
    """Replace `old` by `new` once; return the line number where `new` starts."""
    path = ws / name
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (name, old)
    before = text.split(old)[0]
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return before.count("\n") + 1


def refused_by_commands(ws: Path, tmp_path: Path, *needles: str) -> None:
    out = tmp_path / "out" / "cmp.json"
    assert_error(run("compare", "--format", "json", "--out", out, "-w", ws), *needles)
    assert not out.exists() and not out.parent.exists()
    assert_error(run("validate", "-w", ws), *needles)


def refused(ws: Path, tmp_path: Path, *needles: str) -> None:
    """In process: the use cases of compare and validate each refuse the workspace with the needles."""
    refusals.refused(refusals.compare(ws), *needles)
    refusals.refused(refusals.validate(ws), *needles)


ISOLATED = "  isolated_monitoring: true\n"

OFFER_CASES = [
    # (file, old, new (the offending line comes first), field, message fragment)
    (
        TOKENS,
        ISOLATED,
        "  rate_limits: {requests_per_minute: -5}\n" + ISOLATED,
        "service.rate_limits.requests_per_minute",
        "must be greater than 0 (got -5)",
    ),
    (
        TOKENS,
        ISOLATED,
        "  rate_limits: {requests_per_minute: 0}\n" + ISOLATED,
        "service.rate_limits.requests_per_minute",
        "must be greater than 0 (got 0)",
    ),
    (
        TOKENS,
        ISOLATED,
        "  rate_limits: {output_tokens_per_minute: lots}\n" + ISOLATED,
        "service.rate_limits.output_tokens_per_minute",
        "must be a number (got 'lots')",
    ),
    (
        TOKENS,
        ISOLATED,
        "  rate_limits: {output_tokens_per_minute: .nan}\n" + ISOLATED,
        "service.rate_limits.output_tokens_per_minute",
        "must be a finite number",
    ),
    (
        TOKENS,
        ISOLATED,
        "  rate_limits: {requests_per_min: 100}\n" + ISOLATED,
        "service.rate_limits.requests_per_min",
        "unknown field",
    ),
    (
        TOKENS,
        ISOLATED,
        "  rate_limits: 6000\n" + ISOLATED,
        "service.rate_limits",
        "must be a mapping of fields (got 6000)",
    ),
    (
        TOKENS,
        "per_mtok: {input: 0.50, output: 2.00}",
        "per_mtok: {input: 0.50, output: 2.00, cached_input: -0.1}",
        "pricing.per_mtok.cached_input",
        "must be at least 0 (got -0.1)",
    ),
    (
        TOKENS,
        "per_mtok: {input: 0.50, output: 2.00}",
        "per_mtok: {input: 0.50, output: 2.00, cached_input: 0.75}",
        "pricing.per_mtok.cached_input",
        "must not exceed the input price 0.5 (got 0.75)",
    ),
    (
        TOKENS,
        "per_mtok: {input: 0.50, output: 2.00}",
        "per_mtok: {input: 0.50, output: 2.00, cached_input: cheap}",
        "pricing.per_mtok.cached_input",
        "must be a number (got 'cheap')",
    ),
    (
        TOKENS,
        "  interactivity: 100 ",
        "  interactivity: -100 ",
        "performance.interactivity",
        "must be greater than 0 (got -100)",
    ),
    (
        TOKENS,
        "  interactivity: 100 ",
        "  ttft_s: 0\n  interactivity: 100 ",
        "performance.ttft_s",
        "must be greater than 0 (got 0)",
    ),
    (
        GPU_HOUR,
        ISOLATED,
        "  rate_limits: {requests_per_minute: 100}\n" + ISOLATED,
        "service.rate_limits",
        "only for per-token offers",
    ),
]


@pytest.mark.parametrize(
    "name, old, new, field, message", OFFER_CASES, ids=[f"{c[3]}-{i}" for i, c in enumerate(OFFER_CASES)]
)
def test_bad_per_token_terms_are_refused_with_file_line_and_field(
    workspace_copy, tmp_path, name, old, new, field, message
):
    ws = workspace_copy("offer_kinds")
    line = write(ws, name, old, new)
    refused_by_commands(ws, tmp_path, f"{name}:{line}: {field}: {message}")


PUBLISHED = [
    (
        "  published_tier: diamond\n",
        "operator.published_tier",
        "must be one of 'platinum', 'gold', 'silver', 'bronze', 'participation_ribbon' or 'underperform' (got "
        "'diamond')",
    ),
    (
        "  published_tier: 3\n",
        "operator.published_tier",
        "must be one of 'platinum', 'gold', 'silver', 'bronze', 'participation_ribbon' or 'underperform' (got 3)",
    ),
    ("  published_edition: 2.5\n", "operator.published_edition", "must be one of '1.0', '2.0' or '3.0' (got '2.5')"),
    (
        "  published_edition: three\n",
        "operator.published_edition",
        "must be one of '1.0', '2.0' or '3.0' (got 'three')",
    ),
]


@pytest.mark.parametrize("text, field, message", PUBLISHED)
def test_bad_published_tiers_are_refused(workspace_copy, tmp_path, text, field, message):
    ws = workspace_copy("offer_kinds")
    path = ws / TOKENS
    lines = path.read_text(encoding="utf-8").count("\n")
    path.write_text(path.read_text(encoding="utf-8") + "operator:\n" + text, encoding="utf-8")
    refused(ws, tmp_path, f"{TOKENS}:{lines + 2}: {field}: {message}")


UTIL = "  utilization: 0.8\n"
BANDS = "    bands: [[85, 1.0], [0, 0.97]]"

CONFIG_CASES = [
    (UTIL, UTIL + "  peak_factor: 0.5\n", 1, "workload.peak_factor", "must be at least 1 (got 0.5)"),
    (UTIL, UTIL + "  peak_factor: 1000\n", 1, "workload.peak_factor", "must be at most 100 (got 1000)"),
    (UTIL, UTIL + "  peak_factor: true\n", 1, "workload.peak_factor", "must be a number (got True)"),
    (UTIL, UTIL + "  cached_input_share: 1.5\n", 1, "workload.cached_input_share", "must be at most 1 (got 1.5)"),
    (UTIL, UTIL + "  cached_input_share: -0.1\n", 1, "workload.cached_input_share", "must be at least 0 (got -0.1)"),
    (
        BANDS,
        BANDS + "\n    published: {gold: 1.5}",
        1,
        "assumptions.reliability.published.gold",
        "must be at most 1 (got 1.5)",
    ),
    (
        BANDS,
        BANDS + "\n    published: {gold: 0}",
        1,
        "assumptions.reliability.published.gold",
        "must be greater than 0 (got 0)",
    ),
    (
        BANDS,
        BANDS + "\n    published: {diamond: 0.99}",
        1,
        "assumptions.reliability.published.diamond",
        "must be one of",
    ),
    (
        BANDS,
        BANDS + "\n    published: {gold: 0.98, silver: 0.99}",
        1,
        "assumptions.reliability.published.silver",
        "silver (0.99) must not be above gold (0.98)",
    ),
    (
        "  min_demand_coverage: 1.0\n",
        "  min_demand_coverage: 1.0\n  rate_limits_unstated: maybe\n",
        1,
        "policy.rate_limits_unstated",
        "must be one of 'pass' or 'fail' (got 'maybe')",
    ),
]

MIN_PEERS = [
    ("0", "must be at least 1 (got 0)"),
    ("2.5", "must be a whole number (got 2.5)"),
    ("five", "must be a whole number (got 'five')"),
    ("true", "must be a whole number (got True)"),
]


@pytest.mark.parametrize(
    "old, new, offset, field, message", CONFIG_CASES, ids=[f"{c[3]}-{i}" for i, c in enumerate(CONFIG_CASES)]
)
def test_bad_settings_are_refused_with_file_line_and_field(workspace_copy, tmp_path, old, new, offset, field, message):
    ws = workspace_copy("offer_kinds")
    line = write(ws, CONFIG, old, new) + offset
    refused(ws, tmp_path, f"{CONFIG}:{line}: {field}: {message}")


@pytest.mark.parametrize("value, message", MIN_PEERS)
def test_bad_min_peers_is_refused(workspace_copy, tmp_path, value, message):
    ws = workspace_copy("offer_kinds")
    path = ws / CONFIG
    lines = path.read_text(encoding="utf-8").count("\n")
    path.write_text(path.read_text(encoding="utf-8") + f"rating:\n  min_peers: {value}\n", encoding="utf-8")
    refused(ws, tmp_path, f"{CONFIG}:{lines + 2}: rating.min_peers: {message}")
