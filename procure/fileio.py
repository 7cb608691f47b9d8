"""Writing outputs: atomically, into folders created on demand, never over an input."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from procure.errors import InputError, Problem


# The workspace's input files, registered when a workspace is loaded: outputs never replace them.
PROTECTED: set[Path] = set()


def protect(paths: list[Path]) -> None:
    PROTECTED.update(p.resolve() for p in paths)


def write_atomic(path: Path, data: str | bytes, replace_inputs: bool = False) -> None:
    """Write to a temporary file beside `path`, then rename: an interrupted run leaves no partial file.

    An input of the loaded workspace is never overwritten (importers that replace offer or curve
    files on purpose pass `replace_inputs`), nor is anything that is not a regular file.
    """
    path = Path(path)
    if not replace_inputs and path.resolve() in PROTECTED:
        raise InputError([Problem(str(path), None, "--out", "is an input of the workspace: choose another file, it was left alone")])
    if path.exists() and not path.is_dir() and not path.is_file():
        raise InputError([Problem(str(path), None, "--out", "is not a regular file (a device or a pipe): choose a file name")])
    payload = data.encode("utf-8") if isinstance(data, str) else data
    for parent in (path.parent, *path.parent.parents):
        if parent.exists() and not parent.is_dir():
            raise InputError([Problem(str(path), None, "--out", f"cannot write here: {parent} is a file, not a folder")])
    if path.is_dir():
        raise InputError([Problem(str(path), None, "--out", "is a folder: give a file name")])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError([Problem(str(path), None, "--out", f"cannot write here: {exc.strerror or exc}")]) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError([Problem(str(path), None, "--out", f"cannot write here: {exc.strerror or exc}")]) from None
        raise


STALE_SECONDS = 600


def _remove_stale_temporaries(path: Path) -> None:
    """A run killed outright (SIGKILL) cannot remove its temporary file: the next write of the same
    file removes such leftovers once they are clearly abandoned (older than ten minutes)."""
    import time

    now = time.time()
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if now - leftover.stat().st_mtime > STALE_SECONDS:
                leftover.unlink()
        except OSError:
            pass
