"""Where a run's time goes: adapters' own calls versus the harness around them.

``tokconf run --profile-harness`` wraps every adapter's executor in a stopwatch and
marks the end of each phase. The harness overhead is the share of the run spent
*outside* adapters: neither inside an adapter call (encode, decode, ...) nor in building
adapters (their factories: vocabulary parsing, conversions, recovered merges). What is
left is the harness's own work: input generation (hypothesis), the checks' comparisons,
memoising, judging, shrinking's bookkeeping, and writing the report.

Each share is measured twice: on the wall clock, and on this process's CPU time. On a
machine shared with other work the wall clock also counts the time the process waited
for a core, wherever it happened to be; CPU time does not, so it is the steadier figure.
(A library that encodes on threads, such as tiktoken's ``encode_batch``, adds its threads'
CPU time to its calls.)

The time of a call is measured around the executor, so with worker processes it is the
round trip as the parent sees it (protocol included), which is the cost a run pays.
Peak memory is this process's own high-water mark (:func:`peak_rss_mb`: not
``getrusage``'s, which a process inherits from the one that started it), and the
largest of its waited-for children's, when there are any.
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, TextIO

__all__ = ["HarnessProfile", "TimedExecutor", "peak_rss_mb"]


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size in MB: this process's own (``RUSAGE_SELF``), or the largest
    of its waited-for children's (``RUSAGE_CHILDREN``).

    Its own is the kernel's high-water mark of its memory, ``VmHWM`` of /proc/self/status,
    where there is one. ``getrusage``'s ``ru_maxrss`` is kept across ``exec``, so a process
    that ``subprocess`` started (vfork, then exec) reports the peak of the process that
    started it when that one's is higher: a run started by a Python that had touched
    1.5 GB said 1,513 MB where its own high-water mark was 14 MB. So did the corpus rows
    of ``bench/run.py`` after its throughput section (3,315 MB for each), and the corpus
    memory test in a pytest worker that had run other tests (both sizes the worker's own
    peak, a ratio of 1.0 whatever the run held). The children's figure keeps that flaw,
    and there is no high-water mark to read for them: it is the most that any child, or
    this process when it started one, held (Linux reports KB, macOS bytes).
    """
    if who == resource.RUSAGE_SELF:
        try:
            with open("/proc/self/status", encoding="ascii", errors="replace") as status:
                own = _high_water_kb(status.read())
        except OSError:
            own = None  # no /proc (macOS): ru_maxrss is all there is
        if own is not None:
            return own / 1024
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _high_water_kb(status: str) -> int | None:
    """The ``VmHWM`` figure (kB) of a /proc/PID/status text; ``None`` without one.

    >>> _high_water_kb("Name:\\tpython3\\nVmPeak:\\t   20104 kB\\nVmHWM:\\t   13612 kB\\nVmRSS:\\t 13600 kB\\n")
    13612
    >>> _high_water_kb("Name:\\tpython3\\n") is None
    True
    """
    start = status.find("VmHWM:")
    if start < 0:
        return None
    fields = status[start + len("VmHWM:"):].split(None, 2)
    return int(fields[0]) if fields and fields[0].isdigit() else None


@dataclass
class _Stopwatch:
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    calls: int = 0
    by_op: dict[str, float] = field(default_factory=dict)
    #: ``seconds`` at the profile's last mark: what the phase then ending spent in calls
    at_mark: float = 0.0


#: an executor's bulk methods, each timed as one operation: name -> (the operation it
#: counts as, whether each item of its first argument counts as one call)
_BULK = {"call_many": ("call_many", False), "encode_many": ("encode", True), "encode_ids_many": ("encode", True),
         "token_bytes_many": ("token_bytes", True), "pieces_each": ("token_bytes", True),
         "api_surfaces": ("api_surface", True), "encode_differing": ("encode", True),
         "token_bytes_differing": ("token_bytes", True)}


class TimedExecutor:
    """An executor that adds the time of every call to a stopwatch, and is otherwise it."""

    def __init__(self, inner: Any, stopwatch: _Stopwatch) -> None:
        self._inner = inner
        self._stopwatch = stopwatch
        self.info = inner.info

    def call(self, op: str, *args: Any) -> Any:
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            return self._inner.call(op, *args)
        finally:
            self._add(op, started, started_cpu)

    def _add(self, op: str, started: float, started_cpu: float, calls: int = 1) -> None:
        took = time.perf_counter() - started
        watch = self._stopwatch
        watch.cpu_seconds += time.process_time() - started_cpu
        watch.seconds += took
        watch.calls += calls
        watch.by_op[op] = watch.by_op.get(op, 0.0) + took

    def around(self, inner: Any) -> "TimedExecutor":
        """``inner`` on this stopwatch: an adapter whose executor is replaced mid-run (the
        long inputs' worker, :func:`harness.run.long_tier.bounded_calls`) keeps its timing."""
        return TimedExecutor(inner, self._stopwatch)

    def __getattr__(self, name: str) -> Any:
        # a worker's batches (``call_many``) and an in-process adapter's loops of encodes,
        # pieces and walks, only where the inner executor has them (``Calls.batches``
        # tells them apart), are calls too; anything else an executor offers (closing a
        # worker, ...) is the inner one's
        inner = getattr(self._inner, name)
        if name not in _BULK:
            return inner
        op, per_item = _BULK[name]

        def timed(items: Any, *args: Any) -> Any:
            started, started_cpu = time.perf_counter(), time.process_time()
            try:
                return inner(items, *args)
            finally:
                self._add(op, started, started_cpu, len(items) if per_item else 1)
        return timed


def _share(part: float, whole: float) -> float:
    return round(part / whole, 4) if whole > 0 else 0.0


@dataclass
class HarnessProfile:
    """Phase marks, adapter build time and per-adapter call time of one run."""

    started: float = field(default_factory=time.perf_counter)
    started_cpu: float = field(default_factory=time.process_time)
    phases: dict[str, float] = field(default_factory=dict)
    phase_peaks: dict[str, float] = field(default_factory=dict)
    adapters: dict[str, _Stopwatch] = field(default_factory=dict)
    builds: dict[str, float] = field(default_factory=dict)
    builds_cpu: dict[str, float] = field(default_factory=dict)
    #: phase -> adapter -> seconds in that adapter's calls during the phase
    phase_calls: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the processes the run's units were spread over (``--jobs``, after any fallback to 1):
    #: with more than one, ``cpu_s`` is this process's alone, not its children's
    jobs: int = 1
    _last: float = 0.0
    _last_cpu: float = 0.0

    def __post_init__(self) -> None:
        self._last, self._last_cpu = self.started, self.started_cpu

    def mark(self, phase: str) -> None:
        """The time since the previous mark (or the start) belongs to ``phase``."""
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self.phase_peaks[phase] = round(peak_rss_mb(), 1)  # the peak so far, at the end of it
        # each adapter's call time since the last mark is this phase's: what a phase costs
        # per adapter (bench/phase_cost.py), which the run's total per adapter cannot say
        spent = self.phase_calls.setdefault(phase, {})
        for name, watch in self.adapters.items():
            if watch.seconds > watch.at_mark:
                spent[name] = spent.get(name, 0.0) + watch.seconds - watch.at_mark
            watch.at_mark = watch.seconds
        self._last, self._last_cpu = now, time.process_time()

    def add_builds(self, wall: dict[str, float], cpu: dict[str, float] | None = None) -> None:
        """Seconds each adapter's factory took (``Registry.build_seconds``, ``build_cpu_seconds``)."""
        self.builds.update(wall)
        self.builds_cpu.update(cpu or {})

    def instrument(self, calls: Iterable[Any]) -> None:
        """Wrap the executor of every ``Calls`` (each once) in a stopwatch."""
        for one in calls:
            if one.name in self.adapters:
                continue
            watch = self.adapters[one.name] = _Stopwatch()
            one.wrap_executor(lambda inner, watch=watch: TimedExecutor(inner, watch))

    def summary(self) -> dict[str, Any]:
        wall = self._last - self.started
        cpu = self._last_cpu - self.started_cpu
        in_calls = sum(w.seconds for w in self.adapters.values())
        in_calls_cpu = sum(w.cpu_seconds for w in self.adapters.values())
        build, build_cpu = sum(self.builds.values()), sum(self.builds_cpu.values())
        outside = max(0.0, wall - in_calls - build)
        outside_cpu = max(0.0, cpu - in_calls_cpu - build_cpu)
        by_op: dict[str, float] = {}
        for watch in self.adapters.values():
            for op, seconds in watch.by_op.items():
                by_op[op] = by_op.get(op, 0.0) + seconds
        slowest = sorted(self.adapters.items(), key=lambda kv: -kv[1].seconds)
        return {
            "jobs": self.jobs,
            "wall_s": round(wall, 3),
            "adapter_build_s": round(build, 3),
            "adapter_calls_s": round(in_calls, 3),
            "adapter_calls": sum(w.calls for w in self.adapters.values()),
            "harness_s": round(outside, 3),
            "harness_share": _share(outside, wall),
            "cpu_s": round(cpu, 3),
            "adapter_build_cpu_s": round(build_cpu, 3),
            "adapter_calls_cpu_s": round(in_calls_cpu, 3),
            "harness_cpu_s": round(outside_cpu, 3),
            "harness_cpu_share": _share(outside_cpu, cpu),
            "phases_s": {k: round(v, 3) for k, v in self.phases.items()},
            "peak_rss_mb_after_phase": dict(self.phase_peaks),
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "peak_rss_children_mb": round(peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
            "adapter_calls_by_op_s": {k: round(v, 3) for k, v in sorted(by_op.items(), key=lambda kv: -kv[1])},
            "adapters_s": {name: round(w.seconds, 3) for name, w in slowest},
            "adapter_calls_by_phase_s": {phase: {n: round(t, 3) for n, t in sorted(spent.items(), key=lambda kv: -kv[1])}
                                         for phase, spent in self.phase_calls.items()},
            "adapter_builds_s": {n: round(t, 3) for n, t in sorted(self.builds.items(), key=lambda kv: -kv[1])},
        }

    def report(self, stream: TextIO, *, top: int = 8) -> None:
        """A short human-readable account on ``stream``."""
        s = self.summary()
        stream.write(
            f"harness profile: wall {s['wall_s']:.2f} s = adapter calls {s['adapter_calls_s']:.2f} s "
            f"({s['adapter_calls']} calls) + adapter builds {s['adapter_build_s']:.2f} s + harness "
            f"{s['harness_s']:.2f} s (--jobs {s['jobs']}); harness overhead {100 * s['harness_share']:.1f} % of the wall "
            f"time, {100 * s['harness_cpu_share']:.1f} % of the CPU time ({s['cpu_s']:.2f} s); "
            f"peak RSS {s['peak_rss_mb']:.0f} MB\n"
        )
        if s["jobs"] > 1:
            stream.write(f"  (calls made in the {s['jobs']} job processes are not in these figures, and their CPU "
                         f"time is not in this process's: --jobs 1 gives the whole split)\n")
        stream.write("  adapter calls by operation: "
                     + ", ".join(f"{k} {v:.2f} s" for k, v in s["adapter_calls_by_op_s"].items()) + "\n")
        stream.write("  phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in s["phases_s"].items()) + "\n")
        slowest = list(s["adapters_s"].items())[:top]
        stream.write("  slowest adapters (call time): " + ", ".join(f"{n} {t:.2f} s" for n, t in slowest) + "\n")
        builds = list(s["adapter_builds_s"].items())[:top]
        stream.write("  slowest builds: " + ", ".join(f"{n} {t:.2f} s" for n, t in builds) + "\n")
