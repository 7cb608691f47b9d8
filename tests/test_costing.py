"""The cost model, step by step (DESIGN.md "Cost model (normative)").

Every expected value is worked out by hand from the input numbers, written as a literal expression
(or a comment), never by calling procure's own helpers. Two styles:

- `compute_costs` on a one-row-per-offer table built from INPUT_COLUMNS, for each formula step;
- whole workspaces on disk through `evaluate(load_workspace(path), as_of)`, for the mapping from
  offer files (fees lists, currencies, owners, reliability by service kind) to the same figures.

Hand-calculation conventions used below: 730 hours a month, 8,760 a year. With fte_cost_year
219,000 and 100 committed GPUs, one FTE costs 219000 / (100 x 8760) = 0.25 per GPU-hour.
"""

from __future__ import annotations

import math
from datetime import date

import pandas as pd
import pytest
from pointmeans import AVAILABILITY_MEAN, DELIVERY_MEAN, UTILIZATION_MEAN

from procure.analysis.evaluate import evaluate
from procure.io.workspace import load_workspace
from procure.model.costing import INPUT_COLUMNS, CostModel, compute_costs
from procure.model.inputs import OPERATING_JOBS, Assumptions, Workload

AS_OF = date(2026, 11, 29)
NAN = math.nan
ZERO_STAFF = {"fte_fixed": 0.0, "fte_per_1000_gpus": 0.0}


def staffing(**jobs: tuple[float, float]) -> dict[str, dict[str, float]]:
    """Staffing per job: every job zero except those given as (fte_fixed, fte_per_1000_gpus)."""
    table = {job: dict(ZERO_STAFF) for job in OPERATING_JOBS}
    for job, (fixed, per_1000) in jobs.items():
        table[job] = {"fte_fixed": fixed, "fte_per_1000_gpus": per_1000}
    return table


# hardware_repair: 1 FTE + 2 per 1000 GPUs; serving_stack: 2 FTE + 4 per 1000 GPUs; the rest zero.
STAFF = staffing(hardware_repair=(1.0, 2.0), serving_stack=(2.0, 4.0))


def model(*, tasks_per_month: float | None = None, success_rate: float = 0.9, jobs=None, **assumptions) -> CostModel:
    workload = Workload(
        input_tokens=8000,
        output_tokens=1000,
        interactivity=100,
        success_rate=success_rate,
        min_success_rate=0.8,
        utilization=0.8,
        tasks_per_month=tasks_per_month,
    )
    settings = {
        "fte_cost_year": 219000,
        "shared_weight": 0.5,
        "cost_of_capital": 0.10,
        "software_gpu_hour": 0.05,
        "self_operated_reliability": 0.98,
        "jobs": STAFF if jobs is None else jobs,
    }
    settings.update(assumptions)
    return CostModel(workload, Assumptions(**settings))


def row(owner: str = "provider", owners: dict[str, str] | None = None, **values) -> dict:
    """One offer's inputs: a plain USD managed cluster at 4.00/GPU-hour, 100 GPUs, 12 months,
    300 tok/s/GPU at the target, SLA 99.5% x unrated 0.97, every job with `owner`."""
    base = {
        "basis": "gpu_hour",
        "fx": 1.0,
        "gpu_hour": 4.0,
        "discount": 0.0,
        "index_level": NAN,
        "spread": NAN,
        "floor": NAN,
        "cap": NAN,
        "capex_per_gpu": NAN,
        "life_years": NAN,
        "power_kw_per_gpu": NAN,
        "pue": NAN,
        "electricity_kwh": NAN,
        "colo_kw_month": NAN,
        "per_mtok_input": NAN,
        "per_mtok_output": NAN,
        "gpus": 100,
        "max_gpus": 100,
        "term_months": 12,
        "fees_once": 0.0,
        "fees_monthly": 0.0,
        "fees_gpu_hour": 0.0,
        "fees_per_tb_month": 0.0,
        "prepay_fraction": 0.0,
        "software_gpu_hour": 0.0,
        "throughput": 300.0,
        "sla_availability": 0.995,
        "reliability_factor": 0.97,
        "quality_pass_rate": 1.0,
    }
    for job in OPERATING_JOBS:
        base[f"owner_{job}"] = owner
    for job, who in (owners or {}).items():
        base[f"owner_{job}"] = who
    unknown = set(values) - set(INPUT_COLUMNS)
    assert not unknown, f"not input columns: {unknown}"
    base.update(values)
    return base


def owned_row(**values) -> dict:
    """An owned cluster: 43,800 per GPU over 5 years, 1 kW x PUE 1.5 at 0.10/kWh, 146/kW-month colo."""
    owned = {
        "basis": "owned",
        "gpu_hour": NAN,
        "capex_per_gpu": 43800.0,
        "life_years": 5.0,
        "power_kw_per_gpu": 1.0,
        "pue": 1.5,
        "electricity_kwh": 0.10,
        "colo_kw_month": 146.0,
        "term_months": 60,
        "sla_availability": NAN,
        "reliability_factor": NAN,
    }
    owned.update(values)
    return row(owner="customer", **owned)


def token_row(**values) -> dict:
    """A per-token managed service: 0.50 per M input tokens, 2.00 per M output tokens."""
    token = {
        "basis": "per_token",
        "gpu_hour": NAN,
        "per_mtok_input": 0.50,
        "per_mtok_output": 2.00,
        "gpus": NAN,
        "max_gpus": NAN,
        "throughput": NAN,
        "sla_availability": 0.999,
    }
    token.update(values)
    return row(**token)


def costs(*rows: dict, cost_model: CostModel | None = None) -> list[dict]:
    frame = pd.DataFrame(list(rows), columns=list(INPUT_COLUMNS))
    return compute_costs(frame, cost_model or model()).to_dict("records")


def one(r: dict, cost_model: CostModel | None = None) -> dict:
    return costs(r, cost_model=cost_model)[0]


def metrics_of(path, offer_id: str, as_of: date = AS_OF) -> dict:
    return evaluate(load_workspace(path), as_of).offer(offer_id).metrics


# --- 1. rent --------------------------------------------------------------------------------------


def test_rent_fixed_price_with_discount():
    c = one(row(gpu_hour=4.0, discount=0.25))
    assert c["list_price"] == pytest.approx(4.0)
    assert c["rent"] == pytest.approx(3.0)  # 4.00 x (1 - 0.25)
    assert math.isnan(c["rent_at_cap"])  # only index-linked offers have a cap


def test_index_linked_rent_between_floor_and_cap():
    c = one(row(basis="index", gpu_hour=NAN, index_level=5.0, spread=0.35, floor=4.0, cap=6.0, discount=0.1))
    assert c["rent"] == pytest.approx(4.815)  # (5.00 + 0.35) x 0.9
    assert c["rent_at_cap"] == pytest.approx(5.4)  # 6.00 x 0.9


def test_index_linked_rent_clamped_at_floor():
    c = one(row(basis="index", gpu_hour=NAN, index_level=3.0, spread=0.35, floor=4.0, cap=6.0, discount=0.1))
    assert c["rent"] == pytest.approx(3.6)  # 3.35 < floor 4.00 -> 4.00 x 0.9
    assert c["rent_at_cap"] == pytest.approx(5.4)


def test_index_linked_rent_clamped_at_cap():
    c = one(row(basis="index", gpu_hour=NAN, index_level=6.0, spread=0.35, floor=4.0, cap=6.0, discount=0.1))
    assert c["rent"] == pytest.approx(5.4)  # 6.35 > cap 6.00 -> 6.00 x 0.9
    assert c["rent_at_cap"] == pytest.approx(5.4)


def test_index_linked_rent_without_floor_or_cap_is_index_plus_spread():
    c = one(row(basis="index", gpu_hour=NAN, index_level=2.0, spread=0.35))
    assert c["rent"] == pytest.approx(2.35)
    assert math.isnan(c["rent_at_cap"])


def test_owned_rent_with_capital_recovery_factor():
    c = one(owned_row())
    # CRF(10%, 5 y) = 0.1 / (1 - 1.1^-5) = 0.1 / (1 - 1/1.61051) = 0.263797481
    # capex: 43800 x 0.263797481 / 8760 = 5 x 0.263797481 = 1.318987405
    # power: 1.0 kW x 1.5 x 0.10 = 0.15; colo: 146 x 1.0 / 730 = 0.20
    assert c["rent"] == pytest.approx(43800 * (0.1 / (1 - 1.1**-5)) / 8760 + 1.0 * 1.5 * 0.10 + 146 * 1.0 / 730)
    assert c["rent"] == pytest.approx(1.668987405, rel=1e-9)


def test_owned_rent_with_free_capital_is_straight_line():
    c = one(owned_row(), cost_model=model(cost_of_capital=0.0))
    # r = 0: CRF = 1/n -> 43800 / 5 / 8760 = 1.00, + 0.15 power + 0.20 colo
    assert c["rent"] == pytest.approx(1.35)


def test_owned_rent_in_another_currency_is_converted():
    c = one(owned_row(fx=1.1), cost_model=model(cost_of_capital=0.0))
    assert c["rent"] == pytest.approx(1.35 * 1.1)


# --- 2. fees --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "amount", "per_gpu_hour"),
    [
        ("fees_once", 87600.0, 0.1),  # 87,600 / (100 GPUs x 12 months x 730 h)
        ("fees_monthly", 7300.0, 0.1),  # 7,300 / (100 x 730)
        ("fees_gpu_hour", 0.04, 0.04),  # a surcharge per GPU-hour
        ("fees_per_tb_month", 20.0 * 365, 0.1),  # 20/TB x 365 TB a month = 7,300 / (100 x 730)
    ],
)
def test_each_fee_kind_per_gpu_hour(column, amount, per_gpu_hour):
    assert one(row(**{column: amount}))["fees"] == pytest.approx(per_gpu_hour)


def test_fees_from_an_offer_file_with_all_four_kinds(workspace_copy):
    root = workspace_copy("basic")
    path = root / "offers" / "alpha.yaml"
    text = path.read_text()
    text = text.replace(
        "    - {name: onboarding, once: 87600}\n",
        "    - {name: onboarding, once: 87600}\n"
        "    - {name: storage, monthly: 3650}\n"
        "    - {name: support, gpu_hour: 0.04}\n"
        "    - {name: egress, per_tb: 20, tb_per_month: 365}\n"
        "    - {name: more egress, per_tb: 10, tb_per_month: 73}\n",
    )
    path.write_text(text)
    m = metrics_of(root, "alpha")
    # once 87,600 / (100 x 12 x 730) = 0.10; monthly 3,650 / 73,000 = 0.05; gpu_hour 0.04;
    # per_tb 20 x 365 = 7,300 and 10 x 73 = 730 a month: 8,030 / 73,000 = 0.11
    assert m["fees"] == pytest.approx(0.10 + 0.05 + 0.04 + 0.11)


# --- 3. financing ---------------------------------------------------------------------------------


def test_prepay_financing():
    two_years, one_year = costs(
        row(prepay_fraction=0.25, term_months=24),
        row(prepay_fraction=0.25, term_months=12, gpu_hour=4.0, discount=0.25),
    )
    assert two_years["financing"] == pytest.approx(0.1)  # 0.25 x 4.00 x 0.10 x 24 / 24
    assert one_year["financing"] == pytest.approx(0.0375)  # 0.25 x 3.00 (after discount) x 0.10 x 12 / 24


def test_owned_has_no_financing_even_with_a_prepay():
    assert one(owned_row(prepay_fraction=0.5))["financing"] == 0.0


# --- 4. ops ---------------------------------------------------------------------------------------


def test_ops_nothing_when_the_provider_owns_every_job():
    assert one(row(owner="provider"))["ops"] == 0.0


def test_ops_customer_owned_job():
    c = one(row(owners={"serving_stack": "customer"}))
    # (2 + 4 x 100 / 1000) FTE x 219,000 / (100 x 8,760) = 2.4 x 0.25
    assert c["ops"] == pytest.approx(0.6)


def test_ops_shared_job_counts_shared_weight():
    half = one(row(owners={"serving_stack": "shared"}))
    assert half["ops"] == pytest.approx(0.3)  # 0.5 x 2.4 FTE x 0.25
    quarter = one(row(owners={"serving_stack": "shared"}), cost_model=model(shared_weight=0.25))
    assert quarter["ops"] == pytest.approx(0.15)  # 0.25 x 2.4 FTE x 0.25


def test_ops_mixed_owners_and_fleet_size():
    mixed = one(row(owners={"hardware_repair": "customer", "serving_stack": "shared"}))
    # hardware_repair: 1 x (1 + 2 x 0.1) = 1.2 FTE; serving_stack: 0.5 x (2 + 0.4) = 1.2 FTE -> 2.4 x 0.25
    assert mixed["ops"] == pytest.approx(0.6)
    big = one(row(owners={"serving_stack": "customer"}, gpus=1000, max_gpus=1000))
    # (2 + 4 x 1000/1000) = 6 FTE x 219,000 / (1000 x 8,760) = 6 x 0.025
    assert big["ops"] == pytest.approx(0.15)


# --- 5. software ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("serving_owner", "expected"),
    [
        ("provider", 0.02),  # only the offer's own 0.02
        ("customer", 0.05 + 0.02),  # the buyer pays serving software 0.05, plus the offer's 0.02
        ("shared", 0.5 * 0.05 + 0.02),
    ],
)
def test_software_by_serving_stack_owner(serving_owner, expected):
    c = one(row(owners={"serving_stack": serving_owner}, software_gpu_hour=0.02))
    assert c["software"] == pytest.approx(expected)


# --- 6. full --------------------------------------------------------------------------------------


def test_full_is_the_sum_of_the_parts():
    c = one(
        row(
            gpu_hour=4.0,
            discount=0.25,
            fees_once=87600.0,
            prepay_fraction=0.25,
            software_gpu_hour=0.02,
            owners={"serving_stack": "customer"},
        )
    )
    # rent 3.00 + fees 0.10 + financing 0.25 x 3 x 0.1 x 12/24 = 0.0375 + ops 0.60 + software 0.07
    assert c["full"] == pytest.approx(3.0 + 0.1 + 0.0375 + 0.6 + 0.07)
    assert c["full"] == pytest.approx(3.8075)


# --- 8. availability ------------------------------------------------------------------------------


def test_availability_managed_is_sla_times_reliability_factor():
    assert one(row(sla_availability=0.995, reliability_factor=0.97))["availability"] == pytest.approx(0.96515)


def test_availability_owned_is_self_operated_reliability():
    # our host 0.98 x our operating jobs 0.98, self_operated_reliability each
    assert one(owned_row())["availability"] == pytest.approx(0.9604)


def test_availability_by_service_kind_from_offer_files(data_dir):
    basic = evaluate(load_workspace(data_dir / "basic"), AS_OF)
    # Each x the mean of the default availability factor, AVAILABILITY_MEAN = 0.996667 (the point at the means).
    # managed cluster: SLA 0.995 x unrated 0.97
    assert basic.offer("alpha").metrics["availability"] == pytest.approx(0.995 * 0.97 * AVAILABILITY_MEAN)
    assert basic.offer("alpha").reliability_factor == pytest.approx(0.97)
    # bare metal, unrated: SLA 0.99 x haircut 0.97 (the host) x ours 0.98 (the eight operating jobs left to us) =
    # 0.941094
    assert basic.offer("bravo").metrics["availability"] == pytest.approx(0.941094 * AVAILABILITY_MEAN, rel=1e-9)
    # owned: our host 0.98 x our operating jobs 0.98
    kinds = evaluate(load_workspace(data_dir / "offer_kinds"), AS_OF)
    assert kinds.offer("owned").metrics["availability"] == pytest.approx(0.9604 * AVAILABILITY_MEAN)


# --- 9. success rate ------------------------------------------------------------------------------


def test_success_rate_times_quality_pass_rate():
    c = one(row(quality_pass_rate=0.95))
    assert c["success_rate"] == pytest.approx(0.855)  # 0.9 x 0.95


def test_zero_quality_gives_no_cost_per_task_not_infinity():
    for tasks in (None, 1e6):
        c = one(row(quality_pass_rate=0.0), cost_model=model(tasks_per_month=tasks))
        assert c["success_rate"] == 0.0
        assert c["successful_tasks_per_gpu_hour"] == 0.0
        for key in ("cost_per_task", "rent_per_task", "gpus_needed"):
            assert math.isnan(c[key]), key
    token = one(token_row(quality_pass_rate=0.0))
    assert math.isnan(token["cost_per_task"])


def test_zero_quality_is_null_in_the_evaluation(workspace_copy):
    root = workspace_copy("basic")
    path = root / "offers" / "alpha.yaml"
    path.write_text(path.read_text() + "  quality_pass_rate: 0\n")
    m = metrics_of(root, "alpha")
    assert m["success_rate"] == 0.0
    assert m["cost_per_task"] is None
    assert m["rent_per_task"] is None


# --- 11. demand fit -------------------------------------------------------------------------------

# A round model for demand fit: SLA 1.0 x factor 1.0, 250 tok/s/GPU, 1,000 output tokens a task:
# c = 250 x 3600 / 1000 x 1.0 x 0.9 x 0.8 = 648 successful tasks per GPU-hour.
ROUND = {"sla_availability": 1.0, "reliability_factor": 1.0, "throughput": 250.0}
C_ROUND = 648.0


def demand_row(**values) -> dict:
    return row(**{**ROUND, "gpus": 100, "max_gpus": 200, **values})


def test_capacity_per_gpu_hour():
    c = one(row())
    # 300 x 3600 / 1000 x (0.995 x 0.97) x 0.9 x 0.8 = 1080 x 0.96515 x 0.72
    assert c["capacity_per_gpu_hour"] == pytest.approx(750.50064)
    assert one(demand_row())["capacity_per_gpu_hour"] == pytest.approx(C_ROUND)


def test_demand_fit_idle_commitment():
    c = one(demand_row(), cost_model=model(tasks_per_month=C_ROUND * 730 * 50))  # 23,652,000 tasks
    assert c["gpus_needed"] == pytest.approx(50)
    assert c["billed_gpus"] == pytest.approx(100)  # the commitment is paid for
    assert c["fill"] == pytest.approx(0.5)
    assert c["successful_tasks_per_gpu_hour"] == pytest.approx(324)  # 648 x 0.5
    assert c["cost_per_task"] == pytest.approx(4.0 / 324)
    assert c["monthly_spend"] == pytest.approx(4.0 * 100 * 730)


def test_demand_fit_need_above_commitment_within_max_gpus():
    c = one(
        demand_row(fees_monthly=7300.0, owners={"serving_stack": "customer"}),
        cost_model=model(tasks_per_month=C_ROUND * 730 * 150),
    )
    assert c["gpus_needed"] == pytest.approx(150)
    assert c["billed_gpus"] == pytest.approx(150)
    assert c["fill"] == pytest.approx(1.0)
    # fixed fees and staff spread over the 150 billed GPUs, not the 100 committed: 7,300 / (150 x 730);
    # serving staff 2 + 4 x 0.15 = 2.6 FTE x 219,000 / (150 x 8,760)
    assert c["fees"] == pytest.approx(7300 / (150 * 730))
    assert c["ops"] == pytest.approx(2.6 * 219000 / (150 * 8760))
    full = 4.0 + 7300 / (150 * 730) + 2.6 * 219000 / (150 * 8760) + 0.05
    assert c["full"] == pytest.approx(full)
    assert c["cost_per_task"] == pytest.approx(full / 648)
    # the monthly spend counts the fixed fee and the staff once: rent and software per GPU-hour x 150 x 730,
    # plus 7,300 a month, plus 2.6 FTE x 219,000 / 12
    assert c["monthly_spend"] == pytest.approx((4.0 + 0.05) * 150 * 730 + 7300 + 2.6 * 219000 / 12)


def test_demand_fit_need_above_max_gpus():
    c = one(demand_row(), cost_model=model(tasks_per_month=C_ROUND * 730 * 300))
    assert c["gpus_needed"] == pytest.approx(300)
    assert c["billed_gpus"] == pytest.approx(200)  # all it can supply
    assert c["fill"] == pytest.approx(1.0)
    assert c["monthly_spend"] == pytest.approx(4.0 * 200 * 730)


def test_demand_fit_without_tasks_per_month_is_full_use_of_the_commitment():
    c = one(demand_row())
    assert math.isnan(c["gpus_needed"])
    assert c["billed_gpus"] == pytest.approx(100)
    assert c["fill"] == 1.0


# --- 12. per successful task ----------------------------------------------------------------------


def test_per_task_figures():
    c = one(row(gpu_hour=4.0, fees_once=87600.0, owners={"serving_stack": "customer"}))
    full = 4.0 + 0.1 + 0.6 + 0.05  # rent + fees + ops + software
    tasks = 300 * 3600 / 1000 * 0.995 * 0.97 * 0.9 * 0.8  # 750.50064, fill 1
    assert c["full"] == pytest.approx(full)
    assert c["successful_tasks_per_gpu_hour"] == pytest.approx(tasks)
    assert c["cost_per_task"] == pytest.approx(full / tasks)  # 0.0063291...
    assert c["cost_per_task"] == pytest.approx(0.006329109, rel=1e-6)
    assert c["rent_per_task"] == pytest.approx(4.0 / tasks)
    # per million delivered output tokens: 4.75 / (300 x 3600 x 0.96515 x 0.8 x 1) x 1e6
    assert c["cost_per_mtok"] == pytest.approx(4.75 / (300 * 3600 * 0.995 * 0.97 * 0.8) * 1e6)
    assert c["monthly_spend"] == pytest.approx(4.75 * 100 * 730)


def test_cost_per_mtok_counts_idle_gpus():
    c = one(demand_row(), cost_model=model(tasks_per_month=C_ROUND * 730 * 50))
    # fill 0.5: 4.00 / (250 x 3600 x 1.0 x 0.8 x 0.5) x 1e6
    assert c["cost_per_mtok"] == pytest.approx(4.0 / (250 * 3600 * 0.8 * 0.5) * 1e6)


def test_per_task_figures_from_the_basic_workspace(data_dir):
    m = metrics_of(data_dir / "basic", "alpha")
    # alpha: 4.00/GPU-h, onboarding 87,600 over 100 GPUs x 12 months, the buyer runs serving.
    assert m["rent"] == pytest.approx(4.0)
    assert m["fees"] == pytest.approx(0.1)
    assert m["financing"] == 0.0
    assert m["ops"] == pytest.approx(0.6)  # serving_stack (2 + 0.4) FTE x 0.25
    assert m["software"] == pytest.approx(0.05)
    assert m["full"] == pytest.approx(4.75)
    assert m["throughput"] == pytest.approx(300)  # measured point at 100 tok/s/user
    assert m["utilization"] == pytest.approx(0.8 * UTILIZATION_MEAN)  # 0.786667
    assert m["fill"] == 1.0
    assert m["gpus_needed"] is None  # no tasks_per_month in basic
    # 300 x 3.6 x 0.995 x 0.97 x 0.9 x 0.8 = 750.50064 as stated, x the means 0.996667 x 0.983333 = 735.5327
    assert m["successful_tasks_per_gpu_hour"] == pytest.approx(750.50064 * DELIVERY_MEAN)
    assert m["point_cost_per_task"] == pytest.approx(4.75 / (750.50064 * DELIVERY_MEAN))
    assert m["monthly_spend"] == pytest.approx(346750)  # 4.75 x 100 x 730


# --- fx -------------------------------------------------------------------------------------------


def test_eur_offer_is_converted(data_dir):
    m = metrics_of(data_dir / "basic", "bravo")
    # bravo: EUR 3.00 x 1.1 USD/EUR; the bare-metal buyer runs serving (0.60) and pays software 0.05
    assert m["rent"] == pytest.approx(3.3)
    assert m["full"] == pytest.approx(3.3 + 0.6 + 0.05)
    # availability: SLA 0.99 x unrated haircut 0.97 x our eight operating jobs 0.98 = 0.941094
    # x the means of the availability and utilization factors, DELIVERY_MEAN = 0.996667 x 0.983333
    assert m["point_cost_per_task"] == pytest.approx(
        3.95 / (300 * 3.6 * 0.99 * 0.97 * 0.98 * 0.9 * 0.8 * DELIVERY_MEAN), rel=1e-7
    )


def test_fx_applies_to_offer_amounts_not_to_workspace_amounts():
    c = one(
        row(fx=1.1, gpu_hour=3.0, fees_monthly=7300.0, software_gpu_hour=0.02, owners={"serving_stack": "customer"})
    )
    assert c["rent"] == pytest.approx(3.3)  # 3.00 EUR x 1.1
    assert c["fees"] == pytest.approx(0.11)  # 7,300 EUR / 73,000 x 1.1
    assert c["software"] == pytest.approx(0.05 + 0.022)  # workspace 0.05 USD + 0.02 EUR x 1.1
    assert c["ops"] == pytest.approx(0.6)  # staff costs are in the workspace currency


def test_fx_on_index_linked_converts_spread_floor_cap_but_not_the_index():
    c = one(row(basis="index", gpu_hour=NAN, fx=1.1, index_level=4.0, spread=0.5, floor=2.0, cap=5.0))
    assert c["rent"] == pytest.approx(4.55)  # index 4.00 USD + 0.50 EUR x 1.1
    capped = one(row(basis="index", gpu_hour=NAN, fx=1.1, index_level=5.0, spread=0.5, floor=2.0, cap=5.0))
    assert capped["rent"] == pytest.approx(5.5)  # 5.55 > cap 5.00 EUR x 1.1 = 5.50
    assert capped["rent_at_cap"] == pytest.approx(5.5)


# --- per-token offers -----------------------------------------------------------------------------


def test_per_token_cost_per_task():
    c = one(token_row(), cost_model=model(tasks_per_month=4e7))
    # (8000 x 0.50 + 1000 x 2.00) / 1e6 = 0.006 per task billed; / 0.9 success
    assert c["cost_per_task"] == pytest.approx(0.006 / 0.9)
    assert c["rent_per_task"] == pytest.approx(0.006 / 0.9)
    # all charges per million delivered output tokens: 0.006 per task over 1,000 output tokens
    # (input tokens included, as a GPU-hour offer's figure carries its prefill)
    assert c["cost_per_mtok"] == pytest.approx(6.0)
    assert c["monthly_spend"] == pytest.approx(0.006 / 0.9 * 4e7)
    for key in (
        "rent",
        "fees",
        "financing",
        "ops",
        "software",
        "full",
        "throughput",
        "utilization",
        "fill",
        "successful_tasks_per_gpu_hour",
        "gpus_needed",
    ):
        assert math.isnan(c[key]), key


def test_per_token_fees_and_fixed_staff_spread_over_tasks():
    jobs = staffing(release_validation=(0.4, 2.0), capacity_planning=(0.2, 3.0), serving_stack=(2.0, 4.0))
    c = one(
        token_row(
            fees_once=12000.0,
            fees_monthly=2000.0,
            fees_per_tb_month=10.0 * 100,
            owners={"release_validation": "customer", "capacity_planning": "shared"},
        ),
        cost_model=model(tasks_per_month=4e7, jobs=jobs),
    )
    tokens = 0.006 / 0.9
    fees = (12000 / 12 + 2000 + 1000) / 4e7  # 4,000 a month over 40M tasks = 0.0001
    # fixed staff only (no GPUs to scale with): 0.4 customer + 0.5 x 0.2 shared = 0.5 FTE;
    # serving_stack is the provider's. 0.5 x 219,000 / 12 = 9,125 a month over 40M tasks.
    staff = 0.5 * 219000 / 12 / 4e7
    assert c["cost_per_task"] == pytest.approx(tokens + fees + staff)
    assert c["cost_per_task"] == pytest.approx(0.006994792, rel=1e-6)
    assert c["monthly_spend"] == pytest.approx((tokens + fees + staff) * 4e7)


def test_per_token_without_tasks_per_month_spreads_nothing():
    # The design is silent; the code leaves fees and staff out (and the evaluation adds a note).
    c = one(token_row(fees_monthly=2000.0, owners={"release_validation": "customer"}))
    assert c["cost_per_task"] == pytest.approx(0.006 / 0.9)
    assert math.isnan(c["monthly_spend"])


def test_per_token_in_euros():
    c = one(token_row(fx=1.1), cost_model=model(tasks_per_month=4e7))
    assert c["cost_per_task"] == pytest.approx(0.006 * 1.1 / 0.9)
    assert c["cost_per_mtok"] == pytest.approx(6.6)  # 0.006 x 1.1 per 1,000 output tokens


def test_per_token_offer_file(data_dir):
    m = metrics_of(data_dir / "offer_kinds", "tokens")
    # offer_kinds/tokens.yaml: 0.50 / 2.00 per M tokens; once 12,000 over 12 months, 2,000 a month,
    # 10/TB x 100 TB a month; release_validation customer (0.4 FTE fixed), capacity_planning
    # shared (0.5 x 0.2 FTE fixed); 40M tasks a month.
    expected = (
        (8000 * 0.5 + 1000 * 2.0) / 1e6 / 0.9
        + (12000 / 12 + 2000 + 10 * 100) / 4e7
        + (0.4 + 0.5 * 0.2) * 219000 / 12 / 4e7
    )
    assert m["point_cost_per_task"] == pytest.approx(expected)
    # per delivered output token, expected: the point's figure x the ratio the draws add
    assert m["cost_per_mtok"] == pytest.approx(expected * 0.9 / 1000 * 1e6 * m["expected_to_point_ratio"])
    assert m["monthly_spend"] == pytest.approx(expected * 4e7)
    assert m["success_rate"] == pytest.approx(0.9)
    for key in (
        "rent",
        "fees",
        "financing",
        "ops",
        "software",
        "full",
        "throughput",
        "fill",
        "successful_tasks_per_gpu_hour",
        "gpus_needed",
    ):
        assert m[key] is None, key


def test_owned_offer_file(data_dir):
    m = metrics_of(data_dir / "offer_kinds", "owned")
    rent = 43800 * (0.1 / (1 - 1.1**-5)) / 8760 + 1.0 * 1.5 * 0.10 + 146 * 1.0 / 730
    # every job customer: hardware 1 + 0.2, serving 2 + 0.4, release 0.4 + 0.2, capacity 0.2 = 4.4 FTE
    ops = 4.4 * 219000 / (100 * 8760)
    assert m["rent"] == pytest.approx(rent)
    assert m["financing"] == 0.0  # prepay_fraction 0.5, but capital is in the CRF
    assert m["ops"] == pytest.approx(ops)
    assert m["ops"] == pytest.approx(1.1)
    assert m["software"] == pytest.approx(0.05)
    assert m["full"] == pytest.approx(rent + 1.1 + 0.05)
    # 746.80704 x DELIVERY_MEAN: availability our host 0.98 x our operating jobs 0.98, availability and utilization
    # each x the mean of its factor; the cost per task does not move (fill x c = 4e7 / (730 x 100) whatever c is)
    c = 300 * 3600 / 1000 * 0.98 * 0.98 * 0.9 * 0.8 * DELIVERY_MEAN
    assert m["gpus_needed"] == pytest.approx(4e7 / (c * 730))  # 73.4 of 100 committed
    assert m["fill"] == pytest.approx(4e7 / (c * 730) / 100)
    assert m["point_cost_per_task"] == pytest.approx((rent + 1.15) / (c * 4e7 / (c * 730) / 100))


# --- the design's consequences --------------------------------------------------------------------


def test_throughput_200_vs_300_is_exactly_1_5x_when_fully_used():
    slow, fast = costs(row(throughput=200.0), row(throughput=300.0))
    assert slow["cost_per_task"] / fast["cost_per_task"] == pytest.approx(1.5, rel=1e-12)
    # Fully used by demand too: each needs more than its 100 committed GPUs, within max_gpus.
    demand = model(tasks_per_month=C_ROUND * 730 * 300)
    slow, fast = costs(
        demand_row(throughput=200.0, max_gpus=1000), demand_row(throughput=300.0, max_gpus=1000), cost_model=demand
    )
    assert slow["fill"] == fast["fill"] == 1.0
    assert slow["cost_per_task"] / fast["cost_per_task"] == pytest.approx(1.5, rel=1e-12)


def test_idle_commitment_raises_cost_per_task_by_the_idle_share():
    # Demand needs 50 GPUs. Provider-run, no fees: full is 4.00 whatever the commitment.
    demand = model(tasks_per_month=C_ROUND * 730 * 50)
    exact, idle = costs(demand_row(gpus=50, max_gpus=200), demand_row(gpus=80, max_gpus=200), cost_model=demand)
    assert exact["fill"] == pytest.approx(1.0)
    assert idle["fill"] == pytest.approx(50 / 80)
    assert exact["full"] == idle["full"] == pytest.approx(4.0)
    # 30 of 80 GPUs idle: cost per task / (1 - 30/80)
    assert idle["cost_per_task"] == pytest.approx(exact["cost_per_task"] / (1 - 30 / 80), rel=1e-12)
    assert idle["cost_per_task"] == pytest.approx(4.0 / (648 * 50 / 80))


def test_offers_are_costed_independently():
    alone = one(row(gpu_hour=3.0, throughput=250.0))
    together = costs(row(gpu_hour=3.0, throughput=250.0), owned_row(), token_row())[0]
    assert together == pytest.approx(alone, nan_ok=True)


# --- per-token offers: cached input ---------------------------------------------------------------


def cached_model(share: float) -> CostModel:
    workload = Workload(
        input_tokens=8000,
        output_tokens=1000,
        interactivity=100,
        success_rate=0.9,
        min_success_rate=0.8,
        utilization=0.8,
        tasks_per_month=4e7,
        cached_input_share=share,
    )
    return CostModel(workload, Assumptions(fte_cost_year=219000, jobs=STAFF))


def test_cached_input_tokens_are_billed_at_the_cached_price():
    c = one(token_row(per_mtok_cached_input=0.05), cost_model=cached_model(0.6))
    # input: 8,000 x (0.4 x 0.50 + 0.6 x 0.05) = 8,000 x 0.23 = 1,840 per M; output 1,000 x 2.00 = 2,000 per M
    # (1,840 + 2,000) / 1e6 = 0.00384 per task billed, / 0.9 success
    assert c["cost_per_task"] == pytest.approx(0.00384 / 0.9)
    # all charges per million delivered output tokens: 0.00384 over 1,000 output tokens
    assert c["cost_per_mtok"] == pytest.approx(3.84)


def test_cached_share_without_a_cached_price_bills_the_input_price():
    # no cached_input price: every input token at 0.50, as without a cache: (4,000 + 2,000) / 1e6
    c = one(token_row(), cost_model=cached_model(0.6))
    assert c["cost_per_task"] == pytest.approx(0.006 / 0.9)


def test_cached_input_leaves_gpu_hour_offers_alone():
    plain = one(row(), cost_model=cached_model(0.0))
    cached = one(row(per_mtok_cached_input=0.05), cost_model=cached_model(0.6))
    # the same GPU-hour row and demand: the cache share and price do not enter a GPU-hour cost
    assert cached["cost_per_task"] == pytest.approx(plain["cost_per_task"], rel=1e-12)
    assert cached["full"] == pytest.approx(plain["full"], rel=1e-12)


def test_an_escalator_ranks_on_the_term_average_rent():
    """4.00 with +3% a year over 24 months averages (12 x 4.00 + 12 x 4.12) / 24 = 4.06 (escalation 1.015), so
    it costs more than a flat 4.05 with everything else equal: the list price alone would rank it first."""
    escalated, flat = costs(row(gpu_hour=4.00, escalation=1.015), row(gpu_hour=4.05, escalation=1.0))
    assert (escalated["list_price"], escalated["rent_today"], escalated["rent"]) == (
        pytest.approx(4.00),
        pytest.approx(4.00),
        pytest.approx(4.06),
    )
    assert flat["rent"] == pytest.approx(4.05)
    # the same GPUs, fees and throughput: the cost per task differs by the rent and its financing only
    assert escalated["cost_per_task"] > flat["cost_per_task"]
    assert escalated["full"] - flat["full"] == pytest.approx((4.06 - 4.05) * (1 + escalated["financing"] / 4.06))


@pytest.mark.parametrize("workspace", ["offer_kinds", "real_offers"])
def test_what_a_gpu_hour_delivers_asked_for_alone_is_the_whole_models_figure(data_dir, workspace):
    """The gates' odds ask for availability and the GPUs needed over every draw, and cost_arrays then forms no price
    (DELIVERY_OUTPUTS): on every pricing kind and on drawn factors that move availability, utilization and the
    demand, each figure is the one the whole model gives (the second method: every output formed)."""
    import numpy as np

    from procure.analysis.evaluate import evaluate_with_inputs
    from procure.model.costing import DELIVERY_OUTPUTS, Variation, cost_arrays

    _, inputs = evaluate_with_inputs(load_workspace(data_dir / workspace))
    n = len(inputs.offers)
    rng = np.random.default_rng(7)
    demand = inputs.model.workload.tasks_per_month
    drawn = Variation(
        availability_factor=rng.uniform(0.9, 1.0, (50, n)),
        utilization=inputs.model.workload.utilization * rng.uniform(0.7, 1.1, (50, 1)),
        tasks_per_month=None if demand is None else demand * rng.uniform(0.5, 2.0, (50, 1)),
    )
    whole = cost_arrays(inputs.columns, inputs.model, drawn)
    for only in (("availability", "gpus_needed"), tuple(sorted(DELIVERY_OUTPUTS))):
        alone = cost_arrays(inputs.columns, inputs.model, drawn, only=only)
        assert set(alone) == set(only)
        for key in only:
            np.testing.assert_array_equal(alone[key], whole[key], err_msg=key)
