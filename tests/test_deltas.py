"""Merging units' deltas (harness/run/deltas.py): what a run keeps of each input."""

from __future__ import annotations

from harness.cases.model import Policy
from harness.outcomes import Outcome
from harness.registry import default_registry
from harness.run.deltas import Delta, merge
from harness.run.runner import Runner
from harness.run.selection import select


def test_equal_outcomes_of_one_input_are_kept_once() -> None:
    """A long input's IDs are ~10^5 ints per adapter and most adapters agree: the run keeps
    one object for equal answers (a default run held 20 million IDs, three in four copies)."""
    selected = select(default_registry(), impls=["tiktoken:gpt2"])
    runner = Runner(selected)
    key = ("x" * 5, Policy())
    ids = tuple(range(1000, 4000))

    def unit(outcomes: dict[str, Outcome]) -> Delta:
        return Delta(inputs={key: {"origin": "generated", "case": None, "outcomes": outcomes}})

    merge(runner, unit({"a:1": Outcome.ok(ids), "b:1": Outcome.ok(list(ids)), "c:1": Outcome.ok(ids[1:])}))
    merge(runner, unit({"d:1": Outcome.ok(list(ids))}))  # another unit, the same answer
    held = runner.inputs[key]["outcomes"]
    assert held["b:1"] is held["a:1"] and held["d:1"] is held["a:1"]
    assert held["c:1"].value == ids[1:] and held["c:1"] is not held["a:1"]
    assert held == {"a:1": Outcome.ok(ids), "b:1": Outcome.ok(ids), "c:1": Outcome.ok(ids[1:]), "d:1": Outcome.ok(ids)}
    selected.close()
