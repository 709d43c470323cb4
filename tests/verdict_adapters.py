"""Adapters with a documented quirk and, optionally, a second unrelated bug of the same kind.

Both wrap tiktoken's cl100k_base (see :mod:`tests.wrong_adapters`):

- ``verdict:quirk``: every emoji of the block U+1F600..U+1F64F is encoded byte by byte
  (a *segmentation* difference: the same bytes in other tokens). The test cases document
  it with that block as the domain.
- ``verdict:two-faults``: the same quirk, plus "the" encoded as "t" + "he": another
  segmentation difference on one of the most common English words, which nothing
  documents. A documented quirk of the same kind must not hide it.

    python -m harness run --plugin tests.verdict_adapters:two_faults
"""

from __future__ import annotations

import regex

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

_EMOJI = regex.compile("[\U0001F600-\U0001F64F]")


class Quirk(_Wrapped):
    name = "verdict:quirk"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        ids: list[int] = []
        last = 0
        for match in _EMOJI.finditer(text):
            ids += self.ordinary(text[last:match.start()], allowed_special, disallowed_special)
            ids += [self.inner.native.encode_single_token(bytes([b])) for b in match.group().encode()]
            last = match.end()
        return ids + self.ordinary(text[last:], allowed_special, disallowed_special)

    def ordinary(self, text: str, allowed_special, disallowed_special) -> list[int]:  # type: ignore[no-untyped-def]
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class TwoFaults(Quirk):
    name = "verdict:two-faults"

    def ordinary(self, text: str, allowed_special, disallowed_special) -> list[int]:  # type: ignore[no-untyped-def]
        parts = text.split("the")
        ids = super().ordinary(parts[0], allowed_special, disallowed_special)
        for part in parts[1:]:
            ids += self.inner.native.encode_ordinary("t") + self.inner.native.encode_ordinary("he")
            ids += super().ordinary(part, allowed_special, disallowed_special)
        return ids


class Contained(_Wrapped):
    """``ab`` encoded as ``a`` + ``b`` (documented by the tests) and, a second bug of the
    same kind that nothing documents, ``Z Z`` byte by byte: ``"xabZ Z"`` holds both (issue
    21). No token of the vocabulary holds ``Z Z`` (a space starts a piece), so only the
    case shows the second bug."""

    name = "verdict:contained"
    _FAULTS = regex.compile("(ab|Z Z)")

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        ids: list[int] = []
        for i, part in enumerate(self._FAULTS.split(text)):
            if i % 2:
                ids += [self.inner.native.encode_single_token(bytes([b])) for b in part.encode()]
            elif part:
                ids += super().encode(part, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return ids


class Crashing(_Wrapped):
    """Raises on any input holding ``ab``: a documented segmentation quirk there that
    has become a crash is another bug (issue 21)."""

    name = "verdict:crashing"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if "ab" in text:
            raise RuntimeError("planted crash on 'ab'")
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


def _spec(cls: type) -> AdapterSpec:
    return AdapterSpec(name=cls.name, encoding=ENCODING, factory=cls, library="tiktoken")


def quirk() -> list[AdapterSpec]:
    return [_spec(Quirk)]


def two_faults() -> list[AdapterSpec]:
    return [_spec(TwoFaults)]


def contained() -> list[AdapterSpec]:
    return [_spec(Contained)]


def crashing() -> list[AdapterSpec]:
    return [_spec(Crashing)]


def v1_drops_lamp() -> list[AdapterSpec]:
    """simple-v1 whose decode loses the word "lamp": a round-trip bug on known words,
    which a domain of "the round trip holds" filtered out before it was checked."""
    from implementations.teaching import SimpleV1, TeachingAdapter, _build_simple

    class DropsLamp(SimpleV1):
        def decode(self, ids):  # type: ignore[no-untyped-def]
            return " ".join(w for w in super().decode(ids).split(" ") if w != "lamp")

    def build() -> TeachingAdapter:
        inner = _build_simple("simple-v1", "lighthouse")
        tokenizer = DropsLamp.__new__(DropsLamp)
        tokenizer.__dict__.update(inner.tokenizer.__dict__)  # the same trained vocabulary
        return TeachingAdapter(tokenizer, name="verdict:v1-drops-lamp", capabilities=inner.capabilities,
                               exact_layout=False)

    return [AdapterSpec(name="verdict:v1-drops-lamp", encoding="closed:verdict:v1-drops-lamp", factory=build,
                        library="tokconf")]
