"""One envelope for every JSON output: what wrote it, which command, as of when, from which inputs.

Every `--format json` document is one object whose top level carries `schema_version`, `tool`,
`command`, `as_of` (null where a command has no evaluation date) and `inputs` (each input file's
path and SHA-256), beside the command's own fields. The Evaluation (compare, evaluate) has always
carried these names at its top level; the others take the same places, so that one reader handles
all of them. `procure schema NAME` prints each document's JSON Schema; changing a document's shape
bumps its version here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from typing import Any

from procure import __version__

TOOL = f"procure {__version__}"
ENVELOPE_FIELDS = ("schema_version", "tool", "command", "as_of", "inputs")

# The schema version of each JSON document, by its name in `procure schema NAME` (the Evaluation's,
# written by compare and evaluate, is evaluate.SCHEMA_VERSION). A field renamed or removed, or a
# changed meaning, bumps the major version (1 -> 2); added fields bump the minor (1 -> 1.1): a reader
# of 1 reads 1.1 unchanged. 1.1: every cost per task has its figure per 1,000 tasks beside it (units.py).
# scorecard 2: contracted_gpu_hours is the commitment's GPUs x the month's hours (it was the GPUs today's demand
# bills, so a month billed exactly at the commitment read below 100%). scorecard 3: credits_owed_total and
# breached_months cover the months shown (--months N), not every month; the month of --as-of is partial
# (unscored) and months carry `partial`, the vendor `scored_through`. grading 1.1: valid_until and valid (grade
# --as-of). plan 1.2: each term sheet row's sign_by, the recommendation's deadline_reason and each ask line's
# conditions (plan months are calendar months from the as-of month). reevaluate 1.2: baseline_file (--baseline FILE),
# baseline_run null with it.
VERSIONS: dict[str, str] = {
    "validation": "1",
    "grading": "1.1",
    "grades-update": "1",
    "rate": "1",
    "whatif": "1.1",
    "price-to-win": "1.1",
    "position": "1.1",
    "index": "1",
    "hedge": "1",
    "sensitivity": "1.1",
    "history": "1.1",
    "diff": "1.1",
    "reevaluate": "1.2",
    "cashflow": "1.1",
    "plan": "1.2",
    "scorecard": "3",
    "claims": "1",
    "decision": "1",
}


def _hashes(inputs: Iterable[Any] | None) -> list[dict[str, str]]:
    return [
        {
            "path": i["path"] if isinstance(i, dict) else i.path,
            "sha256": i["sha256"] if isinstance(i, dict) else i.sha256,
        }
        for i in inputs or ()
    ]


def wrap(
    command: str,
    data: dict[str, Any],
    as_of: date | str | None = None,
    inputs: Iterable[Any] | None = None,
    schema: str | None = None,
) -> dict[str, Any]:
    """The command's fields under the envelope's (the envelope first; a field of the data never overrides it).

    `schema` names the document when it is not the command's name (grade writes `grading`).
    """
    head: dict[str, Any] = {
        "schema_version": VERSIONS[schema or command],
        "tool": TOOL,
        "command": command,
        "as_of": str(as_of) if as_of is not None else None,
        "inputs": _hashes(inputs),
    }
    return head | {k: v for k, v in data.items() if k not in head}


def dumps(
    command: str,
    data: dict[str, Any] | str,
    as_of: date | str | None = None,
    inputs: Iterable[Any] | None = None,
    schema: str | None = None,
) -> str:
    """The document as JSON text; `data` may be a JSON object's text (a renderer's output)."""
    fields = json.loads(data) if isinstance(data, str) else data
    return json.dumps(wrap(command, fields, as_of, inputs, schema), indent=2, default=str) + "\n"
