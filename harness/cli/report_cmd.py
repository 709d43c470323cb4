"""``tokconf report RUN.json -o page.html``: rebuild the HTML page from a run's JSON."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import EXIT_OK, UsageError


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    del parent  # no adapters are loaded: the page is a pure function of the JSON
    parser = subparsers.add_parser(
        "report",
        help="render parity.json as a self-contained HTML page",
        description="Validate RUN.json (parity.json, schema_version 2) and write the HTML page. "
                    "The page is a pure function of the JSON: rendering twice gives identical bytes.",
    )
    parser.add_argument("run_json", metavar="RUN.json", help="parity.json written by `tokconf run`")
    parser.add_argument("-o", "--output", metavar="PAGE.html",
                        help="where to write the page (default: RUN.json with .html, e.g. parity.html)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from harness.report.page import render_report
    from harness.atomic import write_atomic
    from harness.report.schema import ParityValidationError, load_parity

    source = Path(args.run_json)
    try:
        data = load_parity(source)
    except ParityValidationError as exc:
        raise UsageError(str(exc)) from exc
    target = Path(args.output) if args.output else source.with_suffix(".html")
    if target.resolve() == source.resolve():
        raise UsageError(f"{target} is the input file; pass another path with -o")
    page = render_report(data, validate=False)
    try:
        write_atomic(target, page)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc}") from exc
    print(f"wrote {target} ({len(page.encode('utf-8'))} bytes)")
    return EXIT_OK
