"""The differential run: cases and generated inputs through every check, judged and shrunk.

Flow (``tokconf run`` calls the phases in order; the pytest plugin uses the pieces):

1. **vocab-consistency** once per adapter (:mod:`harness.checks.vocab`).
2. **cases**: each case runs on the adapters it applies to, each compared with the
   reference of its encoding (or the case's own ``reference``), through every text check.
3. **generated**: per encoding, a deterministic pool of hostile texts
   (:func:`harness.generate.strategies.hostile_text` with the special literals of that
   encoding's adapters; a closed vocabulary gets text from its alphabet) under the
   ``ordinary`` policy, built by :mod:`harness.generate.pools` (atoms, inputs from the
   group's split patterns, mixtures, long pieces; then coverage-steered inputs). Fast
   adapters take the whole pool (``max_examples`` plus the fixed sets); slower ones a
   share chosen from a short timing (:func:`harness.generate.budget.pool_budget`),
   rounded to halvings so small timing noise does not change the count. Every input an
   adapter was checked on feeds :class:`harness.run.coverage.Collector`.
4. **judging**: every finding is classified:

   - a case that *documents* the (adapter, check) and the check finds a difference:
     **documented** (passes); the case documents it but nothing differs: **stale**
     (fails, like a strict xfail);
   - a difference no case documents: **unexpected** (fails) — unless a documented
     divergence of the *same adapter, check and kind* reproduced in this run, in which
     case it is counted under that documented divergence (kinds:
     :mod:`harness.checks.base`; the few cross-check equivalences:
     :mod:`harness.run.judging`). This is how a quirk documented once (HF treats added
     tokens as special; encoder.py refuses a lone surrogate) does not fail every
     generated input that meets it, while a different kind of difference still fails.
     Generated inputs never create documented or stale entries themselves;
   - an input outside a closed vocabulary's domain (``in_domain`` false for the adapter
     or its reference) is not counted at all, unless a case documents a divergence on it.

5. **shrinking and evidence**: for each (adapter, check, kind) the shortest unexpected
   input from the cases and from generation is shrunk by :func:`harness.generate.shrink.shrink`
   (the candidate must fail the same check with the same kind), and the smaller result
   is kept with its evidence (:mod:`harness.run.evidence`). At most three kinds per cell.

Adapter calls go through :class:`harness.calls.Calls` (pure data in and out), so one
adapter's failure is an Outcome, never an exception that stops the run.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import Callable, Iterable

from harness.generate.budget import pool_budget
from harness.calls import Calls
from harness.cases.model import CHECKS, Case, DocumentedDivergence, Policy
from harness.cases.loader import case_applies_to, documented_for
from harness.checks.base import AGREE, ORDINARY, SKIP, UNSUPPORTED, Finding, Result, Subject, declared_policy
from harness.checks import TEXT_CHECKS, check_vocab, run_text_check
from harness.run.evidence import gather
from harness.run.judging import DocumentedKinds
from harness.run.result import Cell, DivergenceRecord, RunResult
from harness.run.selection import Selected, SelectionError
from harness.generate.minimise import shrink_finding
from harness.generate.shrink import simplicity
from harness.generate.pools import FIXED_SETS, Pool, closed_pool, open_pool
from harness.generate.strategies import profile_settings, resolve_profile
from harness.run.coverage import STEERED, Collector

__all__ = ["GENERATED_CHECKS", "Candidate", "GenerationOptions", "Runner", "case_adapter_names"]

ProgressFn = Callable[[str, int, int], None]

#: Text checks that apply to generated inputs (``expected`` needs a case).
GENERATED_CHECKS: tuple[str, ...] = tuple(c for c in TEXT_CHECKS if c != "expected")
_MAX_KINDS_PER_CELL = 3


@dataclass(frozen=True)
class GenerationOptions:
    profile: str | None = None
    seed: int | None = None
    max_examples: int | None = None
    #: seconds of checking one adapter may take; slower adapters get fewer examples
    time_budget_s: float = 12.0


@dataclass(frozen=True)
class Candidate:
    finding: Finding
    subject_policy: Policy
    reference: str
    origin: str
    case: str | None


def case_adapter_names(cases: Iterable[Case]) -> list[str]:
    """Adapter names the cases spell out exactly (fixtures such as ``gpt2-encoder:DIR``)."""
    names: list[str] = []
    for case in cases:
        for name in (*(case.adapters or ()), *((case.reference,) if case.reference else ())):
            if name not in names:
                names.append(name)
    return names


class Runner:
    """Fills the matrix; ``finish`` shrinks, gathers evidence and returns the result."""

    def __init__(self, selected: Selected, *, progress: ProgressFn | None = None, max_shrink_calls: int = 1500) -> None:
        self.selected = selected
        self.progress = progress or (lambda phase, done, total: None)
        self.max_shrink_calls = max_shrink_calls
        self.matrix: dict[str, dict[str, Cell]] = {}
        self.records: list[DivergenceRecord] = []
        self.documented_kinds = DocumentedKinds()
        self._pending: list[Candidate] = []
        self.vocab_findings: dict[str, list[Finding]] = {}
        self.budgets: dict[str, int] = {}
        self.notes: list[str] = []
        self.generated = False
        self.profile = resolve_profile(None)
        self.seed: int | None = None
        self.max_examples = 0
        self.coverage = Collector(reference_pattern=self._reference_pattern)

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
                case: str | None, doc: DocumentedDivergence | None = None, extra: dict | None = None) -> None:
        record = DivergenceRecord(
            adapter=adapter.name, reference=None if adapter is reference else reference.name,
            check=finding.check, encoding=adapter.info.encoding, status=status,  # type: ignore[arg-type]
            origin=origin, case=case, reason=doc.reason if doc else None,  # type: ignore[arg-type]
            doc_source=doc.source if doc else None, text=finding.text, kind=finding.kind,
            detail=finding.detail, evidence=gather(finding, adapter, reference, extra_outcomes=extra),
            policy=finding.policy,
        )
        self.records.append(record)
        self.cell(adapter.name, finding.check).divergences.append(record)

    # -- phase 1: vocabulary -------------------------------------------------------------

    def run_vocab(self) -> None:
        names = sorted(self.selected.calls)
        for done, name in enumerate(names):
            adapter = self.selected.calls[name]
            reference = self.selected.reference_for(adapter.info.encoding)
            report = check_vocab(adapter, reference)
            self.cell(name, "vocab-consistency").inputs += report.inputs
            self.vocab_findings[name] = report.sorted_findings()
            self.progress("vocab", done + 1, len(names))

    # -- phase 2: cases ------------------------------------------------------------------

    def run_cases(self, cases: list[Case]) -> None:
        for done, case in enumerate(cases):
            self.run_case(case)
            self.progress("cases", done + 1, len(cases))

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
            if not case_applies_to(case, name, encoding):
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
        if not any(case_applies_to(case, n, c.info.encoding) for n, c in self.selected.calls.items()):
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

    def _run_pair(self, case: Case, adapter: Calls, reference: Calls) -> None:
        in_domain = adapter.in_domain(case.text) and reference.in_domain(case.text)
        for check in TEXT_CHECKS:
            result = run_text_check(check, Subject(case.text, case.policy, adapter, reference, case))
            self._judge_case(case, adapter, reference, check, result, in_domain)
        self.coverage.observe(case.text, adapter, case.policy)
        doc = documented_for(case, adapter.name, "vocab-consistency")
        if doc is not None:
            self._judge_case_vocab(case, adapter, reference, doc)

    def _judge_case(self, case: Case, adapter: Calls, reference: Calls, check: str, result: Result,
                    in_domain: bool) -> None:
        doc = documented_for(case, adapter.name, check)
        cell = self.cell(adapter.name, check)
        if isinstance(result, Finding):
            if doc is not None:
                cell.inputs += 1
                self.documented_kinds.add(adapter.name, check, result.kind)
                self.record(result, adapter, reference, status="documented", origin="case", case=case.id, doc=doc)
            elif in_domain:
                cell.inputs += 1
                self._pending.append(Candidate(result, case.policy, reference.name, "case", case.id))
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
        for finding in findings:
            self.documented_kinds.add(adapter.name, "vocab-consistency", finding.kind)
        self.record(findings[0], adapter, reference, status="documented", origin="case", case=case.id, doc=doc)

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
        self.generated = True
        self.profile = resolve_profile(options.profile)
        profile = profile_settings(self.profile)
        self.max_examples = options.max_examples if options.max_examples is not None else profile.max_examples
        if options.seed is not None:
            self.seed = options.seed
        else:
            self.seed = 0 if profile.derandomize else random.SystemRandom().randrange(2**32)
        plans: list[tuple[Pool, list[Calls], Calls]] = []
        for encoding in self.selected.encodings():
            reference = self.selected.reference_for(encoding)
            group = self.selected.group(encoding)
            seed = (self.seed + zlib.crc32(encoding.encode())) % 2**32
            open_group = [a for a in group if a.info.capabilities.alphabet is None]
            if open_group:
                literals = sorted({lit for a in group for lit, _ in a.info.special_tokens})
                patterns = [p for a in [reference, *open_group] if (p := a.info.split_pattern)]
                pool = open_pool(literals=literals, patterns=patterns, profile=self.profile,
                                 max_examples=self.max_examples, seed=seed)
                plans.append((pool, open_group, reference))
            for adapter in group:
                if adapter.info.capabilities.alphabet is not None:
                    plans.append((closed_pool(alphabet=adapter.info.capabilities.alphabet,
                                              max_examples=self.max_examples, seed=seed), [adapter], reference))
        for pool, adapters, reference in plans:
            for adapter in adapters:
                self.budgets[adapter.name] = self._budget(adapter, pool, options.time_budget_s)
        steer = "steer" in FIXED_SETS.get(self.profile, ())
        whole = {id(pool): [a for a in adapters if self.budgets[a.name] >= pool.short_count]
                 for pool, adapters, _ in plans}
        total = sum(self.budgets.get(a.name, 0) for _, adapters, _ in plans for a in adapters)
        total += sum(STEERED * len(whole[id(p)]) for p, a, _ in plans if steer and a[0].info.capabilities.alphabet is None)
        done = 0
        for pool, adapters, reference in plans:
            texts = pool.texts
            steered = None
            if steer and adapters[0].info.capabilities.alphabet is None:
                steered = self.coverage.steer(reference, seed=self.seed)
                texts = texts + steered.texts
            for i, text in enumerate(texts):
                # steered inputs (after the pool) go to the adapters that took its short part
                active = [a for a in adapters if self.budgets[a.name] > i] if i < len(pool.texts) else whole[id(pool)]
                if not active:
                    break
                for calls in {reference, *active}:
                    calls.reset()
                for adapter in active:
                    self.run_generated_input(text, adapter, reference)
                done += len(active)
                self.progress("generated", done, total)
            if steered is not None:
                self.coverage.steered(reference, steered.texts, steered.targeted)
        self.progress("generated", total, total)

    def run_generated_input(self, text: str, adapter: Calls, reference: Calls) -> None:
        if not (adapter.in_domain(text) and reference.in_domain(text)):
            return
        for check in GENERATED_CHECKS:
            result = run_text_check(check, Subject(text, ORDINARY, adapter, reference))
            cell = self.cell(adapter.name, check)
            if result == UNSUPPORTED:
                cell.unsupported += 1
            elif result == AGREE:
                cell.inputs += 1
            elif isinstance(result, Finding):
                cell.inputs += 1
                self._pending.append(Candidate(result, ORDINARY, reference.name, "generated", None))
        self.coverage.observe(text, adapter, ORDINARY, generated=True)

    def _budget(self, adapter: Calls, pool: Pool, time_budget_s: float) -> int:
        return pool_budget(adapter, pool, max_examples=self.max_examples, time_budget_s=time_budget_s)

    # -- phase 4 and 5: judge, shrink, report --------------------------------------------

    def explained(self, finding: Finding) -> bool:
        return self.documented_kinds.explains(finding)

    def settle(self, candidates: list[Candidate] | None = None) -> list[DivergenceRecord]:
        """Judge pending findings: explained ones are counted, the rest shrunk and recorded.

        Returns the new unexpected records. With no argument, everything pending (the
        vocabulary findings included) is settled, as ``finish`` does.
        """
        if candidates is None:
            candidates = self.take_pending()
        best: dict[tuple[str, str, str], dict[str, Candidate]] = {}
        for candidate in candidates:
            finding = candidate.finding
            if self.explained(finding):
                self.cell(finding.adapter, finding.check).explained += 1
                continue
            slot = best.setdefault((finding.adapter, finding.check, finding.kind), {})
            current = slot.get(candidate.origin)
            if current is None or _size(finding.text) < _size(current.finding.text):
                slot[candidate.origin] = candidate
        chosen = self._limit_kinds(best)
        before = len(self.records)
        for done, (_, by_origin) in enumerate(chosen):
            self._shrink_and_record(list(by_origin.values()))
            self.progress("shrink", done + 1, len(chosen))
        return self.records[before:]

    def take_pending(self) -> list[Candidate]:
        """Every finding not judged yet, the vocabulary's included; the caller settles them."""
        for name, findings in self.vocab_findings.items():
            reference = self.selected.reference_for(self.selected.calls[name].info.encoding)
            self._pending += [Candidate(f, ORDINARY, reference.name, "generated", None) for f in findings]
        self.vocab_findings = {}
        taken, self._pending = self._pending, []
        return taken

    def run_case_judged(self, case: Case, *, adapter: str | None = None) -> list[DivergenceRecord]:
        """One case (on one adapter, or all it applies to), judged at once.

        Documented kinds must be known already (from the documented cases). The pytest
        plugin's case items use this; returns the documented, stale and unexpected
        records it produced.
        """
        before = len(self.records)
        pairs = [(a, r) for a, r in self.case_pairs(case) if adapter is None or a.name == adapter]
        pending_before = len(self._pending)
        for calls in {c for pair in pairs for c in pair}:
            calls.reset()
        for calls, reference in pairs:
            self._run_pair(case, calls, reference)
        mine = self._pending[pending_before:]
        del self._pending[pending_before:]
        judged = self.records[before:]
        return judged + self.settle(mine)

    def finish(self) -> RunResult:
        self.settle()
        for number, record in enumerate(sorted(self.records, key=DivergenceRecord.sort_key), start=1):
            record.id = f"d{number:04d}"
        self.records.sort(key=lambda r: r.id)
        for row in self.matrix.values():
            for cell in row.values():
                cell.divergences.sort(key=lambda r: r.id)
        for name in self.selected.rows:
            self.cell(name, CHECKS[0])
        return RunResult(
            adapters=[self.selected.rows[n] for n in sorted(self.selected.rows)],
            references=dict(sorted(self.selected.references.items())),
            checks=CHECKS, matrix={n: self.matrix[n] for n in sorted(self.matrix)},
            divergences=self.records, generated=self.generated, profile=self.profile,
            seed=self.seed, max_examples=self.max_examples, budgets=dict(self.budgets), notes=self.notes,
            coverage=self.coverage.summary(),
        )

    @staticmethod
    def _limit_kinds(best: dict[tuple[str, str, str], dict[str, Candidate]]) -> list[tuple[tuple[str, str, str], dict[str, Candidate]]]:
        per_cell: dict[tuple[str, str], list[tuple[tuple[str, str, str], dict[str, Candidate]]]] = {}
        for key, slot in sorted(best.items()):
            per_cell.setdefault(key[:2], []).append((key, slot))
        chosen = []
        for entries in per_cell.values():
            entries.sort(key=lambda e: min(_size(c.finding.text) for c in e[1].values()))
            chosen.extend(entries[:_MAX_KINDS_PER_CELL])
        return chosen

    def _shrink_and_record(self, candidates: list[Candidate]) -> None:
        results = []
        for candidate in candidates:
            adapter = self.selected.calls[candidate.finding.adapter]
            reference = self.selected.calls[candidate.reference]
            finding = shrink_finding(candidate.finding, adapter, reference, candidate.subject_policy,
                                     max_calls=self.max_shrink_calls)
            results.append((_size(finding.text), candidate.origin != "case", finding, candidate, adapter, reference))
        results.sort(key=lambda r: r[:2])
        _, _, finding, candidate, adapter, reference = results[0]
        self.record(finding, adapter, reference, status="unexpected", origin=candidate.origin, case=candidate.case)


def _size(text: str) -> tuple[int, list[tuple[int, int]]]:
    return (len(text), [simplicity(ch) for ch in text])
