"""What every test of this suite shares."""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

#: the most one test process has held at once (a full-suite CI run: 5.5 GB, a million-letter
#: long tier); a worker per core would swap a machine with many cores and little memory
_WORKER_MEMORY_BYTES = 6 * 2**30


def pytest_xdist_auto_num_workers(config: Any) -> int:
    """``-n auto``: one worker per usable core, as many as the free memory holds (at least one)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, _available_memory() // _WORKER_MEMORY_BYTES or 1))


def _available_memory() -> int:
    """MemAvailable from /proc/meminfo, in bytes; a huge number where there is none (not Linux)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 2**62


@pytest.fixture(autouse=True)
def _plugins_stay_in_their_test() -> Iterator[None]:
    """A test that runs ``tokconf run --plugin`` in this process loads the plugin into the
    process-wide registry, and a plugin's adapters join every run of that registry: a later
    test's ``--impl tiktoken:cl100k_base`` then ran a leaked ``slow:`` adapter too (it failed
    a coverage minimum in CI, only in suite order). Forget such a registry after the test."""
    yield
    from harness.registry import default_registry, reset_default_registry

    if default_registry().plugin_names():
        reset_default_registry()
