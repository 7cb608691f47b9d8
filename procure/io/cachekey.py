"""Where procure's caches live and the secret that authenticates their entries (procure/io/solvecache.py keeps
solved plans there, procure/io/resultcache.py repeated answers), without importing anything heavy: the result
cache reads it before any library is loaded."""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from procure.environment import current

KEY_BYTES = 32


def folder() -> Path | None:
    """Where solutions are kept, or None when the cache is off (the running command's Environment)."""
    return current().cache_folder


def key_file() -> Path:
    """The user's secret that authenticates entries: beside procure's state, never in the cache folder."""
    return current().state_folder / "cache-key"


def _open_regular(path: Path) -> int | None:
    """A descriptor of `path` when it is a regular file (never a link, a pipe or a device: opening
    a pipe without O_NONBLOCK would wait for a writer forever), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _read_key(path: Path) -> bytes | None:
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        found = os.fstat(fd)
        if found.st_uid != os.geteuid() or found.st_mode & 0o077 or found.st_size != KEY_BYTES:
            return None  # a key another user could read or wrote authenticates nothing
        data = _read_at_most(fd, KEY_BYTES)
    finally:
        os.close(fd)
    return data if len(data) == KEY_BYTES else None


def secret() -> bytes | None:
    """The user's cache key, made on first use (mode 0600); None when it cannot be this user's alone."""
    path = key_file()
    found = _read_key(path)
    if found is not None or os.path.lexists(path):
        return found
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = path.parent / f".cache-key.{os.getpid()}.{secrets.token_hex(8)}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
        finally:
            os.close(fd)
        try:
            os.link(temp, path)  # all or nothing; a key another process made first is the one used
        except FileExistsError:
            pass
        finally:
            temp.unlink(missing_ok=True)
    except OSError:
        return None
    return _read_key(path)


def folder_and_secret() -> tuple[Path, bytes] | None:
    """The cache's folder and the user's key to authenticate its entries; None when the cache is off or the key cannot
    be this user's alone (the key is made on first use only when the cache is on)."""
    where = folder()
    if where is None:
        return None
    secret_key = secret()
    return None if secret_key is None else (where, secret_key)
