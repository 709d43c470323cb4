"""The every-token inputs: every ID of a reference vocabulary, as text and in context.

A conformance run that samples the vocabulary passes a drop-in whose only fault is one
token in the other 99 %. This phase's inputs are the whole ID space of the encoding's
reference, cut into slices of :data:`SLICE_TOKENS` IDs (one task, and for an adapter in a
worker one frame of calls, per slice):

- every ordinary ID: the reference's bytes for it (``token_bytes``), compared with each
  adapter's; where the bytes are valid UTF-8, its text alone and
  :func:`harness.checks.reachability.context_text` of it (after a letter, twice, after a
  newline, before a letter: one text, see there why one), :data:`CONTEXTS_PER_TEXT`
  contexts packed into one text, encoded under the ordinary policy and compared with
  the reference's IDs;
- every special ID: its literal, encoded with every literal allowed, and its bytes.

The reference's answers are computed once here (in the parent; under ``--jobs`` its
lists of texts are spread over the run's processes), and travel with each
slice, so a slice checks an adapter without asking the reference again and the
reachability audit (:func:`harness.checks.reachability.classify`) is made from the same
answers. Pure input building: which IDs, which texts, what the reference said; the run
module (:mod:`harness.run.every_token`) does the comparing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Sequence

from harness.calls import Calls
from harness.cases.model import Policy
from harness.checks.base import ALL, ORDINARY
from harness.checks.reachability import Reachability, classify, context_text
from harness.checks.vocab import ordinary_end

__all__ = ["EncodeMany", "EveryTokenPlan", "SLICE_TOKENS", "TokenSlice", "build_plan", "encode_all", "pieces_of"]

#: IDs per slice: one task of the run and, for a worker, one frame of ~2 x this many calls.
SLICE_TOKENS = 2048
#: token contexts per packed text. Calls, not characters, are what an adapter pays for
#: on short texts (a worker's round trip, a pure-Python encoder's set-up per call), so 16
#: contexts in one text cost about one call; a difference in a packed text is shrunk to
#: the context that shows it like any other finding.
CONTEXTS_PER_TEXT = 16


@dataclass(frozen=True)
class TokenSlice:
    """A run of IDs with what the reference said about each (plain data: it is pickled)."""

    encoding: str
    reference: str
    ids: tuple[int, ...]
    #: the reference's bytes per ID (``None``: it has none: a hole)
    pieces: tuple[bytes | None, ...]
    #: the texts to check: (text, policy, the reference's IDs for it or ``None`` if it raised):
    #: each token's text alone, its special literal, and the packed context texts
    texts: tuple[tuple[str, Policy, tuple[int, ...] | None], ...]

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def digest(self) -> bytes:
        """SHA-256 of the slice's content: IDs, bytes, texts and the reference's answers
        (the unit cache's key; computed once, though every adapter's unit holds the slice)."""
        digest = hashlib.sha256()
        digest.update(repr((self.encoding, self.reference, self.ids)).encode("ascii"))
        for piece in self.pieces:
            digest.update(b"\1" if piece is None else b"\0" + len(piece).to_bytes(4, "big") + piece)
        described: dict[Policy, bytes] = {}  # two policies among 4,000 texts
        for text, policy, expected in self.texts:
            if policy not in described:
                described[policy] = policy.describe().encode("utf-8")
            digest.update(text.encode("utf-8", "surrogatepass") + b"\0" + described[policy] + b"\0"
                          + repr(expected).encode("ascii") + b"\0")
        return digest.digest()


@dataclass(frozen=True)
class EveryTokenPlan:
    encoding: str
    reference: str
    slices: tuple[TokenSlice, ...]
    reachability: Reachability
    #: the reference's bytes per ordinary ID (for listing the unreachable ones)
    pieces: dict[int, bytes | None]
    #: every ID the slices hold: ordinary and special
    ids: frozenset[int]

    def reachability_json(self) -> dict[str, Any]:
        return self.reachability.to_json(self.pieces)


def encode_all(calls: Calls, texts: Sequence[str], policy: Policy, *, frame: int = 2 * SLICE_TOKENS) -> list[Any]:
    """Every text's encode answer (its IDs, or the outcome of a failure: :data:`EncodeMany`),
    ``frame`` texts at a time (:meth:`Calls.encode_many`:
    an adapter in a worker is asked a frame per round trip; in process one loop of
    ``encode`` calls, not the library's batch call: tiktoken's own
    ``encode_ordinary_batch`` over 99,483 token texts took 3.7 s with one thread on this
    2-core machine under load, a loop of ``encode_ordinary`` 0.25 s)."""
    out: list[Any] = []
    calls.reset()
    for start in range(0, len(texts), frame):
        out += calls.encode_many(texts[start:start + frame], policy)
    return out


#: encodes a list of texts under a policy on the reference: the answers, in order, a
#: success as its IDs alone (a tuple), a failure as its Outcome (:meth:`Calls.encode_many`;
#: :meth:`harness.run.parallel.Jobs.encode_many` gets 200,000 answers from its processes,
#: and making each an Outcome again was 0.2 s of the parent's while both processes waited)
EncodeMany = Callable[[Sequence[str], Policy], list[Any]]


def build_plan(reference: Calls, *, slice_tokens: int = SLICE_TOKENS,
               encode_many: EncodeMany | None = None) -> EveryTokenPlan:
    """Ask the reference about every ID; cut the answers into slices.

    ``encode_many`` asks the reference about a list of texts; by default here, in order
    (:func:`encode_all`); a run with ``--jobs`` spreads the lists over its processes
    (:meth:`harness.run.parallel.Jobs.encode_many`), the same answers in the same order."""
    if slice_tokens < 1:
        raise ValueError(f"slice_tokens must be at least 1, got {slice_tokens}")
    if encode_many is None:
        encode_many = lambda texts, policy: encode_all(reference, texts, policy)  # noqa: E731
    specials = dict(reference.info.special_tokens)
    special_ids = {i: literal for literal, i in specials.items()}
    end = ordinary_end(reference)
    ordinary_ids = [i for i in range(end) if i not in special_ids]
    pieces: dict[int, bytes | None] = dict(zip(ordinary_ids, pieces_of(reference, ordinary_ids)))
    texts = {i: p.decode("utf-8") for i, p in pieces.items() if p is not None and _utf8(p)}
    order = sorted(texts)
    literal_ids = sorted(special_ids)
    all_ids = sorted(set(pieces) | set(literal_ids))
    starts = range(0, len(all_ids), slice_tokens)
    packs_of = []  # each slice's packed context texts, asked about together
    for start in starts:
        in_slice = [i for i in all_ids[start:start + slice_tokens] if i in texts]
        packs_of.append(["".join(context_text(texts[i]) for i in in_slice[k:k + CONTEXTS_PER_TEXT])
                         for k in range(0, len(in_slice), CONTEXTS_PER_TEXT)])
    # every ordinary text in one list: under --jobs one spread over the processes, not three
    # in turn, each with the parent's serial work between them (issue 25)
    ordinary = encode_many([texts[i] for i in order] + [context_text(texts[i]) for i in order]
                           + [pack for packs in packs_of for pack in packs], ORDINARY)
    alone, context = ordinary[:len(order)], ordinary[len(order):2 * len(order)]
    answers = iter(ordinary[2 * len(order):])
    allowed = encode_many([special_ids[i] for i in literal_ids], ALL)
    reach = classify(pieces, {i: _ids(o) or () for i, o in zip(order, alone)},
                     {i: _ids(o) or () for i, o in zip(order, context)})
    own: dict[int, tuple[str, Policy, tuple[int, ...] | None]] = {}
    for token_id, outcome in zip(order, alone):
        own[token_id] = (texts[token_id], ORDINARY, _ids(outcome))
    for token_id, outcome in zip(literal_ids, allowed):
        own[token_id] = (special_ids[token_id], ALL, _ids(outcome))
    special_pieces = {i: special_ids[i].encode("utf-8") for i in literal_ids}
    slices = []
    for start, packs in zip(starts, packs_of):
        ids = tuple(all_ids[start:start + slice_tokens])
        packed = [next(answers) for _ in packs]
        slices.append(TokenSlice(
            encoding=reference.info.encoding, reference=reference.name, ids=ids,
            pieces=tuple(special_pieces[i] if i in special_pieces else pieces[i] for i in ids),
            texts=tuple(own[i] for i in ids if i in own) + tuple(
                (text, ORDINARY, _ids(outcome)) for text, outcome in zip(packs, packed))))
    return EveryTokenPlan(encoding=reference.info.encoding, reference=reference.name, slices=tuple(slices),
                          reachability=reach, pieces=pieces, ids=frozenset(all_ids))


def pieces_of(calls: Calls, ids: Sequence[int]) -> list[bytes | None]:
    """Each ID's bytes (``None``: the adapter has none), not kept: a plan reads each ID of
    its reference once. In process one loop without an Outcome per ID
    (:meth:`~harness.calls.InProcess.pieces_each`: cl100k_base 0.05 s, not 0.31 s)."""
    each = getattr(calls.executor, "pieces_each", None)
    if each is None:  # a worker, or an executor that remembers answers: its own frames
        calls.prefetch_pieces(ids)
        found = [calls.token_bytes(i) for i in ids]
        calls.forget_pieces(ids)
        return [bytes(o.value) if o.is_ok else None for o in found]  # a subclass's copy, as pieces_each keeps
    return [p if type(p) is bytes else (p.value if p.is_ok else None) for p in each(ids)]


def _utf8(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _ids(outcome: Any) -> tuple[int, ...] | None:
    """The IDs of an encode's answer, None for a failure; a success may come as its IDs
    alone (:data:`EncodeMany`).

    >>> from harness.outcomes import Outcome
    >>> _ids(Outcome.ok((1, 2))), _ids((1, 2)), _ids(Outcome.raised("internal-error", "X", "y"))
    ((1, 2), (1, 2), None)
    """
    if type(outcome) is tuple:
        return outcome
    return tuple(outcome.value) if outcome.is_ok else None
