"""A set of token IDs kept as runs of consecutive IDs: what the every-token phase checked.

The phase checks every ID of a vocabulary, slice by slice, in ID order, so per adapter
the IDs it checked are one run (0 to 200,018 for o200k_base). Held as a ``set[int]``
they were 7.3 million int objects and 174 MB of set tables in a default run, merged from
every unit's delta and kept to the end for one figure, the count (issue 25). As runs
they are a few integers, whatever the vocabulary's size.
"""

from __future__ import annotations

import bisect
from typing import Iterable, Iterator

__all__ = ["IdRuns"]


class IdRuns:
    """IDs as sorted, disjoint, non-adjacent half-open runs ``[start, end)``.

    >>> ids = IdRuns([5, 1, 2, 3])
    >>> ids.update(range(4, 8)); ids.update([10])
    >>> ids.runs(), len(ids), 7 in ids, 8 in ids
    ([(1, 8), (10, 11)], 8, True, False)
    >>> other = IdRuns([8, 9]); other |= ids
    >>> other.runs(), other.count_outside([0, 3, 3, 11]), list(IdRuns([4, 2, 3]))
    ([(1, 11)], 2, [2, 3, 4])
    """

    __slots__ = ("_starts", "_ends")

    def __init__(self, ids: Iterable[int] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        self.update(ids)

    def update(self, ids: Iterable[int]) -> None:
        """Add ``ids`` (any order, repeats allowed)."""
        self._merge(_runs_of(sorted(set(ids))))

    def __ior__(self, other: "IdRuns") -> "IdRuns":
        self._merge(list(zip(other._starts, other._ends)))
        return self

    def __len__(self) -> int:
        return sum(end - start for start, end in zip(self._starts, self._ends))

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __contains__(self, token_id: object) -> bool:
        if not isinstance(token_id, int):
            return False
        at = bisect.bisect_right(self._starts, token_id) - 1
        return at >= 0 and token_id < self._ends[at]

    def __iter__(self) -> Iterator[int]:
        for start, end in zip(self._starts, self._ends):
            yield from range(start, end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdRuns) and self.runs() == other.runs()

    def __repr__(self) -> str:
        return f"IdRuns({self.runs()})"

    def runs(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends))

    def count_outside(self, ids: Iterable[int]) -> int:
        """How many distinct ``ids`` are not in here (``len(self | ids) - len(self)``,
        without making the union)."""
        return sum(token_id not in self for token_id in set(ids))

    def _merge(self, runs: list[tuple[int, int]]) -> None:
        if not runs:
            return
        merged: list[tuple[int, int]] = []
        for start, end in sorted([*zip(self._starts, self._ends), *runs]):
            if merged and start <= merged[-1][1]:  # overlapping or adjacent: one run
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]


def _runs_of(ordered: list[int]) -> list[tuple[int, int]]:
    """Sorted distinct IDs as half-open runs.

    >>> _runs_of([0, 1, 2, 7, 9, 10])
    [(0, 3), (7, 8), (9, 11)]
    """
    runs: list[tuple[int, int]] = []
    for token_id in ordered:
        if runs and runs[-1][1] == token_id:
            runs[-1] = (runs[-1][0], token_id + 1)
        else:
            runs.append((token_id, token_id + 1))
    return runs
