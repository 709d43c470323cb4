"""``tokconf list``: every adapter, its encoding, library version, and availability."""

from __future__ import annotations

import argparse
import json

from harness.cli import EXIT_OK, apply_common


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "list", parents=[parent], help="list adapters and whether they are available here"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--build",
        action="store_true",
        help="also build each adapter (loads vocabularies; proves availability, slower)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from harness.worker.setup import FOREIGN_KINDS, Isolation, is_foreign

    registry = apply_common(args)
    rows = []
    for spec in registry.specs():
        reason = registry.status(spec.name, build=args.build)
        rows.append(
            {
                "name": spec.name,
                "encoding": spec.encoding,
                "library": spec.library,
                "version": spec.library_version,
                "available": reason is None,
                "reason": reason,
                "provider": spec.provider,
                "language": spec.language,
                # where `tokconf run` runs it unless --isolate / --no-isolate say otherwise
                "isolated_by_default": is_foreign(spec.name, spec.provider),
            }
        )
    failures = registry.load_failures()
    if args.json:
        from harness.worker.client import probe_network

        isolation = {
            "isolated_by_default": "foreign adapters: " + ", ".join(f"{k}:" for k in sorted(FOREIGN_KINDS))
                                   + ", plugins, and entry points outside tokconf",
            "python": Isolation().python,
            # what a worker of `tokconf run` gets on this machine, from a worker started now
            "network": probe_network(Isolation()).to_json(),
        }
        print(json.dumps({"adapters": rows, "provider_failures": failures, "isolation": isolation}, indent=2))
        return EXIT_OK
    from harness.cli.list_table import format_list

    print(format_list(rows, failures), end="")
    return EXIT_OK
