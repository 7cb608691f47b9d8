"""The use cases of the commands: each loads the workspace, checks what the command was asked against it,
evaluates and decides, and returns one typed result holding what the command's renderer needs.

The cli parses, calls one of these, renders the result and returns an exit status; these never print. Progress
is reported through a callback: `progress(label, shown)` is a context manager yielding an `advance(done, total)`
callback or None (`shown`: whether the stage is worth a bar at all, e.g. no plan is solved without `demand:`).

One module per subject; every use case is named here too, so `from procure.analysis.usecases import comparison`
finds it wherever it lives.
"""

from procure.analysis.usecases.base import Progress, no_progress, ranks_by_horizon
from procure.analysis.usecases.checks import Grades, Validated, grades, validation
from procure.analysis.usecases.compare import (
    Comparison,
    Evaluated,
    Sensitivities,
    comparison,
    evaluation,
    sensitivities,
)
from procure.analysis.usecases.evidence import Imported, Scorecards, import_evidence, import_performance, scorecards
from procure.analysis.usecases.hedge import Hedging, hedging
from procure.analysis.usecases.market import IndexAsked, Indexed, index_build
from procure.analysis.usecases.plans import CashFlows, Planning, Positioning, cash_flows, planning, positioning
from procure.analysis.usecases.report import Reporting, reporting
from procure.analysis.usecases.whatif import Asked, WhatIfs, what_if

__all__ = [
    "Asked",
    "CashFlows",
    "Comparison",
    "Evaluated",
    "Grades",
    "Hedging",
    "Imported",
    "IndexAsked",
    "Indexed",
    "Planning",
    "Positioning",
    "Progress",
    "Reporting",
    "Scorecards",
    "Sensitivities",
    "Validated",
    "WhatIfs",
    "cash_flows",
    "comparison",
    "evaluation",
    "grades",
    "hedging",
    "import_evidence",
    "import_performance",
    "index_build",
    "no_progress",
    "planning",
    "positioning",
    "ranks_by_horizon",
    "reporting",
    "scorecards",
    "sensitivities",
    "validation",
    "what_if",
]
