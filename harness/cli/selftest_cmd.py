"""``tokconf selftest``: the mutation score of the default checks.

Every planted fault of :mod:`harness.selftest` (a tiktoken cl100k_base wrapper with one
thing wrong) goes through what ``tokconf run`` does; the command prints, per fault,
whether a check caught it, which check, and the minimal input, then the score. Exit 0
when every fault is caught and the reference itself stayed clean, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, UsageError


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    del parent  # the faults wrap the built-in tiktoken adapter; no plugins
    parser = subparsers.add_parser(
        "selftest", help="run the checks against planted faults and print the mutation score",
        description="Wrap tiktoken:cl100k_base in deliberately faulty variants (one planted fault "
                    "each: pre-tokenization, merging, special tokens, decoding, batching, error "
                    "handling, API), run the default checks against each, and print which are caught, "
                    "with the minimal input, and which are missed. Exit 0 when all are caught.",
    )
    parser.add_argument("--profile", choices=["dev", "ci", "nightly"], default="ci",
                        help="hypothesis profile of the generated inputs (default: ci, as `tokconf run`)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME",
                        help="only this fault (repeatable; names as listed)")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from harness.cli.run_cmd import Progress
    from harness.selftest.score import FAULTS, run_selftest

    known = {f.fault: f for f in FAULTS}
    unknown = [name for name in args.fault if name not in known]
    if unknown:
        raise UsageError(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(known)}")
    faults = [known[name] for name in args.fault] if args.fault else FAULTS
    score = run_selftest(profile=args.profile, faults=faults,
                         progress=Progress(sys.stderr, enabled=not (args.quiet or args.json)))
    if args.json:
        json.dump(as_json(score), sys.stdout, ensure_ascii=True, indent=1)
        sys.stdout.write("\n")
    else:
        print_score(score, sys.stdout)
    return EXIT_OK if score.caught == score.total and not score.reference_problems else EXIT_DIVERGENCE


def as_json(score) -> dict:  # type: ignore[no-untyped-def]
    return {
        "profile": score.profile, "caught": score.caught, "total": score.total,
        "seconds": round(score.seconds, 1), "reference_problems": list(score.reference_problems),
        "faults": [{"fault": v.fault, "area": v.area, "summary": v.summary, "caught": v.caught,
                    "check": v.check, "checks": list(v.checks), "kind": v.kind, "input": v.text, "by_ids": v.by_ids,
                    "reproduce": v.reproduce, "small": v.small, "not_small": v.not_small}
                   for v in score.verdicts],
    }


def print_score(score, out: TextIO) -> None:  # type: ignore[no-untyped-def]
    from harness.escapes import escape_text
    from harness.selftest.score import SMALL

    out.write(f"tokconf selftest: {score.total} planted faults in wrappers of tiktoken:cl100k_base, "
              f"profile {score.profile}\n\n")
    width = max(len(v.fault) for v in score.verdicts)
    for v in score.verdicts:
        if not v.caught:
            out.write(f"MISSED  {v.area:<16} {v.fault:<{width}}  {v.summary}\n")
            continue
        shown = (v.reproduce or "").split(" -- ", 1)[-1] if v.by_ids else f"'{escape_text(v.text or '')}'"
        size = "IDs " + shown if v.by_ids else f"{shown} ({len(v.text or '')} chars)"
        if len(size) > 70:
            size = size[:60] + f"... ({len(v.text or '')} chars)"
        out.write(f"caught  {v.area:<16} {v.fault:<{width}}  {v.check} [{v.kind}]  {size}\n")
    small = sum(v.small for v in score.verdicts)
    out.write(f"\nscore: {score.caught}/{score.total} caught; {small} with a minimal input of at most "
              f"{SMALL} characters\n")
    for v in score.verdicts:
        if v.caught and not v.small:
            why = v.not_small or "no smaller input was found (a gap: please report it)"
            out.write(f"  not that small: {v.fault}: {why}\n")
    for problem in score.reference_problems:
        out.write(f"reference tiktoken:cl100k_base itself diverged: {problem}\n")
    out.write(f"({score.seconds:.0f} s)\n")
