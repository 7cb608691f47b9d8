"""Repeated answers kept on disk: what `procure compare` printed (standard output, standard error, exit status), and
for `procure report` the document it wrote, under the SHA-256 of everything that can change them, so that the same
command on the same inputs answers without loading the libraries it computes with (procure/front.py asks here before
anything else is imported).

The key (`key_for`) covers the arguments; today's date when `--as-of` is absent, and always for a report (its cover
gives the day it was prepared); the whole environment (the variables
that change an output, COLUMNS, LINES, NO_COLOR, FORCE_COLOR, TTY_COMPATIBLE, TZ, SOURCE_DATE_EPOCH and the locale
among them); whether standard input, output and error are terminals and the terminals' sizes; the working folder;
Python's version and executable; procure's own source files (path, size and modification time of each); the
installed distributions (the names and versions their metadata folders carry, with those folders' modification
times); and every input file of the workspace, path and content: procure.yaml, offers/, grades/, performance/,
market/ and actuals/, and, when an offer names a status history (operator.status_history.file, anywhere in the
workspace), every other file under the workspace folder but hidden ones and __pycache__. A workspace of more than
MAX_FILES files or MAX_BYTES bytes is not kept (hashing it could cost what the answer does).

A report's entry also holds the file it wrote (its absolute path and bytes, noted by the command with `wrote`): a
kept report is written again, atomically and through the same checks as the first (procure/io/files.py), and where
that fails the command runs afresh and says why. Its embedded fonts carry the time of the first run unless
SOURCE_DATE_EPOCH fixes it, as it does for a reproducible document.

An entry is authenticated like a solved plan (procure/io/solvecache.py): an HMAC-SHA256 under the user's own secret
(procure/io/cachekey.py) of the key and everything the entry holds; an entry anyone else wrote, copied or edited is
ignored and the command runs afresh. Entries live in the solve cache's folder ($PROCURE_CACHE_DIR, else
$XDG_CACHE_HOME/procure, else ~/.cache/procure; PROCURE_CACHE_DIR empty turns both off), named by the key and
`.answer`; the newest KEEP are kept. A folder that cannot be written, or any error of the cache's own, turns it off
silently: the command runs as it would without it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import struct
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from procure.environment import current
from procure.io.cachekey import _open_regular, _read_at_most, folder_and_secret

FORMAT = b"procure-answer-2"
SUFFIX = ".answer"
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.answer")
KEEP = 256
MAX_FILES = 5_000
MAX_BYTES = 200 * 1024 * 1024
MAX_ENTRY = 64 * 1024 * 1024  # the largest answer kept or read
HEADER = struct.Struct("<32sqQQQ")  # mac, exit status, bytes of standard output, of standard error, of files written
ABOUT_PROCURE = ("-h", "--help", "--install-completion", "--show-completion", "--version")
# options after which an answer is not only printed (a file written) or is about procure itself; a report's file is
# kept with its answer
NOT_KEPT = {"compare": ("-o", "--out", *ABOUT_PROCURE), "report": ABOUT_PROCURE}
DATED_ALWAYS = ("report",)  # its document names the day it was prepared, whatever --as-of says
PACKAGE = Path(__file__).resolve().parent.parent
# set by the shell to the last command run and the folder before the last cd: neither changes an answer
VOLATILE = ("_", "OLDPWD")


def _workspace_start(args: list[str]) -> Path | None:
    """The folder the workspace is looked for from (-w/--workspace, else the working folder); None when the
    arguments cannot be read without the command line's own parser."""
    start: str | None = None
    for i, arg in enumerate(args):
        if arg in ("-w", "--workspace"):
            if i + 1 >= len(args):
                return None
            start = args[i + 1]
        elif arg.startswith("--workspace="):
            start = arg.split("=", 1)[1]
        elif arg.startswith("-w") and not arg.startswith("--"):
            start = arg[2:]
    return Path(start or ".").resolve()


def _root(start: Path) -> Path | None:
    """The nearest folder from `start` upward that holds procure.yaml (procure/io/workspace.py finds it so)."""
    for here in (start, *start.parents):
        if (here / "procure.yaml").is_file():
            return here
    return None


INPUT_FOLDERS = ("offers", "grades", "performance", "market", "actuals")  # what the workspace loader reads


def _walk(top: Path, root: Path) -> list[str]:
    """The files under `top` (hidden ones and __pycache__ aside), as paths relative to `root`, in one order."""
    found = []
    for folder_path, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        found += [os.path.relpath(os.path.join(folder_path, n), root) for n in sorted(files) if not n.startswith(".")]
    return found


def _update_files(digest: hashlib._Hash, root: Path) -> bool:  # type: ignore[name-defined]
    """The workspace's input files, path and content, in one order: procure.yaml and the folders the loader reads,
    and, when an offer names a status history (a file anywhere in the workspace), every other file too. False when
    there are too many or too large."""
    paths = ["procure.yaml"] + [p for name in INPUT_FOLDERS for p in _walk(root / name, root)]
    seen = {"total": 0, "count": 0}
    histories = False

    def add(rel: str) -> bool:
        path = root / rel
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                return True
            seen["count"] += 1
            seen["total"] += info.st_size
            if seen["count"] > MAX_FILES or seen["total"] > MAX_BYTES:
                return False
            with open(path, "rb") as handle:
                content = handle.read()
        except OSError:
            return False
        name = rel.encode("utf-8", "surrogateescape")
        digest.update(len(name).to_bytes(8, "little") + name)
        digest.update(len(content).to_bytes(8, "little") + content)
        nonlocal histories
        histories = histories or (rel.startswith("offers") and b"status_history" in content)
        return True

    if not all(add(rel) for rel in paths):
        return False
    if histories:
        done = set(paths)
        digest.update(b"\0every other file\0")
        return all(add(rel) for rel in _walk(root, root) if rel not in done)
    return True


def _source(digest: hashlib._Hash) -> None:  # type: ignore[name-defined]
    """procure's own files (path, size, modification time)."""
    for folder_path, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            info = os.stat(os.path.join(folder_path, name))
            digest.update(f"{os.path.relpath(os.path.join(folder_path, name), PACKAGE)}\0{info.st_size}\0".encode())
            digest.update(f"{info.st_mtime_ns}\n".encode())


def _distributions(digest: hashlib._Hash) -> None:  # type: ignore[name-defined]
    """The installed distributions on the import path: their metadata folders' names (name and version) and times."""
    for entry in sys.path:
        try:
            names = sorted(n for n in os.listdir(entry or ".") if n.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
        digest.update(f"{entry}\n".encode("utf-8", "surrogateescape"))
        for name in names:
            try:
                mtime = os.stat(os.path.join(entry or ".", name)).st_mtime_ns
            except OSError:
                mtime = 0
            digest.update(f"{name}\0{mtime}\n".encode("utf-8", "surrogateescape"))


def _terminals() -> list[object]:
    out: list[object] = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            tty = bool(stream is not None and stream.isatty())
        except (AttributeError, ValueError):
            tty = False
        size = None
        if tty:
            try:
                size = list(os.get_terminal_size(stream.fileno()))
            except (OSError, ValueError, AttributeError):
                size = None
        out.append([tty, size])
    return out


_written: list[tuple[Path, bytes]] = []


def wrote(path: Path, content: str | bytes) -> None:
    """Note a document the running command wrote, as it wrote it (procure/cli/report.py): kept with its answer."""
    _written.append((Path(os.path.abspath(path)), content.encode("utf-8") if isinstance(content, str) else content))


def written() -> list[tuple[Path, bytes]]:
    """The documents the running command wrote, in order: each one's absolute path and bytes."""
    return list(_written)


def key_for(args: list[str]) -> str | None:
    """The key of a command's answer (`args`: the command and its arguments), or None when it is not kept (a file
    written where the command does not keep it, help asked for, no workspace found, too large a workspace)."""
    not_kept = NOT_KEPT.get(args[0]) if args else None
    if not_kept is None:
        return None
    short = tuple(a for a in not_kept if a.startswith("-") and not a.startswith("--"))
    long = tuple(f"{a}=" for a in not_kept if a.startswith("--"))
    if any(a in not_kept or (short and a.startswith(short)) or (long and a.startswith(long)) for a in args[1:]):
        return None
    start = _workspace_start(args[1:])
    root = _root(start) if start is not None else None
    if root is None:
        return None
    dated = args[0] not in DATED_ALWAYS and any(a == "--as-of" or a.startswith("--as-of=") for a in args)
    digest = hashlib.sha256(FORMAT)
    head = {
        "args": args,
        "today": None if dated else date.today().isoformat(),
        "cwd": os.getcwd(),
        "root": str(root),
        "python": [sys.version, sys.executable, sys.flags.utf8_mode],
        "environment": [(k, v) for k, v in current().items() if k not in VOLATILE],
        "terminals": _terminals(),
    }
    digest.update(json.dumps(head, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    _source(digest)
    _distributions(digest)
    if not _update_files(digest, root):
        return None
    return digest.hexdigest()


def _mac(secret_key: bytes, key: str, status: int, out: bytes, err: bytes, files: bytes) -> bytes:
    mac = hmac.new(secret_key, FORMAT, hashlib.sha256)
    mac.update(bytes.fromhex(key))
    mac.update(struct.pack("<qQQQ", status, len(out), len(err), len(files)))
    mac.update(out)
    mac.update(err)
    mac.update(files)
    return mac.digest()


def _pack_files(files: Sequence[tuple[Path, bytes]]) -> bytes:
    parts = []
    for path, content in files:
        name = str(path).encode("utf-8", "surrogateescape")
        parts += [len(name).to_bytes(8, "little"), name, len(content).to_bytes(8, "little"), content]
    return b"".join(parts)


def _unpack_files(data: bytes) -> list[tuple[Path, bytes]] | None:
    """The files of an entry; None when the bytes do not divide into them."""
    found, at = [], 0
    while at < len(data):
        if at + 8 > len(data):
            return None
        n = int.from_bytes(data[at : at + 8], "little")
        name, at = data[at + 8 : at + 8 + n], at + 8 + n
        if len(name) != n or at + 8 > len(data):
            return None
        n = int.from_bytes(data[at : at + 8], "little")
        content, at = data[at + 8 : at + 8 + n], at + 8 + n
        if len(content) != n:
            return None
        found.append((Path(name.decode("utf-8", "surrogateescape")), content))
    return found


Answer = tuple[int, bytes, bytes, list[tuple[Path, bytes]]]


def load(key: str) -> Answer | None:
    """The kept answer (exit status, standard output, standard error, the files written) when it is there and
    authentic."""
    found = folder_and_secret()
    if found is None:
        return None
    where, secret_key = found
    fd = _open_regular(where / f"{key}{SUFFIX}")
    if fd is None:
        return None
    try:
        data = _read_at_most(fd, MAX_ENTRY + HEADER.size)
    finally:
        os.close(fd)
    if len(data) < HEADER.size:
        return None
    mac, status, n_out, n_err, n_files = HEADER.unpack_from(data)
    if HEADER.size + n_out + n_err + n_files != len(data):
        return None
    out = data[HEADER.size : HEADER.size + n_out]
    err = data[HEADER.size + n_out : HEADER.size + n_out + n_err]
    packed = data[HEADER.size + n_out + n_err :]
    if not hmac.compare_digest(mac, _mac(secret_key, key, status, out, err, packed)):
        return None
    files = _unpack_files(packed)
    return None if files is None else (status, out, err, files)


def store(key: str, status: int, out: bytes, err: bytes, files: Sequence[tuple[Path, bytes]] = ()) -> None:
    """Keep an answer (atomically; the oldest beyond KEEP removed); nothing when the folder cannot be written."""
    packed = _pack_files(files)
    found = None if len(out) + len(err) + len(packed) > MAX_ENTRY else folder_and_secret()
    if found is None:
        return
    where, secret_key = found
    try:
        where.mkdir(parents=True, exist_ok=True)
        temp = where / f".{key}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                mac = _mac(secret_key, key, status, out, err, packed)
                handle.write(HEADER.pack(mac, status, len(out), len(err), len(packed)))
                handle.write(out)
                handle.write(err)
                handle.write(packed)
            os.replace(temp, where / f"{key}{SUFFIX}")
        finally:
            if temp.exists():
                temp.unlink()
        _evict(where)
    except OSError:
        return


def _evict(where: Path) -> None:
    kept = []
    for entry in os.scandir(where):
        if ENTRY_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            kept.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    for _, name in sorted(kept, reverse=True)[KEEP:]:
        try:
            (where / name).unlink()
        except OSError:
            pass
