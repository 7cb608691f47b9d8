"""Hostile paths: links out of the workspace, special files, offer ids that look like paths, and
output paths that are missing, read-only, a file's child or an input.

Every case ends in a clear error (exit 2, the file named, no traceback, nothing written) or a safe
result (the output written where it was asked for, and nowhere else). An offer linked outside the
workspace is refused by validate, compare and report at the command line; the other links are checked
on the problems the workspace's loader raises, in process (tests/refusals.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from clihelp import assert_error, run
from refusals import refused, validate

OFFER = "offers/alpha.yaml"
SECRET = "OUTSIDE-SECRET-7f3a9c"  # text of files outside the workspace: must never reach an output


def outside_offer(folder: Path) -> Path:
    """A well-formed offer outside the workspace whose vendor name is the secret."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (Path(__file__).parent / "data" / "basic" / OFFER).read_text(encoding="utf-8")
    path = folder / "outside.yaml"
    path.write_text(
        text.replace("id: alpha", "id: outside").replace("vendor: Alpha Cloud", f"vendor: {SECRET}"), encoding="utf-8"
    )
    return path


def _limit_memory() -> None:
    """A hanging reader of /dev/zero must not take the machine's memory with it: 2 GB of address space."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


def run_cli(ws: Path, *args: str, timeout: float) -> subprocess.CompletedProcess | None:
    """procure in a subprocess (for cases that may hang); None when it did not finish in time."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "procure", *args, "-w", str(ws)],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return None


# --- links out of the workspace ---------------------------------------------------------------------


@pytest.mark.parametrize("relative", [False, True], ids=["absolute-link", "relative-link"])
def test_offer_linked_outside_the_workspace_is_refused_and_never_read(workspace_copy, tmp_path, relative):
    ws = workspace_copy("basic")
    target = outside_offer(tmp_path / "elsewhere")
    link = ws / "offers" / "linked.yaml"
    link.symlink_to(os.path.relpath(target, link.parent) if relative else target)
    out = tmp_path / "out" / "cmp.json"
    page = tmp_path / "out" / "report.html"
    for args in (
        ("validate",),
        ("compare", "--format", "json", "--out", str(out)),
        ("report", "--format", "html", "--out", str(page)),
    ):
        result = run(*args, "-w", ws)
        stderr = assert_error(result, "offers/linked.yaml", "outside the workspace")
        assert SECRET not in result.stdout + stderr
    assert not out.exists() and not page.exists()


def test_offer_linked_through_an_inner_link_to_the_outside_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    target = outside_offer(tmp_path / "elsewhere")
    (ws / "links").mkdir()
    (ws / "links" / "hop.yaml").symlink_to(target)
    (ws / "offers" / "chained.yaml").symlink_to(ws / "links" / "hop.yaml")
    stderr = refused(validate(ws), "offers/chained.yaml", "outside the workspace")
    assert SECRET not in stderr


def test_offers_folder_linked_outside_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    outside = tmp_path / "elsewhere"
    outside_offer(outside)
    for path in (ws / "offers").iterdir():
        path.rename(outside / path.name)
    (ws / "offers").rmdir()
    (ws / "offers").symlink_to(outside, target_is_directory=True)
    stderr = refused(validate(ws), "outside the workspace")
    assert SECRET not in stderr


def test_grade_linked_outside_the_workspace_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    grade = ws / "grades" / "T-BM.yaml"
    (outside / "T-BM.yaml").write_text(
        grade.read_text(encoding="utf-8").replace("Test bare metal", SECRET), encoding="utf-8"
    )
    grade.unlink()
    grade.symlink_to(outside / "T-BM.yaml")
    stderr = refused(validate(ws), "grades/T-BM.yaml", "outside the workspace")
    assert SECRET not in stderr


def test_link_inside_the_workspace_is_followed(workspace_copy):
    """A safe result: a link that stays inside the workspace is an ordinary input (here a duplicate id)."""
    ws = workspace_copy("basic")
    (ws / "offers" / "again.yaml").symlink_to("alpha.yaml")
    refused(validate(ws), "offers/again.yaml", "duplicate offer id 'alpha'")


def test_dangling_link_is_reported(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    (ws / "offers" / "gone.yaml").symlink_to(ws / "offers" / "nowhere.yaml")
    refused(validate(ws), "offers/gone.yaml")


def test_folder_named_like_an_offer_is_reported(workspace_copy):
    ws = workspace_copy("basic")
    (ws / "offers" / "folder.yaml").mkdir()
    refused(validate(ws), "offers/folder.yaml")


def test_curve_linked_outside_the_workspace_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    secret = tmp_path / "secret.csv"
    secret.write_text(f"{SECRET},password\nroot,hunter2\n", encoding="utf-8")
    (ws / "performance" / "stolen.csv").symlink_to(secret)
    stderr = refused(validate(ws), "performance/stolen.csv")
    assert SECRET not in stderr
    assert "outside the workspace" in stderr


def test_index_linked_outside_the_workspace_is_refused(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    outside = tmp_path / "index.csv"
    outside.write_text("date,price\n2026-11-01,99.00\n", encoding="utf-8")
    (ws / "market" / "index.csv").unlink()
    (ws / "market" / "index.csv").symlink_to(outside)
    refused(validate(ws), "market/index.csv", "outside the workspace")


def test_offer_that_is_a_fifo_is_refused_without_hanging(workspace_copy):
    ws = workspace_copy("basic")
    os.mkfifo(ws / "offers" / "pipe.yaml")
    done = run_cli(ws, "validate", timeout=30)
    assert done is not None, "validate hung reading a FIFO"
    assert done.returncode == 2 and "offers/pipe.yaml" in done.stderr and "Traceback" not in done.stderr


def test_curve_linked_to_a_device_is_refused_without_hanging(workspace_copy):
    ws = workspace_copy("basic")
    (ws / "performance" / "zero.csv").symlink_to("/dev/zero")
    done = run_cli(ws, "validate", timeout=30)
    assert done is not None, "validate hung reading /dev/zero"
    assert done.returncode == 2 and "performance/zero.csv" in done.stderr


def test_offer_linked_to_a_device_is_refused(workspace_copy):
    ws = workspace_copy("basic")
    (ws / "offers" / "zero.yaml").symlink_to("/dev/zero")
    refused(validate(ws), "offers/zero.yaml", "outside the workspace")


# --- offer ids that look like paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "offer_id",
    [
        "../../etc/passwd",
        "..",
        "../alpha",
        "a/b",
        "/etc/passwd",
        "a\\\\b",
        ".hidden",
        "-rf",
        "a b",
        "alpha\\n",
        "",
        "é",
        "a" * 81,
        "C:\\\\evil",
    ],
    ids=[
        "dotdot-path",
        "dotdot",
        "dotdot-sibling",
        "slash",
        "absolute",
        "backslash",
        "hidden",
        "option",
        "space",
        "newline",
        "empty",
        "non-ascii",
        "too-long",
        "drive",
    ],
)
def test_offer_id_with_path_characters_is_refused_by_the_pattern(workspace_copy, tmp_path, offer_id):
    ws = workspace_copy("basic")
    path = ws / OFFER
    path.write_text(path.read_text(encoding="utf-8").replace("id: alpha", f'id: "{offer_id}"'), encoding="utf-8")
    out = tmp_path / "out" / "report.html"
    stderr = assert_error(run("report", "--format", "html", "--out", out, "-w", ws), f"{OFFER}:1: id:")
    assert "pattern" in stderr or "must" in stderr or "at most" in stderr or "characters" in stderr, stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "command", [("grade", "--explain"), ("whatif",), ("hedge", "--offer"), ("position", "--current-offer")]
)
def test_path_like_offer_id_on_the_command_line_is_an_unknown_offer(workspace_copy, command):
    ws = workspace_copy("basic")
    args = (*command, "../../etc/passwd") + (("--price", "-5%") if command == ("whatif",) else ())
    stderr = assert_error(run(*args, "-w", ws), "../../etc/passwd")
    assert "root:" not in stderr


def test_diff_of_a_file_that_is_not_an_evaluation_shows_none_of_its_text(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}: hunter2\n", encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    for base, head in ((secret, other), (other, secret), (tmp_path / "missing.json", other)):
        stderr = assert_error(
            run("diff", base, head, "-w", ws),
            "not an Evaluation" if base != tmp_path / "missing.json" else "missing.json",
        )
        assert "hunter2" not in stderr


# --- output paths ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, name",
    [
        (("compare", "--format", "csv"), "cmp.csv"),
        (("compare", "--format", "xlsx"), "cmp.xlsx"),
        (("grade", "--format", "json"), "grades.json"),
        (("report", "--format", "html"), "report.html"),
    ],
    ids=["csv", "xlsx", "grade-json", "report-html"],
)
def test_output_in_missing_folders_is_written_creating_them(workspace_copy, tmp_path, args, name):
    ws = workspace_copy("basic")
    out = tmp_path / "a" / "b" / "c" / name
    result = run(*args, "--out", out, "-w", ws)
    assert result.exit_code == 0, result.stderr
    assert out.is_file() and out.stat().st_size > 0
    assert sorted(p.name for p in out.parent.iterdir()) == [name], "a temporary file was left beside the output"


def test_output_in_a_read_only_folder_is_an_error(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        probe = folder / ".probe"
        try:
            probe.write_text("x")
        except PermissionError:
            pass
        else:
            probe.unlink()
            pytest.skip(
                "the tests run as root (or with CAP_DAC_OVERRIDE), who can write into a 0o555 folder: a read-only "
                "folder cannot be simulated"
            )
        out = folder / "cmp.csv"
        assert_error(run("compare", "--format", "csv", "--out", out, "-w", ws), "cmp.csv", "cannot write here")
        assert not out.exists() and list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


BELOW_A_FILE = [
    (0, ("compare", "--format", "csv")),
    (2, ("compare", "--format", "csv")),
    (0, ("compare", "--format", "xlsx")),
    (2, ("grade", "--format", "json")),
    (0, ("report", "--format", "html")),
]


@pytest.mark.parametrize(
    "depth, args", BELOW_A_FILE, ids=[f"{a[0]}-{a[-1]}-{'parent' if d == 0 else 'ancestor'}" for d, a in BELOW_A_FILE]
)
def test_output_below_a_file_is_an_error(workspace_copy, tmp_path, depth, args):
    ws = workspace_copy("basic")
    blocker = tmp_path / "blocker"
    blocker.write_text("keep me\n", encoding="utf-8")
    out = blocker.joinpath(*["sub"] * depth, "out.file")
    assert_error(run(*args, "--out", out, "-w", ws), "is a file, not a folder")
    assert blocker.read_text(encoding="utf-8") == "keep me\n"


def test_output_that_is_a_folder_is_an_error(workspace_copy, tmp_path):
    ws = workspace_copy("basic")
    (tmp_path / "folder").mkdir()
    result = run("report", "--format", "html", "--out", tmp_path / "folder", "-w", ws)
    assert result.exit_code == 2 and "Traceback" not in result.stdout + result.stderr
    assert "folder" in result.stderr or "directory" in result.stderr
    assert list((tmp_path / "folder").iterdir()) == []


def test_output_link_is_replaced_not_written_through(workspace_copy, tmp_path):
    """A safe result: --out naming a link to a file replaces the link, the linked file is untouched."""
    ws = workspace_copy("basic")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    link = tmp_path / "out.csv"
    link.symlink_to(victim)
    result = run("compare", "--format", "csv", "--out", link, "-w", ws)
    assert result.exit_code == 0, result.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not link.is_symlink() and link.read_text(encoding="utf-8").startswith("rank,")


@pytest.mark.parametrize("target", [OFFER, "procure.yaml"])
def test_output_over_an_input_file_is_refused(workspace_copy, target):
    ws = workspace_copy("basic")
    before = (ws / target).read_bytes()
    result = run("compare", "--format", "csv", "--out", ws / target, "-w", ws)
    assert (ws / target).read_bytes() == before, f"{target} was overwritten"
    assert_error(result, target)


@pytest.mark.parametrize("kind", ["fifo", "device", "link-to-dev-null"])
def test_output_to_a_special_file_never_replaces_it(workspace_copy, tmp_path, kind):
    """`--out /dev/null` run as root must not replace /dev/null: modelled in tmp_path by a FIFO, a
    device node of our own, and a link to /dev/null (a faulty write replaces the link, not the device)."""
    ws = workspace_copy("basic")
    special = tmp_path / "special"
    if kind == "fifo":
        os.mkfifo(special)
        reader = os.open(special, os.O_RDONLY | os.O_NONBLOCK)  # so that a writer does not block
        check = stat.S_ISFIFO
    elif kind == "device":
        try:
            os.mknod(special, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
        except (PermissionError, OSError) as exc:
            pytest.skip(f"cannot create a device node here: {exc}")
        check = stat.S_ISCHR
        reader = None
    else:
        special.symlink_to("/dev/null")
        check = stat.S_ISLNK
        reader = None
    try:
        result = run("compare", "--format", "csv", "--out", special, "-w", ws)
        assert check(os.lstat(special).st_mode), f"the {kind} was replaced by a regular file"
        assert result.exit_code in (0, 2)
    finally:
        if reader is not None:
            os.close(reader)
