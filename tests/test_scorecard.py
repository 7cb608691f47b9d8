"""Delivered against promised (procure/scorecard.py, `procure scorecard`, `reevaluate` on delivered
evidence). The workspace is tests/data/basic with evidence for offer alpha built here; what the tests
rely on of it, stated: alpha promises 300 output tok/s/GPU at the target (a measured point), SLA
0.995 x reliability factor 0.97 (unrated: the lowest band) = 0.96515 expected availability,
utilization 0.8, fill 1 (no demand stated), 100 billed GPUs, buyer's own staff 0.60 and software
0.05 per GPU-hour, success rate 0.9, full cost 4.75 per GPU-hour."""

from __future__ import annotations

import json
import math
from datetime import date, datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from procure.cli import app
from procure.models import ActualsConfig, SlaCredits
from procure.scorecard import MonthScore, credit_share, posterior

runner = CliRunner()

TIERS = {"tiers": [{"below": 0.995, "credit": 0.10}, {"below": 0.99, "credit": 0.25}, {"below": 0.95, "credit": 1.0}], "cap": 0.3}
# promised output per billed GPU-hour: 300 x 3600 x 0.96515 x 0.8 x 1 = 833,889.6 tokens
PROMISED = 300 * 3600 * 0.995 * 0.97 * 0.8
HOURS = 73_000  # 100 GPUs x 730 hours invoiced in March


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def test_credits_under_tiered_terms():
    terms = SlaCredits(**TIERS)
    assert credit_share(0.996, 0.995, terms) == 0.0  # at or above the SLA: nothing
    assert credit_share(0.9906, 0.995, terms) == 0.10  # below 99.5% only
    assert credit_share(0.985, 0.995, terms) == 0.25  # below 99%: the deeper tier
    assert credit_share(0.90, 0.995, terms) == 0.3  # below 95% is 100%, capped at 30%
    # per point instead: 0.05 a point, 0.995 - 0.985 = 1 point -> 5%
    assert credit_share(0.985, 0.995, SlaCredits(rate_per_point=0.05)) == pytest.approx(0.05)


def test_posterior_after_six_months_at_93_percent_of_promised():
    # six fully exposed months (billed GPU-hours = 100 GPUs x 730) each delivering 0.93 of the promise;
    # prior log ratio N(0, 0.10^2), each month's log ratio of variance 0.05^2:
    # precision = 1/0.01 + 6/0.0025 = 100 + 2400 = 2500; mean = 2400 x ln 0.93 / 2500 = 0.96 x ln 0.93
    # median ratio = 0.93^0.96 = 0.932703; sd = 1/sqrt(2500) = 0.02
    months = [MonthScore.model_construct(month=f"2026-0{i}", throughput_ratio=0.93, billed_gpu_hours=73_000.0, availability=None, requests_ok=None, requests_failed=None) for i in range(1, 7)]
    record = SimpleNamespace(metrics={"billed_gpus": 100.0, "availability": None}, gpus=100)
    found = posterior(months, record, None, ActualsConfig())
    assert found.months == 6 and found.exposure_months == pytest.approx(6.0)
    assert found.throughput_ratio == pytest.approx(0.93 ** 0.96, rel=1e-9)
    assert found.throughput_ratio == pytest.approx(0.932703, abs=1e-6)
    assert found.throughput_log_sd == pytest.approx(0.02)
    # half-exposed months count half: precision 100 + 1200 = 1300, mean 1200/1300 x ln 0.93
    half = [m.model_copy(update={"billed_gpu_hours": 36_500.0}) for m in months]
    assert posterior(half, record, None, ActualsConfig()).throughput_ratio == pytest.approx(0.93 ** (1200 / 1300))


def statuspage(path: Path) -> Path:
    """Two incidents of the provider's own page that overlap: 10:00-15:00 (major) and 13:00-17:00
    (critical) on 2026-03-03, and a minor one (not down time)."""
    incidents = [
        {"id": "a", "name": "API errors", "status": "resolved", "impact": "major", "created_at": "2026-03-03T10:00:00Z", "started_at": "2026-03-03T10:00:00Z", "resolved_at": "2026-03-03T15:00:00Z", "incident_updates": [], "components": []},
        {"id": "b", "name": "Outage", "status": "resolved", "impact": "critical", "created_at": "2026-03-03T13:00:00Z", "started_at": "2026-03-03T13:00:00Z", "resolved_at": "2026-03-03T17:00:00Z", "incident_updates": [], "components": []},
        {"id": "c", "name": "Slow dashboard", "status": "resolved", "impact": "minor", "created_at": "2026-03-10T10:00:00Z", "started_at": "2026-03-10T10:00:00Z", "resolved_at": "2026-03-10T20:00:00Z", "incident_updates": [], "components": []},
    ]
    path.write_text(json.dumps({"page": {"id": "x", "name": "Alpha Cloud"}, "incidents": incidents}))
    return path


@pytest.fixture
def signed(workspace_copy, tmp_path):
    """alpha signed, with tiered credits and March 2026 delivered at 0.93 of the promised output."""
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(offer.read_text() + "contract:\n  sla_credits: {tiers: [{below: 0.995, credit: 0.10}, {below: 0.99, credit: 0.25}, {below: 0.95, credit: 1.0}], cap: 0.3}\n")
    tokens = 0.93 * PROMISED * HOURS  # 56,612,764,944 output tokens
    served = round(tokens / 1000)  # 1,000 output tokens a request: 56,612,765 requests
    result = [
        {"metric": {"__name__": "vllm:generation_tokens_total", "model_name": "m"}, "values": [[at("2026-03-01T00:01:00"), "0"], [at("2026-03-31T23:59:00"), str(tokens)]]},
        {"metric": {"__name__": "vllm:request_success_total", "model_name": "m", "finished_reason": "stop"}, "values": [[at("2026-03-01T00:01:00"), "0"], [at("2026-03-31T23:59:00"), str(served)]]},
        {"metric": {"__name__": "vllm:request_success_total", "model_name": "m", "finished_reason": "abort"}, "values": [[at("2026-03-01T00:01:00"), "0"], [at("2026-03-31T23:59:00"), "0"]]},
    ]
    metrics = tmp_path / "march.json"
    metrics.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    invoices = tmp_path / "invoices.csv"
    invoices.write_text(f"month,gpu_hours,output_tokens,amount\n2026-03,{HOURS},,292000\n")  # 4.00 x 73,000
    done = run("actuals", "import", metrics, invoices, statuspage(tmp_path / "incidents.json"), "--offer", "alpha", "-w", ws)
    assert done.exit_code == 0, done.output
    return ws


def scorecard_json(ws: Path, *args: str) -> dict:
    result = run("scorecard", "--format", "json", "-w", ws, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_month_delivered_against_promised_with_an_incident_overlap(signed):
    doc = scorecard_json(signed, "--as-of", "2026-04-01")
    assert doc["command"] == "scorecard" and any(i["path"] == "actuals/alpha/incidents.json" for i in doc["inputs"])
    (vendor,) = doc["vendors"]
    (march,) = vendor["months"]
    # the two incidents overlap 13:00-15:00: down 10:00-17:00 = 7 h = 420 min of 44,640 (31 days), counted once
    # (summed they would be 9 h, 0.98790, a deeper tier): 1 - 420/44640 = 0.9905914
    assert march["availability"] == pytest.approx(1 - 420 / 44640)
    assert march["sla_breached"] is True
    # 0.9906 is below 99.5% but not 99%: 10% of the 292,000 invoice = 29,200
    assert march["credit_share"] == pytest.approx(0.10)
    assert march["credits_owed"] == pytest.approx(29_200)
    assert march["throughput_ratio"] == pytest.approx(0.93)
    assert march["promised_tokens_per_gpu_hour"] == pytest.approx(833_889.6)
    assert march["served_rate"] == 1.0
    assert march["billed_vs_contracted"] == pytest.approx(73_000 / (100 * 744))
    # delivered: (292,000 + 0.65 x 73,000) / (56,612,765 x 0.9) = 339,450 / 50,951,488.5 = 0.0066622 per task;
    # promised 4.75 / (1080 x 0.96515 x 0.72) = 4.75 / 750.5006 = 0.0063291: 5.26% over
    assert march["delivered_cost_per_task"] == pytest.approx(339_450 / (56_612_765 * 0.9))
    assert march["cost_overrun"] == pytest.approx(339_450 / (56_612_765 * 0.9) / (4.75 / 750.50064) - 1, rel=1e-5)
    assert 0.052 < march["cost_overrun"] < 0.053
    claim = run("scorecard", "--claim", "--as-of", "2026-04-01", "-w", signed)
    assert claim.exit_code == 0 and "| 2026-03 | 99.059% | 99.50% | 10.0% | 292,000.00 USD | 29,200.00 USD |" in claim.stdout


def test_months_without_evidence_are_no_data(signed):
    # as of 2026-06-15 the months run to May; the incident history covers April and May (no incident: 100%)
    doc = scorecard_json(signed, "--as-of", "2026-06-15")
    months = {m["month"]: m for m in doc["vendors"][0]["months"]}
    assert list(months) == ["2026-03", "2026-04", "2026-05"]
    assert months["2026-04"]["availability"] == 1.0
    assert months["2026-04"]["throughput_ratio"] is None and months["2026-04"]["output_tokens"] is None
    md = run("scorecard", "--format", "markdown", "--as-of", "2026-06-15", "-w", signed).stdout
    assert "| 2026-04 | no data | no data | no data | 100.000% (99.50%) | no data | no data | none |" in md
    assert len(doc_months := scorecard_json(signed, "--as-of", "2026-06-15", "--months", "1")["vendors"][0]["months"]) == 1 and doc_months[0]["month"] == "2026-05"


def test_reevaluate_exits_3_on_an_sla_breach(signed):
    first = run("reevaluate", "--as-of", "2026-04-01", "--format", "json", "-w", signed)
    assert first.exit_code == 3, first.output
    breached = json.loads(first.stdout)["breached"]
    assert {b["condition"] for b in breached} == {"sla-breach", "credits-owed"}  # 5.26% is within the default 10%
    assert not (signed / ".procure" / "history.sqlite").exists() or json.loads(first.stdout)["baseline_saved"] is None
    tight = run("reevaluate", "--as-of", "2026-04-01", "--max-delivered-overrun", "5%", "--format", "json", "-w", signed)
    assert tight.exit_code == 3 and "delivered-cost" in {b["condition"] for b in json.loads(tight.stdout)["breached"]}
    accepted = run("reevaluate", "--as-of", "2026-04-01", "--accept", "-w", signed)
    assert accepted.exit_code == 0, accepted.output
    again = run("reevaluate", "--as-of", "2026-04-01", "-w", signed)
    assert again.exit_code == 3  # still red until the month is paid back or accepted again
    # a month later, April (no incident, so no breach) is the latest: green
    assert run("reevaluate", "--as-of", "2026-05-02", "--accept", "-w", signed).exit_code == 0
    assert run("reevaluate", "--as-of", "2026-05-02", "-w", signed).exit_code == 0


def test_scorecard_of_an_offer_without_evidence_is_refused(signed):
    result = run("scorecard", "--offer", "bravo", "-w", signed)
    assert result.exit_code == 2 and "no evidence in actuals/ for 'bravo'" in result.output


def test_the_evidence_moves_the_evaluation(signed):
    from procure.evaluate import evaluate
    from procure.workspace import load_workspace

    ws = load_workspace(signed)
    promise = evaluate(ws, date(2026, 4, 1), delivered=False).offer("alpha")
    blended = evaluate(ws, date(2026, 4, 1)).offer("alpha")
    assert promise.metrics["throughput"] == 300 and promise.evidence is None
    # one fully used month at 0.93: precision 100 + 400 = 500, mean 400 x ln 0.93 / 500: ratio 0.93^0.8 = 0.943602
    assert blended.metrics["throughput"] == pytest.approx(300 * 0.93 ** 0.8)
    # Beta(0.96515 x 730 + 737 up hours, 0.03485 x 730 + 7 down hours) = Beta(1441.56, 32.44): mean 0.977991
    assert blended.metrics["availability"] == pytest.approx((0.96515 * 730 + 737) / (730 + 744))
    # served: Beta(10,000 + 56,612,765, 1): the success rate 0.9 x 56,622,765 / 56,622,766
    assert blended.metrics["success_rate"] == pytest.approx(0.9 * 56_622_765 / 56_622_766, rel=1e-12)
    assert blended.evidence["months"] == 1
    assert any(n.startswith("delivered evidence: throughput 94.4% of the promise (1 months)") for n in blended.notes)
    # the throughput ratio's posterior sd (1/sqrt(500) = 0.0447) sets the Monte Carlo draw of the signed offer
    from procure.scorecard import uncertainty_with_evidence

    spec = uncertainty_with_evidence(ws.config.uncertainty, {"alpha": SimpleNamespace(throughput_log_sd=1 / math.sqrt(500))})
    low, mode, high = spec.offers["alpha"].throughput.triangular
    assert (low, mode, high) == pytest.approx((math.exp(-2 / math.sqrt(500)), 1.0, math.exp(2 / math.sqrt(500))))
