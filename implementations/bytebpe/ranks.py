"""Byte-level BPE, layer 3 of 3: tiktoken's published ranks, merged over bytes.

Seed 003's short route (§23.5): keep every part of a piece as ``bytes``, repeatedly
merge the adjacent pair whose *concatenation* has the lowest rank (leftmost on a tie),
and look the final parts up in the ranks. The byte shuffle of cl100k_base (the space
byte is ID 220) needs no special care: it lives in the final lookup.

A piece can be a megabyte long (a run of one letter is one pre-split chunk).
:func:`merge_by_rank_plain` states the rule and scans every pair per merge, which is
quadratic; :func:`merge_by_rank` gives the same IDs in linear time (a linked list of
parts, candidate pairs in one bucket per rank) and is what encoding uses. Distinct byte
strings have distinct ranks, so a rank names the bytes of a pair uniquely.
"""

from __future__ import annotations

import heapq
import sys
from typing import Callable, Mapping

from harness.interface import TraceRound
from implementations.bytebpe.model import ByteBPE
from implementations.bytebpe.patterns import CL100K_PATTERN, O200K_PATTERN, R50K_PATTERN, compile_pattern, split_chunks

__all__ = ["ENCODINGS", "RankByteBPE", "TOTAL_PATTERNS", "merge_by_rank", "merge_by_rank_plain"]

#: The published patterns: every character falls in one of their alternatives (letters,
#: numbers, other non-space characters, whitespace), so no text is ever left out.
TOTAL_PATTERNS = frozenset({R50K_PATTERN, CL100K_PATTERN, O200K_PATTERN})

_NO_RANK = sys.maxsize  # an int, not inf, so min() over rank lists stays on ints
#: Pieces shorter than this many bytes merge by the plain loop, longer ones by buckets.
SHORT_PIECE = 40

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


def merge_by_rank_plain(
    piece: bytes, ranks: Mapping[bytes, int], *, rounds: list[TraceRound] | None = None
) -> list[int]:
    """BPE one piece by the ranks of concatenations, as the rule reads: again and again,
    merge the adjacent pair whose concatenation has the lowest rank, leftmost on a tie.

    O(n²) for a piece of n bytes; :func:`merge_by_rank` gives the same IDs in linear time.

    >>> toy = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    >>> merge_by_rank_plain(b"abc", toy)
    [0, 3]
    """
    parts = [piece[i : i + 1] for i in range(len(piece))]
    # pair_ranks[i]: the rank of parts[i] + parts[i + 1] (no rank: larger than any)
    pair_ranks = [ranks.get(a + b, _NO_RANK) for a, b in zip(parts, parts[1:])]
    while pair_ranks:
        rank = min(pair_ranks)
        if rank == _NO_RANK:
            break
        i = pair_ranks.index(rank)  # the leftmost of the lowest
        if rounds is not None:
            rounds.append(TraceRound(pair=(parts[i], parts[i + 1]), rank=rank, merged=1, result=rank))
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        del pair_ranks[i]
        if i > 0:
            pair_ranks[i - 1] = ranks.get(parts[i - 1] + parts[i], _NO_RANK)
        if i < len(pair_ranks):
            pair_ranks[i] = ranks.get(parts[i] + parts[i + 1], _NO_RANK)
    return [ranks[part] for part in parts]


def merge_by_rank(
    piece: bytes, ranks: Mapping[bytes, int], *, rounds: list[TraceRound] | None = None
) -> list[int]:
    """The IDs of :func:`merge_by_rank_plain`, in linear time.

    The parts are a linked list over byte offsets (``nxt``/``prv``; ``cur[i]``: the rank
    of the pair starting at part ``i``, -1 for none). Candidate pairs wait in *buckets*,
    one list of offsets per rank, and a small heap holds the ranks that have a bucket: the
    lowest bucket is merged in offset order, which is the lowest rank, leftmost. A merge
    never creates a pair of the rank being merged (the new pair's bytes are longer), but
    it can create one of a *lower* rank; the bucket then stops and waits its turn again,
    so the order is exactly the plain rule's. A heap of every candidate pair (the
    previous version) is O(n log n) and, past a few hundred kilobytes, slower per byte
    with each tenfold size as the heap outgrows the caches.

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
    cur = [-1] * n
    buckets: dict[int, list[int]] = {}
    for i in range(n - 1):
        rank = get(piece[i : i + 2])
        if rank is not None:
            cur[i] = rank
            buckets.setdefault(rank, []).append(i)
    waiting = list(buckets)  # the ranks that have a bucket, as a heap
    heapq.heapify(waiting)
    pop, push = heapq.heappop, heapq.heappush
    while waiting:
        rank = pop(waiting)
        offsets = sorted(buckets.pop(rank))
        for at, i in enumerate(offsets):
            if cur[i] != rank:
                continue  # stale: part i merged, vanished or changed since it was queued
            j = nxt[i]
            k = nxt[j]
            if rounds is not None:
                rounds.append(TraceRound(pair=(piece[i:j], piece[j:k]), rank=rank, merged=1, result=rank))
            nxt[i] = k
            cur[j] = -1
            # the two pairs the merge changed: (new part, its right neighbour) ...
            if k < n:
                prv[k] = i
                right = get(piece[i : nxt[k]])
                cur[i] = -1 if right is None else right
                if right is not None:
                    if right in buckets:
                        buckets[right].append(i)
                    else:
                        buckets[right] = [i]
                        push(waiting, right)
            else:
                cur[i] = -1
            # ... and (left neighbour, new part)
            p = prv[i]
            if p >= 0:
                left = get(piece[p:k])
                cur[p] = -1 if left is None else left
                if left is not None:
                    if left in buckets:
                        buckets[left].append(p)
                    else:
                        buckets[left] = [p]
                        push(waiting, left)
            if waiting and waiting[0] < rank:
                # a lower rank appeared: it goes first; the rest of this bucket waits
                rest = offsets[at + 1 :]
                if rest:
                    buckets[rank] = rest
                    push(waiting, rank)
                break
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
        if len(data) < SHORT_PIECE:
            # the plain loop's few C-level list operations beat the buckets' bookkeeping
            # on short pieces (measured: 2-4 us against 2.4-13 us below 32 bytes)
            return merge_by_rank_plain(data, self.ranks)
        return merge_by_rank(data, self.ranks)

    def encode_chunk_plain(self, data: bytes) -> list[int]:
        return merge_by_rank_plain(data, self.ranks)

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
