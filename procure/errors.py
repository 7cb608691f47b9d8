"""Input problems with their location, collected so that a user sees all of them at once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the input: where it is and what was expected."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        from procure.textsafe import printable  # names and values echoed from outside: never raw to a terminal

        where = self.file if self.line is None else f"{self.file}:{self.line}"
        text = f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        return printable(text)


class InputError(Exception):
    """Raised with every problem found; the CLI prints one line each and exits 2."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def format_field_path(loc: Sequence[str | int]) -> str:
    """('pricing', 'fees', 2, 'once') -> 'pricing.fees[2].once'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.75) -> list[str]:
    """The known names nearest `name`: those it begins or that begin it, else the closest spellings."""
    import difflib

    names = sorted(known)
    low = name.lower()
    near = [n for n in names if low and (n.lower().startswith(low) or low.startswith(n.lower()))][:3]
    return near or difflib.get_close_matches(name, names, n=2, cutoff=cutoff)


def unknown_name(what: str, name: str, known: Iterable[str], file: str, field: str = "") -> Problem:
    """A name that matches none of `what` (an offer, a schema, a run): "did you mean", then every known one."""
    names = sorted(set(known))
    near = did_you_mean(name, names)
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return Problem(file, None, field, f"no {what} '{name}'{hint} (known: {', '.join(names) or 'none'})")


def unknown_offer(offer_id: str, known: Iterable[str], file: str = "offers/", field: str = "") -> Problem:
    """An offer id that matches none: the nearest ids first ("did you mean"), then every known one."""
    return unknown_name("offer with id", offer_id, known, file, field)
