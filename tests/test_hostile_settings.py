"""Hostile values in the settings of the horizon, benchmark, hedge and Monte Carlo: each is refused
with exit 2 and a `file:line: field:` message naming what was expected, no traceback, nothing written.

Each case appends one section to tests/data/basic/procure.yaml (or edits an offer) and checks the
problems of validate's use case, in process (tests/refusals.py); the line is counted in the file as
written. Bad index settings stopping `procure index build --out` are run at the command line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clihelp import assert_error, run
from refusals import refused, validate


def append(root: Path, text: str, needle: str) -> int:
    """Append `text` to procure.yaml; the 1-based line of the first line containing `needle`."""
    path = root / "procure.yaml"
    before = path.read_text()
    if text.startswith("uncertainty:"):
        before = before.split("# Stated so that", 1)[0]  # the fixture's own uncertainty section gives way
    if not before.endswith("\n"):
        before += "\n"
    path.write_text(before + text)
    lines = (before + text).splitlines()
    return next(i for i, line in enumerate(lines, start=1) if needle in line and i > before.count("\n"))


CASES = [
    # (section appended, the line's needle, field, part of the message)
    ("horizon:\n  renewal: market\n", "renewal:", "horizon.renewal", "basis"),
    ("horizon:\n  count_sla_credits: 'yes'\n", "count_sla_credits", "horizon.count_sla_credits", "true or false"),
    ("horizon:\n  count_sla_credits: 1\n", "count_sla_credits", "horizon.count_sla_credits", "true or false"),
    ("horizon:\n  index_growth: 5\n", "index_growth", "horizon.index_growth", "1"),
    ("horizon:\n  downtime_cv: 0\n", "downtime_cv", "horizon.downtime_cv", "0"),
    ("assumptions_extra: 1\n", "assumptions_extra", "assumptions_extra", ""),
    ("uncertainty:\n  demand: {triangular: [1.2, 1.0, 0.8]}\n", "demand:", "uncertainty.demand", "low <= mode <= high"),
    ("uncertainty:\n  demand: {triangular: [0.8, 1.0]}\n", "demand:", "uncertainty.demand", ""),
    ("uncertainty:\n  production: {uniform: [0, 1]}\n", "production:", "uncertainty.production", "0 < low"),
    (
        "uncertainty:\n  throughput:\n    claimed: {triangular: [0.8, 0.9, 1.0]}\n",
        "claimed:",
        "uncertainty.throughput.claimed",
        "",
    ),
    (
        "uncertainty:\n  throughput:\n    vendor_claim: {triangular: [0.9, 0.8, 1.0]}\n",
        "vendor_claim:",
        "uncertainty.throughput.vendor_claim",
        "low <= mode <= high",
    ),
    ("index:\n  min_quotes: 0\n", "min_quotes", "index.min_quotes", "1"),
    ("index:\n  seller_cap: 1.5\n", "seller_cap", "index.seller_cap", "1"),
    ("index:\n  seller_cap: 0\n", "seller_cap", "index.seller_cap", "0"),
    ("index:\n  strata: [term, region]\n", "strata:", "index.strata", "grade"),
    (
        "index:\n  weights:\n    - {term: 0-3, kind: offered, grade: T-MC, weight: 1}\n",
        "kind: offered",
        "index.weights[0].kind",
        "transacted",
    ),
    (
        "index:\n  weights:\n    - {term: 0-3, kind: advertised, grade: T-MC, weight: 0}\n",
        "weight: 0",
        "index.weights[0].weight",
        "0",
    ),
    (
        "index:\n  weights:\n    - {term: 5-9, kind: advertised, grade: T-MC, weight: 1}\n",
        "term: 5-9",
        "index.weights[0].term",
        "13-36",
    ),
    (
        "index:\n  weights:\n    - {term: 0-3, kind: advertised, grade: T-MC, weight: 1}\n    - {term: 0-3, kind: "
        "advertised, grade: T-MC, weight: 2}\n",
        "weight: 2",
        "index.weights[1]",
        "listed twice",
    ),
    ("hedge:\n  forward: -5\n", "forward", "hedge.forward", "0"),
    (
        "actuals:\n  down_impacts: []\n",
        "down_impacts",
        "actuals.down_impacts",
        "must have at least 1 item",
    ),  # none down: always 100%
    (
        "index:\n  base_period: 2026-10-01\n  weights:\n    - {term: 0-3, kind: advertised, grade: T-MC, weight: 1}\n",
        "base_period",
        "index.base_period",
        "give index.weights or index.base_period, not both",
    ),
    (
        "market:\n  own:\n    - {cost_per_task: 0.007, date: 2026-05-31}\n    - {cost_per_task: 0.006, date: "
        "2026-05-31}\n",
        "0.006",
        "market.own[1].date",
        "a second figure on 2026-05-31 (also market.own[0]): give each date one figure",
    ),
    (
        "market:\n  competitors:\n    - {name: R, cost_per_task: 0.008, date: 2026-05-31}\n    - {name: R, "
        "cost_per_task: 0.012, date: 2026-05-31, figure: price}\n"
        "    - {name: R, cost_per_task: 0.005, date: 2026-05-31}\n",
        "0.005",
        "market.competitors[2].date",
        # its price figure that day is no duplicate
        "a second cost figure for R on 2026-05-31 (also market.competitors[0])",
    ),
]


@pytest.mark.parametrize(
    "text, needle, field, message", CASES, ids=[c[2] + ":" + c[0].split("\n")[1].strip()[:24] for c in CASES]
)
def test_a_bad_setting_is_located(workspace_copy, text, needle, field, message):
    root = workspace_copy("basic")
    line = append(root, text, needle)
    refused(validate(root), f"procure.yaml:{line}: {field}", message)


def test_vendor_default_rate_out_of_range_is_located(workspace_copy):
    root = workspace_copy("basic")
    path = root / "procure.yaml"
    text = path.read_text()
    assert "assumptions:\n" in text
    path.write_text(text.replace("assumptions:\n", "assumptions:\n  vendor_default_rate: 1.2\n", 1))
    line = path.read_text().splitlines().index("  vendor_default_rate: 1.2") + 1
    refused(validate(root), f"procure.yaml:{line}: assumptions.vendor_default_rate", "less than 1")
    path.write_text(text.replace("assumptions:\n", "assumptions:\n  vendor_default_rate: -0.01\n", 1))
    refused(validate(root), f"procure.yaml:{line}: assumptions.vendor_default_rate", "at least 0")


def test_an_unknown_points_source_is_located(workspace_copy):
    root = workspace_copy("basic")
    path = root / "offers" / "alpha.yaml"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "points_source: measured" in line)
    lines[at] = lines[at].replace("measured", "guess")
    path.write_text("\n".join(lines) + "\n")
    refused(validate(root), f"offers/alpha.yaml:{at + 1}: performance.points_source", "reference")


def test_bad_strata_settings_stop_index_build_too(workspace_copy, data_dir):
    root = workspace_copy("basic")
    line = append(root, "index:\n  min_quotes: 0\n", "min_quotes")
    out = root.parent / "index.csv"
    result = run(
        "index", "build", data_dir / "market_ws" / "market" / "quotes.csv", "-w", root, "--scope-adjust", "--out", out
    )
    assert_error(result, f"procure.yaml:{line}: index.min_quotes")
    assert not out.exists()


def test_a_reliability_band_whose_factor_falls_below_a_lower_scores_is_located(workspace_copy):
    # basic's bands: [[85, 1.0], [0, 0.97]]; a score of 85 at 0.96 would count worse than a score of 0 at 0.97.
    root = workspace_copy("basic")
    path = root / "procure.yaml"
    text = path.read_text()
    assert "bands: [[85, 1.0], [0, 0.97]]" in text
    path.write_text(text.replace("bands: [[85, 1.0], [0, 0.97]]", "bands: [[85, 0.96], [0, 0.97]]"))
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), start=1) if "bands:" in ln)
    refused(
        validate(root),
        f"procure.yaml:{line}: assumptions.reliability.bands[0]: the factor 0.96 at score 85 is below 0.97 at score 0: "
        "a higher score never lowers the factor",
    )


def test_a_throughput_range_for_a_per_token_offer_is_refused_and_an_invalid_offers_range_is_not_called_unknown(
    workspace_copy,
):
    # tokens.yaml is priced per million tokens: no GPU throughput enters its cost, so the range would
    # change nothing. indexed.yaml made invalid keeps its id: its range is not "no offer with this id".
    root = workspace_copy("offer_kinds")
    path = root / "procure.yaml"
    path.write_text(
        path.read_text().replace(
            "uncertainty:\n",
            "uncertainty:\n  offers:\n    tokens: {throughput: {uniform: [0.8, 1.2]}}\n    indexed: {throughput: "
            "{uniform: [0.8, 1.2]}}\n",
            1,
        )
    )
    line = path.read_text().splitlines().index("    tokens: {throughput: {uniform: [0.8, 1.2]}}") + 1
    offer = root / "offers" / "indexed.yaml"
    offer.write_text(offer.read_text().replace("gpus: 100\n", "gpus: -1\n", 1))
    err = refused(
        validate(root),
        f"procure.yaml:{line}: uncertainty.offers.tokens.throughput: a per-token offer has no GPU throughput to vary",
        "offers/indexed.yaml:7: gpus: must be at least 0 (got -1)",
    )
    assert "uncertainty.offers.indexed" not in err and len(err.splitlines()) == 2  # "2 problems found"
