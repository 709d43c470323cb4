"""The input phases of a run, by name, in the order a plan runs them.

A phase is a named input builder: given the run's context it hands its inputs to the
runner as units (:mod:`harness.run.parallel`), which the plan's executor runs wherever it
runs units. Phases run in the order registered here; ``Plan.phases`` chooses which. A
new phase (every token, everyday text,
...) is one :func:`register_phase` call in the module that builds its inputs, and the
CLI, the pytest plugin and Dask run it with the others, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["DEFAULT_PHASES", "PHASES", "Phase", "RunContext", "register_phase"]


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
class Phase:
    name: str
    #: runs the phase; returns False when it had nothing to do
    run: Callable[[RunContext], bool | None]
    #: the harness profile's stopwatch mark after it (None: counted in the next mark)
    mark: str | None = None
    #: take the mark when the plan leaves the phase out too (the profile's phases stay fixed)
    always_mark: bool = False


def _vocab(ctx: RunContext) -> None:
    ctx.runner.run_vocab()


def _every_token(ctx: RunContext) -> bool:
    # ci and nightly: every ID (vocab coverage 100 %); dev stays a quick look
    if ctx.profile == "dev":
        return False
    from harness.run.every_token import run_phase

    run_phase(ctx.runner)
    return True


def _cases(ctx: RunContext) -> None:
    ctx.runner.run_cases(ctx.cases)


def _corpus(ctx: RunContext) -> None:
    ctx.runner.phase = "corpus"
    if ctx.corpus is not None:
        ctx.corpus.run()


def _generated(ctx: RunContext) -> None:
    from harness.run.runner import GenerationOptions

    plan = ctx.plan
    ctx.runner.run_generated(GenerationOptions(profile=ctx.profile, seed=plan.seed, max_examples=plan.max_examples))


def _long(ctx: RunContext) -> bool:
    # long runs are generated inputs: off with the generated phase, whatever --long says
    if "generated" not in ctx.plan.phases:
        return False
    if ctx.long:
        ctx.runner.run_long()
    elif ctx.plan.default_long:
        from harness.generate.long_inputs import DEFAULT_LONG

        ctx.runner.run_long(DEFAULT_LONG)  # 10^5 characters per class
    else:
        return False
    return True


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


for _phase in (Phase("vocab", _vocab, "vocab", True), Phase("every-token", _every_token, "every-token"),
               Phase("cases", _cases, "cases", True), Phase("corpus", _corpus),
               Phase("generated", _generated, "generated", True), Phase("long", _long, "long")):
    register_phase(_phase)

#: what a plan runs unless told otherwise
DEFAULT_PHASES: tuple[str, ...] = tuple(PHASES)
