"""The package's layers (docs/architecture.md): a module imports only its own layer and the layers below,
and no modules import each other in a loop. Read from the source, every import counted, those inside
functions included: an import deferred for start-up speed is still a dependency."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "procure"

# Bottom to top. The shared base (exit statuses, located errors, text from outside) is below everything.
LAYERS = [
    ("base", ["procure", "procure.status", "procure.errors", "procure.textsafe", "procure.environment"]),
    ("model", ["procure.model"]),
    ("io", ["procure.io"]),
    ("analysis", ["procure.analysis"]),
    ("render", ["procure.render"]),
    ("cli", ["procure.cli"]),
    ("entry", ["procure.__main__", "procure.front"]),
]


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


MODULES = module_names()


def layer_of(module: str) -> int:
    """The layer a module belongs to: the longest prefix that names one."""
    best, found = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    assert found is not None, f"{module} is on no layer: add it to LAYERS and docs/architecture.md"
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines inside `if TYPE_CHECKING:` blocks: names for annotations, never imported when the code runs."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def imports_of(module: str) -> list[tuple[str, int, bool]]:
    """(imported procure module, line, only for type checking) for every import in the module."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _type_checking_lines(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            if target in MODULES and target != module:
                found.append((target, node.lineno, node.lineno in typing_only))
    return found


def test_every_module_is_on_a_layer():
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module):
    mine = layer_of(module)
    upward = [
        f"{MODULES[module].name}:{line} imports {target} ({LAYERS[layer_of(target)][0]})"
        for target, line, _ in imports_of(module)
        if layer_of(target) > mine
    ]
    assert not upward, f"{module} ({LAYERS[mine][0]}) may import only its own layer and those below: " + "; ".join(
        upward
    )


def test_no_import_cycles():
    graph = {m: sorted({t for t, _, typing_only in imports_of(m) if not typing_only}) for m in MODULES}
    cycles, state, stack = [], dict.fromkeys(graph, 0), []  # 0 new, 1 on the path, 2 done

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state[nxt] == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif state[nxt] == 0:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if state[module] == 0:
            visit(module)
    assert not cycles, "modules that import each other: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checks_see_an_upward_import_and_a_cycle(tmp_path, monkeypatch):
    """The test above would pass on a tree it cannot read; here it reads two made-up modules that break both rules."""
    fake = tmp_path / "procure"
    (fake / "model").mkdir(parents=True)
    (fake / "render").mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "model" / "__init__.py").write_text("")
    (fake / "render" / "__init__.py").write_text("")
    (fake / "model" / "low.py").write_text("def f():\n    from procure.render import high\n")
    (fake / "render" / "high.py").write_text("from procure.model import low\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    monkeypatch.setattr(sys.modules[__name__], "MODULES", module_names())
    assert ("procure.render.high", 2, False) in imports_of("procure.model.low")
    with pytest.raises(AssertionError, match="imports procure.render.high"):
        test_no_module_imports_a_higher_layer("procure.model.low")
    with pytest.raises(AssertionError, match="procure.model.low -> procure.render.high -> procure.model.low"):
        test_no_import_cycles()


def test_docs_name_every_module_in_its_layers_row():
    """docs/architecture.md's table names each module in its package's row (the plan's steps in docs/plan.md),
    so the page a newcomer reads first keeps up with the tree."""
    docs = PACKAGE.parent / "docs"
    rows = {}
    for line in (docs / "architecture.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `procure"):
            rows[line.split("`")[1].rstrip("/")] = line
    plan_page = (docs / "plan.md").read_text(encoding="utf-8")
    unnamed = []
    for path in MODULES.values():
        if path.name == "__init__.py":
            continue
        package = path.parent.relative_to(PACKAGE.parent).as_posix()
        where = plan_page if package == "procure/analysis/plan" else rows.get(package, "")
        if f"`{path.name}`" not in where:
            unnamed.append(path.relative_to(PACKAGE.parent).as_posix())
    assert not unnamed, f"name these in docs/architecture.md (their package's row) or docs/plan.md: {unnamed}"


# Functions a render module may import from analysis: words, not figures. Each writes a figure the way analysis's own
# sentences write it (one wording for both), so it lives below render; none computes a figure.
RENDER_MAY_CALL = {
    ("procure.analysis.recommendation", "gpus_words"): "the ask's GPUs in words, as the recommendation's lines read",
    (
        "procure.analysis.recommendation",
        "months_words",
    ): "the ask's months in words, as the recommendation's lines read",
    ("procure.analysis.recommendation", "price_words"): "the ask's price in words, as the recommendation's lines read",
    ("procure.analysis.scorecard", "percent_or_no_data"): "a share as the scorecard and the credit claims write it",
}


def imported_names(module: str) -> list[tuple[str, str, int]]:
    """(analysis module, name, line) for every `from procure.analysis... import name` in the module, deferred and
    type-checking imports included; a whole analysis module imported is reported with the name '*'."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("procure.analysis"):
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                found.append(
                    (target, "*", node.lineno) if target in MODULES else (node.module, alias.name, node.lineno)
                )
        elif isinstance(node, ast.Import):
            found += [(a.name, "*", node.lineno) for a in node.names if a.name.startswith("procure.analysis")]
    return found


def computes(value: object) -> bool:
    """A function or other callable that is neither a class nor a type alias (`A | B`, `list[A]`)."""
    import inspect
    import typing

    return callable(value) and not inspect.isclass(value) and typing.get_origin(value) is None


RENDER_MODULES = sorted(m for m in MODULES if layer_of(m) == [name for name, _ in LAYERS].index("render"))


@pytest.mark.parametrize("module", RENDER_MODULES)
def test_render_imports_from_analysis_only_types(module):
    """Render formats figures and never computes one (docs/architecture.md): from analysis it takes the documents'
    result types and constants, never a function that computes (the few word functions above excepted)."""
    import importlib

    wrong = []
    for source, name, line in imported_names(module):
        if name == "*":
            wrong.append(f"{MODULES[module].name}:{line} imports the module {source}")
            continue
        value = getattr(importlib.import_module(source), name)
        if computes(value) and (source, name) not in RENDER_MAY_CALL:
            wrong.append(f"{MODULES[module].name}:{line} imports the function {source}.{name}")
    assert not wrong, "render takes figures from analysis results, not by calling analysis: " + "; ".join(wrong)


def test_the_render_check_sees_a_function_and_passes_a_type(tmp_path, monkeypatch):
    """The check above would pass on a tree it cannot read; here it reads a made-up render module that imports a
    result type, a type alias, a constant and a function from analysis: only the function is refused."""
    fake = tmp_path / "procure"
    (fake / "render").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "render" / "__init__.py").write_text("")
    (fake / "render" / "page.py").write_text(
        "from procure.analysis.report import LazyExtras, ReportExtras\n"
        "from procure.analysis.hedging import PLAN_HEDGE_ID\n"
        "def f():\n    from procure.analysis.memo import memo_figures\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {**MODULES, **module_names()})
    assert [n for _, n, _ in imported_names("procure.render.page")] == [
        "LazyExtras",
        "ReportExtras",
        "PLAN_HEDGE_ID",
        "memo_figures",
    ]
    with pytest.raises(AssertionError, match=r"page.py:4 imports the function procure.analysis.memo.memo_figures\n"):
        test_render_imports_from_analysis_only_types("procure.render.page")


def render_models(module: str) -> list[str]:
    """The classes a module defines on pydantic's BaseModel."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any((b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")) == "BaseModel" for b in node.bases)
    ]


@pytest.mark.parametrize("module", RENDER_MODULES)
def test_render_defines_no_document_models(module):
    """Render words and formats: the documents it fills are analysis's (the board memo's in
    procure/analysis/memo_document.py); only render/schemas.py, which writes the JSON Schemas, defines models."""
    if module == "procure.render.schemas":
        return
    assert not render_models(module), f"{module} defines document models: move them to analysis"


def test_the_model_check_sees_a_model(tmp_path, monkeypatch):
    fake = tmp_path / "procure"
    (fake / "render").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "render" / "__init__.py").write_text("")
    (fake / "render" / "page.py").write_text(
        "import pydantic\nfrom pydantic import BaseModel\nclass A(BaseModel):\n    x: int\n"
        "class B(pydantic.BaseModel):\n    y: int\nclass C:\n    pass\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {**MODULES, **module_names()})
    assert render_models("procure.render.page") == ["A", "B"]


# The size limits docs/architecture.md states: no function over MAX_FUNCTION lines, no module over MAX_MODULE. Today's
# exceptions are listed with their sizes: one may shrink (and leave the list when under the limit), never grow, and
# nothing new may join. The lists are to be emptied.
MAX_FUNCTION, MAX_MODULE = 80, 800
LONG_FUNCTIONS: dict[str, int] = {}
LONG_MODULES: dict[str, int] = {}


def _sizes() -> tuple[dict[str, int], dict[str, int]]:
    functions, modules = {}, {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE.parent).as_posix()
        modules[name] = len(source.splitlines())
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{name}:{node.name}"
                functions[key] = max(functions.get(key, 0), node.end_lineno - node.lineno + 1)  # type: ignore[operator]
    return functions, modules


def test_no_function_or_module_outgrows_the_stated_limits():
    """docs/architecture.md: functions of at most 80 lines, modules of at most 800; the listed exceptions only
    shrink."""
    functions, modules = _sizes()
    grown = [
        f"{k}: {n} lines (limit {LONG_FUNCTIONS.get(k, MAX_FUNCTION)})"
        for k, n in functions.items()
        if n > LONG_FUNCTIONS.get(k, MAX_FUNCTION)
    ] + [
        f"{k}: {n} lines (limit {LONG_MODULES.get(k, MAX_MODULE)})"
        for k, n in modules.items()
        if n > LONG_MODULES.get(k, MAX_MODULE)
    ]
    assert not grown, "split these (or shrink them to their listed size): " + "; ".join(grown)
    # a listed exception that no longer exists or is now within the limit leaves the list
    stale = [k for k in LONG_FUNCTIONS if functions.get(k, 0) <= MAX_FUNCTION] + [
        k for k in LONG_MODULES if modules.get(k, 0) <= MAX_MODULE
    ]
    assert not stale, f"remove from the lists: {stale}"
