"""The arguments that choose a run's adapters, as a value a Dask worker can rebuild them from.

``tokconf run`` builds its adapters from :class:`SelectionArgs` with :func:`select_adapters`;
a Dask worker (:mod:`harness.scale.shard_task`) gets the same value and calls the same
function, so the two build the same adapters, or the worker says which one it cannot.
Paths are made absolute here: a worker's working folder is not the client's.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any, Iterable

__all__ = ["SelectionArgs", "select_adapters", "worker_selection"]


def _absolute_plugin(spec: str) -> str:
    path, sep, attr = spec.rpartition(":")
    if sep and path.endswith(".py") and os.path.exists(path):
        return f"{os.path.abspath(path)}:{attr}"
    return spec


@dataclass(frozen=True)
class SelectionArgs:
    """``--plugin``, ``--vocab-dir``, ``--source-root``, ``--impl``, ``--encoding``,
    ``--reference``, the isolation flags, and the adapters the run's cases name."""

    plugin: tuple[str, ...] = ()
    vocab_dir: str | None = None
    source_root: tuple[str, ...] = ()
    impl: tuple[str, ...] = ()
    encoding: tuple[str, ...] = ()
    reference: tuple[str, ...] = ()
    isolate: bool = False
    no_isolate: bool = False
    timeout: float = 60.0
    memory_limit: int = 0
    case_adapters: tuple[str, ...] = ()
    case_references: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace, cases: Iterable[Any]) -> "SelectionArgs":
        from harness.run.runner import case_adapter_names

        cases = list(cases)
        roots = []
        for root in getattr(args, "source_root", None) or []:
            spec, sep, folder = root.rpartition("=")
            roots.append(f"{spec}={os.path.abspath(folder)}" if sep else os.path.abspath(folder))
        vocab_dir = getattr(args, "vocab_dir", None)
        return cls(plugin=tuple(_absolute_plugin(p) for p in getattr(args, "plugin", None) or []),
                   vocab_dir=os.path.abspath(vocab_dir) if vocab_dir else None, source_root=tuple(roots),
                   impl=tuple(args.impl or []), encoding=tuple(getattr(args, "encoding", None) or []),
                   reference=tuple(getattr(args, "reference", None) or []),
                   isolate=bool(getattr(args, "isolate", False)), no_isolate=bool(getattr(args, "no_isolate", False)),
                   timeout=float(args.timeout), memory_limit=int(getattr(args, "memory_limit", 0) or 0),
                   case_adapters=tuple(case_adapter_names(cases)),
                   case_references=tuple(c.reference for c in cases if c.reference))

    def namespace(self) -> argparse.Namespace:
        return argparse.Namespace(plugin=list(self.plugin), vocab_dir=self.vocab_dir,
                                  source_root=list(self.source_root), impl=list(self.impl),
                                  encoding=list(self.encoding), reference=list(self.reference),
                                  isolate=self.isolate, no_isolate=self.no_isolate, timeout=self.timeout,
                                  memory_limit=self.memory_limit)


def select_adapters(spec: SelectionArgs, registry: Any, isolation: Any) -> Any:
    """The run's :class:`~harness.run.selection.Selected` (raises SelectionError, ValueError)."""
    from harness.cli import claim_encoding
    from harness.run.selection import parse_references, select

    references = parse_references(list(spec.reference))
    impls = list(spec.impl)
    claim_encoding(registry, impls, list(spec.encoding))
    if impls:
        # what the user plugged in is what they came to test, --impl or not
        impls += [n for n in registry.plugin_names() if n not in impls]
    return select(registry, impls=impls, encodings=list(spec.encoding), references=references,
                  case_adapters=list(spec.case_adapters), case_references=list(spec.case_references),
                  required=[*impls, *registry.plugin_names()], isolation=isolation)


def worker_selection(spec: SelectionArgs) -> Any:
    """Everything ``tokconf run`` does before selecting, then :func:`select_adapters`."""
    from harness.cli import apply_common
    from harness.cli.isolation import isolation_from_args

    args = spec.namespace()
    registry = apply_common(args)
    return select_adapters(spec, registry, isolation_from_args(args, registry))
