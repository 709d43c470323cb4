"""The conformance suite as the pytest plugin runs it: one engine per session.

A :class:`Suite` loads the cases, builds the adapters and chooses references exactly as
``tokconf run`` does (:mod:`harness.run.selection`), then runs every case that documents a
divergence once, so the documented divergences and their input domains are known before
any item is judged (a finding is explained only if its shrunk input is a documented
divergence's own input or lies in its domain: :mod:`harness.run.judging`). Items then
ask it:

- :meth:`Suite.judge_case`: one case over its adapters -> documented, stale and
  unexpected records (unexpected ones already shrunk);
- :meth:`Suite.vocab_records`: the unexpected vocabulary findings of one adapter;
- :meth:`Suite.first_unexplained`: for one generated text, the first finding that fails
  (what a hypothesis test raises on), and :meth:`Suite.minimal_record` to shrink it
  further and gather its evidence for the failure message.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from hypothesis import settings
from hypothesis import strategies as st

from harness.cases.model import Case
from harness.checks.base import ORDINARY, Finding, Subject
from harness.checks import run_text_check
from harness.escapes import escape_text
from harness.generate.minimise import shrink_finding
from harness.run.result import DivergenceRecord
from harness.generate.budget import share_budget
from harness.run.parallel import judge_delta
from harness.run.runner import GENERATED_CHECKS, Runner, case_adapter_names
from harness.run.settle import Candidate
from harness.run.selection import Selected
from harness.generate.strategies import (
    alphabet_text,
    hostile_atoms,
    hostile_text,
    profile_settings,
    resolve_profile,
)

__all__ = ["Suite", "SuiteError", "SuiteOptions", "describe_record"]


class SuiteError(Exception):
    """Bad options or inputs for the suite (a usage error for pytest)."""


@dataclass(frozen=True)
class SuiteOptions:
    impls: tuple[str, ...] = ()
    encodings: tuple[str, ...] = ()
    #: case files or folders; ``None`` = the shipped cases
    cases: tuple[str, ...] | None = None
    plugins: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    profile: str | None = None
    generated: bool = True
    #: seconds of generated checking per adapter before slower adapters get fewer examples
    time_budget_s: float = 12.0
    #: processes for the pre-pass and the case items (``--tokconf-jobs``)
    jobs: int = 1
    #: ``auto`` (foreign adapters in workers), ``all`` or ``none``; the workers' limits
    isolate: str = "auto"
    timeout_s: float = 60.0
    memory_limit_mb: int | None = 4096
    #: the cases tagged long too (also under the nightly profile)
    long: bool = False


class Suite:
    """Built lazily: collection needs the cases and adapters, not the pre-pass."""

    def __init__(self, options: SuiteOptions) -> None:
        self.options = options
        try:
            self.profile = resolve_profile(options.profile)
        except ValueError as exc:
            raise SuiteError(str(exc)) from exc

    @cached_property
    def _loaded(self) -> tuple[list[Case], list[str], Selected]:
        from harness.cases.loader import CaseFileError, case_files, default_cases_dir, load_cases
        from harness.registry import RegistryError, default_registry
        from harness.run.selection import SelectionError, parse_references, select

        from harness.worker.setup import Isolation, WorkerSetup

        try:
            registry = default_registry(plugins=self.options.plugins)
            paths = list(self.options.cases) if self.options.cases is not None else [default_cases_dir()]
            long = self.options.long or self.profile == "nightly"
            cases = [c for c in load_cases(paths) if long or not c.long]
            isolation = Isolation(mode=self.options.isolate, timeout_s=self.options.timeout_s,  # type: ignore[arg-type]
                                  memory_limit_mb=self.options.memory_limit_mb,
                                  setup=WorkerSetup.from_registry(registry))
            files = [str(p) for p in case_files(paths)]
            selected = select(
                registry, impls=self.options.impls, encodings=self.options.encodings,
                references=parse_references(self.options.references),
                case_adapters=case_adapter_names(cases),
                case_references=[c.reference for c in cases if c.reference],
                isolation=isolation,
            )
            self.required = [*self.options.impls, *registry.plugin_names()]
        except (RegistryError, CaseFileError, FileNotFoundError, SelectionError) as exc:
            raise SuiteError(str(exc)) from exc
        return cases, files, selected

    @property
    def cases(self) -> list[Case]:
        return self._loaded[0]

    @property
    def case_files(self) -> list[str]:
        return self._loaded[1]

    @property
    def selected(self) -> Selected:
        return self._loaded[2]

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

    @cached_property
    def judge(self) -> Runner:
        """A runner that knows every documented kind and the vocabulary findings."""
        scout = Runner(self.selected, jobs=self.options.jobs)
        scout.run_vocab()
        scout.run_cases([case for case in self.cases if case.documented])
        scout.jobs.close()
        judge = Runner(self.selected, jobs=self.options.jobs)
        judge.documentation = scout.documentation
        judge.vocab_findings = scout.vocab_findings
        return judge

    @cached_property
    def _case_deltas(self) -> dict[str, object]:
        """With --tokconf-jobs N: every case run ahead in parallel, judged item by item."""
        judge = self.judge
        deltas = judge.jobs.deltas("cases", [((case,), judge._vocab_for([case])) for case in self.cases])
        return {case.id: delta for case, delta in zip(self.cases, deltas)}

    def judge_case(self, case: Case) -> list[DivergenceRecord]:
        if self.options.jobs > 1:
            delta = self._case_deltas.pop(case.id, None)
            if delta is not None:
                return judge_delta(self.judge, delta)
        return self.judge.run_case_judged(case)

    def close(self) -> None:
        """End the --tokconf-jobs processes and the workers (at the end of the session)."""
        if "judge" in self.__dict__:
            self.judge.jobs.close()
        if "_loaded" in self.__dict__:
            self.selected.close()

    def vocab_records(self, name: str) -> list[DivergenceRecord]:
        judge = self.judge
        reference = self.reference_of(name)
        findings = judge.vocab_findings.get(name, [])
        return judge.settle([Candidate(f, ORDINARY, reference, "generated", None) for f in findings])

    @cached_property
    def _every_token_plans(self) -> dict[str, object]:
        from harness.run.every_token import plans_for

        return {plan.encoding: plan for plan in plans_for(self.selected)}

    def every_token_records(self, name: str) -> list[DivergenceRecord]:
        """The every-token phase for one adapter (the slices ``tokconf run`` runs),
        judged: its unexpected records, shrunk."""
        from harness.run.every_token import run_slice

        judge = self.judge
        plan = self._every_token_plans.get(self.selected.calls[name].info.encoding)
        if plan is None:
            return []
        before = len(judge._pending)
        for token_slice in plan.slices:  # type: ignore[attr-defined]
            run_slice(judge, token_slice, [name])
        mine = judge._pending[before:]
        del judge._pending[before:]
        return judge.settle(mine)

    def long_records(self, name: str) -> list[DivergenceRecord]:
        """The default run's long inputs (10^5 characters per class) on one adapter with
        its reference, as ``tokconf run`` climbs them (:mod:`harness.run.long_tier`), judged."""
        from harness.generate.long_inputs import DEFAULT_LONG
        from harness.run.long_tier import LongUnit, run_unit

        judge = self.judge
        calls = self.selected.calls[name]
        reference = self.reference_of(name)
        if calls.info.capabilities.alphabet is not None:
            return []  # a closed vocabulary has no long runs of these characters
        before = len(judge._pending)
        adapters = (reference,) if name == reference else (reference, name)
        for kind in DEFAULT_LONG.kinds:
            run_unit(judge, LongUnit(kind, adapters, reference, DEFAULT_LONG))
        mine = [c for c in judge._pending[before:] if c.finding.adapter == name]
        del judge._pending[before:]
        return judge.settle(mine)

    # -- generated ----------------------------------------------------------------------

    def strategy(self, name: str) -> st.SearchStrategy[str]:
        calls = self.selected.calls[name]
        alphabet = calls.info.capabilities.alphabet
        if alphabet is not None:
            return alphabet_text(alphabet)
        group = self.selected.group(calls.info.encoding)
        # the group's own split patterns are one more category, as in `tokconf run`
        patterns = [p for a in group if (p := a.info.split_pattern)]
        return hostile_text(sorted({lit for a in group for lit, _ in a.info.special_tokens}), patterns=patterns)

    def atoms(self, name: str) -> list[str]:
        """The fixed hostile atoms the runner also tries first (see ``hostile_atoms``)."""
        calls = self.selected.calls[name]
        alphabet = calls.info.capabilities.alphabet
        if alphabet is not None:
            return hostile_atoms(alphabet=alphabet)
        group = self.selected.group(calls.info.encoding)
        return hostile_atoms(sorted({lit for a in group for lit, _ in a.info.special_tokens}))

    def settings_for(self, name: str) -> settings:
        profile = profile_settings(self.profile)
        halvings = self.selected.calls[name].info.capabilities.generated_halvings  # declared, never timed
        budget = share_budget(halvings, max_examples=profile.max_examples)
        return settings(profile, max_examples=budget, report_multiple_bugs=False)

    def first_unexplained(self, text: str, name: str) -> Finding | None:
        adapter = self.selected.calls[name]
        reference = self.selected.calls[self.reference_of(name)]
        adapter.reset()
        reference.reset()
        if not (adapter.in_domain(text) and reference.in_domain(text)):
            return None
        for check in GENERATED_CHECKS:
            result = run_text_check(check, Subject(text, ORDINARY, adapter, reference))
            if isinstance(result, Finding):
                unexplained = self.unexplained(result)
                if unexplained is not None:
                    return unexplained
        return None

    def unexplained(self, finding: Finding) -> Finding | None:
        """Judge ``finding`` as the runner does: shrink it, then ask the documented
        divergences whether its minimal input lies in what they declare. Returns the
        shrunk finding if nothing documents it."""
        documentation = self.judge.documentation
        if documentation.adapter_wide_for(finding) is not None:
            return None
        adapter = self.selected.calls[finding.adapter]
        reference = self.selected.calls[self.reference_of(finding.adapter)]
        smallest = shrink_finding(finding, adapter, reference, ORDINARY)
        return None if documentation.absorber_for(smallest) is not None else smallest

    def minimal_record(self, finding: Finding) -> DivergenceRecord:
        """Shrink again (a no-op on an already shrunk finding) and gather the evidence."""
        adapter = self.selected.calls[finding.adapter]
        reference = self.selected.calls[self.reference_of(finding.adapter)]
        smallest = shrink_finding(finding, adapter, reference, ORDINARY)
        return self.judge.record(smallest, adapter, reference, status="unexpected", origin="generated", case=None)


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

