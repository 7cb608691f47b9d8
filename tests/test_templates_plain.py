"""The report's templates format values they are given and compute nothing: no arithmetic in a Jinja expression, and
no test of an offer's pricing basis (a kind works out its own formulas and words: `Kind.formula_lines`,
`OfferRecord.formula_lines`). Read with Jinja's own parser, so that a formula's words in the page (its × and /) are
text and only expressions count."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow, nodes.Neg, nodes.Pos)

# Today's exceptions, by template and line, to shrink only: layout, not figures.
ALLOWED = {
    # the column count of the options table and the colspan of its pros-and-cons rows
    "board.html": [46, 46, 53, 53, 64, 71],
    # the last month before a delivery ("months 1-3"), from the plan's bridge
    "_plan.html": [28],
}


def arithmetic(tree: nodes.Template) -> list[int]:
    """The lines of every arithmetic operator in the template's expressions (a negative literal such as an index
    [-1] is a constant, not arithmetic)."""
    found = []
    for node in tree.find_all(ARITHMETIC):
        if isinstance(node, nodes.Neg) and isinstance(node.node, nodes.Const):
            continue
        found.append(node.lineno)
    return sorted(found)


def basis_tests(tree: nodes.Template) -> list[int]:
    """The lines where an expression compares a pricing basis."""
    found = []
    for node in tree.find_all(nodes.Compare):
        operands = [node.expr, *(op.expr for op in node.ops)]
        if any(isinstance(x, nodes.Getattr) and x.attr == "pricing_basis" for x in operands):
            found.append(node.lineno)
    return found


def parsed(path: Path) -> nodes.Template:
    return jinja2.Environment().parse(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(TEMPLATES.glob("*.html")), ids=lambda p: p.name)
def test_a_template_computes_nothing(path: Path):
    tree = parsed(path)
    assert arithmetic(tree) == ALLOWED.get(path.name, []), f"{path.name}: arithmetic in a Jinja expression"
    assert basis_tests(tree) == [], f"{path.name}: tests a pricing basis; ask the offer's kind"


def test_the_check_finds_what_it_forbids():
    env = jinja2.Environment()
    assert arithmetic(env.parse("{{ a * 100 }} {% set x = b - 1 %}{{ (c / d) | g }}")) == [1, 1, 1]
    assert arithmetic(env.parse('{{ xs[-1] }} {{ "4.00 × 1.10 / 12" }} {{ "{:+.0%}".format(r) }}')) == []
    assert basis_tests(env.parse('{% if o.pricing_basis == "owned" %}{% endif %}')) == [1]
    assert basis_tests(env.parse('{% if "index" != o.pricing_basis %}{% endif %}')) == [1]
