"""Run a :class:`~harness.engine.plan.Plan`: adapters, phases, judging, and the reports it writes.

This is what every front door calls once it has a plan: ``tokconf run``
(:mod:`harness.cli.run_cmd`) and the Python API (``from harness import Plan, execute``).
The flow is the data flow of DESIGN.md: the plan's adapters are built
(:mod:`harness.run.choice`), its phases (:mod:`harness.engine.phases`) hand their inputs to
the runner as units, the plan's executor runs them (in process, ``jobs`` processes, or
Dask: :mod:`harness.run.parallel`), their deltas merge in unit order into one
:class:`~harness.run.result.RunResult`, and the reports are written from it
(parity.json, parity.html, the outcome log, ``latest``, new cases).

A stop (Ctrl-C; SIGTERM when the caller turns it into a KeyboardInterrupt, as
:func:`harness.cli.interrupts.catch_stops` does) still writes the report, marked
incomplete; :attr:`RunOutcome.stopped` carries it.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.engine.plan import Plan, PlanError

__all__ = ["RunOutcome", "execute", "prepare", "write_reports"]

ProgressFn = Callable[[str, int, int], None]


@dataclass
class RunOutcome:
    """What a run produced. ``exit_code``: 0 all as expected, 1 unexpected or stale
    divergences, a coverage minimum missed or a shard lost; a stopped run's is the caller's."""

    result: Any
    data: dict[str, Any]
    folder: Path
    latest: Path | None
    new_cases: Path | None = None
    #: coverage minimums missed (``Outputs.min_coverage``)
    short: list[str] = field(default_factory=list)
    #: corpus shards a Dask cluster gave up on
    lost: list[str] = field(default_factory=list)
    #: the KeyboardInterrupt that stopped the run, if one did
    stopped: BaseException | None = None
    profile: Any = None

    @property
    def verdict(self) -> Any:
        """The run's :class:`~harness.report.verdict.Verdict`, decided from parity.json alone."""
        from harness.report.verdict import verdict_of

        return verdict_of(self.data)

    @property
    def exit_code(self) -> int:
        # one function decides: the exit code, the page and the terminal cannot disagree (issue 21)
        return self.verdict.exit_code


@dataclass
class Prepared:
    """A plan's adapters and cases, built and loaded (what the phases and pytest items need)."""

    plan: Plan
    registry: Any
    cases: list[Any]
    case_files: list[str]
    selected: Any
    profile: str
    choice: Any
    isolation: Any = None


def prepare(plan: Plan, *, require: bool = True) -> Prepared:
    """Load the cases and build the adapters (raises :class:`PlanError` for bad input;
    ``require=False``: an adapter asked for that cannot run is left for the caller to report)."""
    from harness.cases.loader import CaseFileError, case_files, check_adapter_kinds, is_long, load_cases
    from harness.generate.strategies import resolve_profile
    from harness.run.choice import ChoiceError, build_registry, claim_encoding, isolation_for, select_for
    from harness.run.selection import SelectionError

    choice = plan.adapters
    try:
        registry = build_registry(plugin=choice.plugin, vocab_dir=choice.vocab_dir,
                                  source_root=choice.source_root, impl=choice.impl,
                                  encoding_file=choice.encoding_file)
        # before the isolation set-up copies the registry's claims into the workers: an
        # hf-json file of an open-weight model matches no pinned vocabulary, so a worker
        # without its claim would judge it unclaimed
        claim_encoding(registry, list(choice.impl), list(choice.encoding))
        isolation = isolation_for(choice, registry)
        profile = resolve_profile(plan.profile)
        long = plan.long or profile == "nightly"
        paths = plan.case_paths()
        cases = [c for c in load_cases(paths) if long or not is_long(c)] if paths else []
        # a documented entry naming a kind nothing registers (`tiktokn:*`) is a load error
        check_adapter_kinds(cases, registry.kinds())
        files = [str(p) for p in case_files(paths)] if paths else []
        from dataclasses import replace

        from harness.run.choice import case_adapter_names

        choice = replace(choice, case_adapters=tuple(case_adapter_names(cases)),
                         case_references=tuple(c.reference for c in cases if c.reference))
        selected = select_for(choice, registry, isolation, require=require)
    except (ChoiceError, CaseFileError, FileNotFoundError, SelectionError, ValueError) as exc:
        raise PlanError(str(exc)) from exc
    return Prepared(plan, registry, cases, files, selected, profile, choice, isolation)


def execute(plan: Plan, *, progress: ProgressFn | None = None, quiet: bool = True,
            on_stop: Callable[[], None] | None = None) -> RunOutcome:
    """Run ``plan`` and write its reports; the outcome (raises :class:`PlanError` for bad input).

    ``on_stop``: called when a stop (``KeyboardInterrupt``) is caught, before the partial
    report is written (``tokconf run`` says there that the stop was not lost:
    :func:`harness.cli.interrupts.stop_seen`)."""
    from harness.report.parity_json import run_id, write_atomic
    from harness.engine.corpus import CorpusPhase
    from harness.run.coverage import below_minimum
    from harness.engine.phases import PHASES, RunContext
    from harness.run.profile import HarnessProfile
    from harness.run.runner import Runner

    clock = HarnessProfile()
    started = _dt.datetime.now(_dt.timezone.utc)
    ready = prepare(plan)
    selected = ready.selected
    clock.mark("select")
    runner = Runner(selected, progress=progress, jobs=plan.executor.jobs, shrink_seconds=plan.limits.shrink_seconds,
                    max_shrink_calls=plan.limits.max_shrink_calls)
    runner.profile = ready.profile
    clock.jobs = runner.jobs.jobs
    if plan.cache:
        from harness.run.unit_cache import UnitCache

        runner.unit_cache = UnitCache.open()
    # a skip is part of what was (not) tested: the run's notes carry it to the summary and report
    runner.notes.extend(f"--corpus: left out {file}, which is not UTF-8 (--skip-non-utf8)"
                        for file in sorted(getattr(plan.corpus_options, "skip", ()) or ()))
    if plan.outputs.profile_harness:
        clock.instrument(selected.calls.values())
    stopped: BaseException | None = None
    out = Path(plan.outputs.out)
    # a Dask run writes its progress into its folder as it goes: the folder comes first
    # and so does a corpus run, whose documents' outcomes are spooled there (issue 25)
    folder = Path(plan.executor.resume) if plan.executor.resume else \
        run_folder(out, run_id(started)) if plan.executor.kind != "local" or plan.corpus else None
    try:
        corpus = CorpusPhase(plan, runner, ready.choice, folder=folder, progress=not quiet)
        ctx = RunContext(plan=plan, runner=runner, cases=ready.cases, corpus=corpus, profile=ready.profile)
        try:
            try:
                corpus.start()  # the executor's cluster, before any phase hands it units
                for name, phase in PHASES.items():
                    ran = phase.execute(ctx) if name in plan.phases else False
                    if phase.mark and (ran or phase.always_mark):
                        clock.mark(phase.mark)
                    if name == "cases" and plan.outputs.profile_harness:
                        clock.instrument(selected.calls.values())  # references a case added on the way
                result = runner.finish()
                clock.mark("finish")
            except corpus.errors as exc:  # e.g. a Dask worker that cannot build the adapters
                raise PlanError(str(exc)) from exc
            except KeyboardInterrupt as exc:  # Ctrl-C, or a stop signal the caller turned into one
                if on_stop is not None:
                    on_stop()
                stopped = exc
                if progress is not None and hasattr(progress, "enabled"):
                    progress.enabled = False
                reason = str(exc) or "interrupted by SIGINT (Ctrl-C)"
                print(f"\ntokconf run: {reason} during {runner.phase}; writing what finished", file=sys.stderr)
                # the shell's code for the signal (130 SIGINT, 143 SIGTERM): the verdict returns it
                signum = int(getattr(exc, "signum", signal.SIGINT))
                result = runner.finish(incomplete={"reason": reason, "phase": runner.phase, "exit_code": 128 + signum})
                from harness.report.verdict import unrun_cases_note

                note = unrun_cases_note(ready.cases, result.inputs)
                if note is not None:
                    result.notes.append(note)
        finally:
            corpus.close()
            selected.close()
        finished = _dt.datetime.now(_dt.timezone.utc)
        if stopped is None and not any(cell.inputs for row in result.matrix.values() for cell in row.values()):
            raise PlanError("no check ran on any input (every adapter unavailable, or no case applies and "
                            "generation is off): nothing was tested. Run `tokconf list` to see why adapters "
                            "are unavailable, or drop --no-generated")

        short = below_minimum(result.coverage, dict(plan.outputs.min_coverage))
        limits = limits_of(result, runner, ready.isolation, shrink_seconds=plan.limits.shrink_seconds,
                           shrank=stopped is None)
        data, folder, latest = write_reports(result, plan=plan, started=started, finished=finished,
                                             case_files=ready.case_files, executor=corpus.info(), folder=folder,
                                             limits=limits, coverage_below=short, lost_shards=list(corpus.lost),
                                             update_latest=stopped is None, cache=runner.unit_cache)
        new_cases = None
        if plan.outputs.save_new_cases:
            from harness.cases.writer import write_new_cases

            new_cases = write_new_cases(plan.outputs.save_new_cases, result.by_status("unexpected"),
                                        run=run_id(started))
        if plan.outputs.profile_harness:
            clock.mark("report")
            clock.add_builds(ready.registry.build_seconds, ready.registry.build_cpu_seconds)
            summary = clock.summary()  # after the report, so latest/ (copied with it) gets it here
            for where in (folder, latest) if latest is not None else (folder,):
                write_atomic(where / "harness-profile.json", summary)
        return RunOutcome(result=result, data=data, folder=folder, latest=latest, new_cases=new_cases, short=short,
                          lost=corpus.lost, stopped=stopped, profile=clock)
    except PlanError:
        if plan.executor.kind == "local" and folder is not None:
            shutil.rmtree(folder, ignore_errors=True)  # made for the corpus's spool: nothing to keep
        raise


def limits_of(result: Any, runner: Any, isolation: Any, *, shrink_seconds: float | None,
              shrank: bool = True) -> dict[str, Any]:
    """The report's ``limits``: every budget and cap that bounded what ``runner`` ran."""
    from harness.report.parity_json import run_limits

    return run_limits(result, shrink_calls=runner.max_shrink_calls if shrank else 0, shrink_seconds=shrink_seconds,
                      long_reach=runner.long_reach, long_declared=runner.long_declared,
                      isolation=None if isolation is None else {"mode": isolation.mode, "timeout_s": isolation.timeout_s,
                                                                "memory_limit_mb": isolation.memory_limit_mb})


def write_reports(result: Any, *, plan: Plan, started: _dt.datetime, finished: _dt.datetime,
                  case_files: list[str], executor: dict[str, Any] | None = None,
                  folder: Path | None = None, limits: dict[str, Any] | None = None,
                  coverage_below: list[str] | None = None, lost_shards: list[str] | None = None,
                  update_latest: bool = True, cache: Any = None) -> tuple[dict[str, Any], Path, Path | None]:
    """parity.json, the outcome log, parity.html and ``latest`` of a finished run (every
    front door writes them here, so the same result gives the same files). An interrupted
    run (``update_latest=False``) is not the state of the project: ``latest`` stays."""
    from harness.report.outcome_log import LOG_FILE, write_outcome_log
    from harness.report.parity_json import build, run_id, write_atomic

    data = build(result, started=started, finished=finished, argv=list(plan.outputs.argv), case_files=case_files,
                 limits=limits, minimums=dict(plan.outputs.min_coverage), coverage_below=coverage_below or [],
                 lost_shards=[str(x) for x in lost_shards or []])
    if executor is not None:
        data["run"]["executor"] = executor
    # which adapters' units were read, not asked: a reader must be able to tell
    data["run"]["cache"] = cache.to_json() if cache is not None else {"used": False}
    if plan.outputs.ladders:  # each release's divergences folded across the ladder (issue 22)
        from harness.report.ladder import ladder_sections

        data["ladders"] = ladder_sections(data, plan.outputs.ladders)
    if "everyday" in plan.phases:
        from harness.generate.everyday import build as build_everyday
        from harness.generate.strategies import resolve_profile

        # the plan's everyday corpus: its documents are a function of profile and versions
        data["run"]["everyday"] = build_everyday(profile=resolve_profile(plan.profile)).summary()
    out = Path(plan.outputs.out)
    folder = folder or run_folder(out, run_id(started))
    # every input's outcomes, beside the report: what `tokconf diff` compares input by input
    data["outcomes"] = {"file": LOG_FILE, "inputs": write_outcome_log(folder / LOG_FILE, result.inputs,
                                                                    spooled=result.spooled)}
    write_atomic(folder / "parity.json", data)
    _write_html(folder, data)
    return data, folder, _update_latest(out, folder) if update_latest else None


def run_folder(out: Path, name: str) -> Path:
    folder, n = out / name, 1
    while folder.exists():
        folder = out / f"{name}-{n}"
        n += 1
    folder.mkdir(parents=True)
    return folder


def _write_html(folder: Path, data: dict[str, Any]) -> None:
    try:
        from harness.report.page import render_report
    except ImportError:
        return  # the report module is optional: parity.json is the product of a run
    try:
        page = render_report(data)
    except Exception as exc:  # noqa: BLE001 - the JSON is written; say why the page is not
        print(f"tokconf run: warning: parity.html not written: {type(exc).__name__}: {exc}", file=sys.stderr)
        return
    tmp = folder / "parity.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(folder / "parity.html")


def _update_latest(out: Path, folder: Path) -> Path | None:
    """Copy the run into ``out/latest`` (replacing it); a copy works everywhere, a link does not."""
    latest = out / "latest"
    staging = out / ".latest.tmp"
    try:
        if staging.exists():
            shutil.rmtree(staging)
        shutil.copytree(folder, staging)
        if latest.is_symlink() or latest.is_file():
            latest.unlink()
        elif latest.exists():
            shutil.rmtree(latest)
        staging.replace(latest)
    except OSError as exc:
        print(f"tokconf run: warning: {latest} not updated: {exc}", file=sys.stderr)
        return None
    return latest
