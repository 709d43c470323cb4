"""Units and deltas: what a piece of a run hands back, and how pieces become one result.

A run is cut into **units** (a phase x a slice of its inputs x the adapters that meet on
them; a vocabulary check, a shrink). A unit runs on a *fresh* runner
(:meth:`harness.run.runner.Runner.fresh`: the adapters shared, the state empty) and
returns a :class:`Delta`: counts per cell, records, findings not judged yet with their
inputs, the documentation's absorbers, coverage observations and each input's outcomes.
:func:`merge` (:meth:`~harness.run.runner.Runner.apply`) adds a delta to a runner; the
executors (in process, ``--jobs``, Dask) apply deltas in unit order whatever finished
first, so every executor's result is the same. Judging is a unit too: :func:`judge_delta`
merges one case's delta and settles its findings at once (the pytest plugin's items).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from harness.checks.base import Finding
from harness.run.domain_tally import DomainTally
from harness.run.judging import Documentation
from harness.run.result import Cell, DivergenceRecord

__all__ = ["Delta", "combined", "delta_of", "fresh", "judge_delta", "merge", "shared"]


@dataclass
class Delta:
    """What one task added to a runner's state."""

    matrix: dict[str, dict[str, Cell]] = field(default_factory=dict)
    records: list[DivergenceRecord] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)
    #: the documentation's absorbers, each pointing at a record of ``records`` (one pickle
    #: keeps that identity across processes)
    absorbers: list[Any] = field(default_factory=list)
    vocab_findings: dict[str, list[Finding]] = field(default_factory=dict)
    #: adapter -> long-input kind -> largest length checked
    long_reach: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the runner's per-input outcomes (``Runner.inputs``)
    inputs: dict[Any, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: what the task's inputs exercised (``Collector.observations``)
    coverage: dict[str, Any] = field(default_factory=dict)
    #: inputs outside each closed vocabulary's domain (``Runner.out_of_domain``)
    out_of_domain: DomainTally = field(default_factory=DomainTally)
    #: more inputs, packed (:func:`harness.report.outcome_spool.pack_inputs`): a corpus
    #: task's documents, which the runner's spool takes without converting them
    packed_inputs: bytes = b""


def fresh(runner: Any) -> Any:
    """A shallow copy of ``runner`` with empty state of its own (adapters shared)."""
    sub = copy.copy(runner)
    sub.matrix = {}
    sub.records = []
    sub.pending = []
    sub.documentation = Documentation()
    sub.notes = list(runner.notes)
    sub.inputs = {}
    sub.spool = None  # a unit's inputs go back in its delta; the runner that merges it spools
    sub.coverage = runner.coverage.fresh()
    sub.out_of_domain = DomainTally()
    return sub


def delta_of(sub: Any, notes_before: int, *, vocab_findings: dict[str, list[Finding]] | None = None) -> Delta:
    return Delta(matrix=sub.matrix, records=sub.records, pending=sub.pending,
                 absorbers=list(sub.documentation.absorbers), vocab_findings=vocab_findings or {},
                 notes=sub.notes[notes_before:], inputs=sub.inputs, coverage=sub.coverage.observations(),
                 out_of_domain=sub.out_of_domain)


def combined(runner: Any, deltas: Any) -> Delta:
    """One delta for consecutive parts of one task, each run on its own fresh runner: what
    the whole task hands back run on one (the parts merged in order into a fresh copy of
    ``runner``, which is left as it was). ``--jobs`` cuts an adapter's every-token task
    into parts so both processes share it (:class:`harness.run.parallel.Jobs`), and the
    unit cache still keeps the task's one delta."""
    sub = fresh(runner)
    # fresh() shares these two with ``runner``: merging must not touch the run's own
    sub.vocab_findings, sub.long_reach = {}, {}
    before = len(sub.notes)
    for delta in deltas:
        merge(sub, delta)
    whole = delta_of(sub, before, vocab_findings=sub.vocab_findings)
    whole.long_reach = sub.long_reach
    return whole


def merge(runner: Any, delta: Delta) -> None:
    """Apply ``delta`` to ``runner`` (in unit order: that is what makes runs repeatable)."""
    for adapter, row in delta.matrix.items():
        for check, cell in row.items():
            mine = runner.cell(adapter, check)
            mine.inputs += cell.inputs
            mine.unsupported += cell.unsupported
            mine.explained += cell.explained
            mine.divergences.extend(cell.divergences)
    runner.records.extend(delta.records)
    runner.pending.extend(delta.pending)
    for a in delta.absorbers:
        runner.documentation.add(a.adapter, a.check, a.kind, a.text, domain=a.domain, record=a.record)
    runner.vocab_findings.update(delta.vocab_findings)
    spool = getattr(runner, "spool", None)
    inputs = delta.inputs
    if delta.packed_inputs:
        # a corpus task's (packed only where a spool receives them): spooled as they are,
        # but for the inputs this runner holds already, combined below as unpacked ones
        inputs = {**inputs, **spool.add_packed(delta.packed_inputs, runner.inputs)}
    for key, entry in inputs.items():
        if spool is not None and spool.receiving and key not in runner.inputs:  # a corpus document: onto disk
            spool.add_input(key, entry)
            continue
        held = runner.inputs.setdefault(key, {**entry, "outcomes": {}})["outcomes"]
        for adapter, outcome in entry["outcomes"].items():
            same = shared(held, outcome)
            # a new answer, once per run (not in the unit too: its delta may be pickled anyway)
            held[adapter] = same if same is not outcome else with_canonical_ids(outcome)
    for adapter, kinds in delta.long_reach.items():
        runner.long_reach.setdefault(adapter, {}).update(kinds)
    runner.coverage.add(delta.coverage, runner.selected.calls)
    runner.out_of_domain.add(delta.out_of_domain)
    for note in delta.notes:
        if note not in runner.notes:
            runner.notes.append(note)


def shared(held: dict[str, Any], outcome: Any) -> Any:
    """``outcome``, or an equal one ``held`` already has for the same input: most adapters
    agree, so one object serves them all. A long input's IDs are ~10^5 ints per adapter,
    and a default run held 20 million such IDs, three in four of them copies (issue 25).

    >>> from harness.outcomes import Outcome
    >>> held = {"tiktoken:gpt2": Outcome.ok((31373, 995))}
    >>> shared(held, Outcome.ok([31373, 995])) is held["tiktoken:gpt2"]
    True
    >>> shared(held, Outcome.ok((31373,))) is held["tiktoken:gpt2"]
    False
    """
    for mine in held.values():
        if mine == outcome:
            return mine
    return outcome


def with_canonical_ids(outcome: Any) -> Any:
    """``outcome``, its IDs through :func:`canonical_ids` when it has :data:`LONG_IDS` or more."""
    if outcome.is_ok and isinstance(outcome.value, tuple) and len(outcome.value) >= LONG_IDS:
        return replace(outcome, value=canonical_ids(outcome.value))
    return outcome


#: an outcome with at least this many IDs is held with :func:`canonical_ids`
LONG_IDS = 1024
#: the one object per ID value below this that :func:`canonical_ids` hands out (9 MB)
_TABLE_SIZE = 1 << 18
_TABLE: list[int] = []


def canonical_ids(ids: tuple[int, ...]) -> tuple[int, ...]:
    """``ids`` with one shared int object per value (below 2^18, past every vocabulary of
    the catalog). A unit's delta comes out of a pickle (the unit cache, a ``--jobs``
    process, a Dask worker), which makes a 28-byte object of every ID: a default run's
    long inputs held 3.7 million of them after the long phase (issue 25).

    >>> a, b = canonical_ids(tuple(int(s) for s in ["70000", "-1"])), canonical_ids((70000, True))
    >>> a == (70000, -1) and a[0] is b[0] and b[1] is True  # anything but an int stays itself
    True
    """
    if not _TABLE:
        _TABLE.extend(range(_TABLE_SIZE))
    table = _TABLE
    return tuple([table[i] if type(i) is int and 0 <= i < _TABLE_SIZE else i for i in ids])


def judge_delta(runner: Any, delta: Delta) -> list[DivergenceRecord]:
    """Apply one case's delta (run ahead, in parallel) and judge it at once, as
    :meth:`harness.run.runner.Runner.run_case_judged` does for a case run now."""
    before = len(runner.records)
    pending_before = len(runner.pending)
    merge(runner, delta)
    mine = runner.pending[pending_before:]
    del runner.pending[pending_before:]
    return runner.records[before:] + runner.settle(mine)
