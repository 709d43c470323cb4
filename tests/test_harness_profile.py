"""``--profile-harness``: adapter call time is counted per call, the parts add up, the CLI writes it.

No wall-clock time is asserted: only counts, names and that the accounting is consistent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.calls import Calls, InProcess
from harness.cases.model import Policy
from harness.registry import default_registry
from harness.run.profile import HarnessProfile, TimedExecutor

REPO = Path(__file__).resolve().parent.parent


def test_every_executor_call_is_timed_once_and_memoised_calls_are_not() -> None:
    calls = Calls(InProcess(default_registry().get("bytebpe:demo")))
    profile = HarnessProfile()
    profile.instrument([calls])
    profile.instrument([calls])  # a second pass must not wrap twice
    for _ in range(3):
        assert calls.encode("low lower", Policy()).is_ok  # memoised: one executor call
    calls.decode_bytes((97, 98))
    calls.reset()
    calls.encode("low lower", Policy())
    watch = profile.adapters["bytebpe:demo"]
    assert watch.calls == 3
    assert sorted(watch.by_op) == ["decode_bytes", "encode"]
    assert isinstance(calls._executor, TimedExecutor)
    assert not isinstance(calls._executor._inner, TimedExecutor)


def test_the_summary_adds_up() -> None:
    calls = Calls(InProcess(default_registry().get("bytebpe:demo")))
    profile = HarnessProfile()
    profile.instrument([calls])
    calls.encode("low lower " * 50, Policy())
    profile.add_builds({"bytebpe:demo": 0.0})
    profile.mark("work")
    s = profile.summary()
    parts = s["adapter_calls_s"] + s["adapter_build_s"] + s["harness_s"]
    assert abs(parts - s["wall_s"]) <= 0.002  # three rounded parts of one measured whole
    assert 0.0 <= s["harness_share"] <= 1.0 and 0.0 <= s["harness_cpu_share"] <= 1.0
    assert s["adapter_calls_cpu_s"] <= s["cpu_s"] + 0.002
    assert list(s["phases_s"]) == ["work"]
    assert list(s["adapters_s"]) == ["bytebpe:demo"]
    assert s["adapter_calls"] == 1 and s["peak_rss_mb"] > 0


def test_each_phase_keeps_the_call_time_spent_in_it() -> None:
    demo = Calls(InProcess(default_registry().get("bytebpe:demo")))
    profile = HarnessProfile()
    profile.instrument([demo])
    demo.encode("low lower " * 40, Policy())
    profile.mark("first")
    profile.mark("idle")  # no call in it: no entry, not a zero
    demo.encode("newest widest " * 40, Policy())
    demo.decode_bytes((97, 98))
    profile.mark("second")
    by_phase = profile.summary()["adapter_calls_by_phase_s"]
    assert list(by_phase) == ["first", "idle", "second"]
    assert by_phase["idle"] == {}
    assert list(by_phase["first"]) == list(by_phase["second"]) == ["bytebpe:demo"]
    watch = profile.adapters["bytebpe:demo"]
    assert abs(by_phase["first"]["bytebpe:demo"] + by_phase["second"]["bytebpe:demo"] - watch.seconds) <= 0.002


def test_a_workers_batches_are_timed_and_a_replaced_executor_keeps_the_stopwatch() -> None:
    from harness.worker.client import WorkerExecutor
    from harness.worker.setup import Isolation

    here = Calls(InProcess(default_registry().get("bytebpe:demo")))
    profile = HarnessProfile()
    profile.instrument([here])
    assert not here.batches  # the stopwatch does not make an in-process adapter look like a worker
    # what the long inputs do (harness/run/long_tier.bounded_calls): the same adapter, now in a worker
    there = Calls(WorkerExecutor("bytebpe:demo", Isolation(mode="all")))
    there.wrap_executor(here.executor.around)
    try:
        assert there.batches
        there.prefetch([("encode", ("low lower", Policy()), True), ("encode", ("newest", Policy()), True)])
        assert there.encode("low lower", Policy()).is_ok
    finally:
        there.executor.close()
    watch = profile.adapters["bytebpe:demo"]
    assert watch.calls == 1 and list(watch.by_op) == ["call_many"]  # one round trip; the encode was fetched ahead
    profile.mark("long")
    assert list(profile.summary()["adapter_calls_by_phase_s"]["long"]) == ["bytebpe:demo"]


def test_run_profile_harness_prints_and_writes_the_profile(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--impl", "bytebpe:demo", "--no-generated", "--quiet",
         "--profile-harness", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "harness overhead" in proc.stderr
    (written,) = [p for p in tmp_path.glob("*/harness-profile.json") if p.parent.name != "latest"]
    data = json.loads(written.read_text(encoding="utf-8"))
    # latest/ is copied before the report's time is known; it must still hold the profile
    assert json.loads((tmp_path / "latest" / "harness-profile.json").read_text(encoding="utf-8")) == data
    assert list(data["phases_s"]) == ["select", "vocab", "cases", "generated", "finish", "report"]
    assert "bytebpe:demo" in data["adapters_s"] and data["adapter_calls"] > 0


#: a process that holds (touches) 384 MiB, then starts ``tokconf run`` as ``subprocess``
#: does (vfork, then exec), and waits for it
_BIG_PARENT = r"""
import subprocess, sys
held = bytearray(384 << 20)
for page in range(0, len(held), 4096):
    held[page] = 1
sys.exit(subprocess.run([sys.executable, "-m", "harness", *sys.argv[1:]]).returncode)
"""


def test_a_runs_peak_is_its_own_not_that_of_the_process_that_started_it(tmp_path: Path) -> None:
    # getrusage's ru_maxrss is kept across exec: this run reported its parent's 384+ MiB
    # as its own peak, and a test comparing two runs' peaks from one big pytest worker
    # compared that number with itself
    proc = subprocess.run(
        [sys.executable, "-c", _BIG_PARENT, "run", "--impl", "bytebpe:demo", "--no-generated", "--quiet",
         "--profile-harness", "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    (written,) = [p for p in tmp_path.glob("*/harness-profile.json") if p.parent.name != "latest"]
    data = json.loads(written.read_text(encoding="utf-8"))
    assert 0 < data["peak_rss_mb"] < 256, data["peak_rss_mb"]
    assert all(0 < peak <= data["peak_rss_mb"] for peak in data["peak_rss_mb_after_phase"].values())
