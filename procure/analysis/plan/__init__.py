"""The procurement plan: how much to commit, with whom, for how long, under uncertain demand.

A mixed-integer linear program over demand scenarios (sample-average approximation): commitments in
whole nodes per offer, volume/term option and term block (integers), plus pay-as-used sources (an
offer's burst capacity, pure on-demand offers, per-token offers within their rate limits), each
scenario-month one continuous allocation per pay-as-used source. The objective is the expected
present-value cost, plus `plan.cvar_weight` x CVaR of monthly spend in the Rockafellar-Uryasev
linear form (Rockafellar and Uryasev, 2000); `plan.cvar_limit` bounds that CVaR. Solved by SciPy's
`milp` (HiGHS), with the time limit and optimality gap stated in the result.

Every cost figure comes from the Evaluation's cost model: an offer's fixed monthly fees and staff
(`fixed_monthly`) and its cost per GPU-hour that grows with the GPUs (`variable_gpu_hour`);
commitment options and burst prices are priced by the same model on a copy of the offer's inputs.
The reported figures come from dispatching each scenario-month as a buyer would: committed capacity
first, then the cheapest pay-as-used source with room.

The package follows docs/plan.md step by step:
- `candidates`: the usable offers as commitments and pay-as-used sources, from their delivery;
- `bands`: each month's scenarios in demand bands, and the paths the CVaR sees first;
- `program`: the mixed-integer program and its size; `solver`: HiGHS, and the refinement of bands and tail;
- `shortlist`: many offers cut to the ones that matter, then checked against the whole program;
- `dispatch` and `figures`: every scenario-month served as a buyer would, and the figures reported;
- `single`: each offer alone; `frontier`: expected cost against CVaR; `stress`: the plan under changed inputs;
- `make`: the plan for a workspace (`make_plan`); `result`: what it reports; `discount`: present values.

Other modules use `make_plan` and the result's models from here.
"""

from procure.analysis.plan.make import make_plan
from procure.analysis.plan.result import PlanCase, PlanLine, PlanResult

__all__ = ["PlanCase", "PlanLine", "PlanResult", "make_plan"]
