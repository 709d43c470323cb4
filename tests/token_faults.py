"""Planted faults in single tokens: tiktoken, except that one token's text comes out as
two tokens (its first byte, then the rest), wherever tiktoken would emit that token.

``split-token:<encoding>-<ID>`` (a plugin family) is tiktoken's ``<encoding>`` with token
``<ID>`` split. :func:`planted_ids` draws the IDs of the acceptance test (seeded): tokens
of at least two bytes whose text alone encodes to themselves, so the fault shows on the
token's own text.

    tokconf run --plugin tests.token_faults:FAMILY --impl split-token:cl100k_base-1820
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, DisallowedSpecial
from harness.registry import AdapterSpec, Family

SEED = 20


@lru_cache(maxsize=None)
def _tiktoken(encoding: str):  # type: ignore[no-untyped-def]
    from harness.registry import default_registry

    return default_registry().get(f"tiktoken:{encoding}")


class SplitToken(Adapter):
    library = "tiktoken"

    def __init__(self, encoding: str, token_id: int) -> None:
        self.inner = _tiktoken(encoding)
        self.encoding = encoding
        self.name = f"split-token:{encoding}-{token_id}"
        self.token_id = token_id
        piece = self.inner.token_bytes(token_id)
        if len(piece) < 2:
            raise ValueError(f"token {token_id} is one byte; it cannot be split")
        enc = self.inner.native
        rest = piece[1:]
        try:
            tail = [enc.encode_single_token(rest)]
        except KeyError:
            tail = [enc.encode_single_token(bytes([b])) for b in rest]
        self.replacement = [enc.encode_single_token(piece[:1]), *tail]

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return self.inner.special_tokens

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        ids = self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        out: list[int] = []
        for i in ids:
            out += self.replacement if i == self.token_id else [i]
        return out

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.inner.decode_bytes(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self.inner.token_bytes(token_id)

    def classify_error(self, op, exc):  # type: ignore[no-untyped-def]
        return self.inner.classify_error(op, exc)


def _resolve(arg: str) -> AdapterSpec:
    encoding, _, number = arg.rpartition("-")
    return AdapterSpec(name=f"split-token:{arg}", encoding=encoding,
                       factory=lambda: SplitToken(encoding, int(number)))


FAMILY = Family(kind="split-token", resolve=_resolve)


def planted_ids(encoding: str, count: int = 20, *, seed: int = SEED) -> list[int]:
    """``count`` IDs drawn with ``seed``: multi-byte tokens reached as themselves."""
    enc = _tiktoken(encoding).native
    rng = random.Random(f"{seed}:{encoding}")
    chosen: list[int] = []
    while len(chosen) < count:
        token_id = rng.randrange(256, enc.n_vocab)
        try:
            piece = enc.decode_single_token_bytes(token_id)
            text = piece.decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
        if len(piece) >= 2 and token_id not in chosen and enc.encode_ordinary(text) == [token_id]:
            chosen.append(token_id)
    return chosen
