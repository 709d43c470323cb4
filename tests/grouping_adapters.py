"""An adapter with one cause behind many inputs: it refuses every lone surrogate.

``grouping:surrogates`` wraps tiktoken's cl100k_base (:mod:`tests.wrong_adapters`) and
raises ``ValueError`` from ``encode`` on any text holding a lone surrogate, as a package
that validates its input strictly does. The generated inputs hold many different lone
surrogates; one cause must be one divergence (issue 21).

    python -m harness run --plugin tests.grouping_adapters:surrogates --impl grouping:surrogates
"""

from __future__ import annotations

import regex

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

_LONE = regex.compile("[\ud800-\udfff]")


class RefusesSurrogates(_Wrapped):
    name = "grouping:surrogates"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        found = _LONE.search(text)
        if found is not None:
            raise ValueError(f"lone surrogate U+{ord(found.group()):04X} at position {found.start()}")
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


def surrogates() -> list[AdapterSpec]:
    return [AdapterSpec(name=RefusesSurrogates.name, encoding=ENCODING, factory=RefusesSurrogates,
                        library="tiktoken")]
