"""Timing an adapter beside its tiktoken baseline, in one process, alternating.

A machine shared with other work speeds up and slows down under both measurements
alike only if they interleave: each repeat times the baseline and then the adapter, and
the ratio of that repeat is kept; the median of the ratios is the figure. Absolute
throughput (MB/s) is the median of the adapter's own times and depends on the machine;
the ratio is what compares across machines.

*Cold* is the first pass of a freshly built adapter (its piece caches empty; tables a
process shares between adapters, such as parsed rank files, stay loaded, and building
is timed separately), compared with the mean of the baseline passes just before and
just after it; *warm* are the passes after it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["Throughput", "best_time", "clock", "linear_reference", "measure_throughput", "median_time", "once"]


#: CPU time of this process: on a machine shared with other work the wall clock also
#: counts the time spent waiting for a core, which is noise here (every adapter timed
#: encodes on the calling thread).
clock = time.process_time


def once(work: Callable[[], object]) -> float:
    """CPU seconds ``work`` takes (exceptions are the caller's business)."""
    started = clock()
    work()
    return clock() - started


def median_time(work: Callable[[], object], *, repeat: int) -> float:
    return statistics.median(once(work) for _ in range(max(1, repeat)))


def best_time(work: Callable[[], object], *, repeat: int) -> float:
    """The least of ``repeat`` timings: what the work costs when nothing disturbs it."""
    return min(once(work) for _ in range(max(1, repeat)))


def _pass(adapter: Any, documents: Sequence[str]) -> Callable[[], int]:
    encode = adapter.encode_ordinary

    def work() -> int:
        failed = 0
        for doc in documents:
            try:
                encode(doc)
            except Exception:  # noqa: BLE001 - conformance is judged elsewhere; count it
                failed += 1
        return failed

    return work


@dataclass(frozen=True)
class Throughput:
    cold_ratio: float
    warm_ratio: float
    cold_s: float
    warm_s: float
    baseline_s: float
    build_s: float
    failed_documents: int


def measure_throughput(
    build: Callable[[], Any], baseline: Any, documents: Sequence[str], *, cold_repeats: int, warm_repeats: int
) -> Throughput:
    """Cold and warm ratios of ``build()``'s adapter to ``baseline`` on ``documents``."""
    cold_ratios, cold_times, builds = [], [], []
    adapter = None
    failed = 0
    base_pass = _pass(baseline, documents)
    base_pass()  # the baseline is warm from here on
    for _ in range(max(1, cold_repeats)):
        started = clock()
        adapter = build()
        builds.append(clock() - started)
        before = once(base_pass)
        started = clock()
        failed = _pass(adapter, documents)()
        cold = clock() - started
        after = once(base_pass)  # a cold pass happens once: the baseline brackets it
        cold_times.append(cold)
        cold_ratios.append(cold / ((before + after) / 2))
    warm_ratios, warm_times, base_times = [], [], []
    mine = _pass(adapter, documents)
    for _ in range(max(1, warm_repeats)):
        base = once(base_pass)
        warm = once(mine)
        base_times.append(base)
        warm_times.append(warm)
        warm_ratios.append(warm / base)
    return Throughput(
        cold_ratio=statistics.median(cold_ratios),
        warm_ratio=statistics.median(warm_ratios),
        cold_s=statistics.median(cold_times),
        warm_s=statistics.median(warm_times),
        baseline_s=statistics.median(base_times),
        build_s=statistics.median(builds),
        failed_documents=failed,
    )


def linear_reference(text: str) -> Callable[[], object]:
    """A pass that is linear by construction: every byte through a Python loop into a list.

    Its growth per tenfold input is what linear work costs on this machine at these
    sizes (caches, memory allocation): at 10^5 to 10^6 characters it is more than 10.
    """
    data = text.encode("utf-8")

    def work() -> object:
        out = []
        for byte in data:
            out.append(byte)
        return tuple(out)

    return work
