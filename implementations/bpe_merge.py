"""Merging one chunk of integer IDs by merge rank, fast, for the models whose merges are
``(left ID, right ID) -> new ID`` with new IDs in rank order (minbpe's recovered merges,
tokconf's own trained byte BPE).

The rule both models define (minbpe, seed 001; tokconf's byte BPE, seed 002) is in rounds:
each round merges every non-overlapping occurrence of the lowest-rank pair present, left
to right. Their modules keep that literal rule (``merge_rounds``, ``encode_chunk``) as the
definition; the two functions here give the same IDs:

- :func:`merge_lowest_first` merges one place at a time, always the lowest-rank pair,
  leftmost on a tie, with a plain list of pair ranks (C-level ``min`` and ``index``):
  O(n²), yet the fastest for the short chunks that make up ordinary text;
- :func:`merge_buckets` does the same in linear time for long chunks (a megabyte of one
  letter is a single chunk).

Why one place at a time gives the rounds' result: a merged token's ID is above both of
its parts', so every pair a merge creates ranks above the pair just merged. All places of
the lowest pair are therefore finished, left to right, before any other pair, which is
one round; a place whose left symbol was just consumed no longer holds the pair, which is
the non-overlap rule.
"""

from __future__ import annotations

import heapq
import sys
from itertools import repeat
from typing import Mapping

__all__ = ["BUCKETS_FROM", "merge_buckets", "merge_ids", "merge_lowest_first"]

_NO_RANK = sys.maxsize  # an int, not inf, so min() over rank lists stays on ints

#: Chunks of at least this many IDs merge by buckets (below it the list is faster:
#: measured on cl100k_base's merges, the two cross between 32 and 96 IDs).
BUCKETS_FROM = 64


def merge_lowest_first(ids: list[int], merges: Mapping[tuple[int, int], int]) -> list[int]:
    """The lowest-rank pair, leftmost, one place at a time (changes and returns ``ids``).

    >>> merge_lowest_first([1, 1, 1, 2], {(1, 1): 10, (1, 2): 11, (10, 1): 12})
    [10, 11]
    """
    get = merges.get
    ranks = list(map(get, zip(ids, ids[1:]), repeat(_NO_RANK)))  # rank of ids[i], ids[i + 1]
    while ranks:
        best = min(ranks)
        if best == _NO_RANK:
            break
        i = ranks.index(best)
        ids[i] = best  # the merged token's ID is its rank
        del ids[i + 1]
        del ranks[i]
        if i:
            ranks[i - 1] = get((ids[i - 1], best), _NO_RANK)
        if i < len(ranks):
            ranks[i] = get((best, ids[i + 1]), _NO_RANK)
    return ids


def merge_buckets(ids: list[int], merges: Mapping[tuple[int, int], int]) -> list[int]:
    """The same result in linear time, for long chunks: one bucket of places per rank.

    The symbols form a linked list (``nxt``/``prv``; a merged-away symbol is ``None``).
    Each place where a pair can merge waits in the bucket of that pair's rank; the
    lowest bucket is emptied in position order, left to right. A merge only creates pairs
    of a higher rank than its own (see the module docstring), so a bucket, once emptied,
    never fills again, and a small heap of the ranks that have a bucket says which is
    next. A place is stale, and skipped, once either of its symbols changed. (A heap of
    every place, O(n log n), was slower per ID with each tenfold size past 10^5.)

    >>> merge_buckets([1, 1, 1, 2], {(1, 1): 10, (1, 2): 11, (10, 1): 12})
    [10, 11]
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    values: list[int | None] = list(ids)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    get = merges.get
    buckets: dict[int, list[int]] = {}
    for i, pair in enumerate(zip(ids, ids[1:])):
        rank = get(pair)
        if rank is not None:
            buckets.setdefault(rank, []).append(i)
    waiting = list(buckets)
    heapq.heapify(waiting)
    push = heapq.heappush
    while waiting:
        rank = heapq.heappop(waiting)
        for i in sorted(buckets.pop(rank)):
            j = nxt[i]
            left_symbol = values[i]
            if left_symbol is None or j < 0 or get((left_symbol, values[j])) != rank:
                continue  # stale
            values[i] = rank
            values[j] = None
            nxt[i] = k = nxt[j]
            if k >= 0:
                prv[k] = i
                right = get((rank, values[k]))
                if right is not None:
                    if right in buckets:
                        buckets[right].append(i)
                    else:
                        buckets[right] = [i]
                        push(waiting, right)
            h = prv[i]
            if h >= 0:
                left = get((values[h], rank))
                if left is not None:
                    if left in buckets:
                        buckets[left].append(h)
                    else:
                        buckets[left] = [h]
                        push(waiting, left)
    return [v for v in values if v is not None]


def merge_ids(ids: list[int], merges: Mapping[tuple[int, int], int]) -> list[int]:
    """Short chunks by :func:`merge_lowest_first`, long ones by :func:`merge_buckets`."""
    return merge_buckets(ids, merges) if len(ids) >= BUCKETS_FROM else merge_lowest_first(ids, merges)
