"""The JavaScript adapters of every Node environment, as a family of tokconf adapters.

``tokconf env add npm:...`` (:mod:`harness.envs.npm`) installs packages into a Node
project and records, in its manifest, the adapters the Node worker found there
(``js-tiktoken@1.0.21:cl100k_base``, ...). This family registers them. They are other
tokenizers, not other releases of this environment's libraries, so unlike a Python
environment's adapters (:mod:`implementations.environments`, which join a run by name) they take
part in every run, beside tiktoken and ``hf:``: the conformance suite included.

Each one always runs in a Node worker of its own (:class:`harness.remote.NodeExecutor`,
started through the spec's ``executor`` with the run's limits), and is unavailable, with
the reason, when Node.js is missing or the project lost its ``node_modules``. Only the
public interface is used (:mod:`harness.remote` for workers and environments).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.registry import AdapterSpec, AdapterUnavailable, Family
from harness.remote import EnvAdapter, Environment, load_all

if TYPE_CHECKING:  # imported when a worker is started: registering the family stays cheap
    from harness.remote import Isolation, NodeExecutor, RemoteAdapter

__all__ = ["family", "node_executor"]


def _problem(env: Environment) -> str | None:
    from harness.remote import node_unavailable_reason

    reason = node_unavailable_reason()
    if reason is not None:
        return reason
    if not (Path(env.folder) / "node_modules").is_dir():
        return (f"environment {env.name} has no node_modules in {env.folder}: "
                f"`tokconf env remove {env.name}` and add it again")
    return None


def node_executor(env: Environment, adapter: EnvAdapter, isolation: Isolation | None = None, *,
                  encoding: dict[str, Any] | None = None) -> NodeExecutor:
    """A Node worker running ``adapter`` of Node environment ``env``, with the run's limits;
    ``encoding`` is the ranks, pattern and special tokens of a port built over an encoding
    file (:mod:`implementations.javascript.ranks`), ``None`` for a bundled one."""
    from harness.remote import Isolation, NodeExecutor, NodeSetup
    from implementations.javascript import module_paths

    problem = adapter.reason or _problem(env)
    if problem is not None:
        raise AdapterUnavailable(problem)
    base = isolation if isolation is not None else Isolation()
    worker = NodeExecutor(adapter.inner, base, NodeSetup(project=env.folder, modules=module_paths(),
                                                         encoding=encoding))
    if worker.version != adapter.version:
        worker.close()
        raise AdapterUnavailable(f"environment {env.name} now has {adapter.library} {worker.version}, not "
                                 f"{adapter.version} as when it was made: `tokconf env remove {env.name}` "
                                 "and add it again")
    worker.info = replace(worker.info, name=adapter.name, provider=f"Node environment {env.name}")
    return worker


def _remote(env: Environment, adapter: EnvAdapter) -> RemoteAdapter:
    from harness.remote import RemoteAdapter

    return RemoteAdapter(node_executor(env, adapter))


def family() -> Family:
    """Every Node environment's adapters, and what ``env add npm:...`` asks the family
    (its packages, its adapter modules) through the registry's hooks."""
    from implementations.javascript import PACKAGES, module_paths

    return Family(kind="javascript", specs=_specs, hooks=(("npm-packages", lambda: dict(PACKAGES)),
                                                          ("node-modules", module_paths)))


def _specs() -> list[AdapterSpec]:
    """Every Node environment's adapters (the first environment to provide a name keeps it):
    those its manifest records, then its ports over the encoding files' ranks."""
    from implementations.javascript.ranks import ranks_specs

    specs: dict[str, AdapterSpec] = {}
    for env in load_all():
        if env.runtime != "node":
            continue
        for adapter in env.adapters:
            if adapter.name in specs:
                continue
            specs[adapter.name] = AdapterSpec(
                name=adapter.name, encoding=adapter.encoding, library=adapter.library, version=adapter.version,
                factory=lambda e=env, a=adapter: _remote(e, a),
                description=f"{adapter.inner} from npm in Node environment {env.name} ({', '.join(env.requirements)})",
                check=lambda e=env, a=adapter: a.reason or _problem(e),
                language="JavaScript",
                executor=lambda isolation, e=env, a=adapter: node_executor(e, a, isolation),
            )
        for spec in ranks_specs(env, _problem, node_executor):
            specs.setdefault(spec.name, spec)
    return list(specs.values())
