"""Other Python environments' adapters in this process's registry, and the workers that run them.

Registered through the entry point ``envs`` like every built-in family: each adapter of
each finished environment (``tokconf env add``, :func:`harness.remote.load_all`) becomes a
spec named with its library's version, ``tiktoken@0.9.0:cl100k_base``, available or not as
the probe in that environment found (an encoding the release lacks stays listed,
unavailable, with that reason). Each one always runs in a worker started with the
environment's interpreter (:func:`env_executor`, the spec's ``executor``); ``tokconf
encode``/``decode`` get a :class:`~harness.remote.RemoteAdapter` over it. The engine
tells these specs apart by this family's entry point (:func:`harness.envs.handoff.is_env_spec`):
they join a run only when asked for by name.

Only the public interface is used (:mod:`harness.remote` for workers and environments).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.registry import AdapterSpec, AdapterUnavailable
from harness.remote import Environment, duplicate_message, load_all, providers
from harness.vocab import cache_dir

if TYPE_CHECKING:  # imported when a worker is started: registering the family stays cheap
    from harness.remote import Isolation, RemoteAdapter, WorkerExecutor

__all__ = ["env_executor", "family"]


def env_executor(name: str, isolation: Isolation | None = None) -> WorkerExecutor:
    """A worker running environment adapter ``name``, with the run's limits
    (``isolation``, default :class:`~harness.remote.Isolation`)."""
    from harness.remote import (EnvError, Isolation, WorkerExecutor, WorkerSetup, find_adapter, own_entry_points,
                                verified_vocab_dir)

    try:
        found = find_adapter(name)
    except EnvError as exc:
        raise AdapterUnavailable(str(exc)) from exc
    if found is None:
        raise AdapterUnavailable(f"no environment provides {name}; `tokconf env list` shows them")
    env, adapter = found
    if adapter.reason:
        raise AdapterUnavailable(adapter.reason)
    if env.runtime != "python":
        raise AdapterUnavailable(f"{name} is an adapter of {env.runtime} environment {env.name}: its family "
                                 "(implementations.javascript for Node) builds its worker")
    if not Path(env.python).exists():
        raise AdapterUnavailable(f"environment {env.name} has no interpreter at {env.python}: "
                                 f"`tokconf env remove {env.name}` and add it again")
    base = isolation if isolation is not None else Isolation()
    setup = WorkerSetup(vocab_dir=str(verified_vocab_dir()), entry_points=own_entry_points())
    tiktoken_cache = cache_dir() / "tiktoken-cache"
    tiktoken_cache.mkdir(parents=True, exist_ok=True)
    environ = (*base.environ, ("TIKTOKEN_CACHE_DIR", str(tiktoken_cache)))
    worker = WorkerExecutor(adapter.inner, replace(base, python=env.python, setup=setup, environ=environ))
    if worker.version != adapter.version:
        worker.close()
        raise AdapterUnavailable(f"environment {env.name} now has {adapter.library} {worker.version}, not "
                                 f"{adapter.version} as when it was made: `tokconf env remove {env.name}` "
                                 "and add it again")
    worker.info = replace(worker.info, name=name, provider=f"environment {env.name}")
    return worker


def _remote(name: str) -> RemoteAdapter:
    from harness.remote import RemoteAdapter

    return RemoteAdapter(env_executor(name))


def _refuse(message: str) -> Any:
    raise AdapterUnavailable(message)


def _check(env: Environment, reason: str | None) -> str | None:
    if reason:
        return reason
    return None if Path(env.python).exists() else f"environment {env.name} has no interpreter at {env.python}"


def family() -> list[AdapterSpec]:
    """Every Python environment's adapters (a name two environments provide is listed
    unavailable, naming both). A Node environment's JavaScript adapters are a family of their own
    (:mod:`implementations.javascript.adapters`): other tokenizers, not other releases."""
    specs: dict[str, AdapterSpec] = {}
    owners = providers()
    for env in load_all():
        if env.runtime != "python":
            continue
        for adapter in env.adapters:
            if adapter.name in specs:
                continue
            if len(owners.get(adapter.name, ())) > 1:
                # made by an older tokconf, which let a second environment take a name:
                # listed, never run, with both providers named
                message = duplicate_message(adapter.name, owners[adapter.name])
                specs[adapter.name] = AdapterSpec(
                    name=adapter.name, encoding=adapter.encoding, library=adapter.library, version=adapter.version,
                    factory=lambda m=message: _refuse(m), description=message, check=lambda m=message: m,
                    executor=lambda isolation, m=message: _refuse(m))
                continue
            specs[adapter.name] = AdapterSpec(
                name=adapter.name, encoding=adapter.encoding, library=adapter.library, version=adapter.version,
                factory=lambda n=adapter.name: _remote(n),
                description=f"{adapter.inner} in environment {env.name} ({', '.join(env.requirements)})",
                check=lambda r=adapter.reason, e=env: _check(e, r),
                executor=lambda isolation, n=adapter.name: env_executor(n, isolation),
            )
    return list(specs.values())
