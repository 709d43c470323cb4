"""Reachability audit of a vocabulary: which IDs can an encoder ever produce?

A byte-level BPE vocabulary holds tokens its own encoder never emits: pre-tokenization
cuts their text apart (o200k_base's ``" I'"``), or a merge order builds another token from the same
bytes. These are facts about the vocabulary, not failures of an adapter, and a
conformance run must not blame an adapter for them. Every ID falls in exactly one class:

- ``itself``: the token's text alone encodes to exactly that ID;
- ``in-context``: not alone, but the ID comes out of some text tried by the audit (any
  token's :func:`context_text`, or another token's text alone);
- ``unreachable``: its bytes are valid UTF-8 but no text the audit tried produced it.
  This is "not reached by the audit's texts", an upper bound on the truly unreachable;
- ``undecodable``: its bytes are not valid UTF-8 (a piece of a multi-byte character),
  so there is no text of it alone to encode;
- ``absent``: the ID has no bytes (a hole in the ID space).

Special IDs are not audited: their literals reach them by policy, not by merges.

The module is pure: it sees bytes and ID lists, never an adapter, so any encoder can be
audited (tiktoken, Hugging Face ``tokenizers``, a Llama or Tekken table) by handing
:func:`audit` a batch encode function. The every-token phase
(:mod:`harness.generate.every_token`) classifies from the answers it has already, with
:func:`classify`.

Measured with tiktoken 0.12 (``encode_ordinary`` on every token text and on its
:func:`context_text`): cl100k_base has 99,483 decodable ordinary tokens, all ``itself``,
773 ``undecodable`` and 16 ``absent``; o200k_base 198,436 decodable of which 198,424
``itself``, 11 ``in-context`` (``"\\n//"``, ``"\\n///"``, ...) and one ``unreachable``:
``" I'"`` (o200k_base's split pattern keeps an apostrophe with a word only as a
contraction suffix such as ``'m``, so ``" I'"`` is always cut into ``" I"`` and ``"'"``;
checked with ``regex.findall`` of ``Encoding._pat_str``), 1,562 ``undecodable``, and 19 ``absent`` IDs below the last special one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

__all__ = ["CLASSES", "Reachability", "audit", "classify", "context_text", "token_texts"]

#: The classes, in the order reports list them.
CLASSES = ("itself", "in-context", "unreachable", "undecodable", "absent")


def context_text(text: str) -> str:
    """One text that puts a token in four neighbourhoods at once: after a letter, twice
    in a row, after a newline, before a letter.

    One text rather than four: a short input costs an encoder about the same whatever
    its length (per-call overhead dominates), so folding the contexts into one text
    checks them for the price of one call, and a difference found in it is shrunk to
    the context that shows it like any other finding. On o200k_base it reaches 8 of the
    12 tokens not reached alone; "after a letter" alone and "after a newline" alone
    reach none of them, "before a letter" and "twice" 4 each (tiktoken 0.12).

    >>> context_text("ab")
    'xabab\\nabx'
    """
    return f"x{text}{text}\n{text}x"


def token_texts(pieces: Mapping[int, bytes | None]) -> dict[int, str]:
    """The IDs whose bytes are valid UTF-8, with their text.

    >>> token_texts({0: b"a", 1: b"\\xe4", 2: None})
    {0: 'a'}
    """
    out: dict[int, str] = {}
    for token_id, piece in pieces.items():
        if piece is None:
            continue
        try:
            out[token_id] = piece.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


@dataclass(frozen=True)
class Reachability:
    """The class of every audited ID (sorted tuples of IDs, one per class)."""

    itself: tuple[int, ...]
    in_context: tuple[int, ...]
    unreachable: tuple[int, ...]
    undecodable: tuple[int, ...]
    absent: tuple[int, ...]

    def counts(self) -> dict[str, int]:
        return {name: len(ids) for name, ids in zip(CLASSES, self._tuples())}

    def class_of(self, token_id: int) -> str | None:
        for name, ids in zip(CLASSES, self._tuples()):
            if token_id in ids:
                return name
        return None

    def _tuples(self) -> tuple[tuple[int, ...], ...]:
        return (self.itself, self.in_context, self.unreachable, self.undecodable, self.absent)

    def to_json(self, pieces: Mapping[int, bytes | None] | None = None) -> dict[str, object]:
        """Counts, and the unreachable IDs listed (with their text when ``pieces`` is given)."""
        listed: list[object] = list(self.unreachable)
        if pieces is not None:
            listed = [{"id": i, "text": (pieces.get(i) or b"").decode("utf-8", "replace")} for i in self.unreachable]
        return {"counts": self.counts(), "unreachable": listed}


def classify(
    pieces: Mapping[int, bytes | None],
    alone: Mapping[int, Sequence[int]],
    context: Mapping[int, Sequence[int]],
    *,
    also_seen: Iterable[int] = (),
) -> Reachability:
    """Classify every ID of ``pieces`` from encodings already made.

    ``alone``: ID -> what its text alone encoded to; ``context``: ID -> what
    :func:`context_text` of its text encoded to (needed only for IDs not reached alone);
    ``also_seen``: IDs produced by any other text (they count as ``in-context``).
    A decodable ID with no entry in ``alone`` raises ``ValueError``: the audit would
    otherwise call it unreachable without having tried.

    >>> r = classify({0: b"a", 1: b"b", 2: b"ab", 3: b"\\xff", 4: None},
    ...              alone={0: [0], 1: [1], 2: [0, 1]}, context={2: [0, 0, 1]})
    >>> r.counts()
    {'itself': 2, 'in-context': 0, 'unreachable': 1, 'undecodable': 1, 'absent': 1}
    """
    texts = token_texts(pieces)
    missing = [i for i in texts if i not in alone]
    if missing:
        raise ValueError(f"classify: {len(missing)} decodable IDs were not encoded alone (first: {missing[:5]}); "
                         "encode every token's text before classifying")
    seen: set[int] = set(also_seen)
    for ids in alone.values():
        seen.update(ids)
    for ids in context.values():
        seen.update(ids)
    itself, in_context, unreachable = [], [], []
    for token_id in sorted(texts):
        if list(alone[token_id]) == [token_id]:
            itself.append(token_id)
        elif token_id in seen:
            in_context.append(token_id)
        else:
            unreachable.append(token_id)
    undecodable = sorted(i for i, p in pieces.items() if p is not None and i not in texts)
    absent = sorted(i for i, p in pieces.items() if p is None)
    return Reachability(tuple(itself), tuple(in_context), tuple(unreachable), tuple(undecodable), tuple(absent))


def audit(
    pieces: Mapping[int, bytes | None],
    encode_many: Callable[[list[str]], Sequence[Sequence[int]]],
    *,
    chunk: int = 4096,
) -> Reachability:
    """Encode every token's text alone and in its context text (:func:`context_text`),
    with ``encode_many`` (a batch encode: a list of texts in, one ID list per text out,
    e.g. ``tiktoken.Encoding.encode_ordinary_batch`` or a loop over ``encode_ordinary``),
    ``chunk`` texts per call; return the classes.

    >>> import itertools
    >>> def toy(texts):  # a toy encoder: one ID per character, "ab" merges only after "x"
    ...     table = {"a": 0, "b": 1, "x": 5, "\\n": 6}
    ...     return [[2] if t == "xab" else [table[c] for c in t] for t in texts]
    >>> audit({0: b"a", 1: b"b", 2: b"ab"}, toy).counts()["unreachable"]
    1
    """
    texts = token_texts(pieces)
    order = sorted(texts)
    alone = dict(_encoded(order, [texts[i] for i in order], encode_many, chunk))
    # every token's context, not only of those not reached alone: another token's
    # context may be the text that reaches one (o200k_base's "\n///" is reached so)
    context = dict(_encoded(order, [context_text(texts[i]) for i in order], encode_many, chunk))
    return classify(pieces, alone, context)


def _encoded(ids: list[int], texts: list[str], encode_many: Callable[[list[str]], Sequence[Sequence[int]]],
             chunk: int) -> Iterable[tuple[int, Sequence[int]]]:
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    for start in range(0, len(texts), chunk):
        part = texts[start:start + chunk]
        answers = encode_many(part)
        if len(answers) != len(part):
            raise ValueError(f"encode_many returned {len(answers)} ID lists for {len(part)} texts")
        yield from zip(ids[start:start + chunk], answers)
