"""Loading the code a ``source:`` spec points at, and resolving its argument references.

- A ``.py`` file is imported as a module of its package (if it is in one) under a
  private alias, so relative imports work and two checkouts never collide.
- A notebook runs only the statements that define the class (see
  :mod:`implementations.source.notebook`) in a fresh module.
- ``{vocab_dir: gpt2}``, ``{models_dir: gpt2, model_name: 124M}``, ``{tiktoken_ranks: ...}``
  and the other references of a spec become paths and values built from tokconf's
  verified vocabulary files.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.vocab import VOCAB_FILES, cache_dir, load_tiktoken_ranks, vocab_bytes, vocab_path
from implementations.source import notebook as source_notebook
from implementations.source.roots import locate_source
from implementations.source.spec import SourceSpec

__all__ = ["gpt2_models_dir", "gpt2_vocab_dir", "load_notebook_source", "load_python_source",
           "resolve_reference"]


def _private_name(path: Path, stem: str) -> str:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    return f"_tokconf_source_{digest}_{re.sub(r'[^0-9A-Za-z_]', '_', stem)}"


def _extend_sys_path(folder: Path) -> None:
    # appended, never prepended: minbpe has its own regex.py, which must not shadow the
    # `regex` package that it (and everything else) imports
    if str(folder) not in sys.path:
        sys.path.append(str(folder))


def load_python_source(path: Path) -> types.ModuleType:
    """Import ``path`` as a module, as a member of its package if it is in one.

    The package is imported under a private alias, so two checkouts of one project
    never collide in ``sys.modules`` and relative imports (``from .base import ...``)
    work. Loaded once per path and process.
    """
    packages = []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        packages.insert(0, folder)
        folder = folder.parent
    _extend_sys_path(path.parent)
    if not packages:
        name = _private_name(path, path.stem)
        if name not in sys.modules:
            _exec_module(name, path, None)
        return sys.modules[name]
    top = packages[0]
    alias = _private_name(top, top.name)
    if alias not in sys.modules:
        _exec_module(alias, top / "__init__.py", [str(top)])
    relative = path.relative_to(top).with_suffix("").parts
    dotted = ".".join((alias, *relative)) if relative != ("__init__",) else alias
    return importlib.import_module(dotted)


def _exec_module(name: str, path: Path, search: list[str] | None) -> None:
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as Python source")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def load_notebook_source(path: Path, spec: SourceSpec) -> tuple[types.ModuleType, source_notebook.Selection]:
    statements, cell_notes = source_notebook.read_statements(path)
    roots = [r for r in {spec.class_name, spec.construct.method} if r]
    selection = source_notebook.select(statements, roots, force_cells=spec.cells or (),
                                       cell_notes=cell_notes, where=str(path))
    _extend_sys_path(path.parent)
    module = source_notebook.execute(selection, path=path, module_name=_private_name(path, path.stem))
    return module, selection


# -- argument references -----------------------------------------------------------------


def resolve_reference(value: Any, spec: SourceSpec) -> Any:
    """Replace ``{vocab_dir: gpt2}`` and friends (recursively) by what they stand for.

    >>> resolve_reference([1, {"set": ["a"]}, {"literal": {"set": 2}}], None)
    [1, {'a'}, {'set': 2}]
    """
    if isinstance(value, list):
        return [resolve_reference(v, spec) for v in value]
    if not isinstance(value, dict):
        return value
    keys = set(value)
    if keys == {"models_dir", "model_name"}:
        return str(gpt2_models_dir(value["model_name"]))
    if len(keys) == 1:
        (key, arg), = value.items()
        if key == "literal":
            return arg
        if key == "set":
            return set(resolve_reference(arg, spec))
        if key == "vocab_dir":
            return str(gpt2_vocab_dir())
        if key == "vocab_file":
            return str(vocab_path(arg))
        if key == "tiktoken_ranks":
            return load_tiktoken_ranks(arg)
        if key == "text_file":
            return (Path(spec.base_dir) / arg).read_text(encoding="utf-8")
        if key == "root_file":
            return str(_root_dir(spec) / arg)
    return {k: resolve_reference(v, spec) for k, v in value.items()}


def _root_dir(spec: SourceSpec) -> Path:
    """The checkout root: the source's folder, minus the spec's relative ``source`` path."""
    relative = Path(spec.source)
    if relative.is_absolute():
        return Path(spec.base_dir)
    return locate_source(spec).parents[len(relative.parts) - 1]


def gpt2_vocab_dir() -> Path:
    paths = [vocab_path(n) for n in ("encoder.json", "vocab.bpe")]
    if paths[0].parent != paths[1].parent:  # vocab_path keeps both in one folder; make sure
        raise RuntimeError(f"GPT-2 vocabulary files are in two folders: {paths}")
    return paths[0].parent


def gpt2_models_dir(model_name: str) -> Path:
    """``<cache>/source-models/gpt2`` holding ``<model_name>/encoder.json`` and ``vocab.bpe``."""
    base = cache_dir() / "source-models" / "gpt2"
    target = base / model_name
    target.mkdir(parents=True, exist_ok=True)
    for name in ("encoder.json", "vocab.bpe"):
        data = vocab_bytes(name)  # verified
        path = target / name
        if not (path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == VOCAB_FILES[name].sha256):
            write_atomic(path, data)
    return base
