"""What a process does with SIGINT and SIGTERM, read from ``/proc``: for the tests that
stop a ``tokconf`` child with a signal.

A fresh-clone CI run once saw such a child ignore both signals and run to the end (exit
0), in the same pytest process as an earlier failed Dask test, and never again alone. A
signal's blocked or ignored state is inherited through ``fork`` and ``exec``, so the
tests print the child's and their own state when a signal did not work.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

_WATCHED = (signal.SIGINT, signal.SIGTERM)


def signal_state(pid: int | None = None) -> str:
    """Which of SIGINT/SIGTERM ``pid`` (default: this process) blocks, ignores, catches.

    >>> signal_state()  # doctest: +SKIP
    'pid 4242: SIGINT caught, SIGTERM default'
    """
    pid = os.getpid() if pid is None else pid
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError as exc:
        return f"pid {pid}: no /proc status ({exc})"
    masks = {}
    for line in status.split("\n"):
        name, _, value = line.partition(":")
        if name in ("SigBlk", "SigIgn", "SigCgt"):
            masks[name] = int(value.strip(), 16)
    states = []
    for signum in _WATCHED:
        bit = 1 << (signum - 1)
        state = ("blocked " if masks.get("SigBlk", 0) & bit else "") + (
            "ignored" if masks.get("SigIgn", 0) & bit else "caught" if masks.get("SigCgt", 0) & bit else "default")
        states.append(f"{signal.Signals(signum).name} {state}")
    return f"pid {pid}: " + ", ".join(states)


def when_signalled(pid: int) -> str:
    """The line a signal test keeps, read just before it signals ``pid``: the child's state and pytest's."""
    return f"when signalled, {signal_state(pid)}; pytest {signal_state()}"
