"""The example workspace, for `procure init`: the repository root is itself the example.

In a source checkout the files are read from the root; an installed wheel carries the same files as
the package data `procure.example_workspace` (pyproject.toml maps the root to it). Both name the
files one by one (EXAMPLE_FILES here, package-data in pyproject.toml; a test keeps them equal), so a
file someone creates in the checkout never spreads into new workspaces.
"""

from __future__ import annotations

from pathlib import Path

from procure.io.files import refuse_to_overwrite, write_atomic

# The example, file by file: add a file here and to package-data in pyproject.toml.
EXAMPLE_FILES = (
    "actuals/keel-b200-mc/incidents.csv",  # six months of delivered evidence (scripts/make_example_actuals.py)
    "actuals/keel-b200-mc/invoices.csv",
    "actuals/keel-b200-mc/metrics.csv",
    "grades/B200-BM.yaml",
    "grades/B200-MC.yaml",
    "grades/B200-MS.yaml",
    "grades/B200-OWN.yaml",
    "market/index.csv",
    "market/quotes.csv",
    "market/rent.csv",
    "offers/brightwater-b200-bm.yaml",
    "offers/corvid-b200-idx.yaml",
    "offers/halvard-b200-ms.yaml",
    "offers/keel-b200-mc.yaml",
    "offers/lumen-forge-tokens.yaml",
    "offers/meridian-b200-mc.yaml",
    "offers/northwind-b200-mc.yaml",
    "offers/own-b200-colo.yaml",
    "offers/petrel-b200-ondemand.yaml",
    "offers/quarry-b200-mc.yaml",
    "offers/saltmarsh-b200-ms.yaml",
    "offers/tidewater-b200-mc-eu.yaml",
    "performance/b200-dynamo-sglang-fp4.csv",
    "performance/b200-dynamo-trt-fp4.csv",
    "performance/b200-sglang-fp8.csv",
    "performance/b200-trt-fp8.csv",
    "procure.yaml",
)


def example_root() -> Path:
    package = Path(__file__).resolve().parents[1]  # procure/, beside which an installation carries example_workspace/
    for candidate in (package / "example_workspace", package.parent):
        if (candidate / "procure.yaml").is_file() and (candidate / "offers").is_dir():
            return candidate
    raise FileNotFoundError("the example workspace is missing from this installation")


def example_files() -> list[Path]:
    """The example's files, relative to its root: the listed ones only, never whatever else lies there."""
    return sorted(Path(name) for name in EXAMPLE_FILES)


def write_example(target: Path) -> list[Path]:
    """Copy the example into `target`, refusing a folder that already holds a workspace or those files."""
    root = example_root()
    files = example_files()
    refuse_to_overwrite(target, files)
    written = []
    for relative in files:
        write_atomic(
            target / relative, (root / relative).read_bytes(), replace_inputs=True
        )  # init writes a workspace; clashes were refused above
        written.append(target / relative)
    return written
