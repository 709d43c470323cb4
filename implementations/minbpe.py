"""minbpe's GPT4Tokenizer approach (seed 001), generalised to three tiktoken encodings.

A ``.tiktoken`` file only says which byte strings are tokens and their rank (= ID); the
integer BPE needs "left ID, right ID -> new ID". :func:`recover_merges` gets it back: for
each multi-byte token, replay only the merges of rank strictly below its own on its
bytes; exactly two parts must remain, and they are the token's last merge.

Base IDs are a permutation of the byte values (``byte_shuffle``: the space byte is 220 in
cl100k_base). Text bytes are renumbered through it before merging and the vocabulary is
expanded in rank order over those *internal* IDs, so ``vocab[15339] == b"GDKKN"``;
decode maps back through the inverse permutation.

Two modes. ``minbpe:`` reproduces upstream: ``allowed_special="none_raise"`` fails with
``AssertionError`` and decoding a special-token ID with ``KeyError``. ``minbpe-fixed:``
repairs both (``ValueError``; special IDs decode to their literal).

Encode is minbpe's round rule: each round merges every non-overlapping occurrence of the
lowest-rank pair present. Long chunks use an equivalent heap (see :func:`merge_heap`) so
a megabyte of letters is not quadratic; :func:`merge_rounds` is the literal rule, used for
short chunks and for ``trace``.
"""

from __future__ import annotations

import array
import hashlib
import heapq
import importlib.util
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet, Callable, Literal, Mapping, Sequence

from harness.atomic import write_atomic
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
from harness.vocab import cache_dir, load_tiktoken_ranks, vocab_bytes, vocab_unavailable_reason

__all__ = [
    "ENCODINGS",
    "MergeRecoveryError",
    "MinBPETokenizer",
    "MinBPEAdapter",
    "earlier_parts",
    "family",
    "load_or_recover_merges",
    "merge_heap",
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

_NO_RANK = sys.maxsize  # an int, not inf, so min() over rank lists stays on ints
_HEAP_FROM = 48  # chunks of at least this many bytes merge with the heap
_CACHE_CHUNK_CHARS = 64
_CACHE_ENTRIES = 200_000

NativeAllowed = Literal["all", "none", "none_raise"] | AbstractSet[str]


class MergeRecoveryError(ValueError):
    """A token's bytes do not replay to exactly two earlier tokens."""


# -- merge recovery ------------------------------------------------------------------------


def earlier_parts(ranks: Mapping[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    """Replay on ``token``'s bytes every merge of rank < ``max_rank``, lowest rank first.

    Ties (the same byte pair twice) go to the leftmost place. Only neighbours of a merge
    get a new rank, so each round is one C-level ``min`` over the list.

    >>> ranks = {b"h": 0, b"e": 1, b"l": 2, b"o": 3, b"el": 4, b"lo": 5, b"ello": 6, b"hello": 7}
    >>> earlier_parts(ranks, b"hello", 7)
    [b'h', b'ello']
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    get = ranks.get
    pair_ranks = [get(parts[i] + parts[i + 1], _NO_RANK) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best >= max_rank:
            break
        i = pair_ranks.index(best)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        del pair_ranks[i]
        if i > 0:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], _NO_RANK)
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], _NO_RANK)
    return parts


def recover_merges(ranks: Mapping[bytes, int]) -> dict[tuple[int, int], int]:
    """``(left ID, right ID) -> ID`` for every multi-byte token of ``ranks``.

    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    >>> recover_merges(ranks)
    {(0, 1): 2, (2, 1): 3}
    """
    merges: dict[tuple[int, int], int] = {}
    for token, rank in ranks.items():
        if len(token) == 1:
            continue
        parts = earlier_parts(ranks, token, rank)
        if len(parts) != 2:
            # never store a partial rule: the token would be unreachable or wrongly built
            raise MergeRecoveryError(
                f"cannot recover the merge that builds token {token!r} (rank {rank}): replaying "
                f"the merges ranked below it leaves {len(parts)} parts {parts!r}, not 2. The "
                f"ranks are not a byte-level BPE vocabulary (every multi-byte token must be "
                f"two earlier tokens); check the vocabulary file."
            )
        merges[(ranks[parts[0]], ranks[parts[1]])] = rank
    return merges


# -- on-disk cache of recovered merges ------------------------------------------------------

_CACHE_MAGIC = b"tokconf-minbpe-merges-v1"


def _cache_path(vocab_sha256: str) -> Path:
    return cache_dir() / "minbpe" / f"{vocab_sha256}.merges"




def _serialise(merges: Mapping[tuple[int, int], int], vocab_sha256: str) -> bytes:
    flat = array.array("I", [n for (left, right), rank in merges.items() for n in (left, right, rank)])
    if sys.byteorder == "big":
        flat.byteswap()  # the file is little-endian wherever it was written
    return _CACHE_MAGIC + b" " + vocab_sha256.encode() + b"\n" + flat.tobytes()


def _deserialise(data: bytes, vocab_sha256: str) -> dict[tuple[int, int], int] | None:
    header, sep, body = data.partition(b"\n")
    if not sep or header != _CACHE_MAGIC + b" " + vocab_sha256.encode() or len(body) % 12:
        return None
    flat = array.array("I")
    flat.frombytes(body)
    if sys.byteorder == "big":
        flat.byteswap()
    return {(flat[i], flat[i + 1]): flat[i + 2] for i in range(0, len(flat), 3)}


def load_or_recover_merges(ranks: Mapping[bytes, int], *, vocab_sha256: str) -> dict[tuple[int, int], int]:
    """Recovered merges, from ``cache_dir()/minbpe/<vocab sha256>.merges`` when it is good.

    A cached file is used only if its header names the same vocabulary hash and every
    merge rebuilds exactly the token of its rank; anything else is recomputed and the
    file rewritten.
    """
    path = _cache_path(vocab_sha256)
    try:
        cached = _deserialise(path.read_bytes(), vocab_sha256)
    except OSError:
        cached = None
    if cached is not None and _merges_rebuild(ranks, cached):
        return cached
    merges = recover_merges(ranks)
    try:
        write_atomic(path, _serialise(merges, vocab_sha256))
    except OSError:
        pass  # a read-only cache costs time, not correctness
    return merges


def _merges_rebuild(ranks: Mapping[bytes, int], merges: Mapping[tuple[int, int], int]) -> bool:
    by_rank = {rank: token for token, rank in ranks.items()}
    if len(merges) != len(ranks) - sum(1 for t in ranks if len(t) == 1):
        return False
    for (left, right), rank in merges.items():
        whole = by_rank.get(rank)
        if whole is None or by_rank.get(left, b"") + by_rank.get(right, b"") != whole:
            return False
    return True


# -- integer BPE -------------------------------------------------------------------------


def merge_rounds(
    ids: list[int],
    merges: Mapping[tuple[int, int], int],
    on_round: Callable[[tuple[int, int], int, int, list[int]], None] | None = None,
) -> list[int]:
    """minbpe's rule, literally: each round, every non-overlapping occurrence of the
    lowest-rank pair present, left to right.

    >>> merge_rounds([1, 1, 1, 2], {(1, 1): 10, (1, 2): 11, (10, 1): 12})
    [10, 11]
    """
    while len(ids) >= 2:
        pair = min(set(zip(ids, ids[1:])), key=lambda p: merges.get(p, _NO_RANK))
        rank = merges.get(pair)
        if rank is None:
            break
        out: list[int] = []
        i, last, merged = 0, len(ids) - 1, 0
        while i <= last:
            if i < last and ids[i] == pair[0] and ids[i + 1] == pair[1]:
                out.append(rank)
                merged += 1
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
        if on_round is not None:
            on_round(pair, rank, merged, list(ids))
    return ids


def merge_heap(ids: list[int], merges: Mapping[tuple[int, int], int]) -> list[int]:
    """The same result as :func:`merge_rounds` in O(n log n).

    Why it is the same: a merged token's rank is above both of its parts', so every pair a
    merge creates ranks above the pair just merged. Popping (rank, position) in order
    therefore finishes all places of the lowest pair, left to right, before any later
    pair, which is exactly one round; a place whose left symbol was consumed is stale and
    skipped, which is the non-overlap rule.

    >>> merge_heap([1, 1, 1, 2], {(1, 1): 10, (1, 2): 11, (10, 1): 12})
    [10, 11]
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    values: list[int | None] = list(ids)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap = [(merges[p], i, p) for i, p in enumerate(zip(ids, ids[1:])) if p in merges]
    heapq.heapify(heap)
    while heap:
        rank, i, pair = heapq.heappop(heap)
        j = nxt[i]
        if values[i] is None or j < 0 or (values[i], values[j]) != pair:
            continue
        values[i] = rank
        values[j] = None
        nxt[i] = k = nxt[j]
        if k >= 0:
            prv[k] = i
            right = (rank, values[k])
            if right in merges:
                heapq.heappush(heap, (merges[right], i, right))
        h = prv[i]
        if h >= 0:
            left = (values[h], rank)
            if left in merges:
                heapq.heappush(heap, (merges[left], h, left))
    return [v for v in values if v is not None]


# -- the tokenizer ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tables:
    """Everything built once per vocabulary, shared read-only by every instance."""

    shuffle: bytes  # translate table: byte value -> internal base ID
    inverse: bytes  # internal base ID -> byte value
    merges: Mapping[tuple[int, int], int]
    vocab: Mapping[int, bytes]  # ID -> internal (shuffled) bytes


def build_tables(ranks: Mapping[bytes, int], merges: Mapping[tuple[int, int], int]) -> Tables:
    """Byte shuffle from the single-byte ranks, vocabulary expanded in rank order.

    >>> t = build_tables({bytes([b]): 255 - b for b in range(256)} | {b"ab": 256}, {(158, 157): 256})
    >>> t.vocab[256], t.vocab[256].translate(t.inverse)
    (b'\\x9e\\x9d', b'ab')
    """
    base = [ranks.get(bytes([b])) for b in range(256)]
    if sorted(x for x in base if x is not None) != list(range(256)) or None in base:
        raise ValueError(
            "the single-byte tokens' IDs must be a permutation of 0-255 for minbpe's byte "
            f"shuffle, found {sorted(set(range(256)) - set(base))[:8]} missing; this "
            "vocabulary cannot be used by minbpe's GPT4Tokenizer approach"
        )
    shuffle = bytes(base)
    inverse = bytes(base.index(i) for i in range(256))
    vocab = {i: bytes([i]) for i in range(256)}
    for (left, right), new_id in sorted(merges.items(), key=lambda item: item[1]):
        vocab[new_id] = vocab[left] + vocab[right]  # rank order: both parts already exist
    return Tables(shuffle=shuffle, inverse=inverse, merges=merges, vocab=vocab)


class MinBPETokenizer:
    """minbpe's RegexTokenizer/GPT4Tokenizer behaviour over recovered merges.

    ``fixed=False`` is upstream; ``fixed=True`` the repaired learning implementation.
    """

    def __init__(
        self, tables: Tables, *, pattern: str, special_tokens: Mapping[str, int], fixed: bool
    ) -> None:
        import regex

        self.tables = tables
        self.pattern = regex.compile(pattern)
        self.special_tokens = dict(special_tokens)
        self.inverse_special_tokens = {v: k for k, v in self.special_tokens.items()}
        self.fixed = fixed
        self._cache: dict[str, tuple[int, ...]] = {}

    def _chunk_ids(self, chunk: str) -> list[int]:
        cached = self._cache.get(chunk)
        if cached is not None:
            return list(cached)
        # str.encode raises UnicodeEncodeError on a lone surrogate, as minbpe does
        ids = list(chunk.encode("utf-8").translate(self.tables.shuffle))
        merge = merge_heap if len(ids) >= _HEAP_FROM else merge_rounds
        ids = merge(ids, self.tables.merges)
        if len(chunk) <= _CACHE_CHUNK_CHARS:
            if len(self._cache) >= _CACHE_ENTRIES:
                self._cache.clear()
            self._cache[chunk] = tuple(ids)
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        ids: list[int] = []
        for chunk in self.pattern.findall(text):
            ids.extend(self._chunk_ids(chunk))
        return ids

    def encode(self, text: str, allowed_special: NativeAllowed = "none_raise") -> list[int]:
        if allowed_special == "all":
            special = self.special_tokens
        elif allowed_special == "none":
            special = {}
        elif allowed_special == "none_raise":
            special = {}
            found = [literal for literal in self.special_tokens if literal in text]
            if found:
                if self.fixed:
                    raise ValueError(
                        f"Encountered text corresponding to disallowed special token {found[0]!r}; "
                        f"pass allowed_special='all' (or a set naming it) to encode it as a special "
                        f"token, or 'none' to encode it as ordinary text"
                    )
                # Upstream checks this with a bare `assert`, so its callers see AssertionError
                # with no message. We raise it explicitly: an `assert` would vanish under
                # `python -O` (and our library code never uses assert), but the native type
                # is exactly what the seed's counterexample is about.
                raise AssertionError()
        elif isinstance(allowed_special, AbstractSet):
            special = {k: v for k, v in self.special_tokens.items() if k in allowed_special}
        else:
            raise ValueError(
                f"allowed_special={allowed_special!r} not understood; use 'all', 'none', "
                f"'none_raise' or a set of special-token literals"
            )
        if not special:
            return self.encode_ordinary(text)
        # specials not in `special` are ordinary text here: that is minbpe's semantics
        splitter = "(" + "|".join(re.escape(literal) for literal in special) + ")"
        ids: list[int] = []
        for part in re.split(splitter, text):
            if part in special:
                ids.append(special[part])
            else:
                ids.extend(self.encode_ordinary(part))
        return ids

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        vocab, inverse = self.tables.vocab, self.tables.inverse
        if not self.fixed:
            # upstream looks only in the ordinary vocabulary: a special ID is a KeyError
            return b"".join(vocab[idx] for idx in ids).translate(inverse)
        parts: list[bytes] = []
        for idx in ids:
            if idx in vocab:
                parts.append(vocab[idx].translate(inverse))
            elif idx in self.inverse_special_tokens:
                parts.append(self.inverse_special_tokens[idx].encode("utf-8"))
            else:
                raise ValueError(
                    f"unknown token ID: {idx!r}; valid IDs are the vocabulary's and the special tokens'"
                )
        return b"".join(parts)

    def decode(self, ids: Sequence[int]) -> str:
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def trace(self, text: str) -> list[TraceRound]:
        vocab, inverse = self.tables.vocab, self.tables.inverse
        rounds: list[TraceRound] = []

        def record(pair: tuple[int, int], rank: int, merged: int, ids: list[int]) -> None:
            shown = (vocab[pair[0]].translate(inverse), vocab[pair[1]].translate(inverse))
            rounds.append(TraceRound(pair=shown, rank=rank, merged=merged, result=ids))

        for chunk in self.pattern.findall(text):
            ids = list(chunk.encode("utf-8").translate(self.tables.shuffle))
            merge_rounds(ids, self.tables.merges, record)
        return rounds


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
    ranks = load_tiktoken_ranks(encoding)
    sha = hashlib.sha256(vocab_bytes(f"{encoding}.tiktoken")).hexdigest()
    return build_tables(ranks, load_or_recover_merges(ranks, vocab_sha256=sha))


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
