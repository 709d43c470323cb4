"""``tokconf decode``: IDs back to text and bytes, or the outcome that stopped it.

Exit 1 when adapters of one encoding disagree (other bytes, other text, or another
error category), as ``tokconf encode`` does; 2 when a named adapter cannot run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, EXIT_USAGE, UsageError, apply_common
from harness.escapes import escape_text
from harness.outcomes import capture
from harness.registry import AdapterUnavailable, RegistryError


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("decode", parents=[parent], help="decode IDs with adapters")
    parser.add_argument("--impl", action="append", required=True, metavar="NAME")
    parser.add_argument("--errors", default="replace", help="UTF-8 error handler (default: replace)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--file", metavar="PATH",
                        help="read the IDs from PATH ('-': standard input), separated by spaces, commas or "
                             "newlines; brackets are ignored, so a JSON list works")
    parser.add_argument("ids", nargs="*", type=int, metavar="ID")
    parser.set_defaults(handler=run)


def read_ids(given: list[int], path: str | None) -> list[int]:
    """The IDs on the command line, or those of ``--file PATH`` (``-``: standard input)."""
    if bool(given) == (path is not None):
        raise UsageError("give the IDs as arguments or with --file PATH (--file - reads standard input)"
                         + (", not both" if path else ""))
    if path is None:
        return list(given)
    try:
        raw = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--file {path}: cannot read it: {exc}") from exc
    words = re.split(r"[\s,\[\]]+", raw.strip())
    try:
        return [int(w) for w in words if w]
    except ValueError as exc:
        raise UsageError(f"--file {path}: IDs are integers separated by spaces, commas or newlines: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    registry = apply_common(args)
    ids = read_ids(args.ids, args.file)
    results = []
    for name in args.impl:
        try:
            adapter = registry.get(name)
        except RegistryError as exc:
            raise UsageError(str(exc)) from exc
        except AdapterUnavailable as exc:
            results.append({"impl": name, "unavailable": str(exc)})
            continue
        row = {"impl": name, "encoding": adapter.encoding}
        as_bytes = capture("decode", adapter.decode_bytes, ids, classify=adapter.classify_error)
        as_text = capture("decode", adapter.decode, ids, errors=args.errors,
                          classify=adapter.classify_error)
        if as_bytes.is_ok:
            row["bytes"] = as_bytes.value.hex()
        else:
            row["bytes_error"] = {"category": as_bytes.category, "type": as_bytes.native_type,
                                  "message": as_bytes.message}
        if as_text.is_ok:
            row["text"] = as_text.value
        else:
            row["error"] = {"category": as_text.category, "type": as_text.native_type,
                            "message": as_text.message}
        results.append(row)
    if args.json:
        print(json.dumps({"results": results}, ensure_ascii=False))
        return _exit_code(results)
    for row in results:
        if "unavailable" in row:
            print(f"{row['impl']}: unavailable: {row['unavailable']}")
            continue
        text = f"{escape_text(row['text'])!s}" if "text" in row else f"raised {row['error']['category']} ({row['error']['type']})"
        raw = row.get("bytes", f"raised {row.get('bytes_error', {}).get('category')}")
        print(f"{row['impl']}: text: {text}")
        print(f"{' ' * len(row['impl'])}  bytes: {raw}")
    return _exit_code(results)


def _exit_code(results: list[dict]) -> int:
    unavailable = [r for r in results if "unavailable" in r]
    for row in unavailable:
        print(f"tokconf decode: error: {row['impl']} cannot run: {row['unavailable']}", file=sys.stderr)
    if unavailable:
        return EXIT_USAGE
    seen: dict[str, set[tuple[object, object]]] = {}
    for row in results:
        outcome = (row.get("bytes", ("raised", row.get("bytes_error", {}).get("category"))),
                   row.get("text", ("raised", row.get("error", {}).get("category"))))
        seen.setdefault(row["encoding"], set()).add(outcome)
    return EXIT_DIVERGENCE if any(len(outcomes) > 1 for outcomes in seen.values()) else EXIT_OK
