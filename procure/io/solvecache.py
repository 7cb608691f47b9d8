"""Solved plans kept on disk, keyed by what their mixed-integer program is built from. This module stores and
reads entries; the solver and the checks of a kept result against its program are in procure/analysis/milp.py.

`procure plan`, `procure report` and `procure report --board` over one workspace solve the same
program; HiGHS is deterministic, so the second and third solve would only repeat the first (a few
seconds each on the example). The plan's solves are kept under the SHA-256 of everything their program
is built from (`inputs_key`: every input of `build_model`, procure's source, SciPy's version, the
options other than the time limit), so that a kept result is read back without building the program
or importing SciPy; `program_key` keys a program given whole by everything the solver sees (objective,
constraint matrix, bounds, integrality, options, SciPy's version). Either way a changed input is a
different key and can never be served an old plan. Only proven
results are kept: an optimum within the gap, or a proof that the program has no solution (HiGHS's status
2, kept as an entry without a solution: the shortlist check's answer, whose proof is most of a large
plan's time). A time limit or a node limit is never kept.

A kept result is used only when it is authentic: each entry carries an HMAC-SHA256, under a secret
key only this user can read (`cache-key` in $XDG_STATE_HOME/procure, else ~/.local/state/procure,
created with mode 0600 and never inside the cache folder), of the program's key and everything the
entry holds. Anyone else who can write the cache folder (a shared $PROCURE_CACHE_DIR, a restored CI
cache) can therefore not make procure report a plan it did not prove optimal: an entry they wrote,
copied or edited fails the check and the program is solved afresh. An authentic entry is still
checked against the program before it is used (procure/analysis/milp.py).

An entry is read only when it is a regular file no larger than an entry of this program can be, and
each array's declared type and shape are checked against the program before it is read; anything
else (a pipe, a file of strings, a declared shape of 500 M numbers) is skipped and solved afresh.
Eviction keeps the newest entries and removes only procure's own: a name of 64 hexadecimal digits
and `.npz`, holding exactly the arrays an entry holds. The cache is a convenience: a folder that
cannot be read or written, or a key file that is not this user's alone, turns it off silently.

Folder: $PROCURE_CACHE_DIR, else $XDG_CACHE_HOME/procure, else ~/.cache/procure; PROCURE_CACHE_DIR
set to an empty value turns it off.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
import io
import json
import os
import re
import struct
from dataclasses import dataclass
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from procure.io.cachekey import (
    KEY_BYTES,
    _open_regular,
    _read_at_most,
    folder,  # noqa: F401 - the folder this module's docstring names, asked for here
    folder_and_secret,
)

FORMAT = "procure-milp-1"
KEEP = 256  # solutions kept (a few kB each for the example); the oldest beyond this are removed
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.npz")  # how procure names its entries: the program's SHA-256
MEMBERS = ("key.npy", "x.npy", "fun.npy", "mip_gap.npy", "mac.npy")  # the arrays an entry holds, and no other
HEADER_ROOM = 1024  # bytes beyond its numbers an array may take in an entry (its .npy header) or the zip around it


@dataclass(frozen=True)
class Solution:
    """What `solve` reads of scipy's OptimizeResult."""

    x: np.ndarray | None
    status: int
    fun: float | None
    mip_gap: float | None


@dataclass(frozen=True)
class Milp:
    """A mixed-integer program as SciPy's `milp` receives it: minimise c.x with row_lb <= A x <= row_ub, lb <= x <=
    ub, x whole where integrality is 1, under HiGHS's `options`."""

    c: np.ndarray
    A: Any
    row_lb: np.ndarray
    row_ub: np.ndarray
    integrality: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    options: dict[str, object]


def _mac(secret_key: bytes, key: str, x: np.ndarray, fun: float, gap: float) -> bytes:
    """HMAC-SHA256 of an entry: the program it answers and every number it holds."""
    mac = hmac.new(secret_key, FORMAT.encode(), hashlib.sha256)
    mac.update(bytes.fromhex(key))
    mac.update(len(x).to_bytes(8, "little"))
    mac.update(np.ascontiguousarray(x, dtype="<f8").tobytes())
    mac.update(np.array([fun, gap], dtype="<f8").tobytes())
    return mac.digest()


def program_key(p: Milp) -> str:
    """SHA-256 of the program as the solver receives it (the time limit aside: a proven optimum holds whatever it
    was)."""
    import scipy

    csr = p.A.tocsr(copy=True)  # canonical form for the hash, without touching the caller's matrix
    csr.sum_duplicates()
    csr.sort_indices()
    digest = hashlib.sha256()
    kept = {k: v for k, v in sorted(p.options.items()) if k != "time_limit"}
    digest.update(json.dumps([FORMAT, scipy.__version__, list(csr.shape), kept], default=str).encode())
    for array, kind in (
        (p.c, np.float64),
        (csr.data, np.float64),
        (csr.indices, np.int64),
        (csr.indptr, np.int64),
        (p.row_lb, np.float64),
        (p.row_ub, np.float64),
        (p.integrality, np.int64),
        (p.lb, np.float64),
        (p.ub, np.float64),
    ):
        data = np.ascontiguousarray(array, dtype=kind)
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data.tobytes())
    return digest.hexdigest()


INPUTS_FORMAT = "procure-plan-inputs-1"
_SOURCE: list[str] = []  # procure's source digest, computed once a process


def source_digest() -> str:
    """SHA-256 of procure's source, every .py file of the package by name and content: the code that builds a
    program from its inputs is part of what a solution kept under those inputs answers."""
    if not _SOURCE:
        root = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            name, data = path.relative_to(root).as_posix().encode(), path.read_bytes()
            digest.update(len(name).to_bytes(8, "little") + name + len(data).to_bytes(8, "little") + data)
        _SOURCE.append(digest.hexdigest())
    return _SOURCE[0]


def solver_version() -> str:
    """SHA-256 of the installed SciPy's version file (SciPy carries HiGHS), read without importing SciPy."""
    import importlib.util

    spec = importlib.util.find_spec("scipy")
    try:
        return (
            hashlib.sha256((Path(spec.origin).parent / "version.py").read_bytes()).hexdigest()
            if spec and spec.origin
            else ""
        )
    except OSError:
        return ""


def _feed(digest: Any, value: Any, depth: int = 0) -> None:
    """`value` into `digest`, each kind tagged and each length stated, so that two different values never feed
    the same bytes: numbers by their exact binary value, arrays by type, shape and contents, dataclasses and
    pydantic models by class and every field. Anything else is refused (TypeError), never keyed by its repr."""
    if depth > 32:
        raise TypeError("nested too deeply to key")
    kind = type(value)
    if value is None or isinstance(value, (bool, np.bool_)):
        digest.update(b"N" if value is None else (b"T" if value else b"F"))
    elif isinstance(value, (int, np.integer)):
        text = str(int(value)).encode()
        digest.update(b"I" + len(text).to_bytes(8, "little") + text)
    elif isinstance(value, (float, np.floating)):
        digest.update(b"R" + struct.pack("<d", float(value)))
    elif isinstance(value, str):
        text = value.encode("utf-8", "surrogatepass")
        digest.update(b"S" + len(text).to_bytes(8, "little") + text)
    elif isinstance(value, np.ndarray) and not value.dtype.hasobject:
        data = np.ascontiguousarray(value)
        head = _array_head(data.dtype.str, data.shape)
        digest.update(b"A" + len(head).to_bytes(8, "little") + head + data.tobytes())
    elif isinstance(value, (list, tuple, np.ndarray)):
        digest.update(b"L" + len(value).to_bytes(8, "little"))
        for item in value:
            _feed(digest, item, depth + 1)
    elif isinstance(value, dict):
        digest.update(b"D" + len(value).to_bytes(8, "little"))
        for key in sorted(value, key=repr):
            _feed(digest, key, depth + 1)
            _feed(digest, value[key], depth + 1)
    elif isinstance(value, (date, Enum)):
        _feed(
            digest,
            [f"{kind.__module__}.{kind.__qualname__}", value.isoformat() if isinstance(value, date) else value.value],
            depth + 1,
        )
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _feed(
            digest,
            [f"{kind.__module__}.{kind.__qualname__}", {name: getattr(value, name) for name in _field_names(kind)}],
            depth + 1,
        )
    elif isinstance(getattr(kind, "model_fields", None), dict):  # a pydantic model: its class and every field
        _feed(
            digest,
            [f"{kind.__module__}.{kind.__qualname__}", {name: getattr(value, name) for name in kind.model_fields}],
            depth + 1,
        )
    else:
        raise TypeError(f"cannot key a {kind.__qualname__}")


@functools.cache
def _array_head(dtype: str, shape: tuple[int, ...]) -> bytes:
    """An array's type and shape as `_feed` keys them, json.dumps([dtype, list(shape)]), made once per kind of
    array (a plan's key feeds hundreds of arrays of a few shapes: a warm compare's start-up, docs/speed.md)."""
    return json.dumps([dtype, list(shape)]).encode()


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    """A dataclass's fields in order, as dataclasses.fields gives them, looked up once per class."""
    return tuple(f.name for f in dataclasses.fields(kind))


def inputs_key(inputs: object, options: dict[str, object]) -> str:
    """SHA-256 of what a program is built from (`inputs`), procure's source, SciPy's and NumPy's versions and
    the solver's options other than the time limit: the same key, the same program, without building it."""
    digest = hashlib.sha256()
    kept = {k: v for k, v in sorted(options.items()) if k != "time_limit"}
    digest.update(
        json.dumps([INPUTS_FORMAT, solver_version(), np.__version__, source_digest(), kept], default=str).encode()
    )
    _feed(digest, inputs)
    return digest.hexdigest()


INFEASIBLE = 2  # scipy's milp status for a program proven to have no solution


def _expected(size: int) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """Each array of an entry of a program with `size` variables: its type and shape (a proof of
    infeasibility holds an x of no values instead)."""
    return {
        "key.npy": (np.dtype("<U64"), ()),
        "x.npy": (np.dtype("<f8"), (size,)),
        "fun.npy": (np.dtype("<f8"), ()),
        "mip_gap.npy": (np.dtype("<f8"), ()),
        "mac.npy": (np.dtype("u1"), (KEY_BYTES,)),
    }


def _arrays(data: bytes, size: int) -> dict[str, np.ndarray] | None:
    """The arrays of an entry, each read only after its declared type and shape are the program's."""
    import zipfile

    expected = _expected(size)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        if sorted(m.filename for m in members) != sorted(MEMBERS):
            return None
        found: dict[str, np.ndarray] = {}
        for member in members:
            dtype, shape = expected[member.filename]
            length = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
            if member.file_size > length + HEADER_ROOM:
                return None
            with archive.open(member) as stream:
                version = np.lib.format.read_magic(stream)
                if version == (1, 0):
                    declared, fortran, kind = np.lib.format.read_array_header_1_0(stream)
                elif version == (2, 0):
                    declared, fortran, kind = np.lib.format.read_array_header_2_0(stream)
                else:
                    return None
                if member.filename == "x.npy" and tuple(declared) == (0,):
                    shape, length = (0,), 0  # a proof of infeasibility
                if tuple(declared) != shape or kind != dtype or kind.hasobject:
                    return None
                raw = stream.read(length)
            if len(raw) != length:
                return None
            found[member.filename[:-4]] = np.frombuffer(raw, dtype=dtype).reshape(shape)
    return found


def load(key: str, size: int) -> tuple[np.ndarray, float, float | None] | None:
    """The kept solution of the program `key` with `size` variables, when there is an authentic one
    (an x of no values: the program was proven infeasible)."""
    found = folder_and_secret()
    if found is None:
        return None
    where, secret_key = found
    limit = 8 * size + len(MEMBERS) * 2 * HEADER_ROOM  # no entry of this program is larger
    fd = _open_regular(where / f"{key}.npz")
    if fd is None:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            return None
        data = _read_at_most(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    try:
        arrays = _arrays(data, size)
    except Exception:  # noqa: BLE001 - whatever is wrong with a kept entry, the program is solved afresh
        return None
    if arrays is None or str(arrays["key"]) != key:
        return None
    x, fun, gap = arrays["x"].astype(np.float64), float(arrays["fun"]), float(arrays["mip_gap"])
    if not hmac.compare_digest(arrays["mac"].tobytes(), _mac(secret_key, key, x, fun, gap)):
        return None
    return x, fun, (gap if np.isfinite(gap) else None)


def is_entry(path: Path) -> bool:
    """Whether `path` is one of procure's entries: its name, and a zip of exactly an entry's arrays."""
    import zipfile

    if not ENTRY_NAME.fullmatch(path.name):
        return False
    fd = _open_regular(path)
    if fd is None:
        return False
    try:
        with os.fdopen(fd, "rb") as stream, zipfile.ZipFile(stream) as archive:
            return sorted(archive.namelist()) == sorted(MEMBERS)
    except Exception:  # noqa: BLE001 - a file that is not a zip is not ours
        return False


def evict(where: Path) -> None:
    """Keep the newest KEEP entries; remove only procure's own, never another file of the folder."""
    named = []
    with os.scandir(where) as found:
        for item in found:
            if ENTRY_NAME.fullmatch(item.name) and item.is_file(follow_symlinks=False):
                named.append((item.stat(follow_symlinks=False).st_mtime, Path(item.path)))
    if len(named) <= KEEP:
        return
    entries = [path for _, path in sorted(named, reverse=True) if is_entry(path)]
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)


def store(key: str, solution: Solution) -> None:
    """Keep a proven solution or a proof of infeasibility; any failure to write is ignored (the plan was
    solved all the same)."""
    from procure.errors import InputError
    from procure.io.files import write_atomic

    if solution.status == INFEASIBLE and solution.x is None:
        solution = Solution(np.zeros(0), INFEASIBLE, np.nan, None)
    elif solution.status != 0 or solution.x is None or solution.fun is None:
        return
    found = folder_and_secret()
    if found is None:
        return
    where, secret_key = found
    buffer = io.BytesIO()
    gap = np.nan if solution.mip_gap is None else float(solution.mip_gap)
    x = np.asarray(solution.x, dtype="<f8")
    mac = np.frombuffer(_mac(secret_key, key, x, float(solution.fun), gap), dtype="u1")
    np.savez_compressed(
        buffer, key=np.array(key), x=x, fun=np.array(float(solution.fun)), mip_gap=np.array(gap), mac=mac
    )
    try:
        write_atomic(where / f"{key}.npz", buffer.getvalue())
        evict(where)
    except (OSError, InputError):
        pass
