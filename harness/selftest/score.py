"""The mutation score: the default checks against every planted fault, caught or missed.

:func:`run_selftest` registers each fault of :data:`FAULTS` as an adapter
``selftest:<fault>`` claiming cl100k_base, runs what ``tokconf run`` runs on it (the
vocabulary check, the shipped cases, the generated inputs of the profile) with
``tiktoken:cl100k_base`` as the reference, and calls a fault *caught* when it produced an
unexpected divergence. For each caught fault the smallest few findings (by input size,
one per check) are shrunk as a run would shrink them, and the smallest result is its
minimal input. The reference itself must come out clean, or the score means nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from harness.cases.loader import is_long, load_cases
from harness.registry import AdapterSpec, Family, Registry
from harness.run.runner import Candidate, GenerationOptions, Runner, case_adapter_names
from harness.run.selection import select
from harness.selftest.faults_api import API_FAULTS
from harness.selftest.faults_dropin import DROPIN_FAULTS
from harness.selftest.faults_text import MERGE_FAULTS, SPLIT_FAULTS
from harness.selftest.mutant import ENCODING, Mutant

__all__ = ["FAULTS", "SMALL", "Score", "Verdict", "dropin_family", "family", "run_selftest"]

FAULTS: list[type[Mutant]] = [*SPLIT_FAULTS, *MERGE_FAULTS, *API_FAULTS, *DROPIN_FAULTS]
#: A minimal input this short (in characters) counts as small.
SMALL = 12
#: Findings shrunk per caught fault (the smallest, one per check).
SHRUNK_PER_FAULT = 3
REFERENCE = f"tiktoken:{ENCODING}"


@dataclass(frozen=True)
class Verdict:
    fault: str
    area: str
    summary: str
    caught: bool
    check: str | None = None
    kind: str | None = None
    text: str | None = None
    #: the command that shows it (``tokconf decode ... -- IDS`` when IDs, not a text, show it)
    reproduce: str | None = None
    #: why no small input exists, from the fault itself
    not_small: str | None = None
    #: every check that saw the fault on that input (a divergence groups its symptoms)
    checks: tuple[str, ...] = ()

    @property
    def by_ids(self) -> bool:
        """Shown by an ID list alone (a decode probe, a vocabulary ID), with no text."""
        return _by_ids(self.text or "", self.reproduce or "")

    @property
    def small(self) -> bool:
        return self.text is not None and not self.by_ids and len(self.text) <= SMALL


@dataclass(frozen=True)
class Score:
    verdicts: tuple[Verdict, ...]
    profile: str
    seconds: float
    #: unexpected divergences of the reference itself (should be none)
    reference_problems: tuple[str, ...] = ()

    @property
    def caught(self) -> int:
        return sum(v.caught for v in self.verdicts)

    @property
    def total(self) -> int:
        return len(self.verdicts)


def family(faults: Sequence[type[Mutant]] = FAULTS) -> Family:
    """The faults as adapters ``selftest:<fault>`` (built lazily, like any family)."""
    return Family(kind="selftest", specs=lambda: [
        AdapterSpec(name=f"selftest:{f.fault}", encoding=ENCODING, factory=f, library="tiktoken",
                    description=f.summary)
        for f in faults
    ])


def dropin_family() -> Family:
    """Only the drop-in API faults (:mod:`harness.selftest.faults_dropin`), e.g. for
    ``pytest --tokconf-plugin harness.selftest.score:dropin_family``."""
    return family(DROPIN_FAULTS)


def run_selftest(*, profile: str = "ci", faults: Sequence[type[Mutant]] = FAULTS,
                 progress: Callable[[str, int, int], None] | None = None,
                 max_shrink_calls: int = 800) -> Score:
    started = time.perf_counter()
    registry = Registry()
    registry.load_entry_points()
    # named as a plugin, so the reproduce commands carry --plugin and work as printed
    registry.add(family(faults), provider="plugin harness.selftest.score:family")
    # the long cases are --long's, as in a default run: a million spaces walked through
    # tiktoken's API surface was 27 s of each drop-in fault's 52 s
    cases = [case for case in load_cases() if not is_long(case)]
    names = [f"selftest:{f.fault}" for f in faults]
    selected = select(registry, impls=names, case_adapters=case_adapter_names(cases))
    runner = Runner(selected, progress=progress, max_shrink_calls=max_shrink_calls)
    runner.run_vocab()
    runner.run_cases(cases)
    runner.run_generated(GenerationOptions(profile=profile))
    # what a documented divergence already explains on its own input is not the fault's
    pending = [c for c in runner.take_pending() if runner.documentation.absorber_for(c.finding) is None]
    chosen = _smallest_per_fault(pending)
    runner.settle(chosen)
    by_fault = {name: [r for r in runner.records if r.adapter == name and r.status == "unexpected"] for name in names}
    verdicts = []
    for fault in faults:
        # a text shows a fault better than an ID list; then the shortest
        records = sorted(by_fault[f"selftest:{fault.fault}"],
                         key=lambda r: (_by_ids(r.text, r.evidence.reproduce), len(r.text), r.check))
        best = records[0] if records else None
        verdicts.append(Verdict(
            fault=fault.fault, area=fault.area, summary=fault.summary, caught=bool(records),
            check=best.check if best else None, kind=best.kind if best else None,
            text=best.text if best else None, reproduce=best.evidence.reproduce if best else None,
            not_small=fault.not_small,
            checks=tuple(dict.fromkeys(c for c, _, _ in best.symptoms)) if best else (),
        ))
    reference = tuple(f"{c.finding.check} [{c.finding.kind}] on {c.finding.text!r}"
                      for c in pending if c.finding.adapter == REFERENCE)
    return Score(tuple(verdicts), profile, time.perf_counter() - started, reference)


def _smallest_per_fault(pending: list[Candidate]) -> list[Candidate]:
    """Per adapter, the smallest candidate of each check, the :data:`SHRUNK_PER_FAULT` smallest of those."""
    per_check: dict[tuple[str, str], Candidate] = {}
    for candidate in pending:
        key = (candidate.finding.adapter, candidate.finding.check)
        current = per_check.get(key)
        if current is None or _size(candidate) < _size(current):
            per_check[key] = candidate
    per_adapter: dict[str, list[Candidate]] = {}
    for (adapter, _), candidate in sorted(per_check.items()):
        per_adapter.setdefault(adapter, []).append(candidate)
    chosen = []
    for candidates in per_adapter.values():
        chosen += sorted(candidates, key=_size)[:SHRUNK_PER_FAULT]
    return chosen


def _by_ids(text: str, reproduce: str) -> bool:
    # `tokconf call ... decode_bytes -- IDS` shows a vocabulary finding by its IDs as well
    return not text and (reproduce.startswith("tokconf decode") or " decode_bytes -- " in reproduce)


def _size(candidate: Candidate) -> tuple[int, int, int, str]:
    finding = candidate.finding
    by_ids = finding.decode_ids is not None and not finding.text
    return (int(by_ids), len(finding.text), 0 if finding.shrinkable else 1, finding.text)
