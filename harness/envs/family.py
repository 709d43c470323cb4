"""Environments' adapters in this process's registry, and the workers that run them.

Registered through the entry point ``envs`` like every built-in family: each adapter of
each finished environment (:func:`harness.envs.store.load_all`) becomes a spec named with
its library's version, ``tiktoken@0.9.0:cl100k_base``, available or not as the probe in
that environment found (an encoding the release lacks stays listed, unavailable, with
that reason). Building one starts a worker with the environment's interpreter
(:func:`env_executor`); a run takes that executor as it is (:mod:`harness.run.selection`),
and ``tokconf encode``/``decode`` get a thin :class:`RemoteAdapter` over it.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.cases.model import Policy
from harness.interface import Adapter, AllowedSpecial, DisallowedSpecial
from harness.outcomes import Operation, Outcome
from harness.registry import ENTRY_POINT_GROUP, AdapterSpec, AdapterUnavailable
from harness.vocab import VOCAB_FILES, cache_dir, vocab_path, vocab_unavailable_reason
from harness.envs.probe import ENVS_PROVIDER_TAIL as _PROVIDER_TAIL
from harness.envs.store import EnvError, duplicate_message, find_adapter, load_all, providers

__all__ = ["RemoteAdapter", "env_executor", "family", "is_env_spec", "own_entry_points", "verified_vocab_dir"]

_OWN = ("implementations.", "harness.")


def is_env_spec(spec: AdapterSpec) -> bool:
    """Whether ``spec`` is an environment's adapter (registered by this family; other
    families may put a version in a name too, ``js-tiktoken@1.0.21:...``)."""
    return spec.provider.endswith(_PROVIDER_TAIL)


def own_entry_points() -> tuple[tuple[str, str], ...]:
    """tokconf's own adapter families (what a worker elsewhere registers by hand)."""
    found = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.value.startswith(_OWN) and not ep.value.startswith("harness.envs."):
            found.append((ep.name, ep.value))
    return tuple(sorted(set(found)))


def verified_vocab_dir() -> Path:
    """A folder holding verified copies of every vocabulary file this process can have
    (:func:`harness.vocab.vocab_path` checks each against its pinned SHA-256)."""
    for name in VOCAB_FILES:
        if vocab_unavailable_reason(name) is None:
            vocab_path(name)
    return cache_dir() / "vocab"


def env_executor(name: str, isolation: Any = None) -> Any:
    """A worker running environment adapter ``name``, with the run's limits
    (``isolation``, default :class:`harness.worker.setup.Isolation`)."""
    from harness.worker.client import WorkerExecutor
    from harness.worker.setup import Isolation, WorkerSetup

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


def _refuse(message: str) -> Adapter:
    raise AdapterUnavailable(message)


def _check(env: Any, reason: str | None) -> str | None:
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
                    factory=lambda m=message: _refuse(m), description=message, check=lambda m=message: m)
                continue
            specs[adapter.name] = AdapterSpec(
                name=adapter.name, encoding=adapter.encoding, library=adapter.library, version=adapter.version,
                factory=lambda n=adapter.name: RemoteAdapter(n),
                description=f"{adapter.inner} in environment {env.name} ({', '.join(env.requirements)})",
                check=lambda r=adapter.reason, e=env: _check(e, r),
            )
    return list(specs.values())


# -- for commands that take an Adapter (encode, decode) ---------------------------------------


class _RemoteError(Exception):
    category = "internal-error"


_ERROR_TYPES: dict[str, type[_RemoteError]] = {}


def _remote_error(outcome: Outcome) -> _RemoteError:
    """An exception whose type name is the native one the worker saw (``builtins.KeyError``)."""
    native = outcome.native_type or f"tokconf.{outcome.kind}"
    cls = _ERROR_TYPES.get(native)
    if cls is None:
        module, _, qualname = native.rpartition(".")
        cls = type(qualname or native, (_RemoteError,), {"__module__": module or "tokconf", "__qualname__": qualname})
        _ERROR_TYPES[native] = cls
    error = cls(outcome.message or outcome.kind)
    error.category = outcome.category if outcome.kind == "raised" and outcome.category else "internal-error"
    return error


class RemoteAdapter(Adapter):
    """An environment's adapter seen as an :class:`Adapter`: each call goes to its worker
    and a failure is raised again under its native type name and category."""

    def __init__(self, name: str, executor: Any = None) -> None:
        # ``executor``: a worker already started (a JavaScript adapter's Node worker)
        self.executor = executor if executor is not None else env_executor(name)
        info = self.executor.info
        self.name, self.encoding, self.library = info.name, info.encoding, info.library
        self.capabilities = info.capabilities
        self.language, self.vocabulary = info.language, info.vocabulary

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return self.executor.info.specials

    def _value(self, op: str, *args: Any) -> Any:
        outcome = self.executor.call(op, *args)
        if outcome.is_ok:
            return outcome.value
        raise _remote_error(outcome)

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        policy = Policy(allowed_special="all" if allowed_special == "all" else frozenset(allowed_special),
                        disallowed_special="all" if disallowed_special == "all" else frozenset(disallowed_special))
        return list(self._value("encode", text, policy))

    def encode_ordinary(self, text: str) -> list[int]:
        return list(self._value("encode_ordinary", text))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self._value("decode_bytes", tuple(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self._value("decode", tuple(ids), errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self._value("token_bytes", token_id)

    def trace(self, text: str) -> Any:
        return list(self._value("trace", text))

    def pretokenize(self, text: str) -> list[str]:
        return list(self._value("pretokenize", text))

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return exc.category if isinstance(exc, _RemoteError) else None
