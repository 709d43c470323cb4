"""Two cl100k_base drop-ins with faults only ordinary text shows (issue 20, item 2).

- ``faulty-everyday:lower-the``: tiktoken's cl100k_base, except that a sentence-initial
  "The" (at the start of the text, or after ``.``, ``!`` or ``?`` and whitespace) is
  encoded as "the";
- ``faulty-everyday:split-the``: tiktoken's cl100k_base, except that the most frequent
  English token, " the", comes out as two tokens (" " and "the"): the bytes still round
  trip, only the IDs differ.

Neither is caught by the hostile generated strings (they hold no English sentences);
the everyday-text phase must catch both::

    python -m harness run --plugin tests.everyday_text_plugins:lower_the \\
        --impl faulty-everyday:lower-the --impl tiktoken:cl100k_base
"""

from __future__ import annotations

import re

from harness.interface import AllowedSpecial, DisallowedSpecial
from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

_SENTENCE_THE = re.compile(r"(^|[.!?]\s+)The\b")


class LowerThe(_Wrapped):
    name = "faulty-everyday:lower-the"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        text = _SENTENCE_THE.sub(lambda m: m.group(1) + "the", text)
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class SplitThe(_Wrapped):
    name = "faulty-everyday:split-the"

    def __init__(self) -> None:
        super().__init__()
        # found by asking tiktoken itself: " the" is one token, " " and "the" are one each
        (self.the,) = self.inner.encode(" the")
        self.split = self.inner.encode(" ") + self.inner.encode("the")

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        out: list[int] = []
        for token in ids:
            out += self.split if token == self.the else [token]
        return out


def lower_the() -> AdapterSpec:
    return AdapterSpec(name=LowerThe.name, encoding=ENCODING, factory=LowerThe, library="tiktoken")


def split_the() -> AdapterSpec:
    return AdapterSpec(name=SplitThe.name, encoding=ENCODING, factory=SplitThe, library="tiktoken")
