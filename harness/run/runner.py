"""The differential run: cases and generated inputs through every check, judged and shrunk.

Flow (``tokconf run`` calls the phases in order; the pytest plugin uses the pieces):

1. **vocab-consistency** once per adapter (:mod:`harness.checks.vocab`).
2. **cases**: each case runs on the adapters it applies to, each compared with the
   reference of its encoding (or the case's own ``reference``), through every text check.
3. **generated**: per encoding, a deterministic pool of hostile texts
   (:func:`harness.generate.strategies.hostile_text` with the special literals of that
   encoding's adapters; a closed vocabulary gets text from its alphabet) under the
   ``ordinary`` policy, built by :mod:`harness.generate.pools` (atoms, inputs from the
   group's split patterns, mixtures, long pieces; then coverage-steered inputs). An
   adapter takes the whole pool (``max_examples`` plus the fixed sets) unless it
   declares a smaller share (:func:`harness.generate.budget.pool_budget`): never timed,
   so the plan does not depend on the machine's speed. Every input an
   adapter was checked on feeds :class:`harness.run.coverage.Collector`.
4. **judging by input** (:mod:`harness.run.settle`, :mod:`harness.run.judging`):

   - a case that *documents* the (adapter, check) and the check finds a difference:
     **documented** (passes); the case documents it but nothing differs: **stale**
     (fails, like a strict xfail);
   - every other finding is shrunk first, then judged on its minimal input: it counts
     under a documented divergence of the same adapter and (check, kind) only if that
     input is the documented case's own input or lies in the input domain the case
     declares; otherwise it is **unexpected** (fails). Adapter-level declarations
     (``declared:<policy>``) stay adapter-wide. Generated inputs never create
     documented or stale entries themselves;
   - an input outside a closed vocabulary's domain is not checked (unless a case
     documents a divergence on it); the notes count them (:mod:`harness.run.domain_tally`).

5. **grouping and evidence**: unexpected findings of one adapter that shrink to the same
   input are one divergence with several symptoms; distinct minimal inputs stay distinct
   divergences. Each gets its evidence (:mod:`harness.run.evidence`).

Adapter calls go through :class:`harness.calls.Calls` (pure data in and out), so one
adapter's failure is an Outcome, never an exception that stops the run.

Phases are cut into units, and shrinking into independent shrinks, that
:class:`harness.run.parallel.Jobs` runs in this process, over ``--jobs N`` forked
processes or on Dask (:meth:`Runner.use_executor`). A unit runs on :meth:`Runner.fresh`
and hands back a :class:`~harness.run.deltas.Delta`; :meth:`Runner.apply` merges deltas
in unit order, so the result is the same either way. That, with :attr:`Runner.pending`
and :meth:`Runner.settle`, is the runner's public contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from harness.calls import Calls
from harness.cases.model import CHECKS, Case, DocumentedDivergence, Policy
from harness.cases.match import case_applies_to, documented_for, documenting
from harness.checks.base import AGREE, ORDINARY, SKIP, UNSUPPORTED, Finding, Result, Subject, declared_policy
from harness.checks import TEXT_CHECKS, run_text_check
from harness.run.deltas import fresh, merge, shared
from harness.run.domain_tally import DomainTally
from harness.run.evidence import gather
from harness.run.ids import assign_ids
from harness.run.judging import Documentation
from harness.run.long_tier import finish_long, long_units
from harness.run.parallel import CASES_PER_TASK, TEXTS_PER_TASK, GeneratedUnit, Jobs, chunked, generated_weight
from harness.run.result import Cell, DivergenceRecord, RunResult
from harness.run.selection import Selected, SelectionError
from harness.run.settle import DEFAULT_SHRINK_SECONDS, Candidate, Settler
from harness.generate.long_inputs import LongOptions
from harness.generate.strategies import resolve_profile
from harness.run.coverage import Collector
from harness.run.choice import case_adapter_names  # re-exported: the plugin and older callers import it here
from harness.run.plans import prepare_pools, steered_units, steers, units_of
from harness.run.screen import ran_every_check, text_check_results

__all__ = ["GENERATED_CHECKS", "Candidate", "GenerationOptions", "Runner", "case_adapter_names"]

ProgressFn = Callable[[str, int, int], None]

#: Text checks that apply to generated inputs (``expected`` needs a case).
GENERATED_CHECKS: tuple[str, ...] = tuple(c for c in TEXT_CHECKS if c != "expected")


@dataclass(frozen=True)
class GenerationOptions:
    profile: str | None = None
    seed: int | None = None
    max_examples: int | None = None


class Runner:
    """Fills the matrix; ``finish`` shrinks, gathers evidence and returns the result."""

    generated_checks = GENERATED_CHECKS

    def __init__(self, selected: Selected, *, progress: ProgressFn | None = None, max_shrink_calls: int = 1500,
                 jobs: int = 1, shrink_seconds: float | None = DEFAULT_SHRINK_SECONDS) -> None:
        self.selected = selected
        self.progress = progress or (lambda phase, done, total: None)
        self.max_shrink_calls = max_shrink_calls
        #: seconds the shrinker may spend on one finding (``--shrink-seconds``; None: no bound)
        self.shrink_seconds = shrink_seconds
        self.jobs = Jobs(self, jobs)
        #: the on-disk cache of unit results (harness.run.unit_cache; None: ask everything)
        self.unit_cache: Any = None
        #: shrinks elsewhere than ``--jobs`` (a Dask executor's :meth:`shrink_many`)
        self.shrink_many: Callable | None = None
        self.matrix: dict[str, dict[str, Cell]] = {}
        self.records: list[DivergenceRecord] = []
        self.documentation = Documentation()
        self._settler: Settler | None = None
        #: findings not judged yet (:meth:`settle` judges them)
        self.pending: list[Candidate] = []
        self.vocab_findings: dict[str, list[Finding]] = {}
        self.budgets: dict[str, int] = {}
        #: adapter -> its declared share of the generated pool (generate.budget.declared_share)
        self.shares: dict[str, dict[str, int]] = {}
        self.notes: list[str] = list(selected.notes)
        #: (text, policy) -> {"origin", "case", "outcomes": {adapter: encode Outcome}}: what
        #: each adapter answered on each input, so ``tokconf diff`` can compare runs input by input
        self.inputs: dict[tuple[str, Policy], dict] = {}
        #: while the corpus phase runs, where its inputs' outcomes go instead of ``inputs``
        #: (harness.report.outcome_spool: the client's memory does not grow with the corpus)
        self.spool: Any = None
        self.generated = False
        self.profile = resolve_profile(None)
        self.seed: int | None = None
        self.max_examples = 0
        #: the phase running (vocab, cases, generated, long, shrink): where an interrupted run stopped
        self.phase = "start"
        self.incomplete: dict[str, str] | None = None
        #: adapter -> long-input kind -> the largest length checked (``run_long``)
        self.long_reach: dict[str, dict[str, int]] = {}
        #: adapter -> the long_limit it declares (:mod:`harness.run.long_tier`)
        self.long_declared: dict[str, int] = {}
        self.coverage = Collector(reference_pattern=self._reference_pattern)
        self.out_of_domain = DomainTally()  #: inputs outside each closed vocabulary's domain

    def fresh(self) -> "Runner":
        """A copy with empty state of its own (adapters shared): what a unit runs on."""
        sub = fresh(self)
        sub._settler = None  # a settler of its own, made when it first settles
        return sub

    def apply(self, delta: Any) -> None:
        """Merge a unit's :class:`~harness.run.deltas.Delta` (in unit order: repeatable runs)."""
        merge(self, delta)

    def use_executor(self, executor: Any) -> None:
        """Run units and shrinks on ``executor`` (a Dask client: :mod:`harness.scale.executor`),
        or again on this runner's own ``--jobs`` processes (None)."""
        self.shrink_many = executor.shrink_many if executor is not None else None
        self.jobs.backend = executor.units if executor is not None else None

    def _reference_pattern(self, encoding: str) -> str | None:
        name = self.selected.references.get(encoding)
        return self.selected.calls[name].info.split_pattern if name in self.selected.calls else None

    # -- bookkeeping ---------------------------------------------------------------------

    def cell(self, adapter: str, check: str) -> Cell:
        if adapter not in self.matrix:
            row = self.selected.rows.get(adapter)
            available = row.available if row else True
            self.matrix[adapter] = {c: Cell(unavailable=not available) for c in CHECKS}
        return self.matrix[adapter][check]

    def record(self, finding: Finding, adapter: Calls, reference: Calls, *, status: str, origin: str,
                case: str | None, doc: DocumentedDivergence | None = None, extra: dict | None = None) -> DivergenceRecord:
        record = DivergenceRecord(
            adapter=adapter.name, reference=None if adapter is reference else reference.name,
            check=finding.check, encoding=adapter.info.encoding, status=status,  # type: ignore[arg-type]
            origin=origin, case=case, reason=doc.reason if doc else None,  # type: ignore[arg-type]
            doc_source=doc.source if doc else None, text=finding.text, kind=finding.kind,
            detail=finding.detail, evidence=gather(finding, adapter, reference, extra_outcomes=extra),
            policy=finding.policy, domain=doc.domain if doc else None,
        )
        self.records.append(record)
        self.cell(adapter.name, finding.check).divergences.append(record)
        return record

    # -- phase 1: vocabulary -------------------------------------------------------------

    def run_vocab(self) -> None:
        self.phase = "vocab"
        names = sorted(self.selected.calls)
        self.jobs.run("vocab", [[name] for name in names], progress=lambda n: self.progress("vocab", n, len(names)))

    # -- phase 2: cases ------------------------------------------------------------------

    def run_cases(self, cases: list[Case]) -> None:
        self.phase = "cases"
        self.add_case_references(cases)  # built here, before any --jobs process forks
        tasks = [(chunk, self.vocab_for(chunk)) for chunk in chunked(cases, CASES_PER_TASK)]
        total = len(cases)
        self.jobs.run("cases", tasks,
                      progress=lambda n: self.progress("cases", min(total, n * CASES_PER_TASK), total))

    def add_case_references(self, cases: Iterable[Case]) -> None:
        """Build the cases' own references now: a case runs on every adapter it applies to,
        and one added later would miss the cases before it."""
        for case in cases:
            if case.reference:
                self._case_reference(case)

    def vocab_for(self, cases: Iterable[Case]) -> dict[str, list[Finding]]:
        """The vocabulary findings ``cases`` judge (matched as :meth:`_run_pair` matches): what a
        cases task carries to a process forked before they were found, and its cache key."""
        likes = {name: self.selected.calls[name].info.declares_like for name in self.vocab_findings}
        return {name: self.vocab_findings[name] for name in documenting(cases, "vocab-consistency", likes)}

    def case_pairs(self, case: Case) -> list[tuple[Calls, Calls]]:
        """(adapter, reference) pairs a case runs on; empty if its reference is unavailable."""
        own_reference = None
        if case.reference:
            own_reference = self._case_reference(case)
            if own_reference is None:
                return []
        pairs = []
        for name in sorted(self.selected.calls):
            adapter = self.selected.calls[name]
            encoding = adapter.info.encoding
            if not case_applies_to(case, name, encoding, adapter.info.declares_like):
                continue
            if own_reference is not None and own_reference.info.encoding == encoding:
                pairs.append((adapter, own_reference))
            else:
                pairs.append((adapter, self.selected.reference_for(encoding)))
        return pairs

    def _case_reference(self, case: Case) -> Calls | None:
        """The case's own reference, if it can take part in this run."""
        wanted = case.reference or ""
        calls = self.selected.calls.get(self.selected.aliases.get(wanted, wanted))
        if calls is not None:
            return calls
        if not any(case_applies_to(case, n, c.info.encoding, c.info.declares_like) for n, c in self.selected.calls.items()):
            return None  # none of its adapters is in this run (--impl, --encoding)
        try:
            calls = self.selected.add(wanted)
        except SelectionError as exc:
            calls, reason = None, str(exc)
        else:
            reason = self.selected.rows.get(wanted, None) and self.selected.rows[wanted].reason
        if calls is None:
            note = f"case {case.id}: its reference {wanted} is unavailable ({reason}); skipped"
            if note not in self.notes:
                self.notes.append(note)
        return calls

    def run_case(self, case: Case) -> None:
        pairs = self.case_pairs(case)
        for calls in {c for pair in pairs for c in pair}:
            calls.reset()
        for adapter, reference in pairs:
            self._run_pair(case, adapter, reference)

    def _note_input(self, text: str, policy: Policy, adapter: Calls, origin: str, case: str | None) -> None:
        entry = self.inputs.setdefault((text, policy), {"origin": origin, "case": case, "outcomes": {}})
        outcomes = entry["outcomes"]
        # memoised: the checks asked it; shared: one object for the adapters that agree, so
        # a unit's pickled delta holds a long input's IDs once, not once per adapter
        outcomes[adapter.name] = shared(outcomes, adapter.encode(text, policy))

    def _run_pair(self, case: Case, adapter: Calls, reference: Calls) -> None:
        self._note_input(case.text, case.policy, adapter, "case", case.id)
        in_domain = self.out_of_domain.inside(adapter, reference, case.text)
        for check, result in (results := text_check_results(case, Subject(case.text, case.policy, adapter, reference, case))):
            self._judge_case(case, adapter, reference, check, result, in_domain)
        self.coverage.observe(case.text, adapter, case.policy, split=ran_every_check(results))
        doc = documented_for(case, adapter.name, "vocab-consistency", adapter.info.declares_like)
        if doc is not None:
            self._judge_case_vocab(case, adapter, reference, doc)

    def _judge_case(self, case: Case, adapter: Calls, reference: Calls, check: str, result: Result,
                    in_domain: bool) -> None:
        doc = documented_for(case, adapter.name, check, adapter.info.declares_like)
        cell = self.cell(adapter.name, check)
        if isinstance(result, Finding):
            # each kind seen is judged on its own, so a second symptom never hides the first (issue 22)
            parts = result.each_kind()
            matched = [p for p in parts if doc is not None and doc.accepts(p.kind)]
            cell.inputs += int(bool(matched) or in_domain)
            for n, part in enumerate(matched):  # one record; every kind the entry lists explains its domain
                record = self.record(part, adapter, reference, status="documented", origin="case", case=case.id,
                                     doc=doc) if n == 0 else None
                self.documentation.add(adapter.name, check, part.kind, case.text, domain=doc.domain, record=record)
            if in_domain:
                self.pending += [Candidate(p, case.policy, reference.name, "case", case.id) for p in parts if p not in matched]
            if doc is not None and not matched:  # it declared another kind: that one did not reproduce
                self._record_stale(case, adapter, reference, check, doc, result)
            return
        if result == UNSUPPORTED:
            cell.unsupported += 1
        elif result == AGREE and in_domain:
            cell.inputs += 1
        if doc is not None:
            self._record_stale(case, adapter, reference, check, doc, result)

    def _judge_case_vocab(self, case: Case, adapter: Calls, reference: Calls, doc: DocumentedDivergence) -> None:
        findings = self.vocab_findings.get(adapter.name, [])
        if not findings:
            self._record_stale(case, adapter, reference, "vocab-consistency", doc, AGREE)
            return
        matching = [f for f in findings if doc.accepts(f.kind)]
        if not matching:
            self._record_stale(case, adapter, reference, "vocab-consistency", doc, AGREE)
            return
        record = self.record(matching[0], adapter, reference, status="documented", origin="case", case=case.id, doc=doc)
        for finding in matching:  # a vocabulary quirk: the tokens it shows on are its domain
            self.documentation.add(adapter.name, "vocab-consistency", finding.kind, finding.text,
                                   domain=doc.domain, record=record)

    def _record_stale(self, case: Case, adapter: Calls, reference: Calls, check: str,
                      doc: DocumentedDivergence, result: Result) -> None:
        why = {AGREE: "the check agreed", SKIP: "the check did not apply to this input",
               UNSUPPORTED: "the adapter does not support what the check needs"}.get(result, str(result))
        mine = adapter.encode(case.text, case.policy)
        theirs = reference.encode(case.text, declared_policy(case.policy, adapter.info.capabilities.special_policy))
        shown = [(adapter.name, mine)] + ([] if adapter is reference else [(reference.name, theirs)])
        finding = Finding(adapter.name, check, "not-reproduced",
                          f"documented divergence did not reproduce: {why}", case.text, policy=case.policy,
                          outcomes=tuple(shown), ids=tuple((n, o.value) for n, o in shown if o.is_ok))
        self.record(finding, adapter, reference, status="stale", origin="case", case=case.id, doc=doc)

    # -- phase 3: generated --------------------------------------------------------------

    def run_generated(self, options: GenerationOptions = GenerationOptions()) -> None:
        self.phase = "generated"
        plans = prepare_pools(self, options)
        self._run_generated_units("generated", units_of(plans, self.budgets))
        if steers(self.profile):
            # once every pool has run: they aim at tokens the references have not produced
            units, steered = steered_units(plans, self.budgets, self.coverage.steer, seed=self.seed)
            self._run_generated_units("steered", units)
            for reference, inputs in steered:
                self.coverage.steered(reference, inputs.texts, inputs.targeted)

    def _run_generated_units(self, phase: str, units: list[GeneratedUnit]) -> None:
        tasks = chunked(units, TEXTS_PER_TASK)
        counts, total = [sum(len(u[1]) for u in task) for task in tasks], sum(len(u[1]) for u in units)
        self.jobs.run("generated", tasks, progress=lambda n: self.progress(phase, sum(counts[:n]), total),
                      weights=[generated_weight(task) for task in tasks])

    def run_generated_input(self, text: str, adapter: Calls, reference: Calls, *, trace: bool = False,
                            checks: Sequence[str] | None = None) -> None:
        """``text`` through ``checks`` (default: every generated check) on ``adapter``."""
        if not self.out_of_domain.inside(adapter, reference, text):
            return
        self._note_input(text, ORDINARY, adapter, "generated", None)
        for check in GENERATED_CHECKS if checks is None else checks:
            result = run_text_check(check, Subject(text, ORDINARY, adapter, reference))
            cell = self.cell(adapter.name, check)
            if result == UNSUPPORTED:
                cell.unsupported += 1
            elif result == AGREE:
                cell.inputs += 1
            elif isinstance(result, Finding):
                cell.inputs += 1
                self.pending += [Candidate(p, ORDINARY, reference.name, "generated", None) for p in result.each_kind()]
        self.coverage.observe(text, adapter, ORDINARY, trace=trace)

    def run_long(self, options: LongOptions = LongOptions()) -> None:
        """The long tier (:mod:`harness.run.long_tier`): every size on every adapter, under the timeout."""
        self.phase = "long"
        units = long_units(self, options)
        self.jobs.run("long", [[u] for u in units], progress=lambda n: self.progress("long", n, len(units)))
        finish_long(self, options)

    # -- phase 4 and 5: judge, shrink, report --------------------------------------------

    def settle(self, candidates: list[Candidate] | None = None) -> list[DivergenceRecord]:
        """Judge pending findings by input (:mod:`harness.run.settle`); return new unexpected records.

        With no argument, everything pending (the vocabulary findings included) is
        settled, as ``finish`` does.
        """
        if candidates is None:
            candidates = self.take_pending()
        if self._settler is None:
            self._settler = Settler(self, self.documentation, max_shrink_calls=self.max_shrink_calls,
                                    shrink_seconds=self.shrink_seconds, shrink_many=self.shrink_many or (
                                        self.jobs.shrink_many if self.jobs.parallel else None),
                                    progress=lambda done, total: self.progress("shrink", done, total))
        return self._settler.settle(candidates)

    def take_pending(self) -> list[Candidate]:
        """Every finding not judged yet, the vocabulary's included; the caller settles them."""
        for name, findings in self.vocab_findings.items():
            reference = self.selected.reference_for(self.selected.calls[name].info.encoding)
            self.pending += [Candidate(f, ORDINARY, reference.name, "generated", None) for f in findings]
        self.vocab_findings = {}
        taken, self.pending = self.pending, []
        return taken

    def run_case_judged(self, case: Case, *, adapter: str | None = None) -> list[DivergenceRecord]:
        """One case (on one adapter, or all it applies to), judged at once.

        Documented kinds must be known already (from the documented cases). The pytest
        plugin's case items use this; returns the documented, stale and unexpected
        records it produced.
        """
        before = len(self.records)
        pairs = [(a, r) for a, r in self.case_pairs(case) if adapter is None or a.name == adapter]
        pending_before = len(self.pending)
        for calls in {c for pair in pairs for c in pair}:
            calls.reset()
        for calls, reference in pairs:
            self._run_pair(case, calls, reference)
        mine = self.pending[pending_before:]
        del self.pending[pending_before:]
        judged = self.records[before:]
        return judged + self.settle(mine)

    def finish(self, *, incomplete: dict[str, str] | None = None) -> RunResult:
        """Settle what is pending and build the result.

        ``incomplete`` (``{"reason", "phase"}``): the run was interrupted; what is pending
        is judged on its own input, without shrinking, and the result says so.
        """
        if incomplete is not None:
            self.incomplete = dict(incomplete)
            self.max_shrink_calls = 0
            self.shrink_many = None
            self.jobs.close(terminate=True)
            if self._settler is not None:
                self._settler.max_shrink_calls = 0
                self._settler.shrink_many = None
                self.pending[:0] = self._settler.left_over()
        else:
            self.phase = "shrink"
        self.settle()
        self.jobs.close()
        if self.jobs.note and self.jobs.note not in self.notes:
            self.notes.append(self.jobs.note)
        self.notes += self.out_of_domain.notes()
        assign_ids(self.records)  # from content: stable from run to run (harness.run.ids)
        self.records.sort(key=lambda r: (r.sort_key(), r.id))
        for row in self.matrix.values():
            for cell in row.values():
                cell.divergences.sort(key=lambda r: (r.sort_key(), r.id))
        for name in self.selected.rows:
            self.cell(name, CHECKS[0])
        return RunResult(
            adapters=[self.selected.rows[n] for n in sorted(self.selected.rows)],
            references=dict(sorted(self.selected.references.items())),
            checks=CHECKS, matrix={n: self.matrix[n] for n in sorted(self.matrix)},
            divergences=self.records, generated=self.generated, profile=self.profile,
            seed=self.seed, max_examples=self.max_examples, budgets=dict(self.budgets), notes=self.notes,
            shares=dict(self.shares),
            incomplete=self.incomplete, inputs=self.inputs, spooled=self.spool,
            coverage=self.coverage.summary(),
        )
