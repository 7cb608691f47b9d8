"""Writing outputs: atomically, into folders created on demand, never over an input or a workspace file.

Every output goes through `check_output` and `write_atomic`:

- a file of a workspace (procure.yaml, offers/, grades/, performance/, market/, actuals/) is never
  replaced unless the command exists to replace it and the caller says so (`replace_inputs`), and no
  new file is put among them either (every later command would read it as an input) unless the
  command exists to write there (`replace_inputs`, or `into` naming the folder); nothing is ever
  written into `.procure/` (the history) this way; a file this run reads as its own input is never
  replaced, whatever the flags;
- what is written agrees with the name's suffix: a workbook or a PDF goes only into `.xlsx` or
  `.pdf`, text never into either, and a `.json` file holds JSON;
- a path inside a workspace that leads out of it through a link is refused, as for inputs;
- the temporary file is named so that it can be recognised later without a pattern that could
  match anybody else's file: the name holds the owner's process id and a checksum of the name
  itself, so a leftover of a killed run is removed by the next write in the same folder once its
  owner is gone, and nothing else ever is;
- the new file gets the mode a plain `open()` would give it (the umask is respected), and a file
  that is replaced keeps its mode.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from procure.errors import InputError, Problem

# The workspace's input files, registered when a workspace is loaded: outputs replace them only
# when the command exists for it.
PROTECTED: set[Path] = set()
# Files a command reads besides the workspace (quotes, a rent history, a sheet): never replaced.
OWN_INPUTS: set[Path] = set()
# Workspace roots loaded in this process.
ROOTS: set[Path] = set()

CONFIG_FILE = "procure.yaml"
WORKSPACE_FOLDERS = ("offers", "grades", "performance", "market", "actuals")
HISTORY_FOLDER = ".procure"


def forget_inputs() -> None:
    """A new command starts with no inputs registered (commands run in one process in tests)."""
    PROTECTED.clear()
    OWN_INPUTS.clear()
    ROOTS.clear()


def protect(paths: list[Path]) -> None:
    PROTECTED.update(p.resolve() for p in paths)


def register_root(root: Path) -> None:
    ROOTS.add(Path(os.path.abspath(root)))


def own_input(path: Path) -> None:
    """A file this command reads: no output of the same run may replace it."""
    OWN_INPUTS.add(Path(path).resolve())


# While a workspace is read (`folders_unchanged`), what the link checks learn of its folders is kept:
# whether each holds procure.yaml and where it really is. Its thousand offer files then cost a link
# test each instead of a walk up every parent.
_HOLDS: dict[Path, bool] | None = None
_REALS: dict[Path, Path] | None = None


@contextlib.contextmanager
def folders_unchanged() -> Iterator[None]:
    """Within this block the folders above the files checked are taken not to change (one command's read)."""
    global _HOLDS, _REALS
    outer = (_HOLDS, _REALS)
    if _HOLDS is None or _REALS is None:
        _HOLDS, _REALS = {}, {}
    try:
        yield
    finally:
        _HOLDS, _REALS = outer


def _holds_config(folder: Path) -> bool:
    if _HOLDS is None:
        return (folder / CONFIG_FILE).is_file()
    if folder not in _HOLDS:
        _HOLDS[folder] = (folder / CONFIG_FILE).is_file()
    return _HOLDS[folder]


def _real(path: Path) -> Path:
    """The real path of an absolute, normalised path (a folder's is kept while folders are unchanged)."""
    if _REALS is None:
        return path.resolve()
    if path in _REALS:
        return _REALS[path]
    if path.name and not path.is_symlink():  # not a link itself: where its folder really is, then its name
        found = _real(path.parent) / path.name
    else:
        found = path.resolve()
    _REALS[path] = found
    return found


def _roots_of(path: Path) -> list[Path]:
    """The workspaces (folders holding procure.yaml, or loaded in this run) that contain `path`."""
    found: list[Path] = []
    for candidate in (path, *path.parents):
        if candidate in ROOTS or _holds_config(candidate):
            found.append(candidate)
    return found


def workspace_part(root: Path, path: Path) -> str | None:
    """'procure.yaml', a workspace folder name or '.procure' when `path` is part of the workspace."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    if parts == (CONFIG_FILE,):
        return CONFIG_FILE
    if len(parts) >= 2 and parts[0] in (*WORKSPACE_FOLDERS, HISTORY_FOLDER):
        return parts[0]
    return None


def check_link(path: Path, display: str | None = None, root: Path | None = None) -> None:
    """A file inside a workspace (given, or found above it) that leads out of it through a link is
    refused, for reading as for writing: a vendor archive must not make procure read, echo or write
    other files (a foreign SQLite database, a file of another project)."""
    lexical = Path(os.path.abspath(path))
    real = _real(lexical)
    roots = set(_roots_of(lexical))
    if root is not None:
        roots.add(Path(os.path.abspath(root)))
    for candidate in roots:
        if lexical.is_relative_to(candidate) and not real.is_relative_to(_real(candidate)):
            raise InputError(
                [Problem(display or str(path), None, "", "refused: links to a file outside the workspace")]
            )


def _refuse(path: Path, option: str, message: str) -> InputError:
    return InputError([Problem(str(path), None, option, message)])


def check_output(path: Path, replace_inputs: bool = False, option: str = "--out", into: str | None = None) -> None:
    """Refuse an output path that would replace an input, a workspace file, add a file among the
    workspace's inputs (unless the command writes into that folder: `into`) or leave the workspace."""
    path = Path(path)
    lexical = Path(os.path.abspath(path))
    real = lexical.resolve()
    if real in OWN_INPUTS or lexical in OWN_INPUTS:
        raise _refuse(path, option, "is an input of this command: choose another file, it was left alone")
    if not replace_inputs and real in PROTECTED:
        raise _refuse(path, option, "is an input of the workspace: choose another file, it was left alone")
    for root in {*_roots_of(lexical), *_roots_of(real)}:
        real_root = root.resolve()
        if lexical.is_relative_to(root) and not real.is_relative_to(real_root):
            raise _refuse(path, option, "refused: leads outside the workspace through a link")
        for candidate in (lexical, real):
            part = workspace_part(root, candidate) or workspace_part(real_root, candidate)
            if part == HISTORY_FOLDER:
                raise _refuse(path, option, "is inside .procure/ (the saved runs): choose a file outside it")
            if part is not None and (candidate.exists() or candidate.is_symlink()) and not replace_inputs:
                raise _refuse(
                    path,
                    option,
                    f"is a file of the workspace ({part}): procure does not replace it from this command; choose "
                    "another file",
                )
            if part in WORKSPACE_FOLDERS and not replace_inputs and part != into:
                raise _refuse(
                    path,
                    option,
                    f"is inside {part}/, among the workspace's inputs (every later command would read it): write it "
                    f"outside {part}/",
                )


BINARY_SUFFIXES = {".xlsx": (b"PK\x03\x04", "a workbook"), ".pdf": (b"%PDF-", "a PDF")}
TEXT_SUFFIXES = {".json", ".yaml", ".yml", ".csv", ".tsv", ".md", ".markdown", ".html", ".htm", ".txt", ""}


def check_contents(path: Path, payload: bytes, option: str = "--out") -> None:
    """What is written agrees with the suffix: a workbook or PDF only in .xlsx or .pdf, text in neither,
    and JSON in .json (an XLSX in `t.yaml` would be read back as a broken input)."""
    suffix = path.suffix.lower()
    kind = next((name for magic, name in BINARY_SUFFIXES.values() if payload.startswith(magic)), None)
    if suffix in BINARY_SUFFIXES:
        magic, name = BINARY_SUFFIXES[suffix]
        if not payload.startswith(magic):
            raise _refuse(
                path,
                option,
                f"a {suffix} file is {name}, and this output is {kind or 'text'}: give the suffix of what is written",
            )
    elif suffix in TEXT_SUFFIXES and kind is not None:
        wanted = next(s for s, (magic, _) in BINARY_SUFFIXES.items() if payload.startswith(magic))
        raise _refuse(path, option, f"this output is {kind}, not a {suffix} file: name it with {wanted}")
    if suffix == ".json":
        import json

        try:
            json.loads(payload)
        except ValueError:
            raise _refuse(
                path, option, "this output is not JSON: give the suffix of what is written (or --format json)"
            ) from None


def write_atomic(path: Path, data: str | bytes, replace_inputs: bool = False, into: str | None = None) -> None:
    """Write to a temporary file beside `path`, then rename: an interrupted run leaves no partial file.

    An input of the loaded workspace is never overwritten (importers that replace offer or curve
    files on purpose pass `replace_inputs`), nor is anything that is not a regular file.
    """
    path = Path(path)
    check_output(path, replace_inputs, into=into)
    if path.exists() and not path.is_dir() and not path.is_file():
        raise _refuse(path, "--out", "is not a regular file (a device or a pipe): choose a file name")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    check_contents(path, payload)
    for parent in (path.parent, *path.parent.parents):
        if parent.exists() and not parent.is_dir():
            raise _refuse(path, "--out", f"cannot write here: {parent} is a file, not a folder")
    if path.is_dir():
        raise _refuse(path, "--out", "is a folder: give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned(path.parent)
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else 0o666 & ~current_umask()
        tmp = path.parent / temporary_name(path.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise _refuse(path, "--out", f"cannot write here: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _refuse(path, "--out", f"cannot write here: {exc.strerror or exc}") from None
        raise


def current_umask() -> int:
    """The process umask (read from /proc when possible, so that no other thread sees it change)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- temporaries of killed runs --------------------------------------------------------------------

STALE_SECONDS = 600  # a live process with the recorded id that old is another process (ids are reused)
_TEMPORARY = re.compile(
    r"^\.(?P<stem>.{1,100})\.(?P<pid>\d{1,10})\.(?P<token>[0-9a-f]{8})\.(?P<check>[0-9a-f]{12})\.tmp$", re.DOTALL
)


def _checksum(stem: str, pid: str, token: str) -> str:
    return hashlib.sha256(f"procure-temporary\0{stem}\0{pid}\0{token}".encode("utf-8", "surrogateescape")).hexdigest()[
        :12
    ]


def temporary_name(name: str) -> str:
    """`.{name}.{pid}.{random}.{checksum}.tmp`: the name records its owner and proves it is ours."""
    stem = name[:100]
    pid, token = str(os.getpid()), secrets.token_hex(4)
    return f".{stem}.{pid}.{token}.{_checksum(stem, pid, token)}.tmp"


def owner_of(name: str) -> int | None:
    """The process id recorded in one of our temporary names, or None for any other name."""
    match = _TEMPORARY.match(name)
    if match is None or _checksum(match["stem"], match["pid"], match["token"]) != match["check"]:
        return None
    return int(match["pid"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


OWNER_FILE = ".owner"  # in a temporary folder: the id and start time of the process that made it


def _started(pid: int) -> str | None:
    """The process's start time, in clock ticks since boot (/proc/PID/stat field 22), where the system says: with
    the id, it names one process (an id reused later has another start time)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def make_owned_folder(path: Path | str) -> None:
    """mkdir (0o700) and record in it the process that owns it, so that `remove_abandoned` in another run never
    removes it while that process lives, however long it works."""
    os.mkdir(path, 0o700)
    try:
        with open(Path(path) / OWNER_FILE, "w", encoding="ascii") as handle:
            handle.write(f"{os.getpid()} {_started(os.getpid()) or '-'}\n")
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        raise


def _owner_alive(folder: str) -> bool | None:
    """Whether the process recorded in a temporary folder's owner file lives (the same process: its id and, where
    the system gives it, its start time); None when the folder records none."""
    try:
        with open(os.path.join(folder, OWNER_FILE), encoding="ascii") as handle:
            pid_text, started = handle.read(100).split()[:2]
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    if not _alive(pid):
        return False
    now = _started(pid)
    return started == "-" or now is None or now == started


def remove_abandoned(folder: Path) -> list[Path]:
    """Remove the temporaries (files or staging folders) of runs that were killed: only names made by
    `temporary_name`, owned by this user, whose process is gone (or that are too old to be its). A folder that
    records its owner (`make_owned_folder`) is kept while that process lives, however old."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        pid = owner_of(entry.name)
        if pid is None or pid == os.getpid():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != os.getuid() or stat.S_ISLNK(info.st_mode):
                continue
            owned = _owner_alive(entry.path) if stat.S_ISDIR(info.st_mode) else None
            if owned or (owned is None and _alive(pid) and now - info.st_mtime < STALE_SECONDS):
                continue
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry.path)
            elif stat.S_ISREG(info.st_mode):
                os.unlink(entry.path)
            else:
                continue
            removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


# --- a folder of files, all or nothing ----------------------------------------------------------------

RENAME_EXCHANGE = 2
AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False when not supported here."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        rename = libc.renameat2
    except (OSError, AttributeError):
        return False
    rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return rename(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_files_atomic(folder: Path, files: dict[str, str | bytes], option: str = "") -> list[Path]:
    """Write several files into `folder` all or nothing: the new folder (its present files and the new
    ones) is built under a temporary name beside it, then swapped in with one rename. A run killed at
    any moment leaves the folder as it was or complete; the temporary folder it may leave behind is
    removed by the next write in the same place. Existing files are replaced (the caller checks
    --force); each target is checked as any output is. `option` is the option that named the folder
    (--out-dir), for messages; empty when the command chose it (actuals/ID/), so that no message
    names an option the user never gave."""
    folder = Path(folder)
    if not files:
        return []
    for name in files:
        check_output(folder / name, replace_inputs=True, option=option)
    if folder.exists() and not folder.is_dir():
        raise _refuse(folder, option, "is a file, not a folder")
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned(parent)
        if folder.is_dir():
            remove_abandoned(folder)
        umask = current_umask()
        stage = parent / temporary_name(folder.name)
        stage.mkdir()
    except OSError as exc:
        raise _refuse(folder, option, f"cannot write here: {exc.strerror or exc}") from None
    try:
        swap = folder.is_dir() and not folder.is_symlink()
        if swap:
            shutil.copystat(folder, stage)
            for entry in os.scandir(folder):
                if owner_of(entry.name) is not None or entry.name in files:
                    continue
                target = stage / entry.name
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), target)
                elif entry.is_dir():
                    shutil.copytree(entry.path, target, symlinks=True)
                elif entry.is_file():
                    shutil.copy2(entry.path, target)
        for name, data in files.items():
            existing = folder / name
            mode = stat.S_IMODE(existing.stat().st_mode) if existing.is_file() else 0o666 & ~umask
            fd = os.open(stage / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
                handle.flush()
                os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
        _fsync_dir(stage)
        if not folder.exists():
            os.rename(stage, folder)
        elif swap and _exchange(stage, folder):
            shutil.rmtree(stage, ignore_errors=True)  # now the old folder
        else:  # no atomic swap on this system: each file still replaces atomically
            for name in files:
                os.replace(stage / name, folder / name)
            shutil.rmtree(stage, ignore_errors=True)
        _fsync_dir(parent)
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _refuse(folder, option, f"cannot write here: {exc.strerror or exc}") from None
        raise
    return [folder / name for name in files]


def file_hash(path: Path, shown: str | None = None) -> dict[str, str]:
    """A file as a JSON document's envelope lists an input (render/envelope.py): its path as `shown` (default: as
    given) and the SHA-256 of its bytes."""
    return {
        "path": shown if shown is not None else str(path),
        "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
    }


def refuse_to_overwrite(target: Path, names: list[str]) -> None:
    """A new workspace goes into a folder (made if missing) that holds none of the files `names` (relative to it):
    else exit 2, naming the first that exists and how many would be overwritten."""
    if target.exists() and not target.is_dir():
        raise InputError([Problem(str(target), None, "", "is a file: give a folder for the new workspace")])
    clashes = [name for name in names if (target / name).exists()]
    if clashes:
        raise InputError(
            [
                Problem(
                    str(target / clashes[0]),
                    None,
                    "",
                    f"already exists ({len(clashes)} file(s) would be overwritten): choose an empty folder",
                )
            ]
        )
