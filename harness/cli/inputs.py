"""Flags that choose inputs, shared by ``run``, ``snapshot`` and ``gate``: user corpora."""

from __future__ import annotations

import argparse
import sys

from harness.cli import UsageError

__all__ = ["add_corpus_options", "corpus_options"]


def add_corpus_options(parser: argparse.ArgumentParser, *, checks: bool = False) -> None:
    """The corpus flags; ``checks``: also how many documents run every check (``run``:
    ``snapshot`` and ``gate`` only record encode outcomes)."""
    group = parser.add_argument_group("user corpora")
    group.add_argument("--corpus", action="append", default=[], metavar="PATH",
                       help="text file, JSON Lines file (.jsonl) or folder of them (repeatable); streamed")
    group.add_argument("--split", choices=["file", "blank-line", "separator"], default="file",
                       help="text files: one document per file (default), per blank-line-separated block, "
                            "or per --separator")
    group.add_argument("--separator", metavar="TEXT",
                       help="with --split separator: the exact separator (escapes: \\n \\x1e \\u2028 ...)")
    group.add_argument("--text-field", default="text", metavar="FIELD",
                       help="JSON Lines: the field holding the document (default: text)")
    group.add_argument("--skip-non-utf8", action="store_true",
                       help="leave files that are not UTF-8 out of a --corpus FOLDER, each named in a note "
                            "(default: such a file is an error before anything runs)")
    if checks:
        from harness.cases.corpus import DEFAULT_FULL_CHECKS_EVERY

        group.add_argument("--full-checks-every", type=int, default=DEFAULT_FULL_CHECKS_EVERY, metavar="N",
                           help="every document is screened (id-parity, error-category, round-trip); 1 in N, "
                                "chosen by a hash of its text, and every document the screen flags run every "
                                f"check (default: {DEFAULT_FULL_CHECKS_EVERY}; 1: every document, every check)")


def corpus_options(args: argparse.Namespace):
    from harness.cases.corpus import CorpusOptions
    from harness.escapes import EscapeError, parse_escapes

    separator = None
    if args.separator is not None:
        try:
            separator = parse_escapes(args.separator)
        except EscapeError as exc:
            raise UsageError(f"--separator: {exc}") from exc
    if args.split == "separator" and not separator:
        raise UsageError("--split separator needs --separator TEXT, e.g. --separator '\\x1e'")
    from pathlib import Path

    from harness.cases.corpus import DEFAULT_FULL_CHECKS_EVERY

    every = getattr(args, "full_checks_every", DEFAULT_FULL_CHECKS_EVERY)
    if every < 1:
        raise UsageError(f"--full-checks-every {every}: give a whole number of at least 1 (1 runs every check "
                         f"on every document; default {DEFAULT_FULL_CHECKS_EVERY})")
    for path in args.corpus:
        if not Path(path).exists():
            raise UsageError(f"--corpus {path}: no such file or folder")
    return CorpusOptions(split=args.split, separator=separator, text_field=args.text_field,
                         skip=_checked_encoding(args.corpus, skip=getattr(args, "skip_non_utf8", False)),
                         full_checks_every=every)


def _checked_encoding(paths: list[str], *, skip: bool) -> tuple[str, ...]:
    """Every corpus file is UTF-8 before anything runs, or the run stops here, naming the
    file and the byte; with ``--skip-non-utf8`` such files in a folder are left out, each
    with a note on stderr. Returns the files to leave out."""
    from harness.cases.corpus import CorpusError
    from harness.cases.corpus_check import undecodable_files

    try:
        bad = undecodable_files(paths)
    except CorpusError as exc:
        raise UsageError(str(exc)) from exc
    left_out = []
    for problem in bad:
        if skip and problem.in_folder:
            left_out.append(problem.file)
            print(f"note: --corpus: left out {problem.describe()} (--skip-non-utf8)", file=sys.stderr)
            continue
        fix = ("convert it to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)" if not problem.in_folder else
               "convert it to UTF-8, remove it from the folder, or leave such files out with --skip-non-utf8")
        raise UsageError(f"--corpus {problem.describe()}; {fix}")
    return tuple(sorted(left_out))
