"""render words and formats figures, and decides nothing (docs/architecture.md): no threshold on a figure and no
arithmetic on money or probabilities in procure/render. Read from the source: a comparison of a figure with a number
(a threshold: `share > 0.005`) and an addition, subtraction, product or quotient whose operand is named as money or a
probability (`cost_per_task * 1000`, `high - low`). procure/render/formats.py is the one way of writing a figure:
its magnitude choices (k, M) are how a figure is written, not a decision. Today's exceptions are listed with their
counts by function; each may only shrink, and nothing new may join."""

from __future__ import annotations

import ast
import re
from pathlib import Path

RENDER = Path(__file__).resolve().parent.parent / "procure" / "render"
# Figures of money or probability, by the names they go by in the code (a field, a variable, a metrics key).
MONEY = re.compile(
    r"cost|price|spend|rent|share|prob|odds|amount|payoff|saving|commitment|cash|fees|invoice|penalty|gap|premium|"
    r"impact|shortfall|likelihood|chance|overrun",
    re.I,
)
WRITING = {"formats.py"}  # the one way of writing a figure (money, counts, shares), magnitudes included
# (module:function): findings. Chart geometry: an axis's extent, a chart's size, the order of a tornado's bars.
EXCEPTIONS = {
    "charts.py:fit_width": 1,
    "charts.py:cost_curve": 1,
    "charts_ranges.py:tornado": 1,
}


def _named(node: ast.AST) -> str | None:
    """The name a figure goes by: a variable, an attribute, or a metrics key."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        key = node.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else _named(node.value)
    return None


def _text(node: ast.AST) -> bool:
    """Text or a list: `+` joins them, it computes nothing."""
    return isinstance(node, (ast.JoinedStr, ast.List)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def findings(source: str) -> list[tuple[str, int, str]]:
    """(function, line, code) for each threshold on a figure and each arithmetic on money or a probability."""
    found: list[tuple[str, int, str]] = []

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.function = ["<module>"]

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            self.function.append(node.name)
            self.generic_visit(node)
            self.function.pop()

        def visit_Compare(self, node: ast.Compare) -> None:
            sides = [node.left, *node.comparators]
            for side in sides:
                number = isinstance(side, ast.Constant) and type(side.value) in (int, float)
                if not number or side.value in (0, 1):  # type: ignore[attr-defined]  # empty, one (plurals)
                    continue
                others = " ".join(ast.unparse(s) for s in sides if s is not side)
                # a fraction is a threshold whatever it compares; a whole number only against a figure (a count of
                # columns or rows is layout)
                if isinstance(side.value, float) or MONEY.search(others):  # type: ignore[attr-defined]
                    found.append((self.function[-1], node.lineno, ast.unparse(node)))
            self.generic_visit(node)

        def visit_BinOp(self, node: ast.BinOp) -> None:
            operands = (node.left, node.right)
            if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)) and not any(map(_text, operands)):
                if any((name := _named(x)) and MONEY.search(name) for x in operands):
                    found.append((self.function[-1], node.lineno, ast.unparse(node)))
            self.generic_visit(node)

    Visitor().visit(ast.parse(source))
    return found


def render_findings() -> dict[str, list[str]]:
    by_function: dict[str, list[str]] = {}
    for path in sorted(RENDER.glob("*.py")):
        if path.name in WRITING:
            continue
        for function, line, code in findings(path.read_text(encoding="utf-8")):
            by_function.setdefault(f"{path.name}:{function}", []).append(f"line {line}: {code}")
    return by_function


def test_render_holds_no_thresholds_and_no_arithmetic_on_money_or_probabilities():
    found = render_findings()
    grown = [
        f"{key}: {'; '.join(codes)} (listed: {EXCEPTIONS.get(key, 0)})"
        for key, codes in found.items()
        if len(codes) > EXCEPTIONS.get(key, 0)
    ]
    assert not grown, "decide or compute these in analysis, and give render the result: " + " | ".join(grown)
    stale = [
        f"{key}: {n} listed, {len(found.get(key, []))} found"
        for key, n in EXCEPTIONS.items()
        if len(found.get(key, [])) < n
    ]
    assert not stale, "lower these exceptions to what is left: " + "; ".join(stale)


def test_the_check_sees_a_threshold_and_money_arithmetic_and_passes_words():
    source = """
def words(plan, rows, ev):
    if plan.expected_unused_share > 0.005:
        pass
    gap = plan.cost_per_task - plan.single_cost
    idle = ev.metrics["monthly_spend"] * 12
    if len(rows) > 2 or plan.gpus != 1:
        pass
    return "a" + f"{gap}" + ", ".join(rows), rows[1:] + rows[:1]
"""
    found = [(function, code) for function, _, code in findings(source)]
    assert found == [
        ("words", "plan.expected_unused_share > 0.005"),
        ("words", "plan.cost_per_task - plan.single_cost"),
        ("words", "ev.metrics['monthly_spend'] * 12"),
    ]
