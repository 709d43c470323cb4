"""``tokconf run``: cases and generated checks over the adapters; parity.json and a summary.

A front door: the flags become a :class:`~harness.engine.plan.Plan` (:func:`plan_from_args`)
and :func:`harness.engine.execute.execute` runs it; this module only prints.

Exit 0 when there are only agreements and reproduced documented divergences, 1 when
there is an unexpected or stale divergence, 2 for usage or input errors (a bad case
file, an unknown adapter, a plugin that does not load). A run stopped by Ctrl-C or
SIGTERM still writes its report, marked incomplete, and exits 130 or 143
(:mod:`harness.cli.interrupts`).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from harness.cli import UsageError
from harness.cli.interrupts import catch_stops, raise_if_stopped, stop_seen
from harness.cli.corpus_phase import add_executor_options, check_executor_options
from harness.cli.inputs import add_corpus_options, corpus_options
from harness.cli.isolation import add_isolation_arguments, default_jobs
from harness.cli.ladder_args import add_ladder_argument, report_ladders, resolve_ladders


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
    parser.add_argument("--no-everyday", action="store_true",
                        help="skip the everyday-text documents (docs/everyday.md); --no-generated skips them too")
    parser.add_argument("--default-long", action=argparse.BooleanOptionalAction, default=True,
                        help="one 10^5-character input per class (letters, digits, spaces, whitespace, CJK, "
                             "emoji, a document) per encoding, on every adapter under the per-call timeout, "
                             "through the IDs, round trip and decode checks: on with the generated inputs "
                             "under the ci profile; --no-default-long leaves them out (--long runs the 10^6 "
                             "tier through every check; docs/every-token.md)")
    parser.add_argument("--no-every-token", action="store_true",
                        help="skip the every-token phase (every ID of each reference through every adapter; "
                             "on under the ci and nightly profiles, off under dev)")
    parser.add_argument("--no-cache", action="store_true",
                        help="ask every adapter again: do not read or keep the units (every token, vocabulary "
                             "probes, cases, everyday text, generated inputs, long inputs, shrinks) of unchanged "
                             "adapters in tokconf's cache folder (TOKCONF_CACHE_DIR; docs/every-token.md)")
    parser.add_argument("--out", default="reports", metavar="DIR", help="reports folder (default: reports)")
    parser.add_argument("--save-new-cases", metavar="DIR",
                        help="write unexpected minimal counterexamples as YAML cases into DIR")
    parser.add_argument("--long", action="store_true",
                        help="add the long-input tier: generated runs of 10^4 to 10^6 characters (not with "
                             "--no-generated), and the cases tagged long (on under --profile nightly)")
    parser.add_argument("--long-sizes", default="10000,100000,1000000", metavar="N,N,...",
                        help="lengths the long tier climbs (default 10000,100000,1000000)")
    parser.add_argument("--shrink-seconds", type=float, default=None, metavar="SECONDS",
                        help="time bound of shrinking one finding (default 60; 0 = no bound)")
    parser.add_argument("--min-coverage", action="append", default=[], metavar="[MEASURE=]FRACTION",
                        help="fail (exit 1) when an adapter's coverage is below FRACTION; MEASURE is "
                             "alternatives (the default), pairs, vocab or merges (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--profile-harness", action="store_true",
                        help="print where the time went (adapter calls, adapter builds, the harness "
                             "itself) and peak memory; also written as harness-profile.json")
    add_ladder_argument(parser)
    add_isolation_arguments(parser)
    add_corpus_options(parser, checks=True)
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
        raise_if_stopped()  # a Ctrl-C whose exception Python dropped stops the run here, --quiet too
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


def plan_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~harness.engine.plan.Plan` the flags of ``tokconf run`` describe (exit 2 if bad)."""
    from harness.cli.selection_args import selection_from_args
    from harness.engine.plan import Executor, Limits, Outputs, Plan, PlanError
    from harness.engine.phases import default_phases
    from harness.run.coverage import parse_minimums
    from harness.run.settle import DEFAULT_SHRINK_SECONDS

    if args.timeout <= 0:  # before anything is built
        raise UsageError(f"--timeout must be above 0 seconds, got {args.timeout:g}")
    if args.memory_limit < 0:
        raise UsageError(f"--memory-limit must be 0 (none) or a number of MB, got {args.memory_limit}")
    corpus = corpus_options(args)
    check_executor_options(args)
    shrink = DEFAULT_SHRINK_SECONDS if args.shrink_seconds is None else (args.shrink_seconds or None)
    if args.shrink_seconds is not None and args.shrink_seconds < 0:
        shrink = args.shrink_seconds  # the plan refuses it, with the flag's own words
    # --no-generated means "only the cases": the everyday text and every token go with it
    left_out = {"generated", "everyday", "every-token"} if args.no_generated else set()
    if getattr(args, "no_everyday", False):
        left_out.add("everyday")
    if getattr(args, "no_every_token", False):
        left_out.add("every-token")
    phases = tuple(p for p in default_phases() if p not in left_out)
    from harness.generate.long_inputs import parse_sizes

    try:
        long_sizes = parse_sizes(args.long_sizes)
    except ValueError as exc:
        raise UsageError(f"--long-sizes {exc}") from exc
    try:
        minimums = tuple(parse_minimums(args.min_coverage).items())
        return Plan(
            adapters=selection_from_args(args, []),
            cases=() if args.no_cases else (tuple(args.cases) if args.cases else None),
            phases=phases, profile=args.profile, seed=args.seed, max_examples=args.max_examples, long=args.long,
            long_sizes=long_sizes, default_long=args.default_long, corpus=tuple(args.corpus), corpus_options=corpus,
            limits=Limits(shrink_seconds=shrink), cache=not getattr(args, "no_cache", False),
            executor=Executor(kind=args.executor, jobs=default_jobs() if args.jobs is None else args.jobs,
                              scheduler=args.scheduler,
                              shard_size=args.shard_size, resume=args.resume),
            outputs=Outputs(out=args.out, save_new_cases=args.save_new_cases, min_coverage=minimums,
                            profile_harness=args.profile_harness, ladders=getattr(args, "ladder_rungs", ()),
                            argv=("tokconf", *(getattr(args, "argv", None) or sys.argv[1:]))),
        )
    except (PlanError, ValueError) as exc:
        raise UsageError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    """Build the plan from the flags, run it (:func:`harness.engine.execute`), print the summary."""
    from harness.engine.execute import execute
    from harness.engine.plan import PlanError

    args, _ = resolve_ladders(args, log=lambda line: print(line, file=sys.stderr, flush=True))
    plan = plan_from_args(args)
    progress = Progress(sys.stderr, enabled=not args.quiet)
    try:
        with catch_stops():
            # a stop the run caught was not lost: the partial report's progress steps go on
            outcome = execute(plan, progress=progress, quiet=args.quiet, on_stop=stop_seen)
    except PlanError as exc:
        raise UsageError(str(exc)) from exc
    if plan.outputs.save_new_cases:
        written = outcome.new_cases
        print(f"new cases: {written}" if written else "new cases: none (no unexpected divergence)")
    from harness.cli.summary import print_summary  # here, not at import: `tokconf list` stays quick

    print_summary(outcome.result, sys.stdout, verbose=args.verbose)
    for problem in outcome.short:
        print(f"coverage too low: {problem}; add inputs that reach it (cases, --profile nightly) or lower the figure")
    if plan.outputs.profile_harness:
        outcome.profile.report(sys.stderr)
    for lost in outcome.lost:
        print(f"shard lost: {lost}", file=sys.stderr)
    report_ladders(outcome.data)
    cache = outcome.data["run"].get("cache", {})
    if cache.get("from_cache"):
        read = cache["from_cache"]
        from harness.cli.summary import terminal_width, wrap_line

        phases = sorted({phase for kinds in read.values() for phase in kinds})
        print(wrap_line(f"cache: units of {len(read)} unchanged adapter(s) ({', '.join(phases)}) were read from "
                        f"{cache['folder']}, not asked again (parity.json run.cache lists them; --no-cache asks "
                        "everything)", terminal_width()))
    from harness.cli.closing import print_closing

    # the exit code, the page's verdict and this line come from one function (issue 21)
    verdict = print_closing(outcome.data, outcome.folder, sys.stdout, latest=outcome.latest,
                            latest_kept="an interrupted run; the last whole run stays there"
                            if outcome.stopped is not None else None)
    return verdict.exit_code
