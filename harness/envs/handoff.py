"""What this process hands another environment, and how it tells that environment's adapters apart.

The engine's side of the Python environments: the environment family itself (its specs,
its workers) is an adapter family like any other (:mod:`implementations.environments`,
registered through the entry point ``envs``), but making an environment
(:mod:`harness.envs.create`), choosing a run's adapters (:mod:`harness.run.selection`)
and recording goldens need three things without importing a family:

- :func:`own_entry_points`: tokconf's built-in families, which a worker or probe in
  another environment registers by hand (tokconf is not installed there);
- :func:`verified_vocab_dir`: the folder of verified vocabularies that worker reads;
- :func:`is_env_spec`: whether a spec is another environment's adapter (those join a
  run only when asked for by name).
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from harness.envs.probe import ENVS_PROVIDER_TAIL
from harness.registry import ENTRY_POINT_GROUP, AdapterSpec
from harness.vocab import VOCAB_FILES, cache_dir, vocab_path, vocab_unavailable_reason

__all__ = ["is_env_spec", "own_entry_points", "verified_vocab_dir"]

_OWN = ("implementations.", "harness.")
#: the environment family's module: a worker elsewhere must not register it (its adapters
#: there would be this process's environments again, under nested names)
_ENVS_MODULE = ENVS_PROVIDER_TAIL.partition(":")[0]


def is_env_spec(spec: AdapterSpec) -> bool:
    """Whether ``spec`` is an environment's adapter (registered by the environment family;
    other families may put a version in a name too, ``js-tiktoken@1.0.21:...``)."""
    return spec.provider.endswith(ENVS_PROVIDER_TAIL)


def own_entry_points() -> tuple[tuple[str, str], ...]:
    """tokconf's own adapter families (what a worker elsewhere registers by hand), less
    the environment family."""
    found = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.value.startswith(_OWN) and ep.value.partition(":")[0] != _ENVS_MODULE:
            found.append((ep.name, ep.value))
    return tuple(sorted(set(found)))


def verified_vocab_dir() -> Path:
    """A folder holding verified copies of every vocabulary file this process can have
    (:func:`harness.vocab.vocab_path` checks each against its pinned SHA-256)."""
    for name in VOCAB_FILES:
        if vocab_unavailable_reason(name) is None:
            vocab_path(name)
    return cache_dir() / "vocab"
