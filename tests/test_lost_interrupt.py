"""A Ctrl-C whose exception Python dropped still stops the command (harness/cli/interrupts.py).

Python discards an exception that a signal handler raises while a weakref callback or a
``__del__`` runs ("Exception ignored in ..."): in CI a snapshot's Ctrl-C landed there,
and the snapshot ran to its end and exited 0. Here the exception is swallowed on purpose
(as Python would) and the next progress step must raise it again.
"""

from __future__ import annotations

import os
import signal

import pytest

from harness.cli.interrupts import Stopped, catch_stops, raise_if_stopped


def _swallowed(signum: int) -> None:
    try:
        os.kill(os.getpid(), signum)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a bytecode boundary: the handler has run
    except KeyboardInterrupt:
        pass  # what Python does with it inside a weakref callback


def test_a_dropped_ctrl_c_is_raised_at_the_next_progress_step() -> None:
    with catch_stops():
        raise_if_stopped()  # nothing arrived: nothing raised
        _swallowed(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt) as caught:
            raise_if_stopped()
        assert not isinstance(caught.value, Stopped)
        raise_if_stopped()  # raised once, not at every step after


def test_a_dropped_sigterm_is_raised_as_stopped() -> None:
    with catch_stops():
        _swallowed(signal.SIGTERM)
        with pytest.raises(Stopped) as caught:
            raise_if_stopped()
    assert caught.value.signum == signal.SIGTERM


def test_a_stop_that_left_the_block_is_not_raised_again_in_the_next_one() -> None:
    with pytest.raises(KeyboardInterrupt):
        with catch_stops():
            os.kill(os.getpid(), signal.SIGINT)
            signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    with catch_stops():
        raise_if_stopped()
