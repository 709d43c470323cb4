"""Which adapters a run builds, as a value: the front doors fill it, every process rebuilds from it.

:class:`AdapterChoice` holds the few facts that choose a run's adapters (plugins, the
vocabulary folder, source roots, ``--impl``/``--encoding``/``--reference``, the isolation
mode and limits, the adapters the run's cases name). ``tokconf run`` builds its adapters
from it with :func:`select_for`; a Dask worker (:mod:`harness.scale.shard_task`) gets the
same value and calls the same function, so the two build the same adapters, or the
worker says which one it cannot. Paths are absolute: a worker's working folder is not the
client's. Family-specific options (a source root, a ``tokenizer.json``'s claimed
encoding) reach their family through the registry's hooks, never by importing it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from harness.registry import Registry, RegistryError, default_registry
from harness.worker.setup import Isolation, WorkerSetup

__all__ = ["AdapterChoice", "ChoiceError", "DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT_S", "absolute_plugin",
           "build_registry", "case_adapter_names", "claim_encoding", "isolation_for", "select_for", "selected_for"]

#: seconds one isolated call may take: the slowest healthy call of a default run (a
#: pure-Python adapter's vocabulary check, one encode of a long case) is far below it
DEFAULT_TIMEOUT_S = 60.0
#: a worker's address space: a worker holding o200k_base in Python dicts uses well under
#: 1 GB; threads of native libraries reserve address space they never touch
DEFAULT_MEMORY_MB = 4096


class ChoiceError(ValueError):
    """The choice cannot be applied (a bad source root, a plugin that does not load)."""


def absolute_plugin(spec: str) -> str:
    """``file.py:attr`` with the file's absolute path (``module:attr`` unchanged)."""
    path, sep, attr = spec.rpartition(":")
    if sep and path.endswith(".py") and os.path.exists(path):
        return f"{os.path.abspath(path)}:{attr}"
    return spec


@dataclass(frozen=True)
class AdapterChoice:
    """``--plugin``, ``--vocab-dir``, ``--source-root``, ``--impl``, ``--encoding``,
    ``--reference``, the isolation flags, and the adapters the run's cases name (the field
    names are the flags', so a reader maps one to the other)."""

    plugin: tuple[str, ...] = ()
    vocab_dir: str | None = None
    source_root: tuple[str, ...] = ()
    impl: tuple[str, ...] = ()
    encoding: tuple[str, ...] = ()
    reference: tuple[str, ...] = ()
    isolate: bool = False
    no_isolate: bool = False
    timeout: float = DEFAULT_TIMEOUT_S
    memory_limit: int = DEFAULT_MEMORY_MB  # as the CLI: every front door, the same limits
    case_adapters: tuple[str, ...] = ()
    case_references: tuple[str, ...] = ()

    @classmethod
    def of(cls, *, plugin: Iterable[str] = (), vocab_dir: str | None = None, source_root: Iterable[str] = (),
           cases: Iterable[Any] = (), **fields: Any) -> "AdapterChoice":
        """The choice with paths made absolute and the cases' own adapters listed."""
        cases = list(cases)
        roots = []
        for root in source_root:
            spec, sep, folder = root.rpartition("=")
            roots.append(f"{spec}={os.path.abspath(folder)}" if sep else os.path.abspath(folder))
        return cls(plugin=tuple(absolute_plugin(p) for p in plugin),
                   vocab_dir=os.path.abspath(vocab_dir) if vocab_dir else None, source_root=tuple(roots),
                   case_adapters=tuple(case_adapter_names(cases)),
                   case_references=tuple(c.reference for c in cases if c.reference),
                   **{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})

    @property
    def mode(self) -> str:
        return "all" if self.isolate else "none" if self.no_isolate else "auto"


def case_adapter_names(cases: Iterable[Any]) -> list[str]:
    """Adapter names the cases spell out exactly (fixtures such as ``gpt2-encoder:DIR``)."""
    names: list[str] = []
    for case in cases:
        for name in (*(case.adapters or ()), *((case.reference,) if case.reference else ())):
            if name not in names:
                names.append(name)
    return names


def build_registry(*, plugin: Sequence[str] = (), vocab_dir: str | None = None,
                   source_root: Sequence[str] = (), impl: Sequence[str] = ()) -> Registry:
    """Apply the vocabulary folder, the plugins and the source roots; the registry."""
    from harness.vocab import set_vocab_dir

    if vocab_dir:
        set_vocab_dir(vocab_dir)
    try:
        registry = default_registry(plugins=plugin)
        for root in source_root:
            registry.hook("source-root")(root, impls=list(impl))
    except (RegistryError, ValueError) as exc:
        raise ChoiceError(str(exc)) from exc
    return registry


def claim_encoding(registry: Registry, names: Sequence[str], encodings: Sequence[str]) -> None:
    """``hf-json:PATH`` adapters named in the run claim the one ``--encoding`` given.

    A bare tokenizer.json says nothing about which ID space it reproduces; the flag is the
    spec-less way to say it (``tokconf run --impl hf-json:tok.json --encoding cl100k_base``).
    """
    if len(encodings) != 1:
        return
    for name in names:
        kind, _, argument = name.partition(":")
        if kind == "hf-json" and argument and name not in registry.names():
            try:
                registry.add(registry.hook("claim-encoding")(argument, encoding=encodings[0]), provider="--encoding")
            except Exception as exc:
                raise ChoiceError(f"--impl {name}: {exc}") from exc


def isolation_for(choice: AdapterChoice, registry: Registry) -> Isolation:
    """The run's :class:`Isolation`, with the setup that rebuilds ``registry`` in a worker."""
    if choice.timeout <= 0:
        raise ChoiceError(f"--timeout must be above 0 seconds, got {choice.timeout:g}")
    if choice.memory_limit < 0:
        raise ChoiceError(f"--memory-limit must be 0 (none) or a number of MB, got {choice.memory_limit}")
    roots: list[tuple[str | None, str]] = []
    for root in choice.source_root:
        spec, sep, folder = root.rpartition("=")
        roots.append((spec if sep else None, os.path.abspath(folder)))
    vocab_dir = os.path.abspath(choice.vocab_dir) if choice.vocab_dir else None
    setup = WorkerSetup.from_registry(registry, vocab_dir=vocab_dir, source_roots=tuple(roots))
    return Isolation(mode=choice.mode, timeout_s=float(choice.timeout),  # type: ignore[arg-type]
                     memory_limit_mb=choice.memory_limit or None, setup=setup)


def select_for(choice: AdapterChoice, registry: Registry, isolation: Isolation, *, require: bool = True) -> Any:
    """The run's :class:`~harness.run.selection.Selected` (raises SelectionError, ValueError).

    ``require``: an adapter named by ``--impl`` or a plugin that cannot run is an error
    (a run's exit 2); without it the caller reports it (the pytest plugin's failing item)."""
    from harness.run.selection import parse_references, select

    references = parse_references(list(choice.reference))
    impls = list(choice.impl)
    claim_encoding(registry, impls, list(choice.encoding))
    if impls:
        # what the user plugged in is what they came to test, --impl or not
        impls += [n for n in registry.plugin_names() if n not in impls]
    return select(registry, impls=impls, encodings=list(choice.encoding), references=references,
                  case_adapters=list(choice.case_adapters), case_references=list(choice.case_references),
                  required=[*impls, *registry.plugin_names()] if require else [], isolation=isolation)


def selected_for(choice: AdapterChoice) -> Any:
    """Everything a run does to build its adapters, from the choice alone (a Dask worker's way)."""
    registry = build_registry(plugin=choice.plugin, vocab_dir=choice.vocab_dir, source_root=choice.source_root,
                              impl=choice.impl)
    return select_for(choice, registry, isolation_for(choice, registry))
