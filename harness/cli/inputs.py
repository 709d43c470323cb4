"""Flags that choose inputs, shared by ``run``, ``snapshot`` and ``gate``: user corpora."""

from __future__ import annotations

import argparse

from harness.cli import UsageError

__all__ = ["add_corpus_options", "corpus_options"]


def add_corpus_options(parser: argparse.ArgumentParser) -> None:
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

    for path in args.corpus:
        if not Path(path).exists():
            raise UsageError(f"--corpus {path}: no such file or folder")
    return CorpusOptions(split=args.split, separator=separator, text_field=args.text_field)
