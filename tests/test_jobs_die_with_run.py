"""A ``--jobs`` process dies with its run, even when the run is killed outright.

A ``tokconf run --jobs 2`` stopped by SIGKILL (a profiler detaching did it) left both pool
processes, and the workers they had started, orphaned and blocked for 93 minutes. The pool
processes now ask Linux for ``PR_SET_PDEATHSIG`` (:func:`harness.run.parallel._child_init`),
but only when the main thread forked them: the signal follows the forking *thread*, and a
pool forked by a short-lived thread would be killed when that thread ends.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Sequence

import pytest

from harness.run import parallel
from harness.run.deltas import Delta
from harness.run.parallel import Jobs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

_PR_GET_PDEATHSIG = 2


def _own_death_signal() -> int:
    """The signal this process gets when its parent dies (0: none)."""
    value = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_GET_PDEATHSIG, ctypes.byref(value), 0, 0, 0)
    return value.value


class _Merging:
    selected = SimpleNamespace(calls={})

    def __init__(self) -> None:
        self.notes: list[str] = []

    def apply(self, delta: Delta) -> None:
        self.notes.extend(delta.notes)


def _death_signals(monkeypatch: pytest.MonkeyPatch, *, in_thread: bool) -> list[str]:
    def task(units: Sequence[int]) -> Delta:
        return Delta(notes=[str(_own_death_signal())])

    monkeypatch.setitem(parallel.TASKS, "cases", task)  # the forked processes inherit the table
    merging = _Merging()
    jobs = Jobs(merging, jobs=2)

    def run() -> None:
        jobs.run("cases", [[0], [1], [2], [3]])

    try:
        if in_thread:
            thread = threading.Thread(target=run)
            thread.start()
            thread.join()
        else:
            run()
    finally:
        jobs.close()
    return merging.notes


def test_a_pool_the_main_thread_forks_is_killed_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _death_signals(monkeypatch, in_thread=False) == [str(int(signal.SIGKILL))] * 4


def test_a_pool_another_thread_forks_is_not_tied_to_that_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _death_signals(monkeypatch, in_thread=True) == ["0"] * 4


_RUN = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from types import SimpleNamespace
    from harness.run import parallel
    from harness.run.deltas import Delta

    folder = Path(sys.argv[1])

    def task(units):
        (folder / f"pid-{os.getpid()}").touch()
        time.sleep(600)
        return Delta()

    class Merging:
        selected = SimpleNamespace(calls={})
        def apply(self, delta):
            pass

    parallel.TASKS["cases"] = task
    parallel.Jobs(Merging(), jobs=2).run("cases", [[0], [1]])
""")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody has reaped yet is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass (a deadline, not a speed claim)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_a_killed_run_leaves_no_job_process_behind(tmp_path: Path) -> None:
    run = subprocess.Popen([sys.executable, "-c", _RUN, str(tmp_path)], cwd=Path(__file__).resolve().parents[1])
    try:
        assert _wait_until(lambda: len(list(tmp_path.glob("pid-*"))) == 2, 120), "the two tasks never started"
        pids = [int(path.name.removeprefix("pid-")) for path in tmp_path.glob("pid-*")]
        assert all(_alive(pid) for pid in pids)
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        assert _wait_until(lambda: not any(_alive(pid) for pid in pids), 60), \
            f"job processes {[pid for pid in pids if _alive(pid)]} outlived their killed run"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for path in tmp_path.glob("pid-*"):
            pid = int(path.name.removeprefix("pid-"))
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
