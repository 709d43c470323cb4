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

__all__ = ["Stopped", "catch_stops", "describe_stop", "kept_after_stop", "raise_if_stopped", "stop_exit_code",
           "stop_seen"]


class Stopped(KeyboardInterrupt):
    """A stop signal (SIGTERM) arrived. A KeyboardInterrupt, so everything that lets
    Ctrl-C through (:func:`harness.outcomes.capture`, the shrinker) lets it through too."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


#: signals that arrived inside :func:`catch_stops` and whose exception has not been seen
#: to leave it: Python drops an exception a signal handler raises while a weakref
#: callback or ``__del__`` runs ("Exception ignored in ..."), and a Ctrl-C that landed
#: there was lost: a snapshot ran to its end and exited 0 (CI, 2026-12-03)
_PENDING: list[int] = []


@contextmanager
def catch_stops() -> Iterator[None]:
    """SIGTERM raises :class:`Stopped` in the main thread, Ctrl-C ``KeyboardInterrupt`` as
    always; both are also remembered, so a stop whose exception Python dropped is raised
    again at the next :func:`raise_if_stopped` (each progress step calls it)."""

    def stop(signum: int, frame: Any) -> None:
        signal.signal(signum, previous)  # the next one is not caught
        _PENDING.append(signum)
        raise Stopped(signum)

    def interrupt(signum: int, frame: Any) -> None:
        _PENDING.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:  # an ignored Ctrl-C stays ignored
        signal.signal(signal.SIGINT, interrupt)
    _PENDING.clear()
    try:
        yield
    finally:
        _PENDING.clear()  # whatever left this block, a stop among it was seen
        signal.signal(signal.SIGTERM, previous)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)


def raise_if_stopped() -> None:
    """Raise the stop a signal asked for if its exception was lost on the way (see
    :data:`_PENDING`); nothing when none arrived."""
    if _PENDING:
        signum = _PENDING.pop()
        _PENDING.clear()
        raise Stopped(signum) if signum != signal.SIGINT else KeyboardInterrupt


def stop_seen() -> None:
    """The stop's exception was caught inside :func:`catch_stops` (``tokconf run`` writes
    its partial report there, with progress steps): it was not lost, and
    :func:`raise_if_stopped` must not raise it a second time."""
    _PENDING.clear()


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

