"""The input phases of a run, by name, in the order a plan runs them.

A phase is a named input builder: given the run's context it hands its inputs to the
runner as units (:mod:`harness.run.parallel`), which the plan's executor runs wherever it
runs units. Phases run in the order registered here; ``Plan.phases`` chooses which. A
new phase (every token, everyday text,
...) is one :func:`register_phase` call in the module that builds its inputs, and the
CLI, the pytest plugin and Dask run it with the others, unchanged.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

__all__ = ["PHASES", "Phase", "PhaseUnit", "RunContext", "UnitGroups", "default_phases", "register_phase",
           "run_units"]


@dataclass
class RunContext:
    """What a phase may use: the plan, the runner, the loaded cases and the corpus executor."""

    plan: Any
    runner: Any
    cases: list[Any]
    corpus: Any = None
    #: the resolved hypothesis profile (``ci``, ``dev``, ``nightly``)
    profile: str = "ci"

    @property
    def long(self) -> bool:
        return self.plan.long or self.profile == "nightly"


@dataclass(frozen=True)
class PhaseUnit:
    """One unit a phase hands to whatever executes the plan: a task of ``kind`` (a key of
    :data:`harness.run.parallel.TASKS`) and a readable name, unique within the phase, that
    becomes the pytest item's id (``long[cl100k_base:spaces]``; never an install path)."""

    name: str
    kind: str
    task: Any
    #: how much work the unit is, roughly (0: unknown): ``--jobs`` starts the heaviest of
    #: a phase first (:mod:`harness.run.handout`), the merge order stays the units'
    weight: int = 0
    #: units of one key run in one ``--jobs`` process (None: anywhere); the long tier's
    #: units of one encoding share the workers that process starts for its adapters
    affinity: Any = None


@dataclass(frozen=True)
class UnitGroups:
    """A phase's units, made one group at a time when they are run.

    The units of a group share inputs only they need (every-token: one encoding's plan,
    its slices 105 MB for o200k_base); :func:`run_units` runs a group before the next is
    made, so one group's inputs are held, not every group's (issue 25). Iterating gives
    every unit, as a list of them would; ``named`` names them without making any."""

    #: how many units the groups hold, known before any is made (the progress bar's total)
    count: int
    groups: Callable[[], Iterator[Sequence[PhaseUnit]]]
    #: each group as its units' names and a maker of that group alone, before any group is
    #: made (None: only ``groups``): the pytest plugin names its items from the names and
    #: makes a group when one of its items runs, so collecting the suite makes none
    named: Callable[[], Iterator[tuple[Sequence[str], Callable[[], Sequence[PhaseUnit]]]]] | None = None

    def __iter__(self) -> Iterator[PhaseUnit]:
        for group in self.groups():
            yield from group

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True)
class Phase:
    """A named input phase.

    A phase that can say its units up front gives ``units``: ``tokconf run``, ``--jobs``
    and Dask run them (:func:`run_units`), the pytest plugin makes each an item, and
    ``finish`` (if any) turns the applied deltas into the phase's notes once every unit
    ran, whichever front door ran them. ``run`` is for phases that cannot (the built-in
    vocabulary, cases, corpus and generated phases, which the plugin cuts itself).
    """

    name: str
    #: runs the phase; returns False when it had nothing to do
    run: Callable[[RunContext], bool | None] | None = None
    #: the harness profile's stopwatch mark after it (None: counted in the next mark)
    mark: str | None = None
    #: take the mark when the plan leaves the phase out too (the profile's phases stay fixed)
    always_mark: bool = False
    #: the phase's units, in the order they merge (empty: nothing to do)
    units: Callable[[RunContext], Sequence[PhaseUnit] | UnitGroups] | None = None
    #: after every unit's delta is applied to the run's runner (``ctx.runner``): its notes
    finish: Callable[[RunContext], None] | None = None

    def __post_init__(self) -> None:
        if (self.run is None) == (self.units is None):
            raise ValueError(f"phase {self.name!r} needs exactly one of run= and units=")

    def execute(self, ctx: RunContext) -> bool:
        """Run the phase on ``ctx.runner`` (what ``tokconf run`` does); False: nothing to do."""
        if self.run is not None:
            return self.run(ctx) is not False
        return run_units(ctx, self)


def run_units(ctx: RunContext, phase: Phase) -> bool:
    """``phase``'s units on the run's executor, merged in unit order, then its ``finish``."""
    units = phase.units(ctx) if phase.units is not None else []
    if not len(units):
        return False
    runner = ctx.runner
    runner.phase = phase.name
    total = len(units)
    done = 0
    for group in units.groups() if isinstance(units, UnitGroups) else [units]:
        # consecutive units of one kind go to the executor together (it merges in their order)
        start = 0
        while start < len(group):
            end = start
            while end < len(group) and group[end].kind == group[start].kind:
                end += 1
            batch = group[start:end]
            runner.jobs.run(batch[0].kind, [u.task for u in batch],
                            progress=lambda n, base=done: runner.progress(phase.name, base + n, total),
                            weights=[u.weight for u in batch],
                            affinity=[(0, n) if u.affinity is None else (1, u.affinity) for n, u in enumerate(batch)])
            done += len(batch)
            start = end
        group = batch = None  # dropped before the next group is made
    if phase.finish is not None:
        phase.finish(ctx)
    return True


def _vocab(ctx: RunContext) -> None:
    ctx.runner.run_vocab()


def _every_token_units(ctx: RunContext) -> UnitGroups | list[PhaseUnit]:
    """Every ID of each reference through every adapter of its encoding (issue 20;
    harness/run/every_token.py): one unit per adapter (its encoding's every slice), the
    reference first, so a failing pytest item names the adapter; an encoding's units are
    one group, made when it runs. ci and nightly only: dev stays a quick look."""
    if ctx.profile == "dev":
        return []
    from harness.run.every_token import named_task_groups, unit_count

    runner = ctx.runner
    runner.phase = "every-token"

    def make(tasks: Callable[[], Sequence[tuple[str, Any]]]) -> list[PhaseUnit]:
        return [PhaseUnit(name, "every-token", task) for name, task in tasks()]

    def named() -> Iterator[tuple[Sequence[str], Callable[[], list[PhaseUnit]]]]:
        for names, tasks in named_task_groups(runner):
            yield names, functools.partial(make, tasks)

    def groups() -> Iterator[list[PhaseUnit]]:
        # nothing here holds a group once it is yielded: what ran is dropped before the
        # next plan is made
        for _, group in named():
            yield group()

    return UnitGroups(unit_count(runner.selected), groups, named)


def _cases(ctx: RunContext) -> None:
    ctx.runner.run_cases(ctx.cases)


def _everyday_units(ctx: RunContext) -> list[PhaseUnit]:
    """The everyday text (issue 20; harness/generate/everyday.py): its documents run as
    cases, so they shrink, judge and parallelise like them; a unit is up to 24 documents
    of one source, named by their provenance range (``prose#0-23``)."""
    from harness.generate.everyday import build, everyday_cases
    from harness.run.parallel import CASES_PER_TASK, chunked

    by_source: dict[str, list[Any]] = {}
    for case in everyday_cases(build(profile=ctx.profile)):
        by_source.setdefault(case.file.removeprefix("everyday:"), []).append(case)
    # a unit's weight is its characters: units differ tenfold and more (modules of the
    # standard library against emoji), and the adapters are the same for every unit
    return [PhaseUnit(f"{source}#{chunk[0].line - 1}-{chunk[-1].line - 1}", "cases",
                      (tuple(chunk), ctx.runner.vocab_for(chunk)), weight=sum(len(case.text) for case in chunk))
            for source, cases in by_source.items() for chunk in chunked(cases, CASES_PER_TASK)]


def _corpus(ctx: RunContext) -> bool:
    if ctx.corpus is None or not ctx.plan.corpus:
        return False  # no mark: the harness profile names a corpus phase only when one ran
    ctx.runner.phase = "corpus"
    ctx.corpus.run()
    return True


def _generated(ctx: RunContext) -> None:
    from harness.run.runner import GenerationOptions

    plan = ctx.plan
    ctx.runner.run_generated(GenerationOptions(profile=ctx.profile, seed=plan.seed, max_examples=plan.max_examples))


def _long_units(ctx: RunContext) -> list[PhaseUnit]:
    # long runs are generated inputs: off with the generated phase, whatever --long says
    if "generated" not in ctx.plan.phases:
        return []
    options = _long_options(ctx)
    if options is None:
        return []
    ctx.runner.phase = "long"
    from harness.run.long_tier import long_units

    calls = ctx.runner.selected.calls
    return [PhaseUnit(f"{calls[unit.reference].info.encoding}:{unit.kind}", "long", [unit],
                      weight=len(unit.adapters), affinity=unit.reference)
            for unit in long_units(ctx.runner, options)]


def _long_finish(ctx: RunContext) -> None:
    from harness.run.long_tier import finish_long

    options = _long_options(ctx)
    if options is not None:
        finish_long(ctx.runner, options)


def _long_options(ctx: RunContext) -> Any:
    """The tier's sizes with ``--long`` (or nightly); else the default run's 10^5-character
    inputs (``default_long``, on unless ``--no-default-long``); else None. Like every token,
    they go with the generated inputs (not under ``--no-generated``) and are not part of
    the ``dev`` profile's quick look."""
    from harness.generate.long_inputs import DEFAULT_LONG, LongOptions

    if ctx.long:
        return LongOptions(lengths=ctx.plan.long_sizes)
    if ctx.plan.default_long and ctx.profile != "dev" and "generated" in ctx.plan.phases:
        return DEFAULT_LONG
    return None


PHASES: dict[str, Phase] = {}


def register_phase(phase: Phase, *, before: str | None = None) -> None:
    """Add ``phase`` (at the end, or before the phase named ``before``)."""
    if phase.name in PHASES and PHASES[phase.name] != phase:
        raise ValueError(f"phase {phase.name!r} is registered twice")
    if before is None or before not in PHASES:
        PHASES[phase.name] = phase
        return
    items = list(PHASES.items())
    at = [name for name, _ in items].index(before)
    items.insert(at, (phase.name, phase))
    PHASES.clear()
    PHASES.update(items)


for _phase in (Phase("vocab", _vocab, "vocab", True), Phase("cases", _cases, "cases", True),
               Phase("corpus", _corpus, "corpus"),
               Phase("generated", _generated, "generated", True),
               # after the generated phase, as the pytest suite orders phases that say their
               # units: the steered inputs aim at the same coverage under both front doors
               Phase("every-token", mark="every-token", units=_every_token_units),
               Phase("everyday", mark="everyday", units=_everyday_units),
               Phase("long", mark="long", units=_long_units, finish=_long_finish)):
    register_phase(_phase)

def default_phases() -> tuple[str, ...]:
    """What a plan runs unless told otherwise: every phase registered so far, in order."""
    return tuple(PHASES)
