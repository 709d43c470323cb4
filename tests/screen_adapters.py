"""Drop-ins of :mod:`tests.bytes_adapters` with faults only some checks see: for the corpus
screen's tests (which documents run every check, and what a cell then counts)."""

from __future__ import annotations

from typing import Sequence

from harness.interface import AllowedSpecial, DisallowedSpecial
from harness.registry import AdapterSpec
from tests.bytes_adapters import Utf8Bytes

__all__ = ["DropsHeldBack", "OmegaSwapped", "drops", "omega"]


class DropsHeldBack(Utf8Bytes):
    """``decode(errors="replace")`` drops an incomplete character instead of showing U+FFFD:
    whole texts round-trip, but a streamed prefix ending inside ``é`` shows nothing where
    a server shows ``\ufffd``. Only stream-decode sees it."""

    name = "test:drops-held-back"

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return bytes(ids).decode("utf-8", "ignore" if errors == "replace" else errors)


class OmegaSwapped(DropsHeldBack):
    """Also encodes ``Ω`` (CE A9) as its two bytes swapped: the screen sees that."""

    name = "test:omega-swapped"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        for k in range(len(ids) - 1):
            if ids[k:k + 2] == [0xCE, 0xA9]:
                ids[k:k + 2] = [0xA9, 0xCE]
        return ids


REFERENCE = AdapterSpec("test:utf8-bytes", "utf8-bytes", Utf8Bytes, library="tokconf")
drops = [REFERENCE, AdapterSpec(DropsHeldBack.name, "utf8-bytes", DropsHeldBack, library="tokconf")]
omega = [REFERENCE, AdapterSpec(OmegaSwapped.name, "utf8-bytes", OmegaSwapped, library="tokconf")]
