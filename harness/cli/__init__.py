"""The ``tokconf`` command: one module per subcommand, each with ``add_parser`` and ``run``.

Exit codes: 0 all as expected, 1 unexpected or stale divergences, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import importlib
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
        "--source-root",
        action="append",
        default=[],
        metavar="[SPEC=]FOLDER",
        help="checkout folder for source: adapters (see implementations/source/specs/README.md)",
    )
    return parent


def apply_common(args: argparse.Namespace):
    """Apply --vocab-dir and --plugin; return the registry."""
    from harness.registry import RegistryError, default_registry
    from harness.vocab import set_vocab_dir

    if getattr(args, "vocab_dir", None):
        set_vocab_dir(args.vocab_dir)
    roots = getattr(args, "source_root", None) or []
    if roots:
        from implementations.source.roots import SourceRootError, parse_source_root, set_source_root

        known = source_spec_names(getattr(args, "impl", None) or [])
        for root in roots:
            try:
                spec, folder = parse_source_root(root, known=known)
            except SourceRootError as exc:
                raise UsageError(str(exc)) from exc
            set_source_root(folder, spec=spec)
    files = getattr(args, "encoding_file", None) or []
    for path in files:
        add_encoding_file_or_exit(path)
    try:
        registry = default_registry(plugins=getattr(args, "plugin", []) or [])
        if files:
            # the families list their adapters from the known encodings: ask them again
            # now that the user's are known (through the registry, as the engine always does)
            registry.load_entry_points()
    except RegistryError as exc:
        raise UsageError(str(exc)) from exc
    # before anything resolves the names (the isolation set-up copies the claims into the
    # workers' registries): an hf-json file of an open-weight model is recognised by no
    # pinned vocabulary, so without its claim here its worker would judge it unclaimed
    claim_encoding(registry, getattr(args, "impl", None) or [], getattr(args, "encoding", None) or [])
    return registry


def add_encoding_file_or_exit(path: str) -> None:
    """``--encoding-file``: make the encoding known (a bad file is a usage error, exit 2)."""
    from harness.encodings import EncodingError, add_encoding_file

    try:
        add_encoding_file(path)
    except EncodingError as exc:
        raise UsageError(str(exc)) from exc


def source_spec_names(impls: Sequence[str]) -> list[str]:
    """Spec names ``--source-root NAME=DIR`` may use: the shipped specs and those named by ``--impl``."""
    from implementations.source.adapter import spec_from_argument
    from implementations.source.spec import shipped_spec_names

    names = set(shipped_spec_names())
    for name in impls:
        kind, _, argument = name.partition(":")
        if kind != "source" or not argument:
            continue
        names.add(argument)
        try:
            names.add(spec_from_argument(argument).name)
        except Exception:  # noqa: BLE001 - a bad spec is reported when the adapter is built
            pass
    return sorted(names)


def claim_encoding(registry, names: Sequence[str], encodings: Sequence[str]) -> None:
    """``hf-json:PATH`` adapters named on the command line claim the one ``--encoding`` given.

    A bare tokenizer.json says nothing about which ID space it reproduces; the flag is the
    spec-less way to say it (``tokconf run --impl hf-json:tok.json --encoding cl100k_base``).
    """
    if len(encodings) != 1:
        return
    from implementations.hf.tokenizer_json import hf_json_spec

    for name in names:
        kind, _, argument = name.partition(":")
        if kind == "hf-json" and argument and name not in registry.names():
            try:
                registry.add(hf_json_spec(argument, encoding=encodings[0]), provider="--encoding")
            except Exception as exc:
                raise UsageError(f"--impl {name}: {exc}") from exc


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
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.handler(args))
    except UsageError as exc:
        print(f"tokconf {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
