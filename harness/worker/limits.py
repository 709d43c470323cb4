"""What a worker process may do: memory, network, and how its death is named.

- :func:`limit_memory`: ``RLIMIT_AS`` (address space) for the whole worker. Past it an
  allocation fails: Python raises ``MemoryError``, Rust aborts with "memory allocation
  of N bytes failed"; both are reported as ``crashed:out-of-memory``
  (:func:`crash_cause`).
- :func:`isolate_network`: on Linux, move the worker into a new, empty network namespace
  (``unshare(CLONE_NEWNET)``; unprivileged users through a new user namespace as well).
  Inside it there is no interface but a loopback that is down: nothing can be reached,
  whatever the foreign code does (a C extension, a subprocess). Where the OS refuses, the
  worker falls back to the in-process socket block of
  :func:`harness.worker.network.no_network` (which only stops Python's ``socket``
  module) and says so; ``tokconf list --json`` shows which one was in force.
- :func:`die_with_parent`: the worker is killed when tokconf dies, even by ``SIGKILL``,
  so a hung adapter never outlives the run.

Must run before the worker imports anything that starts threads: a multi-threaded process
cannot enter a new user namespace.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import signal
import sys
from dataclasses import dataclass

from harness.outcomes import CRASH_EXITED, CRASH_OUT_OF_MEMORY

__all__ = [
    "EXIT_OUT_OF_MEMORY",
    "NetworkProtection",
    "crash_cause",
    "die_with_parent",
    "ignore_interrupts",
    "isolate_network",
    "limit_memory",
]

#: The exit status a worker uses after a ``MemoryError`` it could not answer with.
EXIT_OUT_OF_MEMORY = 86
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_PR_SET_PDEATHSIG = 1
#: What allocators print before they abort on a failed allocation (Rust, C++).
_OOM_MARKERS = ("memory allocation of", "std::bad_alloc", "MemoryError", "Cannot allocate memory",
                # V8 (Node workers, harness.worker.node) when its heap limit is reached
                "JavaScript heap out of memory", "Reached heap limit")


@dataclass(frozen=True)
class NetworkProtection:
    """Which network protection a worker has."""

    namespace: bool
    socket_block: bool
    detail: str

    def to_json(self) -> dict[str, object]:
        return {"namespace": self.namespace, "socket_block": self.socket_block, "detail": self.detail}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> NetworkProtection:
        return cls(bool(data.get("namespace")), bool(data.get("socket_block")), str(data.get("detail", "")))

    def describe(self) -> str:
        return self.detail


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


def isolate_network() -> NetworkProtection:
    """Enter a new network namespace if the OS allows it; say what happened."""
    if not sys.platform.startswith("linux"):
        return NetworkProtection(False, True, f"socket block only: network namespaces are Linux-only "
                                              f"(this is {sys.platform})")
    libc = _libc()
    if libc is None or not hasattr(libc, "unshare"):
        return NetworkProtection(False, True, "socket block only: libc has no unshare()")
    if libc.unshare(_CLONE_NEWNET) == 0:
        return NetworkProtection(True, True, "network namespace (unshare CLONE_NEWNET) and socket block")
    first = ctypes.get_errno()
    # an unprivileged user may still create a user namespace, and a network one inside it
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0:
        return NetworkProtection(True, True, "network namespace inside a user namespace "
                                             "(unshare CLONE_NEWUSER|CLONE_NEWNET) and socket block")
    second = ctypes.get_errno()
    return NetworkProtection(
        False, True,
        f"socket block only: the OS refused a network namespace (unshare CLONE_NEWNET: "
        f"{errno.errorcode.get(first, first)}; with CLONE_NEWUSER: {errno.errorcode.get(second, second)}); "
        f"foreign code is kept off the network by Python's socket module only",
    )


def limit_memory(megabytes: int | None) -> None:
    """Cap the worker's address space (``RLIMIT_AS``) at ``megabytes``."""
    if not megabytes:
        return
    import resource

    limit = int(megabytes) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    libc = _libc()
    if libc is not None and hasattr(libc, "prctl"):
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def crash_cause(returncode: int | None, stderr_tail: str, *, memory_limited: bool) -> str:
    """What killed a worker: ``SIGSEGV`` ..., ``out-of-memory``, or ``exited``.

    >>> crash_cause(-11, "", memory_limited=False)
    'SIGSEGV'
    >>> crash_cause(-6, "memory allocation of 4096 bytes failed", memory_limited=True)
    'out-of-memory'
    >>> crash_cause(EXIT_OUT_OF_MEMORY, "", memory_limited=True), crash_cause(3, "", memory_limited=False)
    ('out-of-memory', 'exited')
    """
    if returncode == EXIT_OUT_OF_MEMORY:
        return CRASH_OUT_OF_MEMORY
    if memory_limited and returncode is not None and returncode != 0 and any(m in stderr_tail for m in _OOM_MARKERS):
        return CRASH_OUT_OF_MEMORY
    if returncode is not None and returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal-{-returncode}"
    return CRASH_EXITED


def ignore_interrupts() -> None:
    """Ctrl-C is for tokconf, which then ends its workers; a worker must not die of it mid-call."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

