"""The environment variables procure heeds, as one object (the pattern of httpie's `Environment`): the command
line reads the process's variables once (procure/cli `_Group.invoke`; the console entry procure/front.py for the
result cache it answers from before the command line loads) and hands this object down. Nothing below the
command line reads os.environ: a layer that needs a variable asks its `Environment`, given as an argument where
the command calls it, else the one the running command made `current()` (the caches' folder, deep in a solve;
the report's date, deep in a document). Without a command (procure used as a library) it is empty: defaults."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# A command still working after this many seconds shows a spinner on a terminal's standard error.
PROGRESS_AFTER = 1.5


@dataclass(frozen=True)
class Environment:
    """The variables procure heeds, each read through one property (docs/commands.md, "Environment variables")."""

    variables: Mapping[str, str] = field(default_factory=dict)

    def items(self) -> list[tuple[str, str]]:
        """Every variable, sorted: what a kept answer depends on (procure/io/resultcache.py)."""
        return sorted(self.variables.items())

    @property
    def cache_folder(self) -> Path | None:
        """Where the caches live (PROCURE_CACHE_DIR, else XDG_CACHE_HOME/procure), or None when set empty: off."""
        chosen = self.variables.get("PROCURE_CACHE_DIR")
        if chosen is not None:
            return Path(chosen).expanduser() if chosen.strip() else None
        base = self.variables.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "procure"

    @property
    def state_folder(self) -> Path:
        """procure's state (XDG_STATE_HOME/procure): the caches' key lives there, never in the cache folder."""
        base = self.variables.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(base) / "procure"

    @property
    def source_date_epoch(self) -> str | None:
        """SOURCE_DATE_EPOCH as written (reproducible documents), checked where it is used."""
        return self.variables.get("SOURCE_DATE_EPOCH")

    @property
    def progress_after(self) -> float:
        """PROCURE_PROGRESS_AFTER: seconds before a spinner shows (1.5 when unset or not a number)."""
        try:
            return max(0.0, float(self.variables.get("PROCURE_PROGRESS_AFTER", str(PROGRESS_AFTER))))
        except ValueError:
            return PROGRESS_AFTER

    @property
    def forces_terminal(self) -> bool:
        """TTY_COMPATIBLE or FORCE_COLOR set: rich treats standard error as a terminal (rich.console.Console)."""
        return bool({"TTY_COMPATIBLE", "FORCE_COLOR"} & set(self.variables))

    @property
    def width_asked(self) -> bool:
        """COLUMNS set: a table fits that width even in a pipe."""
        return "COLUMNS" in self.variables

    @property
    def lines(self) -> str | None:
        """LINES as written: the screen's height when set."""
        return self.variables.get("LINES")


_current: list[Environment] = [Environment()]


def current() -> Environment:
    """The running command's environment; an empty one outside a command."""
    return _current[-1]


@contextlib.contextmanager
def using(environment: Environment) -> Iterator[Environment]:
    """`environment` is current() while the block runs (a command, or a test), the one before it after."""
    _current.append(environment)
    try:
        yield environment
    finally:
        _current.pop()
