"""The empty workspace of `procure init DIR`: commented templates and nothing of the example's story.

procure.yaml states the workload, the assumptions and the policy, with every optional section (demand,
plan, hedge, horizon, market) commented out; offers/ is empty and offer-template.yaml beside it shows an
offer's fields; grades/ and performance/ are the example's definitions and public reference curves, which
name no vendor. No actuals, no market data, no `market.own` (what we pay today) and no vendor-share cap:
each is the user's to enter. `procure init DIR --example` writes the example instead (procure.io.example).
"""

from __future__ import annotations

from pathlib import Path

from procure.errors import InputError, Problem
from procure.io.files import write_atomic

PROCURE_YAML = """\
# procure.yaml: what you are buying and how offers are judged. Replace every figure below with yours.
#
#   workload     the task: tokens in and out, the speed each user must see, how often a task succeeds, demand
#   assumptions  your costs: an engineer's year, the staffing of each operating job, cost of capital, currencies
#   policy       what an acceptable offer must be: grades, availability, security, regions, capacity
#
# Put one file per offer in offers/ (offer-template.yaml shows the fields; `procure import --template rfp.xlsx`
# writes a sheet to send to vendors). Grade definitions are in grades/, public reference throughput curves
# (InferenceX, B200) in performance/. Then: procure validate, procure compare, procure report --board.
# `procure init DIR --example` writes a complete example workspace to read beside this one.

currency: USD                  # every amount is converted to this (assumptions.fx)

workload:
  name: my-service
  input_tokens: 8192           # prompt tokens per task
  output_tokens: 1024          # output tokens per task
  interactivity: 100           # output tok/s per user (P50) the service must sustain (= 1000 / TPOT in ms)
  success_rate: 0.97           # share of tasks that meet the quality bar on a correctly run service
  min_success_rate: 0.90       # below this (after an offer's quality pass rate) an offer is not acceptable
  utilization: 0.80            # share of available GPU time that traffic can keep busy (peaks vs. troughs)
  tasks_per_month: 10000000    # your demand today; offers are sized and costed at it

assumptions:
  fte_cost_year: 250000        # fully loaded cost of one infrastructure engineer a year
  shared_weight: 0.5           # a job marked `shared` in an offer costs you half of its staffing
  cost_of_capital: 0.10        # prices prepayments and the capital of an owned cluster
  software_gpu_hour: 0.05      # serving software per GPU-hour, paid by whoever runs the serving stack
  # fx: {EUR: 1.08}            # units of `currency` per 1 unit of each offer currency you receive
  # jobs:                      # staffing per operating job (fte_fixed + fte_per_1000_gpus); `procure schema config` lists them

policy:
  acceptable_grades: [B200-MS, B200-MC, B200-BM, B200-OWN]   # grades you would buy (see grades/)
  min_availability: 0.98       # expected availability (SLA x reliability factor x your own layer) at least this
  min_demand_coverage: 1.0     # max_gpus must cover this share of the GPUs the demand needs
  allowed_regions: null        # or a list, e.g. [us-east, us-west]
  require_attestation_any: [soc2_type2, iso27001]
  require_tenant_isolation: true
  require_isolated_monitoring: true

# Optional sections: uncomment and fill in what you have.
#
# market:                      # procure position; the board memo compares the recommendation with today's cost
#   own:                       # what you pay today per successful task, measured on your current deployment
#     - {cost_per_task: 0.0070, date: 2026-11-30}
#   competitors:
#     - {name: A rival (analyst estimate), cost_per_task: 0.0060, date: 2026-11-30}
#
# demand:                      # procure plan: demand over the planning horizon and how uncertain it is
#   months: 24
#   start: 10000000            # tasks in month 1
#   growth: 0.02               # expected growth per month
#   volatility: 0.30           # lognormal sd of the level after 12 months
#   scenarios: 500
#
# plan:                        # the policy the portfolio must keep (defaults: no vendor-share cap, risk-neutral)
#   max_vendor_share: 0.7      # no vendor above this share of the expected capacity
#   cvar_weight: 0
#
# horizon:                     # procure cashflow / compare --horizon: offers over one horizon
#   months: 36
#
# hedge:                       # procure hedge: needs market/index.csv (date, price) and market/rent.csv
#   horizon_months: 24
#   contract_gpu_hours: 730
"""  # noqa: E501

OFFER_TEMPLATE = """\
# An offer: copy this file into offers/ as <id>.yaml, one file per offer, and replace every value with the
# vendor's. `procure schema offer` lists every field; `procure validate` names any mistake by file, line and field.
id: vendor-b200                # unique; the file name without .yaml is a good choice
vendor: Vendor name
received: 2026-11-30
valid_until: 2027-03-31        # the last day the offer can be signed
region: us-east
gpu: B200
gpus: 256                      # GPUs committed
max_gpus: 512                  # the most the vendor can supply
term_months: 12
delivery: 2026-12-15           # the promised date; leave out if none is promised
pricing:
  currency: USD
  gpu_hour: 4.00               # list price per GPU-hour
  discount: 0.0
  prepay_fraction: 0.0
  fees:
    - {name: onboarding, once: 0}
service:
  kind: managed_cluster        # managed_serving, managed_cluster, bare_metal, owned
  orchestration: kubernetes
  sla: {availability: 0.995, node_replacement_hours: 24, automatic_credits: false}
  attestations: [soc2_type2]
  tenant_isolation: true
  isolated_monitoring: true
responsibilities:              # who does each job: provider, shared or customer
  hardware_repair: provider
  firmware_drivers: provider
  os_patching: provider
  fabric_isolation: provider
  health_checks: provider
  scheduler: provider
  storage: provider
  monitoring: provider
  incident_response: shared
  serving_stack: customer
  release_validation: customer
  capacity_planning: customer
performance:
  reference: b200-dynamo-trt-fp4   # a curve in performance/, or points: [[tok/s per user, tok/s per GPU], ...] measured
contract:
  sla_credits: {rate_per_point: 0.05, cap: 0.25}
  # signed: {date: 2026-04-20, gpus: 256, start: 2026-05-01, end: 2027-04-30}   # a contract already held: the plan keeps it
operator:
  published_tier: null         # the ClusterMAX tier if published: platinum, gold, silver, bronze
"""  # noqa: E501

# The example's files that carry definitions, not its story: grades and public reference curves.
SHARED_PREFIXES = ("grades/", "performance/")


def blank_files() -> dict[str, bytes | None]:
    """Relative path -> content (None: an empty folder) of the empty workspace."""
    from procure.io.example import EXAMPLE_FILES, example_root

    root = example_root()
    files: dict[str, bytes | None] = {
        "procure.yaml": PROCURE_YAML.encode(),
        "offer-template.yaml": OFFER_TEMPLATE.encode(),
        "offers": None,
    }
    for name in EXAMPLE_FILES:
        if name.startswith(SHARED_PREFIXES):
            files[name] = (root / name).read_bytes()
    return files


def write_blank(target: Path) -> list[Path]:
    """Write the empty workspace into `target`, refusing a folder that already holds any of its files."""
    files = blank_files()
    if target.exists() and not target.is_dir():
        raise InputError([Problem(str(target), None, "", "is a file: give a folder for the new workspace")])
    clashes = sorted(name for name, data in files.items() if data is not None and (target / name).exists())
    if clashes:
        raise InputError(
            [
                Problem(
                    str(target / clashes[0]),
                    None,
                    "",
                    f"already exists ({len(clashes)} file(s) would be overwritten): choose an empty folder",
                )
            ]
        )
    written = []
    for name, data in sorted(files.items()):
        if data is None:
            (target / name).mkdir(parents=True, exist_ok=True)
            continue
        write_atomic(target / name, data, replace_inputs=True)  # init writes a workspace; clashes were refused above
        written.append(target / name)
    return written
