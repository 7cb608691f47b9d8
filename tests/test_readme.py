"""The README is a first page: under 15 KB, a table of contents, the order a user needs, and every
link to docs/ leads to a page that exists."""

from __future__ import annotations

import re
from pathlib import Path

from procure.io.example import write_example

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def headings(text: str, level: int) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"^{'#' * level} (.+)$", text, re.MULTILINE)]


def test_readme_is_under_15_kb():
    assert len(README.encode("utf-8")) < 15_000


def test_sections_come_in_the_order_a_user_needs():
    order = [
        "Contents",
        "Install",
        "Two commands",
        "Your own RFP",
        "Daily commands",
        "Re-evaluation in CI",
        "Reference",
    ]
    found = [next(i for i, h in enumerate(headings(README, 2)) if h.startswith(name)) for name in order]
    assert found == sorted(found)


def test_the_table_of_contents_links_every_section():
    contents = README.split("## Contents", 1)[1].split("\n## ", 1)[0]
    anchors = set(re.findall(r"\]\(#([^)]+)\)", contents))

    def anchor(title: str) -> str:  # GitHub's rule: lower case, punctuation dropped, spaces to dashes
        return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")

    for title in headings(README, 2)[1:]:
        assert anchor(title) in anchors, title


def test_every_docs_link_resolves():
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = document.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", text):
            if target.startswith("http"):
                continue
            assert (document.parent / target).is_file(), (document.name, target)


def test_stated_facts_match_the_project():
    assert "Python 3.11" in README  # pyproject: requires-python >= 3.11
    assert "3.10" not in README
    assert "--install-completion" in README


def test_the_readmes_whatif_example_shows_a_real_saving(tmp_path):
    """The example a reader copies must show what whatif is for: a saving, and a payback."""
    import json
    import re
    import shlex

    from clihelp import AS_OF, run

    line = next(ln for ln in README.splitlines() if ln.startswith("| `procure whatif --offer"))
    args = shlex.split(re.search(r"`procure (whatif[^`]*)`", line).group(1))
    ws = tmp_path / "ws"
    write_example(ws)  # what `procure init DIR --example` writes
    result = run(*args, "--format", "json", "--as-of", AS_OF, "-w", ws)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["monthly_saving"] > 0 and doc["after"]["cost_per_task"] < doc["before"]["cost_per_task"]
    assert doc["payback_months"] is not None and doc["payback_months"] < 12
