"""The field types every input model is built from: strict numbers and a model that forbids unknown keys.

They sit below `inputs.py` and the offer kinds (`kinds/`), which both declare fields with them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic import Strict as _StrictType

# Numbers are strict: YAML's true/false or a quoted "3.95" is an error, never silently 1.0 or 3.95.
Number = Annotated[float, _StrictType()]
Count = Annotated[int, _StrictType()]
Fraction = Annotated[Number, Field(ge=0, le=1)]
PositiveFraction = Annotated[Number, Field(gt=0, le=1)]
Positive = Annotated[Number, Field(gt=0)]
NonNegative = Annotated[Number, Field(ge=0)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)
