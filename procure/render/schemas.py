"""The JSON Schema of every document procure reads or writes, for `procure schema NAME`.

Inputs: offer, grade, workspace (the YAML files). Outputs: one per `--format json` document, each
in the envelope of envelope.py (schema_version, tool, command, as_of, inputs) beside its own fields:
evaluation (compare, evaluate), validation (validate), grading (grade), grades-update, rate, whatif,
price-to-win (whatif --price-to-win), position, index (index build), hedge, sensitivity, history, diff,
reevaluate, cashflow, plan, scorecard, claims (scorecard --claim).

The output models are built here from the models the commands dump, so a schema cannot drift from
what is written. Heavy modules are imported only when a schema is asked for.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from procure.model.units import PerThousand

INPUT_SCHEMAS = ("offer", "grade", "workspace")
OUTPUT_SCHEMAS = (
    "evaluation",
    "validation",
    "grading",
    "grades-update",
    "rate",
    "whatif",
    "price-to-win",
    "position",
    "index",
    "hedge",
    "sensitivity",
    "history",
    "diff",
    "reevaluate",
    "cashflow",
    "plan",
    "scorecard",
    "claims",
    "decision",
)
# The command whose --format json writes each output document.
WRITTEN_BY = {
    "evaluation": "compare, evaluate",
    "validation": "validate",
    "grading": "grade",
    "grades-update": "grades update",
    "rate": "rate",
    "whatif": "whatif",
    "price-to-win": "whatif --price-to-win",
    "position": "position",
    "index": "index build",
    "hedge": "hedge",
    "sensitivity": "sensitivity",
    "history": "history",
    "diff": "diff",
    "reevaluate": "reevaluate",
    "cashflow": "cashflow",
    "decision": "decide",
    "plan": "plan",
    "scorecard": "scorecard",
    "claims": "scorecard --claim",
}
# `procure schema NAME` also takes the name of the command that writes a document (schema compare).
BY_COMMAND = {
    "compare": "evaluation",
    "evaluate": "evaluation",
    "validate": "validation",
    "grades": "grades-update",
    "index-build": "index",
}


class InputHash(BaseModel):
    path: str
    sha256: str


class Envelope(BaseModel):
    """What every JSON output carries at its top level."""

    schema_version: str = Field(
        description="this document's schema version: a renamed or removed field bumps the major (2), added fields the "
        "minor (1.1)"
    )
    tool: str = Field(description="procure and its version")
    command: str = Field(description="the command that wrote it")
    as_of: date | None = Field(
        description="the evaluation date (diff: the head evaluation's); null for grades update, which has none, and "
        "for index build and history without --as-of"
    )
    inputs: list[InputHash] = Field(description="every input file read, relative to the workspace, with its SHA-256")


class RatedOffer(BaseModel):
    id: str
    vendor: str
    kind: str
    rated: bool
    note: str
    tier: str | None
    score: float | None
    percentile: float | None
    categories: dict[str, float]
    critical_failures: list[str]
    published_tier: str | None
    disagrees: bool
    reliability_factor: float | None
    reliability_source: str
    operational_score: float | None
    tier_note: str | None
    unanswered: list[str]


class CashflowOffer(PerThousand):
    id: str
    rank: int | None
    total_commitment: float | None
    total_cost: float | None
    npv_cost: float | None
    horizon_cost_per_task: float | None
    cost_per_task: float | None
    cashflow: Any = Field(description="the offer's months and totals (see the Evaluation's offers[].cashflow)")


def _evaluation() -> Any:
    from procure.analysis.evaluate import Evaluation

    return Evaluation


def _rate() -> Any:
    class RatingDocument(Envelope):
        method: str
        offers: list[RatedOffer]

    return RatingDocument


def _price_to_win() -> Any:
    from procure.analysis.whatif import PriceToWin

    class PriceToWinDocument(Envelope):
        currency: str
        offers: list[PriceToWin]

    return PriceToWinDocument


def _diff() -> Any:
    from pydantic import create_model

    from procure.analysis.differences import Diff

    # Diff's own fields, and what diff_json adds (new_cheapest is a property of Diff: a field here)
    fields: dict[str, Any] = {k: (f.annotation, f) for k, f in Diff.model_fields.items()}
    fields["new_cheapest"] = (bool, Field(description="the top offer changed"))
    fields["changed"] = (bool, Field(description="anything changed but the dates"))
    return create_model("DiffDocument", __base__=Envelope, **fields)


def _reevaluate() -> Any:
    from procure.analysis.differences import Breach
    from procure.analysis.history import FirstRun

    DiffDocument: Any = _diff()

    class ReevaluateDocument(DiffDocument):
        breached: list[Breach]
        saved_run: int | None = Field(
            description="the run saved (null when a breach kept the baseline, and with --baseline FILE)"
        )
        baseline_run: int | None = Field(description="the saved run compared with (null with --baseline FILE)")
        baseline_file: str | None = Field(
            description="--baseline FILE: the Evaluation JSON compared with (rewritten by --accept), else null"
        )

    class FirstReevaluation(FirstRun, Envelope):  # type: ignore[misc]  # the envelope's fields first
        pass

    return ReevaluateDocument | FirstReevaluation


def _cashflow() -> Any:
    class CashflowDocument(Envelope):
        currency: str
        horizon_months: int | None
        rank_by: str
        offers: list[CashflowOffer]

    return CashflowDocument


def _claims() -> Any:
    from procure.analysis.claims import VendorClaims

    class ClaimsDocument(Envelope):
        vendors: list[VendorClaims] = Field(
            description="per signed vendor with evidence, the SLA credit claims of the months shown"
        )

    return ClaimsDocument


# The documents that are one analysis's model in the envelope: name -> (module, model, the document's class, whether
# the envelope's fields come first, as those documents write them). The model is imported when its schema is asked for.
ENVELOPED: dict[str, tuple[str, str, str, bool]] = {
    "validation": ("procure.analysis.usecases.checks", "Validation", "ValidationDocument", True),
    "grading": ("procure.analysis.usecases.checks", "Grading", "GradingDocument", True),
    "grades-update": ("procure.io.grades", "GradesUpdate", "GradesUpdateDocument", True),
    "whatif": ("procure.analysis.whatif", "WhatIf", "WhatIfDocument", False),
    "position": ("procure.analysis.position", "Position", "PositionDocument", False),
    "index": ("procure.analysis.market", "IndexBuild", "IndexDocument", False),
    "hedge": ("procure.analysis.hedging", "HedgePlan", "HedgeDocument", False),
    "sensitivity": ("procure.analysis.sensitivity", "Sensitivity", "SensitivityDocument", False),
    "history": ("procure.analysis.history", "History", "HistoryDocument", True),
    "plan": ("procure.analysis.plan", "PlanResult", "PlanDocument", False),
    "scorecard": ("procure.analysis.scorecard", "ScorecardResult", "ScorecardDocument", False),
    "decision": ("procure.analysis.decision_record", "DecisionRecord", "DecisionDocument", True),
}


def _enveloped(module: str, model: str, document: str, envelope_first: bool) -> Any:
    """The document `document`: the model `model` of `module` with the envelope's fields (pydantic orders the fields
    of the last base first)."""
    import importlib

    from pydantic import create_model

    own = getattr(importlib.import_module(module), model)
    return create_model(document, __base__=(own, Envelope) if envelope_first else (Envelope, own))


# The other documents, each made by its own function.
OWN_MODELS: dict[str, Callable[[], Any]] = {
    "evaluation": _evaluation,
    "rate": _rate,
    "price-to-win": _price_to_win,
    "diff": _diff,
    "reevaluate": _reevaluate,
    "cashflow": _cashflow,
    "claims": _claims,
}
# Each output document's name -> its pydantic model (or union), made when asked for: the models of the analyses
# import their modules, which `procure schema` alone needs. A new document is one entry in ENVELOPED or OWN_MODELS and
# one in OUTPUT_SCHEMAS.
OUTPUT_MODELS: dict[str, Callable[[], Any]] = {
    name: OWN_MODELS.get(name) or functools.partial(_enveloped, *ENVELOPED[name]) for name in OUTPUT_SCHEMAS
}


def _output_model(name: str) -> Any:
    """The pydantic model (or union) of one output document (KeyError for another name)."""
    return OUTPUT_MODELS[name]()


def output_adapter(name: str) -> Any:
    """A TypeAdapter validating one output document (the tests check every command's output with it)."""
    from pydantic import TypeAdapter

    return TypeAdapter(_output_model(name))


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of an input file (offer, grade, workspace) or of an output document."""
    if name in INPUT_SCHEMAS:
        from procure.model.inputs import SCHEMAS

        return SCHEMAS[name].model_json_schema()
    from procure.model.units import models_in, schema_companions

    model = _output_model(name)
    schema = schema_companions(output_adapter(name).json_schema(mode="serialization"), models_in(model))
    schema.setdefault("description", f"Written by `procure {WRITTEN_BY[name]} --format json`.")
    return schema


def schema_names() -> list[str]:
    """Every name `procure schema NAME` takes: the inputs, the output documents and the commands that write them."""
    return [*INPUT_SCHEMAS, *OUTPUT_SCHEMAS, *BY_COMMAND]


# `procure schema output NAME`: a document's name, or the command that writes it (its words joined by "-": grades
# update is grades-update, whatif --price-to-win is whatif-price-to-win); an input's name never stands for it.
OUTPUT_BY_COMMAND = {
    **BY_COMMAND,
    "grade": "grading",
    "grades-update": "grades-update",
    "index-build": "index",
    "whatif-price-to-win": "price-to-win",
    "scorecard-claim": "claims",
}
# `procure schema input NAME`: the file's kind, or the file or folder it lives in.
INPUT_BY_FILE = {"procure.yaml": "workspace", "offers": "offer", "grades": "grade"}
KINDS = ("input", "output")


def schema_of(kind: str, name: str) -> str:
    """The JSON Schema of input file `name` (kind "input") or of the output document of command or document `name`
    (kind "output"), as JSON text; an unknown kind or name is a problem with "did you mean"."""
    import json

    from procure.errors import InputError, unknown_name

    if kind not in KINDS:
        raise InputError([unknown_name("kind of schema", kind, KINDS, "schema", "KIND")])
    if kind == "input":
        known = {**{n: n for n in INPUT_SCHEMAS}, **INPUT_BY_FILE}
    else:
        known = {**{n: n for n in OUTPUT_SCHEMAS}, **OUTPUT_BY_COMMAND}
    if name not in known:
        raise InputError([unknown_name(f"{kind} schema", name, known, "schema", "NAME")])
    return json.dumps(json_schema(known[name]), indent=2) + "\n"


def schema_named(name: str) -> str:
    """The JSON Schema of `name` (an input, an output document or the command that writes it) as JSON text; an
    unknown name is a problem with "did you mean"."""
    import json

    from procure.errors import InputError, unknown_name

    known = schema_names()
    if name not in known:
        raise InputError([unknown_name("schema", name, known, "schema", "NAME")])
    return json.dumps(json_schema(BY_COMMAND.get(name, name)), indent=2) + "\n"
