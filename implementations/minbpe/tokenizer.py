"""The integer BPE of minbpe's GPT4Tokenizer: byte shuffle, merge rule, encode and decode.

Base IDs are a permutation of the byte values (``byte_shuffle``: the space byte is 220 in
cl100k_base). Text bytes are renumbered through it before merging and the vocabulary is
expanded in rank order over those *internal* IDs, so ``vocab[15339] == b"GDKKN"``;
decode maps back through the inverse permutation.

Encode is minbpe's round rule: each round merges every non-overlapping occurrence of the
lowest-rank pair present. :func:`merge_rounds` is the literal rule (``trace`` and
:meth:`MinBPETokenizer.encode_ordinary_plain` use it); ``encode`` gets the same IDs
faster (tests hold the two equal): each chunk's IDs are remembered
(:mod:`implementations.piece_cache`), a chunk that is itself a token is taken whole, and
the rest merge by :func:`implementations.bpe_merge.merge_ids` (a list for short chunks,
buckets for long ones, so a megabyte of letters is not quadratic).

``MinBPETokenizer(fixed=False)`` keeps upstream's special-token failures; ``fixed=True``
repairs them (see :mod:`implementations.minbpe.adapters` for the two adapter modes).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import AbstractSet, Callable, Iterator, Literal, Mapping, Sequence

from harness.interface import TraceRound
from implementations.bpe_merge import merge_buckets, merge_ids
from implementations.piece_cache import PieceCache

__all__ = [
    "MinBPETokenizer",
    "NativeAllowed",
    "ShuffledVocab",
    "Tables",
    "build_tables",
    "merge_buckets",
    "merge_rounds",
]

_NO_RANK = sys.maxsize  # an int, not inf, so min() over rank lists stays on ints

NativeAllowed = Literal["all", "none", "none_raise"] | AbstractSet[str]


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


# -- the tokenizer ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tables:
    """Everything built once per vocabulary, shared read-only by every instance."""

    shuffle: bytes  # translate table: byte value -> internal base ID
    inverse: bytes  # internal base ID -> byte value
    merges: Mapping[tuple[int, int], int]
    vocab: Mapping[int, bytes]  # ID -> internal (shuffled) bytes
    ranks: Mapping[bytes, int]  # token bytes (not shuffled) -> ID, for whole-token chunks


def build_tables(
    ranks: Mapping[bytes, int],
    merges: Mapping[tuple[int, int], int],
    *,
    decoder: Mapping[int, bytes] | None = None,
) -> Tables:
    """Byte shuffle from the single-byte ranks, vocabulary expanded in rank order.

    Given the ranks' ``decoder`` (ID -> token bytes), the vocabulary is a view of it
    instead (:class:`ShuffledVocab`): the same bytes, without a copy.

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
    if decoder is not None:
        return Tables(shuffle=shuffle, inverse=inverse, merges=merges, ranks=ranks,
                      vocab=ShuffledVocab(decoder, shuffle))
    vocab = {i: bytes([i]) for i in range(256)}
    for (left, right), new_id in sorted(merges.items(), key=lambda item: item[1]):
        vocab[new_id] = vocab[left] + vocab[right]  # rank order: both parts already exist
    return Tables(shuffle=shuffle, inverse=inverse, merges=merges, vocab=vocab, ranks=ranks)


class ShuffledVocab(Mapping[int, bytes]):
    """The expanded vocabulary, read from the shared ``decoder`` and shuffled on access.

    Recovery only keeps a merge whose two parts concatenate to its token (and a cached
    merge file is checked for exactly that), so expanding the merges in rank order gives
    every token's own bytes, shuffled; reading them from the rank table everyone shares
    avoids a second copy of the vocabulary (about 20 MB for o200k_base). A test compares
    the two for every ID.
    """

    def __init__(self, decoder: Mapping[int, bytes], shuffle: bytes) -> None:
        self._decoder = decoder
        self._shuffle = shuffle

    def __getitem__(self, token_id: int) -> bytes:
        return self._decoder[token_id].translate(self._shuffle)

    def __contains__(self, token_id: object) -> bool:
        return token_id in self._decoder

    def __iter__(self) -> Iterator[int]:
        return iter(self._decoder)

    def __len__(self) -> int:
        return len(self._decoder)


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
        self._pieces = PieceCache(self._chunk_ids)

    def encode_ordinary_plain(self, text: str) -> list[int]:
        """minbpe's ``encode_ordinary`` as written: every chunk through the round rule."""
        ids: list[int] = []
        for chunk in self.pattern.findall(text):
            # str.encode raises UnicodeEncodeError on a lone surrogate, as minbpe does
            chunk_ids = list(chunk.encode("utf-8").translate(self.tables.shuffle))
            ids.extend(merge_rounds(chunk_ids, self.tables.merges))
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """The IDs of :meth:`encode_ordinary_plain`, each chunk's remembered."""
        return self._pieces.encode_pieces(self.pattern.findall(text))

    def _chunk_ids(self, chunk: str) -> list[int]:
        data = chunk.encode("utf-8")  # UnicodeEncodeError on a lone surrogate, as minbpe
        whole = self.tables.ranks.get(data)
        if whole is not None:
            # a chunk that is itself a token: the merges rebuild every token of the
            # vocabulary (a test checks all of them), so it is that token
            return [whole]
        return merge_ids(list(data.translate(self.tables.shuffle)), self.tables.merges)

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
