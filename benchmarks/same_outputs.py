"""Every output procure writes, byte for byte: for checking that a change of code layout changes none of them.

Run:  .venv/bin/python benchmarks/same_outputs.py write DIR        # the outputs of the code installed now
      .venv/bin/python benchmarks/same_outputs.py write DIR --only plan,report  # only commands named so
      .venv/bin/python benchmarks/same_outputs.py compare OLD NEW  # exit 1 when any file differs

`write` runs the commands below on the example workspace (the repository root), on
tests/data/real_offers and on the 50-offer workspace the benchmarks generate (benchmarks/synthetic.py, seed 7), as
a user runs them (one process each), with SOURCE_DATE_EPOCH set, a fixed
terminal width and a plan cache of its own, and keeps each command's standard output, standard error and
exit status, and every file it writes (PDF, HTML, xlsx, CSV, JSON, Markdown). Run it on the code before a
change and after it; `compare` lists every file that is missing or differs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import make_workspace  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
AS_OF = "2026-11-29"
EPOCH = "1764374400"  # 2025-11-29 00:00 UTC: the date printed in and stored by every report

WORKSPACES = {"example": ROOT, "real_offers": ROOT / "tests" / "data" / "real_offers", "offers50": None}
GENERATED_OFFERS = 50  # the workspace of bench_report.py --offers 50, made afresh in a temporary folder

# (name, arguments): stdout is kept as NAME.out; an argument "{out}.SUFFIX" is a file written and kept as NAME.SUFFIX.
COMMANDS: list[tuple[str, list[str]]] = [
    ("validate", ["validate"]),
    ("grade", ["grade"]),
    ("grade-json", ["grade", "--format", "json"]),
    ("rate", ["rate"]),
    ("rate-json", ["rate", "--format", "json"]),
    ("compare", ["compare"]),
    ("compare-wide", ["compare", "--wide"]),
    ("compare-json", ["compare", "--format", "json"]),
    ("compare-csv", ["compare", "--format", "csv"]),
    ("compare-md", ["compare", "--format", "markdown"]),
    ("compare-xlsx", ["compare", "--out", "{out}.xlsx"]),
    ("compare-horizon", ["compare", "--horizon", "36", "--format", "json"]),
    ("compare-uncertainty", ["compare", "--uncertainty", "--format", "json"]),
    ("compare-uncertainty-table", ["compare", "--uncertainty"]),
    ("evaluate-json", ["evaluate", "--format", "json"]),
    ("plan", ["plan"]),
    ("plan-json", ["plan", "--format", "json"]),
    ("plan-csv", ["plan", "--format", "csv"]),
    ("plan-md", ["plan", "--format", "markdown"]),
    ("plan-xlsx", ["plan", "--out", "{out}.xlsx"]),
    ("hedge", ["hedge"]),
    ("hedge-json", ["hedge", "--format", "json"]),
    ("cashflow", ["cashflow"]),
    ("cashflow-json", ["cashflow", "--format", "json"]),
    ("cashflow-csv", ["cashflow", "--format", "csv"]),
    ("cashflow-xlsx", ["cashflow", "--out", "{out}.xlsx"]),
    ("sensitivity", ["sensitivity"]),
    ("sensitivity-json", ["sensitivity", "--format", "json"]),
    ("position", ["position"]),
    ("position-json", ["position", "--format", "json"]),
    ("whatif-price-to-win", ["whatif", "--price-to-win"]),
    ("whatif-price-to-win-json", ["whatif", "--price-to-win", "--format", "json"]),
    ("scorecard", ["scorecard"]),
    ("scorecard-json", ["scorecard", "--format", "json"]),
    ("index-build", ["index", "build", "market/quotes.csv", "--format", "json"]),
    ("index-build-csv", ["index", "build", "market/quotes.csv", "--format", "csv"]),
    ("report-pdf", ["report", "--out", "{out}.pdf"]),
    ("report-html", ["report", "--format", "html", "--out", "{out}.html"]),
    ("board-pdf", ["report", "--board", "--out", "{out}.pdf"]),
    ("schema-list", ["schema"]),
] + [
    (f"schema-{name}", ["schema", name])
    for name in (
        "offer",
        "grade",
        "workspace",
        "evaluation",
        "grading",
        "rate",
        "whatif",
        "price-to-win",
        "position",
        "index",
        "hedge",
        "sensitivity",
        "history",
        "diff",
        "reevaluate",
        "cashflow",
        "plan",
        "scorecard",
    )
]

UNDATED = {"grade", "index", "schema"}  # commands without --as-of


def run_all(target: Path, only: list[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as generated:
        env = {
            **os.environ,
            "SOURCE_DATE_EPOCH": EPOCH,
            "COLUMNS": "100",
            "PROCURE_CACHE_DIR": cache,
            "NO_COLOR": "1",
            "TZ": "UTC",
        }
        for label, fixed in WORKSPACES.items():
            workspace = fixed or make_workspace(Path(generated) / "ws", GENERATED_OFFERS)
            for name, args in COMMANDS:
                if only and not any(part in name for part in only):
                    continue
                stem = target / f"{label}.{name}"
                argv = [a.replace("{out}", str(stem)) for a in args]
                dated = [] if argv[0] in UNDATED else ["--as-of", AS_OF]
                where = [] if argv[0] == "schema" else ["-w", str(workspace)]
                done = subprocess.run(
                    [sys.executable, "-m", "procure", *argv, *where, *dated],
                    capture_output=True,
                    env=env,
                    cwd=str(workspace),
                )
                stem.with_suffix(stem.suffix + ".out").write_bytes(neutral(done.stdout, stem, workspace))
                stem.with_suffix(stem.suffix + ".err").write_bytes(neutral(done.stderr, stem, workspace))
                stem.with_suffix(stem.suffix + ".status").write_text(f"{done.returncode}\n")
                print(f"{label:12} {name:28} exit {done.returncode}", flush=True)


def neutral(text: bytes, stem: Path, workspace: Path) -> bytes:
    """The checkout's and the generated workspace's own paths are all that may differ between two runs."""
    text = text.replace(str(stem).encode(), b"{out}")
    if workspace != ROOT and not workspace.is_relative_to(ROOT):
        text = text.replace(str(workspace).encode(), b"{workspace}")
    return text.replace(str(ROOT).encode(), b"{root}")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compare(old: Path, new: Path) -> int:
    """Every file of NEW against OLD; files of OLD that NEW lacks are counted (NEW may be a --only run)."""
    written = sorted(p.name for p in new.iterdir())
    differ = [n for n in written if not (old / n).exists() or digest(old / n) != digest(new / n)]
    for n in differ:
        print(f"differs: {n}" if (old / n).exists() else f"only in new: {n}")
    left = len({p.name for p in old.iterdir()} - set(written))
    print(
        f"{len(written) - len(differ)} of {len(written)} files identical"
        + (f" ({left} of the old run not written here)" if left else "")
    )
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    write = sub.add_parser("write")
    write.add_argument("dir", type=Path)
    write.add_argument(
        "--only", default="", help="comma-separated parts of command names (plan,report): only those commands"
    )
    both = sub.add_parser("compare")
    both.add_argument("old", type=Path)
    both.add_argument("new", type=Path)
    args = parser.parse_args()
    if args.verb == "write":
        run_all(args.dir, [part for part in args.only.split(",") if part])
        return 0
    return compare(args.old, args.new)


if __name__ == "__main__":
    sys.exit(main())
