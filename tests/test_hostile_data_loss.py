"""Hostile outputs: --out over workspace files, links out of the workspace, empty index builds,
interrupted imports, leftovers of killed runs and file modes.

Each case once lost or corrupted a user's data; each now ends in exit 2 with nothing written (the
file left byte for byte as it was), or in the output written where it was asked for and nowhere else.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, run
from refusals import compare, refused, validate

from procure.io import files as fileio
from procure.io.importers import import_offers

DATA = Path(__file__).parent / "data"
SECRET = "OUTSIDE-SECRET-51c2"


def market_ws(workspace_copy) -> Path:
    return workspace_copy("market_ws")


def snapshot(*paths: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in paths}


def unchanged(before: dict[Path, bytes]) -> None:
    for path, data in before.items():
        assert path.read_bytes() == data, f"{path} was changed"


# --- --out never replaces a file of the workspace ---------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "market/rent.csv",
        "market/quotes.csv",
        "procure.yaml",
        "grades/T-BM.yaml",
        "performance/b200-ref.csv",
        "offers/indexed.yaml",
    ],
)
def test_out_over_a_workspace_file_is_refused(workspace_copy, target):
    ws = market_ws(workspace_copy)
    path = ws / target
    if not path.exists():
        path = next((ws / target.split("/")[0]).glob("*"))
    before = snapshot(path)
    for args in (
        ("compare", "-f", "csv", "--out", path),
        ("rate", "-f", "json", "--out", path),
        ("hedge", "-f", "csv", "--out", path),
    ):
        result = run(*args, "-w", ws, "--as-of", AS_OF)
        assert_error(result, "--out")
    unchanged(before)


def test_out_over_the_history_is_refused_and_every_run_survives(workspace_copy):
    ws = market_ws(workspace_copy)
    for _ in range(2):
        assert run("evaluate", "--save", "-w", ws, "--as-of", AS_OF).exit_code == 0
    history = ws / ".procure" / "history.sqlite"
    before = snapshot(history)
    for args in (
        ("compare", "-f", "json", "--out", history),
        ("history", "-f", "json", "--out", history),
        ("diff", "--out", history),
    ):
        extra = ("--as-of", AS_OF) if args[0] == "compare" else ()
        assert_error(run(*args, "-w", ws, *extra), ".procure")
    # A new file inside .procure/ is refused too: the folder belongs to the history.
    assert_error(
        run("compare", "-f", "json", "--out", ws / ".procure" / "x.json", "-w", ws, "--as-of", AS_OF), ".procure"
    )
    unchanged(before)
    assert len(json.loads(run("history", "-f", "json", "-w", ws).stdout)["runs"]) == 2


def test_schema_and_template_never_replace_workspace_files(workspace_copy, monkeypatch):
    ws = market_ws(workspace_copy)
    grade = next((ws / "grades").glob("*.yaml"))
    curve = next((ws / "performance").glob("*.csv"))
    before = snapshot(ws / "procure.yaml", grade, curve)
    assert_error(run("schema", "--out", ws / "procure.yaml"), "procure.yaml", "--out")
    monkeypatch.chdir(ws)  # relative paths, as typed in the workspace
    assert_error(run("schema", "offer", "--out", "procure.yaml"), "procure.yaml")
    assert_error(run("import", "--template", grade.relative_to(ws)), "grades")
    assert_error(run("import", "--template", curve.relative_to(ws)), "performance")
    unchanged(before)
    # A new file is fine: the template is for vendors, written anywhere it is asked for.
    assert run("import", "--template", "rfp.csv").exit_code == 0 and (ws / "rfp.csv").is_file()


def test_index_build_never_replaces_its_own_observations_nor_a_workspace_file_unasked(workspace_copy):
    ws = market_ws(workspace_copy)
    quotes, index, curve = (
        ws / "market" / "quotes.csv",
        ws / "market" / "index.csv",
        next((ws / "performance").glob("*.csv")),
    )
    before = snapshot(quotes, index, curve)
    assert_error(run("index", "build", quotes, "-w", ws, "--out", quotes), "is an input of this command")
    assert_error(run("index", "build", quotes, "-w", ws, "--out", quotes, "--replace"), "is an input of this command")
    assert_error(run("index", "build", quotes, "-w", ws, "--out", index), "--out")
    assert_error(run("index", "build", quotes, "-w", ws, "--out", curve), "--out")
    unchanged(before)
    # The command exists to rebuild market/index.csv, and says so with --replace.
    assert run("index", "build", quotes, "-w", ws, "--out", index, "--replace").exit_code == 0
    assert index.read_text().startswith("period,level,observations\n")
    # A new file in market/ is no replacement.
    assert run("index", "build", quotes, "-w", ws, "--out", ws / "market" / "index-long.csv").exit_code == 0


def test_index_build_matching_nothing_exits_2_and_writes_nothing(workspace_copy):
    ws = market_ws(workspace_copy)
    out = ws / "market" / "index.csv"
    before = snapshot(out)
    for extra in ((), ("--replace",)):
        result = run("index", "build", ws / "market" / "quotes.csv", "-w", ws, "--gpu", "X999", "--out", out, *extra)
        assert_error(result, "market/quotes.csv", "no observation matches the filters", "gpu=X999")
    unchanged(before)
    fresh = ws / "fresh.csv"
    assert_error(
        run("index", "build", ws / "market" / "quotes.csv", "-w", ws, "--grade", "nope", "--out", fresh), "grade=nope"
    )
    assert not fresh.exists()
    assert_error(run("index", "build", ws / "market" / "quotes.csv", "-w", ws, "--grade", "nope"))


# --- links out of the workspace, for every file read or written -------------------------------------


def outside_file(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_history_linked_out_of_the_workspace_is_never_written(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    foreign = tmp_path / "elsewhere" / "foreign.sqlite"
    foreign.parent.mkdir()
    import sqlite3

    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('precious')")
    db.close()
    before = snapshot(foreign)
    (ws / ".procure").mkdir()
    (ws / ".procure" / "history.sqlite").symlink_to(foreign)
    for args in (("evaluate", "--save", "--as-of", AS_OF), ("reevaluate", "--as-of", AS_OF), ("history",), ("diff",)):
        assert_error(run(*args, "-w", ws), ".procure/history.sqlite", "outside the workspace")
    unchanged(before)


def test_history_folder_linked_out_of_the_workspace_is_refused(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws / ".procure").symlink_to(elsewhere)
    assert_error(run("evaluate", "--save", "-w", ws, "--as-of", AS_OF), "outside the workspace")
    assert list(elsewhere.iterdir()) == []


def test_config_linked_out_of_the_workspace_is_refused_and_not_echoed(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    text = (ws / "procure.yaml").read_text(encoding="utf-8") + f"\nunknown_{SECRET.replace('-', '_')}: 1\n"
    target = outside_file(tmp_path, "procure.yaml", text)
    (ws / "procure.yaml").unlink()
    (ws / "procure.yaml").symlink_to(target)
    for call in (validate(ws), compare(ws)):
        problems = refused(call, "procure.yaml", "outside the workspace")
        assert SECRET.replace("-", "_") not in problems


def test_rent_and_quotes_linked_out_of_the_workspace_are_refused(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    rent = outside_file(tmp_path, "rent.csv", (ws / "market" / "rent.csv").read_text())
    quotes = outside_file(tmp_path, "quotes.csv", (ws / "market" / "quotes.csv").read_text())
    for name, target in (("rent.csv", rent), ("quotes.csv", quotes)):
        (ws / "market" / name).unlink()
        (ws / "market" / name).symlink_to(target)
    assert_error(run("hedge", "-w", ws, "--as-of", AS_OF), "market/rent.csv", "outside the workspace")
    assert_error(
        run("hedge", "--rent", ws / "market" / "rent.csv", "-w", ws, "--as-of", AS_OF), "outside the workspace"
    )
    assert_error(run("index", "build", ws / "market" / "quotes.csv", "-w", ws), "outside the workspace")


def test_out_through_a_folder_linked_out_of_the_workspace_is_refused(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws / "reports").symlink_to(elsewhere)
    assert_error(
        run("compare", "-f", "csv", "--out", ws / "reports" / "cmp.csv", "-w", ws, "--as-of", AS_OF),
        "outside the workspace",
    )
    assert list(elsewhere.iterdir()) == []
    # Outside any workspace, a path is the user's choice: written as asked.
    assert run("compare", "-f", "csv", "--out", elsewhere / "cmp.csv", "-w", ws, "--as-of", AS_OF).exit_code == 0


# --- imports: all offers or none ------------------------------------------------------------------------


def many_rows(tmp_path: Path, count: int) -> Path:
    lines = (DATA / "import_rfp.csv").read_text(encoding="utf-8").splitlines()
    header, delta = lines[0], lines[1]
    rows = [delta.replace("delta,Delta Cloud", f"imp{i:03d},Imported {i}", 1) for i in range(count)]
    path = tmp_path / "rfp.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_an_import_interrupted_while_writing_leaves_the_offers_as_they_were(workspace_copy, tmp_path, monkeypatch):
    ws = workspace_copy("basic")
    sheet = many_rows(tmp_path, 30)
    before = {p.name: p.read_bytes() for p in (ws / "offers").iterdir()}
    real_fsync, calls = os.fsync, [0]

    def failing_fsync(fd: int) -> None:
        calls[0] += 1
        if calls[0] == 12:  # the 12th file of 30: an interruption midway
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(KeyboardInterrupt):
        fileio.write_files_atomic(ws / "offers", {f"imp{i:03d}.yaml": "id: x\n" for i in range(30)})
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert {p.name: p.read_bytes() for p in (ws / "offers").iterdir()} == before
    assert [p.name for p in ws.iterdir() if p.name.startswith(".")] == []  # the staging folder went too
    import_offers(sheet, ws / "offers")
    assert len(list((ws / "offers").glob("imp*.yaml"))) == 30
    assert all(ws / "offers" / name for name in before)


@pytest.mark.slow
def test_an_import_killed_at_random_moments_writes_all_offers_or_none(workspace_copy, tmp_path):
    """An import of 120 offers killed (SIGKILL) at six moments from start-up to just after its last offer is
    written, one at a random point of each sixth of that span: before anything is written, while the offers
    are written beside the folder, at the swap into place and after. Stratified, six cover every stage of the
    run, which twelve moments drawn at random over the whole span did only by chance."""
    ws = workspace_copy("basic")
    sheet = many_rows(tmp_path, 120)
    original = sorted(p.name for p in (ws / "offers").iterdir())
    rng = random.Random(18)
    seen = set()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    command = [sys.executable, "-m", "procure", "import", str(sheet), "--out", str(ws / "offers"), "--force"]
    began = time.monotonic()  # one whole run, so that the kills fall at shares of it (this machine's pace)
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    whole = time.monotonic() - began
    for leftover in (ws / "offers").glob("imp*"):
        leftover.unlink()
    for attempt in range(6):
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep((0.1 + (attempt + rng.random()) / 6) * whole)  # in the attempt-th sixth of 0.1 to 1.1 runs
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        names = sorted(p.name for p in (ws / "offers").iterdir() if not p.name.startswith("."))
        imported = [n for n in names if n.startswith("imp")]
        assert len(imported) in (0, 120), f"attempt {attempt}: {len(imported)} of 120 offers written"
        assert [n for n in names if not n.startswith("imp")] == original
        seen.add(len(imported))
        for leftover in imported:  # start again from the original folder
            (ws / "offers" / leftover).unlink()
    # The next write in the same place removes what the killed runs left behind.
    assert run("import", sheet, "--out", ws / "offers").exit_code == 0
    assert [p.name for p in ws.iterdir() if p.name.startswith(".offers")] == []
    assert [p.name for p in (ws / "offers").iterdir() if p.name.startswith(".")] == []


# --- leftovers of killed runs: exactly ours, removed when their owner is gone --------------------------


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def leftover(folder: Path, name: str, pid: int) -> Path:
    """A temporary file exactly as a run with process id `pid` names it."""
    real_pid = os.getpid
    try:
        os.getpid = lambda: pid  # type: ignore[assignment]
        tmp = folder / fileio.temporary_name(name)
    finally:
        os.getpid = real_pid  # type: ignore[assignment]
    tmp.write_text("partial", encoding="utf-8")
    return tmp


def test_a_killed_runs_temporary_is_removed_by_the_next_write_in_the_folder_whatever_it_writes(
    workspace_copy, tmp_path
):
    ws = market_ws(workspace_copy)
    out = tmp_path / "out"
    out.mkdir()
    gone = leftover(out, "comparison.pdf", dead_pid())
    alive = leftover(out, "board.pdf", os.getppid())  # a live owner: still writing, kept
    assert run("rate", "-f", "csv", "--out", out / "ratings.csv", "-w", ws, "--as-of", AS_OF).exit_code == 0
    assert not gone.exists()
    assert alive.exists()


def test_only_names_this_tool_made_are_removed_even_with_a_glob_in_out(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    g = tmp_path / "g"
    g.mkdir()
    strangers = [
        g / ".bashrc.tmp",
        g / ".x.y.tmp",
        g / ".cache.1.2.tmp",
        g / f".report.pdf.{dead_pid()}.deadbeef.000000000000.tmp",
    ]
    for path in strangers:
        path.write_text("keep me", encoding="utf-8")
        os.utime(path, (0, 0))  # older than any age limit
    result = run("compare", "-f", "csv", "--out", str(g / "*"), "-w", ws, "--as-of", AS_OF)
    assert result.exit_code == 0, result.stderr
    assert all(p.read_text() == "keep me" for p in strangers)
    assert (g / "*").is_file()


def test_the_owner_recorded_in_a_temporary_name_cannot_be_forged():
    assert fileio.owner_of(fileio.temporary_name("x.csv")) == os.getpid()
    name = fileio.temporary_name("x.csv")
    forged = name.replace(f".{os.getpid()}.", ".1.")
    assert fileio.owner_of(forged) is None
    assert fileio.owner_of(".x.csv.tmp") is None and fileio.owner_of("x") is None


# --- modes ----------------------------------------------------------------------------------------------


def test_outputs_respect_the_umask_and_keep_an_existing_mode(workspace_copy, tmp_path):
    ws = market_ws(workspace_copy)
    new, kept = tmp_path / "new.csv", tmp_path / "kept.csv"
    kept.write_text("old", encoding="utf-8")
    kept.chmod(0o600)
    old = os.umask(0o077)
    try:
        assert run("compare", "-f", "csv", "--out", new, "-w", ws, "--as-of", AS_OF).exit_code == 0
        os.umask(0o022)
        assert run("compare", "-f", "csv", "--out", kept, "-w", ws, "--as-of", AS_OF).exit_code == 0
        os.umask(0o002)
        group = tmp_path / "group.csv"
        assert run("compare", "-f", "csv", "--out", group, "-w", ws, "--as-of", AS_OF).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(new.stat().st_mode) == 0o600  # 0666 & ~077
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # not widened to 0644
    assert stat.S_IMODE(group.stat().st_mode) == 0o664  # 0666 & ~002
    assert kept.read_text().startswith("rank,")


def test_imported_offers_respect_the_umask(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    old = os.umask(0o077)
    try:
        import_offers(DATA / "import_rfp.csv", ws / "offers")
    finally:
        os.umask(old)
    assert stat.S_IMODE((ws / "offers" / "delta.yaml").stat().st_mode) == 0o600
    shutil.rmtree(ws / "offers")
