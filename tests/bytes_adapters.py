"""A tokenizer whose IDs are the text's UTF-8 bytes: the cheapest adapter there is.

For tests of the harness itself (how much memory a corpus run's client keeps), where an
adapter's own time would only make the test slow. It is its own encoding's reference.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from harness.interface import AllowedSpecial, Adapter, DisallowedSpecial
from harness.registry import AdapterSpec

__all__ = ["Utf8Bytes", "adapters"]


class Utf8Bytes(Adapter):
    """``encode('é') == [195, 169]``; lone surrogates as their surrogatepass bytes."""

    name = "test:utf8-bytes"
    encoding = "utf8-bytes"
    library = "tokconf"

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return {}

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return list(text.encode("utf-8", "surrogatepass"))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return bytes(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return bytes([token_id])


adapters = [AdapterSpec("test:utf8-bytes", "utf8-bytes", Utf8Bytes, library="tokconf")]
