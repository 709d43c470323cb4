"""Two drop-ins with faults any user meets in their first minute (issue 20).

- ``everyday:lower-the``: tiktoken's cl100k_base, except that a sentence-initial "The"
  (at the start of the text, or after ``.``, ``!`` or ``?`` and whitespace) is encoded
  as "the";
- ``everyday:drop-last-over-50k``: tiktoken's cl100k_base, except that an input of more
  than 50,000 characters loses its last character.

    tokconf run --plugin tests.everyday_plugins:lower_the --impl everyday:lower-the
"""

from __future__ import annotations

import re

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

_SENTENCE_THE = re.compile(r"(^|[.!?]\s+)The\b")


class LowerThe(_Wrapped):
    name = "everyday:lower-the"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        text = _SENTENCE_THE.sub(lambda m: m.group(1) + "the", text)
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class DropLastOver50k(_Wrapped):
    name = "everyday:drop-last-over-50k"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if len(text) > 50_000:
            text = text[:-1]
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


def lower_the() -> AdapterSpec:
    return AdapterSpec(name=LowerThe.name, encoding=ENCODING, factory=LowerThe, library="tiktoken")


def drop_last_over_50k() -> AdapterSpec:
    return AdapterSpec(name=DropLastOver50k.name, encoding=ENCODING, factory=DropLastOver50k, library="tiktoken")
