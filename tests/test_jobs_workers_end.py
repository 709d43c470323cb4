"""Under ``--jobs``, every worker a job process starts is ended and waited for.

A job process of the pool ends through multiprocessing (``os._exit``): without
:func:`harness.run.parallel._close_own_workers` its workers were SIGKILLed when it died
(``PR_SET_PDEATHSIG``) and never waited for, so their CPU time was missing from the
run's (``RUSAGE_CHILDREN``, what ``bench/harness_figures.py`` and ``/usr/bin/time``
read): 4.5 s of the user's path under ``--jobs 2`` on this 2-core machine.

The adapter below is tiktoken's cl100k_base in a worker; each worker process writes
``started-PID`` when it builds the adapter and ``ended-PID`` when it exits cleanly (an
``atexit`` hook, which a SIGKILL never runs), and ``built-PID-N`` for each build (what
``tests/test_plugin_xdist.py`` counts).
"""

from __future__ import annotations

import atexit
import itertools
import os
import subprocess
import sys
from pathlib import Path

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

MARKS = "TOKCONF_TEST_WORKER_MARKS"
_BUILDS = itertools.count()


class _Marked(_Wrapped):
    name = "marked:cl100k_base"

    def __init__(self) -> None:
        super().__init__()
        folder = os.environ.get(MARKS)
        if folder:
            pid = os.getpid()
            Path(folder, f"started-{pid}").touch()
            Path(folder, f"built-{pid}-{next(_BUILDS)}").touch()
            atexit.register(lambda: Path(folder, f"ended-{pid}").touch())


def marked() -> list[AdapterSpec]:
    return [AdapterSpec(name=_Marked.name, encoding=ENCODING, factory=_Marked, library="tiktoken")]


def test_every_worker_of_a_jobs_run_exits_cleanly(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, MARKS: str(marks), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    # the plugin's adapter is foreign: it runs in a worker, one per job process
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", "tests.test_jobs_workers_end:marked",
         "--impl", "marked:cl100k_base", "--jobs", "2", "--no-every-token", "--no-everyday", "--no-default-long",
         "--max-examples", "20", "--no-cache", "--quiet", "--out", str(tmp_path / "reports")],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    started = {p.name.split("-", 1)[1] for p in marks.glob("started-*")}
    ended = {p.name.split("-", 1)[1] for p in marks.glob("ended-*")}
    # the parent's worker (vocabulary phase) and one in each job process
    assert len(started) >= 3, sorted(p.name for p in marks.iterdir())
    assert ended == started
