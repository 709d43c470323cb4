"""A run as one frozen value: what ``tokconf run``, the pytest plugin and the Python API build.

A :class:`Plan` says everything a run does: the adapters (:class:`~harness.run.choice.AdapterChoice`),
the input phases in order (:func:`harness.engine.phases.default_phases`), the cases, the
generated inputs' profile, seed and size, the corpus, the limits, the executor and the
outputs. The front doors (:mod:`harness.cli.run_cmd`, :mod:`harness.pytest.plugin`) build
one from their options and stop there; :func:`harness.engine.execute.execute` runs it. The
engine never sees an ``argparse`` namespace or a pytest config.

(The pools of the generated phase are planned in :mod:`harness.run.plans`: a different,
smaller plan, of one phase's inputs.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.cases.corpus import CorpusOptions
from harness.generate.long_inputs import LONG_LENGTHS
from harness.run.choice import AdapterChoice

__all__ = ["Executor", "Limits", "Outputs", "Plan", "PlanError"]


class PlanError(ValueError):
    """A plan that cannot run: a bad value, a case file that does not load (exit 2)."""


@dataclass(frozen=True)
class Limits:
    #: seconds the shrinker may spend on one finding (None: no bound)
    shrink_seconds: float | None = 60.0
    #: adapter calls the shrinker may make on one finding
    max_shrink_calls: int = 1500


@dataclass(frozen=True)
class Executor:
    """Where units run: ``local`` (this process, or ``jobs`` forked processes) or ``dask``
    (an embedded cluster of ``jobs`` workers, or ``scheduler``'s). The report is the same."""

    kind: Literal["local", "dask"] = "local"
    jobs: int = 1
    scheduler: str | None = None
    #: corpus documents per Dask shard (None: the default)
    shard_size: int | None = None
    #: a Dask run's folder to complete (``--resume``)
    resume: str | None = None


@dataclass(frozen=True)
class Outputs:
    #: the reports folder: ``<out>/<run>/parity.json``, ``parity.html``, ``<out>/latest``
    out: str = "reports"
    #: where unexpected minimal inputs are written as YAML cases (None: not written)
    save_new_cases: str | None = None
    #: (measure, fraction) minimums of ``--min-coverage``
    min_coverage: tuple[tuple[str, float], ...] = ()
    #: time each part of the harness and write harness-profile.json
    profile_harness: bool = False
    #: the command line the report cites (``tokconf run ...``)
    argv: tuple[str, ...] = ("tokconf", "run")
    #: each ``--ladder``: (library, its releases oldest first, (adapter, release) pairs);
    #: parity.json's ``ladders`` folds the rungs' divergences across them
    ladders: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], ...] = ()


def _default_phases() -> tuple[str, ...]:
    from harness.engine.phases import default_phases

    return default_phases()


@dataclass(frozen=True)
class Plan:
    """One run. Build it with keywords; every field has the default ``tokconf run`` uses."""

    adapters: AdapterChoice = field(default_factory=AdapterChoice)
    #: case files or folders; None: the shipped cases; ``()``: no cases
    cases: tuple[str, ...] | None = None
    #: the input phases, in order (names of :data:`harness.engine.phases.PHASES`)
    phases: tuple[str, ...] = field(default_factory=lambda: _default_phases())
    #: hypothesis profile of the generated inputs (None: $HYPOTHESIS_PROFILE or ci)
    profile: str | None = None
    seed: int | None = None
    max_examples: int | None = None
    #: the long tier and the cases tagged long (also on under the nightly profile)
    long: bool = False
    #: the lengths the long tier climbs (every kind of input at each)
    long_sizes: tuple[int, ...] = LONG_LENGTHS
    #: the default run's long inputs (10^5 characters per class,
    #: :data:`harness.generate.long_inputs.DEFAULT_LONG`) when the long tier is off: with
    #: the generated inputs, under the ci profile
    default_long: bool = True
    corpus: tuple[str, ...] = ()
    corpus_options: CorpusOptions = field(default_factory=CorpusOptions)
    limits: Limits = field(default_factory=Limits)
    executor: Executor = field(default_factory=Executor)
    outputs: Outputs = field(default_factory=Outputs)
    #: read unchanged adapters' units from the on-disk cache and keep new ones
    #: (:mod:`harness.run.unit_cache`; ``--no-cache``: ask everything)
    cache: bool = True

    def __post_init__(self) -> None:
        from harness.engine.phases import PHASES

        unknown = [p for p in self.phases if p not in PHASES]
        if unknown:
            raise PlanError(f"unknown phase(s) {', '.join(unknown)}; phases: {', '.join(PHASES)}")
        if not self.long_sizes or min(self.long_sizes) < 1 or list(self.long_sizes) != sorted(set(self.long_sizes)):
            raise PlanError(f"--long-sizes must be positive lengths in ascending order, got {self.long_sizes}")
        if self.max_examples is not None and self.max_examples < 1:
            raise PlanError(f"--max-examples must be at least 1, got {self.max_examples}")
        if self.limits.shrink_seconds is not None and self.limits.shrink_seconds < 0:
            raise PlanError(f"--shrink-seconds must be 0 (no bound) or more, got {self.limits.shrink_seconds:g}")
        if self.executor.jobs < 1:
            raise PlanError(f"--jobs must be at least 1, got {self.executor.jobs}")
        if self.executor.shard_size is not None and self.executor.shard_size < 1:
            raise PlanError(f"--shard-size must be at least 1 document, got {self.executor.shard_size}")

    @property
    def generated(self) -> bool:
        return "generated" in self.phases

    def case_paths(self) -> list[Path | str]:
        from harness.cases.loader import default_cases_dir

        return [default_cases_dir()] if self.cases is None else list(self.cases)

    def describe(self) -> dict[str, Any]:
        """The plan as plain data (what a reader or a test compares)."""
        from dataclasses import asdict

        return asdict(self)
