"""--out infers the format from its suffix unless --format says otherwise, and refuses a contradiction."""

from __future__ import annotations

import csv
import json
import zipfile

import pytest
from clihelp import AS_OF, assert_error, run


def compare(data_dir, *args):
    return run("compare", "-w", data_dir / "basic", "--as-of", AS_OF, *args)


def test_json_suffix_writes_json(data_dir, tmp_path):
    out = tmp_path / "cmp.json"
    assert compare(data_dir, "--out", out).exit_code == 0
    assert json.loads(out.read_text()) == json.loads(compare(data_dir, "-f", "json").stdout)


def test_csv_suffix_writes_csv(data_dir, tmp_path):
    out = tmp_path / "cmp.csv"
    assert compare(data_dir, "--out", out).exit_code == 0
    rows = list(csv.reader(out.open()))
    assert rows[0][0] == "rank" and "id" in rows[0]
    assert out.read_text() == compare(data_dir, "-f", "csv").stdout


def test_md_suffix_writes_markdown(data_dir, tmp_path):
    out = tmp_path / "cmp.md"
    assert compare(data_dir, "-o", out).exit_code == 0
    assert out.read_text() == compare(data_dir, "-f", "markdown").stdout


def test_xlsx_suffix_writes_a_workbook(data_dir, tmp_path):
    out = tmp_path / "cmp.xlsx"
    assert compare(data_dir, "--out", out).exit_code == 0
    assert zipfile.is_zipfile(out)


def test_html_suffix_writes_the_html_report(data_dir, tmp_path):
    out = tmp_path / "r.html"
    result = run("report", "-w", data_dir / "basic", "--as-of", AS_OF, "--out", out)
    assert result.exit_code == 0, result.stderr
    assert out.read_text().lstrip().lower().startswith("<!doctype html")


def test_unknown_suffix_keeps_the_default(data_dir, tmp_path):
    out = tmp_path / "cmp.txt"
    assert compare(data_dir, "--out", out).exit_code == 0
    assert "Cost per 1,000 successful tasks" in out.read_text()  # the table


def test_format_given_and_agreeing_with_the_suffix(data_dir, tmp_path):
    out = tmp_path / "cmp.json"
    assert compare(data_dir, "-f", "json", "--out", out).exit_code == 0
    json.loads(out.read_text())


@pytest.mark.parametrize(
    ("fmt", "name"), [("json", "cmp.csv"), ("csv", "cmp.json"), ("table", "cmp.md"), ("xlsx", "cmp.json")]
)
def test_a_contradiction_is_refused_and_nothing_written(data_dir, tmp_path, fmt, name):
    out = tmp_path / name
    assert_error(compare(data_dir, "-f", fmt, "--out", out), f"--format {fmt} contradicts --out")
    assert not out.exists()


def test_a_suffix_the_command_cannot_write_is_refused(data_dir, tmp_path):
    out = tmp_path / "ratings.xlsx"
    assert_error(run("rate", "-w", data_dir / "rated", "--out", out), "does not write xlsx")
    assert not out.exists()


def test_report_refuses_pdf_format_to_an_html_file(data_dir, tmp_path):
    out = tmp_path / "r.html"
    assert_error(run("report", "-w", data_dir / "basic", "-f", "pdf", "--out", out), "--format pdf contradicts")
    assert not out.exists()
