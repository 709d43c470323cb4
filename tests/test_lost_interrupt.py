"""A Ctrl-C whose exception Python dropped still stops the command (harness/cli/interrupts.py).

Python discards an exception that a signal handler raises while a weakref callback or a
``__del__`` runs ("Exception ignored in ..."): in CI a snapshot's Ctrl-C landed there,
and the snapshot ran to its end and exited 0. Here the exception is swallowed on purpose
(as Python would) and the next progress step must raise it again; a ``tokconf run``
whose adapter drops a Ctrl-C stops all the same.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.interrupts import Stopped, catch_stops, raise_if_stopped

REPO = Path(__file__).resolve().parent.parent


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


PLUGIN = '''
import os
import signal

from harness.registry import AdapterSpec
from tests.wrong_adapters import _Wrapped


class CtrlC(_Wrapped):
    """tiktoken, whose encode of a snowman is where a Ctrl-C lands, and which strips
    trailing whitespace (findings the partial report settles, with progress steps)."""

    name = "ctrl-c:kept"
    dropped = False

    def encode(self, text, **policy):
        if "\\u2603" in text:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                signal.pthread_sigmask(signal.SIG_BLOCK, [])
            except KeyboardInterrupt:
                if not self.dropped:
                    raise
                # what Python does with it inside a weakref callback
        return super().encode(text.rstrip(), **policy)


class DropsCtrlC(CtrlC):
    name = "ctrl-c:dropped"
    dropped = True


def kept():
    return AdapterSpec(name=CtrlC.name, encoding="cl100k_base", factory=CtrlC, library="tiktoken")


def dropped():
    return AdapterSpec(name=DropsCtrlC.name, encoding="cl100k_base", factory=DropsCtrlC, library="tiktoken")
'''

CASES = """\
version: 1
cases:
  - id: trailing-space
    text: "hello "
    encodings: [cl100k_base]
  - id: snowman
    text: "\\u2603"
    encodings: [cl100k_base]
"""


@pytest.mark.parametrize("adapter", ["ctrl-c:dropped", "ctrl-c:kept"])
def test_a_run_stopped_by_ctrl_c_writes_an_incomplete_report_whether_or_not_python_dropped_it(
        tmp_path: Path, adapter: str) -> None:
    """Dropped: the next progress step raises it. Not dropped: the run catches it, and the
    partial report's own progress steps must not raise it a second time."""
    (tmp_path / "ctrl_c.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    # in this process (--no-isolate): the Ctrl-C goes to the run itself; --quiet: no
    # progress bar, and the steps still look for a lost stop
    plugin = f"{tmp_path / 'ctrl_c.py'}:{adapter.split(':')[1]}"
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--plugin", plugin, "--impl", adapter,
                           "--cases", str(tmp_path / "cases.yaml"), "--no-isolate", "--jobs", "1", "--quiet",
                           "--out", str(tmp_path / "reports")],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 130, done.stdout[-2000:] + done.stderr[-2000:]
    (folder,) = [f for f in (tmp_path / "reports").iterdir() if f.name != "latest"]
    data = json.loads((folder / "parity.json").read_text(encoding="utf-8"))
    assert data["run"]["incomplete"]["reason"] == "interrupted by SIGINT (Ctrl-C)"
    assert data["verdict"]["result"] == "INCOMPLETE"
    # the findings before the stop (the vocabulary's whitespace tokens) are settled
    texts = {d["input"]["text"] for d in data["divergences"] if d["adapter"] == adapter}
    assert {"\t", "\r", " "} <= texts, texts
