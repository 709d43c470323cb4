"""What every test of this suite shares."""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import warnings
from typing import Any, Iterator

import pytest

#: the most one test process has held at once (a full-suite CI run: 5.5 GB, a million-letter
#: long tier); a worker per core would swap a machine with many cores and little memory
_WORKER_MEMORY_BYTES = 6 * 2**30


# Each test's `tokconf run` (in this process or a child, which inherits the environment)
# takes one job unless it says --jobs: xdist already puts a test process on every core, and
# a run forking one process per core inside each of them would oversubscribe the cores and
# double the suite's memory. tests/test_jobs_default.py checks the default itself.
os.environ.setdefault("TOKCONF_JOBS", "1")


def pytest_xdist_auto_num_workers(config: Any) -> int:
    """``-n auto``: one worker per usable core and one more, as many as the free memory holds
    (at least one).

    The extra worker takes the time a test spends waiting, not computing: on pip and npm
    installs, worker and browser starts, timeouts it plants. Fresh-clone ``.ci/run`` on
    2 cores, quiet, every test passing: two workers used 169 % of the cores, pytest
    1,656 s; three used 183 %, 1,446 s.
    """
    from harness.cli.isolation import usable_cores

    return max(1, min(usable_cores() + 1, _available_memory() // _WORKER_MEMORY_BYTES or 1))


#: the files whose tests take longest (fresh-clone CI runs, 2026-12-02: each 3 to 10
#: minutes), collected first: a file's tests run on one worker (--dist loadfile), so a long
#: file handed out last would keep one worker busy while the other has nothing left to do
_LONGEST_FIRST = ("test_conformance.py", "test_selftest.py", "test_envs.py", "test_selftest_dropin.py",
                  "test_release_ladder.py", "test_engine.py", "test_cases_shipped.py",
                  "test_reproduce_every_kind.py", "test_dask_executor.py", "test_everyday_faults.py",
                  "test_reproduce.py")


def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    """The longest files first (:data:`_LONGEST_FIRST`), each file's tests kept in their order."""
    rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


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
def _signals_stay_in_their_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that leaves this process ignoring Ctrl-C leaves every later child ignoring it
    too (an ignored signal is inherited through exec, and Python then installs no
    KeyboardInterrupt): a pytest-xdist worker was seen ignoring SIGINT, and a ``tokconf``
    child it started ran on through its Ctrl-C. Put the handlers back, and say who."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # a module or session fixture did it
        signal.signal(signal.SIGINT, signal.default_int_handler)
        warnings.warn(f"SIGINT was ignored before {request.node.nodeid}; Ctrl-C raises again", stacklevel=1)
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in before.items():
        now = signal.getsignal(signum)
        if now != handler:
            signal.signal(signum, handler)
            warnings.warn(f"{request.node.nodeid} left {signal.Signals(signum).name} handled by {now!r}; "
                          f"put back {handler!r}", stacklevel=1)


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


#: a worker holding more than this at the end of a test file forgets the registry's adapters
_RESIDENT_LIMIT_BYTES = 2**30


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a test file, when this process holds more than :data:`_RESIDENT_LIMIT_BYTES` or
    a tokconf suite just closed: forget the adapters built through the process-wide registry
    (built once per process, kept for its life) and hand the freed memory back.

    A pytest-xdist worker kept every adapter of every file it ran: the one that ran the
    open-weight files held 1.16 GB after them, 0.67 GB once its registry was forgotten and
    the memory given back. Forgetting after every file cost 6 % more CPU on the files that
    build adapters (rebuilt by the next file), so only a process over the limit does. Runs
    after the tokconf plugin closed a suite whose last item this was (its own teardown)."""
    yield
    if nextitem is not None and nextitem.path == item.path:
        return
    if hasattr(item, "suite") or _resident_bytes() > _RESIDENT_LIMIT_BYTES:
        from harness.registry import reset_default_registry

        reset_default_registry()
        _forget_tiktokens_encodings()
        _give_back_freed_memory()


def _forget_tiktokens_encodings() -> None:
    """``tiktoken.get_encoding`` keeps every Encoding it made for the life of the process,
    and an Encoding keeps the regex caches its inputs grew: after 10^6 spaces through
    o200k_base a process let go of the registry and still held 299 MB, 86 MB once this
    cache was emptied too (tiktoken's own, so only where it is the dict it has been)."""
    try:
        import tiktoken.registry
    except ImportError:
        return
    cache = getattr(tiktoken.registry, "ENCODINGS", None)
    if isinstance(cache, dict):
        cache.clear()


def _resident_bytes() -> int:
    """This process's resident size (0 where there is no /proc)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _give_back_freed_memory() -> None:
    """Collect cycles, then let glibc return its free heap pages (it keeps them otherwise,
    and the worker's resident size never falls); nothing where there is no glibc."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@pytest.fixture(autouse=True)
def _source_roots_stay_in_their_test() -> Iterator[None]:
    """``--source-root`` (and ``set_source_root``) is process-wide: a test that points it at
    its own temporary folder made the minbpe source adapters of the next test file that ran
    in the same pytest-xdist worker look there."""
    yield
    from implementations.source import roots

    roots._root_override.clear()
