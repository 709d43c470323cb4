"""``tokconf call``: call one API path of adapters from the command line, as a run calls it.

A reproduce command must show the divergence it names and exit 1 while it is there
(issue 21). ``tokconf encode`` compares IDs and error categories only, so an
``AssertionError`` where tiktoken raises ``ValueError``, or a difference inside
``encode_to_numpy``, printed a command that exited 0. ``tokconf call`` calls any operation
of the adapter interface (the API surface's paths included) through the same
:class:`harness.calls.Calls` a run uses (worker processes for foreign adapters and other
environments), with the same arguments, and prints each adapter's outcome with its native
error type.

Exit status: with ``--check CHECK`` (what reproduce commands use), 1 while that check,
run on this input with the first ``--impl`` as the adapter and the last as its reference,
still finds a divergence (of ``--kind``, when given), else 0. Without it, 1 when the
adapters' outcomes differ (values; for errors category *and* native type), else 0. 2 for
usage errors and adapters that cannot run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, UsageError, apply_common, claim_encoding
from harness.cli.isolation import add_isolation_arguments, isolation_from_args

__all__ = ["OPERATIONS", "add_parser", "run"]

#: operation -> what its arguments are ("text", "texts", "ids", "id")
OPERATIONS: dict[str, str] = {
    "encode": "text", "encode_ordinary": "text", "encode_batch": "texts", "pretokenize": "text",
    "api_surface": "text", "decode_bytes": "ids", "decode": "ids", "decode_stream": "ids", "token_bytes": "id",
}


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "call", parents=[parent], help="call one API path of adapters with the same arguments (reproduce commands)",
        description="Call OPERATION of each --impl with the same ARGS and print each outcome (native error "
                    "types included). Exit 1 while --check CHECK still finds the divergence (or, without "
                    "--check, while the outcomes differ), 0 when it is gone, 2 on usage errors.")
    parser.add_argument("--impl", action="append", required=True, metavar="NAME",
                        help="adapter (repeatable); with --check the first is the adapter, the last its reference")
    parser.add_argument("--check", metavar="CHECK", help="run this check on the input; exit 1 while it finds a divergence")
    parser.add_argument("--kind", metavar="KIND", help="with --check: only a divergence of this kind counts")
    parser.add_argument("--path", action="append", default=[], metavar="PATH",
                        help="api_surface: show (and compare) only this path (repeatable)")
    parser.add_argument("--allowed-special", action="append", metavar="all|none|TOKEN")
    parser.add_argument("--disallowed-special", action="append", metavar="all|none|TOKEN")
    parser.add_argument("--errors", default="replace", metavar="MODE", help="decode: the errors mode (default replace)")
    parser.add_argument("--escapes", action="store_true", help="read \\n \\t \\xNN \\uNNNN escapes in text arguments")
    parser.add_argument("--encoding", metavar="ENC", help="the ID space an hf-json:PATH adapter claims")
    parser.add_argument("operation", choices=sorted(OPERATIONS), metavar="OPERATION",
                        help="one of: " + ", ".join(sorted(OPERATIONS)))
    parser.add_argument("args", nargs="*", metavar="ARG", help="the text (texts for encode_batch; IDs for decoding)")
    add_isolation_arguments(parser, jobs=False)
    parser.set_defaults(handler=run)


def _arguments(args: argparse.Namespace) -> tuple[str, tuple[Any, ...]]:
    """(the text a check runs on, the operation's arguments after the policy)."""
    from harness.escapes import EscapeError, parse_escapes

    shape = OPERATIONS[args.operation]
    values = list(args.args)
    if shape in ("text", "texts"):
        if args.escapes:
            try:
                values = [parse_escapes(v) for v in values]
            except EscapeError as exc:
                raise UsageError(str(exc)) from exc
        if shape == "text" and len(values) != 1:
            raise UsageError(f"{args.operation} takes one TEXT (quote it, and put -- before it), got {len(values)}")
        return (values[0] if values else ""), ((values[0],) if shape == "text" else (tuple(values),))
    try:
        ids = tuple(int(v) for v in values)
    except ValueError as exc:
        raise UsageError(f"{args.operation} takes token IDs (integers), got {values}") from exc
    if shape == "id" and len(ids) != 1:
        raise UsageError(f"token_bytes takes one ID, got {len(ids)}")
    return "", ((ids[0],) if shape == "id" else (ids,))


def _policy(args: argparse.Namespace) -> Any:
    from harness.cases.model import Policy
    from harness.cli.encode_cmd import policy_argument

    allowed = policy_argument(args.allowed_special, default=frozenset())
    disallowed = policy_argument(args.disallowed_special, default="all")
    return Policy(allowed_special=allowed, disallowed_special=() if disallowed == frozenset() else disallowed)


def _call(calls: Any, operation: str, policy: Any, arguments: tuple[Any, ...], errors: str) -> Any:
    if operation in ("encode", "encode_batch"):
        return getattr(calls, operation)(*arguments, policy)
    if operation == "decode":
        return calls.decode(*arguments, errors)
    return getattr(calls, operation)(*arguments)


def _shown(operation: str, outcome: Any, paths: list[str]) -> dict[str, Any]:
    """path -> outcome: the surface's paths for api_surface, else the one outcome."""
    from harness.calls import surface_from_data

    if operation == "api_surface" and outcome.is_ok:
        surface = surface_from_data(outcome.value)
        return {p: o for p, o in surface.items() if not paths or p in paths}
    return {"": outcome}


def _line(outcome: Any) -> str:
    from harness.report.parity_json import outcome_json
    from harness.report.view import outcome_line

    # one line per outcome: a native message's own line breaks would read as other adapters
    return " ⏎ ".join(outcome_line(outcome_json(outcome)).split("\n"))


def _key(outcome: Any) -> tuple[Any, ...]:
    # errors compare by category and native type: `except KeyError:` in user code breaks on a ValueError
    return (outcome.kind, outcome.value) if outcome.is_ok else (outcome.kind, outcome.category, outcome.native_type)


def run(args: argparse.Namespace) -> int:
    from harness.run.selection import Selected

    registry = apply_common(args)
    claim_encoding(registry, args.impl, [args.encoding] if args.encoding else [])
    isolation = isolation_from_args(args, registry)
    text, arguments = _arguments(args)
    policy = _policy(args)
    if args.kind and not args.check:
        raise UsageError("--kind needs --check CHECK")
    selected = Selected(registry, isolation=isolation)
    try:
        calls = []
        for name in args.impl:
            found = selected.add(name)
            if found is None:
                row = selected.rows.get(selected.aliases.get(name, name))
                raise UsageError(f"{name} cannot run: {row.reason if row else 'unknown adapter'}")
            calls.append(found)
        width = max(len(c.name) for c in calls)
        shown = {}
        for c in calls:
            shown[c.name] = _shown(args.operation, _call(c, args.operation, policy, arguments, args.errors), args.path)
            for path, outcome in shown[c.name].items():
                label = f"{c.name:<{width}}" + (f"  {path}" if path else "")
                print(f"{label}  {_line(outcome)}")
        if args.check:
            return _judge(args, text, policy, calls)
        paths = {p for s in shown.values() for p in s}
        differs = any(len({_key(s[p]) if p in s else ("missing",) for s in shown.values()}) > 1 for p in paths)
        return EXIT_DIVERGENCE if differs else EXIT_OK
    finally:
        selected.close()


def _judge(args: argparse.Namespace, text: str, policy: Any, calls: list[Any]) -> int:
    from harness.checks import TEXT_CHECKS, run_text_check
    from harness.checks.base import Finding, Subject

    known = [c for c in TEXT_CHECKS if c != "expected"] + ["vocab-consistency"]
    if args.check not in known:
        raise UsageError(f"--check {args.check}: use one of {', '.join(known)}")
    adapter, reference = calls[0], calls[-1]
    for c in (adapter, reference):
        c.reset()
    if args.check == "vocab-consistency":
        result = _vocab_finding(args, text, adapter, reference)
    else:
        result = run_text_check(args.check, Subject(text, policy, adapter, reference))
    # a finding keeps every kind it showed (issue 22): the one asked for may be a second one
    if isinstance(result, Finding) and (args.kind is None or result.shows(args.kind)):
        print(f"{args.check}: {args.kind or result.kind}: {result.detail}")
        return EXIT_DIVERGENCE
    found = f"a {result.kind} divergence, not {args.kind}" if isinstance(result, Finding) else str(result)
    print(f"{args.check}: no longer reproduced ({found})", file=sys.stderr)
    return EXIT_OK


def _vocab_finding(args: argparse.Namespace, text: str, adapter: Any, reference: Any) -> Any:
    """The vocabulary check's finding on these IDs (or this text), of ``--kind``; else "agree"."""
    from harness.checks import check_vocab

    ids = tuple(int(v) for v in args.args) if OPERATIONS[args.operation] in ("ids", "id") else ()
    for finding in check_vocab(adapter, reference).findings:
        if args.kind is not None and not finding.shows(args.kind):
            continue
        if (ids and finding.decode_ids == ids) or (text and finding.text == text) or not (ids or text):
            return finding
    return "agree"
