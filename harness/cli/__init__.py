"""The ``tokconf`` command: one module per subcommand, each with ``add_parser`` and ``run``.

Exit codes: 0 all as expected, 1 unexpected or stale divergences, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

__all__ = ["main", "EXIT_OK", "EXIT_DIVERGENCE", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_DIVERGENCE = 1
EXIT_USAGE = 2

#: Subcommand modules, in the order `--help` lists them. A module that fails to import
#: (an optional dependency missing) is left out of the parser with a note, not fatal.
SUBCOMMANDS = (
    "harness.cli.run_cmd",
    "harness.cli.list_cmd",
    "harness.cli.encode_cmd",
    "harness.cli.decode_cmd",
    "harness.cli.call_cmd",
    "harness.cli.train_cmd",
    "harness.cli.report_cmd",
    "harness.cli.diff_cmd",
    "harness.cli.env_cmd",
    "harness.cli.snapshot_cmd",
    "harness.cli.gate_cmd",
    "harness.cli.selftest_cmd",
    "harness.cli.fingerprint_cmd",
)


class UsageError(Exception):
    """Bad arguments or input: exit 2 with the message."""


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand that touches adapters accepts."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("adapters")
    group.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:ATTR|FILE.py:ATTR",
        help="register adapters from MODULE:ATTR, or from a file: path/to/file.py:ATTR (repeatable)",
    )
    group.add_argument(
        "--vocab-dir",
        metavar="FOLDER",
        help="folder of vocabulary files (also TOKCONF_VOCAB_DIR); verified by SHA-256",
    )
    group.add_argument(
        "--encoding-file",
        action="append",
        default=[],
        metavar="FILE.yaml",
        help="an encoding described as data (rank file, SHA-256, pattern, special IDs, reference; "
             "docs/encodings.md); its tiktoken, hf and bytebpe-ranks adapters join the registry (repeatable)",
    )
    group.add_argument(
        "--verbose", "-v",
        action="store_true",
        help="everything in full: Rust's own panic output as it happens (default: one line per distinct "
             "panic); for run, every documented divergence that explained other findings and every "
             "unavailable adapter with its reason (default: one line each; the report has them)",
    )
    group.add_argument(
        "--source-root",
        action="append",
        default=[],
        metavar="[SPEC=]FOLDER",
        help="checkout folder for source: adapters (see implementations/source/specs/README.md)",
    )
    return parent


def apply_common(args: argparse.Namespace):
    """Apply --vocab-dir, --plugin, --source-root and --encoding-file
    (:func:`harness.run.choice.build_registry`); the registry."""
    from harness.run.choice import ChoiceError, build_registry

    try:
        return build_registry(plugin=getattr(args, "plugin", []) or [], vocab_dir=getattr(args, "vocab_dir", None),
                              source_root=getattr(args, "source_root", None) or [],
                              impl=getattr(args, "impl", None) or [],
                              encoding_file=getattr(args, "encoding_file", None) or [])
    except ChoiceError as exc:
        raise UsageError(str(exc)) from exc


def source_spec_names(impls: Sequence[str]) -> list[str]:
    """Spec names ``--source-root NAME=DIR`` may use (the source family's ``source-spec-names`` hook)."""
    from harness.registry import default_registry

    return default_registry().hook("source-spec-names")(impls)


def claim_encoding(registry, names: Sequence[str], encodings: Sequence[str]) -> None:
    """``hf-json:PATH`` adapters named on the command line claim the one ``--encoding`` given."""
    from harness.run.choice import ChoiceError, claim_encoding as claim

    try:
        claim(registry, names, encodings)
    except ChoiceError as exc:
        raise UsageError(str(exc)) from exc


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokconf",
        description="Differential conformance harness for byte-level BPE tokenizers.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    parent = common_options()
    for module_name in SUBCOMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # not written yet in this checkout
            raise
        module.add_parser(subparsers, parent)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # `python -m harness` puts the current folder first on the path and the `tokconf`
    # console script does not: `tiktoken-compatible:mymod` and `--plugin mymod:f` for a
    # module in the current folder must work the same from both.
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    # Hypothesis runs every installed package's "hypothesis" entry point when it is imported.
    # tokconf draws from its own strategies with its own seed, so none of them can matter to
    # it, and they cost every command: trio's (selenium brings trio) imports pytest, 0.3 s of CPU.
    # A user who wants them sets HYPOTHESIS_NO_PLUGINS to the empty string.
    os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    from harness.cli.native_stderr import native_stderr_summarised

    try:
        # Rust panics in adapters: one line each at the end, their full output with --verbose.
        # Only commands that run adapters (they take --verbose); `env add` streams pip's output.
        with native_stderr_summarised(verbose=getattr(args, "verbose", True)):
            return int(args.handler(args))
    except UsageError as exc:
        print(f"tokconf {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt as exc:
        # one line, not a traceback, whichever command was interrupted
        from harness.cli.interrupts import describe_stop, kept_after_stop, stop_exit_code

        kept = kept_after_stop(args.command, getattr(args, "output", None))
        print(f"\ntokconf {args.command}: {describe_stop(exc)}; {kept}", file=sys.stderr)
        return stop_exit_code(exc)


if __name__ == "__main__":
    sys.exit(main())
