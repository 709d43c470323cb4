"""``tokconf run``: cases and generated checks over the adapters; parity.json and a summary.

Exit 0 when there are only agreements and reproduced documented divergences, 1 when
there is an unexpected or stale divergence, 2 for usage or input errors (a bad case
file, an unknown adapter, a plugin that does not load). A run stopped by Ctrl-C or
SIGTERM still writes its report, marked incomplete, and exits 130 or 143
(:mod:`harness.cli.interrupts`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shutil
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, UsageError, apply_common
from harness.cli.interrupts import catch_stops, describe_stop, stop_exit_code
from harness.cli.corpus_phase import CorpusPhase, add_executor_options, check_executor_options
from harness.cli.inputs import add_corpus_options, corpus_options
from harness.cli.isolation import add_isolation_arguments, isolation_from_args


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "run", parents=[parent], help="run the cases and generated checks; write parity.json",
        description="Run the YAML cases and generated hostile inputs through every check over the "
                    "adapters, write reports/<run>/parity.json (and parity.html), update reports/latest/ "
                    "and print a summary. Exit 0: all as expected; 1: unexpected or stale "
                    "divergences; 2: usage or input error.",
    )
    parser.add_argument("--impl", action="append", default=[], metavar="NAME",
                        help="only this adapter (repeatable); references are added as needed")
    parser.add_argument("--encoding", action="append", default=[], metavar="ENC",
                        help="only adapters of this encoding (repeatable)")
    parser.add_argument("--cases", action="append", default=[], metavar="PATH",
                        help="case file or folder (repeatable; default: the shipped cases)")
    parser.add_argument("--no-cases", action="store_true", help="run no cases")
    parser.add_argument("--reference", action="append", default=[], metavar="ENC=NAME",
                        help="the reference adapter of an encoding (repeatable)")
    parser.add_argument("--profile", choices=["dev", "ci", "nightly"],
                        help="hypothesis profile (default: $HYPOTHESIS_PROFILE or ci)")
    parser.add_argument("--seed", type=int, help="seed of the generated inputs (default: 0 under ci)")
    parser.add_argument("--max-examples", type=int, metavar="N", help="generated inputs per fast adapter")
    parser.add_argument("--no-generated", action="store_true", help="run only the cases")
    parser.add_argument("--default-long", action="store_true",
                        help="add one 10^5-character input per class (letters, digits, spaces, whitespace, CJK, "
                             "emoji, a document) per encoding; opt-in until a default run's memory with it is "
                             "understood (--long adds the 10^6 tier)")
    parser.add_argument("--no-every-token", action="store_true",
                        help="skip the every-token phase (every ID of each reference through every adapter; "
                             "on under the ci and nightly profiles, off under dev)")
    parser.add_argument("--out", default="reports", metavar="DIR", help="reports folder (default: reports)")
    parser.add_argument("--save-new-cases", metavar="DIR",
                        help="write unexpected minimal counterexamples as YAML cases into DIR")
    parser.add_argument("--long", action="store_true",
                        help="add the long-input tier: generated runs of 10^4 to 10^6 characters (not with "
                             "--no-generated), and the cases tagged long (on under --profile nightly)")
    parser.add_argument("--shrink-seconds", type=float, default=None, metavar="SECONDS",
                        help="time bound of shrinking one finding (default 60; 0 = no bound)")
    parser.add_argument("--min-coverage", action="append", default=[], metavar="[MEASURE=]FRACTION",
                        help="fail (exit 1) when an adapter's coverage is below FRACTION; MEASURE is "
                             "alternatives (the default), pairs, vocab or merges (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--profile-harness", action="store_true",
                        help="print where the time went (adapter calls, adapter builds, the harness "
                             "itself) and peak memory; also written as harness-profile.json")
    add_isolation_arguments(parser)
    add_corpus_options(parser)
    add_executor_options(parser)
    parser.set_defaults(handler=run)


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal)."""

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty()
        self._phase = ""
        self._last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        new_phase = phase != self._phase
        finished = done >= total
        if not (new_phase or finished or (self.tty and now - self._last > 0.1)):
            return
        if new_phase and self._phase and self.tty:
            self.stream.write("\n")
        self._phase, self._last = phase, now
        width = 30
        filled = width * done // max(1, total)
        line = f"{phase:<10} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        if self.tty:
            self.stream.write("\r" + line + ("\n" if finished else ""))
        elif new_phase or finished:
            self.stream.write(line + "\n")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from harness.cases.loader import CaseFileError, case_files, default_cases_dir, is_long, load_cases
    from harness.report.parity_json import build, run_id, write_atomic
    from harness.run.runner import GenerationOptions, Runner
    from harness.run.settle import DEFAULT_SHRINK_SECONDS
    from harness.run.selection import SelectionError
    from harness.cli.selection_args import SelectionArgs, select_adapters
    from harness.generate.strategies import resolve_profile

    from harness.run.profile import HarnessProfile

    clock = HarnessProfile()
    started = _dt.datetime.now(_dt.timezone.utc)
    registry = apply_common(args)
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1, got {args.max_examples}")
    if args.shrink_seconds is not None and args.shrink_seconds < 0:
        raise UsageError(f"--shrink-seconds must be 0 (no bound) or more, got {args.shrink_seconds:g}")
    isolation = isolation_from_args(args, registry)
    corpus = corpus_options(args)
    check_executor_options(args)
    from harness.run.coverage import below_minimum, parse_minimums

    try:
        minimums = parse_minimums(args.min_coverage)
        profile = resolve_profile(args.profile)
        long = args.long or profile == "nightly"
        paths = [] if args.no_cases else (args.cases or [default_cases_dir()])
        cases = [c for c in load_cases(paths) if long or not is_long(c)] if paths else []
        files = [str(p) for p in case_files(paths)] if paths else []
        selection = SelectionArgs.from_args(args, cases)
        selected = select_adapters(selection, registry, isolation)
    except (CaseFileError, FileNotFoundError, SelectionError, ValueError) as exc:
        raise UsageError(str(exc)) from exc

    clock.mark("select")
    progress = Progress(sys.stderr, enabled=not args.quiet)
    shrink_seconds = DEFAULT_SHRINK_SECONDS if args.shrink_seconds is None else (args.shrink_seconds or None)
    runner = Runner(selected, progress=progress, jobs=args.jobs, shrink_seconds=shrink_seconds)
    runner.profile = profile
    if args.profile_harness:
        clock.instrument(selected.calls.values())
    stopped: BaseException | None = None
    # a Dask run writes its progress into its folder as it goes: the folder comes first
    folder = None if args.executor == "local" else Path(args.resume) if args.resume else _run_folder(
        Path(args.out), run_id(started))
    phase = CorpusPhase(args, runner, selection, corpus, folder=folder)
    try:
        with catch_stops():
            try:
                runner.run_vocab()
                clock.mark("vocab")
                # ci and nightly: every ID (vocab coverage 100 %); dev stays a quick look
                if not (args.no_generated or args.no_every_token) and profile != "dev":
                    from harness.run.every_token import run_phase

                    run_phase(runner)  # every ID of each reference (harness/run/every_token.py)
                    clock.mark("every-token")
                runner.run_cases(cases)
                clock.mark("cases")
                if args.profile_harness:
                    clock.instrument(selected.calls.values())  # references a case added on the way
                runner.phase = "corpus"
                phase.run()
                if not args.no_generated:
                    runner.run_generated(GenerationOptions(profile=profile, seed=args.seed,
                                                           max_examples=args.max_examples))
                clock.mark("generated")
                if long and not args.no_generated:
                    runner.run_long()
                    clock.mark("long")
                elif args.default_long and not args.no_generated:
                    # opt-in: a whole default run with it grew to 18 GB here and was
                    # OOM-killed (cause not found yet; see docs/every-token.md)
                    from harness.generate.long_inputs import DEFAULT_LONG

                    runner.run_long(DEFAULT_LONG)  # 10^5 characters per class, every default run
                    clock.mark("long")
                result = runner.finish()
                clock.mark("finish")
            except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as Stopped
                stopped = exc
                progress.enabled = False
                print(f"\ntokconf run: {describe_stop(exc)} during {runner.phase}; writing what finished",
                      file=sys.stderr)
                result = runner.finish(incomplete={"reason": describe_stop(exc), "phase": runner.phase})
    finally:
        phase.close()
        selected.close()
    finished = _dt.datetime.now(_dt.timezone.utc)
    if stopped is None and not any(cell.inputs for row in result.matrix.values() for cell in row.values()):
        raise UsageError("no check ran on any input (every adapter unavailable, or no case applies and "
                         "generation is off): nothing was tested. Run `tokconf list` to see why adapters "
                         "are unavailable, or drop --no-generated")

    argv = ["tokconf", *(getattr(args, "argv", None) or sys.argv[1:])]
    data = build(result, started=started, finished=finished, argv=argv, case_files=files)
    if phase.info() is not None:
        data["run"]["executor"] = phase.info()
    folder = folder or _run_folder(Path(args.out), run_id(started))
    from harness.report.outcome_log import LOG_FILE, write_outcome_log

    # every input's outcomes, beside the report: what `tokconf diff` compares input by input
    data["outcomes"] = {"file": LOG_FILE, "inputs": write_outcome_log(folder / LOG_FILE, result.inputs)}
    write_atomic(folder / "parity.json", data)
    _write_html(folder, data)
    latest = _update_latest(Path(args.out), folder)
    if args.save_new_cases:
        from harness.cases.writer import write_new_cases

        written = write_new_cases(args.save_new_cases, result.by_status("unexpected"), run=run_id(started))
        print(f"new cases: {written}" if written else "new cases: none (no unexpected divergence)")
    from harness.cli.summary import print_summary  # here, not at import: `tokconf list` stays quick

    print_summary(result, sys.stdout)
    short = below_minimum(result.coverage, minimums)
    for problem in short:
        print(f"coverage too low: {problem}; add inputs that reach it (cases, --profile nightly) or lower the figure")
    print(f"\nreport: {folder / 'parity.json'}" + (f" (latest: {latest})" if latest else ""))
    if args.profile_harness:
        clock.mark("report")
        clock.add_builds(registry.build_seconds, registry.build_cpu_seconds)
        write_atomic(folder / "harness-profile.json", clock.summary())
        clock.report(sys.stderr)
    if stopped is not None:
        return stop_exit_code(stopped)
    for lost in phase.lost:
        print(f"shard lost: {lost}", file=sys.stderr)
    return EXIT_DIVERGENCE if result.failed or short or phase.lost else EXIT_OK


def _run_folder(out: Path, name: str) -> Path:
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
