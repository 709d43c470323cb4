"""``tokconf snapshot -o golden.tokconf``: record what every adapter answers, path by path.

The golden holds, per input and per API path, the IDs (or bytes, text) or the error
category and native type, with the library versions and vocabulary hashes it was made
with. ``tokconf gate golden.tokconf`` checks a later run against it. Exit 0 when written,
2 on a usage error (an adapter asked for that cannot run, an unreadable corpus).
"""

from __future__ import annotations

import argparse
import sys

from harness.cli import EXIT_OK, UsageError, apply_common
from harness.cli.executor_args import add_cluster_options, check_cluster_options, golden_records
from harness.cli.inputs import add_corpus_options, corpus_options
from harness.cli.isolation import add_golden_timeout
from harness.cli.progress_line import ProgressLine


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "snapshot", parents=[parent], help="record every adapter's outcome on every input and API path: a golden",
        description="Record, per input and per API path (tiktoken's whole public API, HF's, or tokconf's common "
                    "operations), what each adapter answers, into a compressed golden file written atomically. "
                    "`tokconf gate FILE` re-runs it.")
    parser.add_argument("-o", "--output", required=True, metavar="GOLDEN", help="the golden file to write")
    parser.add_argument("--impl", action="append", default=[], metavar="NAME",
                        help="record this adapter (repeatable; default: every available one, environments' excepted)")
    parser.add_argument("--cases", action="append", default=[], metavar="PATH", help="case files or folders")
    parser.add_argument("--no-cases", action="store_true", help="no case texts")
    parser.add_argument("--no-generated", action="store_true", help="no generated hostile texts")
    parser.add_argument("--max-examples", type=int, default=200, metavar="N", help="generated texts (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated texts (default 0)")
    parser.add_argument("--long", action="store_true",
                        help="also long runs (spaces, tabs, ideographic spaces, newlines, letters, digits, CJK, mixed) "
                             "and the cases tagged long that are no longer than the longest run")
    parser.add_argument("--resume", action="store_true",
                        help="complete the partial golden (OUTPUT.partial) a snapshot stopped by Ctrl-C or SIGTERM "
                             "left, with the same command")
    parser.add_argument("--long-sizes", default="10000,100000,1000000", metavar="N,N,...",
                        help="lengths of the long runs (default 10000,100000,1000000)")
    parser.add_argument("--quiet", action="store_true", help="no progress")
    add_golden_timeout(parser)
    add_corpus_options(parser)
    add_cluster_options(parser, what="where the inputs are recorded", jobs=True)
    parser.set_defaults(handler=run)


def long_sizes(args: argparse.Namespace) -> tuple[int, ...]:
    if not args.long:
        return ()
    from harness.generate.long_inputs import parse_sizes

    try:
        return parse_sizes(args.long_sizes)
    except ValueError as exc:
        raise UsageError(f"--long-sizes {exc}") from exc


def run(args: argparse.Namespace) -> int:
    from harness.cases.corpus import CorpusError
    from harness.cases.loader import CaseFileError
    from harness.golden.snapshot import InputOptions, build_adapters, input_stream, write_snapshot
    from harness.run.selection import SelectionError
    from harness.worker.setup import Isolation

    dask = check_cluster_options(args, dask_only=("--scheduler", "--jobs"))
    registry = apply_common(args)
    options = InputOptions(cases=tuple(args.cases) or None, no_cases=args.no_cases, generated=not args.no_generated,
                           max_examples=args.max_examples, seed=args.seed, long_sizes=long_sizes(args),
                           corpus=tuple(args.corpus), corpus_options=corpus_options(args))
    try:
        selected = build_adapters(registry, args.impl, isolation=Isolation(timeout_s=args.timeout))
    except SelectionError as exc:
        raise UsageError(str(exc)) from exc
    literals = {lit for c in selected.calls.values() for lit, _ in c.info.special_tokens}
    line = None if args.quiet else ProgressLine("snapshot")
    from harness.cli.interrupts import catch_stops, describe_stop, raise_if_stopped, stop_exit_code
    from harness.golden.resume import ResumeError
    from harness.golden.snapshot import SnapshotStopped

    hooks = line.hooks() if line is not None else {}
    shown = hooks.get("progress")

    def progress(count: int) -> None:
        raise_if_stopped()  # a Ctrl-C whose exception Python dropped stops the snapshot here
        if shown is not None:
            shown(count)

    try:
        with catch_stops(), golden_records(args, selected, dask=dask) as records:
            count = write_snapshot(args.output, selected, input_stream(options, literals),
                                   options=options.to_json(), records=records, resume=args.resume,
                                   **{**hooks, "progress": progress})
    except (CorpusError, CaseFileError, FileNotFoundError, ResumeError) as exc:
        raise UsageError(f"{exc} (the previous golden, if any, is untouched)") from exc
    except SnapshotStopped as exc:
        print(f"\nsnapshot {describe_stop(exc.__cause__)}: {exc}", file=sys.stderr)
        return stop_exit_code(exc.__cause__)
    finally:
        selected.close()
    if line is not None:
        line.end()
    names = ", ".join(f"{n} {selected.rows[n].version or ''}".strip() for n in sorted(selected.calls))
    print(f"wrote {args.output}: {count} inputs x {len(selected.calls)} adapter(s) ({names})")
    return EXIT_OK
