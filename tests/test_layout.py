"""The layout stays readable: rooms that follow the data flow, small modules, no cycles.

The import graph is read from the source (every ``import`` statement, the lazy ones
inside functions included), so a cycle that only bites on one code path is still found.
Layers point down only: subpackages form no cycle either, the engine (``harness``) never
imports an adapter family (``implementations``), a family imports only the engine's public
modules (:data:`PUBLIC_MODULES`), and only the front doors
(``harness.cli``, ``harness.pytest``) see ``argparse`` or ``pytest``.
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


def _room(name: str, modules: dict[str, Path]) -> str:
    """The subpackage a module lives in (``harness.run``), or the module itself for one at a top."""
    parts = name.split(".")
    if len(parts) >= 2 and modules.get(".".join(parts[:2]), Path()).name == "__init__.py":
        return ".".join(parts[:2])
    return name


def _room_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        room = _room(name, modules)
        graph.setdefault(room, set()).update(
            other for target in _imports_of(name, path, modules) if (other := _room(target, modules)) != room)
    return graph


def _engine_imports_families(modules: dict[str, Path], *, engine: str = "harness",
                             families: str = "implementations") -> list[str]:
    """Every ``engine`` module that imports a ``families`` module, as ``a -> b``."""
    return sorted(f"{name} -> {target}" for name, path in modules.items() if name.split(".")[0] == engine
                  for target in _imports_of(name, path, modules) if target.split(".")[0] == families)


#: what an adapter family may import from the engine (docs/engine.md, "Layers and registry
#: hooks"): the contract, the vocabularies and encodings it reads, the fixtures its
#: arguments resolve through, and harness.remote for workers and environments
PUBLIC_MODULES = frozenset({
    "harness", "harness.interface", "harness.outcomes", "harness.registry", "harness.vocab", "harness.atomic",
    "harness.provenance", "harness.encodings", "harness.encodings.ranks", "harness.cases.fixtures", "harness.remote",
    "harness.cases.yaml_source",
})


def _family_internal_imports(modules: dict[str, Path], *, public: frozenset[str] = PUBLIC_MODULES,
                             engine: str = "harness", families: str = "implementations") -> list[str]:
    """Every ``families`` module that imports an ``engine`` module outside ``public``, as ``a -> b``."""
    return sorted(f"{name} -> {target}" for name, path in modules.items() if name.split(".")[0] == families
                  for target in _imports_of(name, path, modules)
                  if target.split(".")[0] == engine and target not in public)


#: the only rooms that may see how a run was asked for
FRONT_DOORS = ("harness.cli", "harness.pytest")
FRONT_DOOR_LIBRARIES = frozenset({"argparse", "pytest", "_pytest"})


def _front_door_imports(modules: dict[str, Path], *, front_doors: tuple[str, ...] = FRONT_DOORS) -> list[str]:
    """Modules below the front doors that import argparse or pytest, as ``module -> library``."""
    found = []
    for name, path in sorted(modules.items()):
        if name.split(".")[0] != "harness" or _room(name, modules) in front_doors:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{name} -> {n}" for n in names if n.split(".")[0] in FRONT_DOOR_LIBRARIES]
    return found


def _plant(tmp_path: Path, files: dict[str, str | None]) -> dict[str, Path]:
    """Modules ``name -> source`` written under ``tmp_path`` (packages get ``__init__.py``)."""
    modules: dict[str, Path] = {}
    for name, source in files.items():
        path = tmp_path / (name.replace(".", "/") + ("/__init__.py" if source is None else ".py"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source or "")
        modules[name] = path
    return modules


def test_subpackages_form_no_cycle() -> None:
    modules = _modules()
    graph = _room_graph(modules)
    assert "harness.run" in graph and "harness.cases" in graph["harness.run"]  # the rooms were really read
    cycles = _cycles(graph)
    assert cycles == [], "subpackage cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_a_planted_subpackage_cycle_is_found(tmp_path: Path) -> None:
    # no module cycle at all, yet the rooms a and b point at each other
    modules = _plant(tmp_path, {"eng": None, "eng.a": None, "eng.b": None,
                                "eng.a.one": "from eng.b import two\n", "eng.a.three": "",
                                "eng.b.two": "", "eng.b.four": "def f():\n    from eng.a import three\n"})
    assert _cycles({n: _imports_of(n, p, modules) for n, p in modules.items()}) == []
    assert _cycles(_room_graph(modules)) == [["eng.a", "eng.b", "eng.a"]]


def test_the_engine_never_imports_an_adapter_family() -> None:
    found = _engine_imports_families(_modules())
    assert found == [], "harness imports implementations (use a registry hook instead):\n" + "\n".join(found)


def test_a_planted_family_import_is_found(tmp_path: Path) -> None:
    modules = _plant(tmp_path, {"harness": None, "harness.run": None, "implementations": None,
                                "harness.run.fine": "from harness.run import other\n", "harness.run.other": "",
                                "harness.run.bad": "def f():\n    from implementations.fam import x\n",
                                "implementations.fam": "from harness.run import fine\n"})
    assert _engine_imports_families(modules) == ["harness.run.bad -> implementations.fam"]


def test_families_use_only_the_public_modules() -> None:
    modules = _modules()
    used = {t for n, p in modules.items() if n.startswith("implementations.") for t in _imports_of(n, p, modules)}
    assert {"harness.remote", "harness.registry"} <= used  # the families' imports were really read
    found = _family_internal_imports(modules)
    assert found == [], ("implementations import engine internals (use a public module, or make one "
                         "public in docs/engine.md):\n" + "\n".join(found))


def test_a_planted_internal_import_in_a_family_is_found(tmp_path: Path) -> None:
    modules = _plant(tmp_path, {"harness": None, "harness.interface": "", "harness.worker": None,
                                "harness.worker.node": "", "harness.remote": None, "implementations": None,
                                "implementations.fine": "from harness.interface import Adapter\nimport harness\n",
                                "implementations.door": "from harness.remote import NodeExecutor\n",
                                "implementations.bad": "def f():\n    from harness.worker.node import NodeExecutor\n",
                                "harness.worker.own": "from harness.worker import node\n"})
    assert _family_internal_imports(modules, public=frozenset({"harness", "harness.interface", "harness.remote"})) \
        == ["implementations.bad -> harness.worker.node"]


def test_only_the_front_doors_see_argparse_or_pytest() -> None:
    modules = _modules()
    assert any(_room(n, modules) == "harness.cli" for n in modules)
    found = _front_door_imports(modules)
    assert found == [], "below the front doors (build a Plan / a value instead):\n" + "\n".join(found)


def test_a_planted_argparse_below_the_front_doors_is_found(tmp_path: Path) -> None:
    modules = _plant(tmp_path, {"harness": None, "harness.cli": None, "harness.run": None,
                                "harness.cli.flags": "import argparse\n",
                                "harness.run.engine": "def f():\n    import argparse.x\n",
                                "harness.run.tests": "from _pytest.config import Config\n",
                                "harness.run.fine": "import dataclasses\n"})
    assert _front_door_imports(modules) == ["harness.run.engine -> argparse.x",
                                            "harness.run.tests -> _pytest.config"]


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
