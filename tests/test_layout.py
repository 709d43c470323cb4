"""The layout stays readable: rooms that follow the data flow, small modules, no cycles.

The import graph is read from the source (every ``import`` statement, the lazy ones
inside functions included), so a cycle that only bites on one code path is still found.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import harness
import implementations

MAX_LINES = 450
PACKAGES = (harness, implementations)


def _modules() -> dict[str, Path]:
    """Every module of the two packages -> its file."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        found[package.__name__] = Path(package.__file__)
        for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
            spec = importlib.util.find_spec(info.name)
            if spec is not None and spec.origin:
                found[info.name] = Path(spec.origin)
    return found


def _imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its file.

    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8")) if path.stat().st_size else ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        edges |= {target for target in targets if target in modules and target != name}
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first search meets, each from where it closed."""
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_every_module_imports_on_its_own() -> None:
    for name in _modules():
        if not name.endswith("__main__"):  # importing it runs the CLI
            importlib.import_module(name)


def test_the_import_graph_has_no_cycle() -> None:
    modules = _modules()
    graph = {name: _imports_of(name, path, modules) for name, path in modules.items()}
    assert sum(len(edges) for edges in graph.values()) > 100  # the graph was really read
    cycles = _cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    first = tmp_path / "first.py"
    second = tmp_path / "second.py"
    first.write_text("def f():\n    from pkg import second\n")
    second.write_text("from pkg.first import f\n")
    modules = {"pkg": tmp_path / "__init__.py", "pkg.first": first, "pkg.second": second}
    graph = {name: _imports_of(name, path, modules) for name, path in modules.items() if name != "pkg"}
    assert _cycles(graph) == [["pkg.first", "pkg.second", "pkg.first"]]


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_needs_a_table_of_contents(name: str) -> None:
    lines = _modules()[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it by idea (at most {MAX_LINES})"


def test_the_engine_top_level_is_the_contract_only() -> None:
    top = sorted(p.name for p in Path(harness.__file__).parent.glob("*.py"))
    assert len(top) <= 10, top
    rooms = {p.name for p in Path(harness.__file__).parent.iterdir() if (p / "__init__.py").is_file()}
    assert {"cases", "generate", "checks", "run", "report", "cli", "pytest"} <= rooms


def test_families_of_several_modules_are_folders() -> None:
    # a flat module named like a family's folder would be the old layout creeping back
    root = Path(implementations.__file__).parent
    folders = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    flat = [p.stem for p in root.glob("*.py") if p.stem != "__init__"]
    assert not [m for m in flat if any(m.startswith(f + "_") for f in folders)], flat
    assert {"bytebpe", "minbpe", "hf", "source"} <= folders
