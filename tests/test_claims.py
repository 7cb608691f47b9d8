"""SLA credit claims with their evidence and deadlines (procure/analysis/claims.py, `scorecard --claim`,
`reevaluate`). The workspace is test_scorecard's `signed`: alpha (SLA 99.5%, tiers 10% below 99.5%, 25% below
99%, 100% below 95%, cap 30%) with March 2026 invoiced at 292,000 USD and a Statuspage history of two
overlapping outages on 2026-03-03 (major 10:00-15:00, critical 13:00-17:00: 420 minutes down of March's
44,640) and a minor (degraded) incident on 2026-03-10, 10:00-20:00 (600 minutes). The claims and the
re-evaluation's breaches are read from the analysis in process; the refusals through the commands."""

from __future__ import annotations

import json
from datetime import date

import pytest
from test_scorecard import run, scored, signed, statuspage  # noqa: F401  (the fixture and its helpers)

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
    """`procure scorecard --claim --as-of DAY`: the claims drafted as Markdown, in process."""
    from procure.render.claims import claims_markdown

    found = scored(ws, as_of, claims=True)
    return claims_markdown(found.claims, found.evaluation.as_of)


def deadline_breaches(ws, as_of: str) -> list[str]:
    """What `procure reevaluate --as-of DAY` breaches for claim deadlines, at the analysis in process
    (procure/analysis/history.py reevaluate); its exit code 3 on a breach is tested in test_scorecard.py."""
    from procure.analysis.history import reevaluate

    return [b.detail for b in reevaluate(ws, date.fromisoformat(as_of)).breached if b.condition == "claim-deadline"]


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
    assert deadline_breaches(signed, "2026-04-05") == [
        "alpha: the 2026-03 SLA credit claim of 29,200.00 USD lapses on 2026-04-14 (9 days left): file it (procure "
        "scorecard --claim)"
    ]
    # a claim worth less than the threshold, or further away than the warning days, is no breach
    config.write_text(config.read_text().replace("  claim_warning_days: 10\n", "  claim_warning_days: 8\n"))
    assert deadline_breaches(signed, "2026-04-05") == []
    config.write_text(
        config.read_text().replace("  claim_warning_days: 8\n", "  claim_warning_days: 10\n  claim_min_amount: 30000\n")
    )
    assert deadline_breaches(signed, "2026-04-05") == []


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


def with_later_outage(ws) -> None:
    """A third counted outage, major, on 2026-03-20 08:00-16:00 (480 minutes), beside the 420 minutes of 3 March."""
    path = ws / "actuals" / "alpha" / "incidents.json"
    doc = json.loads(path.read_text())
    doc["incidents"].append(
        {
            "id": "d",
            "name": "Late outage",
            "status": "resolved",
            "impact": "major",
            "created_at": "2026-03-20T08:00:00Z",
            "started_at": "2026-03-20T08:00:00Z",
            "resolved_at": "2026-03-20T16:00:00Z",
            "incident_updates": [],
            "components": [],
        }
    )
    path.write_text(json.dumps(doc))


def test_a_window_from_the_incident_runs_per_incident_not_from_the_first(signed):  # noqa: F811
    with_terms(signed, ", claim_window_days: 14, claim_window_from: incident")
    with_later_outage(signed)
    text = claim(signed, "2026-04-01")
    # the whole month: 420 + 480 = 900 minutes down, 1 - 900/44,640 = 97.984%: below 99%, 25% of 292,000 = 73,000
    # owed. The 3 March outages lapsed on 17 March; the 20 March one alone: 1 - 480/44,640 = 98.925%, still below
    # 99%: 25% = 73,000 claimable until 20 + 14 = 3 April (before: "closed 2026-03-17", 0 claimable)
    assert (
        "| 2026-03 | 97.984% | 99.50% | 25.0% | 292,000.00 USD | 73,000.00 USD | by 2026-04-03 | 73,000.00 USD |"
        in text
    ), text
    assert (
        "| Late outage | 2026-03-20T08:00:00+00:00 | 2026-03-20T16:00:00+00:00 | major | all | 480 | 2026-04-03 |"
        in text
    )
    assert (
        "| API errors | 2026-03-03T10:00:00+00:00 | 2026-03-03T15:00:00+00:00 | major | all | 300 | lapsed 2026-03-17 |"
        in text
    )
    assert "the others alone leave availability 98.925%: 73,000.00 USD claimable now" in text
    assert "Total claimable now: 73,000.00 USD." in text
    # reevaluate warns: the claim lapses on 3 April, 2 days after as-of (within the default 7)
    assert deadline_breaches(signed, "2026-04-01") == [
        "alpha: the 2026-03 SLA credit claim of 73,000.00 USD lapses on 2026-04-03 (2 days left): file it (procure "
        "scorecard --claim)"
    ]


def test_a_lapsed_incident_no_longer_counts_toward_the_credit(signed):  # noqa: F811
    # the 20 March outage only 1 hour (60 minutes): the whole month 480 minutes, 1 - 480/44,640 = 98.925%, 25% owed
    # (73,000); as of 1 April the 3 March outages lapsed and 60 minutes alone leave 1 - 60/44,640 = 99.866%, at or
    # above the SLA: nothing claimable, and the claim says why
    with_terms(signed, ", claim_window_days: 14, claim_window_from: incident")
    with_later_outage(signed)
    path = signed / "actuals" / "alpha" / "incidents.json"
    path.write_text(path.read_text().replace("2026-03-20T16:00:00Z", "2026-03-20T09:00:00Z"))
    text = claim(signed, "2026-04-01")
    assert "| 2026-03 | 98.925% | 99.50% | 25.0% | 292,000.00 USD | 73,000.00 USD | by 2026-04-03 |" in text, text
    assert (
        "the claim window of 2 of its 3 incidents closed (the last on 2026-03-17); the others alone leave "
        "availability 99.866%, which owes no credit" in text
    )
    assert "Total claimable now: 0.00 USD." in text


def test_a_claim_cites_only_what_happened_by_the_as_of_date(signed):  # noqa: F811
    with_terms(signed, ", claim_window_days: 14, claim_window_from: incident")
    with_later_outage(signed)
    text = claim(signed, "2026-03-10")
    # as of 10 March the 20 March outage has not happened: 420 minutes, 1 - 420/44,640 = 99.059%: 10% = 29,200
    # (before: 73,000 citing the 20 March outage)
    assert "Late outage" not in text
    assert (
        "| 2026-03 | 99.059% | 99.50% | 10.0% | 292,000.00 USD | 29,200.00 USD | by 2026-03-17 | 29,200.00 USD |"
        in text
    ), text
    # an outage still running at the end of the as-of day is cited as open, its minutes counted up to then:
    # as of 20 March, the 08:00 outage (were it to end on 22 March) has run 16 hours = 960 minutes by midnight
    path = signed / "actuals" / "alpha" / "incidents.json"
    path.write_text(path.read_text().replace("2026-03-20T16:00:00Z", "2026-03-22T16:00:00Z"))
    text = claim(signed, "2026-03-20")
    assert "| Late outage | 2026-03-20T08:00:00+00:00 | open | major | all | 960 | - |" in text, text
    # 420 + 960 = 1,380 minutes: 1 - 1380/44,640 = 96.909%; the 3 March outages lapsed on 17 March, 960 minutes
    # alone: 1 - 960/44,640 = 97.849%, below 99%: 25% = 73,000, its window not started while it runs
    assert (
        "| 2026-03 | 96.909% | 99.50% | 25.0% | 292,000.00 USD | 73,000.00 USD | window opens when the incident ends "
        "| 73,000.00 USD |" in text
    ), text


def test_reevaluate_warns_by_default_of_a_claim_lapsing_within_14_days(signed):  # noqa: F811
    # a 14-day window from the month's end: the March claim (29,200 USD) lapses on 14 April; as of 1 April, 13 days
    # left, within the default 14 (before: 7, no warning until a week was left)
    with_terms(signed, ", claim_window_days: 14")
    assert deadline_breaches(signed, "2026-04-01") == [
        "alpha: the 2026-03 SLA credit claim of 29,200.00 USD lapses on 2026-04-14 (13 days left): file it (procure "
        "scorecard --claim)"
    ]
