"""Coverage-steered inputs: text built from tokens the run has not produced yet.

After an encoding's generated pool has run, most of its vocabulary has never come out of
any encode. A token that never comes out is a merge path never tested. This module takes
a deterministic sample of those tokens (IDs the reference has not produced, whose bytes
are UTF-8 text) and writes inputs that should produce them *in context*: each token's
text between neighbours of the kind real text gives it (after a word, before
punctuation, on its own line, in brackets), a few tokens to an input.

Which of the targeted tokens the steered inputs then produce is for the coverage figures
to say; an input whose target merges differently is still a fair input.

    >>> class Pieces:
    ...     def token_bytes(self, i):
    ...         from harness.outcomes import Outcome
    ...         return Outcome.ok({300: b" hello", 301: b"\\xe4", 302: b"world"}.get(i, b"x"))
    >>> steered_inputs(Pieces(), seen={302}, candidates=range(300, 303), count=1, per_input=2, seed=0)
    Steered(texts=['a hello.'], targeted=(300,))
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Protocol

from harness.outcomes import Outcome

__all__ = ["CONTEXTS", "Steered", "steered_inputs"]

#: (before, after) a token's text: after a word, before punctuation, alone on a line, ...
CONTEXTS: tuple[tuple[str, str], ...] = (
    ("a", "."),
    ("The", " "),
    ("\n", "\n"),
    ("(", ")"),
    ("", ","),
    ("x", "1"),
)


@dataclass(frozen=True)
class Steered:
    texts: list[str]
    #: the unseen token IDs the texts were written to produce
    targeted: tuple[int, ...]


class _Pieces(Protocol):
    def token_bytes(self, token_id: int) -> Outcome: ...


def steered_inputs(reference: _Pieces, *, seen: set[int], candidates: Iterable[int], count: int,
                   per_input: int = 4, seed: int = 0) -> Steered:
    """``count`` inputs, each holding the text of ``per_input`` unseen tokens in context.

    ``candidates`` are the IDs to choose from (the ordinary vocabulary); a fixed seed
    draws the same tokens every time for the same coverage.
    """
    pool = [i for i in candidates if i not in seen]
    random.Random(seed).shuffle(pool)
    texts: list[str] = []
    targeted: list[int] = []
    for token_id in pool:
        if len(texts) >= count * per_input:
            break
        piece = reference.token_bytes(token_id)
        if not piece.is_ok:
            continue
        try:
            text = piece.value.decode("utf-8")
        except UnicodeDecodeError:
            continue  # part of a character: it only ever comes out next to its other part
        if text.strip():
            texts.append(text)
            targeted.append(token_id)
    out: list[str] = []
    for start in range(0, len(texts), per_input):
        group = texts[start : start + per_input]
        out.append("".join(
            before + text + after
            for k, text in enumerate(group)
            for before, after in (CONTEXTS[(start // per_input + k) % len(CONTEXTS)],)
        ))
    return Steered(out, tuple(targeted))
