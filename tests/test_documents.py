"""Report plumbing: where templates come from, what WeasyPrint may fetch, deterministic charts."""

import fnmatch
import tomllib
from datetime import date
from pathlib import Path

import pytest

from procure.evaluate import evaluate
from procure.render import charts
from procure.render.documents import _restricted_fetcher, render_html, report_date, templates_dir
from procure.workspace import load_workspace

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def evaluation(data_dir):
    return evaluate(load_workspace(data_dir / "basic"), date(2026, 11, 29))


def test_templates_found_from_the_checkout():
    assert templates_dir() == ROOT / "templates"


def test_every_template_file_is_packaged_in_the_wheel():
    """The wheel carries templates/ as procure/templates: every file must match a package-data pattern."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["procure.templates"] == "templates"
    patterns = config["package-data"]
    for path in (ROOT / "templates").rglob("*"):
        if path.is_file():
            rel = path.relative_to(ROOT / "templates")
            package = ".".join(["procure", "templates", *rel.parts[:-1]])
            assert package in config["packages"], package
            assert any(fnmatch.fnmatch(rel.name, p) for p in patterns.get(package, [])), rel


def test_fetcher_serves_only_the_templates_folder(tmp_path):
    folder = templates_dir()
    fetcher = _restricted_fetcher(folder)
    font = next((folder / "fonts").glob("*.woff"))
    response = fetcher.fetch(font.as_uri())
    assert response is not None
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    for url in (outside.as_uri(), "file:///etc/passwd", (folder / ".." / "README.md").as_uri(), "http://example.invalid/x.css", "data:text/plain,hi"):
        with pytest.raises(ValueError, match="blocked"):
            fetcher.fetch(url)


def test_report_date_honours_source_date_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert report_date().date() == date(1970, 1, 1)


def test_charts_are_deterministic_svg_with_text_in_the_body_font(evaluation):
    first = charts.cost_curve(evaluation, highlight="bravo")
    assert first == charts.cost_curve(evaluation, highlight="bravo")
    assert first.startswith("<svg") and "<image" not in first
    # Labels are text in the report's typeface, not glyph outlines in another one.
    assert "<text" in first and "font-family: 'Source Sans 3'" in first and "glyph" not in first
    assert "dc:date" not in first.lower()
    matrix = charts.responsibility_matrix(evaluation)
    assert "<image" not in matrix  # vector cells, nothing for WeasyPrint to fetch


def test_html_is_self_contained(evaluation):
    html = render_html(evaluation, "comparison")
    assert "<link" not in html and "<script" not in html
    assert html.count("<svg") == 4
    assert 'href="#offer-alpha"' in html and 'id="offer-alpha"' in html
