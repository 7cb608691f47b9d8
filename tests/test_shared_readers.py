"""The small readers several intake paths share: a number from a CSV cell, a problem at a field of a YAML file, the
tables of a Markdown text and the cache's folder with its key. Each is checked here on its own, with the messages a
user reads written out by hand."""

from __future__ import annotations

import stat

from procure.errors import Problem
from procure.io.cachekey import KEY_BYTES, folder_and_secret
from procure.io.tables import number
from procure.io.yamlsafe import load_yaml
from procure.textsafe import markdown_runs


def test_a_cell_that_is_no_number_is_named_with_its_file_line_and_column():
    problems: list[Problem] = []
    assert number("12.5", "actuals/x/metrics.csv", 3, "coverage", problems) == 12.5
    assert number("twelve", "actuals/x/metrics.csv", 4, "coverage", problems) is None
    assert number("nan", "actuals/x/metrics.csv", 5, "coverage", problems) is None
    assert number("-inf", "actuals/x/metrics.csv", 6, "coverage", problems) is None
    assert problems == [
        Problem("actuals/x/metrics.csv", 4, "coverage", "must be a number (got 'twelve')"),
        Problem("actuals/x/metrics.csv", 5, "coverage", "must be a finite number (got nan)"),
        Problem("actuals/x/metrics.csv", 6, "coverage", "must be a finite number (got -inf)"),
    ]


def test_a_long_cell_is_quoted_by_its_first_characters_when_asked():
    problems: list[Problem] = []
    raw = "x" * 50
    assert number(raw, "f.csv", 2, "amount", problems, quoted=40) is None
    assert number(raw, "f.csv", 3, "amount", problems) is None
    assert problems[0].message == "must be a number (got '" + "x" * 40 + "')"
    assert problems[1].message == "must be a number (got '" + "x" * 50 + "')"


def test_a_caller_that_words_its_own_range_gets_an_infinite_number_back():
    problems: list[Problem] = []
    assert number("inf", "f.csv", 2, "ttft_s", problems, finite=False) == float("inf")
    assert problems == []


def test_a_problem_at_a_field_names_its_line_or_its_parents_when_it_is_missing(tmp_path):
    path = tmp_path / "offer.yaml"
    path.write_text("id: a\npricing:\n  currency: USD\n  fees:\n    - {name: x, once: 1}\n", encoding="utf-8")
    doc = load_yaml(path, "offers/offer.yaml")
    assert doc.problem(("pricing", "currency"), "bad") == Problem("offers/offer.yaml", 3, "pricing.currency", "bad")
    assert doc.problem(("pricing", "fees", 0, "once"), "bad") == Problem(
        "offers/offer.yaml", 5, "pricing.fees[0].once", "bad"
    )
    # gpu_hour is not in the file: the line of pricing, its parent
    assert doc.problem(("pricing", "gpu_hour"), "missing") == Problem(
        "offers/offer.yaml", 2, "pricing.gpu_hour", "missing"
    )


def test_markdown_tables_are_gathered_and_other_lines_kept_one_by_one():
    lines = ["# T", "", "| a | b |", "|---|---|", "| 1 | 2 |", "text", "| c |"]
    assert list(markdown_runs(lines)) == ["# T", "", ["| a | b |", "|---|---|", "| 1 | 2 |"], "text", ["| c |"]]
    assert list(markdown_runs([])) == []


def test_the_cache_off_makes_no_key_and_on_it_gives_the_users_own(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("PROCURE_CACHE_DIR", "")
    assert folder_and_secret() is None
    assert not (tmp_path / "state").exists()  # off: no key is made
    monkeypatch.setenv("PROCURE_CACHE_DIR", str(tmp_path / "cache"))
    found = folder_and_secret()
    assert found is not None
    where, key = found
    assert where == tmp_path / "cache" and len(key) == KEY_BYTES == 32
    key_file = tmp_path / "state" / "procure" / "cache-key"
    assert key_file.read_bytes() == key and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert folder_and_secret() == (where, key)  # the same key the next time
