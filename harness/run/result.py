"""The values a run produces: adapter rows, matrix cells, divergences, the result.

Plain data, filled by :mod:`harness.run.runner`, turned into ``parity.json`` by
:mod:`harness.report.parity_json` and into a summary table by ``tokconf run``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from harness.cases.model import CHECKS, Policy
from harness.run.evidence import Evidence
from harness.interface import Capabilities

__all__ = ["AdapterRow", "Cell", "DivergenceRecord", "RunResult", "STATUSES"]

#: Cell statuses, in the order the summary counts them.
STATUSES: tuple[str, ...] = ("agree", "documented", "unexpected", "stale", "unsupported", "unavailable")

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


@dataclass
class Cell:
    """One (adapter, check) cell of the matrix while the run fills it."""

    inputs: int = 0
    unsupported: int = 0
    #: generated or case inputs whose divergence a documented one of the same kind explains
    explained: int = 0
    unavailable: bool = False
    divergences: list["DivergenceRecord"] = field(default_factory=list)

    @property
    def status(self) -> str:
        """unavailable > unexpected > stale > documented > unsupported (nothing ran) > agree.

        >>> Cell().status, Cell(unsupported=3).status, Cell(inputs=2, unsupported=1).status
        ('agree', 'unsupported', 'agree')
        """
        if self.unavailable:
            return "unavailable"
        kinds = {d.status for d in self.divergences}
        for status in ("unexpected", "stale", "documented"):
            if status in kinds:
                return status
        if self.inputs == 0 and self.unsupported > 0:
            return "unsupported"
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
    notes: list[str] = field(default_factory=list)
    #: adapter -> what its inputs exercised (harness.run.coverage.Collector.summary)
    coverage: dict[str, dict] = field(default_factory=dict)

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
