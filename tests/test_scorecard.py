"""Delivered against promised (procure/analysis/scorecard.py, `procure scorecard`, `reevaluate` on delivered
evidence). The workspace is tests/data/basic with evidence for offer alpha built here; what the tests
rely on of it, stated: alpha promises 300 output tok/s/GPU at the target (a measured point), SLA
0.995 x reliability factor 0.97 (unrated: the stated haircut) = 0.96515 expected availability,
utilization 0.8, fill 1 (no demand stated), 100 billed GPUs, buyer's own staff 0.60 and software
0.05 per GPU-hour, success rate 0.9, full cost 4.75 per GPU-hour."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from importhelp import run as import_run
from pointmeans import AVAILABILITY_MEAN, DELIVERY_MEAN
from refusals import refused
from schemacheck import problems
from typer.testing import CliRunner

from procure.analysis.scorecard import MonthScore, credit_share, posterior
from procure.cli import app
from procure.model.inputs import ActualsConfig, SlaCredits

runner = CliRunner()

TIERS = {
    "tiers": [{"below": 0.995, "credit": 0.10}, {"below": 0.99, "credit": 0.25}, {"below": 0.95, "credit": 1.0}],
    "cap": 0.3,
}
# promised output per billed GPU-hour: 300 x 3600 x 0.96515 x 0.8 x 1 = 833,889.6 tokens
PROMISED = 300 * 3600 * 0.995 * 0.97 * 0.8
HOURS = 73_000  # 100 GPUs x 730 hours invoiced in March


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_credits_under_tiered_terms():
    terms = SlaCredits(**TIERS)
    assert credit_share(0.996, 0.995, terms) == 0.0  # at or above the SLA: nothing
    assert credit_share(0.9906, 0.995, terms) == 0.10  # below 99.5% only
    assert credit_share(0.985, 0.995, terms) == 0.25  # below 99%: the deeper tier
    assert credit_share(0.90, 0.995, terms) == 0.3  # below 95% is 100%, capped at 30%
    # per point instead: 0.05 a point, 0.995 - 0.985 = 1 point -> 5%
    assert credit_share(0.985, 0.995, SlaCredits(rate_per_point=0.05)) == pytest.approx(0.05)


def test_posterior_after_six_months_at_93_percent_of_promised_capacity():
    # six fully busy months (busy GPU-hours = 100 GPUs x 730) each delivering 0.93 of the promised capacity;
    # prior log ratio N(0, 0.10^2), each month's log ratio of variance 0.05^2, no dispersion between them
    # (tau^2 = 0: every month the same): precision = 1/0.01 + 6/0.0025 = 100 + 2400 = 2500; mean = 2400 x
    # ln 0.93 / 2500 = 0.96 x ln 0.93; median ratio = 0.93^0.96 = 0.932703; sd = 1/sqrt(2500) = 0.02
    months = [
        MonthScore.model_construct(
            month=f"2026-0{i}",
            capacity_ratio=0.93,
            busy_gpu_hours=73_000.0,
            throughput_ratio=0.93,
            availability=None,
            requests_ok=None,
            requests_failed=None,
        )
        for i in range(1, 7)
    ]
    record = SimpleNamespace(metrics={"billed_gpus": 100.0, "availability": None}, gpus=100)
    found = posterior(months, record, None, ActualsConfig())
    assert found.months == 6 and found.exposure_months == pytest.approx(6.0)
    assert found.throughput_ratio == pytest.approx(0.93**0.96, rel=1e-9)
    assert found.throughput_ratio == pytest.approx(0.932703, abs=1e-6)
    assert found.throughput_log_sd == pytest.approx(0.02)
    # half-exposed months count half: precision 100 + 1200 = 1300, mean 1200/1300 x ln 0.93
    half = [m.model_copy(update={"busy_gpu_hours": 36_500.0}) for m in months]
    assert posterior(half, record, None, ActualsConfig()).throughput_ratio == pytest.approx(0.93 ** (1200 / 1300))


def test_tokens_per_billed_gpu_hour_do_not_move_throughput():
    """The same months with only tokens per billed GPU-hour (no utilization telemetry): on committed GPUs that
    ratio follows the buyer's traffic (traffic x0.8 would read 0.93 x 0.8), not the vendor's speed, so the
    throughput stays the promise and the evidence says why."""
    months = [
        MonthScore.model_construct(
            month=f"2026-0{i}",
            capacity_ratio=None,
            busy_gpu_hours=None,
            throughput_ratio=0.93 * 0.8,
            billed_gpu_hours=73_000.0,
            availability=None,
            requests_ok=None,
            requests_failed=None,
        )
        for i in range(1, 7)
    ]
    record = SimpleNamespace(metrics={"billed_gpus": 100.0, "availability": None}, gpus=100)
    found = posterior(months, record, None, ActualsConfig())
    assert found.throughput_ratio is None and found.throughput_log_sd is None and found.months == 0
    assert "no month with utilization telemetry" in found.throughput_basis


def test_availability_posterior_counts_months_with_their_observed_dispersion():
    """Six months of 744 hours at 1.0, 0.994, 1.0, 0.997, 1.0, 0.999 (sd 0.0024 between months) against a prior
    of 0.995 worth 730 hours. Counted as 4,464 independent hours the posterior sd would be
    sqrt(p(1 - p) / 5,194) = 0.00064; as six months with their dispersion (DerSimonian-Laird, recomputed here
    with numpy from the textbook formulas), the promise a seventh month of 730 hours (variance c / 730 + tau^2),
    it is 0.00092, 43% wider."""
    import numpy as np

    shares = np.array([1.0, 0.994, 1.0, 0.997, 1.0, 0.999])
    months = [
        MonthScore.model_construct(
            month=f"2026-{i + 1:02d}",
            availability=float(a),
            capacity_ratio=None,
            requests_ok=None,
            requests_failed=None,
        )
        for i, a in enumerate(shares)
    ]
    # every month has 744 hours only in 31-day months: use months 01, 03, 05, 07, 08, 10
    keys = ["2026-01", "2026-03", "2026-05", "2026-07", "2026-08", "2026-10"]
    months = [m.model_copy(update={"month": k}) for m, k in zip(months, keys)]
    record = SimpleNamespace(metrics={"billed_gpus": 100.0, "availability": 0.995}, gpus=100)
    found = posterior(months, record, None, ActualsConfig())
    n0, n = 730.0, np.full(6, 744.0)
    pooled = (0.995 * n0 + (shares * n).sum()) / (n0 + n.sum())
    c = pooled * (1 - pooled)
    v = c / n
    w = 1 / v
    ybar = (w * shares).sum() / w.sum()
    q = (w * (shares - ybar) ** 2).sum()
    tau2 = max(0.0, (q - 5) / (w.sum() - (w**2).sum() / w.sum()))
    prior_var = c / n0 + tau2  # the promise: a month of 730 hours
    precision = 1 / prior_var + (1 / (v + tau2)).sum()
    mean = (0.995 / prior_var + (shares / (v + tau2)).sum()) / precision
    assert tau2 > 0 and found.availability_dispersion == pytest.approx(math.sqrt(tau2), rel=1e-9)
    assert found.availability == pytest.approx(mean, rel=1e-9)
    a, b = found.availability_alpha, found.availability_beta
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert sd == pytest.approx(math.sqrt(1 / precision), rel=1e-6)
    assert sd == pytest.approx(0.000916, abs=1e-6) and sd > 1.4 * math.sqrt(c / (n0 + n.sum()))


def statuspage(path: Path) -> Path:
    """Two incidents of the provider's own page that overlap: 10:00-15:00 (major) and 13:00-17:00
    (critical) on 2026-03-03, and a minor one (not down time)."""
    incidents = [
        {
            "id": "a",
            "name": "API errors",
            "status": "resolved",
            "impact": "major",
            "created_at": "2026-03-03T10:00:00Z",
            "started_at": "2026-03-03T10:00:00Z",
            "resolved_at": "2026-03-03T15:00:00Z",
            "incident_updates": [],
            "components": [],
        },
        {
            "id": "b",
            "name": "Outage",
            "status": "resolved",
            "impact": "critical",
            "created_at": "2026-03-03T13:00:00Z",
            "started_at": "2026-03-03T13:00:00Z",
            "resolved_at": "2026-03-03T17:00:00Z",
            "incident_updates": [],
            "components": [],
        },
        {
            "id": "c",
            "name": "Slow dashboard",
            "status": "resolved",
            "impact": "minor",
            "created_at": "2026-03-10T10:00:00Z",
            "started_at": "2026-03-10T10:00:00Z",
            "resolved_at": "2026-03-10T20:00:00Z",
            "incident_updates": [],
            "components": [],
        },
    ]
    path.write_text(json.dumps({"page": {"id": "x", "name": "Alpha Cloud"}, "incidents": incidents}))
    return path


@pytest.fixture
def signed(workspace_copy, tmp_path):
    """alpha signed, with tiered credits and March 2026 delivered at 0.93 of the promised output."""
    ws = workspace_copy("basic")
    offer = ws / "offers" / "alpha.yaml"
    offer.write_text(
        offer.read_text()
        + "contract:\n  sla_credits: {tiers: [{below: 0.995, credit: 0.10}, {below: 0.99, credit: 0.25}, {below: 0.95, "
        "credit: 1.0}], cap: 0.3}\n"
    )
    tokens = 0.93 * PROMISED * HOURS  # 56,612,764,944 output tokens
    served = round(tokens / 1000)  # 1,000 output tokens a request: 56,612,765 requests
    # scraped every 5 minutes from 00:01 on March 1 to 23:59 on March 31 (the samples cover 99.996% of
    # the month, above actuals.min_coverage), the counters at 0 until the last sample: the month's
    # increase is exactly the last value
    times = [
        at("2026-03-01T00:01:00") + 300 * k
        for k in range(int((at("2026-03-31T23:59:00") - at("2026-03-01T00:01:00")) // 300) + 1)
    ] + [at("2026-03-31T23:59:00")]

    def counter(final: float) -> list:
        return [[t, "0"] for t in times[:-1]] + [[times[-1], str(final)]]

    result = [
        {"metric": {"__name__": "vllm:generation_tokens_total", "model_name": "m"}, "values": counter(tokens)},
        {
            "metric": {"__name__": "vllm:request_success_total", "model_name": "m", "finished_reason": "stop"},
            "values": counter(served),
        },
        {
            "metric": {"__name__": "vllm:request_success_total", "model_name": "m", "finished_reason": "abort"},
            "values": counter(0),
        },
    ]
    metrics = tmp_path / "march.json"
    metrics.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    invoices = tmp_path / "invoices.csv"
    invoices.write_text(f"month,gpu_hours,output_tokens,amount\n2026-03,{HOURS},,292000\n")  # 4.00 x 73,000
    done = import_run(
        "actuals", "import", metrics, invoices, statuspage(tmp_path / "incidents.json"), "--offer", "alpha", "-w", ws
    )
    assert done.exit_code == 0, done.output
    return ws


def scored(ws: Path, as_of: str, months: int | None = None, claims: bool = False):  # type: ignore[no-untyped-def]
    """`procure scorecard [--months N] [--claim] --as-of DAY` at the use case, in process
    (procure/analysis/usecases/evidence.py scorecards)."""
    from procure.analysis.usecases.evidence import scorecards

    return scorecards(ws, date.fromisoformat(as_of), None, months, claims)


def scorecard_json(ws: Path, as_of: str, months: int | None = None) -> dict:
    """`procure scorecard --format json`: the scorecard in the envelope every JSON output shares, rendered in
    process."""
    from procure.render.envelope import dumps
    from procure.render.scorecard import scorecard_text

    found = scored(ws, as_of, months)
    ev = found.evaluation
    return json.loads(dumps("scorecard", scorecard_text(found.result, "json"), ev.as_of, ev.inputs))


def test_a_month_delivered_against_promised_with_an_incident_overlap(signed):
    doc = scorecard_json(signed, "2026-04-01")
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
    # promised: 300 x 3,600 x 0.96515 x 0.8 = 833,889.6 tokens a billed GPU-hour as stated, x the means of the
    # availability
    # and utilization factors at the point (DELIVERY_MEAN, 0.980056): 817,258.1; the fixture delivers 0.93 x 833,889.6
    assert march["throughput_ratio"] == pytest.approx(0.93 / DELIVERY_MEAN)
    assert march["promised_tokens_per_gpu_hour"] == pytest.approx(833_889.6 * DELIVERY_MEAN)
    assert march["served_rate"] == 1.0
    assert march["billed_vs_contracted"] == pytest.approx(73_000 / (100 * 744))
    # delivered: (292,000 + 0.65 x 73,000) / (56,612,765 x 0.9) = 339,450 / 50,951,488.5 = 0.0066622 per task;
    # promised 4.75 / (1080 x 0.96515 x 0.72 x 0.980056) = 4.75 / 735.5327 = 0.0064579: 3.16% over
    assert march["delivered_cost_per_task"] == pytest.approx(339_450 / (56_612_765 * 0.9))
    assert march["cost_overrun"] == pytest.approx(
        339_450 / (56_612_765 * 0.9) / (4.75 / (750.50064 * DELIVERY_MEAN)) - 1, rel=1e-5
    )
    assert 0.031 < march["cost_overrun"] < 0.032
    from procure.render.claims import claims_markdown

    found = scored(signed, "2026-04-01", claims=True)
    claim = claims_markdown(found.claims, found.evaluation.as_of)
    assert "| 2026-03 | 99.059% | 99.50% | 10.0% | 292,000.00 USD | 29,200.00 USD |" in claim


def test_months_without_evidence_are_no_data(signed):
    # as of 2026-06-15 the months run to May; the incident history covers April and May (no incident: 100%)
    doc = scorecard_json(signed, "2026-06-15")
    months = {m["month"]: m for m in doc["vendors"][0]["months"]}
    assert list(months) == ["2026-03", "2026-04", "2026-05"]
    assert months["2026-04"]["availability"] == 1.0
    assert months["2026-04"]["throughput_ratio"] is None and months["2026-04"]["output_tokens"] is None
    from procure.render.scorecard import scorecard_text

    md = scorecard_text(scored(signed, "2026-06-15").result, "markdown")
    assert "| 2026-04 | no data | no data | no data | no data | 100.000% (99.50%) | no data | no data | none |" in md
    assert (
        len(doc_months := scorecard_json(signed, "2026-06-15", 1)["vendors"][0]["months"]) == 1
        and doc_months[0]["month"] == "2026-05"
    )


def test_reevaluate_exits_3_on_an_sla_breach(signed):
    first = run("reevaluate", "--as-of", "2026-04-01", "--format", "json", "-w", signed)
    assert first.exit_code == 3, first.output
    breached = json.loads(first.stdout)["breached"]
    assert {b["condition"] for b in breached} == {"sla-breach", "credits-owed"}  # 3.16% is within the default 10%
    assert not (signed / ".procure" / "history.sqlite").exists() or json.loads(first.stdout)["baseline_saved"] is None
    # the document says so in the form its schema gives (baseline_saved null)
    told = run("schema", "reevaluate")
    assert problems(json.loads(first.stdout), json.loads(told.stdout)) == []
    tight = run(
        "reevaluate", "--as-of", "2026-04-01", "--max-delivered-overrun", "3%", "--format", "json", "-w", signed
    )
    assert tight.exit_code == 3 and "delivered-cost" in {b["condition"] for b in json.loads(tight.stdout)["breached"]}
    accepted = run("reevaluate", "--as-of", "2026-04-01", "--accept", "-w", signed)
    assert accepted.exit_code == 0, accepted.output
    again = run("reevaluate", "--as-of", "2026-04-01", "-w", signed)
    assert again.exit_code == 3  # still red until the month is paid back or accepted again
    # a month later, April (no incident, so no breach) is the latest: green
    assert run("reevaluate", "--as-of", "2026-05-02", "--accept", "-w", signed).exit_code == 0
    assert run("reevaluate", "--as-of", "2026-05-02", "-w", signed).exit_code == 0


def test_scorecard_of_an_offer_without_evidence_is_refused(signed):
    from procure.analysis.usecases import scorecards

    refused(lambda: scorecards(signed, None, "bravo", None), "no evidence in actuals/ for 'bravo'")


def test_scorecard_of_a_mistyped_offer_suggests_the_nearest_id(signed):
    # "alph" is no offer of the workspace (alpha, bravo, ...): the nearest id is offered, as for compare.
    from procure.analysis.usecases import scorecards

    refused(lambda: scorecards(signed, None, "alph", None), "offers/: no offer with id 'alph'; did you mean 'alpha'?")


def test_the_evidence_moves_the_evaluation(signed):
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    ws = load_workspace(signed)
    promise = evaluate(ws, date(2026, 4, 1), delivered=False).offer("alpha")
    blended = evaluate(ws, date(2026, 4, 1)).offer("alpha")
    assert promise.metrics["throughput"] == 300 and promise.evidence is None
    # one month at 0.93 of the promise per billed GPU-hour, but no utilization telemetry: the throughput stays
    # the promise (tokens per billed GPU-hour follow the buyer's traffic)
    assert blended.metrics["throughput"] == 300
    # the prior is the promise as evaluated: 0.96515 x the availability factor's mean 0.996667 = 0.961933, worth 730
    # hours:
    # Beta(0.961933 x 730 + 737 up hours, 0.038067 x 730 + 7 down hours) = Beta(1439.21, 34.79): mean 0.976398
    assert blended.metrics["availability"] == pytest.approx((0.96515 * AVAILABILITY_MEAN * 730 + 737) / (730 + 744))
    # served: Beta(10,000 + 56,612,765, 1): the success rate 0.9 x 56,622,765 / 56,622,766
    assert blended.metrics["success_rate"] == pytest.approx(0.9 * 56_622_765 / 56_622_766, rel=1e-12)
    assert blended.evidence["months"] == 0 and blended.evidence["throughput_ratio"] is None
    assert any(
        n.startswith("delivered evidence: throughput not moved: no month with utilization telemetry")
        for n in blended.notes
    )


def test_uncertainty_draws_the_posteriors_themselves(signed):
    """With --uncertainty the signed offer's throughput, availability and share served are draws of its
    posteriors (figures by hand from test_the_evidence_moves_the_evaluation's, moments from the
    distributions' formulas). Sampling error: with N = 200,000 draws a sample mean is off its
    expectation by sd/sqrt(N) (one standard error) and a sample sd by about sd/sqrt(2N); every check
    allows 4 standard errors (a correct sampler fails one with probability about 6e-5; the seed is
    fixed, so the test is deterministic)."""
    import numpy as np

    from procure.analysis.evaluate import MonteCarlo, evaluate_with_inputs
    from procure.analysis.scorecard import Evidence, posteriors_for_draws
    from procure.analysis.uncertainty import GAP_COLUMN, draw_factors, outputs_for
    from procure.io.workspace import load_workspace

    ws = load_workspace(signed)
    ev, inputs = evaluate_with_inputs(ws, date(2026, 4, 1))
    i = [o.id for o in inputs.offers].index("alpha")
    found = posteriors_for_draws(
        {"alpha": Evidence(**ev.offer("alpha").evidence)}, inputs.offers, inputs.columns, ws.config.uncertainty
    )
    n = 200_000
    factors = draw_factors(
        inputs.offers, inputs.currencies, ws.config.uncertainty, n, 5, inputs.columns.get(GAP_COLUMN), found
    )
    home = np.array([c == ev.currency for c in inputs.currencies])
    drawn = outputs_for(
        inputs.columns, inputs.model, factors, home, only=("throughput", "availability", "success_rate")
    )

    def close(sample: np.ndarray, mean: float, sd: float) -> None:
        assert abs(sample.mean() - mean) <= 4 * sd / math.sqrt(n), (sample.mean(), mean)
        assert abs(sample.std() - sd) <= 4 * sd / math.sqrt(2 * n), (sample.std(), sd)

    # throughput: no evidence of capacity, so no posterior: drawn like any offer's (no log-normal column)
    assert found["alpha"].throughput_log_sd is None and factors.lognormal is None
    # availability: Beta(a, b), prior mean 0.96515 x 0.996667 (the promise at the mean of its factor) = 0.961933:
    # a = 0.961933 x 730 + 737 = 1439.2110, b = 0.038067 x 730 + 7 = 34.7890: mean a / (a + b) = 0.976398,
    # variance ab / ((a + b)^2 (a + b + 1)), sd 0.0039527
    prior = 0.96515 * AVAILABILITY_MEAN
    a, b = prior * 730 + 737, (1 - prior) * 730 + 7
    close(drawn["availability"][:, i], a / (a + b), math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))))
    # served: Beta(10,000 + 56,612,765, 1) times the success rate 0.9: mean 0.9 x 56,622,765 / 56,622,766,
    # sd 0.9 x sqrt(a / ((a + 1)^2 (a + 2))) = 0.9 / 56,622,766 (about 1.6e-8)
    a = 10_000 + 56_612_765
    close(drawn["success_rate"][:, i], 0.9 * a / (a + 1), 0.9 * math.sqrt(a / ((a + 1) ** 2 * (a + 2))))
    # the posteriors are drawn after every other factor: the rest are the draws of the same seed without them
    plain = draw_factors(inputs.offers, inputs.currencies, ws.config.uncertainty, n, 5, inputs.columns.get(GAP_COLUMN))
    assert np.array_equal(plain.throughput, factors.throughput) and np.array_equal(
        plain.availability, factors.availability
    )
    assert list(factors.beta_availability_columns) == list(factors.beta_served_columns) == [i]
    # and the evaluation says so in its method
    simulated = evaluate_with_inputs(ws, date(2026, 4, 1), MonteCarlo(draws=500, seed=1))[0]
    assert (
        "Signed vendors with delivered evidence (alpha) are drawn from their posteriors" in simulated.uncertainty.method
    )
    assert simulated.offer("alpha").uncertainty.p10 < simulated.offer("alpha").uncertainty.p90


class ScorecardTables:
    """The comparison's scorecard tables as a reader sees them: per offer and table, month -> cell texts."""

    def __init__(self, html: str) -> None:
        from html.parser import HTMLParser

        tables: dict[tuple[str, str], dict[str, list[str]]] = {}

        class Parser(HTMLParser):
            table: tuple[str, str] | None = None
            month: str | None = None
            cell: list[str] | None = None

            def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
                a = dict(attrs)
                if tag == "table" and "scorecard" in (a.get("class") or ""):
                    self.table = (a["data-offer"], a["data-table"])
                    tables[self.table] = {}
                elif self.table and tag == "tr" and a.get("data-month"):
                    self.month = a["data-month"]
                    tables[self.table][self.month] = []
                elif self.table and self.month and tag == "td":
                    self.cell = []

            def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
                if tag == "td" and self.cell is not None:
                    tables[self.table][self.month].append("".join(self.cell).strip())  # type: ignore[index]
                    self.cell = None
                elif tag == "tr":
                    self.month = None
                elif tag == "table":
                    self.table = None

            def handle_data(self, data):  # type: ignore[no-untyped-def]
                if self.cell is not None:
                    self.cell.append(data)

        Parser().feed(html)
        self.tables = tables


def chapter_html(ws: Path, day: date):  # type: ignore[no-untyped-def]
    """The scorecard chapter and the appendix alone, as the comparison lays them out (no PDF)."""
    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.report import ReportExtras, scorecard_chapter
    from procure.io.workspace import load_workspace
    from procure.render.documents import Part, render_html

    workspace = load_workspace(ws)
    ev, _ = evaluate_with_inputs(workspace, day)
    chapter = scorecard_chapter(workspace, ev)
    html = render_html(
        ev,
        "comparison",
        extras=ReportExtras(scorecard=chapter),
        part=Part(frozenset({"scorecard", "appendix"}), offers=(0, 0), offers_heading=False),
    )
    return chapter, html


def test_the_comparison_report_scores_the_signed_vendor_by_hand(signed):
    # As of 2026-06-15 the months are March (metrics, invoice, incidents), April and May (the incident
    # history alone: no incident, so 100%; nothing else).
    chapter, html = chapter_html(signed, date(2026, 6, 15))
    (vendor,) = chapter.vendors
    march, april, may = vendor.months
    # the report's data are the scorecard's (worked by hand in test_a_month_delivered_against_promised...)
    assert march.delivered_tokens_per_gpu_hour == pytest.approx(0.93 * 833_889.6)  # 775,517.3 (the fixture's metrics)
    assert march.availability == pytest.approx(1 - 420 / 44_640) and march.credits_owed == pytest.approx(29_200)
    assert april.throughput_ratio is None and april.delivered_cost_per_task is None and april.availability == 1.0
    tables = ScorecardTables(html).tables
    service, money = tables[("alpha", "service")], tables[("alpha", "money")]
    assert list(service) == list(money) == ["2026-03", "2026-04", "2026-05"]
    # March, as printed: 775,517 tokens a billed GPU-hour against 300 x 3,600 x 0.96515 x 0.8 x 0.980056 (the means of
    # the
    # availability and utilization factors) = 817,258; 94.9%; every request served; no TTFT histogram: no data
    assert service["2026-03"] == [
        "2026-03",
        "775,517",
        "817,258",
        "94.9%",
        "100.00%",
        "no data",
        "no data",
        "no data",
        "no data",
        "no data",
    ]
    # 7 h down of 744 (the overlap counted once): 99.059% against 99.50%: the 10% tier, 29,200.00 of the
    # 292,000 invoice; 73,000 GPU-hours billed of 100 x 744 = 74,400 contracted (98.1%); per 1,000 tasks
    # (292,000 + 0.65 x 73,000) / (56,612,765 x 0.9) x 1,000 = 6.66 delivered against
    # 4.75 / (1,080 x 0.96515 x 0.72 x 0.980056) x 1,000 = 6.46 promised
    assert money["2026-03"] == [
        "2026-03",
        "99.059%",
        "99.50%",
        "10.0%",
        "29,200.00",
        "73,000",
        "74,400",
        "98.1%",
        "6.66",
        "6.46",
    ]
    # April: only the incident history (100%, no credit); the contract's 100 x 720 = 72,000 GPU-hours; no invoice,
    # no metrics: no data, never 0
    assert service["2026-04"] == ["2026-04", "no data", "817,258"] + ["no data"] * 7
    assert money["2026-04"] == [
        "2026-04",
        "100.000%",
        "99.50%",
        "none",
        "none",
        "no data",
        "72,000",
        "no data",
        "no data",
        "6.46",
    ]
    # the chart: one per vendor, the months without throughput or cost evidence (April, May) shaded "no
    # data" in two panels (4 marks) beside the key's entry, never drawn at 0
    svg = html[html.index('id="scorecard-0-') - 200 :]
    svg = svg[: svg.index("</svg>")]
    assert svg.count(">no data<") == 5
    # the summary: the posteriors the evaluation costs the offer at, and the credits
    assert "Throughput as promised: throughput not moved: no month with utilization telemetry" in html
    assert "Below the SLA in 2026-03: credits owed 29,200.00 USD." in html
    # the appendix states the method and this vendor's posteriors, months as the units: March 737 / 744 =
    # 0.990591, April and May 1.0 (720 and 744 hours, no incident), prior 0.961933 (0.96515 x the availability factor's
    # mean 0.996667) worth 730 hours. Pooled share p = (0.961933 x 730 + 2,201) / 2,938 = 0.988159, c = p(1 - p) =
    # 0.0117008; each month's variance c / hours, weights w = hours / c; Q = sum w (y - ybar_w)^2 = 3.7321 > k - 1 = 2,
    # so tau^2 = (3.7321 - 2) / (S1 - S2 / S1) = 1.3770e-5. The promise is a month of 730 hours: its variance
    # c / 730 + tau^2 = 3.07779e-5. Posterior precision 1 / 3.07779e-5 + sum 1 / (c / hours + tau^2) = 134,674; mean
    # (0.961933 / 3.07779e-5 + sum y / (c / hours + tau^2)) / 134,674 = 0.988146; Beta with that mean and variance
    # 1 / 134,674: a + b = m(1 - m) / var - 1 = 1,576.5: Beta(1,557.9, 18.7). (With the promise's variance c / 730
    # alone, it weighed 1.8 months of 744 hours: Beta(2,604.9, 43.6), mean 98.352%; counting hours as trials,
    # Beta(2,903.2, 34.8).)
    assert "Delivered against promised</h2>" in html and "histogram_quantile" in html
    assert "availability Beta(1,557.9, 18.7), mean 98.815%" in html


def test_the_comparison_report_says_when_no_vendor_has_evidence(workspace_copy):
    from procure.analysis.report import NO_ACTUALS

    chapter, html = chapter_html(workspace_copy("basic"), date(2026, 4, 1))
    assert chapter.vendors == [] and chapter.missing == NO_ACTUALS
    assert "No signed vendor has delivered evidence in this workspace" in html
    assert 'class="data compact fixed scorecard"' not in html and "<svg" not in html


def test_sensitivity_takes_a_signed_vendors_ends_from_its_posteriors(signed):
    import numpy as np

    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.analysis.scorecard import evaluation_posteriors
    from procure.analysis.sensitivity import sensitivity
    from procure.io.workspace import load_workspace

    ws = load_workspace(signed)
    ev, inputs = evaluate_with_inputs(ws, date(2026, 4, 1))
    ids = [o.id for o in inputs.offers]
    top = [ids.index(o.id) for o in ev.ranked]
    assert "alpha" in [o.id for o in ev.ranked]
    result = sensitivity(
        inputs.columns,
        inputs.model,
        inputs.offers,
        inputs.currencies,
        ev.currency,
        top,
        ws.config.uncertainty,
        None,
        evaluation_posteriors(ev, inputs, ws.config.uncertainty),
    )
    # throughput: no evidence of capacity (no utilization telemetry), so its ends are its curve's, as for any offer
    row = next(r for r in result.rows if r.input == "throughput: alpha")
    assert (row.low, row.high) == ws.config.uncertainty.throughput[
        ws.offers[ids.index("alpha")].performance.points_source
        if ws.offers[ids.index("alpha")].performance.points
        else "reference"
    ].bounds[::2]
    # availability: Beta(1439.21, 34.79)'s 2.5% point (checked against the quantile of a million draws of
    # numpy's own sampler, whose standard error is about 1e-5) over its mean; the cost moves as 1 / availability.
    # The prior is the promise at the mean of its availability factor, 0.96515 x 0.996667 (test_the_evidence_moves...)
    prior = 0.96515 * AVAILABILITY_MEAN
    a, b = prior * 730 + 737, (1 - prior) * 730 + 7
    low = float(np.quantile(np.random.default_rng(3).beta(a, b, 1_000_000), 0.025))
    availability = next(r for r in result.rows if r.input.startswith("availability"))
    assert availability.costs_low["alpha"] == pytest.approx(result.baseline["alpha"] * (a / (a + b)) / low, rel=1e-4)


def test_an_owned_clusters_months_say_no_sla_rather_than_no_data_for_credits(workspace_copy, tmp_path):
    # An owned cluster has no provider and no SLA: no credit can be owed, which is not missing evidence.
    ws = workspace_copy("offer_kinds")
    invoices = tmp_path / "invoices.csv"
    invoices.write_text("month,gpu_hours,output_tokens,amount\n2026-10,7300,,10000\n")
    assert run("actuals", "import", invoices, "--offer", "owned", "-w", ws).exit_code == 0
    table = run("scorecard", "--offer", "owned", "-w", ws, "--as-of", "2026-11-29")
    assert table.exit_code == 0, table.output
    row = next(line for line in table.stdout.splitlines() if "2026-10" in line)
    assert row.rstrip(" │").endswith("no SLA") and "no data │" not in row.split("│")[-2]
    markdown = run("scorecard", "--offer", "owned", "-w", ws, "--as-of", "2026-11-29", "--format", "markdown")
    assert "| no SLA |" in next(line for line in markdown.stdout.splitlines() if line.startswith("| 2026-10"))
    # The report's chapter says the same: SLA, credit share and credits owed are "no SLA", and the
    # summary says no credit is owed because there is no SLA (not "no month below the SLA").
    _, html = chapter_html(ws, date(2026, 11, 29))
    money = ScorecardTables(html).tables[("owned", "money")]["2026-10"]
    assert money[2:5] == ["no SLA", "no SLA", "no SLA"]
    assert "No SLA (an owned cluster): no credits are owed." in html and "No month below the SLA" not in html


def test_a_month_billed_at_the_commitment_is_all_of_its_contract():
    """The example's keel-b200-mc commits 256 GPUs and is invoiced 256 x the month's hours (May: 31 x 24 = 744 h,
    190,464 GPU-hours). Today's demand at the promised throughput (the evaluation the scorecard reads) would bill it
    about 263 GPUs, but the contract is the commitment: 100%."""
    from conftest import ROOT

    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    assert (
        evaluate(load_workspace(ROOT), date(2026, 11, 29), delivered=False).offer("keel-b200-mc").metrics["billed_gpus"]
        > 256
    )
    (vendor,) = scorecard_json(ROOT, "2026-11-29")["vendors"]
    may = vendor["months"][0]
    assert may["month"] == "2026-05" and may["billed_gpu_hours"] == 190_464
    assert may["contracted_gpu_hours"] == 256 * 744 and may["billed_vs_contracted"] == 1.0
    assert all(m["billed_vs_contracted"] == 1.0 for m in vendor["months"])


def test_no_signed_vendor_says_so_in_one_line(workspace_copy):
    ws = workspace_copy("basic")  # no actuals/ folder: nobody is signed yet
    for args in ((), ("--format", "markdown"), ("--claim",), ("--claim", "--format", "text")):
        result = run("scorecard", "-w", ws, "--as-of", "2026-11-29", *args)
        assert result.exit_code == 0, result.output
        assert (
            result.stdout
            == "No signed vendor has evidence in actuals/ as of 2026-11-29: import it with procure actuals import FILE "
            "--offer ID.\n"
        ), args
    assert scorecard_json(ws, "2026-11-29")["vendors"] == []
    claims = json.loads(run("scorecard", "--claim", "--format", "json", "-w", ws, "--as-of", "2026-11-29").stdout)
    assert claims["vendors"] == [] and claims["command"] == "scorecard"


def test_the_promise_weighs_one_month_whatever_the_dispersion():
    """The availability prior is `availability_prior_hours` hours (730: one month). Prior 0.99 worth 730 hours and
    two months of 730 hours at 0.999 and 0.95, by hand:
    pooled p = (0.99 + 0.999 + 0.95) x 730 / (3 x 730) = 0.979667; c = p (1 - p) = 0.979667 x 0.020333 = 0.019920;
    each month's sampling variance v = c / 730 = 2.72875e-5, weight 1 / v = 36,646.8 each;
    DerSimonian-Laird: weighted mean 0.9745, Q = 36,646.8 x (0.0245^2 + 0.0245^2) = 43.9945, S1 = 73,293.6,
    S2 / S1 = 36,646.8, tau^2 = (43.9945 - 1) / 36,646.8 = 1.17321e-3.
    A month of 730 hours is then an observation of variance v + tau^2, and so is the promise: the three weigh the
    same, and the posterior mean is their plain average, (0.99 + 0.999 + 0.95) / 3 = 0.979667, its variance
    (v + tau^2) / 3 = 1.20050e-3 / 3 = 4.00168e-4. (With the prior's variance v alone, the promise weighed
    (v + tau^2) / v = 44 months and the mean stayed at 0.9893.)"""
    from procure.analysis.scorecard import _share_posterior

    alpha, beta, mean, tau = _share_posterior((0.99 * 730, 0.01 * 730), [0.999, 0.95], [730.0, 730.0])
    assert mean == pytest.approx(0.979667, abs=1e-6)
    assert tau**2 == pytest.approx(1.17322e-3, rel=1e-4)
    # the Beta with that mean and variance: ab / ((a + b)^2 (a + b + 1))
    n = alpha + beta
    assert alpha * beta / (n * n * (n + 1)) == pytest.approx(4.00168e-4, rel=1e-4)
    # no dispersion (both months 0.999): the conjugate Beta, the promise's 730 hours and the months' 1,460 hours
    alpha, beta, mean, tau = _share_posterior((0.99 * 730, 0.01 * 730), [0.999, 0.999], [730.0, 730.0])
    assert tau == 0 and (alpha, beta) == pytest.approx((0.99 * 730 + 0.999 * 1460, 0.01 * 730 + 0.001 * 1460))


def test_utilization_evidence_counts_the_billed_gpus(tmp_path):
    """Busy GPU-hours weigh a month by busy / the GPU-hours it billed: its invoice's (256 GPUs x the month's hours:
    190,464 in a 31-day month, 184,320 in a 30-day one), not the GPUs a demand fit would bill. The example's
    keel-b200-mc commits 256 GPUs; at 100 M tasks a month it needs about 184 and at 150 M about 269, and either way
    its invoices bill 256: six months (May-October, two of 30 days) of 150,000 busy GPU-hours weigh
    4 x 150,000 / 190,464 + 2 x 150,000 / 184,320 = 4.777806 months."""
    import shutil

    from conftest import ROOT

    ws = tmp_path / "ws"
    shutil.copytree(ROOT, ws, ignore=shutil.ignore_patterns(".*", "tests", "benchmarks", "procure", "docs"))
    config = (ws / "procure.yaml").read_text()
    (ws / "procure.yaml").write_text(config.replace("  tasks_per_month: 150000000", "  tasks_per_month: 100000000", 1))
    metrics = ws / "actuals" / "keel-b200-mc" / "metrics.csv"
    rows = []
    for line in metrics.read_text().splitlines():
        rows.append(
            line if line.startswith("#") else line + (",busy_gpu_hours" if line.startswith("month") else ",150000")
        )
    metrics.write_text("\n".join(rows) + "\n")
    from procure.analysis.evaluate import evaluate
    from procure.io.workspace import load_workspace

    keel = evaluate(load_workspace(ws), date(2026, 12, 1)).offer("keel-b200-mc").model_dump(mode="json")
    assert keel["metrics"]["gpus_needed"] < 200 and keel["metrics"]["billed_gpus"] == 256
    assert keel["evidence"]["months"] == 6
    by_hand = 4 * 150_000 / (256 * 744) + 2 * 150_000 / (256 * 720)
    assert keel["evidence"]["exposure_months"] == pytest.approx(by_hand, rel=1e-12)
    assert keel["evidence"]["exposure_months"] == pytest.approx(4.777806, rel=1e-6)
    # at today's demand (150 M tasks) the demand fit would bill about 269 GPUs; the invoices' 256 still weigh it
    (ws / "procure.yaml").write_text(config)
    keel = evaluate(load_workspace(ws), date(2026, 12, 1)).offer("keel-b200-mc").model_dump(mode="json")
    assert keel["metrics"]["billed_gpus"] > 260
    assert keel["evidence"]["exposure_months"] == pytest.approx(by_hand, rel=1e-12)
