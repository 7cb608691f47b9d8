"""SLA credit claims with their evidence and deadlines (procure/analysis/claims.py, `scorecard --claim`,
`reevaluate`). The workspace is test_scorecard's `signed`: alpha (SLA 99.5%, tiers 10% below 99.5%, 25% below
99%, 100% below 95%, cap 30%) with March 2026 invoiced at 292,000 USD and a Statuspage history of two
overlapping outages on 2026-03-03 (major 10:00-15:00, critical 13:00-17:00: 420 minutes down of March's
44,640) and a minor (degraded) incident on 2026-03-10, 10:00-20:00 (600 minutes)."""

from __future__ import annotations

import json

import pytest
from test_scorecard import run, signed, statuspage  # noqa: F401  (the fixture and its helpers)

TERMS = (
    "contract:\n  sla_credits: {tiers: [{below: 0.995, credit: 0.10}, {below: 0.99, credit: 0.25}, {below: 0.95, "
    "credit: 1.0}], cap: 0.3}\n"
)


def with_terms(ws, extra: str) -> None:
    offer = ws / "offers" / "alpha.yaml"
    text = offer.read_text()
    assert TERMS in text
    offer.write_text(text.replace(TERMS, TERMS.replace(", cap: 0.3}", ", cap: 0.3" + extra + "}")))


def claim(ws, as_of: str) -> str:
    result = run("scorecard", "--claim", "--as-of", as_of, "-w", ws)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_claim_carries_its_incidents_and_its_deadline(signed):  # noqa: F811
    with_terms(signed, ", claim_window_days: 14")
    text = claim(signed, "2026-04-01")
    # 1 - 420 / 44,640 = 99.059%: below 99.5%, not 99%: 10% of 292,000 = 29,200; due 14 days after 31 March
    assert (
        "| 2026-03 | 99.059% | 99.50% | 10.0% | 292,000.00 USD | 29,200.00 USD | by 2026-04-14 | 29,200.00 USD |"
        in text
    )
    assert "claims within 14 days of the month's end; degraded but reachable GPUs do not count as down time" in text
    assert "File by 2026-04-14." in text
    # the evidence: the two outages with their minutes (300 and 240, overlapping; 420 counted once); not the degraded
    # one
    assert "| API errors | 2026-03-03T10:00:00+00:00 | 2026-03-03T15:00:00+00:00 | major | all | 300 |" in text
    assert "| Outage | 2026-03-03T13:00:00+00:00 | 2026-03-03T17:00:00+00:00 | critical | all | 240 |" in text
    assert "Slow dashboard" not in text
    assert "Total claimable now: 29,200.00 USD." in text


def test_a_closed_window_makes_the_claim_zero_and_says_why(signed):  # noqa: F811
    with_terms(signed, ", claim_window_days: 14")
    text = claim(signed, "2026-04-20")
    assert "| closed 2026-04-14 | the claim window closed on 2026-04-14 (14 days from the month's end) |" in text
    assert "Total claimable now: 0.00 USD." in text


def test_no_credit_terms_make_every_claim_zero_and_say_so(signed):  # noqa: F811
    offer = signed / "offers" / "alpha.yaml"
    offer.write_text(offer.read_text().replace(TERMS, ""))
    text = claim(signed, "2026-04-01")
    assert "Terms: the contract states no SLA credit terms (contract.sla_credits)." in text
    assert "- 2026-03: the contract states no SLA credit terms (contract.sla_credits): nothing to claim." in text
    assert "Total claimable now: 0.00 USD." in text


def test_degraded_gpus_count_only_when_the_terms_say_so(signed):  # noqa: F811
    with_terms(signed, ", degraded_counts: true, claim_window_days: 10, claim_window_from: incident")
    text = claim(signed, "2026-03-12")
    # 420 + 600 = 1,020 minutes down: 1 - 1020/44640 = 97.715%, below 99%: 25% of 292,000 = 73,000; within the 30% cap.
    # The window runs from the first counted incident's end (2026-03-03) + 10 days = 2026-03-13.
    assert (
        "| 2026-03 | 97.715% | 99.50% | 25.0% | 292,000.00 USD | 73,000.00 USD | by 2026-03-13 | 73,000.00 USD |"
        in text
    )
    assert "| Slow dashboard | 2026-03-10T10:00:00+00:00 | 2026-03-10T20:00:00+00:00 | minor | all | 600 |" in text


def test_reevaluate_breaches_when_a_claim_would_lapse_within_the_warning_days(signed):  # noqa: F811
    with_terms(signed, ", claim_window_days: 14")
    # as of 5 April, the March claim (29,200 USD) lapses on 14 April: 9 days, within the default 7? no; within 10
    config = signed / "procure.yaml"
    config.write_text(config.read_text() + "reevaluate:\n  claim_warning_days: 10\n")
    result = run("reevaluate", "--as-of", "2026-04-05", "--format", "json", "-w", signed)
    assert result.exit_code == 3, result.output
    details = [b["detail"] for b in json.loads(result.stdout)["breached"] if b["condition"] == "claim-deadline"]
    assert details == [
        "alpha: the 2026-03 SLA credit claim of 29,200.00 USD lapses on 2026-04-14 (9 days left): file it (procure "
        "scorecard --claim)"
    ]
    # a claim worth less than the threshold, or further away than the warning days, is no breach
    config.write_text(config.read_text().replace("  claim_warning_days: 10\n", "  claim_warning_days: 8\n"))
    later = run("reevaluate", "--as-of", "2026-04-05", "--format", "json", "-w", signed)
    assert "claim-deadline" not in {b["condition"] for b in json.loads(later.stdout)["breached"]}
    config.write_text(
        config.read_text().replace("  claim_warning_days: 8\n", "  claim_warning_days: 10\n  claim_min_amount: 30000\n")
    )
    small = run("reevaluate", "--as-of", "2026-04-05", "--format", "json", "-w", signed)
    assert "claim-deadline" not in {b["condition"] for b in json.loads(small.stdout)["breached"]}


@pytest.mark.parametrize(
    "extra, field, message",
    [
        (", claim_window_days: 0", "contract.sla_credits.claim_window_days", "must be at least 1 (got 0)"),
        (", claim_window_days: ten", "contract.sla_credits.claim_window_days", "must be a whole number"),
        (
            ", claim_window_from: weekly",
            "contract.sla_credits.claim_window_from",
            "must be one of 'month_end' or 'incident' (got 'weekly')",
        ),
        (", degraded_counts: sometimes", "contract.sla_credits.degraded_counts", "must be true or false"),
    ],
)
def test_bad_claim_terms_are_refused_with_file_line_and_field(signed, extra, field, message):  # noqa: F811
    with_terms(signed, extra)
    lines = (signed / "offers" / "alpha.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "sla_credits:" in text)
    result = run("scorecard", "--claim", "--as-of", "2026-04-01", "-w", signed, "--out", signed / "claim.md")
    assert result.exit_code == 2
    assert f"offers/alpha.yaml:{line}: {field}: {message}" in result.output, result.output
    assert "Traceback" not in result.output and not (signed / "claim.md").exists()


def test_bad_reevaluate_claim_settings_are_refused_with_file_line_and_field(signed):  # noqa: F811
    config = signed / "procure.yaml"
    text = config.read_text() + "reevaluate:\n  claim_warning_days: -1\n"
    config.write_text(text)
    line = text.splitlines().index("  claim_warning_days: -1") + 1
    result = run("reevaluate", "--as-of", "2026-04-05", "-w", signed)
    assert result.exit_code == 2
    assert f"procure.yaml:{line}: reevaluate.claim_warning_days: must be at least 0 (got -1)" in result.output, (
        result.output
    )
    assert not (signed / ".procure" / "history.sqlite").exists()
