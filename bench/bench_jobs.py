"""Wall time of the default ``tokconf run`` with ``--jobs 1`` and ``--jobs N``, back to back.

    python bench/bench_jobs.py [--jobs 2] [--rounds 3] [-- extra tokconf run flags]

Each round runs ``--jobs 1`` then ``--jobs N`` as subprocesses (the order alternates
between rounds, so a load that drifts favours neither), and prints per run the wall
time, the CPU time the run's processes used, and ``/proc/loadavg`` before it. The
speed-up is the ratio of the best wall times, and of the medians. On a machine shared
with other work the wall times say more about the neighbours than about tokconf; the CPU
times show what the run itself cost. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Sequence


def load() -> str:
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def one_run(jobs: int, extra: list[str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seen = load()
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "harness", "run", "--quiet", "--out", out,
                               "--jobs", str(jobs), *extra], capture_output=True, text=True)
        wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"tokconf run --jobs {jobs} failed ({done.returncode}): {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, seen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="more `tokconf run` flags (after --)")
    args = parser.parse_args(argv)
    walls: dict[int, list[float]] = {1: [], args.jobs: []}
    print(f"cpus: {os.cpu_count()}")
    for round_ in range(args.rounds):
        order = (1, args.jobs) if round_ % 2 == 0 else (args.jobs, 1)
        for jobs in order:
            wall, cpu, seen = one_run(jobs, args.extra)
            walls[jobs].append(wall)
            print(f"round {round_ + 1} --jobs {jobs}: wall {wall:6.1f} s  cpu {cpu:6.1f} s  load before {seen}",
                  flush=True)
    best = min(walls[1]) / min(walls[args.jobs])
    median = statistics.median(walls[1]) / statistics.median(walls[args.jobs])
    print(f"speed-up of --jobs {args.jobs}: {best:.2f}x (best), {median:.2f}x (median); load now {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
