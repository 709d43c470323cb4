"""Where the test suite's CPU goes: each test's own CPU and its children's, per test and file.

pytest's ``--durations`` gives wall seconds, and under pytest-xdist on a busy machine a
test's wall time is mostly waiting for a core: in the CI rehearsal of 2026-12-06 the
durations added up to 4,969 s for 3,387 s of CPU. This runs the suite with a small
plugin (this module, given to the top pytest with ``-p``, so the pytest runs that tests
start themselves do not load it) that writes, for each test, the CPU seconds of its
process and of the child processes it reaped (``RUSAGE_CHILDREN``: a ``tokconf run``
subprocess and the workers that run reaped), then prints the largest files and tests.

A process that outlives its test (a session fixture's Dask cluster, a Node worker kept
for the next test) counts in the test that reaps it, and the suite's own processes
(pytest-xdist, pip in ``.ci/run``) in none: the summary says how much of the whole was
attributed. Outside the tests: no test asserts a time.

    python bench/suite_cpu.py [--top N] [--out FILE.jsonl] [-- PYTEST_ARGS ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

#: where the plugin appends one JSON line per test (set by :func:`main` for the pytest it starts)
OUT_ENV = "TOKCONF_SUITE_CPU_OUT"
REPO = Path(__file__).resolve().parents[1]


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    """The plugin: setup, call and teardown of one test, timed as one."""
    own, children = _cpu()
    started = time.perf_counter()
    yield
    own_after, children_after = _cpu()
    out = os.environ.get(OUT_ENV)
    if out:
        record = {"test": item.nodeid, "own_s": round(own_after - own, 3),
                  "children_s": round(children_after - children, 3),
                  "wall_s": round(time.perf_counter() - started, 3)}
        with open(out, "a", encoding="utf-8") as log:  # one short line: appends of workers do not interleave
            log.write(json.dumps(record) + "\n")


def summary(records: list[dict[str, Any]], *, total_cpu_s: float | None, top: int) -> str:
    """The table of the largest files and tests.

    >>> rows = [{"test": "tests/a.py::t1", "own_s": 1.0, "children_s": 3.0, "wall_s": 6.0},
    ...         {"test": "tests/b.py::t2", "own_s": 0.5, "children_s": 0.0, "wall_s": 0.5}]
    >>> print(summary(rows, total_cpu_s=5.0, top=1))
    2 tests: 4.5 s CPU attributed (1.5 s own, 3.0 s children) of 5.0 s for the whole pytest run
    CPU s  wall s  file
      4.0     6.0  tests/a.py
    CPU s  own s  wall s  test
      4.0    1.0     6.0  tests/a.py::t1
    """
    cpu = {r["test"]: r["own_s"] + r["children_s"] for r in records}
    own = sum(r["own_s"] for r in records)
    children = sum(r["children_s"] for r in records)
    whole = f" of {total_cpu_s:.1f} s for the whole pytest run" if total_cpu_s is not None else ""
    lines = [f"{len(records)} tests: {own + children:.1f} s CPU attributed ({own:.1f} s own, "
             f"{children:.1f} s children){whole}"]
    by_file: Counter[str] = Counter()
    wall_by_file: Counter[str] = Counter()
    for r in records:
        name = r["test"].split("::")[0]
        by_file[name] += cpu[r["test"]]
        wall_by_file[name] += r["wall_s"]
    lines.append("CPU s  wall s  file")
    lines += [f"{s:5.1f}  {wall_by_file[f]:6.1f}  {f}" for f, s in by_file.most_common(top)]
    lines.append("CPU s  own s  wall s  test")
    for r in sorted(records, key=lambda r: -cpu[r["test"]])[:top]:
        lines.append(f"{cpu[r['test']]:5.1f}  {r['own_s']:5.1f}  {r['wall_s']:6.1f}  {r['test']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=25, help="files and tests listed (default 25)")
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the per-test lines here (JSON lines; default: a file in the temp folder)")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments of pytest (default: the README's)")
    args = parser.parse_args(argv)
    out = args.out or Path(os.environ.get("TMPDIR", "/tmp")) / f"tokconf-suite-cpu-{os.getpid()}.jsonl"
    out.unlink(missing_ok=True)
    env = {**os.environ, OUT_ENV: str(out),
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "bench"), os.environ.get("PYTHONPATH")) if p)}
    before = _cpu()[1]
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_cpu", *args.pytest_args], cwd=REPO, env=env)
    total = _cpu()[1] - before
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line] if out.exists() else []
    print(summary(records, total_cpu_s=total, top=args.top))
    print(f"per-test lines: {out}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
