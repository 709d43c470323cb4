"""Running the long tier (:mod:`harness.generate.long_inputs`): a ladder of sizes.

One unit is one (encoding, kind): the open-vocabulary adapters of that encoding and its
reference go up the sizes together, each through the generated checks. Before each
size, every adapter's time is predicted from what it took at the last size, scaled by
the growth it showed between its last two sizes (an exponent between 1 and 2: linear
at best, quadratic at worst; quadratic until two sizes were measured). An adapter whose
prediction is over the time one input may take stops there, so a pure-Python BPE that
is quadratic in a run's length never starts a million-character encode it cannot
finish, in process (where nothing could stop it) or in a worker (where it would only
meet the time limit, call after call). The reference may take :data:`REFERENCE_FACTOR`
times as long; it stopping stops the unit: nothing is left to compare with.

The first prediction comes from the checks on a short probe, run twice (the first pass
warms up what an adapter builds lazily on first use, such as a second tokenizer for
``encode_ordinary``, which would otherwise pass for slowness) and not kept. The sizes
each adapter reached are reported as a note when they fall short of the largest.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from harness.checks import run_text_check
from harness.checks.base import ORDINARY, Subject
from harness.generate.long_inputs import LongOptions, long_text

__all__ = ["LongUnit", "describe_reach", "finish_long", "long_units", "run_unit"]

#: the probe's length
PROBE_CHARS = 1_000
#: the reference may take this many times longer per input: every comparison needs it
REFERENCE_FACTOR = 3
#: timings below this say nothing about growth
_MEASURABLE_S = 0.005


@dataclass(frozen=True)
class LongUnit:
    kind: str
    #: the adapters that climb, the reference first
    adapters: tuple[str, ...]
    reference: str
    options: LongOptions


def predict(previous: tuple[int, float] | None, last: tuple[int, float], length: int) -> float:
    """Seconds the checks on ``length`` characters should take, from the last sizes.

    >>> predict(None, (1000, 0.01), 10000)  # quadratic until growth was measured
    1.0
    >>> round(predict((10000, 0.1), (100000, 1.0), 1000000), 3)  # it grew linearly
    10.0
    """
    size, seconds = last
    exponent = 2.0
    if previous is not None and previous[1] >= _MEASURABLE_S and seconds >= _MEASURABLE_S and size > previous[0]:
        exponent = min(2.0, max(1.0, math.log(seconds / previous[1]) / math.log(size / previous[0])))
    return seconds * (length / size) ** exponent


def run_unit(runner: Any, unit: LongUnit) -> dict[str, int]:
    """Climb the sizes of ``unit`` on ``runner``; returns adapter -> largest length checked."""
    calls = runner.selected.calls
    reference = calls[unit.reference]
    reach = dict.fromkeys(unit.adapters, 0)
    measured: dict[str, list[tuple[int, float]]] = {}
    probe = long_text(unit.kind, PROBE_CHARS).text()
    for name in unit.adapters:
        for _ in range(2):  # the first pass warms up, the second is timed
            calls[name].reset()
            reference.reset()
            started = time.perf_counter()
            for check in runner.generated_checks:
                run_text_check(check, Subject(probe, ORDINARY, calls[name], reference))
        measured[name] = [(len(probe), time.perf_counter() - started)]
    active = list(unit.adapters)
    for length in unit.options.lengths:
        text = long_text(unit.kind, length).text()

        def fits(name: str) -> bool:
            history = measured[name]
            previous = history[-2] if len(history) > 1 else None
            allowed = unit.options.seconds_per_input * (REFERENCE_FACTOR if name == unit.reference else 1)
            return predict(previous, history[-1], len(text)) <= allowed

        active = [name for name in active if fits(name)]
        if unit.reference not in active:
            break
        for name in active:
            calls[name].reset()
        for name in active:
            started = time.perf_counter()
            runner.run_generated_input(text, calls[name], reference)
            measured[name].append((len(text), time.perf_counter() - started))
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
    return units


def finish_long(runner: Any, options: LongOptions) -> None:
    """The tier's notes on ``runner``, from the sizes each adapter reached (every unit applied)."""
    for name in sorted(runner.long_reach):
        note = describe_reach(name, runner.long_reach[name], max(options.lengths))
        if note is not None and note not in runner.notes:
            runner.notes.append(note)


def describe_reach(adapter: str, reach: dict[str, int], largest: int) -> str | None:
    """A note for an adapter that did not reach ``largest`` on every kind, else None.

    >>> describe_reach("minbpe:gpt2", {"spaces": 10000, "cjk": 0}, 1000000)
    'long inputs: minbpe:gpt2 was checked up to spaces 10^4, cjk none (the next size was predicted to take longer than one long input may)'
    """
    if all(n >= largest for n in reach.values()):
        return None
    shown = ", ".join(f"{kind} {_power(n)}" for kind, n in reach.items())
    return (f"long inputs: {adapter} was checked up to {shown} (the next size was predicted to take longer "
            f"than one long input may)")


def _power(n: int) -> str:
    if n == 0:
        return "none"
    exponent = round(math.log10(n))
    return f"10^{exponent}" if 10 ** exponent == n else str(n)
