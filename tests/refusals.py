"""Bad input refused in process, at the reader or the use case that reads it.

A command turns the InputError a reader raises into one line per problem on standard error, exit code 2, no
traceback and nothing written (procure/cli/__init__.py); each family of bad input keeps one test of that at the
command line. The other cases are checked here, on the problems themselves: each `file:line: field: message` as
the command prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def refused(call: Callable[[], Any], *needles: str) -> str:
    """`call()` raises InputError; each needle is in its problems' lines (returned, one line each)."""
    from procure.errors import InputError

    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.problems, "an InputError without a problem"
    text = "\n".join(str(problem) for problem in caught.value.problems)
    for needle in needles:
        assert needle in text, (needle, text[-2000:])
    return text


def validate(ws: Path, as_of: str | None = None) -> Callable[[], Any]:
    """`procure validate -w WS [--as-of DATE]` at its use case (procure/analysis/usecases/checks.py validation)."""
    from datetime import date

    from procure.analysis.usecases import validation

    return lambda: validation(Path(ws), date.fromisoformat(as_of) if as_of else None)


def compare(ws: Path, as_of: str | None = None, **options: Any) -> Callable[[], Any]:
    """`procure compare -w WS` at its use case (procure/analysis/usecases/compare.py comparison)."""
    from datetime import date

    from procure.analysis.usecases import comparison

    return lambda: comparison(Path(ws), date.fromisoformat(as_of) if as_of else None, **options)


def returns_or_refuses(call: Callable[[], Any]) -> Any:
    """A safe result either way: what `call()` returns, or None when it raises InputError (exit 2 at the command
    line, with its problems); any other exception (a traceback at the command line) fails the test."""
    from procure.errors import InputError

    try:
        return call()
    except InputError as exc:
        assert exc.problems, "an InputError without a problem"
        return None
