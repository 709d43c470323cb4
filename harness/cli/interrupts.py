"""Ctrl-C and SIGTERM during a run: stop, but keep what finished.

A run killed after forty minutes used to leave nothing. Inside :func:`catch_stops`,
SIGTERM raises :class:`Stopped` as Ctrl-C raises ``KeyboardInterrupt``; the run
command catches either, settles what it has without shrinking, and writes parity.json
and the page marked ``incomplete``. A second signal while that is written is not caught:
whoever sends two means it. Exit status is the shell's for the signal (130 for SIGINT,
143 for SIGTERM), so a script cannot mistake an incomplete run for a passing one.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["Stopped", "catch_stops", "describe_stop", "stop_exit_code", "kept_after_stop"]


class Stopped(KeyboardInterrupt):
    """A stop signal (SIGTERM) arrived. A KeyboardInterrupt, so everything that lets
    Ctrl-C through (:func:`harness.outcomes.capture`, the shrinker) lets it through too."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


@contextmanager
def catch_stops() -> Iterator[None]:
    """SIGTERM raises :class:`Stopped` in the main thread (Ctrl-C already raises)."""

    def stop(signum: int, frame: Any) -> None:
        signal.signal(signum, previous)  # the next one is not caught
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def describe_stop(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, Stopped) else "interrupted by SIGINT (Ctrl-C)"


def stop_exit_code(exc: BaseException) -> int:
    signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
    return 128 + int(signum)


#: What an interrupted command leaves behind, for the one line printed instead of a
#: traceback. Every output file is written atomically (harness/atomic.py: a temporary
#: file renamed into place, removed on any exception), so a stop before the end keeps
#: the previous file, if any, untouched. `run` writes its own partial report.
_KEPT = {
    "snapshot": "nothing was written; {output} is written only when the snapshot completes (an earlier file there is unchanged)",
    "gate": "nothing was written; the golden is unchanged",
    "env": "the environment being installed may be incomplete: remove it with `tokconf env remove NAME` and add it again",
    "train": "nothing was written; the model file is written only when training completes",
}


def kept_after_stop(command: str, output: str | None = None) -> str:
    """What an interrupted ``tokconf COMMAND`` kept, in words.

    >>> kept_after_stop("snapshot", "g.tokconf")
    'nothing was written; g.tokconf is written only when the snapshot completes (an earlier file there is unchanged)'
    >>> kept_after_stop("list")
    'nothing was written'
    """
    return _KEPT.get(command, "nothing was written").format(output=output or "the golden")

