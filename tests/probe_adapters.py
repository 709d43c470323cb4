"""An adapter that reports where it runs: how many network interfaces its process sees.

``probe:network`` is tiktoken's cl100k_base, except that ``encode("?interfaces")``
returns ``[n]``, the number of network interfaces (``socket.if_nameindex``, which opens
no connection). In a worker inside a new network namespace ``n`` is 1: only the
loopback, and that one down.
"""

from __future__ import annotations

import socket

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

QUESTION = "?interfaces"


class NetworkProbe(_Wrapped):
    name = "probe:network"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if text == QUESTION:
            return [len(socket.if_nameindex())]
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


def network() -> list[AdapterSpec]:
    return [AdapterSpec(name=NetworkProbe.name, encoding=ENCODING, factory=NetworkProbe, library="tiktoken")]
