"""``tokconf encode``: one text through one or more adapters, side by side."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, EXIT_USAGE, UsageError, apply_common, claim_encoding
from harness.escapes import EscapeError, parse_escapes, visible_bytes
from harness.outcomes import Outcome, capture
from harness.registry import AdapterUnavailable, Registry, RegistryError


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "encode", parents=[parent], help="encode TEXT with adapters and show the token pieces"
    )
    parser.add_argument("--impl", action="append", required=True, metavar="NAME",
                        help="adapter name (repeatable); 'all' = every available adapter")
    # one value per flag (repeat the flag for several tokens), so a TEXT after it is not swallowed
    parser.add_argument("--allowed-special", action="append", metavar="all|none|TOKEN",
                        help="tiktoken's allowed_special; repeat for several tokens (default: none)")
    parser.add_argument("--disallowed-special", action="append", metavar="all|none|TOKEN",
                        help="tiktoken's disallowed_special; repeat for several tokens (default: all)")
    parser.add_argument("--escapes", action="store_true",
                        help=r"read TEXT with backslash escapes (\n \t \r \\ \xNN \uNNNN \UNNNNNNNN)")
    parser.add_argument("--encoding", metavar="ENC",
                        help="the encoding an hf-json:PATH adapter claims (when it has no spec)")
    parser.add_argument("--trace", action="store_true", help="add each adapter's merge rounds")
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object")
    parser.add_argument("--file", metavar="PATH",
                        help="read the text from PATH ('-': standard input), exactly as it is (UTF-8; a final "
                             "newline is part of it); for inputs too long for a command line")
    parser.add_argument("text", metavar="TEXT", nargs="?", help="the text (or --file)")
    parser.set_defaults(handler=run)


def read_input(text: str | None, path: str | None) -> str:
    """TEXT, or the whole of ``--file PATH`` (``-``: standard input) as UTF-8."""
    if (text is None) == (path is None):
        raise UsageError("give the text as TEXT or with --file PATH (--file - reads standard input)"
                         + (", not both" if path else ""))
    if path is None:
        return text  # type: ignore[return-value]
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"--file {path}: cannot read it: {exc}") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--file {path}: not UTF-8 text ({exc.reason} at byte {exc.start}); give "
                         f"other bytes with --escapes (\\xNN, \\uDC80 ...)") from exc


def policy_argument(values: list[str] | None, *, default: Any) -> Any:
    """``['all']`` -> "all", ``['none']`` -> empty set, tokens -> a set of them."""
    if values is None:
        return default
    if values == ["all"]:
        return "all"
    if values == ["none"]:
        return frozenset()
    if "all" in values or "none" in values:
        raise UsageError("'all' and 'none' stand alone; do not mix them with token literals")
    return frozenset(values)


def resolve_impls(registry: Registry, names: list[str]) -> list[str]:
    if "all" in names:
        return [s.name for s in registry.specs() if registry.status(s.name) is None]
    return names


def encode_one(adapter, text: str, allowed: Any, disallowed: Any, *, trace: bool) -> dict[str, Any]:
    outcome = capture(
        "encode", adapter.encode, text,
        allowed_special=allowed, disallowed_special=disallowed, classify=adapter.classify_error,
    )
    result: dict[str, Any] = {"impl": adapter.name, "encoding": adapter.encoding}
    if outcome.is_ok:
        ids = list(outcome.value)
        result["ids"] = ids
        pieces = [capture("decode", adapter.token_bytes, i, classify=adapter.classify_error) for i in ids]
        result["pieces"] = [visible_bytes(p.value) if p.is_ok else None for p in pieces]
        result["piece_bytes"] = [p.value.hex() if p.is_ok else None for p in pieces]
    else:
        result["error"] = _error(outcome)
    if trace:
        from harness.cases.model import Policy
        from harness.run.evidence import trace_segments

        traced = trace_segments(
            lambda part: capture("other", adapter.trace, part, classify=adapter.classify_error), text,
            dict(adapter.special_tokens), Policy(allowed_special=allowed, disallowed_special=disallowed),
            adapter.capabilities.special_policy)
        if traced.is_ok:
            result["trace"] = list(traced.value)
        else:
            result["trace_error"] = _error(traced)
    return result


def _error(outcome: Outcome) -> dict[str, Any]:
    return {"category": outcome.category or outcome.kind, "type": outcome.native_type,
            "message": outcome.message}


def run(args: argparse.Namespace) -> int:
    registry = apply_common(args)
    text = read_input(args.text, args.file)
    if args.escapes:
        try:
            text = parse_escapes(text)
        except EscapeError as exc:
            raise UsageError(str(exc)) from exc
    allowed = policy_argument(args.allowed_special, default=frozenset())
    disallowed = policy_argument(args.disallowed_special, default="all")
    if disallowed == frozenset():
        disallowed = ()
    claim_encoding(registry, args.impl, [args.encoding] if args.encoding else [])
    results = []
    for name in resolve_impls(registry, args.impl):
        try:
            adapter = registry.get(name)
        except RegistryError as exc:
            raise UsageError(str(exc)) from exc
        except AdapterUnavailable as exc:
            results.append({"impl": name, "unavailable": str(exc)})
            continue
        results.append(encode_one(adapter, text, allowed, disallowed, trace=args.trace))
    if args.json:
        print(json.dumps({"results": results}, ensure_ascii=False))
    else:
        print_side_by_side(results)
    unavailable = [r for r in results if "unavailable" in r]
    for row in unavailable:  # named and cannot run: never a silent pass
        print(f"tokconf encode: error: {row['impl']} cannot run: {row['unavailable']}", file=sys.stderr)
    if unavailable:
        return EXIT_USAGE
    return EXIT_DIVERGENCE if _diverges(results) else EXIT_OK


def _diverges(results: list[dict[str, Any]]) -> bool:
    by_encoding: dict[str, set[Any]] = {}
    for r in results:
        if "encoding" not in r:
            continue
        key = tuple(r["ids"]) if "ids" in r else ("error", r["error"]["category"])
        by_encoding.setdefault(r["encoding"], set()).add(key)
    return any(len(keys) > 1 for keys in by_encoding.values())


def print_side_by_side(results: list[dict[str, Any]]) -> None:
    width = max((len(r["impl"]) for r in results), default=0)
    for r in results:
        head = f"{r['impl']:<{width}}"
        if "unavailable" in r:
            print(f"{head}  unavailable: {r['unavailable']}")
        elif "error" in r:
            e = r["error"]
            print(f"{head}  raised {e['category']} ({e['type']}): {e['message']}")
        else:
            print(f"{head}  {r['ids']}")
            print(f"{'':<{width}}  |" + "|".join(p if p is not None else "?" for p in r["pieces"]) + "|")
        for step in r.get("trace", []):
            if step.get("special"):
                print(f"{'':<{width}}    special {step['pair'][0]} -> {step['result']} (not merged from bytes)")
            else:
                print(f"{'':<{width}}    rank {step['rank']}: {step['pair']} x{step['merged']}")
