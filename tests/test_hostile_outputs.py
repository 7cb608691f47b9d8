"""Hostile output paths, fourth pass: no command puts a new file among the workspace's inputs, and no
file gets a format its suffix contradicts. Before, `compare --out offers/new.yaml`, `schema offer
--out grades/s.yaml` and `import --template offers/t.yaml` (a workbook in a .yaml file) exited 0, and
every later command failed on the new "offer" or "grade".

tests/data/market_ws is a workspace with offers/, grades/, performance/ and market/; actuals/ (measured
usage) is added here: its files are inputs as well.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clihelp import AS_OF, assert_error, run

INPUT_FOLDERS = ("offers", "grades", "performance", "market", "actuals")


@pytest.fixture
def ws(workspace_copy) -> Path:
    ws = workspace_copy("market_ws")
    (ws / "actuals").mkdir()
    return ws


def files(ws: Path) -> set[Path]:
    return {p for p in ws.rglob("*") if p.is_file() and ".procure" not in p.parts}


@pytest.mark.parametrize("folder", INPUT_FOLDERS)
def test_no_new_file_among_the_inputs(ws, folder, monkeypatch):
    before = files(ws)
    assert_error(
        run("compare", "-w", ws, "--as-of", AS_OF, "--out", ws / folder / "new.yaml"), "--out", f"inside {folder}/"
    )
    assert_error(
        run("compare", "-w", ws, "--as-of", AS_OF, "-f", "json", "--out", ws / folder / "sub" / "new.json"),
        f"inside {folder}/",
    )
    assert_error(run("schema", "offer", "--out", ws / folder / "s.yaml"), f"inside {folder}/")
    monkeypatch.chdir(ws)  # relative, as typed in the workspace
    assert_error(run("import", "--template", f"{folder}/t.xlsx"), f"inside {folder}/")
    assert files(ws) == before
    assert run("validate", "-w", ws).exit_code == 0


def test_a_workbook_is_never_written_under_a_text_suffix(ws, tmp_path):
    # Outside any workspace the path is the user's choice, but the bytes must be what its suffix says.
    for name in ("t.yaml", "t.csv.json", "t.md"):
        assert_error(run("import", "--template", tmp_path / name), name, "workbook", ".xlsx")
        assert not (tmp_path / name).exists()
    assert_error(run("compare", "-w", ws, "--as-of", AS_OF, "-f", "xlsx", "--out", tmp_path / "c.yaml"), "c.yaml")
    assert not (tmp_path / "c.yaml").exists()
    assert run("import", "--template", tmp_path / "t.xlsx").exit_code == 0
    assert (tmp_path / "t.xlsx").read_bytes()[:4] == b"PK\x03\x04"


def test_what_its_commands_exist_to_write_is_still_written(ws, tmp_path):
    # index build makes market/ files (an index-linked offer reads market/index.csv): a new one is fine.
    assert (
        run(
            "index", "build", ws / "market" / "quotes.csv", "-w", ws, "--out", ws / "market" / "index-long.csv"
        ).exit_code
        == 0
    )
    # Outside the input folders, a new output in the workspace is fine too.
    assert run("compare", "-w", ws, "--as-of", AS_OF, "-f", "json", "--out", ws / "reports" / "c.json").exit_code == 0
    assert (ws / "reports" / "c.json").read_text().startswith("{")
    # init writes a whole workspace, offers/ included.
    assert run("init", tmp_path / "fresh", "--example").exit_code == 0, os.listdir(tmp_path)
    assert any((tmp_path / "fresh" / "offers").glob("*.yaml"))


# --- a full temporary folder ------------------------------------------------------------------------


@pytest.mark.slow  # renders (the start of) a PDF
def test_a_full_temporary_folder_is_named_with_exit_2(data_dir, tmp_path, monkeypatch):
    # Finding: exit 1, "PDF rendering failed ... --format html writes the same report", as if
    # WeasyPrint were broken. The fonts WeasyPrint decodes are the first thing written to the
    # temporary folder; here writing them fails as on a full disk (ENOSPC), in every layout process.
    import errno
    import tempfile

    fonts = pytest.importorskip("weasyprint.text.fonts")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fonts.FontConfiguration, "add_font_face", full)
    target = tmp_path / "out" / "report.pdf"
    result = run("report", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", target)
    assert_error(result, tempfile.gettempdir(), "no space left in the temporary folder", "TMPDIR")
    assert "PDF rendering failed" not in result.stderr
    assert not target.exists()
