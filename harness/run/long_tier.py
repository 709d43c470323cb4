"""Running the long tier (:mod:`harness.generate.long_inputs`): every size on every adapter.

One unit is one (encoding, kind): the open-vocabulary adapters of that encoding and its
reference go up the sizes together, each through the generated checks. No size is ever
skipped because an earlier one was slow: a prediction from the 10^5 timing once kept
``run --long`` from ever trying tiktoken 0.9.0's o200k_base on 10^6 characters, which
panics in under 0.1 s (issue 22). What bounds a slow adapter is the per-call timeout
(``--timeout``): each adapter runs the tier in a worker (:func:`bounded_calls`), so a
quadratic encode becomes a ``timeout`` outcome, reported like any other, and the next
size still runs. Which inputs run never depends on how fast the machine is: an adapter
whose encode grows faster than linearly on one long piece (pure-Python BPE) declares the
longest input it takes (:attr:`~harness.interface.Capabilities.long_limit`), skips the
sizes above it, and the run says so (a note, and ``run.limits.long_declared``).

``--no-isolate`` is the one exception: nothing can stop a call in this process, so the
in-process adapters run the tier there, and the run says so in a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.generate.long_inputs import LongOptions, long_text

__all__ = ["UNBOUNDED_NOTE", "LongUnit", "bounded_calls", "declared_limits", "describe_reach", "finish_long",
           "long_units", "reference_limit", "run_unit", "takes", "unbounded"]


@dataclass(frozen=True)
class LongUnit:
    kind: str
    #: the adapters that climb, the reference first
    adapters: tuple[str, ...]
    reference: str
    options: LongOptions


#: the note of a run whose in-process adapters ran the tier with nothing to stop a call
UNBOUNDED_NOTE = "long inputs: --no-isolate, so the adapters of this process ran them with no per-call timeout"


def unbounded(selected: Any) -> bool:
    """Whether nothing bounds the calls of this run's in-process adapters (``--no-isolate``)."""
    return selected.isolation is None or selected.isolation.mode == "none"


def bounded_calls(runner: Any, name: str) -> Any:
    """``name``'s calls under the per-call timeout: a worker of its own when it runs in
    this process (kept for the rest of the run, so shrinking a long finding is bounded
    too), as it is when it already runs in one; in process under ``--no-isolate``."""
    from harness.calls import Calls

    selected = runner.selected
    current = selected.calls[name]
    if current.batches or unbounded(selected):
        return current
    from harness.run.answers import RememberingExecutor
    from harness.run.profile import TimedExecutor
    from harness.worker.client import WorkerExecutor

    bounded = Calls(WorkerExecutor(name, selected.isolation))
    executor = current.executor
    remembering = executor if isinstance(executor, RememberingExecutor) else None
    if remembering is not None:  # a unit that keeps this adapter's answers (harness.run.answers)
        executor = remembering.inner
    if isinstance(executor, TimedExecutor):  # --profile-harness times the long calls too
        bounded.wrap_executor(executor.around)
    if remembering is not None:
        remembering.extend_to(bounded)
    selected.calls[name] = bounded
    return bounded


def takes(limit: int | None, length: int) -> bool:
    """Whether an adapter declaring ``limit`` (``Capabilities.long_limit``) takes a long
    input of ``length`` characters.

    >>> takes(None, 10**6), takes(10_000, 10_000), takes(10_000, 100_000), takes(0, 10_000)
    (True, True, False, False)
    """
    return limit is None or length <= limit


def declared_limits(selected: Any, unit: LongUnit) -> dict[str, int | None]:
    """Each adapter of ``unit`` -> the longest input it takes (None: every size): the
    ``long_limit`` it declares; the reference's is raised to what its group needs."""
    limits = {name: selected.calls[name].info.capabilities.long_limit for name in unit.adapters}
    limits[unit.reference] = reference_limit(limits[unit.reference],
                                             [limits[n] for n in unit.adapters if n != unit.reference])
    return limits


def reference_limit(own: int | None, others: list[int | None]) -> int | None:
    """The longest input a reference declaring ``own`` takes when it meets adapters
    declaring ``others``: every size one of them takes, since each must meet it there;
    beyond that its own declaration holds. With no limit it takes every size.

    An npm port is the reference of p50k_base when tiktoken has no vocabulary for it: it
    used to climb to 10^5 letters alone (15 s an encode), with nothing to compare it to.

    >>> reference_limit(10_000, [1_000, 10_000]), reference_limit(10_000, [None, 1_000])
    (10000, None)
    >>> reference_limit(1_000, [10_000]), reference_limit(None, [1_000]), reference_limit(10_000, [])
    (10000, None, 10000)
    """
    if own is None or None in others:
        return None
    return max([own, *others])


def run_unit(runner: Any, unit: LongUnit) -> dict[str, int]:
    """Every size of ``unit`` on every one of its adapters that takes it (the reference
    every size another one takes, :func:`reference_limit`); adapter -> largest length
    tried (0: none, its declared limit is lower)."""
    limits = declared_limits(runner.selected, unit)
    # a worker is started only for an adapter that takes some size
    climbing = [n for n in unit.adapters if any(takes(limits[n], length) for length in unit.options.lengths)]
    calls = {name: bounded_calls(runner, name) for name in climbing}
    reference = calls[unit.reference]
    reach = dict.fromkeys(unit.adapters, 0)
    for length in unit.options.lengths:
        text = long_text(unit.kind, length).text()
        taking = [name for name in climbing if takes(limits[name], length)]
        for name in taking:
            calls[name].reset()
        for name in taking:
            runner.run_generated_input(text, calls[name], reference, checks=unit.options.checks)
            reach[name] = len(text)
    return reach


def long_units(runner: Any, options: LongOptions) -> list[LongUnit]:
    """The tier's units on ``runner``'s adapters: one per (encoding, kind), the reference first."""
    selected = runner.selected
    units = []
    for encoding in selected.encodings():
        reference = selected.reference_for(encoding).name
        names = [a.name for a in selected.group(encoding) if a.info.capabilities.alphabet is None]
        if reference not in names:
            continue  # a closed vocabulary has no long runs of these characters
        names = [reference] + [n for n in names if n != reference]
        units += [LongUnit(kind, tuple(names), reference, options) for kind in options.kinds]
    runner.long_reach = {}
    # what each adapter itself declares: a reference that climbs past it for its group's
    # sake reaches the largest size, and its note (finish_long) is then not written
    runner.long_declared = {name: limit for unit in units for name in unit.adapters
                            if (limit := selected.calls[name].info.capabilities.long_limit) is not None}
    if units and unbounded(selected) and UNBOUNDED_NOTE not in runner.notes:
        runner.notes.append(UNBOUNDED_NOTE)
    return units


def finish_long(runner: Any, options: LongOptions) -> None:
    """The tier's notes on ``runner``, from the sizes each adapter reached (every unit applied)."""
    for name in sorted(runner.long_reach):
        note = describe_reach(name, runner.long_reach[name], max(options.lengths),
                              limit=runner.long_declared.get(name))
        if note is not None and note not in runner.notes:
            runner.notes.append(note)


def describe_reach(adapter: str, reach: dict[str, int], largest: int, *, limit: int | None = None) -> str | None:
    """A note for an adapter that did not try ``largest`` on every kind, else None: one
    that declares a lower :attr:`~harness.interface.Capabilities.long_limit`, or one the
    tier could not run at all.

    >>> describe_reach("minbpe:gpt2", {"spaces": 10000, "cjk": 0}, 1000000)
    'long inputs: minbpe:gpt2 was tried up to spaces 10^4, cjk none'
    >>> describe_reach("minbpe:gpt2", {"spaces": 0, "cjk": 0}, 100000, limit=2000)
    'long inputs: minbpe:gpt2 declares it takes at most 2000 characters (long_limit): tried up to spaces none, cjk none'
    """
    if all(n >= largest for n in reach.values()):
        return None
    shown = ", ".join(f"{kind} {_power(n)}" for kind, n in reach.items())
    if limit is not None:
        return f"long inputs: {adapter} declares it takes at most {limit} characters (long_limit): tried up to {shown}"
    return f"long inputs: {adapter} was tried up to {shown}"


def _power(n: int) -> str:
    import math

    if n == 0:
        return "none"
    exponent = round(math.log10(n))
    return f"10^{exponent}" if 10 ** exponent == n else str(n)
