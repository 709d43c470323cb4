"""``tokconf train``: learn a byte-level BPE model from text files.

The model file is an adapter at once: ``--impl bytebpe:MODEL.json`` (encoding
``trained:<first 12 hex digits of the file's SHA-256>``), and ``bytebpe-ltr:MODEL.json``
is the deliberately wrong left-to-right encoder over the same file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli import EXIT_OK, UsageError

DEFAULT_PATTERN = "gpt4"


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a byte-level BPE model from text files (an adapter: bytebpe:MODEL.json)",
        description=(
            "Count adjacent pairs, merge the most frequent (ties: smallest pair of IDs), only "
            "pairs seen at least twice; --vocab-size is an upper bound, so training may stop "
            "early. Each FILE is split on its own: no pair spans two files."
        ),
    )
    parser.add_argument("--vocab-size", type=int, required=True, metavar="N",
                        help="upper bound on ordinary tokens: 256 bytes + at most N-256 merges")
    parser.add_argument("--pattern", choices=("gpt2", "gpt4", "none"), default=DEFAULT_PATTERN,
                        help=f"pre-split pattern; merges never cross a chunk (default: {DEFAULT_PATTERN})")
    parser.add_argument("--special", action="append", default=[], metavar="TOKEN=ID",
                        help="register a special token with an ID >= N (repeatable)")
    parser.add_argument("--json", action="store_true",
                        help='print one JSON object with "merges" and "vocab_size"')
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.json",
                        help="where to write the model (JSON)")
    parser.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 training text")
    parser.set_defaults(handler=run)


def parse_special(value: str, *, vocab_size: int) -> tuple[str, int]:
    """``"<|end|>=1000"`` -> ``("<|end|>", 1000)``; the literal may itself contain ``=``."""
    literal, sep, number = value.rpartition("=")
    if not sep or not literal:
        raise UsageError(
            f"--special {value!r}: expected TOKEN=ID, e.g. --special '<|endoftext|>={vocab_size}'"
        )
    try:
        token_id = int(number)
    except ValueError:
        raise UsageError(
            f"--special {value!r}: ID {number!r} is not an integer; e.g. --special '{literal}={vocab_size}'"
        ) from None
    if token_id < vocab_size:
        raise UsageError(
            f"--special {value!r}: ID {token_id} may collide with a learned token (ordinary IDs can "
            f"reach {vocab_size - 1} with --vocab-size {vocab_size}); use an ID >= {vocab_size}"
        )
    return literal, token_id


def read_text(path_name: str) -> str:
    path = Path(path_name)
    try:
        data = path.read_bytes()  # bytes, so no newline translation touches the text
    except FileNotFoundError:
        raise UsageError(f"training file {path_name}: no such file; check the path") from None
    except IsADirectoryError:
        raise UsageError(f"training file {path_name} is a directory; pass the text files in it") from None
    except OSError as exc:
        raise UsageError(f"training file {path_name}: cannot read it ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"training file {path_name} is not UTF-8: byte {exc.start} is 0x{data[exc.start]:02x} "
            f"({exc.reason}); convert it first, e.g. `iconv -f latin1 -t utf-8`"
        ) from None


def run(args: argparse.Namespace) -> int:
    from harness.registry import RegistryError, default_registry

    try:
        # training is the bytebpe family's: reached through its hooks, never imported here
        registry = default_registry()
        base, train = registry.hook("train-base-vocab-size")(), registry.hook("train")
    except RegistryError as exc:
        raise UsageError(str(exc)) from exc
    if args.vocab_size < base:
        raise UsageError(
            f"--vocab-size {args.vocab_size} is below the {base} single-byte tokens; "
            f"use --vocab-size {base} or more"
        )
    specials: dict[str, int] = {}
    for value in args.special:
        literal, token_id = parse_special(value, vocab_size=args.vocab_size)
        if literal in specials:
            raise UsageError(f"--special {literal!r} is given twice; give each literal once")
        specials[literal] = token_id
    output = Path(args.output)
    if output.is_dir():
        raise UsageError(f"-o {args.output} is a directory; name the model file, e.g. -o {output / 'model.json'}")
    texts = [read_text(name) for name in args.files]
    try:
        summary = train(texts, vocab_size=args.vocab_size, pattern=args.pattern, specials=specials, output=output)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    merges, specials = summary["merges"], summary["special_tokens"]
    if args.json:
        print(json.dumps(summary, ensure_ascii=True))
        return EXIT_OK
    print(f"merges: {merges}")
    print(f"vocab_size: {summary['vocab_size']} (256 bytes + {merges} merges"
          + (f"; plus {len(specials)} special token{'s' if len(specials) != 1 else ''})" if specials else ")"))
    if summary["stopped_early"]:
        print(f"stopped early: no pair occurs twice any more (budget was {args.vocab_size})")
    print(f"wrote {output}; use it as --impl bytebpe:{output} (encoding {summary['encoding']})")
    return EXIT_OK
