"""The board's words shared by the memo's parts (procure/render/board.py, board_plan.py, board_risks.py): a pricing
basis, what an offer's throughput rests on, its operator's tier, a cost per 1,000 tasks, a list of vendors."""

from __future__ import annotations

from procure.analysis.record import OfferRecord
from procure.model.kinds import Kind, kind_named
from procure.model.units import per_thousand
from procure.render.formats import clip


def offer_kind(record: OfferRecord) -> Kind:
    return kind_named(record.pricing_basis)


def basis_words(basis: str) -> str:
    """The board's words for a pricing basis: its kind's, else the kind's label."""
    kind = kind_named(basis)
    return kind.board_words or kind.label


# How throughput between two measured speeds is read, in the board's words (assumptions.interpolation).
READING_WORDS = {
    "linear": "on a straight line between the two nearest measured speeds",
    "log": "on a straight line on a log scale of speed",
    "step": "as the nearest faster measured speed's figure",
    "monotone": "on a smooth curve through the measured speeds",
}


EVIDENCE_WORDS = {"measured": "measured", "vendor_claim": "vendor claim", None: "reference curve"}


def per_k(value: float | None) -> str:
    return "—" if value is None else f"{per_thousand(value):,.2f}"


def operator_words(record: OfferRecord) -> str:
    """The tier we compute from the operator's checklist evidence, and a published tier beside it."""
    rating = record.rating
    published = rating.published_tier.capitalize() if rating.published_tier else None
    if not rating.rated:
        if record.operated_by_us:
            return "we operate it"
        return f"none; published {published}" if published else "not rated (no evidence)"
    tier = (rating.tier or "no tier").capitalize()  # rated, but its evidence earns no tier
    return f"{tier}; published {published}" if published else f"{tier}; none published"


def evidence_words(record: OfferRecord) -> str:
    """What an offer's throughput rests on: the curve's source, or for a per-token offer its stated rate limits
    (none stated: said so)."""
    if not offer_kind(record).per_task:
        return EVIDENCE_WORDS.get(record.points_source, "reference curve")
    return "vendor's rate limits" if record.terms.service.rate_limits is not None else "no rate limits stated"


def with_words(vendors: list[str]) -> str:
    names = [clip(v, 40) for v in dict.fromkeys(vendors)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
