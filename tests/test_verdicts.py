"""Verdicts on offers as buyers write them from docs/workspace.md alone (tests/data/verdicts): an unrated
managed cluster, a per-token API with its speed, SLA and incident history, spot capacity as burst, a stale
grade file, and availability built from who does which job.

The fixture states what its figures depend on (procure.yaml's header): every curve has a point at the
100 tok/s per user target, so no interpolation default matters, and the availability figures depend only
on the SLA, the rating evidence, the responsibilities and self_operated_reliability 0.99 (our host, hardware
repair, at 0.99; our eight operating jobs together at 0.99, each 0.99^(1/8)); an unrated provider's SLA is
judged and costed at the stated unrated haircut 0.99 (assumptions.reliability.unrated).
"""

from __future__ import annotations

import math
import shutil
from datetime import date
from pathlib import Path

import pytest
from clihelp import run
from pointmeans import AVAILABILITY_MEAN, DELIVERY_MEAN
from refusals import refused, validate

from procure.analysis.evaluate import evaluate, evaluate_with_inputs, verdict_lines
from procure.io.workspace import load_workspace
from procure.model.inputs import OPERATING_JOBS, Assumptions
from procure.model.rating import ReliabilityResult, availability_layers
from procure.render.ranking import first_reason

DATA = Path(__file__).parent / "data" / "verdicts"
AS_OF = date(2026, 4, 1)
# our eight operating jobs (every infrastructure job but hardware repair) at 0.99^(1/8) each: 0.99 together
OURS_8 = 0.99


@pytest.fixture()
def ws(tmp_path):
    root = tmp_path / "verdicts"
    shutil.copytree(DATA, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


@pytest.fixture(scope="module")
def ev():
    return evaluate(load_workspace(DATA), AS_OF)


def gate(record, name):
    return next(g for g in record.gates if g.gate == name)


# --- an unrated managed cluster: ranked with the haircut, flagged -----------------------------------


def test_managed_cluster_without_an_operator_block_is_unrated_ranked_and_flagged(ev):
    cluster = ev.offer("cluster-unrated")
    assert cluster.rating_state == "unrated" and cluster.reliability_source == "unrated"
    assert cluster.acceptable and cluster.rank is not None
    # the gate judges the SLA as stated, unverified (every infrastructure job is the provider's: ours is 1)
    assert gate(cluster, "availability").passed
    # judged at the unrated haircut the workspace states, 0.99: 0.995 x 0.99 = 0.98505
    # (printed 98.50%: 0.98505 is 0.985049999... in binary); x the availability factor's mean 0.996667 = 0.981767, and
    # 0.975200 in its lowest draw (x 0.99): above the 97% minimum in every draw
    assert gate(cluster, "availability").detail == (
        "unrated: availability unverified: stated availability 98.50% (SLA 99.50% unverified x the unrated haircut "
        "0.99), 98.18% expected at the mean of its draws "
        "meets the 97.00% minimum; passes in 100.0% of the draws, at least policy.gate_confidence 50%"
    )
    # the cost carries the same haircut: the gate and the cost read one figure, at the mean of its factor
    assert cluster.metrics["availability"] == pytest.approx(0.98505 * AVAILABILITY_MEAN)
    assert cluster.availability_layers.expected == pytest.approx(0.98505)
    assert cluster.availability_layers.costed == cluster.availability_layers.expected
    # a managed cluster can have every kind of evidence, a published tier included
    assert cluster.actions == [
        "rate before signing: add operator.published_tier, operator.evidence (the operator checklist) or "
        "operator.status_history"
    ]
    assert any(n.startswith("unrated: availability unverified") and "rate before signing" in n for n in cluster.notes)
    assert first_reason(cluster) == "unrated: availability unverified; rate before signing"
    assert any(
        line.startswith("unrated, availability unverified") and "cluster-unrated" in line for line in verdict_lines(ev)
    )


def test_the_haircut_is_in_the_cost_per_task_by_hand(ev):
    # capacity = 300 tok/s x 3,600 / 500 x 0.98505 x 0.9 x 0.8 = 1,531.94976 successful tasks per GPU-hour;
    # 30 M tasks need 30e6 / (1,531.94976 x 730) = 26.826 GPUs (above the 16 committed: billed as needed);
    # staff: serving stack 1.0 + 1.0/1000, release validation 0.5 + 0.5/1000, capacity planning 0.25 + 0.25/1000
    # (the default staffing) = 1.75 FTE + 1.75 per 1,000 GPUs at 200,000 a year; software 0.05 for the serving stack.
    # availability and utilization each x the mean of its factor at the point (DELIVERY_MEAN = 0.996667 x 0.983333)
    capacity = 300 * 3600 / 500 * 0.995 * 0.99 * 0.9 * 0.8 * DELIVERY_MEAN
    assert capacity == pytest.approx(1531.94976 * 0.980056, rel=1e-6)
    billed = 30e6 / (capacity * 730)
    ops = (1.75 + 1.75 * billed / 1000) * 200_000 / (billed * 8760)
    cost = (4.00 + ops + 0.05) / capacity
    assert ev.offer("cluster-unrated").metrics["point_cost_per_task"] == pytest.approx(cost, rel=1e-9)


def test_policy_unrated_exclude_turns_it_away_naming_the_fields(ws):
    edit(ws / "procure.yaml", "  min_demand_coverage: 1.0\n", "  min_demand_coverage: 1.0\n  unrated: exclude\n")
    cluster = evaluate(load_workspace(ws), AS_OF).offer("cluster-unrated")
    assert not cluster.acceptable
    reason = gate(cluster, "availability").detail
    assert reason.startswith(
        "unrated: availability unverified (no operator.evidence, operator.published_tier or operator.status_history), "
        "excluded by policy.unrated: exclude"
    )


def test_a_published_tier_rates_it(ws):
    with open(ws / "offers" / "cluster-unrated.yaml", "a") as handle:
        handle.write("operator: {published_tier: silver}\n")
    cluster = evaluate(load_workspace(ws), AS_OF).offer("cluster-unrated")
    assert cluster.rating_state == "rated" and not cluster.actions
    assert cluster.metrics["availability"] == pytest.approx(
        0.995 * 0.99 * AVAILABILITY_MEAN
    )  # Silver's default factor 0.99, x the factor's mean


# --- a per-token API with speed, SLA, limits and a published incident history -------------------------


def test_per_token_api_with_speed_sla_and_status_history_is_acceptable(ev):
    api = ev.offer("api-history")
    assert api.acceptable, api.reasons
    assert api.reliability_source == "status_history" and api.rating_state == "rated"
    # history/api.csv over the 31 days before 2026-04-01 (44,640 min), component "chat completions":
    # major 90 min + critical (whole service) 60 min = 150 min down; the minor incident and the
    # embeddings outage do not count: 1 - 150 / 44,640 = 0.996639785; x the availability factor's mean 0.996667 at the
    # point
    assert api.metrics["availability"] == pytest.approx((1 - 150 / 44640) * AVAILABILITY_MEAN)
    assert "150 min down in the 31 days before 2026-04-01" in gate(api, "availability").detail
    assert gate(api, "latency").detail == "states 120 tok/s per user (P50) meeting the 100 target"
    # peak: 3 x 30e6 / (730 x 60) = 2,054.8 requests/min, x 500 = 1,027,397 output tokens/min; limits 5,000 and
    # 3,000,000
    assert gate(api, "capacity").passed and api.not_stated == []
    # tokens (2,000 x 0.50 + 500 x 2.00) / 1e6 / 0.9 success, plus the staff kept: release validation 0.5 FTE
    # + half of capacity planning's 0.25, at 200,000 a year over 30 M tasks a month
    cost = (2000 * 0.50 + 500 * 2.00) / 1e6 / 0.9 + 0.625 * 200_000 / 12 / 30e6
    assert api.metrics["point_cost_per_task"] == pytest.approx(cost)
    # expected: the staff part x the mean of the staff-cost factor (triangular 0.9 / 1 / 1.25: 1.05) x the mean of one
    # over the demand factor (triangular 0.8 / 1 / 1.2: 25 x (0.2 - 0.8 ln 1.25) + 25 x (1.2 ln 1.2 - 0.2) = 1.00679),
    # drawn apart; the tokens' part is not drawn. Within the draws' sampling error (0.1%).
    inverse = 25 * (0.2 - 0.8 * math.log(1.25)) + 25 * (1.2 * math.log(1.2) - 0.2)
    staff = 0.625 * 200_000 / 12 / 30e6
    assert api.metrics["cost_per_task"] == pytest.approx(cost - staff + staff * 1.05 * inverse, rel=1e-3)
    assert api.rank == 1


def test_without_its_history_the_same_api_is_unrated_on_its_sla(ws):
    edit(
        ws / "offers" / "api-history.yaml",
        "  status_history: {file: history/api.csv, components: [chat completions], days: 31}\n",
        "  status_history: null\n",
    )
    api = evaluate(load_workspace(ws), AS_OF).offer("api-history")
    assert api.rating_state == "unrated" and api.acceptable
    # 0.999 x the stated unrated haircut 0.99 = 0.98901, in the gate and the cost; x 0.996667 at the mean
    # of
    # its factor = 0.985714, 0.979120 in its lowest draw: it passes in every draw
    assert gate(api, "availability").detail == (
        "unrated: availability unverified: stated availability 98.90% (SLA 99.90% unverified x the unrated haircut "
        "0.99), 98.57% expected at the mean of its draws "
        "meets the 97.00% minimum; passes in 100.0% of the draws, at least policy.gate_confidence 50%"
    )
    assert api.metrics["availability"] == pytest.approx(0.98901 * AVAILABILITY_MEAN)


def test_a_missing_or_broken_history_is_a_located_error(ws):
    edit(ws / "offers" / "api-history.yaml", "history/api.csv", "history/none.csv")
    refused(validate(ws), "offers/api-history.yaml:", "operator.status_history.file: no such file: history/none.csv")
    edit(ws / "offers" / "api-history.yaml", "history/none.csv", "history/api.csv")
    (ws / "history" / "api.csv").write_text(
        "start,end,impact,components\n2026-03-02T10:00:00Z,2026-03-02T09:00:00Z,major,api\n"
    )
    refused(validate(ws), "history/api.csv:2: end: ends before it starts")


# --- spot capacity: a burst source, never the primary offer -------------------------------------------


def test_spot_offer_is_a_burst_source_with_its_restart_cost_priced(ev):
    spot = ev.offer("spot-cluster")
    assert spot.role == "burst" and not spot.acceptable and spot.rank is None
    assert (
        spot.reasons[0]
        == "spot or preemptible capacity (service.preemptible): a pay-as-used burst source, never the primary offer"
    )
    # 6 interruptions a node-month x 20 min = 120 min of 43,800 lost: 1 - 120/43,800 = 0.997260274
    lost = 120 / 43800
    assert spot.availability_layers.interruption == pytest.approx(1 - lost)
    # provider: SLA 0.99 x Gold 0.995 = 0.98505; all infrastructure jobs the provider's; x 0.997260274; x the factor's
    # mean
    assert spot.metrics["availability"] == pytest.approx(0.99 * 0.995 * (1 - lost) * AVAILABILITY_MEAN)
    # cost per task scales as 1 / availability: the lost share of the cost is the restart cost
    assert spot.metrics["restart_cost_per_task"] == pytest.approx(spot.metrics["cost_per_task"] * lost)
    assert any(
        line.startswith("secondary source (pay-as-used burst, never the primary offer): spot-cluster, restart cost")
        for line in verdict_lines(ev)
    )
    assert ev.summary.recommended != "spot-cluster"


def test_the_plan_takes_spot_only_as_pay_as_used():
    from procure.analysis.plan.candidates import candidates, eligible

    ev, inputs = evaluate_with_inputs(load_workspace(DATA), AS_OF)
    spot = ev.offer("spot-cluster")
    assert eligible(spot) == (True, "")
    found, excluded = candidates(ev, inputs, 200_000, 500, 0.9)
    cand = next(c for c in found if c.id == "spot-cluster")
    assert cand.commits == [] and cand.source is not None
    # 32 GPUs at 2.00 per GPU-hour, per successful task through the same cost model (restart time included)
    assert cand.source.price == 2.00
    # delivered at the capacity whose cost per task is its expected one: 1 / the mean of 1 / its drawn capacity
    per_gpu_month = spot.metrics["costed_capacity_per_gpu_hour"] * 730
    assert spot.metrics["costed_capacity_per_gpu_hour"] < spot.metrics["capacity_per_gpu_hour"]
    assert cand.source.cap_month == pytest.approx(32 * per_gpu_month)
    assert "spot-cluster" not in excluded


# --- layered availability: who does which job ---------------------------------------------------------


def test_layered_values_by_hand(ev):
    owned, metal = ev.offer("owned-colo"), ev.offer("metal-repaired")
    # owned: no provider; our host (hardware repair) 0.99 x our eight operating jobs 0.99^(8/8) = 0.9801; x the
    # availability
    # factor's mean 0.996667 = 0.976833, 0.970299 in its lowest draw (x 0.99): it passes the 97% minimum in every draw
    assert owned.metrics["availability"] == pytest.approx(0.99 * 0.99 * AVAILABILITY_MEAN)
    assert owned.availability_layers.our_jobs == list(OPERATING_JOBS[:9])
    assert gate(owned, "availability").detail == (
        "self-operated availability 98.01%, 97.68% expected at the mean of its draws meets the 97.00% minimum; passes "
        "in 100.0% of the draws, at least policy.gate_confidence 50%"
    )
    # bare metal (no tier: ClusterMAX rates managed clusters only), judged by its hosts' incident history: 216 minutes
    # down in 30 days (43,200 minutes) = 0.995, x ours 0.99 for the eight operating jobs = 0.98505
    assert metal.metrics["availability"] == pytest.approx((1 - 216 / 43_200) * OURS_8 * AVAILABILITY_MEAN, rel=1e-9)
    assert metal.reliability_source == "status_history"
    assert metal.availability_layers.our_jobs == list(OPERATING_JOBS[1:9])
    assert gate(metal, "availability").detail == (
        "stated availability 98.50% (status history history/metal.csv: 216 min down in the 30 days before 2026-04-01 x "
        "ours 0.99 for 8 jobs), "
        "98.18% expected at the mean of its draws meets the 97.00% minimum; passes in 100.0% of the draws, at least "
        "policy.gate_confidence 50%"
    )


def test_provider_repaired_bare_metal_is_at_least_as_available_as_owned_under_the_default_factors(ws):
    ev = evaluate(load_workspace(ws), AS_OF)
    owned = ev.offer("owned-colo").metrics["availability"]
    metal = ev.offer("metal-repaired").metrics["availability"]
    # owned 0.99 (our host) x 0.99 (our operating jobs) = 0.9801 < bare metal 0.995 (its host) x 0.99 = 0.98505, each x
    # the
    # availability factor's mean at the point
    assert (
        owned == pytest.approx(0.9801 * AVAILABILITY_MEAN)
        and metal == pytest.approx(0.98505 * AVAILABILITY_MEAN)
        and metal > owned
    )
    # Under the same factors, a provider's host at 0.99 (our host's factor): a history of 432 minutes down in 43,200 is
    # 0.99, x 0.99 = 0.9801, equal to owned (it was 0.99 x 0.99^(8/9) = 98.12% against owned's 99.00% when hardware
    # repair counted 0.99^(1/9))
    edit(ws / "history" / "metal.csv", "2026-03-15T03:36:00Z", "2026-03-15T07:12:00Z")
    metal = evaluate(load_workspace(ws), AS_OF).offer("metal-repaired").metrics["availability"]
    assert metal == pytest.approx(0.9801 * AVAILABILITY_MEAN, rel=1e-12) and metal >= owned - 1e-15


def test_a_provider_doing_strictly_more_jobs_is_never_less_available():
    """Every subset of the twelve jobs handed to the provider, and every job added to it: availability never falls.
    Owned (no provider) is never above a rented offer whose provider's layer is at least our host's factor."""
    from itertools import combinations

    import yaml

    from procure.model.inputs import Offer

    data = yaml.safe_load((DATA / "offers" / "metal-repaired.yaml").read_text())
    owned_data = yaml.safe_load((DATA / "offers" / "owned-colo.yaml").read_text())
    assumptions = Assumptions(self_operated_reliability=0.99)
    platinum = ReliabilityResult(1.0, "published", "published tier Platinum")
    owned = availability_layers(
        Offer.model_validate(owned_data), ReliabilityResult(None, "self_operated", ""), assumptions
    ).expected
    assert owned == pytest.approx(0.9801)
    jobs = list(OPERATING_JOBS)
    for sla in (0.97, 0.99, 0.999):  # the provider's layer below, equal to and above our host's 0.99
        base = Offer.model_validate(
            {**data, "service": {**data["service"], "sla": {"availability": sla, "node_replacement_hours": 72}}}
        )
        value: dict[frozenset, float] = {}
        for k in range(len(jobs) + 1):
            for chosen in combinations(jobs, k):
                matrix = {job: ("provider" if job in chosen else "customer") for job in jobs}
                value[frozenset(chosen)] = availability_layers(
                    base.model_copy(update={"responsibilities": matrix}), platinum, assumptions
                ).expected
        for chosen, a in value.items():
            for job in jobs:
                if job not in chosen:
                    assert value[chosen | {job}] >= a - 1e-15, (sla, sorted(chosen), job)
            if sla >= 0.99:
                assert a >= owned - 1e-15, (sla, sorted(chosen))
        # by hand: the provider repairs the hardware only: SLA x 0.99 (our eight operating jobs); everything: the SLA
        assert value[frozenset({"hardware_repair"})] == pytest.approx(sla * 0.99)
        assert value[frozenset(jobs)] == pytest.approx(sla)
        # nothing handed over on a rented offer: the host is the weaker of the provider's SLA and our repairs, x 0.99
        assert value[frozenset()] == pytest.approx(min(sla, 0.99) * 0.99)
    # a shared job counts on the provider's side, as a provider one does
    shared = base.model_copy(
        update={
            "responsibilities": {job: ("shared" if job == "monitoring" else base.responsibilities[job]) for job in jobs}
        }
    )
    provided = base.model_copy(
        update={
            "responsibilities": {
                job: ("provider" if job == "monitoring" else base.responsibilities[job]) for job in jobs
            }
        }
    )
    assert (
        availability_layers(shared, platinum, assumptions).expected
        == availability_layers(provided, platinum, assumptions).expected
    )


# --- no acceptable offer: the three commonest reasons with the field that changes each -----------------


def test_when_no_offer_is_acceptable_validate_and_compare_say_why(ws):
    edit(ws / "procure.yaml", "  min_availability: 0.97 ", "  min_availability: 0.999 ")
    edit(ws / "procure.yaml", "  require_attestation_any: [soc2_type2]\n", "  require_attestation_any: [iso27001]\n")
    ev = evaluate(load_workspace(ws), AS_OF)
    assert not ev.ranked
    reasons = ev.summary.common_reasons
    assert len(reasons) == 3
    # availability: all five fall short of 99.9%; security: four without ISO 27001 (owned is exempt); role: the spot
    # offer
    assert [(r.gate, len(r.offers)) for r in reasons] == [("availability", 5), ("security", 4), ("role", 1)]
    assert "service.sla.availability" in reasons[0].fields and "service.attestations" in reasons[1].fields
    for command in ("validate", "compare"):
        result = run(command, "-w", ws)
        assert result.exit_code == 0, result.stderr
        assert "no offer is acceptable (0 of 5); the commonest reasons:" in result.stdout
        assert (
            "  availability (5 offers, e.g. " in result.stdout and "change service.sla.availability" in result.stdout
        ), result.stdout


# --- stale grade files ----------------------------------------------------------------------------------


OLD_MC = """id: B200-MC
name: B200 managed cluster
rank: 5
gpu: B200
expect: A managed cluster, as graded before monitoring could be shared.
requires:
  service_kinds: [managed_cluster, managed_serving]
  provider_jobs: [hardware_repair, firmware_drivers, os_patching, fabric_isolation, health_checks, scheduler]
  max_node_replacement_hours: 48
  min_sla_availability: 0.99
  attestations_any: [soc2_type2, iso27001]
  tenant_isolation: true
"""


def test_a_stale_grade_file_is_warned_about_and_updated_only_when_asked(ws):
    grade_file = ws / "grades" / "B200-MC.yaml"
    grade_file.write_text(OLD_MC)
    result = run("validate", "-w", ws)
    assert result.exit_code == 0
    warning = next(line for line in result.stderr.splitlines() if line.startswith("warning: grades/B200-MC.yaml"))
    # the current default B200-MC (grades/B200-MC.yaml of the example) also requires monitoring provider or shared
    assert "requires.provider_or_shared_jobs: monitoring" in warning
    assert "`procure grades update` shows the change, `procure grades update --write` makes it" in warning
    shown = run("grades", "update", "-w", ws)
    assert shown.exit_code == 0
    assert "+  provider_or_shared_jobs:\n+  - monitoring\n" in shown.stdout
    assert "nothing written" in shown.stderr
    assert grade_file.read_text() == OLD_MC  # nothing written unasked
    written = run("grades", "update", "--write", "-w", ws)
    assert written.exit_code == 0 and "wrote grades/B200-MC.yaml" in written.stderr
    assert "provider_or_shared_jobs" in grade_file.read_text()
    again = run("validate", "-w", ws)
    assert not any(line.startswith("warning: grades/B200-MC.yaml") for line in again.stderr.splitlines())


def test_interruption_share_formula():
    # docs/ratings.md: 1 - interruptions x restart minutes / (730 x 60)
    assert math.isclose(1 - 6 * 20 / (730 * 60), 0.9972602739726028)


def test_docs_workspace_describes_every_offer_grade_workload_assumption_and_policy_field():
    """docs/workspace.md names every field of an offer and a grade, and of procure.yaml's workload,
    assumptions, policy and rating, with its effect on the verdict."""
    import typing

    from pydantic import BaseModel

    from procure.model.inputs import Grade, Offer, WorkspaceConfig

    text = (Path(__file__).parent.parent / "docs" / "workspace.md").read_text()

    def model_in(annotation):
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        for arg in typing.get_args(annotation):
            found = model_in(arg)
            if found is not None:
                return found
        return None

    def leaves(model, prefix=""):
        for name, info in model.model_fields.items():
            nested = model_in(info.annotation)
            if nested is not None and nested is not model:
                yield from leaves(nested, prefix + name + ".")
            else:
                yield prefix + name

    def named(path):
        # a field is named by its full path, or as `.leaf` after its parent's full path on the same row,
        # or inside its parent's parenthesis (`pricing.fees` (`name` and one of `once`, ...))
        parent, _, leaf = path.rpartition(".")
        return f"`{path}`" in text or (
            parent and f"`{parent}" in text and (f"`.{leaf}`" in text or f"`{leaf}`" in text)
        )

    wanted = list(leaves(Offer)) + list(leaves(Grade))
    wanted += [
        p
        for p in leaves(WorkspaceConfig)
        if p.split(".")[0] in ("workload", "assumptions", "policy", "rating", "currency", "as_of")
    ]
    missing = [p for p in wanted if not named(p)]
    assert missing == [], missing
    for section in ("uncertainty", "horizon", "demand", "plan", "hedge", "index", "market", "reevaluate", "actuals"):
        assert f"`{section}`" in text


@pytest.mark.parametrize("target", ["../outside.csv", "/etc/hostname"])
def test_a_status_history_outside_the_workspace_is_refused(ws, target):
    (ws.parent / "outside.csv").write_text("start,end,impact,components\n")
    edit(ws / "offers" / "api-history.yaml", "history/api.csv", target)
    refused(validate(ws), f"operator.status_history.file: links outside the workspace: {target}")


@pytest.mark.slow
def test_a_solved_plan_uses_spot_only_as_pay_as_used(ws):
    """A plan solve (about 10 s): the spot offer appears only as a pay-as-used source, never committed."""
    import json

    with open(ws / "procure.yaml", "a") as handle:
        # a vendor-share cap, so that the token API cannot take all of it and the cheaper spot capacity is used
        handle.write(
            "demand:\n  months: 6\n  growth: 0.0\n  volatility: 0.2\n  scenarios: 50\nplan:\n  max_vendor_share: 0.7\n"
        )
    result = run("plan", "-w", ws, "--format", "json")
    assert result.exit_code == 0, result.stderr
    lines = json.loads(result.stdout)["plan"]
    spot = [x for x in lines if x["offer"] == "spot-cluster"]
    assert spot and all(x["role"] == "pay_as_used" for x in spot)
    assert all(x["offer"] != "spot-cluster" for x in lines if x["role"] == "commit")
