"""Which answers differ from the expected ones, found where the answers are (issue 25).

The every-token phase knows the reference's answer to each of its texts and IDs before it
asks any other adapter (the plan holds them). An adapter in a worker used to send every
answer back, each one JSON-encoded there, decoded, checked and wrapped in an Outcome here,
only for nearly all of them to be found equal: on the README's drop-in path (tiktoken
itself behind ``tiktoken-compatible:``) that was 2.2 s of the parent's 9 s and most of
the worker's JSON. Now the expected answers go to the worker with the texts, and only the
*positions* that differ come back.

Positions are all the phase needs: a text that differs gets the full checks, which ask
the adapter again, call by call, for its own outcome (and its own timeout); an ID whose
bytes differ is asked again for the finding's message. So a failure needs no special
shape here: it differs.

- :func:`differing_encodes`, :func:`differing_pieces`: the parent's side, for any
  :class:`~harness.calls.Calls`: an executor that compares where it answers
  (:class:`harness.worker.client.WorkerExecutor`, in Python or Node) is asked to; any other
  is asked every answer, compared here. The same positions either way.
- :func:`answer`: the Python worker's side of the two operations, ``encode_differing``
  (texts, policy, expected IDs or ``None``) and ``token_bytes_differing`` (IDs, their
  expected bytes joined, each one's length: one base64 string, not one per ID).
"""

from __future__ import annotations

from typing import Any, Sequence

from harness.outcomes import Outcome

__all__ = ["OPERATIONS", "answer", "differing_encodes", "differing_pieces", "join_pieces", "positions_differing",
           "split_pieces", "valid_positions"]

#: the worker operations of this module (:mod:`harness.worker.server`, ``worker.mjs``)
OPERATIONS = frozenset({"encode_differing", "token_bytes_differing"})


def positions_differing(answers: Sequence[Any], expected: Sequence[Any], exact: type) -> tuple[int, ...]:
    """The positions whose answer is not exactly the expected value: a failure (an Outcome,
    not of type ``exact``), another value, or nothing expected (``None``).

    >>> positions_differing([(1,), (2,), Outcome.raised("internal-error", "X", "")], [(1,), (3,), (4,)], tuple)
    (1, 2)
    >>> positions_differing([b"a", b"b"], [b"a", None], bytes)
    (1,)
    """
    if len(answers) != len(expected):
        raise ValueError(f"{len(answers)} answers for {len(expected)} expected values")
    return tuple(n for n, (got, wanted) in enumerate(zip(answers, expected)) if type(got) is not exact or got != wanted)


def join_pieces(pieces: Sequence[bytes]) -> tuple[bytes, tuple[int, ...]]:
    """Pieces as one byte string and each one's length (what crosses to a worker).

    >>> join_pieces([b"ab", b"", b"c"])
    (b'abc', (2, 0, 1))
    """
    return b"".join(pieces), tuple(map(len, pieces))


def split_pieces(joined: bytes, lengths: Sequence[int]) -> list[bytes]:
    """The inverse of :func:`join_pieces`.

    >>> split_pieces(b"abc", (2, 0, 1))
    [b'ab', b'', b'c']
    """
    if sum(lengths) != len(joined) or any(type(n) is not int or n < 0 for n in lengths):
        raise ValueError(f"{len(lengths)} lengths do not cut {len(joined)} bytes")
    out, at = [], 0
    for length in lengths:
        out.append(joined[at:at + length])
        at += length
    return out


def answer(executor: Any, op: str, args: tuple[Any, ...]) -> Outcome:
    """A worker's answer to ``op`` (one of :data:`OPERATIONS`) from its
    :class:`~harness.calls.InProcess`: the differing positions, as one value. Arguments of
    the wrong shape are the parent's mistake, answered as ``internal-error``, after which
    the parent asks every item on its own."""
    try:
        if op == "encode_differing":
            texts, policy, expected = args
            return Outcome.ok(positions_differing(executor.encode_ids_many(texts, policy), expected, tuple))
        ids, joined, lengths = args
        return Outcome.ok(positions_differing(executor.pieces_each(ids), split_pieces(joined, lengths), bytes))
    except (TypeError, ValueError) as exc:
        return Outcome.raised("internal-error", "tokconf.ProtocolError", f"{op}: {exc}")


def valid_positions(outcome: Outcome, count: int) -> tuple[int, ...] | None:
    """The positions a worker answered, if ``outcome`` is such an answer: increasing ints
    below ``count``. ``None`` otherwise (a timeout, a crash, a malformed answer): then the
    caller asks each item on its own.

    >>> valid_positions(Outcome.ok((0, 2)), 3), valid_positions(Outcome.ok((2, 0)), 3)
    ((0, 2), None)
    >>> valid_positions(Outcome.timeout(5.0), 3) is None
    True
    """
    if not outcome.is_ok or type(outcome.value) is not tuple:
        return None
    positions = outcome.value
    if any(type(n) is not int for n in positions) or list(positions) != sorted(set(positions)):
        return None
    if positions and not (0 <= positions[0] and positions[-1] < count):
        return None
    return positions


def differing_encodes(calls: Any, texts: Sequence[str], policy: Any,
                      expected: Sequence[tuple[int, ...] | None], *, frame: int) -> list[int]:
    """The positions of ``texts`` whose encode under ``policy`` is not exactly ``expected``
    at that position, ``frame`` texts per question (tests/test_differing.py holds the two
    ways of asking to each other and to the single calls)."""
    asked = getattr(calls.executor, "encode_differing", None)
    calls.reset()
    out: list[int] = []
    for start in range(0, len(texts), frame):
        part, wanted = texts[start:start + frame], expected[start:start + frame]
        found = asked(part, policy, wanted) if asked is not None else \
            positions_differing(calls.encode_many(part, policy), wanted, tuple)
        out += [start + n for n in found]
    return out


def differing_pieces(calls: Any, ids: Sequence[int], expected: Sequence[bytes], *, frame: int) -> list[int]:
    """The positions of ``ids`` whose ``token_bytes`` is not exactly ``expected`` there,
    ``frame`` IDs per question."""
    # the plan's own reading of every ID's bytes (one loop in process, no Outcome per ID;
    # None where there are none, which differs); imported here: a worker never needs it
    from harness.generate.every_token import pieces_of

    asked = getattr(calls.executor, "token_bytes_differing", None)
    out: list[int] = []
    for start in range(0, len(ids), frame):
        part, wanted = ids[start:start + frame], expected[start:start + frame]
        found = asked(part, wanted) if asked is not None else positions_differing(pieces_of(calls, part), wanted, bytes)
        out += [start + n for n in found]
    return out
