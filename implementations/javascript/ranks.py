"""JavaScript ports over an open-weight encoding's ranks (issue 23: "the JavaScript ports
where they accept custom ranks").

The npm packages bundle only OpenAI's rank tables, and ``tokconf env add npm:...``
records those. Two of them also take a caller's ranks through their public API:

- ``js-tiktoken``: ``new Tiktoken({bpe_ranks, special_tokens, pat_str})`` from
  ``js-tiktoken/lite`` (js-tiktoken 1.0.21, ``dist/lite.d.ts``, ``TiktokenBPE``);
- ``tiktoken`` (WASM): ``new Tiktoken(bpe_ranks, special_tokens, pat_str)`` from
  ``tiktoken/lite`` (tiktoken 1.0.22, ``lite/tiktoken.d.ts``; its README passes a
  ``.tiktoken`` file's text as ``bpe_ranks``).

So every Node environment that has one of them gets, for each encoding tokconf reads
from a file (not the GPT ones, which the packages bundle), an adapter
``js-tiktoken@1.0.21:llama3`` in that encoding's group, compared with the vendor's
reference like the Python ports of :mod:`implementations.openweight.ports`. The worker
receives, in its setup, the encoding's pattern and special tokens and a ``.tiktoken``
file with its SHA-256 (:class:`harness.worker.node.NodeSetup` ``encoding``): the
verified file itself when the encoding uses it as is, else (Tekken's JSON, its ID
offset and cut) one written here from the verified table. Node checks the SHA-256 again
before it reads a rank, and the adapter module builds the package's own format from it.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any, Callable

from harness.atomic import write_atomic
from harness.encodings import EncodingSpec, encoding_specs
from harness.encodings.ranks import encoding_ranks, rank_file_bytes, rank_file_path, ranks_unavailable_reason
from harness.registry import AdapterSpec
from harness.remote import EnvAdapter, Environment
from harness.vocab import cache_dir

__all__ = ["RANKS_PACKAGES", "encoding_payload", "port_spec", "ranks_specs", "tiktoken_file"]

#: npm package whose public API accepts custom ranks -> adapter kind (gpt-tokenizer's
#: GptEncoding takes its own merge-table format through internal modules only: left out)
RANKS_PACKAGES: dict[str, str] = {"js-tiktoken": "js-tiktoken", "tiktoken": "tiktoken-wasm"}


def tiktoken_file(spec: EncodingSpec) -> tuple[Path, str]:
    """A ``.tiktoken`` file (``base64 ID`` lines) of ``spec``'s ordinary tokens, and its SHA-256.

    The encoding's own file when its IDs are its ranks (verified by its pinned hash);
    otherwise one written under tokconf's cache from the verified table, named by its
    content's hash, so a stale or altered copy is never taken for it.
    """
    source = spec.vocabulary
    path = rank_file_path(source)
    if source.format == "tiktoken" and source.id_offset == 0 and source.ordinary_tokens is None and path is not None:
        rank_file_bytes(spec)  # raises unless the file on disk is the pinned one
        return path, source.sha256
    table = sorted(encoding_ranks(spec).items(), key=lambda item: item[1])
    text = "".join(f"{base64.b64encode(token).decode('ascii')} {rank}\n" for token, rank in table).encode("ascii")
    digest = hashlib.sha256(text).hexdigest()
    written = cache_dir() / "js-ranks" / f"{spec.name}-{digest[:20]}.tiktoken"
    if not (written.is_file() and hashlib.sha256(written.read_bytes()).hexdigest() == digest):
        write_atomic(written, text)
    return written, digest


def encoding_payload(spec: EncodingSpec) -> dict[str, Any]:
    """What the Node adapter module builds the port from (``ctx.encoding`` in the worker)."""
    path, digest = tiktoken_file(spec)
    return {"name": spec.name, "ranks_file": str(path), "sha256": digest, "pattern": spec.pattern,
            "special_tokens": sorted(spec.special_tokens.items(), key=lambda item: item[1])}


def _remote(executor: Any) -> Any:
    from harness.remote import RemoteAdapter

    return RemoteAdapter(executor)


def port_spec(env: Environment, package: str, spec: EncodingSpec, problem: Callable[[Environment], str | None],
              executor: Callable[..., Any], *, name: str | None = None) -> AdapterSpec:
    """The adapter of npm ``package`` (installed in ``env``) over ``spec``'s ranks, named
    ``KIND@VERSION:ENCODING`` unless ``name`` is given (a test's planted fault).

    ``problem`` and ``executor`` are :mod:`implementations.javascript.adapters`' own
    (``executor(env, adapter, isolation, encoding=...)`` starts the Node worker), passed
    in so the two modules do not import each other."""
    def start(isolation: Any = None) -> Any:
        return executor(env, adapter, isolation, encoding=encoding_payload(spec))

    kind, version = RANKS_PACKAGES[package], dict(env.packages)[package]
    adapter = EnvAdapter(name=name or f"{kind}@{version}:{spec.name}", inner=f"{kind}:{spec.name}",
                         encoding=spec.name, library=f"npm:{package}", version=version)
    return AdapterSpec(
        name=adapter.name, encoding=spec.name, library=adapter.library, version=version,
        factory=lambda: _remote(start()),
        description=f"{adapter.inner} from npm in Node environment {env.name}, over the {spec.name} "
                    "encoding file's ranks, pattern and special tokens",
        check=lambda: problem(env) or ranks_unavailable_reason(spec),
        language="JavaScript",
        executor=start,
    )


def ranks_specs(env: Environment, problem: Callable[[Environment], str | None],
                executor: Callable[..., Any]) -> list[AdapterSpec]:
    """One adapter per (package of ``env`` that accepts ranks, encoding read from a file).

    ``problem(env)`` says why the environment's adapters cannot run (no Node, no
    ``node_modules``). A port whose package cannot compile the encoding's pattern (a
    RegExp of Node 20 has no inline ``(?i:...)`` group) is unavailable when built, with
    the RegExp error as the reason.
    """
    installed = dict(env.packages)
    return [port_spec(env, package, spec, problem, executor)
            for package in RANKS_PACKAGES if package in installed
            for spec in encoding_specs().values() if spec.vocabulary.pinned is None]
