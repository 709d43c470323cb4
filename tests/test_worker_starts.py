"""Worker processes started side by side (harness/run/selection.py, issue 25): a run's
isolated adapters start their workers at once, and each worker then lives, unrestarted,
as long as the run."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from harness.checks.base import ORDINARY
from harness.outcomes import Outcome
from harness.registry import default_registry
from harness.run.selection import SelectionError, select
from harness.worker.client import WorkerExecutor
from harness.worker.setup import Isolation

NAMES = ["tiktoken:r50k_base", "minbpe:r50k_base", "gpt2-encoder:gpt2"]


@pytest.fixture()
def starting_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread each worker was started from; two cores, whatever the machine."""
    seen: list[str] = []
    original = WorkerExecutor._start

    def recorded(self: WorkerExecutor) -> Any:
        seen.append(threading.current_thread().name)
        return original(self)

    monkeypatch.setattr(WorkerExecutor, "_start", recorded)
    monkeypatch.setattr("harness.run.selection.os.cpu_count", lambda: 2)
    return seen


def test_workers_start_side_by_side_and_live_as_long_as_the_run(starting_threads: list[str]) -> None:
    selected = select(default_registry(), impls=NAMES, isolation=Isolation(mode="all"))
    try:
        assert len(starting_threads) == len(NAMES)
        assert all(name.startswith("tokconf-worker-start") for name in starting_threads)
        workers = {name: selected.calls[name]._executor for name in NAMES}
        pids = {name: worker._proc.pid for name, worker in workers.items()}
        # a worker dies with the thread that started it (PR_SET_PDEATHSIG): had the starting
        # threads been let go, the workers would be gone by now and restarted on their next call
        time.sleep(1.0)
        for name, calls in selected.calls.items():
            assert calls.encode("hello world", ORDINARY) == Outcome.ok((31373, 995)), name
        assert {name: worker.restarts for name, worker in workers.items()} == dict.fromkeys(NAMES, 0)
        assert {name: worker._proc.pid for name, worker in workers.items()} == pids
    finally:
        selected.close()
    assert all(worker._proc is None for worker in workers.values())


def test_an_unknown_name_ends_the_workers_started_ahead(starting_threads: list[str]) -> None:
    started: list[WorkerExecutor] = []
    original = WorkerExecutor.__init__

    def kept(self: WorkerExecutor, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        started.append(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WorkerExecutor, "__init__", kept)
        with pytest.raises(SelectionError, match="no-such-adapter"):
            select(default_registry(), impls=[*NAMES[:2], "no-such-adapter:x"], isolation=Isolation(mode="all"))
    assert len(started) == 2 and all(worker._proc is None for worker in started)
