"""The base of every planted fault: tiktoken's cl100k_base, exactly, but for one thing.

A :class:`Mutant` is an adapter that answers every call with tiktoken's own answer; a
subclass overrides the one hook its fault lives in. Faults in the pre-tokenizer or the
merge loop are *gated*: the faulty algorithm runs beside the correct one, and only where
the two disagree does the mutant return the faulty result; everywhere else it returns
tiktoken's IDs. So a mutant differs from tiktoken by its planted fault and nothing else
(not, say, by the ``regex`` module's newer Unicode tables), and a divergence the run
finds is that fault.

    >>> from harness.selftest.mutant import merge_pieces
    >>> table = {b"a": 0, b"b": 1, b"aa": 2, b"ab": 3}
    >>> merge_pieces(b"aaa", table), merge_pieces(b"aaa", table, rightmost=True)
    ([2, 0], [0, 2])
    >>> merge_pieces(b"aab", table), merge_pieces(b"aab", table, max_rank=3)
    ([2, 1], [2, 1])
"""

from __future__ import annotations

import heapq
from functools import lru_cache
from typing import Any, Mapping, Sequence

import regex

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial, resolve_special_policy
from harness.outcomes import Operation

__all__ = ["ENCODING", "Mutant", "merge_pieces", "split_specials"]

ENCODING = "cl100k_base"


@lru_cache(maxsize=1)
def _tiktoken() -> Adapter:
    # through the registry, as a run builds it (its cache pre-seeded, its files verified)
    from harness.registry import default_registry

    return default_registry().get(f"tiktoken:{ENCODING}")


@lru_cache(maxsize=1)
def ranks() -> dict[bytes, int]:
    from harness.vocab import load_tiktoken_ranks

    return load_tiktoken_ranks(ENCODING)


def merge_pieces(piece: bytes, table: Mapping[bytes, int], *, rightmost: bool = False,
                 max_rank: int | None = None, max_merges: int | None = None) -> list[int]:
    """Rank BPE of one piece (lowest rank first, leftmost on a tie), with knobs for faults.

    ``rightmost``: a tie goes to the rightmost pair; ``max_rank``: merges at or above it
    are unknown; ``max_merges``: the loop stops after that many merges. A heap over a
    linked list of parts, so long pieces cost O(n log n).
    """
    n = len(piece)
    if n < 2:
        return [table[piece]] if n else []
    limit = max_rank if max_rank is not None else 1 << 62

    def rank_of(i: int, k: int) -> int | None:
        rank = table.get(piece[i:k])
        return rank if rank is not None and rank < limit else None

    def key(rank: int, i: int) -> int:
        return rank * n + (n - 1 - i if rightmost else i)

    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    cur = [-1] * n
    heap = []
    for i in range(n - 1):
        rank = rank_of(i, i + 2)
        if rank is not None:
            cur[i] = rank
            heap.append((key(rank, i), rank, i))
    heapq.heapify(heap)
    merges = 0
    while heap and (max_merges is None or merges < max_merges):
        _, rank, i = heapq.heappop(heap)
        if cur[i] != rank:
            continue
        merges += 1
        j = nxt[i]
        k = nxt[j]
        nxt[i] = k
        cur[j] = -1
        cur[i] = -1
        if k < n:
            prv[k] = i
            right = rank_of(i, nxt[k])
            if right is not None:
                cur[i] = right
                heapq.heappush(heap, (key(right, i), right, i))
        p = prv[i]
        if p >= 0:
            left = rank_of(p, k)
            cur[p] = -1 if left is None else left
            if left is not None:
                heapq.heappush(heap, (key(left, p), left, p))
    out = []
    i = 0
    while i < n:
        out.append(table[piece[i : nxt[i]]])
        i = nxt[i]
    return out


def split_specials(text: str, allowed: frozenset[str]) -> list[tuple[str, bool]]:
    """``text`` cut around the allowed literals: (segment, is_special), longest literal first.

    >>> split_specials("a<|x|>b", frozenset({"<|x|>"}))
    [('a', False), ('<|x|>', True), ('b', False)]
    """
    if not allowed:
        return [(text, False)]
    literals = sorted(allowed, key=len, reverse=True)
    found = regex.split("(" + "|".join(regex.escape(s) for s in literals) + ")", text)
    return [(part, i % 2 == 1) for i, part in enumerate(found) if part]


def replace_surrogates(text: str) -> str:
    """What tiktoken encodes when the text has no UTF-8 form (its own UTF-16 repair)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class Mutant(Adapter):
    """tiktoken's cl100k_base with one fault; subclasses set the class attributes below."""

    library = "tiktoken"
    encoding = ENCODING
    capabilities = Capabilities(batch=True, pretokenize=True)
    #: short name; the adapter is ``selftest:<fault>``
    fault = ""
    #: pre-tokenization, merging, special tokens, decoding, batching, error handling, API
    area = ""
    #: what is wrong, in one sentence
    summary = ""
    #: why no minimal input of 12 characters or fewer exists (``None``: one does)
    not_small: str | None = None

    def __init__(self) -> None:
        self.inner = _tiktoken()
        self.enc: Any = self.inner.native
        self.name = f"selftest:{self.fault}"

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return self.inner.special_tokens

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        return self.encode(text, allowed_special=frozenset(), disallowed_special=())

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all") -> list[list[int]]:
        # one text at a time through this mutant's own encode: the fault shows in both
        return [self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in texts]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.inner.decode_bytes(ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.inner.decode(ids, errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self.inner.token_bytes(token_id)

    def pretokenize(self, text: str) -> list[str]:
        return self.inner.pretokenize(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return self.inner.classify_error(op, exc)

    def allowed(self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial) -> frozenset[str]:
        return resolve_special_policy(frozenset(self.special_tokens), allowed_special, disallowed_special)[0]


class GatedMutant(Mutant):
    """A fault inside encoding proper: ``faulty_segment`` runs where it changes something.

    The policy is tiktoken's (it raises first, as tiktoken would); text between allowed
    special literals goes through :meth:`faulty_segment`, which returns ``None`` when
    the fault does not change that segment (then tiktoken's own IDs are used).
    """

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        native = self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        clean = replace_surrogates(text)
        out: list[int] = []
        changed = False
        for segment, special in split_specials(clean, self.allowed(allowed_special, disallowed_special)):
            if special:
                out.append(self.special_tokens[segment])
                continue
            faulty = self.faulty_segment(segment)
            if faulty is None:
                out += self.enc.encode_ordinary(segment)
            else:
                changed = True
                out += faulty
        return out if changed else native

    def faulty_segment(self, text: str) -> list[int] | None:
        raise NotImplementedError
