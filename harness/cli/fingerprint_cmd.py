"""``tokconf fingerprint ADAPTER``: one hash that says which encoding a tokenizer really is.

The adapter encodes :data:`harness.encodings.fingerprint.PROBE`; the SHA-256 of its IDs is
compared with the reference of the encoding it claims, then with the references of the
other known encodings (each encoding file names its reference), until one matches. A
loader that swapped a pre-tokenizer matches none. Exit 0 when it matches the encoding it
claims, 1 when it does not (the line says what it matches instead, if anything), 2 for
an adapter that cannot run.
"""

from __future__ import annotations

import argparse
import json

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, UsageError, apply_common, claim_encoding


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "fingerprint", parents=[parent],
        help="the SHA-256 of an adapter's IDs on a fixed probe, and the known encoding it matches")
    parser.add_argument("adapter", metavar="ADAPTER", help="e.g. hf-json:tokenizer.json, meta:llama3")
    parser.add_argument("--encoding", action="append", default=[], metavar="ENC",
                        help="the encoding an hf-json:PATH adapter claims")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def _ids(registry, name: str) -> list[int]:
    from harness.encodings.fingerprint import PROBE
    from harness.registry import AdapterUnavailable, RegistryError

    try:
        adapter = registry.get(name)
    except (AdapterUnavailable, RegistryError) as exc:
        raise UsageError(f"{name} cannot run here: {exc}") from exc
    try:
        return adapter.encode(PROBE, allowed_special=frozenset(), disallowed_special=())
    except Exception as exc:  # noqa: BLE001 - a tokenizer that fails the probe is an answer
        raise UsageError(f"{name} failed on the probe text: {type(exc).__name__}: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    from harness.encodings import encoding_specs
    from harness.encodings.fingerprint import fingerprint_of
    from harness.registry import RegistryError

    registry = apply_common(args)
    claim_encoding(registry, [args.adapter], args.encoding)
    try:
        claimed = registry.spec(args.adapter).encoding
    except RegistryError as exc:
        raise UsageError(str(exc)) from exc
    mine = fingerprint_of(_ids(registry, args.adapter))
    specs = encoding_specs()
    # the claimed encoding first: the usual answer costs one reference, not all of them
    order = sorted(specs, key=lambda name: (name != claimed, name))
    matched, checked = None, []
    for name in order:
        reference = specs[name].reference
        if registry.status(reference) is not None:
            continue  # not installed here: cannot be compared
        theirs = mine if reference == args.adapter else fingerprint_of(_ids(registry, reference))
        checked.append({"encoding": name, "reference": reference, "fingerprint": theirs})
        if theirs == mine:
            matched = name
            break
    ok = matched is not None and matched == claimed
    if args.json:
        print(json.dumps({"adapter": args.adapter, "claims": claimed, "fingerprint": mine, "matches": matched,
                          "checked": checked}, indent=2))
    else:
        print(f"{args.adapter}  {mine}")
        if matched is None:
            print(f"matches no known encoding (checked {len(checked)}: "
                  f"{', '.join(c['encoding'] for c in checked)}); it claims {claimed}")
        elif matched == claimed:
            print(f"matches {matched} (its reference {specs[matched].reference})")
        else:
            print(f"matches {matched} (its reference {specs[matched].reference}), but it claims {claimed}")
    return EXIT_OK if ok else EXIT_DIVERGENCE
