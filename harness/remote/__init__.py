"""The public interface for adapter families whose adapters run out of process.

An adapter family (``implementations/``) imports from the engine only its public
modules: :mod:`harness` and :mod:`harness.interface`, :mod:`harness.outcomes`,
:mod:`harness.registry`, :mod:`harness.vocab` and the other modules named in
docs/engine.md, and this one. A family whose adapters live in another interpreter
(another Python environment's release, a Node project's JavaScript package) finds here
everything it needs, so the engine's rooms (``harness.worker``, ``harness.envs``) can
change behind it:

- workers: :class:`WorkerExecutor` (a Python worker), :class:`NodeExecutor` with
  :class:`NodeSetup` and :func:`node_unavailable_reason`, started with an
  :class:`Isolation` (the run's limits) and a :class:`WorkerSetup`;
- :class:`RemoteAdapter`: a started worker seen as an :class:`~harness.interface.Adapter`;
- environments' records: :class:`Environment`, :class:`EnvAdapter`, :func:`load_all`,
  :func:`find_adapter`, :func:`providers`, :func:`duplicate_message`, :class:`EnvError`,
  and what a worker there is handed: :func:`own_entry_points`, :func:`verified_vocab_dir`;
- the network guard every worker runs under, which a family calling foreign code in
  process uses too: :func:`no_network`, :class:`NetworkBlocked`.

Names are imported when first used: ``import harness.remote`` stays cheap. A family that
runs one adapter in a Node worker::

    from harness.registry import AdapterSpec
    from harness.remote import Isolation, NodeExecutor, NodeSetup, RemoteAdapter

    def start(isolation=None):
        setup = NodeSetup(project="/path/to/project", modules=(("my-js", "/path/to/my_js.mjs"),))
        return NodeExecutor("my-js:cl100k_base", isolation or Isolation(), setup)

    spec = AdapterSpec(name="my-js:cl100k_base", encoding="cl100k_base", language="JavaScript",
                       factory=lambda: RemoteAdapter(start()), executor=start)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below, for type checkers and for the layout test's import graph
    from harness.envs.handoff import own_entry_points, verified_vocab_dir
    from harness.envs.store import (EnvAdapter, EnvError, Environment, duplicate_message, find_adapter, load_all,
                                    providers)
    from harness.remote.adapter import RemoteAdapter
    from harness.worker.client import WorkerExecutor
    from harness.worker.network import NetworkBlocked, no_network
    from harness.worker.node import NodeExecutor, NodeSetup, node_unavailable_reason
    from harness.worker.setup import Isolation, WorkerSetup

_WHERE = {
    "RemoteAdapter": "harness.remote.adapter",
    "WorkerExecutor": "harness.worker.client",
    "Isolation": "harness.worker.setup", "WorkerSetup": "harness.worker.setup",
    "NodeExecutor": "harness.worker.node", "NodeSetup": "harness.worker.node",
    "node_unavailable_reason": "harness.worker.node",
    "EnvAdapter": "harness.envs.store", "EnvError": "harness.envs.store", "Environment": "harness.envs.store",
    "duplicate_message": "harness.envs.store", "find_adapter": "harness.envs.store", "load_all": "harness.envs.store",
    "providers": "harness.envs.store",
    "own_entry_points": "harness.envs.handoff", "verified_vocab_dir": "harness.envs.handoff",
    "NetworkBlocked": "harness.worker.network", "no_network": "harness.worker.network",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'harness.remote' has no attribute {name!r}")
