"""``--jobs`` hands the heaviest tasks of a phase out first and still merges in task order
(``Jobs.run(..., weights=)``; issue 25: in task order, the everyday text's largest documents
came last and ran alone while the other process waited).

Real forked processes run a planted task that writes its number to a file when it starts.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import pytest

from harness.engine.phases import _everyday_units
from harness.run import parallel
from harness.run.deltas import Delta
from harness.run.parallel import Jobs


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weights: Sequence[int] | None,
         affinity: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """Six tasks under ``--jobs 2``: (each task's number as it started, with its process
    ID after a colon; the notes merged, in order)."""
    log = tmp_path / f"started-{weights is not None}-{affinity is not None}"

    def task(units: Sequence[int]) -> Delta:
        with log.open("a", encoding="ascii") as out:
            out.write(f"{units[0]}:{os.getpid()}\n")
        time.sleep(0.3)  # both processes hold a task before the third is taken
        return Delta(notes=[f"task {units[0]}"])

    monkeypatch.setitem(parallel.TASKS, "cases", task)  # the forked processes inherit the table
    merged: list[str] = []

    class Merging:
        selected = SimpleNamespace(calls={})

        def apply(self, delta: Delta) -> None:
            merged.extend(delta.notes)

    jobs = Jobs(Merging(), jobs=2)
    try:
        jobs.run("cases", [[n] for n in range(6)], weights=weights, affinity=affinity)
    finally:
        jobs.close()
    return log.read_text(encoding="ascii").split(), merged


def test_the_heaviest_tasks_start_first_and_merge_in_task_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started, merged = _run(tmp_path, monkeypatch, [1, 1, 9, 1, 8, 1])
    numbers = [entry.split(":")[0] for entry in started]
    assert set(numbers[:2]) == {"2", "4"} and sorted(numbers) == [str(n) for n in range(6)]
    assert merged == [f"task {n}" for n in range(6)]
    # unweighed, the processes take the tasks in their order
    started, merged = _run(tmp_path, monkeypatch, None)
    assert {entry.split(":")[0] for entry in started[:2]} == {"0", "1"} and merged == [f"task {n}" for n in range(6)]


def test_the_tasks_of_one_key_run_in_one_process_in_their_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started, merged = _run(tmp_path, monkeypatch, [1] * 6, ["a", "a", "a", "b", "b", "c"])
    process = dict(entry.split(":") for entry in started)
    # handed out one by one, tasks 0 and 1 would start at once, in the two processes
    assert process["0"] == process["1"] == process["2"] and process["3"] == process["4"] != process["0"]
    assert [n for n in (e.split(":")[0] for e in started) if n in "012"] == ["0", "1", "2"]
    assert merged == [f"task {n}" for n in range(6)]
    # one key for every task (the user's path: one encoding's long units) is no reason to
    # leave a process idle: fewer keys than processes, and each task is handed out alone
    (tmp_path / "one").mkdir()
    started, merged = _run(tmp_path / "one", monkeypatch, [1] * 6, ["a"] * 6)
    process = dict(entry.split(":") for entry in started)
    assert process["0"] != process["1"] and merged == [f"task {n}" for n in range(6)]


def test_the_long_units_of_one_encoding_share_a_key() -> None:
    from harness.engine.phases import _long_units
    from harness.registry import default_registry
    from harness.run.runner import Runner
    from harness.run.selection import select

    selected = select(default_registry(), impls=["tiktoken:cl100k_base", "tiktoken:r50k_base", "bytebpe-ranks:cl100k_base"])
    try:
        ctx = SimpleNamespace(plan=SimpleNamespace(phases=("generated",), long=False, default_long=True),
                              runner=Runner(selected), long=False, profile="ci")
        units = _long_units(ctx)
    finally:
        selected.close()
    keys = {u.name.split(":")[0]: set() for u in units}
    for u in units:
        keys[u.name.split(":")[0]].add(u.affinity)
    assert sorted(keys) == ["cl100k_base", "r50k_base"] and all(len(k) == 1 for k in keys.values())
    assert keys["cl100k_base"] != keys["r50k_base"]
    assert {u.weight for u in units if u.name.startswith("cl100k_base")} == {2}


def test_an_everyday_unit_weighs_its_characters() -> None:
    runner = SimpleNamespace(vocab_for=lambda chunk: {})
    units = _everyday_units(SimpleNamespace(profile="ci", runner=runner))
    assert all(u.weight == sum(len(case.text) for case in u.task[0]) > 0 for u in units)
    # the sources differ tenfold and more (a module of the standard library, chat messages)
    assert max(u.weight for u in units) > 10 * min(u.weight for u in units)
