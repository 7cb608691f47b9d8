"""The example workspace, for `procure init`: the repository root is itself the example.

In a source checkout the files are read from the root; an installed wheel carries the same files as
the package data `procure.example_workspace` (pyproject.toml maps the root to it).
"""

from __future__ import annotations

from pathlib import Path

from procure.errors import InputError, Problem
from procure.fileio import write_atomic

PATTERNS = ("procure.yaml", "offers/*.yaml", "grades/*.yaml", "performance/*.csv", "market/*.csv")


def example_root() -> Path:
    package = Path(__file__).resolve().parent
    for candidate in (package / "example_workspace", package.parent):
        if (candidate / "procure.yaml").is_file() and (candidate / "offers").is_dir():
            return candidate
    raise FileNotFoundError("the example workspace is missing from this installation")


def example_files() -> list[Path]:
    root = example_root()
    return sorted(path.relative_to(root) for pattern in PATTERNS for path in root.glob(pattern))


def write_example(target: Path) -> list[Path]:
    """Copy the example into `target`, refusing a folder that already holds a workspace or those files."""
    root = example_root()
    files = example_files()
    if target.exists() and not target.is_dir():
        raise InputError([Problem(str(target), None, "", "is a file: give a folder for the new workspace")])
    clashes = [f for f in files if (target / f).exists()]
    if clashes:
        raise InputError([Problem(str(target / clashes[0]), None, "", f"already exists ({len(clashes)} file(s) would be overwritten): choose an empty folder")])
    written = []
    for relative in files:
        write_atomic(target / relative, (root / relative).read_bytes())
        written.append(target / relative)
    return written
