"""Byte-level BPE, layer 1 of 3: pure helpers and the model every layer shares.

The layers follow minbpe's shape (seeds 002 and 003):

- here, :class:`ByteBPEBase`: 256 single-byte tokens plus learned merges, each merge
  ``(left, right) -> 256 + rank``; encode one chunk *by stored rank*; decode; special
  token registration; JSON save/load;
- :mod:`implementations.bytebpe.model`: the regex layer (pre-split pattern, training,
  special-token policy);
- :mod:`implementations.bytebpe.ranks`: the pretrained layer (tiktoken's published
  ranks, merged over bytes).

Encoding never re-trains: each round takes the adjacent pair with the *lowest rank*
among the pairs present and merges all of its non-overlapping occurrences, left to
right. With (b,c) rank 0 and (a,b) rank 1, [a,b,c] becomes [a, bc] (seed 002, §3.5).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import regex

from harness.atomic import write_atomic
from harness.interface import TraceRound
from implementations.bpe_merge import merge_ids

__all__ = [
    "BASE_VOCAB_SIZE",
    "ByteBPEBase",
    "DisallowedSpecialError",
    "ModelFileError",
    "SpecialTokenError",
    "UnknownTokenId",
    "find_literal",
    "merge_pair",
    "most_frequent_pair",
    "pair_counts",
    "split_on_literals",
]

BASE_VOCAB_SIZE = 256
MODEL_FORMAT = "tokconf-bytebpe"
MODEL_VERSION = 1

Pair = tuple[int, int]


class SpecialTokenError(ValueError):
    """A special-token registration or policy argument is invalid."""


class DisallowedSpecialError(ValueError):
    """A special-token literal appeared where the policy forbids it."""


class UnknownTokenId(KeyError):
    """Decode met an ID that is neither an ordinary token nor a registered special."""

    def __str__(self) -> str:  # KeyError would show only the repr of its argument
        return str(self.args[0]) if self.args else "unknown token ID"


class ModelFileError(ValueError):
    """A saved model file is not a valid tokconf byte-BPE model."""


# -- pure helpers --------------------------------------------------------------------


def pair_counts(
    ids: Sequence[int], *, weight: int = 1, into: dict[Pair, int] | None = None
) -> dict[Pair, int]:
    """Count adjacent pairs (every position, overlapping), each counted ``weight`` times.

    >>> pair_counts([1, 2, 1, 2, 1])
    {(1, 2): 2, (2, 1): 2}
    >>> pair_counts([7, 7, 7], weight=3)
    {(7, 7): 6}
    """
    counts = {} if into is None else into
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def most_frequent_pair(counts: Mapping[Pair, int], *, min_count: int = 2) -> Pair | None:
    """The most frequent pair; ties go to the lexicographically smallest pair of integers.

    ``None`` when no pair reaches ``min_count`` (training stops early then).

    >>> most_frequent_pair({(2, 1): 2, (1, 2): 2})
    (1, 2)
    >>> most_frequent_pair({(1, 2): 1}) is None
    True
    """
    best: Pair | None = None
    best_count = 0
    for pair, count in counts.items():
        if count > best_count or (count == best_count and best is not None and pair < best):
            best, best_count = pair, count
    return best if best_count >= min_count else None


def merge_pair(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every non-overlapping occurrence of ``pair``, scanning left to right.

    >>> merge_pair([1, 2, 1, 2, 1], (1, 2), 9)
    [9, 9, 1]
    >>> merge_pair([1, 1, 1], (1, 1), 9)
    [9, 1]
    """
    out: list[int] = []
    i, n = 0, len(ids)
    left, right = pair
    while i < n:
        if i + 1 < n and ids[i] == left and ids[i + 1] == right:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


@lru_cache(maxsize=64)
def _literal_pattern(literals: frozenset[str]) -> regex.Pattern[str]:
    # longest first: at one position an alternation takes its first matching branch,
    # so "<|end|>" must not shadow "<|end|>x" (seed 002, §3.6; seed 003, §23.4)
    ordered = sorted(literals, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in ordered))


def find_literal(text: str, literals: Iterable[str]) -> tuple[int, str] | None:
    """The leftmost occurrence of any literal, longest at that position.

    >>> find_literal("x<|e|>y<|e|>", {"<|e|>"})
    (1, '<|e|>')
    >>> find_literal("<|a|>b", {"<|a|>", "<|a|>b"})
    (0, '<|a|>b')
    """
    literals = [s for s in literals if s]
    if not literals:
        return None
    found = _literal_pattern(frozenset(literals)).search(text)
    return None if found is None else (found.start(), found.group())


def split_on_literals(text: str, literals: Iterable[str]) -> list[tuple[str, bool]]:
    """Split ``text`` into (segment, is_literal) parts; literals longest-first.

    >>> split_on_literals("a<|x|>b", {"<|x|>"})
    [('a', False), ('<|x|>', True), ('b', False)]
    >>> split_on_literals("ab", set())
    [('ab', False)]
    """
    literals = [s for s in literals if s]
    if not literals:
        return [(text, False)] if text else []
    parts: list[tuple[str, bool]] = []
    start = 0
    for found in _literal_pattern(frozenset(literals)).finditer(text):
        if found.start() > start:
            parts.append((text[start : found.start()], False))
        parts.append((found.group(), True))
        start = found.end()
    if start < len(text):
        parts.append((text[start:], False))
    return parts


def _char_at(text: str, position: int) -> str:
    ch = text[position]
    return f"{ch!r} (U+{ord(ch):04X})"


def _dump_model(obj: Mapping[str, Any]) -> str:
    """One top-level key per line, each value compact: diffable, and still plain JSON.

    ``ensure_ascii``: non-ASCII literals and patterns are stored as ``\\u`` escapes.
    """
    lines = [
        f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=True, separators=(', ', ': '))}"
        for key, value in obj.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


# -- the model -----------------------------------------------------------------------


class ByteBPEBase:
    """256 byte tokens, ordered merges, optional special tokens; encode one chunk by rank.

    ``merges[i] = (left, right)`` creates token ``256 + i`` with rank ``i``.

    >>> model = ByteBPEBase([(ord("b"), ord("c")), (ord("a"), ord("b"))])
    >>> model.encode_chunk(b"abc"), model.encode_chunk_plain(b"abc")
    ([97, 256], [97, 256])
    >>> model.decode_bytes([97, 256])
    b'abc'
    """

    #: Set by the regex layer; stored in the model file so a load reproduces encoding.
    pattern_name: str = "none"
    pattern: str | None = None

    def __init__(
        self,
        merges: Sequence[Pair] = (),
        *,
        special_tokens: Mapping[str, int] | None = None,
    ) -> None:
        self.merges: dict[Pair, int] = {}
        self.vocab: dict[int, bytes] = {i: bytes([i]) for i in range(BASE_VOCAB_SIZE)}
        for rank, (left, right) in enumerate(merges):
            new_id = BASE_VOCAB_SIZE + rank
            if left not in self.vocab or right not in self.vocab:
                raise ModelFileError(
                    f"merge {rank} ({left}, {right}) uses an ID that does not exist before it "
                    f"(IDs so far: 0..{new_id - 1}); merges must only combine earlier tokens"
                )
            if (left, right) in self.merges:
                raise ModelFileError(
                    f"merge {rank} ({left}, {right}) repeats merge "
                    f"{self.merges[(left, right)] - BASE_VOCAB_SIZE}; each pair merges once"
                )
            self.merges[(left, right)] = new_id
            self.vocab[new_id] = self.vocab[left] + self.vocab[right]
        self.special_tokens: dict[str, int] = {}
        self._special_decoder: dict[int, bytes] = {}
        if special_tokens:
            self.register_special(special_tokens)

    # -- special tokens ---------------------------------------------------------------

    @property
    def ordinary_size(self) -> int:
        return len(self.vocab)

    def register_special(self, mapping: Mapping[str, int]) -> None:
        """Add special tokens; IDs must be unique and disjoint from ordinary IDs.

        Validates the whole mapping before changing anything.
        """
        combined = dict(self.special_tokens)
        for literal, token_id in mapping.items():
            if not isinstance(literal, str) or not literal:
                raise SpecialTokenError(
                    f"special token literal {literal!r} must be a non-empty string"
                )
            try:
                literal.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise SpecialTokenError(
                    f"special token literal {literal!r} holds {_char_at(literal, exc.start)}, "
                    f"which has no UTF-8 form, so its ID could never decode; remove it"
                ) from exc
            if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
                raise SpecialTokenError(
                    f"special token {literal!r} has ID {token_id!r}; IDs are non-negative integers"
                )
            if token_id in self.vocab:
                raise SpecialTokenError(
                    f"special token {literal!r} has ID {token_id}, which is an ordinary token "
                    f"(ordinary IDs are 0..{self.ordinary_size - 1}); use an ID >= {self.ordinary_size}"
                )
            if literal in combined and combined[literal] != token_id:
                raise SpecialTokenError(
                    f"special token {literal!r} is already registered with ID {combined[literal]}, "
                    f"not {token_id}; register each literal once"
                )
            combined[literal] = token_id
        by_id: dict[int, str] = {}
        for literal, token_id in combined.items():
            if token_id in by_id:
                raise SpecialTokenError(
                    f"special tokens {by_id[token_id]!r} and {literal!r} share ID {token_id}; "
                    f"give each special token its own ID"
                )
            by_id[token_id] = literal
        self.special_tokens = combined
        self._special_decoder = {i: s.encode("utf-8") for s, i in combined.items()}

    def raise_if_present(self, text: str, literals: Iterable[str]) -> None:
        """Raise :class:`DisallowedSpecialError` naming the first literal found in ``text``."""
        found = find_literal(text, literals)
        if found is not None:
            position, literal = found
            raise DisallowedSpecialError(
                f"found disallowed special token {literal!r} at position {position}; "
                f"pass allowed_special={{{literal!r}}} (or 'all') to encode it as its special "
                f"ID {self.special_tokens.get(literal)}, or allowed_special=set() to encode it "
                f"as ordinary text"
            )

    # -- encoding one chunk ------------------------------------------------------------

    def _lowest_rank_pair(self, ids: Sequence[int]) -> Pair | None:
        best: Pair | None = None
        best_id = 0
        merges = self.merges
        for pair in zip(ids, ids[1:]):
            new_id = merges.get(pair)
            if new_id is not None and (best is None or new_id < best_id):
                best, best_id = pair, new_id
        return best

    def encode_chunk_plain(self, data: bytes) -> list[int]:
        """BPE one pre-split chunk by the rule: each round, the lowest-rank pair present,
        all its non-overlapping occurrences, left to right."""
        ids = list(data)
        while len(ids) >= 2:
            pair = self._lowest_rank_pair(ids)
            if pair is None:
                break
            ids = merge_pair(ids, pair, self.merges[pair])
        return ids

    def encode_chunk(self, data: bytes) -> list[int]:
        """The IDs of :meth:`encode_chunk_plain`, one merge at a time (a heap for long
        chunks), so a long chunk is not quadratic; see :mod:`implementations.bpe_merge`."""
        return merge_ids(list(data), self.merges)

    def trace_chunk(self, data: bytes) -> list[TraceRound]:
        """The rounds :meth:`encode_chunk` makes: pair (as bytes), rank, positions merged."""
        rounds: list[TraceRound] = []
        ids = list(data)
        while len(ids) >= 2:
            pair = self._lowest_rank_pair(ids)
            if pair is None:
                break
            new_id = self.merges[pair]
            merged = merge_pair(ids, pair, new_id)
            rounds.append(
                TraceRound(
                    pair=(self.vocab[pair[0]], self.vocab[pair[1]]),
                    rank=new_id - BASE_VOCAB_SIZE,
                    merged=len(ids) - len(merged),
                    result=new_id,
                )
            )
            ids = merged
        return rounds

    # -- decoding ----------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        piece = self.vocab.get(token_id)
        if piece is None:
            piece = self._special_decoder.get(token_id)
        if piece is None:
            raise UnknownTokenId(
                f"token ID {token_id!r} is not in this vocabulary (ordinary IDs "
                f"0..{self.ordinary_size - 1}, special IDs {sorted(self._special_decoder)})"
            )
        return piece

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.token_bytes(i) for i in ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        # join all bytes first, decode once: a token may hold part of a character (§3.3)
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # -- save / load -------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        merges = sorted(self.merges.items(), key=lambda kv: kv[1])
        return {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "pattern_name": self.pattern_name,
            "pattern": self.pattern,
            "merges": [[left, right] for (left, right), _ in merges],
            "special_tokens": dict(sorted(self.special_tokens.items(), key=lambda kv: kv[1])),
            # redundant with the merges; checked on load, and readable by people
            "vocab": {str(i): self.vocab[i].hex() for i in range(BASE_VOCAB_SIZE, self.ordinary_size)},
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the model as JSON, atomically."""
        return write_atomic(path, _dump_model(self.to_json()))

    @classmethod
    def parse_model(cls, data: Any, *, where: str = "model") -> dict[str, Any]:
        """Validate a loaded JSON object; return the constructor arguments it holds."""
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ModelFileError(
                f"{where} is not a tokconf byte-BPE model (expected a JSON object with "
                f'"format": "{MODEL_FORMAT}"); train one with `tokconf train`'
            )
        if data.get("version") != MODEL_VERSION:
            raise ModelFileError(
                f"{where} has model version {data.get('version')!r}; this tokconf reads version "
                f"{MODEL_VERSION}; retrain it with this tokconf"
            )
        try:
            merges = [(int(a), int(b)) for a, b in data["merges"]]
            specials = {str(k): int(v) for k, v in data.get("special_tokens", {}).items()}
            # JSON object keys are strings; restore the integer IDs (seed 002, §3.6)
            vocab = {int(k): bytes.fromhex(v) for k, v in data.get("vocab", {}).items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{where} is malformed: {type(exc).__name__}: {exc}") from exc
        return {
            "merges": merges,
            "special_tokens": specials,
            "vocab": vocab,
            "pattern_name": data.get("pattern_name", "none"),
            "pattern": data.get("pattern"),
        }

    def check_vocab(self, vocab: Mapping[int, bytes], *, where: str = "model") -> None:
        """The stored vocab must be exactly what the merges build."""
        expected = {i: self.vocab[i] for i in range(BASE_VOCAB_SIZE, self.ordinary_size)}
        if dict(vocab) != expected:
            wrong = sorted(set(vocab) ^ set(expected)) or sorted(
                i for i in expected if vocab.get(i) != expected[i]
            )
            raise ModelFileError(
                f"{where}: its vocab disagrees with its merges at ID {wrong[0]}; the file was "
                f"edited by hand or truncated; retrain it"
            )
