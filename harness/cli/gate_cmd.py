"""``tokconf gate golden.tokconf``: re-run a golden's inputs; exit 1 on any change.

Lists each changed input and API path with its outcome before and after: as text, as
one JSON object (``--json``) and as an HTML page (``-o gate.html``). ``--impl`` names
the adapters to compare with (a golden made with ``tiktoken@0.9.0:cl100k_base`` gates
``--impl tiktoken:cl100k_base``); by default the golden's own. Exit 0: no change; 1:
changes; 2: usage error (no golden: the message gives the command that makes one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli import EXIT_OK, UsageError, apply_common
from harness.cli.executor_args import add_cluster_options, check_cluster_options, golden_records
from harness.cli.inputs import add_corpus_options, corpus_options
from harness.cli.isolation import add_golden_timeout
from harness.cli.progress_line import ProgressLine


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "gate", parents=[parent], help="re-run a golden (tokconf snapshot) and list every changed outcome",
        description="Re-run the inputs of a golden through the same (or --impl) adapters and compare every API "
                    "path. Exit 1 on any change.")
    parser.add_argument("golden", metavar="GOLDEN", help="a file written by `tokconf snapshot`")
    parser.add_argument("--impl", action="append", default=[], metavar="NAME",
                        help="compare with this adapter (repeatable; paired with the golden's by name, "
                             "ignoring an environment's @version)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("-o", "--output", metavar="PAGE.html", help="also write the changes as an HTML page")
    parser.add_argument("--max-changes", type=int, default=10_000, metavar="N",
                        help="list at most N changes (all are counted; default 10000)")
    parser.add_argument("--input", metavar="SOURCE", dest="only_input",
                        help="re-run only the golden's input with this source (case:ID, generated:N, long:..., "
                             "attributes); with --path, what each listed change's command does")
    parser.add_argument("--path", metavar="PATH", dest="only_path",
                        help="compare only this API path (encode[all], _encode_bytes, ...)")
    parser.add_argument("--quiet", action="store_true", help="no progress")
    add_golden_timeout(parser)
    add_corpus_options(parser)
    add_cluster_options(parser, what="where the inputs are run again", jobs=True)
    parser.set_defaults(handler=run)


def missing_golden_message(path: str) -> str:
    return (f"no golden at {path}: make it with `tokconf snapshot -o {path}` (add the --impl, --corpus and --long "
            f"flags you gate with)")


def run(args: argparse.Namespace) -> int:
    from harness.atomic import write_atomic
    from harness.cases.corpus import CorpusError
    from harness.golden.compare import run_gate
    from harness.golden.format import GoldenError, read_golden
    from harness.golden.inputs import corpus_inputs
    from harness.golden.snapshot import build_adapters
    from harness.report.gate_page import format_gate_text, render_gate_page
    from harness.run.selection import SelectionError
    from harness.worker.setup import Isolation

    if not Path(args.golden).is_file():
        raise UsageError(missing_golden_message(args.golden))
    dask = check_cluster_options(args, dask_only=("--scheduler", "--jobs"))
    registry = apply_common(args)
    options = corpus_options(args)
    try:
        header, _ = read_golden(args.golden)
        names = args.impl or [a.name for a in header.adapters]
        selected = build_adapters(registry, names, isolation=Isolation(timeout_s=args.timeout))
    except (GoldenError, SelectionError) as exc:
        raise UsageError(str(exc)) from exc
    line = None if (args.quiet or args.json) else ProgressLine("gate", every=100)
    try:
        corpus = corpus_inputs(args.corpus, options) if args.corpus else None
        with golden_records(args, selected, dask=dask) as records:
            result = run_gate(args.golden, selected, corpus=corpus, max_changes=args.max_changes, records=records,
                              only_input=args.only_input, only_path=args.only_path, cases=_shipped_cases(),
                              **(line.hooks() if line is not None else {}))
    except (GoldenError, CorpusError) as exc:
        raise UsageError(str(exc)) from exc
    finally:
        selected.close()
    if line is not None:
        line.end()
    data = result.to_json()
    if args.output:
        write_atomic(args.output, render_gate_page(data))
        data["html"] = args.output
    if args.json:
        print(json.dumps(data, ensure_ascii=True, sort_keys=True))
    else:
        print(format_gate_text(data), end="")
        if args.output:
            print(f"wrote {args.output}")
    return result.exit_code if result.exit_code else EXIT_OK


def _shipped_cases() -> list:
    """The shipped cases, to say which changes they document (none if they cannot load:
    a gate never fails for want of its annotations)."""
    from harness.cases.loader import CaseFileError, load_cases

    try:
        return load_cases()
    except CaseFileError:
        return []
