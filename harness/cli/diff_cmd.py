"""``tokconf diff OLD.json NEW.json``: what changed between two runs (the upgrade gate).

Exit 0 when the new run adds no unexpected or stale divergence, 1 when it does, 2 on
unreadable or invalid input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli import UsageError


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    del parent  # compares two files; loads no adapters
    parser = subparsers.add_parser(
        "diff",
        help="compare two parity.json runs: new, fixed and changed divergences, changed IDs",
        description="Compare two runs keyed by adapter + check + input. Exit 1 when NEW has "
                    "unexpected or stale divergences that OLD did not have.",
    )
    parser.add_argument("old", metavar="OLD.json", help="the earlier parity.json")
    parser.add_argument("new", metavar="NEW.json", help="the later parity.json")
    parser.add_argument("-o", "--output", metavar="DIFF.html", help="also write the diff as an HTML page")
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object instead of text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from harness.report.diff import diff_runs, format_text
    from harness.report.diff_page import render_diff
    from harness.atomic import write_atomic
    from harness.report.schema import ParityValidationError, load_parity

    from harness.report.outcome_log import read_outcome_log

    try:
        old = load_parity(args.old)
        new = load_parity(args.new)
        old_inputs, new_inputs = read_outcome_log(args.old, old), read_outcome_log(args.new, new)
    except (ParityValidationError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    diff = diff_runs(old, new, old_inputs=old_inputs, new_inputs=new_inputs)
    if args.output:
        try:
            write_atomic(Path(args.output), render_diff(old, new, diff))
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from exc
    if args.json:
        payload = diff.to_json()
        if args.output:
            payload["html"] = str(args.output)
        print(json.dumps(payload, ensure_ascii=True, sort_keys=True))
    else:
        print(format_text(diff), end="")
        if args.output:
            print(f"wrote {args.output}")
    return diff.exit_code
