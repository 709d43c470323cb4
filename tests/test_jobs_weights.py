"""``--jobs`` hands the heaviest tasks of a phase out first and still merges in task order
(``Jobs.run(..., weights=)``; issue 25: in task order, the everyday text's largest documents
came last and ran alone while the other process waited).

Real forked processes run a planted task that writes its number to a file when it starts.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import pytest

from harness.engine.phases import _everyday_units
from harness.run import parallel
from harness.run.deltas import Delta
from harness.run.parallel import Jobs


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weights: Sequence[int] | None) -> tuple[list[str], list[str]]:
    log = tmp_path / f"started-{weights is not None}"

    def task(units: Sequence[int]) -> Delta:
        with log.open("a", encoding="ascii") as out:
            out.write(f"{units[0]}\n")
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
        jobs.run("cases", [[n] for n in range(6)], weights=weights)
    finally:
        jobs.close()
    return log.read_text(encoding="ascii").split(), merged


def test_the_heaviest_tasks_start_first_and_merge_in_task_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started, merged = _run(tmp_path, monkeypatch, [1, 1, 9, 1, 8, 1])
    assert set(started[:2]) == {"2", "4"} and sorted(started) == [str(n) for n in range(6)]
    assert merged == [f"task {n}" for n in range(6)]
    # unweighed, the processes take the tasks in their order
    started, merged = _run(tmp_path, monkeypatch, None)
    assert set(started[:2]) == {"0", "1"} and merged == [f"task {n}" for n in range(6)]


def test_an_everyday_unit_weighs_its_characters() -> None:
    runner = SimpleNamespace(vocab_for=lambda chunk: {})
    units = _everyday_units(SimpleNamespace(profile="ci", runner=runner))
    assert all(u.weight == sum(len(case.text) for case in u.task[0]) > 0 for u in units)
    # the sources differ tenfold and more (a module of the standard library, chat messages)
    assert max(u.weight for u in units) > 10 * min(u.weight for u in units)
