"""minbpe's GPT4Tokenizer approach (seed 001), generalised to three tiktoken encodings.

The approach is in two modules: :mod:`implementations.minbpe.recovery` gets the merges
back from a ``.tiktoken`` file's ranks (and caches them on disk), and
:mod:`implementations.minbpe.tokenizer` is the integer BPE over them. This module holds
each encoding's pattern and special tokens, maps tiktoken's special-token policy onto
minbpe's, and registers the adapters.

Two modes. ``minbpe:`` reproduces upstream: ``allowed_special="none_raise"`` fails with
``AssertionError`` and decoding a special-token ID with ``KeyError``. ``minbpe-fixed:``
repairs both (``ValueError``; special IDs decode to their literal).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import AbstractSet, Mapping, Sequence

from harness.interface import (
    Adapter,
    AllowedSpecial,
    Capabilities,
    DisallowedSpecial,
    TraceRound,
    resolve_special_policy,
)
from harness.outcomes import Operation, UnsupportedOperation
from harness.registry import AdapterSpec, Family
from harness.vocab import VOCAB_FILES, shared_tiktoken_decoder, shared_tiktoken_ranks, vocab_unavailable_reason

# the names in __all__ below are re-exported: they lived here before the split and tests
# import them from this module
from implementations.minbpe.recovery import (
    MergeRecoveryError,
    earlier_parts,
    load_or_recover_merges,
    recover_merges,
)
from implementations.minbpe.tokenizer import (
    MinBPETokenizer,
    NativeAllowed,
    Tables,
    build_tables,
    merge_buckets,
    merge_rounds,
)

__all__ = [
    "ENCODINGS",
    "MergeRecoveryError",
    "MinBPETokenizer",
    "MinBPEAdapter",
    "earlier_parts",
    "family",
    "load_or_recover_merges",
    "merge_buckets",
    "merge_rounds",
    "native_allowed_special",
    "recover_merges",
]

ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base")

#: tiktoken's pre-tokenizer pattern for each encoding (the ``regex`` module reads its
#: possessive quantifiers as tiktoken's engine does). A test pins them to tiktoken's own.
PATTERNS: dict[str, str] = {
    "r50k_base": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

#: The special tokens registered for each encoding (pinned to tiktoken's by a test).
SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    "r50k_base": {"<|endoftext|>": 50256},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


def native_allowed_special(
    specials: AbstractSet[str], allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
) -> NativeAllowed:
    """tiktoken-style policy arguments -> minbpe's single ``allowed_special``.

    minbpe cannot disallow some specials and treat others as text: anything disallowed
    (tiktoken's default) becomes ``"none_raise"``, which rejects *every* special literal.

    >>> native_allowed_special({"<a>"}, frozenset(), "all")
    'none_raise'
    >>> native_allowed_special({"<a>"}, frozenset(), ())
    'none'
    >>> native_allowed_special({"<a>"}, "all", "all")
    'all'
    >>> native_allowed_special({"<a>", "<b>"}, {"<a>"}, "all")
    {'<a>'}
    """
    if allowed_special == "all":
        return "all"
    if allowed_special:
        return set(allowed_special)
    _, disallowed = resolve_special_policy(specials, allowed_special, disallowed_special)
    return "none_raise" if disallowed else "none"


# -- adapter and registration ---------------------------------------------------------------

_NOTES = (
    "special policy mapped to minbpe's allowed_special: tiktoken 'all' -> 'all'; a set -> that "
    "set, and specials outside it are ordinary text (tiktoken raises for disallowed ones); an "
    "empty set with anything disallowed (tiktoken's default) -> 'none_raise', which rejects "
    "every special literal; an empty set with disallowed_special=() -> 'none'",
    "a lone surrogate raises UnicodeEncodeError (str.encode('utf-8')); tiktoken replaces it "
    "with U+FFFD",
    "decode always uses errors='replace' (minbpe has no errors option); other modes are "
    "reported as unsupported",
)
_NOTES_UPSTREAM = (
    "'none_raise' on a special literal fails with AssertionError (upstream's bare assert), "
    "not ValueError",
    "decoding a special-token ID raises KeyError: GPT4Tokenizer.decode looks only in the "
    "ordinary vocabulary",
)
_NOTES_FIXED = (
    "repaired: 'none_raise' raises ValueError; special IDs decode to their literal; an "
    "unknown ID raises ValueError",
)


@lru_cache(maxsize=None)
def tables_for(encoding: str) -> Tables:
    """Recovered merges and expanded vocabulary for a pinned encoding (built once)."""
    ranks = shared_tiktoken_ranks(encoding)  # the one copy every adapter of it reads
    sha = VOCAB_FILES[f"{encoding}.tiktoken"].sha256  # the verified file's hash, by pinning
    merges = load_or_recover_merges(ranks, vocab_sha256=sha)
    return build_tables(ranks, merges, decoder=shared_tiktoken_decoder(encoding))


class MinBPEAdapter(Adapter):
    library = "tokconf"

    def __init__(self, encoding: str, *, fixed: bool) -> None:
        self.name = f"{'minbpe-fixed' if fixed else 'minbpe'}:{encoding}"
        self.encoding = encoding
        self.native = MinBPETokenizer(
            tables_for(encoding),
            pattern=PATTERNS[encoding],
            special_tokens=SPECIAL_TOKENS[encoding],
            fixed=fixed,
        )
        self.capabilities = Capabilities(
            special_policy="ordinary-unless-allowed",
            trace=True,
            pretokenize=True,
            notes=_NOTES + (_NOTES_FIXED if fixed else _NOTES_UPSTREAM),
        )

    @property
    def split_pattern(self) -> str:
        return PATTERNS[self.encoding]

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self.native.special_tokens)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        native = native_allowed_special(set(self.native.special_tokens), allowed_special, disallowed_special)
        return self.native.encode(text, allowed_special=native)

    def encode_ordinary(self, text: str) -> list[int]:
        return self.native.encode_ordinary(text)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.native.decode_bytes(ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        if errors != "replace":
            raise UnsupportedOperation(
                f"{self.name} decodes with errors='replace' only (minbpe has no errors option); "
                f"use decode_bytes and decode the bytes yourself for errors={errors!r}"
            )
        return self.native.decode(ids)

    def trace(self, text: str) -> list[TraceRound]:
        return self.native.trace(text)

    def pretokenize(self, text: str) -> list[str]:
        return self.native.pattern.findall(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if op == "encode" and isinstance(exc, AssertionError):
            return "disallowed-special"  # upstream's none_raise assert
        if op == "decode" and isinstance(exc, (KeyError, ValueError)) and not isinstance(exc, UnicodeError):
            return "unknown-id"
        return None


def _check(encoding: str) -> str | None:
    if importlib.util.find_spec("regex") is None:
        return "the regex package is not installed: `pip install regex`"
    return vocab_unavailable_reason(f"{encoding}.tiktoken")


def _spec(encoding: str, *, fixed: bool) -> AdapterSpec:
    kind = "minbpe-fixed" if fixed else "minbpe"
    return AdapterSpec(
        name=f"{kind}:{encoding}",
        encoding=encoding,
        factory=lambda: MinBPEAdapter(encoding, fixed=fixed),
        library="tokconf",
        description=f"minbpe GPT4Tokenizer approach on {encoding}, merges recovered from ranks"
        + (" (special handling repaired)" if fixed else " (upstream behaviour)"),
        check=lambda: _check(encoding),
    )


def family() -> list[Family]:
    return [
        Family(kind=kind, specs=lambda fixed=fixed: [_spec(e, fixed=fixed) for e in ENCODINGS])
        for kind, fixed in (("minbpe", False), ("minbpe-fixed", True))
    ]
