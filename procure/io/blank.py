"""The empty workspace of `procure init DIR`: commented templates and nothing of the example's story.

procure.yaml states the workload, the assumptions and the policy, with every optional section (demand,
plan, hedge, horizon, market) commented out; offers/ is empty, offer-templates/ holds one template per kind of
offer, and offer-template.yaml beside it (the managed cluster's) shows an
offer's fields; grades/ and performance/ are the example's definitions and public reference curves, which
name no vendor. No actuals, no market data, no `market.own` (what we pay today) and no vendor-share cap:
each is the user's to enter. `procure init DIR --example` writes the example instead (procure.io.example).
"""

from __future__ import annotations

from pathlib import Path

from procure.io.files import refuse_to_overwrite, write_atomic

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
  # jobs:                      # staffing per operating job (fte_fixed + fte_per_1000_gpus); `procure schema \
config` lists them

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
"""

# One commented template per kind of offer, each valid as written (procure validate: no problem, no warning).
# `procure init` writes each under offer-templates/ and the managed cluster also as offer-template.yaml.
_HEAD = """\
# An offer: copy this file into offers/ as <id>.yaml, one file per offer, and replace every value with the
# vendor's. `procure schema input offer` lists every field; `procure validate` names any mistake by file, line and
# field. offer-templates/ holds one template per kind: managed-cluster, bare-metal, managed-serving, per-token, owned.
"""
_RESPONSIBILITIES = """\
responsibilities:              # who does each job: provider, shared or customer
  hardware_repair: {hardware_repair}
  firmware_drivers: {firmware_drivers}
  os_patching: {provider}
  fabric_isolation: {provider}
  health_checks: {provider}
  scheduler: {provider}
  storage: {provider}
  monitoring: {provider}
  incident_response: {incident_response}
  serving_stack: {serving_stack}
  release_validation: customer
  capacity_planning: customer
"""


def _responsibilities(provider: str, serving_stack: str = "customer", **jobs: str) -> str:
    roles = {"hardware_repair": provider, "firmware_drivers": provider, "incident_response": "shared"} | jobs
    return _RESPONSIBILITIES.format(provider=provider, serving_stack=serving_stack, **roles)


_GPU_HOUR_PRICING = """\
pricing:
  currency: USD
  billed_per: month            # month: the committed GPUs billed every month of the term; hour, minute or second:
                               # billed for the time they run (on demand)
  gpu_hour: {price}               # list price per GPU-hour
  discount: 0.0
  prepay_fraction: 0.0
  fees:
    - {{name: onboarding, once: 0}}
"""
_DATES = """\
received: 2026-11-30
valid_until: 2027-03-31        # the last day the offer can be signed
region: us-east
gpu: B200
"""

MANAGED_CLUSTER_TEMPLATE = (
    _HEAD
    + """\
# A managed cluster: the provider runs the hardware, the cluster and the scheduler; you run the serving stack.
id: vendor-b200                # unique; the file name without .yaml is a good choice
vendor: Vendor name
"""
    + _DATES
    + """\
gpus: 256                      # GPUs committed
max_gpus: 512                  # the most the vendor can supply
term_months: 12
delivery: 2026-12-15           # the promised date; leave out if none is promised
"""
    + _GPU_HOUR_PRICING.format(price="4.00")
    + """\
service:
  kind: managed_cluster        # managed_serving, managed_cluster, bare_metal, owned
  orchestration: kubernetes
  sla: {availability: 0.995, node_replacement_hours: 24, automatic_credits: false}
  attestations: [soc2_type2]
  tenant_isolation: true
  isolated_monitoring: true
"""
    + _responsibilities("provider")
    + """\
performance:
  reference: b200-dynamo-trt-fp4   # a curve in performance/, or points: [[tok/s per user, tok/s per GPU], ...] measured
contract:
  sla_credits: {rate_per_point: 0.05, cap: 0.25}
  # signed: {date: 2026-04-20, gpus: 256, start: 2026-05-01, end: 2027-04-30}   # a contract already held: the plan \
keeps it
operator:
  published_tier: null         # the ClusterMAX tier if published: platinum, gold, silver, bronze
"""
)

BARE_METAL_TEMPLATE = (
    _HEAD
    + """\
# Bare metal: the provider racks and repairs the servers; you run everything above them (the ops cost carries it).
id: vendor-b200-bm
vendor: Vendor name
"""
    + _DATES
    + """\
gpus: 256
max_gpus: 512
term_months: 36
delivery: 2027-01-10
"""
    + _GPU_HOUR_PRICING.format(price="2.95")
    + """\
service:
  kind: bare_metal
  orchestration: none (customer installs)
  sla: {availability: 0.99, node_replacement_hours: 72, automatic_credits: false}
  attestations: [soc2_type2]
  tenant_isolation: true       # dedicated nodes
  isolated_monitoring: true    # no provider monitoring beyond power and BMC
  health_checks: {active: none, passive: false}
"""
    + _responsibilities("customer", hardware_repair="provider", firmware_drivers="shared", incident_response="customer")
    + """\
performance:
  stack: dynamo-sglang
  reference: b200-dynamo-sglang-fp4   # your team runs the public build as well as the published curve
  quality_pass_rate: 1.0
contract:
  sla_credits: {rate_per_point: 0.05, cap: 0.25}
"""
)

MANAGED_SERVING_TEMPLATE = (
    _HEAD
    + """\
# Managed serving on dedicated GPUs, billed per GPU-hour: the provider runs the serving stack too.
id: vendor-b200-ms
vendor: Vendor name
"""
    + _DATES
    + """\
gpus: 128
max_gpus: 512
term_months: 12
delivery: 2026-12-15
"""
    + _GPU_HOUR_PRICING.format(price="6.40")
    + """\
service:
  kind: managed_serving
  orchestration: managed endpoint
  sla: {availability: 0.999, node_replacement_hours: 4, automatic_credits: true}
  attestations: [soc2_type2]
  tenant_isolation: true
  isolated_monitoring: true
  health_checks: {active: daily, passive: true}
"""
    + _responsibilities("provider", serving_stack="provider")
    + """\
performance:
  stack: dynamo-trt
  reference: b200-dynamo-trt-fp4
  quality_pass_rate: 1.0       # share of your evaluation set that passes on the vendor's model build
contract:
  sla_credits: {rate_per_point: 0.05, cap: 0.25}
"""
)

PER_TOKEN_TEMPLATE = (
    _HEAD
    + """\
# Managed serving billed per million tokens: no GPUs to commit, staff or fill; its rate limits are its capacity.
id: vendor-tokens
vendor: Vendor name
"""
    + _DATES
    + """\
term_months: 12
pricing:
  currency: USD
  per_mtok: {input: 0.90, output: 4.40}   # per million tokens
  fees:
    - {name: private endpoint, monthly: 0}
service:
  kind: managed_serving
  orchestration: managed API
  sla: {availability: 0.995, node_replacement_hours: 8, automatic_credits: true}
  attestations: [soc2_type2]
  tenant_isolation: true
  isolated_monitoring: true
  health_checks: {active: daily, passive: true}
  rate_limits: {requests_per_minute: 12000, output_tokens_per_minute: 15000000}   # as the contract states them
"""
    + _responsibilities("provider", serving_stack="provider", incident_response="provider")
    + """\
performance:
  stack: provider-managed (undisclosed)
  interactivity: 100           # P50 output tok/s per user the vendor states (in the SLA if it is)
  ttft_s: 0.9                  # P50 time to first token at your input length
  quality_pass_rate: 0.98      # share of your evaluation set that passes on the vendor's model
contract:
  sla_credits: {rate_per_point: 0.05, cap: 0.25}
"""
)

OWNED_TEMPLATE = (
    _HEAD
    + """\
# Owning the cluster: capital, power and colocation instead of rent; your team carries every operating job.
id: own-b200
vendor: In-house
"""
    + _DATES
    + """\
gpus: 512
max_gpus: 512
delivery: 2027-04-01
pricing:
  currency: USD
  owned:
    capex_per_gpu: 48000       # all-in: GPU, host and network share
    life_years: 5              # spread at the cost of capital (assumptions)
    power_kw_per_gpu: 1.8
    pue: 1.3
    electricity_kwh: 0.08
    colo_kw_month: 184         # colocation per kW-month, electricity excluded
service:
  kind: owned
  orchestration: kubernetes
  attestations: []             # your own controls: the security gate does not apply to what you run
  tenant_isolation: true
  isolated_monitoring: true
  health_checks: {active: weekly, passive: true}
"""
    + _responsibilities("customer", incident_response="customer")
    + """\
performance:
  stack: dynamo-sglang
  reference: b200-dynamo-sglang-fp4
  quality_pass_rate: 1.0
"""
)

# offer-templates/<name>.yaml, by kind of offer
OFFER_TEMPLATES = {
    "managed-cluster": MANAGED_CLUSTER_TEMPLATE,
    "bare-metal": BARE_METAL_TEMPLATE,
    "managed-serving": MANAGED_SERVING_TEMPLATE,
    "per-token": PER_TOKEN_TEMPLATE,
    "owned": OWNED_TEMPLATE,
}
OFFER_TEMPLATE = MANAGED_CLUSTER_TEMPLATE

# The example's files that carry definitions, not its story: grades and public reference curves.
SHARED_PREFIXES = ("grades/", "performance/")


def blank_files() -> dict[str, bytes | None]:
    """Relative path -> content (None: an empty folder) of the empty workspace."""
    from procure.io.example import EXAMPLE_FILES, example_root

    root = example_root()
    files: dict[str, bytes | None] = {
        "procure.yaml": PROCURE_YAML.encode(),
        "offer-template.yaml": OFFER_TEMPLATE.encode(),
        **{f"offer-templates/{name}.yaml": text.encode() for name, text in OFFER_TEMPLATES.items()},
        "offers": None,
    }
    for name in EXAMPLE_FILES:
        if name.startswith(SHARED_PREFIXES):
            files[name] = (root / name).read_bytes()
    return files


def write_blank(target: Path) -> list[Path]:
    """Write the empty workspace into `target`, refusing a folder that already holds any of its files."""
    files = blank_files()
    refuse_to_overwrite(target, sorted(name for name, data in files.items() if data is not None))
    written = []
    for name, data in sorted(files.items()):
        if data is None:
            (target / name).mkdir(parents=True, exist_ok=True)
            continue
        write_atomic(target / name, data, replace_inputs=True)  # init writes a workspace; clashes were refused above
        written.append(target / name)
    return written
