"""The offer kinds: one module per way an offer is priced, each declaring its `pricing` block, its checks, its
cost columns and formulas, its what-if price scaling and its workbook formula (docs/architecture.md, "Adding an
offer kind"). The rest of procure asks the registry: `KINDS`, `kind_of(pricing)`, `kind_named(basis)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from procure.model.kinds import gpu_hour, index_linked, owned, per_token, take_or_pay
from procure.model.kinds.base import Kind

if TYPE_CHECKING:
    from procure.model.inputs import Pricing

# In the order messages list them; gpu_hour first: it is what an offer without another kind is priced by.
KINDS: tuple[Kind, ...] = (gpu_hour.KIND, index_linked.KIND, per_token.KIND, owned.KIND, take_or_pay.KIND)
GPU_HOUR = gpu_hour.KIND


def kind_of(pricing: Pricing) -> Kind:
    """The kind an offer's pricing states (a GPU-hour price, or nothing but a burst price: GPU-hour)."""
    return next((kind for kind in KINDS if kind is not GPU_HOUR and kind.selected(pricing)), GPU_HOUR)


def kind_named(name: str) -> Kind:
    """The kind of a cost-model `basis` value."""
    return next(kind for kind in KINDS if kind.name == name)


def stated_kinds(pricing: Pricing) -> list[Kind]:
    """Every kind whose field the pricing states (exactly one is valid)."""
    return [kind for kind in KINDS if kind.selected(pricing)]


def join(words: list[str], last: str) -> str:
    """'a, b or c' / 'a and b'."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


__all__ = ["GPU_HOUR", "KINDS", "Kind", "join", "kind_named", "kind_of", "stated_kinds"]
