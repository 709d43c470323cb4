"""The conformance suite as the pytest plugin runs it: the plan's units, one item each.

A :class:`Suite` turns the plugin's options into the :class:`~harness.engine.plan.Plan`
``tokconf run`` would build from the same flags (:meth:`SuiteOptions.plan`), prepares it
as the engine does (:func:`harness.engine.execute.prepare`: the same cases, adapters and
references) and cuts it into the same units (:meth:`Suite.units`): one per adapter's
vocabulary check, one per case, one per slice of the generated pools (the very inputs
``tokconf run`` generates, not a generator of the plugin's own), the coverage-steered
inputs, then the units of every phase that says its own (:class:`~harness.engine.phases.PhaseUnit`:
every token, one per adapter; everyday text; the long inputs, one per encoding and kind).
An item runs its unit (:meth:`Suite.run`) and

- judges the unit's delta at once (:func:`harness.run.deltas.judge_delta` on a runner
  that already knows every documented divergence, from a pre-pass over the vocabulary
  checks and the documenting cases): documented, stale and unexpected records, the
  unexpected ones shrunk to their minimal input;
- hands the untouched delta to a second runner, in unit order: once every unit ran,
  that runner's result is the run's, and ``--tokconf-report`` writes it
  (:meth:`Suite.report`) with the engine's report writer. No second run.

A unit is run through the judge's :class:`~harness.run.parallel.Jobs`, so it is read from
the unit cache (:mod:`harness.run.unit_cache`) where ``tokconf run`` or an earlier session
kept it, and kept for the next (``--tokconf-no-cache``: asked). A case is a unit of its own
here and one of up to 24 in ``tokconf run``, so the two keep cases apart; every other unit
is the same unit with the same key.
"""

from __future__ import annotations

import copy
import datetime as _dt
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.cases.model import Case
from harness.checks.base import ORDINARY
from harness.engine.phases import PhaseUnit, UnitGroups
from harness.engine.plan import Executor, Limits, Outputs, Plan, PlanError
from harness.escapes import escape_text
from harness.generate.long_inputs import LONG_LENGTHS
from harness.run.choice import AdapterChoice
from harness.run.deltas import Delta, judge_delta
from harness.run.domain_tally import DomainTally
from harness.run.parallel import TEXTS_PER_TASK, chunked
from harness.run.plans import prepare_pools, steered_units, steers, units_of
from harness.run.result import DivergenceRecord
from harness.run.runner import Candidate, GenerationOptions, Runner
from harness.run.settle import DEFAULT_SHRINK_SECONDS

__all__ = ["Suite", "SuiteError", "SuiteOptions", "Unit", "describe_record"]


class SuiteError(Exception):
    """Bad options or inputs for the suite (a usage error for pytest)."""


@dataclass(frozen=True)
class SuiteOptions:
    impls: tuple[str, ...] = ()
    encodings: tuple[str, ...] = ()
    #: ``--tokconf-encoding-file``: a user's encodings described as data
    encoding_files: tuple[str, ...] = ()
    #: case files or folders; ``None`` = the shipped cases
    cases: tuple[str, ...] | None = None
    plugins: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    profile: str | None = None
    generated: bool = True
    #: the every-token phase (with the generated inputs; ``--tokconf-no-every-token``)
    every_token: bool = True
    #: the on-disk unit cache (``--tokconf-no-cache``: off)
    cache: bool = True
    #: the everyday-text phase (with the generated inputs; ``--tokconf-no-everyday``)
    everyday: bool = True
    #: processes for the pre-pass and the case items (``--tokconf-jobs``)
    jobs: int = 1
    #: ``auto`` (foreign adapters in workers), ``all`` or ``none``; the workers' limits
    isolate: str = "auto"
    timeout_s: float = 60.0
    memory_limit_mb: int | None = 4096
    #: the cases tagged long and the long tier too (also under the nightly profile)
    long: bool = False
    #: the lengths of the long tier
    long_sizes: tuple[int, ...] = LONG_LENGTHS
    #: the default run's long inputs (``--tokconf-no-default-long``: off, as ``tokconf run --no-default-long``)
    default_long: bool = True
    #: time bound of shrinking one finding (None: no bound)
    shrink_seconds: float | None = DEFAULT_SHRINK_SECONDS

    def plan(self) -> Plan:
        """The plan ``tokconf run`` builds from the same flags (the long tier aside: see docs/engine.md)."""
        choice = AdapterChoice.of(plugin=self.plugins, impl=self.impls, encoding=self.encodings,
                                  encoding_file=self.encoding_files,
                                  reference=self.references, isolate=self.isolate == "all",
                                  no_isolate=self.isolate == "none", timeout=self.timeout_s,
                                  memory_limit=self.memory_limit_mb or 0)
        # the plan's phases but the corpus (the plugin has no --corpus): the registered ones too
        # (and, as --no-generated does, no everyday text or every token without the generated inputs)
        left_out = {"corpus"} | (set() if self.generated else {"generated", "everyday", "every-token"}) \
            | (set() if self.every_token else {"every-token"}) | (set() if self.everyday else {"everyday"})
        phases = tuple(p for p in Plan().phases if p not in left_out)
        return Plan(adapters=choice, cases=self.cases, profile=self.profile, long=self.long, phases=phases,
                    long_sizes=self.long_sizes, default_long=self.default_long,
                    limits=Limits(shrink_seconds=self.shrink_seconds),
                    executor=Executor(jobs=self.jobs), cache=self.cache)


@dataclass(frozen=True)
class Unit:
    """One item's share of the plan: ``phase`` (vocab, every-token, cases, generated,
    steered, long), its
    task for :func:`harness.run.parallel.run_task`, and where it stands in the plan."""

    name: str
    phase: str
    index: int
    task: Any = None
    adapter: str | None = None
    case: Case | None = None


class _LazyGroup:
    """A phase's group of units (:attr:`UnitGroups.named`), made when one of its items runs
    and let go once each item has taken its unit: an encoding's every-token plan is held
    while its items run, not from collection to the end of the session (the suite held
    every encoding's at once: 520 MB, and 14 s to collect on a fresh cache)."""

    def __init__(self, make: Any, names: Any) -> None:
        self._make, self._names = make, tuple(names)
        self._made: dict[str, PhaseUnit] | None = None
        self._left: set[str] = set()

    def take(self, name: str) -> PhaseUnit:
        if self._made is None:  # first asked, or asked again after every item took its unit
            self._made = {unit.name: unit for unit in self._make()}
            if tuple(self._made) != self._names:
                raise RuntimeError(f"a group of units named {self._names} was made as {tuple(self._made)}")
            self._left = set(self._names)
        unit = self._made[name]
        self._left.discard(name)
        if not self._left:
            self._made = None
        return unit


@dataclass(frozen=True)
class _Member:
    """An item's unit in a :class:`_LazyGroup`, by name."""

    group: _LazyGroup
    name: str

    def take(self) -> PhaseUnit:
        return self.group.take(self.name)


class Suite:
    """Built lazily: collection needs the cases, adapters and pools, not the pre-pass."""

    def __init__(self, options: SuiteOptions) -> None:
        self.options = options
        try:
            self.plan = options.plan()
        except PlanError as exc:
            raise SuiteError(str(exc)) from exc
        #: the units run so far, in the order they ran (the report needs all, in plan order)
        self.ran: list[int] = []
        self.started = _dt.datetime.now(_dt.timezone.utc)

    @cached_property
    def _ready(self) -> Any:
        from harness.engine.execute import prepare

        try:
            ready = prepare(self.plan, require=False)  # an unavailable one is a failing item
        except PlanError as exc:
            raise SuiteError(str(exc)) from exc
        registry = ready.registry
        self.required = [*self.options.impls, *registry.plugin_names()]
        return ready

    @property
    def profile(self) -> str:
        return self._ready.profile

    @property
    def cases(self) -> list[Case]:
        return self._ready.cases

    @property
    def case_files(self) -> list[str]:
        return self._ready.case_files

    @property
    def selected(self) -> Any:
        return self._ready.selected

    def adapters(self) -> list[str]:
        return sorted(self.selected.calls)

    def missing(self) -> dict[str, str]:
        """Adapters asked for (``--tokconf-impl``, ``--tokconf-plugin``) that cannot run, with
        the reason: each becomes a failing item, so the suite is never silently green."""
        selected = self.selected  # loads the suite, which knows what was required
        out: dict[str, str] = {}
        for name in dict.fromkeys(self.required):
            calls = selected.add(name)
            if calls is None:
                row = selected.rows.get(selected.aliases.get(name, name))
                out[name] = row.reason if row and row.reason else "unavailable"
            elif not calls.info.encoding:
                out[name] = "claims no encoding (its `encoding` is empty): IDs cannot be compared"
        return out

    def unavailable(self) -> dict[str, str]:
        return {n: r.reason or "unavailable" for n, r in sorted(self.selected.rows.items()) if not r.available}

    def reference_of(self, name: str) -> str:
        return self.selected.references[self.selected.calls[name].info.encoding]

    def _runner(self, *, jobs: int = 1) -> Runner:
        runner = Runner(self.selected, jobs=jobs, shrink_seconds=self.plan.limits.shrink_seconds,
                        max_shrink_calls=self.plan.limits.max_shrink_calls)
        runner.profile = self.profile
        runner.unit_cache = self._unit_cache
        return runner

    @cached_property
    def _unit_cache(self) -> Any:
        """One cache for every runner of the suite: the report lists what all of them read."""
        from harness.run.unit_cache import UnitCache

        return UnitCache.open() if self.plan.cache else None

    # -- the units ------------------------------------------------------------------------

    @cached_property
    def collector(self) -> Runner:
        """The runner every unit's delta is applied to, in unit order: the run's result."""
        return self._runner()

    @cached_property
    def _pools(self) -> list[Any]:
        if "generated" not in self.plan.phases:
            return []
        options = GenerationOptions(profile=self.profile, seed=self.plan.seed, max_examples=self.plan.max_examples)
        return prepare_pools(self.collector, options)

    @cached_property
    def vocab_names(self) -> list[str]:
        return sorted(self.selected.calls)  # before a case adds its own reference, as in a run

    def units(self) -> list[Unit]:
        """The plan's units in the order ``tokconf run`` runs them."""
        if "_units" not in self.__dict__:
            units = [Unit(f"vocab[{n}]", "vocab", 0, [n], adapter=n) for n in self.vocab_names]
            self.collector.add_case_references(self.cases)
            for case in self.cases:
                units.append(Unit(case.id, "cases", 0, case=case))
            tasks = chunked(units_of(self._pools, self.collector.budgets), TEXTS_PER_TASK)
            count: dict[str, int] = {}
            for task in tasks:
                encoding = self.selected.calls[task[0][2]].info.encoding
                count[encoding] = count.get(encoding, 0) + 1
                units.append(Unit(f"generated[{encoding}]::{count[encoding]:03d}", "generated", 0, task))
            if self._pools and steers(self.profile):
                units.append(Unit("steered", "steered", 0))
            for phase in self._unit_phases():
                made = phase.units(self._context)
                if isinstance(made, UnitGroups) and made.named is not None:
                    for names, make in made.named():
                        group = _LazyGroup(make, names)
                        units += [Unit(f"{phase.name}[{n}]", phase.name, 0, _Member(group, n)) for n in names]
                else:
                    units += [Unit(f"{phase.name}[{u.name}]", phase.name, 0, u) for u in made]
            self.__dict__["_units"] = [replace(u, index=i) for i, u in enumerate(units)]
        return self.__dict__["_units"]

    def _unit_phases(self) -> list[Any]:
        """The plan's phases that say their units (the long tier, and phases registered later)."""
        from harness.engine.phases import PHASES

        return [p for name, p in PHASES.items() if name in self.plan.phases and p.units is not None]

    @cached_property
    def _context(self) -> Any:
        from harness.engine.phases import RunContext

        return RunContext(plan=self.plan, runner=self.collector, cases=self.cases, profile=self.profile)

    def case_label(self, case: Case) -> str:
        """A case's file relative to the cases folder it came from (never an install path)."""
        path = Path(case.file).resolve()
        for root in self.plan.case_paths():
            root = Path(root).resolve()
            if root == path:
                return path.name
            if root.is_dir() and path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return f"{path.parent.name}/{path.name}"

    # -- running and judging ------------------------------------------------------------

    @cached_property
    def judge(self) -> Runner:
        """A runner that knows every documented kind and the vocabulary findings."""
        scout = self._runner(jobs=self.options.jobs)
        deltas = scout.jobs.deltas("vocab", [[name] for name in self.vocab_names])
        self._vocab_deltas = {name: delta for name, delta in zip(self.vocab_names, deltas)}
        for delta in deltas:
            scout.apply(copy.deepcopy(delta))
        scout.run_cases([case for case in self.cases if case.documented])
        scout.jobs.close()
        judge = self._runner(jobs=self.options.jobs)
        judge.documentation = scout.documentation
        judge.vocab_findings = scout.vocab_findings
        return judge

    @cached_property
    def _case_deltas(self) -> dict[str, Delta]:
        """With --tokconf-jobs N: every case run ahead in parallel, judged item by item."""
        judge = self.judge
        deltas = judge.jobs.deltas("cases", [((case,), judge.vocab_for([case])) for case in self.cases])
        return {case.id: delta for case, delta in zip(self.cases, deltas)}

    def _deltas(self, unit: Unit) -> list[Delta]:
        judge = self.judge
        if unit.phase == "vocab":
            return [self._vocab_deltas[unit.adapter]]
        if unit.phase == "cases":
            if self.options.jobs > 1 and unit.case.id in self._case_deltas:
                return [self._case_deltas.pop(unit.case.id)]
            return judge.jobs.deltas("cases", [((unit.case,), judge.vocab_for([unit.case]))])
        if unit.phase == "generated":
            return judge.jobs.deltas("generated", [unit.task])
        task = unit.task.take() if isinstance(unit.task, _Member) else unit.task
        if isinstance(task, PhaseUnit):
            return judge.jobs.deltas(task.kind, [task.task])
        # steered: aimed at what the references have not produced so far, from the
        # coverage of every unit applied before this one (all of them, in a whole run)
        collector = self.collector
        tasks, steered = steered_units(self._pools, collector.budgets, collector.coverage.steer,
                                       seed=collector.seed)
        deltas = judge.jobs.deltas("generated", chunked(tasks, TEXTS_PER_TASK))
        self._steered = steered
        return deltas

    def run(self, unit: Unit) -> list[DivergenceRecord]:
        """Run ``unit``; its documented, stale and unexpected records (unexpected ones shrunk)."""
        judge = self.judge
        records: list[DivergenceRecord] = []
        for delta in self._deltas(unit):
            judged = _for_judging(delta)
            self.collector.apply(delta)
            if unit.phase == "vocab":
                reference = self.reference_of(unit.adapter)
                found = judged.vocab_findings.get(unit.adapter, [])
                records += judge.settle([Candidate(f, ORDINARY, reference, "generated", None) for f in found])
            else:
                records += judge_delta(judge, judged)
        if unit.phase == "steered":
            for reference, inputs in self._steered:
                self.collector.coverage.steered(reference, inputs.texts, inputs.targeted)
        self.ran.append(unit.index)
        return records

    def report(self, target: str, *, argv: tuple[str, ...]) -> str:
        """Write the run's report from the units' deltas (every unit must have run, in order)."""
        from harness.engine.execute import limits_of, write_reports

        expected = [u.index for u in self.units()]
        if self.ran != expected:
            return (f"not written: {len(self.ran)} of the plan's {len(expected)} units ran"
                    + ("" if set(self.ran) == set(expected) else " (some were deselected)")
                    + "; the report is the whole plan's, so run every tokconf item, in order")
        collector = self.collector
        for phase in self._unit_phases():
            if phase.finish is not None and any(u.phase == phase.name for u in self.units()):
                phase.finish(self._context)
        result = collector.finish()
        finished = _dt.datetime.now(_dt.timezone.utc)
        plan = replace(self.plan, outputs=Outputs(out=target, argv=argv))
        limits = limits_of(result, collector, self._ready.isolation, shrink_seconds=plan.limits.shrink_seconds)
        data, folder, latest = write_reports(result, plan=plan, started=self.started, finished=finished,
                                             case_files=self.case_files, limits=limits, cache=self._unit_cache)
        from harness.report.verdict import verdict_of

        return f"{(latest or folder) / 'parity.json'} (exit {verdict_of(data).exit_code})"

    def close(self) -> None:
        """End the --tokconf-jobs processes and the workers, and let go of what the items
        built (adapters, pools, outcomes). The plugin closes a suite after its last item in
        this process, so the session's other tests do not run beside it; an item run later
        builds it again."""
        if "judge" in self.__dict__:
            self.judge.jobs.close()
        if "_ready" in self.__dict__:
            self.selected.close()
        cached = [name for name, attr in vars(Suite).items() if isinstance(attr, cached_property)]
        for name in (*cached, "_units", "_vocab_deltas", "_steered"):  # the rest are set as items run
            self.__dict__.pop(name, None)
        self.ran.clear()  # a report from what is built again would lack the units run before


def _for_judging(delta: Delta) -> Delta:
    """A copy of what judging ``delta`` reads and changes: its records, pending findings,
    absorbers and cells (settling shrinks an input, sets a status; the collector must get
    them untouched). Every input's outcomes and the coverage are the collector's alone and
    the judge never reads them: copying them was 10.7 s of the conformance file's 464 s
    (py-spy, session 30), and the judge held a second copy of the run's outcome log."""
    return copy.deepcopy(replace(delta, inputs={}, coverage={}, long_reach={}, packed_inputs=b"",
                                 out_of_domain=DomainTally()))


def describe_record(record: DivergenceRecord) -> str:
    """A failure message: the minimal input, both outcomes, the pieces, the reproduce command."""
    evidence = record.evidence
    lines = [
        f"{record.status} divergence: {record.adapter} / {record.check} [{record.kind}]"
        + (f" (case {record.case})" if record.case else f" ({record.origin} input)"),
        f"  {record.detail}",
        f"  minimal input: '{escape_text(record.text)}'",
    ]
    if record.reason:
        lines.append(f"  documented reason: {record.reason}")
        lines.append(f"  source: {record.doc_source}")
    width = max([len(label) for label in evidence.outcomes] + [1])
    for label, outcome in evidence.outcomes.items():
        lines.append(f"  {label:<{width}}  {outcome.describe()}")
        if label in evidence.pieces:
            lines.append(f"  {'':<{width}}  |" + "|".join(p if p is not None else "?" for p in evidence.pieces[label]) + "|")
    for label, pieces in evidence.pieces.items():
        if label not in evidence.outcomes:
            lines.append(f"  {label:<{width}}  |" + "|".join(p if p is not None else "?" for p in pieces) + "|")
    if evidence.first_difference is not None:
        lines.append(f"  first differing ID at index {evidence.first_difference}")
    if evidence.first_differing_chunk is not None:
        lines.append(f"  first differing pre-token chunk: '{escape_text(evidence.first_differing_chunk)}'")
    for name, rounds in evidence.traces.items():
        shown = ", ".join(f"{r['pair']}@{r['rank']}" for r in rounds[:12])
        lines.append(f"  trace {name}: {shown}{' ...' if len(rounds) > 12 else ''}")
    lines.append(f"  reproduce: {evidence.reproduce}")
    if evidence.snippet:
        lines.append("  without tokconf:")
        lines += [f"    {line}" for line in evidence.snippet.split("\n")]
    return "\n".join(lines)

