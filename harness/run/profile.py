"""Where a run's time goes: adapters' own calls versus the harness around them.

``tokconf run --profile-harness`` wraps every adapter's executor in a stopwatch and
marks the end of each phase. The harness overhead is the share of the run's wall time
spent *outside* adapters: neither inside an adapter call (encode, decode, ...) nor in
building adapters (their factories: vocabulary parsing, conversions, recovered merges).
What is left is the harness's own work: input generation (hypothesis), the checks'
comparisons, memoising, judging, shrinking's bookkeeping, and writing the report.

The time of a call is measured around the executor, so with worker processes it is the
round trip as the parent sees it (protocol included), which is the cost a run pays.
Peak memory is ``getrusage``'s maximum resident set size of this process, and of its
waited-for children when there are any.
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, TextIO

__all__ = ["HarnessProfile", "TimedExecutor", "peak_rss_mb"]


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size in MB (Linux reports KB, macOS bytes)."""
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


@dataclass
class _Stopwatch:
    seconds: float = 0.0
    calls: int = 0
    by_op: dict[str, float] = field(default_factory=dict)


class TimedExecutor:
    """An executor that adds the time of every call to a stopwatch, and is otherwise it."""

    def __init__(self, inner: Any, stopwatch: _Stopwatch) -> None:
        self._inner = inner
        self._stopwatch = stopwatch
        self.info = inner.info

    def call(self, op: str, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return self._inner.call(op, *args)
        finally:
            took = time.perf_counter() - started
            watch = self._stopwatch
            watch.seconds += took
            watch.calls += 1
            watch.by_op[op] = watch.by_op.get(op, 0.0) + took

    def __getattr__(self, name: str) -> Any:
        # anything else an executor offers (closing a worker, ...) is the inner one's
        return getattr(self._inner, name)


@dataclass
class HarnessProfile:
    """Phase marks, adapter build time and per-adapter call time of one run."""

    started: float = field(default_factory=time.perf_counter)
    phases: dict[str, float] = field(default_factory=dict)
    adapters: dict[str, _Stopwatch] = field(default_factory=dict)
    build_s: float = 0.0
    _last: float = 0.0

    def __post_init__(self) -> None:
        self._last = self.started

    def mark(self, phase: str) -> None:
        """The time since the previous mark (or the start) belongs to ``phase``."""
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now

    def add_build(self, seconds: float) -> None:
        self.build_s += seconds

    def instrument(self, calls: Iterable[Any]) -> None:
        """Wrap the executor of every ``Calls`` (each once) in a stopwatch."""
        for one in calls:
            if one.name in self.adapters:
                continue
            watch = self.adapters[one.name] = _Stopwatch()
            one.wrap_executor(lambda inner, watch=watch: TimedExecutor(inner, watch))

    def summary(self) -> dict[str, Any]:
        total = self._last - self.started
        in_calls = sum(w.seconds for w in self.adapters.values())
        outside = max(0.0, total - in_calls - self.build_s)
        slowest = sorted(self.adapters.items(), key=lambda kv: -kv[1].seconds)
        by_op: dict[str, float] = {}
        for watch in self.adapters.values():
            for op, seconds in watch.by_op.items():
                by_op[op] = by_op.get(op, 0.0) + seconds
        return {
            "wall_s": round(total, 3),
            "adapter_build_s": round(self.build_s, 3),
            "adapter_calls_s": round(in_calls, 3),
            "adapter_calls": sum(w.calls for w in self.adapters.values()),
            "harness_s": round(outside, 3),
            "harness_share": round(outside / total, 4) if total > 0 else 0.0,
            "phases_s": {k: round(v, 3) for k, v in self.phases.items()},
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "peak_rss_children_mb": round(peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
            "adapter_calls_by_op_s": {k: round(v, 3) for k, v in sorted(by_op.items(), key=lambda kv: -kv[1])},
            "adapters_s": {name: round(w.seconds, 3) for name, w in slowest},
        }

    def report(self, stream: TextIO, *, top: int = 8) -> None:
        """A short human-readable account on ``stream``."""
        s = self.summary()
        stream.write(
            f"harness profile: wall {s['wall_s']:.2f} s = adapter calls {s['adapter_calls_s']:.2f} s "
            f"({s['adapter_calls']} calls) + adapter builds {s['adapter_build_s']:.2f} s + harness "
            f"{s['harness_s']:.2f} s; harness overhead {100 * s['harness_share']:.1f} %; "
            f"peak RSS {s['peak_rss_mb']:.0f} MB\n"
        )
        stream.write("  adapter calls by operation: "
                     + ", ".join(f"{k} {v:.2f} s" for k, v in s["adapter_calls_by_op_s"].items()) + "\n")
        stream.write("  phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in s["phases_s"].items()) + "\n")
        slowest = list(s["adapters_s"].items())[:top]
        stream.write("  slowest adapters (call time): " + ", ".join(f"{n} {t:.2f} s" for n, t in slowest) + "\n")
