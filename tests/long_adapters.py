"""Adapters with a planted size limit, for the long tier (issue 22).

``slow:cl100k_base`` is tiktoken's cl100k_base, except that an input of 100,000 to
999,999 characters never returns (it waits for ever, so the per-call timeout always
fires, however fast the machine) and one of a million characters or more raises a
``ValueError``: the tier must reach its ``timeout`` outcome at 10^5 and still try 10^6.

``declared:cl100k_base`` has the same planted hang but declares it
(``Capabilities.long_limit`` 10,000): the tier skips its longer sizes, says so, and the
hang is never reached.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped


class SlowAtTenToTheFive(_Wrapped):
    name = "slow:cl100k_base"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if len(text) >= 1_000_000:
            raise ValueError("planted: too long")
        if len(text) >= 100_000:
            threading.Event().wait()  # never set: only the timeout ends this call
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def encode_ordinary(self, text):  # type: ignore[no-untyped-def]
        return self.encode(text, disallowed_special=())


def slow() -> list[AdapterSpec]:
    return [AdapterSpec(name=SlowAtTenToTheFive.name, encoding=ENCODING, factory=SlowAtTenToTheFive, library="tiktoken")]


class DeclaresItsLimit(SlowAtTenToTheFive):
    name = "declared:cl100k_base"

    @property
    def capabilities(self):  # type: ignore[no-untyped-def, override]
        return replace(super().capabilities, long_limit=10_000)


def declared() -> list[AdapterSpec]:
    return [AdapterSpec(name=DeclaresItsLimit.name, encoding=ENCODING, factory=DeclaresItsLimit, library="tiktoken")]
