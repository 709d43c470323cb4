"""Learning merges with pair counts kept up to date, instead of recounted for every merge.

:func:`implementations.bytebpe.model.train_reference` is the rule as seed 002 states it:
count every adjacent pair of every chunk, merge the most frequent one (ties to the
smallest pair), and count again. Recounting costs the whole corpus per merge; here the
counts are kept and only the chunks that hold the merged pair are touched:

- ``counts[pair]``: weighted occurrences, every position counted (overlaps too), exactly
  what a recount would give at that moment;
- ``where[pair]``: the chunks holding it, so a merge visits only those;
- a heap of ``(-count, pair)``: the smallest entry is the most frequent pair, the
  smallest pair on a tie, as the reference chooses. Counts change after the entry was
  pushed, so an entry is used only if it still holds the current count (otherwise a
  newer entry for the pair is in the heap too).

A chunk that holds the merged pair has all its pairs taken out of the counts and the
merged chunk's pairs put back: the same counts as a recount, whatever the overlaps (in
``aaaa`` the pair ``(a, a)`` sits at three places and merges at two). A test holds the
merges equal to the reference's on many small corpora.
"""

from __future__ import annotations

import heapq
from typing import Sequence

from implementations.bytebpe.base import merge_pair

__all__ = ["learn_merges"]

Pair = tuple[int, int]


def learn_merges(
    chunks: Sequence[Sequence[int]], weights: Sequence[int], *, num_merges: int, first_id: int, min_count: int = 2
) -> list[Pair]:
    """Up to ``num_merges`` merges of ``chunks`` (each counted ``weights[i]`` times).

    Merge ``i`` makes the ID ``first_id + i``. Stops early when no pair reaches
    ``min_count``.

    >>> learn_merges([[1, 2, 3], [1, 2]], [1, 2], num_merges=5, first_id=10)
    [(1, 2)]
    >>> learn_merges([[7, 7, 7, 7]], [1], num_merges=5, first_id=10)
    [(7, 7)]
    """
    words = [list(chunk) for chunk in chunks]
    counts: dict[Pair, int] = {}
    where: dict[Pair, set[int]] = {}
    for index, (word, weight) in enumerate(zip(words, weights)):
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + weight
            where.setdefault(pair, set()).add(index)
    heap = [(-count, pair) for pair, count in counts.items()]
    heapq.heapify(heap)

    merges: list[Pair] = []
    while len(merges) < num_merges and heap:
        negative, pair = heapq.heappop(heap)
        if counts.get(pair) != -negative:
            continue  # stale: the pair's count changed after this entry was pushed
        if -negative < min_count:
            break  # the most frequent pair is too rare: so is every other
        new_id = first_id + len(merges)
        merges.append(pair)
        # the change of every pair's count over all chunks that hold the merged pair;
        # pairs a chunk keeps cancel out and are not pushed again
        delta: dict[Pair, int] = {}
        for index in where.pop(pair, ()):
            word, weight = words[index], weights[index]
            merged = merge_pair(word, pair, new_id)
            old_pairs = list(zip(word, word[1:]))
            new_pairs = list(zip(merged, merged[1:]))
            for old in old_pairs:
                delta[old] = delta.get(old, 0) - weight
            for new in new_pairs:
                delta[new] = delta.get(new, 0) + weight
            for gone in set(old_pairs).difference(new_pairs):
                if gone != pair:
                    where[gone].discard(index)
            for added in set(new_pairs).difference(old_pairs):
                where.setdefault(added, set()).add(index)
            words[index] = merged
        for other, change in delta.items():
            if not change:
                continue
            count = counts.get(other, 0) + change
            if count > 0:
                counts[other] = count
                heapq.heappush(heap, (-count, other))
            else:  # no chunk holds it any more (the merged pair itself, among others)
                counts.pop(other, None)
                where.pop(other, None)
    return merges
