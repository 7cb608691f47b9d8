"""Count the test functions that run the command line: directly, through a helper, or through a fixture.

Run: .venv/bin/python benchmarks/cli_share.py [--list] [tests folder]

Read from the test modules' source (ast), not from a run: a test function runs the command line when its body,
or a helper or fixture it uses, refers to one of
- typer's CliRunner, or procure.cli's `app` or `main` (an in-process run, as tests/clihelp.py's `run`);
- a command that starts `python -m procure` (a list holding "-m" then "procure", as `subprocess.run` is given).
A helper is any function or module constant of the tests folder (its own module's, or one imported from a helper
module such as clihelp.py) that refers to one of these or to another such helper; a fixture is a helper named as a
test's parameter (its own module's, or conftest.py's), also through `request.getfixturevalue("name")`. Each
`def test_...` counts once, however many cases it is parametrized with.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_MODULES = {"procure.cli", "procure.__main__"}
CLI_NAMES = {"app", "main"}


@dataclass
class Module:
    """One test or helper module: what each top-level name refers to, and where its imports come from."""

    name: str
    refers: dict[str, set[str]] = field(default_factory=dict)  # top-level name -> names its body refers to
    direct: set[str] = field(default_factory=set)  # top-level names that start the command line themselves
    fixtures: set[str] = field(default_factory=set)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (helper module, its name)
    tests: dict[str, set[str]] = field(default_factory=dict)  # test id -> names its body and parameters refer to


def _starts_procure(node: ast.AST) -> bool:
    """A list or tuple holding the constants "-m" then "procure": `python -m procure ...`."""
    for item in ast.walk(node):
        if isinstance(item, (ast.List, ast.Tuple)):
            values = [e.value if isinstance(e, ast.Constant) else None for e in item.elts]
            if any(a == "-m" and b == "procure" for a, b in zip(values, values[1:])):
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    """Every name a node refers to, with the fixtures it asks for by name (request.getfixturevalue("x"))."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr == "CliRunner"}
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "getfixturevalue":
            names |= {a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return names


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in node.decorator_list)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], bool]:
    arguments = {a.arg for a in node.args.args + node.args.kwonlyargs}
    usefixtures = {
        a.value
        for d in node.decorator_list
        if "usefixtures" in ast.unparse(d)
        for a in ast.walk(d)
        if isinstance(a, ast.Constant) and isinstance(a.value, str)
    }
    return _names(node) | arguments | usefixtures, _starts_procure(node)


def read(path: Path) -> Module:
    module = Module(path.stem)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module in CLI_MODULES and alias.name in CLI_NAMES or alias.name == "CliRunner":
                    module.direct.add(local)
                elif "." not in node.module and not node.module.startswith("procure"):
                    module.imported[local] = (node.module, alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            refers, direct = _function(node)
            if node.name.startswith("test_"):
                module.tests[node.name] = refers
                if direct:
                    module.tests[node.name].add("CliRunner")
                continue
            module.refers[node.name] = refers
            if direct:
                module.direct.add(node.name)
            if _is_fixture(node):
                module.fixtures.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    refers, direct = _function(item)
                    if item.name.startswith("test_") and node.name.startswith("Test"):
                        module.tests[f"{node.name}.{item.name}"] = refers | ({"CliRunner"} if direct else set())
                    else:  # a class's helper or fixture: the class is one of the module's helpers
                        module.refers.setdefault(node.name, set()).update(refers)
                        if direct:
                            module.direct.add(node.name)
                        if _is_fixture(item):
                            module.fixtures.add(item.name)
                            module.refers[item.name] = refers
                            if direct:
                                module.direct.add(item.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    module.refers.setdefault(name, set()).update(_names(node.value))
                    if _starts_procure(node.value):
                        module.direct.add(name)
    return module


def cli_tests(folder: Path) -> tuple[list[str], list[str]]:
    """(every test function's id, the ids of those that run the command line), ids as module::name."""
    modules = {p.stem: read(p) for p in sorted(folder.glob("*.py"))}
    runs: dict[tuple[str, str], bool] = {}

    def runs_cli(module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> bool:
        key = (module, name)
        if key in runs:
            return runs[key]
        if key in seen or module not in modules:
            return False
        this = modules[module]
        if name == "CliRunner" or name in this.direct:
            answer = True
        elif name in this.refers:
            answer = any(runs_cli(module, n, seen | {key}) for n in this.refers[name] if n != name)
        elif name in this.imported:
            answer = runs_cli(*this.imported[name], seen | {key})
        else:  # a fixture of conftest.py's
            answer = module != "conftest" and name in modules.get("conftest", Module("")).fixtures
            answer = answer and runs_cli("conftest", name, seen | {key})
        if not seen:
            runs[key] = answer
        return answer

    every, cli = [], []
    for name, module in modules.items():
        if not name.startswith("test_"):
            continue
        for test, refers in module.tests.items():
            every.append(f"{name}::{test}")
            if any(runs_cli(name, n) for n in refers):
                cli.append(f"{name}::{test}")
    return every, cli


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "tests")
    parser.add_argument("--list", action="store_true", help="name each test function that runs the command line")
    args = parser.parse_args()
    every, cli = cli_tests(args.folder)
    if args.list:
        print("\n".join(cli))
    print(f"test functions that run the command line: {len(cli)} of {len(every)} ({len(cli) / len(every):.0%})")


if __name__ == "__main__":
    main()
