"""The values a run produces: adapter rows, matrix cells, divergences, the result.

Plain data, filled by :mod:`harness.run.runner`, turned into ``parity.json`` by
:mod:`harness.report.parity_json` and into a summary table by ``tokconf run``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from harness.cases.domain import Domain
from harness.cases.model import CHECKS, Policy
from harness.run.evidence import Evidence
from harness.interface import Capabilities
from harness.provenance import Provenance

__all__ = ["AdapterRow", "Cell", "DivergenceRecord", "RunResult", "STATUSES"]

#: Cell statuses, in the order the summary counts them (``empty``: a check that compared
#: nothing; ``not-run``: a cell an interrupted run never reached; neither may look like an
#: agreement).
STATUSES: tuple[str, ...] = ("agree", "documented", "unexpected", "stale", "unsupported", "empty", "unavailable",
                            "not-run")

DivergenceStatus = Literal["documented", "unexpected", "stale"]


@dataclass(frozen=True)
class AdapterRow:
    """One adapter of the run, available or not."""

    name: str
    encoding: str
    library: str
    version: str | None
    available: bool
    reason: str | None = None
    capabilities: Capabilities | None = None
    provider: str = ""
    #: what exactly was tested: distribution, version, files read (harness.provenance)
    provenance: Provenance | None = None
    #: how it ran when isolated ("worker process; network: ..."); None = in process
    isolated: str | None = None
    #: the language its users call it from (AdapterInfo.language)
    language: str = "Python"
    #: (pinned file, SHA-256 of the ranks the library bundles) (AdapterInfo.vocabulary)
    vocabulary: tuple[tuple[str, str], ...] = ()


@dataclass
class Cell:
    """One (adapter, check) cell of the matrix while the run fills it."""

    inputs: int = 0
    unsupported: int = 0
    #: findings a documented divergence explained (its own input or its declared domain)
    explained: int = 0
    unavailable: bool = False
    divergences: list["DivergenceRecord"] = field(default_factory=list)
    #: the run was interrupted before this cell saw anything (:meth:`RunResult.mark_not_run`)
    not_run: bool = False

    @property
    def status(self) -> str:
        """unavailable > unexpected > stale > documented > unsupported > empty > agree.

        A cell that compared nothing is never ``agree``: ``unsupported`` when the adapter
        lacked what the check needs, ``empty`` when no input applied (issue 21).

        >>> Cell().status, Cell(unsupported=3).status, Cell(inputs=2, unsupported=1).status
        ('empty', 'unsupported', 'agree')
        """
        if self.unavailable:
            return "unavailable"
        if self.not_run:
            return "not-run"
        kinds = {d.status for d in self.divergences}
        for status in ("unexpected", "stale", "documented"):
            if status in kinds:
                return status
        if self.explained:
            return "documented"
        if self.inputs == 0:
            return "unsupported" if self.unsupported > 0 else "empty"
        return "agree"


@dataclass
class DivergenceRecord:
    """One divergence as the report shows it (the id is given when the run finishes)."""

    adapter: str
    reference: str | None
    check: str
    encoding: str
    status: DivergenceStatus
    origin: Literal["case", "generated"]
    case: str | None
    reason: str | None
    doc_source: str | None
    text: str
    kind: str
    detail: str
    evidence: Evidence
    id: str = ""
    #: the special-token policy the divergence was seen under
    policy: Policy = Policy()
    #: every (check, kind, detail) that saw this cause on this minimal input; the first is
    #: (check, kind, detail) above
    symptoms: list[tuple[str, str, str]] = field(default_factory=list)
    #: unexpected: how many findings shrank to (or contained) this input
    occurrences: int = 1
    #: unexpected: a few inputs, as found, of the findings grouped under this cause
    examples: list[str] = field(default_factory=list)
    #: documented: how many findings elsewhere in the run it explained, and a few of them
    absorbed: int = 0
    absorbed_examples: list[str] = field(default_factory=list)
    #: documented: the input domain the case declares (None: its own input only)
    domain: Domain | None = None

    def __post_init__(self) -> None:
        if not self.symptoms:
            self.symptoms = [(self.check, self.kind, self.detail)]

    def add_symptom(self, check: str, kind: str, detail: str) -> bool:
        """Another check saw the same cause; True if it was new."""
        if any((c, k) == (check, kind) for c, k, _ in self.symptoms):
            return False
        self.symptoms.append((check, kind, detail))
        self.symptoms.sort(key=lambda s: CHECKS.index(s[0]) if s[0] in CHECKS else 99)
        return True

    def add_example(self, text: str) -> None:
        """Keep up to three distinct found inputs besides the minimal one (they show what
        the grouping merged)."""
        if text != self.text and text not in self.examples and len(self.examples) < 3:
            self.examples.append(text)

    def sort_key(self) -> tuple[object, ...]:
        order = {"unexpected": 0, "stale": 1, "documented": 2}
        return (self.adapter, CHECKS.index(self.check) if self.check in CHECKS else 99,
                order[self.status], self.case or "", len(self.text), self.text, self.kind)


@dataclass
class RunResult:
    """Everything a run found."""

    adapters: list[AdapterRow]
    references: dict[str, str]
    checks: tuple[str, ...]
    matrix: dict[str, dict[str, Cell]]
    divergences: list[DivergenceRecord]
    generated: bool
    profile: str
    seed: int | None
    max_examples: int
    budgets: dict[str, int] = field(default_factory=dict)
    #: adapter -> its declared share of the generated pool and what it skipped
    shares: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: set when the run was interrupted: {"reason": ..., "phase": ...}
    incomplete: dict[str, str] | None = None
    #: (text, policy) -> {"origin", "case", "outcomes": {adapter: Outcome}} (``Runner.inputs``)
    inputs: dict = field(default_factory=dict)
    #: a corpus's inputs and outcomes, on disk (harness.report.outcome_spool; None: no corpus)
    spooled: Any = None
    #: adapter -> what its inputs exercised (harness.run.coverage.Collector.summary)
    coverage: dict[str, dict] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.incomplete:
            self.mark_not_run()

    def mark_not_run(self) -> None:
        """An interrupted run: a cell that saw nothing was not reached, not agreed with."""
        for row in self.matrix.values():
            for cell in row.values():
                if not (cell.inputs or cell.unsupported or cell.explained or cell.divergences):
                    cell.not_run = True

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for row in self.matrix.values():
            for cell in row.values():
                counts[cell.status] += 1
        return counts

    @property
    def failed(self) -> bool:
        return any(d.status in ("unexpected", "stale") for d in self.divergences)

    def by_status(self, status: str) -> list[DivergenceRecord]:
        return [d for d in self.divergences if d.status == status]
