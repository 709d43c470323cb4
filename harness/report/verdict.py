"""The verdict of a run: PASS or FAIL, one line of reason, and the exit code.

One function decides, from parity.json alone (:func:`verdict_of`): ``tokconf run``
returns its exit code, writes it into parity.json (``verdict``), prints its line last,
and the page shows it. Before this module the page judged from the cell counts and the
command from the divergences, the coverage minimums and lost shards, so a run could exit
1 under a green "PASS" (issue 21). Nothing else may decide whether a run passed.

The order of the reasons is the order a reader must act on them: an interrupted run
says so first (its exit code is the shell's for the signal: 130, 143), then unexpected
and stale divergences, coverage below a ``--min-coverage`` minimum, and corpus shards a
Dask run lost. Every reason found is in ``reasons``; ``reason`` joins them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = ["Verdict", "decide", "unrun_cases_note", "verdict_of"]

EXIT_OK = 0
EXIT_DIVERGENCE = 1


@dataclass(frozen=True)
class Verdict:
    """What a run comes to; ``word`` is PASS, FAIL or INCOMPLETE."""

    word: str
    reasons: tuple[str, ...]
    exit_code: int

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    @property
    def line(self) -> str:
        """The terminal's and the page's one line: ``FAIL: 2 unexpected divergences``."""
        return f"{self.word}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"result": self.word, "reason": self.reason, "exit_code": self.exit_code}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def decide(*, unexpected: int, stale: int, coverage_short: Sequence[str] = (), lost_shards: Sequence[str] = (),
           incomplete: Mapping[str, Any] | None = None) -> Verdict:
    """The verdict from the counts that decide it.

    >>> decide(unexpected=0, stale=0).line
    'PASS: only agreements and documented divergences'
    >>> v = decide(unexpected=2, stale=1, coverage_short=["a: x"])
    >>> v.line, v.exit_code
    ('FAIL: 2 unexpected divergences, 1 stale divergence; coverage below its minimum: a: x', 1)
    >>> v = decide(unexpected=0, stale=0, incomplete={"reason": "interrupted by SIGTERM", "phase": "cases",
    ...                                                 "exit_code": 143})
    >>> v.word, v.exit_code, v.reasons[0]
    ('INCOMPLETE', 143, 'interrupted by SIGTERM during cases: only what finished was checked')
    """
    reasons: list[str] = []
    if incomplete is not None:
        reasons.append(f"{incomplete['reason']} during {incomplete['phase']}: only what finished was checked")
    if unexpected or stale:
        parts = ([_plural(unexpected, "unexpected divergence")] if unexpected else []) + (
            [_plural(stale, "stale divergence")] if stale else [])
        reasons.append(", ".join(parts))
    if coverage_short:
        reasons.append("coverage below its minimum: " + "; ".join(coverage_short))
    if lost_shards:
        reasons.append(f"{_plural(len(lost_shards), 'corpus shard')} lost: " + ", ".join(lost_shards))
    if incomplete is not None:
        # the shell's status for the signal, so a script cannot take it for a pass
        return Verdict("INCOMPLETE", tuple(reasons), int(incomplete.get("exit_code", EXIT_DIVERGENCE)))
    if reasons:
        return Verdict("FAIL", tuple(reasons), EXIT_DIVERGENCE)
    return Verdict("PASS", ("only agreements and documented divergences",), EXIT_OK)


def verdict_of(data: Mapping[str, Any]) -> Verdict:
    """The verdict of a parity.json document (schema_version 2 or 3).

    Unexpected and stale are counted as divergences (what fails), not as matrix cells.
    """
    statuses = [d["status"] for d in data.get("divergences", ())]
    run = data.get("run", {})
    coverage = run.get("coverage_minimums") or {}
    return decide(unexpected=statuses.count("unexpected"), stale=statuses.count("stale"),
                  coverage_short=list(coverage.get("below", ())), lost_shards=list(run.get("lost_shards", ())),
                  incomplete=run.get("incomplete"))


def unrun_cases_note(cases: Sequence[Any], inputs: Mapping[Any, Mapping[str, Any]]) -> str | None:
    """An interrupted run: which cases never ran, so what their documented entries would
    have explained was judged without them (and counted as unexpected). None if all ran.

    >>> class C:
    ...     def __init__(self, id, documented=()): self.id, self.documented = id, documented
    >>> unrun_cases_note([C("a"), C("b", documented=[1, 2])], {("x", None): {"case": "a"}})
    '2 documented entries of 1 of 2 cases were never judged (the run stopped before case b): findings they explain are counted as unexpected here'
    """
    ran = {entry.get("case") for entry in inputs.values()}
    unrun = [c for c in cases if c.id not in ran]
    if not unrun:
        return None
    entries = sum(len(c.documented) for c in unrun)
    named = ", ".join(c.id for c in unrun[:3]) + (", ..." if len(unrun) > 3 else "")
    return (f"{entries} documented entries of {len(unrun)} of {len(cases)} cases were never judged (the run stopped "
            f"before case{'s' if len(unrun) > 1 else ''} {named}): findings they explain are counted as unexpected here")
