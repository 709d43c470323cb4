"""Merge recovery for minbpe's GPT4Tokenizer approach, and its on-disk cache.

A ``.tiktoken`` file only says which byte strings are tokens and their rank (= ID); the
integer BPE in :mod:`implementations.minbpe.tokenizer` needs "left ID, right ID -> new ID".
:func:`recover_merges` gets it back: for each multi-byte token, replay only the merges of
rank strictly below its own on its bytes; exactly two parts must remain, and they are the
token's last merge.

Recovery replays every multi-byte token of the vocabulary, so
:func:`load_or_recover_merges` keeps the result under ``cache_dir()/minbpe``, keyed by the
vocabulary file's SHA-256.
"""

from __future__ import annotations

import array
import sys
from pathlib import Path
from typing import Mapping

from harness.atomic import write_atomic
from harness.vocab import cache_dir

__all__ = [
    "MergeRecoveryError",
    "earlier_parts",
    "load_or_recover_merges",
    "recover_merges",
]

_NO_RANK = sys.maxsize  # an int, not inf, so min() over rank lists stays on ints


class MergeRecoveryError(ValueError):
    """A token's bytes do not replay to exactly two earlier tokens."""


# -- merge recovery ------------------------------------------------------------------------


def earlier_parts(ranks: Mapping[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    """Replay on ``token``'s bytes every merge of rank < ``max_rank``, lowest rank first.

    Ties (the same byte pair twice) go to the leftmost place. Only neighbours of a merge
    get a new rank, so each round is one C-level ``min`` over the list.

    >>> ranks = {b"h": 0, b"e": 1, b"l": 2, b"o": 3, b"el": 4, b"lo": 5, b"ello": 6, b"hello": 7}
    >>> earlier_parts(ranks, b"hello", 7)
    [b'h', b'ello']
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    get = ranks.get
    pair_ranks = [get(parts[i] + parts[i + 1], _NO_RANK) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best >= max_rank:
            break
        i = pair_ranks.index(best)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        del pair_ranks[i]
        if i > 0:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], _NO_RANK)
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], _NO_RANK)
    return parts


def recover_merges(ranks: Mapping[bytes, int]) -> dict[tuple[int, int], int]:
    """``(left ID, right ID) -> ID`` for every multi-byte token of ``ranks``.

    >>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
    >>> recover_merges(ranks)
    {(0, 1): 2, (2, 1): 3}
    """
    merges: dict[tuple[int, int], int] = {}
    for token, rank in ranks.items():
        if len(token) == 1:
            continue
        parts = earlier_parts(ranks, token, rank)
        if len(parts) != 2:
            # never store a partial rule: the token would be unreachable or wrongly built
            raise MergeRecoveryError(
                f"cannot recover the merge that builds token {token!r} (rank {rank}): replaying "
                f"the merges ranked below it leaves {len(parts)} parts {parts!r}, not 2. The "
                f"ranks are not a byte-level BPE vocabulary (every multi-byte token must be "
                f"two earlier tokens); check the vocabulary file."
            )
        merges[(ranks[parts[0]], ranks[parts[1]])] = rank
    return merges


# -- on-disk cache of recovered merges ------------------------------------------------------

_CACHE_MAGIC = b"tokconf-minbpe-merges-v1"


def _cache_path(vocab_sha256: str) -> Path:
    return cache_dir() / "minbpe" / f"{vocab_sha256}.merges"


def _serialise(merges: Mapping[tuple[int, int], int], vocab_sha256: str) -> bytes:
    flat = array.array("I", [n for (left, right), rank in merges.items() for n in (left, right, rank)])
    if sys.byteorder == "big":
        flat.byteswap()  # the file is little-endian wherever it was written
    return _CACHE_MAGIC + b" " + vocab_sha256.encode() + b"\n" + flat.tobytes()


def _deserialise(data: bytes, vocab_sha256: str) -> dict[tuple[int, int], int] | None:
    header, sep, body = data.partition(b"\n")
    if not sep or header != _CACHE_MAGIC + b" " + vocab_sha256.encode() or len(body) % 12:
        return None
    flat = array.array("I")
    flat.frombytes(body)
    if sys.byteorder == "big":
        flat.byteswap()
    return {(flat[i], flat[i + 1]): flat[i + 2] for i in range(0, len(flat), 3)}


def load_or_recover_merges(ranks: Mapping[bytes, int], *, vocab_sha256: str) -> dict[tuple[int, int], int]:
    """Recovered merges, from ``cache_dir()/minbpe/<vocab sha256>.merges`` when it is good.

    A cached file is used only if its header names the same vocabulary hash and every
    merge rebuilds exactly the token of its rank; anything else is recomputed and the
    file rewritten.
    """
    path = _cache_path(vocab_sha256)
    try:
        cached = _deserialise(path.read_bytes(), vocab_sha256)
    except OSError:
        cached = None
    if cached is not None and _merges_rebuild(ranks, cached):
        return cached
    merges = recover_merges(ranks)
    try:
        write_atomic(path, _serialise(merges, vocab_sha256))
    except OSError:
        pass  # a read-only cache costs time, not correctness
    return merges


def _merges_rebuild(ranks: Mapping[bytes, int], merges: Mapping[tuple[int, int], int]) -> bool:
    by_rank = {rank: token for token, rank in ranks.items()}
    if len(merges) != len(ranks) - sum(1 for t in ranks if len(t) == 1):
        return False
    for (left, right), rank in merges.items():
        whole = by_rank.get(rank)
        if whole is None or by_rank.get(left, b"") + by_rank.get(right, b"") != whole:
            return False
    return True
