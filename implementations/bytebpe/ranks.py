"""Byte-level BPE, layer 3 of 3: tiktoken's published ranks, merged over bytes.

Seed 003's short route (§23.5): keep every part of a piece as ``bytes``, repeatedly
merge the adjacent pair whose *concatenation* has the lowest rank (leftmost on a tie),
and look the final parts up in the ranks. The byte shuffle of cl100k_base (the space
byte is ID 220) needs no special care: it lives in the final lookup.

A piece can be a megabyte long (a run of one letter is one pre-split chunk). Scanning
all pairs per merge would be quadratic, so the parts form a linked list (``nxt``/``prv``
arrays indexed by a part's first byte offset) and the candidate pairs sit in a heap
keyed by ``rank * n + offset``: the smallest key is the lowest rank, leftmost. A heap
entry is stale once its part changed; ``cur[offset]`` holds the rank of the pair that
currently starts there (distinct byte strings have distinct ranks, so a rank names a
span uniquely). Each merge costs O(log n): a piece costs O(n log n).
"""

from __future__ import annotations

import heapq
from typing import Callable, Mapping

from harness.interface import TraceRound
from implementations.bytebpe.model import ByteBPE
from implementations.bytebpe.patterns import CL100K_PATTERN, O200K_PATTERN, R50K_PATTERN, compile_pattern, split_chunks

__all__ = ["ENCODINGS", "RankByteBPE", "TOTAL_PATTERNS", "merge_by_rank"]

#: The published patterns: every character falls in one of their alternatives (letters,
#: numbers, other non-space characters, whitespace), so no text is ever left out.
TOTAL_PATTERNS = frozenset({R50K_PATTERN, CL100K_PATTERN, O200K_PATTERN})

ENDOFTEXT = "<|endoftext|>"
FIM = {"<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260}

#: adapter argument -> (ranks file stem, encoding claimed, pattern, special tokens)
ENCODINGS: dict[str, tuple[str, str, str, dict[str, int]]] = {
    "gpt2": ("r50k_base", "r50k_base", R50K_PATTERN, {ENDOFTEXT: 50256}),
    "cl100k_base": (
        "cl100k_base", "cl100k_base", CL100K_PATTERN,
        {ENDOFTEXT: 100257, **FIM, "<|endofprompt|>": 100276},
    ),
    "o200k_base": (
        "o200k_base", "o200k_base", O200K_PATTERN, {ENDOFTEXT: 199999, "<|endofprompt|>": 200018},
    ),
}


def merge_by_rank(
    piece: bytes, ranks: Mapping[bytes, int], *, rounds: list[TraceRound] | None = None
) -> list[int]:
    """BPE one piece by the ranks of concatenations; returns the final IDs.

    >>> toy = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    >>> merge_by_rank(b"abc", toy)
    [0, 3]
    >>> merge_by_rank(b"aaa", {b"a": 0, b"aa": 1})
    [1, 0]
    """
    n = len(piece)
    if n < 2:
        return [ranks[piece]] if n else []
    get = ranks.get
    nxt = list(range(1, n + 1))  # end of the part starting at i (its successor's start)
    prv = list(range(-1, n - 1))
    cur = [-1] * n  # rank of the pair starting at part i; -1: none, or part i is gone
    heap: list[int] = []
    for i in range(n - 1):
        rank = get(piece[i : i + 2])
        if rank is not None:
            cur[i] = rank
            heap.append(rank * n + i)
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        key = pop(heap)
        rank = key // n
        i = key - rank * n
        if cur[i] != rank:
            continue  # stale: part i merged or vanished since this entry was pushed
        j = nxt[i]
        k = nxt[j]
        if rounds is not None:
            rounds.append(TraceRound(pair=(piece[i:j], piece[j:k]), rank=rank, merged=1, result=rank))
        nxt[i] = k
        cur[j] = -1
        if k < n:
            prv[k] = i
            right = get(piece[i : nxt[k]])
            cur[i] = -1 if right is None else right
            if right is not None:
                push(heap, right * n + i)
        else:
            cur[i] = -1
        p = prv[i]
        if p >= 0:
            left = get(piece[p:k])
            cur[p] = -1 if left is None else left
            if left is not None:
                push(heap, left * n + p)
    out: list[int] = []
    i = 0
    while i < n:
        out.append(ranks[piece[i : nxt[i]]])
        i = nxt[i]
    return out


def _replace_surrogates(text: str) -> str:
    # tiktoken's own repair when the text has no UTF-8 form: a UTF-16 round trip that
    # turns lone surrogates into U+FFFD and joins a split surrogate pair into one
    # character; done only when needed, exactly as tiktoken does
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class RankByteBPE(ByteBPE):
    """A pretrained byte BPE: ``ranks`` maps every token's bytes to its ID."""

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int],
        pattern_name: str = "custom",
        decoder: Mapping[int, bytes] | None = None,
    ) -> None:
        super().__init__((), pattern_name=pattern_name, pattern=pattern)
        # kept as given, never changed: the adapters pass the process-wide shared tables
        self.ranks = ranks
        self.vocab = decoder if decoder is not None else {rank: token for token, rank in ranks.items()}
        self.register_special(special_tokens)
        if pattern in TOTAL_PATTERNS:
            self._split: Callable[[str], list[str]] = compile_pattern(pattern).findall
        else:
            self._split = lambda text: split_chunks(text, pattern)

    def pretokenize(self, text: str) -> list[str]:
        return split_chunks(_replace_surrogates(text), self.pattern)

    def encode_ordinary(self, text: str) -> list[int]:
        # the plain definition is ByteBPE.encode_ordinary_plain; this is it with each
        # piece's IDs remembered, and without the coverage check for the published
        # patterns, which cover every character by construction (tests hold both equal)
        return self._pieces.encode_pieces(self._split(_replace_surrogates(text)))

    def encode_chunk(self, data: bytes) -> list[int]:
        # tiktoken takes a piece that is itself a token as that token without merging;
        # kept so the two agree by construction, not only where BPE happens to reach it
        whole = self.ranks.get(data)
        if whole is not None:
            return [whole]
        return merge_by_rank(data, self.ranks)

    def encode_chunk_plain(self, data: bytes) -> list[int]:
        return merge_by_rank(data, self.ranks)

    def trace_chunk(self, data: bytes) -> list[TraceRound]:
        # the rounds BPE makes even where encode takes the whole-token shortcut: every
        # token of r50k_base, cl100k_base and o200k_base merges back to itself (checked
        # once over all 350,510 of them), so the shortcut never changes the result
        rounds: list[TraceRound] = []
        merge_by_rank(data, self.ranks, rounds=rounds)
        return rounds

    def to_json(self) -> dict:
        raise TypeError(
            "a rank-mode model comes from a pinned vocabulary file and is not saved as a "
            "trained model; save a ByteBPE from `train` instead"
        )
