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


def test_a_units_delta_holds_a_long_inputs_ids_once() -> None:
    """Inside a unit too (``Runner._note_input``): its delta is pickled (the unit cache, a
    ``--jobs`` process), and a pickle makes an object of every ID it holds, once per copy.
    A second default run's long phase peaked 80 MB higher loading those copies (issue 25)."""
    import pickle

    from harness.checks.base import ORDINARY
    from harness.run.deltas import delta_of

    selected = select(default_registry(), impls=["tiktoken:cl100k_base", "hf:cl100k_base"])
    runner = Runner(selected)
    text = "The quick brown fox, 12345 times.\n" * 300
    sub = runner.fresh()
    tiktoken = selected.calls["tiktoken:cl100k_base"]
    sub.run_generated_input(text, tiktoken, tiktoken)
    sub.run_generated_input(text, selected.calls["hf:cl100k_base"], tiktoken)
    delta = delta_of(sub, 0)
    outcomes = delta.inputs[(text, ORDINARY)]["outcomes"]
    tik, hf = outcomes["tiktoken:cl100k_base"], outcomes["hf:cl100k_base"]
    assert tik.is_ok and len(tik.value) > 1024 and hf is tik  # they agree: one object
    loaded = pickle.loads(pickle.dumps(delta))
    again = loaded.inputs[(text, ORDINARY)]["outcomes"]
    assert again["hf:cl100k_base"] is again["tiktoken:cl100k_base"] and again["hf:cl100k_base"] == tik
    # merged, a long tuple's IDs are one int object per value, whichever pickle they came from
    merge(runner, loaded)
    merge(runner, Delta(inputs={("other", Policy()): {"origin": "generated", "case": None,
                                                       "outcomes": {"x:1": pickle.loads(pickle.dumps(tik))}}}))
    first = runner.inputs[(text, ORDINARY)]["outcomes"]["hf:cl100k_base"].value
    second = runner.inputs[("other", Policy())]["outcomes"]["x:1"].value
    assert first == second and all(a is b for a, b in zip(first, second))
    selected.close()
