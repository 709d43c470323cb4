"""Run only the part of a notebook that defines a class: chosen by reading, not running.

Teaching notebooks mix definitions with cells that download data, train, print and
time. Running the whole notebook (what a naive importer does) would download files and
train models just to get at one class. Instead, every top-level statement of every code
cell is read with :mod:`ast`:

- *definitions* (imports, ``def``, ``class``, assignments of constant-like values,
  ``try`` blocks made only of those) may be selected;
- anything else (calls, loops, ``with open(...)``, downloads, training) never is, unless
  the spec forces its whole cell with ``cells: [N]``.

Selection starts from the statement that defines the target class (and factory) and
follows, transitively, the global names they use (:mod:`symtable` tells a function's
globals from its locals). Shell (``!wget``) and magic (``%pip``) lines are never run;
a cell whose first line is a cell magic other than ``%%time``/``%%capture`` is not Python.
"""

from __future__ import annotations

import ast
import json
import symtable
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from implementations.foreign import BUILTIN_NAMES

__all__ = ["NotebookError", "Selection", "Statement", "execute", "read_statements", "select"]

#: Callables a definition may call while it is being defined (``PAT = re.compile(...)``).
SAFE_CALLS = frozenset({
    "compile", "frozenset", "set", "dict", "list", "tuple", "range", "str", "bytes", "int",
    "float", "bool", "chr", "ord", "len", "sorted", "zip", "enumerate", "reversed", "lru_cache",
    "cache", "dataclass", "field", "namedtuple", "TypeVar", "staticmethod", "classmethod",
    "property", "escape", "join",
})
#: What marks a statement as one that must not run, for the selection report.
_HAZARDS = (
    ("downloads", {"urlretrieve", "urlopen", "download", "download_file", "download_file_if_absent",
                   "get", "post", "request", "wget", "curl", "hf_hub_download"}),
    ("runs a program", {"system", "popen", "Popen", "run", "check_call", "check_output"}),
    ("trains", {"train", "fit", "train_from_iterator"}),
    ("writes files", {"write", "write_text", "write_bytes", "dump", "save", "save_vocab_and_merges",
                      "makedirs", "mkdir"}),
)
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


class NotebookError(Exception):
    """The notebook cannot be read, or the class cannot be selected; says why and the fix."""


@dataclass(frozen=True)
class Statement:
    cell: int  # index in the notebook's cells list (0-based; markdown cells count)
    index: int  # position among the cell's top-level statements
    line: int  # 1-based line in the cell
    node: ast.stmt
    binds: frozenset[str]
    uses: frozenset[str]
    definition: bool  # may be selected without being forced
    reason: str  # why not, when it is not a definition


@dataclass(frozen=True)
class Selection:
    statements: tuple[Statement, ...]  # in notebook order
    forced_cells: tuple[int, ...]
    skipped: tuple[str, ...]  # needed names bound only by statements that must not run
    unresolved: tuple[str, ...]  # needed names bound nowhere (e.g. injected by IPython)

    def describe(self) -> list[str]:
        lines = [f"cell {s.cell} line {s.line}: {', '.join(sorted(s.binds)) or type(s.node).__name__}"
                 for s in self.statements]
        return lines + [f"not run: {s}" for s in self.skipped] + [f"unresolved: {n}" for n in self.unresolved]


def read_cells(path: Path) -> list[tuple[int, str]]:
    """``(index, source)`` of every code cell; indexes count every cell."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotebookError(f"{path}: not a readable .ipynb (JSON) file: {exc}") from exc
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise NotebookError(f"{path}: no 'cells' list; is it an nbformat 4 notebook?")
    out = []
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            out.append((index, "".join(source) if isinstance(source, list) else str(source)))
    return out


def python_of_cell(source: str) -> tuple[str | None, str]:
    """The cell as plain Python (shell and magic lines become ``pass``), or ``None`` and why.

    >>> python_of_cell("!wget x\\nimport os")
    ('pass  # shell line removed by tokconf\\nimport os', 'shell line (!)')
    >>> python_of_cell("%%bash\\necho hi")
    (None, 'cell magic %%bash: not Python')
    """
    lines = source.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first.split()[0]
        if magic not in _PYTHON_CELL_MAGICS:
            return None, f"cell magic {magic}: not Python"
        lines = ["pass  # cell magic removed by tokconf"] + lines[1:]
    notes = []
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("!", "%")):
            indent = line[: len(line) - len(stripped)]
            kind = "shell line (!)" if stripped.startswith("!") else "magic line (%)"
            lines[i] = indent + "pass  # " + ("shell" if kind.startswith("shell") else "magic") + " line removed by tokconf"
            notes.append(kind)
    return "\n".join(lines), ", ".join(dict.fromkeys(notes))


def read_statements(path: Path) -> tuple[list[Statement], dict[int, str]]:
    """Every top-level statement of every code cell, and why some cells were left out."""
    statements: list[Statement] = []
    cell_notes: dict[int, str] = {}
    for cell, source in read_cells(path):
        python, note = python_of_cell(source)
        if note:
            cell_notes[cell] = note
        if python is None:
            continue
        try:
            tree = ast.parse(python, filename=f"{path}#cell{cell}")
        except SyntaxError as exc:
            cell_notes[cell] = f"not Python ({exc.msg}, line {exc.lineno})"
            continue
        for index, node in enumerate(tree.body):
            definition, reason = _is_definition(node)
            statements.append(Statement(cell, index, node.lineno, node, frozenset(_binds(node)),
                                        frozenset(_global_uses(node)), definition, reason))
    return statements, cell_notes


def _binds(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.Try, ast.If, ast.With, ast.For)):
        for child in node.body + getattr(node, "orelse", []) + [s for h in getattr(node, "handlers", []) for s in h.body]:
            names |= _binds(child)
    return names


def _global_uses(node: ast.stmt) -> set[str]:
    """Global names the statement reads, at definition time or later from its functions."""
    try:
        table = symtable.symtable(ast.unparse(node), "<statement>", "exec")
    except SyntaxError:  # e.g. a top-level await (IPython allows it): every name counts
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - BUILTIN_NAMES
    names: set[str] = set()

    def walk(t: symtable.SymbolTable, top: bool) -> None:
        for symbol in t.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                names.add(symbol.get_name())
        for child in t.get_children():
            walk(child, False)

    walk(table, True)
    return names - BUILTIN_NAMES


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _definition_time_calls(node: ast.AST) -> list[ast.Call]:
    """Calls that run while ``node`` is being defined (not those inside function bodies)."""
    calls: list[ast.Call] = []
    pending: list[ast.AST] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # decorators and defaults run when the def runs; the body only when called
            pending.extend(current.decorator_list)
            pending.extend(d for d in current.args.defaults + current.args.kw_defaults if d is not None)
            continue
        if isinstance(current, ast.Lambda):
            pending.extend(current.args.defaults)
            continue
        if isinstance(current, ast.Call):
            calls.append(current)
        pending.extend(ast.iter_child_nodes(current))
    return calls


def _is_definition(node: ast.stmt) -> tuple[bool, str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True, ""
    if isinstance(node, ast.Pass):
        return False, "nothing to run (pass, or a removed shell/magic line)"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False, "a bare constant (docstring): nothing to define"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and not all(
                isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store, ast.Starred))
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) for n in ast.walk(t)):
            return False, "assigns to an attribute or item: runs code"
        unsafe = [c for c in _definition_time_calls(node) if _call_name(c) not in SAFE_CALLS]
        if unsafe:
            return False, _hazard(unsafe)
        return True, ""
    if isinstance(node, ast.Try) and all(_is_definition(s)[0] for s in node.body) and all(
            _is_definition(s)[0] or isinstance(s, ast.Pass) for h in node.handlers for s in h.body):
        return True, ""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.Call) and _call_name(stmt) == "open" and _open_writes(stmt):
            return False, "writes files (open for writing)"
    return False, _hazard(calls) if calls else f"runs top-level code ({type(node).__name__})"


def _open_writes(call: ast.Call) -> bool:
    modes = [call.args[1]] if len(call.args) > 1 else [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+")
               for m in modes)


def _callee(call: ast.Call) -> str:
    """``open(...).read`` for ``open('x').read()``: the callee, nested arguments elided."""

    class Elide(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            return ast.Call(func=self.visit(node.func), args=[ast.Name("...")], keywords=[])

    return ast.unparse(Elide().visit(ast.parse(ast.unparse(call.func), mode="eval").body))


def _hazard(calls: Sequence[ast.Call]) -> str:
    for label, names in _HAZARDS:
        hits = [_callee(c) for c in calls if _call_name(c) in names]
        if hits:
            return f"{label} ({hits[0]})"
    return f"calls {_callee(calls[0])}() at top level"


def select(statements: Sequence[Statement], roots: Iterable[str], *, force_cells: Sequence[int] = (),
           cell_notes: dict[int, str] | None = None, where: str = "notebook") -> Selection:
    """The statements needed to define ``roots``, following global names transitively.

    ``force_cells`` run whole (the spec's ``cells:``); a forced cell with shell or magic
    lines is refused, since tokconf runs plain Python only.
    """
    position = {id(s): i for i, s in enumerate(statements)}
    chosen: dict[int, Statement] = {}
    skipped: list[str] = []
    unresolved: list[str] = []
    cells_present = {s.cell for s in statements}
    for cell in force_cells:
        note = (cell_notes or {}).get(cell)
        if note:
            raise NotebookError(f"{where}: cells: [{cell}] cannot be forced: it has {note}, and "
                                f"tokconf runs plain Python only; remove that cell from `cells`")
        if cell not in cells_present:
            raise NotebookError(f"{where}: cells: [{cell}] names no code cell with Python in it; "
                                f"code cells here: {sorted(cells_present)}")
    work: list[tuple[str, int]] = []
    for s in statements:
        if s.cell in force_cells:
            chosen[position[id(s)]] = s
            work.extend((name, position[id(s)]) for name in s.uses)
    for root in roots:
        binders = [s for s in statements if root in s.binds]
        good = [s for s in binders if s.definition or s.cell in force_cells]
        if not good:
            if binders:
                s = binders[-1]
                raise NotebookError(f"{where}: {root} is defined in cell {s.cell} (line {s.line}) by a "
                                    f"statement tokconf will not run on its own: {s.reason}. Force that "
                                    f"cell with `cells: [{s.cell}]` in the spec if running it is safe")
            defined = sorted(n for s in statements if isinstance(s.node, (ast.ClassDef, ast.FunctionDef)) for n in s.binds)
            raise NotebookError(f"{where}: nothing defines {root!r}; classes and functions defined "
                                f"here: {', '.join(defined) or 'none'}")
        chosen[position[id(good[-1])]] = good[-1]
        work.extend((name, position[id(good[-1])]) for name in good[-1].uses)
    seen: set[tuple[str, int]] = set()
    while work:
        name, at = work.pop()
        if (name, at) in seen:
            continue
        seen.add((name, at))
        binders = [(i, s) for i, s in enumerate(statements) if name in s.binds]
        usable = [(i, s) for i, s in binders if s.definition or s.cell in force_cells]
        if not usable:
            if binders:
                i, s = binders[-1]
                skipped.append(f"{name} (bound in cell {s.cell} line {s.line}, which {s.reason})")
            else:
                unresolved.append(name)
            continue
        before = [(i, s) for i, s in usable if i < at]
        i, s = before[-1] if before else usable[0]
        if i not in chosen:
            chosen[i] = s
            work.extend((n, i) for n in s.uses)
    _add_future_imports(statements, chosen)
    return Selection(tuple(chosen[i] for i in sorted(chosen)), tuple(sorted(set(force_cells))),
                     tuple(sorted(set(skipped))), tuple(sorted(set(unresolved))))


def _add_future_imports(statements: Sequence[Statement], chosen: dict[int, Statement]) -> None:
    cells = {s.cell for s in chosen.values()}
    for i, s in enumerate(statements):
        if s.cell in cells and isinstance(s.node, ast.ImportFrom) and s.node.module == "__future__":
            chosen[i] = s


def execute(selection: Selection, *, path: Path, module_name: str) -> types.ModuleType:
    """Run the selected statements, cell by cell, in a fresh module; return it.

    The module is registered in ``sys.modules`` (dataclasses and pickling look there).
    Line numbers in tracebacks are the cell's own: ``<path>#cell7``, line 12.
    """
    module = types.ModuleType(module_name, f"classes selected from {path} by tokconf")
    module.__file__ = str(path)
    sys.modules[module_name] = module
    by_cell: dict[int, list[ast.stmt]] = {}
    for s in selection.statements:
        by_cell.setdefault(s.cell, []).append(s.node)
    for cell, nodes in by_cell.items():
        code = compile(ast.Module(body=nodes, type_ignores=[]), f"{path}#cell{cell}", "exec")
        exec(code, module.__dict__)  # noqa: S102 - the whole point: run the selected definitions
    return module


def describe_statements(statements: Sequence[Statement]) -> list[dict[str, Any]]:
    """Plain data about every statement, for ``tokconf``'s reports and the tests."""
    return [{"cell": s.cell, "line": s.line, "binds": sorted(s.binds), "definition": s.definition,
             "reason": s.reason} for s in statements]
