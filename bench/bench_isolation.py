"""What a worker process costs per call, against the same adapter in process.

    python bench/bench_isolation.py [--impl tiktoken:cl100k_base] [--calls 20000] [--repeat 3]

Short strings (the hostile corpus without special literals, at most 64 characters) are
encoded three ways, best of ``--repeat`` passes each:

- in process (:class:`harness.calls.InProcess`);
- isolated, one call per round trip (``WorkerExecutor.call``);
- isolated, batched: every call of a pass in frames of ``--batch`` calls
  (``WorkerExecutor.call_many``, what the runner's prefetch does for each task).

It prints microseconds per call and the overhead of isolation (isolated minus in
process). The machine's load (``/proc/loadavg``) is printed before and after: the numbers
mean little on a busy machine. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable, Sequence

from harness.calls import InProcess
from harness.cases.loader import load_cases
from harness.checks.base import ORDINARY
from harness.registry import default_registry
from harness.worker.client import WorkerExecutor
from harness.worker.setup import Isolation


def load() -> str:
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def best_of(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--impl", default="tiktoken:cl100k_base")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    texts = [c.text for c in load_cases() if "corpus" in c.tags and "<|" not in c.text and len(c.text) <= 64]
    work = [texts[i % len(texts)] + str(i) for i in range(args.calls)]  # distinct: nothing memoised
    print(f"load before: {load()}  (cpus: {os.cpu_count()})")
    here = InProcess(default_registry().get(args.impl))
    worker = WorkerExecutor(args.impl, Isolation(mode="all"))
    try:
        for text in work[:200]:  # both sides warm
            here.call("encode", text, ORDINARY)
            worker.call("encode", text, ORDINARY)
        inproc = best_of(args.repeat, lambda: [here.call("encode", t, ORDINARY) for t in work])
        single = best_of(args.repeat, lambda: [worker.call("encode", t, ORDINARY) for t in work])

        def batched() -> None:
            for i in range(0, len(work), args.batch):
                worker.call_many([("encode", (t, ORDINARY), False) for t in work[i:i + args.batch]])

        batch = best_of(args.repeat, batched)
    finally:
        worker.close()
    n = len(work)
    print(f"{args.impl}, {n} encodes of short strings (mean {sum(map(len, work)) / n:.0f} characters)")
    print(f"  in process          {inproc / n * 1e6:8.1f} us/call")
    print(f"  isolated, 1 a trip  {single / n * 1e6:8.1f} us/call   overhead {(single - inproc) / n * 1e6:6.1f} us")
    print(f"  isolated, batched   {batch / n * 1e6:8.1f} us/call   overhead {(batch - inproc) / n * 1e6:6.1f} us"
          f"   ({args.batch} calls a frame)")
    print(f"load after: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
