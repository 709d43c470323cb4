"""A deliberately wrong byte-BPE encoder: merge the first mergeable pair from the left.

Seed 002, §3.5: with (b,c) -> u at rank 0 and (a,b) -> v at rank 1, encoding [a,b,c]
must merge the lower-rank (b,c) first and give [a, u]. An encoder that merges as soon as
it sees any known pair, scanning left to right, gives [v, c] instead. Both decode to
``abc``; only the IDs differ, which is exactly what the harness must be able to show.
This module exists so it can: ``bytebpe-ltr:PATH`` claims the same encoding as
``bytebpe:PATH`` and declares itself wrong in its capability notes.
"""

from __future__ import annotations

from harness.interface import TraceRound
from implementations.bytebpe.model import ByteBPE
from implementations.bytebpe.base import BASE_VOCAB_SIZE

__all__ = ["LeftToRightByteBPE"]


class LeftToRightByteBPE(ByteBPE):
    """Same model file, same specials and pattern; only the chunk merge order differs.

    >>> wrong = LeftToRightByteBPE([(ord("b"), ord("c")), (ord("a"), ord("b"))])
    >>> wrong.encode_chunk(b"abc"), wrong.encode_chunk_plain(b"abc")
    ([257, 99], [257, 99])
    >>> ByteBPE([(ord("b"), ord("c")), (ord("a"), ord("b"))]).encode_chunk(b"abc")
    [97, 256]
    """

    def _scan(self, data: bytes, rounds: list[TraceRound] | None) -> list[int]:
        ids = list(data)
        merges = self.merges
        i = 0
        while i + 1 < len(ids):
            new_id = merges.get((ids[i], ids[i + 1]))
            if new_id is None:
                i += 1
                continue
            if rounds is not None:
                rounds.append(
                    TraceRound(
                        pair=(self.vocab[ids[i]], self.vocab[ids[i + 1]]),
                        rank=new_id - BASE_VOCAB_SIZE,
                        merged=1,
                        result=new_id,
                    )
                )
            ids[i : i + 2] = [new_id]
            # the new token may now pair with its left neighbour: look there again
            i = max(i - 1, 0)
        return ids

    def encode_chunk_plain(self, data: bytes) -> list[int]:
        return self._scan(data, None)

    def encode_chunk(self, data: bytes) -> list[int]:
        """:meth:`_scan` without its list splices, in linear time: a stack.

        The scan merges at ``i`` and steps back to ``i - 1``, so what lies left of ``i`` is
        always fully merged: it is a stack whose top pair is tried again after every
        merge, and each new byte is pushed only when the top pair does not merge.
        """
        merges = self.merges
        out: list[int] = []
        for token in data:
            out.append(token)
            while len(out) >= 2:
                new_id = merges.get((out[-2], out[-1]))
                if new_id is None:
                    break
                del out[-1]
                out[-1] = new_id
        return out

    def trace_chunk(self, data: bytes) -> list[TraceRound]:
        rounds: list[TraceRound] = []
        self._scan(data, rounds)
        return rounds
