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

- a finding whose input *contains* the minimal input of an *unexpected* divergence
  already found for the same (adapter, check, kind) is attributed to it without
  shrinking (the run fails either way). Never so for a documented one: ``"xabZ"``
  contains a documented ``"ab"`` but may also hold a second bug on ``"Z"``, so it is
  shrunk, and only the absorber's own input or declared domain explains the result;
- after :data:`SHRINKS_PER_GROUP` shrinks in one (adapter, check, kind), further
  findings are judged on their own input: a documented domain still absorbs them, and
  the rest add to the occurrences of that group's first unexpected divergence (or, if
  it has none, become unexpected divergences unshrunk). The run fails either way.

Candidates are settled smallest first in a fixed order, so the outcome does not depend
on the order inputs were run in.

Shrinking is bounded per finding, in calls and in seconds (``--shrink-seconds``, default
:data:`DEFAULT_SHRINK_SECONDS`); a shrink the clock stopped keeps the smallest input found
so far, and the run's notes say which. With ``--jobs N`` the shrinks run in parallel
(``shrink_many``) and the settling itself stays sequential: a first pass walks each
(adapter, check, kind) group as settling will, asking for the shrinks it will need, in
waves, until no group needs one that is not known. Whether the next finding of a group
is shrunk depends on the minimal inputs its group found before it, so a wave goes past
a group's pending shrink only while that finding is documented as it stands (a
documented shrink adds no minimal input). A shrink depends only on its finding, so the
records are those of ``--jobs 1``; a shrink the first pass did not foresee is simply
done in process, and one it foresaw in vain is not used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from harness.calls import Calls
from harness.cases.model import CHECKS, Policy
from harness.checks.base import Finding
from harness.generate.minimise import shrinkable
from harness.generate.shrink import simplicity
from harness.run.judging import Absorber, Documentation
from harness.run.result import DivergenceRecord


class Recorder(Protocol):
    """What settling needs of the runner: its adapters, its cells, and recording."""

    selected: Any
    notes: list[str]

    def cell(self, adapter: str, check: str) -> Any: ...

    def record(self, finding: Finding, adapter: Calls, reference: Calls, *, status: str, origin: str,
               case: str | None) -> DivergenceRecord: ...

__all__ = ["Candidate", "DEFAULT_SHRINK_SECONDS", "Recorder", "SHRINKS_PER_GROUP", "Settler", "ShrinkMany",
           "TextSize"]

#: how the note on merged findings starts (one note, replaced as settling goes on)
MERGED_NOTE = "grouping by cause: "
#: shrinks per (adapter, check, kind) before further findings are judged unshrunk
SHRINKS_PER_GROUP = 8
#: seconds the shrinker may spend on one finding (``--shrink-seconds``): far above what a
#: finding on ordinary inputs takes (well under a second), so only long inputs meet it
DEFAULT_SHRINK_SECONDS = 60.0


@dataclass(frozen=True)
class Candidate:
    finding: Finding
    subject_policy: Policy
    reference: str
    origin: str
    case: str | None


class TextSize:
    """A sort key: shorter texts first, then by the shrinker's notion of simpler
    characters (:func:`~harness.generate.shrink.simplicity`), left to right.

    Compared lazily, where ``(len(text), [simplicity(ch) for ch in text])`` made a list
    per finding: sorting a default run's 14,931 findings made one of 10^5 tuples per long
    input, 186 MB at once, the peak of the run's last phase (issue 25). ``simplicity``
    gives each character its own key, so equal keys are equal texts.

    >>> sorted(["ab", "b", " a", "aa", "a "], key=TextSize)
    ['b', 'aa', 'a ', 'ab', ' a']
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextSize) and self.text == other.text

    def __lt__(self, other: "TextSize") -> bool:
        mine, theirs = self.text, other.text
        if len(mine) != len(theirs):
            return len(mine) < len(theirs)
        for a, b in zip(mine, theirs):
            if a != b:
                return simplicity(a) < simplicity(b)
        return False

    __hash__ = None  # type: ignore[assignment]


def _order(candidate: Candidate) -> tuple[object, ...]:
    f = candidate.finding
    return (f.adapter, CHECKS.index(f.check) if f.check in CHECKS else 99, f.kind,
            TextSize(f.text), f.text, candidate.origin != "case", candidate.case or "")


#: shrinks many candidates at once (in parallel): (candidate, max calls, max seconds) ->
#: (shrunk finding, whether the time bound stopped it), in order
ShrinkMany = Callable[[list[tuple["Candidate", int, "float | None"]]], list[tuple[Finding, bool]]]


class Settler:
    """Turns candidates into records of the runner: absorbed counts or unexpected ones."""

    def __init__(self, runner: Recorder, documentation: Documentation, *,
                 max_shrink_calls: int, progress: Callable[[int, int], None],
                 shrink_seconds: float | None = DEFAULT_SHRINK_SECONDS, shrink_many: ShrinkMany | None = None) -> None:
        self.runner = runner
        self.documentation = documentation
        self.max_shrink_calls = max_shrink_calls
        self.shrink_seconds = shrink_seconds
        self.shrink_many = shrink_many
        self.progress = progress
        #: shrinks done ahead (in parallel), by the candidate's position in ``settle``
        self._ahead: dict[int, tuple[Finding, bool]] = {}
        self._position = 0
        #: the candidates of the current ``settle`` not settled yet (None: done)
        self.unsettled: list[Candidate | None] = []
        #: (adapter, check, kind) -> minimal inputs found, each with what it counts into
        self.minimal: dict[tuple[str, str, str], list[tuple[str, Absorber | DivergenceRecord]]] = {}
        self.shrinks: dict[tuple[str, str, str], int] = {}
        #: (adapter, minimal input) -> the unexpected divergence of that cause (the policy a
        #: symptom was seen under is in its detail, not in the key: one input, one cause)
        self.by_cause: dict[tuple[str, str], DivergenceRecord] = {}
        #: shrunk findings that met an existing cause's (canonical) minimal input: each
        #: would otherwise have been a divergence of its own (the run's notes say how many)
        self.merged = 0

    def settle(self, candidates: list[Candidate]) -> list[DivergenceRecord]:
        """Settle ``candidates``; return the unexpected records created."""
        created: list[DivergenceRecord] = []
        # findings on a case's own expectations cannot be shrunk (no other text has an
        # expectation): settled last, so they can join a cause the others found
        ordered = sorted(candidates, key=lambda c: (not shrinkable(c.finding), _order(c)))
        self.unsettled = list(ordered)
        self._ahead = self._shrink_ahead(ordered, self.shrink_many) if self.shrink_many is not None else {}
        for done, candidate in enumerate(ordered):
            self._position = done
            record = self._settle_one(candidate)
            self.unsettled[done] = None
            if record is not None:
                created.append(record)
            self.progress(done + 1, len(ordered))
        self.unsettled = []
        self._note_merged()
        return created

    def _note_merged(self) -> None:
        """One note, kept current across calls: how many findings grouping merged."""
        notes = self.runner.notes
        notes[:] = [n for n in notes if not n.startswith(MERGED_NOTE)]
        if self.shrinks or self.by_cause:  # said even when 0: a reader can tell it ran
            causes = sum(1 for r in self.by_cause.values() if r.occurrences > 1)
            notes.append(f"{MERGED_NOTE}{self.merged} finding(s) shrank to the canonical minimal input of an "
                         f"earlier unexpected divergence of their adapter and were merged into it "
                         f"({causes} of {len(self.by_cause)} unexpected divergence(s) hold more than one finding)")

    def left_over(self) -> list[Candidate]:
        """What an interrupted :meth:`settle` did not reach (to settle again, unshrunk)."""
        left = [c for c in self.unsettled if c is not None]
        self.unsettled = []
        return left

    def _settle_one(self, candidate: Candidate) -> DivergenceRecord | None:
        finding = candidate.finding
        group = (finding.adapter, finding.check, finding.kind)
        declared = self.documentation.adapter_wide_for(finding)
        if declared is not None:
            self._absorb(declared, finding, example=None)
            return None
        for minimal, target in self.minimal.get(group, ()):
            if isinstance(target, DivergenceRecord) and minimal and minimal in finding.text:
                target.occurrences += 1
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
        shrunk = self._shrink(candidate, adapter, reference)
        absorber = self.documentation.absorber_for(shrunk)
        if absorber is not None:
            self.minimal.setdefault(group, []).append((shrunk.text, absorber))
            self._absorb(absorber, finding, example=shrunk.text)
            return None
        return self._unexpected(shrunk, candidate, adapter, reference, group)

    def _shrink(self, candidate: Candidate, adapter: Calls, reference: Calls) -> Finding:
        ahead = self._ahead.pop(self._position, None)
        if ahead is None:
            # the same unit --jobs runs (and the unit cache keeps): one shrink, in process
            (ahead,) = self.runner.jobs.map_here("shrink", [(candidate, self.max_shrink_calls, self.shrink_seconds)])
        shrunk, timed_out = ahead
        if timed_out:
            f = candidate.finding
            note = (f"shrinking {f.adapter} {f.check} [{f.kind}] stopped at the {self.shrink_seconds:g} s bound "
                    f"(--shrink-seconds) with {len(shrunk.text)} of {len(f.text)} characters left; the input "
                    f"shown may not be minimal")
            if note not in self.runner.notes:
                self.runner.notes.append(note)
        return shrunk

    def _shrink_ahead(self, ordered: list[Candidate], shrink_many: ShrinkMany) -> dict[int, tuple[Finding, bool]]:
        """The shrinks settling ``ordered`` will need, done in waves through ``shrink_many``.

        Walks each group exactly as :meth:`_settle_one` decides whether to shrink (the
        adapter-wide declarations, the minimal inputs the group already has, its shrink
        count) up to its first shrink not known yet, which joins the wave. Past it the
        walk goes on :meth:`_foreseen`: the shrinks the group will need if the pending
        ones come back documented. One wave per pending shrink made a default run's
        settling eight barriers long (:data:`SHRINKS_PER_GROUP`), each as slow as its
        slowest shrink while the other processes waited.
        """
        by_group: dict[tuple[str, str, str], list[int]] = {}
        for position, candidate in enumerate(ordered):
            f = candidate.finding
            by_group.setdefault((f.adapter, f.check, f.kind), []).append(position)
        minimal = {group: [text for text, target in self.minimal.get(group, ())
                           if isinstance(target, DivergenceRecord)] for group in by_group}
        shrinks = {group: self.shrinks.get(group, 0) for group in by_group}
        cursor = dict.fromkeys(by_group, 0)
        done: dict[int, tuple[Finding, bool]] = {}
        while True:
            wave: list[int] = []
            for group, positions in by_group.items():
                while cursor[group] < len(positions):
                    position = positions[cursor[group]]
                    finding = ordered[position].finding
                    if not shrinkable(finding) or shrinks[group] >= SHRINKS_PER_GROUP:
                        cursor[group] = len(positions)  # nothing more to shrink in this group
                        break
                    if self._skipped(finding, minimal[group]):
                        cursor[group] += 1
                        continue
                    if position not in done:
                        wave.append(position)
                        wave += self._foreseen(ordered, finding, positions[cursor[group] + 1:],
                                               shrinks[group] + 1, minimal[group], done)
                        break
                    shrinks[group] += 1
                    shrunk = done[position][0]
                    if self.documentation.absorber_for(shrunk) is None:  # only unexpected inputs contain
                        minimal[group].append(shrunk.text)
                    cursor[group] += 1
            if not wave:
                return done
            work = [(ordered[p], self.max_shrink_calls, self.shrink_seconds) for p in wave]
            done.update(zip(wave, shrink_many(work)))

    def _skipped(self, finding: Finding, minimal: list[str]) -> bool:
        """Whether settling passes ``finding`` by unshrunk: declared adapter-wide, or its
        input holds an unexpected minimal input of its group (:meth:`_settle_one`)."""
        return self.documentation.adapter_wide_for(finding) is not None or any(
            m and m in finding.text for m in minimal)

    def _foreseen(self, ordered: list[Candidate], pending: Finding, after: list[int], count: int,
                  minimal: list[str], done: dict[int, tuple[Finding, bool]]) -> list[int]:
        """The positions of ``after`` (a group's, past the ``pending`` shrink, the
        group's ``count``-th) that settling will shrink too if the pending shrinks come
        back documented, and that are not done yet.

        A shrink that comes back unexpected can make a later finding of its group pass
        unshrunk (its input holds the new minimal input); a shrink done for that finding
        is wasted work, never another record (:meth:`_shrink` takes only those it
        needs). So the walk goes past a pending shrink only while its finding is
        documented as it stands, as a passing run's are, and stops at the first that is
        not: a failing run keeps one wave per such shrink and wastes none on the findings
        its first cause explains."""
        foreseen: list[int] = []
        if self.documentation.absorber_for(pending) is None:
            return foreseen
        minimal = list(minimal)
        for position in after:
            if count >= SHRINKS_PER_GROUP:
                break
            finding = ordered[position].finding
            if not shrinkable(finding):
                break
            if self._skipped(finding, minimal):
                continue
            count += 1
            if position in done:
                if self.documentation.absorber_for(done[position][0]) is None:
                    minimal.append(done[position][0].text)
                continue
            foreseen.append(position)
            if self.documentation.absorber_for(finding) is None:
                break  # the new pending shrink: what follows depends on it
        return foreseen

    def _join_cause(self, finding: Finding) -> bool:
        """An unshrinkable finding whose input holds a known cause of its adapter joins it."""
        for (adapter, minimal), record in self.by_cause.items():
            if adapter == finding.adapter and minimal and minimal in finding.text:
                record.occurrences += 1
                if record.add_symptom(finding.check, finding.kind, finding.detail):
                    _file(self.runner.cell(finding.adapter, finding.check), record)
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
            record.add_example(candidate.finding.text)
            self.merged += 1
            if record.add_symptom(finding.check, finding.kind, finding.detail):
                _file(self.runner.cell(finding.adapter, finding.check), record)
            return None
        record = self.runner.record(finding, adapter, reference, status="unexpected",
                                    origin=candidate.origin, case=candidate.case)
        record.add_example(candidate.finding.text)
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


def _file(cell: Any, record: DivergenceRecord) -> None:
    """List ``record`` in ``cell`` once: one cause can show twice in one check (the
    ``expected`` check's IDs and its error expectation), and parity.json's schema wants
    each divergence once per cell."""
    if not any(r is record for r in cell.divergences):
        cell.divergences.append(record)
