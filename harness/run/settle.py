"""Settling findings: shrink, then judge by input, then group by cause.

Every finding that no case documents on its own input goes through here, from cases,
generation and the vocabulary check alike:

1. an adapter-level declaration (``declared:<policy>``) explains it wherever it is;
2. otherwise it is **shrunk** (:func:`harness.generate.minimise.shrink_finding`), and the
   *minimal* input is judged: inside the domain (or equal to the input) of a documented
   divergence with a matching (check, kind), it is counted under that divergence with
   up to three shrunk examples (:class:`harness.run.judging.Absorber`); else it is
   **unexpected**;
3. unexpected findings of one adapter whose minimal inputs coincide are **one divergence**
   with several symptoms (the checks that saw it); distinct minimal inputs stay distinct
   divergences, so a second bug of the same kind is never hidden behind the first.

Shrinking costs hundreds of adapter calls, and one systematic bug can produce hundreds of
findings, so two shortcuts keep a run bounded without changing what it reports:

- a finding whose input *contains* a minimal input already found for the same (adapter,
  check, kind) is attributed to it without shrinking (shrinking it would find that
  input again, or one as small);
- after :data:`SHRINKS_PER_GROUP` shrinks in one (adapter, check, kind), further
  findings are judged on their own input: a documented domain still absorbs them, and
  the rest add to the occurrences of that group's first unexpected divergence (or, if
  it has none, become unexpected divergences unshrunk). The run fails either way.

Candidates are settled smallest first in a fixed order, so the outcome does not depend
on the order inputs were run in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from harness.calls import Calls
from harness.cases.model import CHECKS, Policy
from harness.checks.base import Finding
from harness.generate.minimise import shrink_finding, shrinkable
from harness.generate.shrink import simplicity
from harness.run.judging import Absorber, Documentation
from harness.run.result import DivergenceRecord


class Recorder(Protocol):
    """What settling needs of the runner: its adapters, its cells, and recording."""

    selected: Any

    def cell(self, adapter: str, check: str) -> Any: ...

    def record(self, finding: Finding, adapter: Calls, reference: Calls, *, status: str, origin: str,
               case: str | None) -> DivergenceRecord: ...

__all__ = ["Candidate", "Recorder", "SHRINKS_PER_GROUP", "Settler", "text_size"]

#: shrinks per (adapter, check, kind) before further findings are judged unshrunk
SHRINKS_PER_GROUP = 8


@dataclass(frozen=True)
class Candidate:
    finding: Finding
    subject_policy: Policy
    reference: str
    origin: str
    case: str | None


def text_size(text: str) -> tuple[int, list[tuple[int, int]]]:
    """Smaller first: length, then the shrinker's notion of simpler characters."""
    return (len(text), [simplicity(ch) for ch in text])


def _order(candidate: Candidate) -> tuple[object, ...]:
    f = candidate.finding
    return (f.adapter, CHECKS.index(f.check) if f.check in CHECKS else 99, f.kind,
            text_size(f.text), f.text, candidate.origin != "case", candidate.case or "")


class Settler:
    """Turns candidates into records of the runner: absorbed counts or unexpected ones."""

    def __init__(self, runner: Recorder, documentation: Documentation, *,
                 max_shrink_calls: int, progress: Callable[[int, int], None]) -> None:
        self.runner = runner
        self.documentation = documentation
        self.max_shrink_calls = max_shrink_calls
        self.progress = progress
        #: (adapter, check, kind) -> minimal inputs found, each with what it counts into
        self.minimal: dict[tuple[str, str, str], list[tuple[str, Absorber | DivergenceRecord]]] = {}
        self.shrinks: dict[tuple[str, str, str], int] = {}
        #: (adapter, minimal input) -> the unexpected divergence of that cause (the policy a
        #: symptom was seen under is in its detail, not in the key: one input, one cause)
        self.by_cause: dict[tuple[str, str], DivergenceRecord] = {}

    def settle(self, candidates: list[Candidate]) -> list[DivergenceRecord]:
        """Settle ``candidates``; return the unexpected records created."""
        created: list[DivergenceRecord] = []
        # findings on a case's own expectations cannot be shrunk (no other text has an
        # expectation): settled last, so they can join a cause the others found
        ordered = sorted(candidates, key=lambda c: (not shrinkable(c.finding), _order(c)))
        for done, candidate in enumerate(ordered):
            record = self._settle_one(candidate)
            if record is not None:
                created.append(record)
            self.progress(done + 1, len(ordered))
        return created

    def _settle_one(self, candidate: Candidate) -> DivergenceRecord | None:
        finding = candidate.finding
        group = (finding.adapter, finding.check, finding.kind)
        declared = self.documentation.adapter_wide_for(finding)
        if declared is not None:
            self._absorb(declared, finding, example=None)
            return None
        for minimal, target in self.minimal.get(group, ()):
            if minimal and minimal in finding.text:
                self._count(target, finding, example=None)
                return None
        if not shrinkable(finding):
            joined = self._join_cause(finding)
            if joined:
                return None
        if self.shrinks.get(group, 0) >= SHRINKS_PER_GROUP:
            return self._judge_unshrunk(candidate, group)
        self.shrinks[group] = self.shrinks.get(group, 0) + 1
        adapter = self.runner.selected.calls[finding.adapter]
        reference = self.runner.selected.calls[candidate.reference]
        shrunk = shrink_finding(finding, adapter, reference, candidate.subject_policy,
                                max_calls=self.max_shrink_calls)
        absorber = self.documentation.absorber_for(shrunk)
        if absorber is not None:
            self.minimal.setdefault(group, []).append((shrunk.text, absorber))
            self._absorb(absorber, finding, example=shrunk.text)
            return None
        return self._unexpected(shrunk, candidate, adapter, reference, group)

    def _join_cause(self, finding: Finding) -> bool:
        """An unshrinkable finding whose input holds a known cause of its adapter joins it."""
        for (adapter, minimal), record in self.by_cause.items():
            if adapter == finding.adapter and minimal and minimal in finding.text:
                record.occurrences += 1
                if record.add_symptom(finding.check, finding.kind, finding.detail):
                    self.runner.cell(finding.adapter, finding.check).divergences.append(record)
                return True
        return False

    def _judge_unshrunk(self, candidate: Candidate, group: tuple[str, str, str]) -> DivergenceRecord | None:
        finding = candidate.finding
        absorber = self.documentation.absorber_for(finding)
        if absorber is not None:
            self._absorb(absorber, finding, example=None)
            return None
        for _, target in self.minimal.get(group, ()):
            if isinstance(target, DivergenceRecord):
                self._count(target, finding, example=None)
                return None
        adapter = self.runner.selected.calls[finding.adapter]
        reference = self.runner.selected.calls[candidate.reference]
        return self._unexpected(finding, candidate, adapter, reference, group)

    def _unexpected(self, finding: Finding, candidate: Candidate, adapter: Calls, reference: Calls,
                    group: tuple[str, str, str]) -> DivergenceRecord | None:
        cause = (finding.adapter, finding.text)
        record = self.by_cause.get(cause)
        if record is not None:
            self.minimal.setdefault(group, []).append((finding.text, record))
            record.occurrences += 1
            if record.add_symptom(finding.check, finding.kind, finding.detail):
                self.runner.cell(finding.adapter, finding.check).divergences.append(record)
            return None
        record = self.runner.record(finding, adapter, reference, status="unexpected",
                                    origin=candidate.origin, case=candidate.case)
        self.by_cause[cause] = record
        self.minimal.setdefault(group, []).append((finding.text, record))
        return record

    def _count(self, target: Absorber | DivergenceRecord, finding: Finding, *, example: str | None) -> None:
        if isinstance(target, Absorber):
            self._absorb(target, finding, example=example)
        else:
            target.occurrences += 1

    def _absorb(self, absorber: Absorber, finding: Finding, *, example: str | None) -> None:
        absorber.absorb(example)
        cell = self.runner.cell(finding.adapter, finding.check)
        cell.explained += 1
        if absorber.record is not None and absorber.record not in cell.divergences:
            cell.divergences.append(absorber.record)
