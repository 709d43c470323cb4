"""``tokconf run``: cases and generated checks over the adapters; parity.json and a summary.

Exit 0 when there are only agreements and reproduced documented divergences, 1 when
there is an unexpected or stale divergence, 2 for usage or input errors (a bad case
file, an unknown adapter, a plugin that does not load).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shutil
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from harness.cli import EXIT_DIVERGENCE, EXIT_OK, UsageError, apply_common, claim_encoding
from harness.run.result import RunResult

_CODES = {"agree": "ok", "documented": "doc", "unexpected": "FAIL", "stale": "STALE",
          "unsupported": "-", "unavailable": "n/a"}
_SHORT = {"id-parity": "ids", "expected": "exp", "round-trip": "rt", "per-token-decode": "ptd",
          "decode": "dec", "stream-decode": "stm", "special-policy": "spc", "encode-ordinary": "ord", "batch": "bat",
          "error-category": "err", "pretokenize-coverage": "pre", "vocab-consistency": "voc"}


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "run", parents=[parent], help="run the cases and generated checks; write parity.json",
        description="Run the YAML cases and generated hostile inputs through every check over the "
                    "adapters, write reports/<run>/parity.json (and parity.html), update reports/latest/ "
                    "and print a summary. Exit 0: all as expected; 1: unexpected or stale "
                    "divergences; 2: usage or input error.",
    )
    parser.add_argument("--impl", action="append", default=[], metavar="NAME",
                        help="only this adapter (repeatable); references are added as needed")
    parser.add_argument("--encoding", action="append", default=[], metavar="ENC",
                        help="only adapters of this encoding (repeatable)")
    parser.add_argument("--cases", action="append", default=[], metavar="PATH",
                        help="case file or folder (repeatable; default: the shipped cases)")
    parser.add_argument("--no-cases", action="store_true", help="run no cases")
    parser.add_argument("--reference", action="append", default=[], metavar="ENC=NAME",
                        help="the reference adapter of an encoding (repeatable)")
    parser.add_argument("--profile", choices=["dev", "ci", "nightly"],
                        help="hypothesis profile (default: $HYPOTHESIS_PROFILE or ci)")
    parser.add_argument("--seed", type=int, help="seed of the generated inputs (default: 0 under ci)")
    parser.add_argument("--max-examples", type=int, metavar="N", help="generated inputs per fast adapter")
    parser.add_argument("--no-generated", action="store_true", help="run only the cases")
    parser.add_argument("--out", default="reports", metavar="DIR", help="reports folder (default: reports)")
    parser.add_argument("--save-new-cases", metavar="DIR",
                        help="write unexpected minimal counterexamples as YAML cases into DIR")
    parser.add_argument("--min-coverage", action="append", default=[], metavar="[MEASURE=]FRACTION",
                        help="fail (exit 1) when an adapter's coverage is below FRACTION; MEASURE is "
                             "alternatives (the default), pairs, vocab or merges (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal)."""

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty()
        self._phase = ""
        self._last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        new_phase = phase != self._phase
        finished = done >= total
        if not (new_phase or finished or (self.tty and now - self._last > 0.1)):
            return
        if new_phase and self._phase and self.tty:
            self.stream.write("\n")
        self._phase, self._last = phase, now
        width = 30
        filled = width * done // max(1, total)
        line = f"{phase:<10} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        if self.tty:
            self.stream.write("\r" + line + ("\n" if finished else ""))
        elif new_phase or finished:
            self.stream.write(line + "\n")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from harness.cases.loader import CaseFileError, case_files, default_cases_dir, load_cases
    from harness.report.parity_json import build, run_id, write_atomic
    from harness.run.runner import GenerationOptions, Runner, case_adapter_names
    from harness.run.selection import SelectionError, parse_references, select
    from harness.generate.strategies import resolve_profile

    started = _dt.datetime.now(_dt.timezone.utc)
    registry = apply_common(args)
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1, got {args.max_examples}")
    from harness.run.coverage import below_minimum, parse_minimums

    try:
        minimums = parse_minimums(args.min_coverage)
        profile = resolve_profile(args.profile)
        paths = [] if args.no_cases else (args.cases or [default_cases_dir()])
        cases = load_cases(paths) if paths else []
        files = [str(p) for p in case_files(paths)] if paths else []
        references = parse_references(args.reference)
        impls = list(args.impl or [])
        claim_encoding(registry, impls, args.encoding or [])
        if impls:
            # what the user plugged in is what they came to test, --impl or not
            impls += [n for n in registry.plugin_names() if n not in impls]
        selected = select(registry, impls=impls, encodings=args.encoding, references=references,
                          case_adapters=case_adapter_names(cases),
                          case_references=[c.reference for c in cases if c.reference])
    except (CaseFileError, FileNotFoundError, SelectionError, ValueError) as exc:
        raise UsageError(str(exc)) from exc

    progress = Progress(sys.stderr, enabled=not args.quiet)
    runner = Runner(selected, progress=progress)
    runner.run_vocab()
    runner.run_cases(cases)
    if not args.no_generated:
        runner.run_generated(GenerationOptions(profile=profile, seed=args.seed, max_examples=args.max_examples))
    else:
        runner.profile = profile
    result = runner.finish()
    finished = _dt.datetime.now(_dt.timezone.utc)

    argv = ["tokconf", *(getattr(args, "argv", None) or sys.argv[1:])]
    data = build(result, started=started, finished=finished, argv=argv, case_files=files)
    folder = _run_folder(Path(args.out), run_id(started))
    write_atomic(folder / "parity.json", data)
    _write_html(folder, data)
    latest = _update_latest(Path(args.out), folder)
    if args.save_new_cases:
        from harness.cases.writer import write_new_cases

        written = write_new_cases(args.save_new_cases, result.by_status("unexpected"), run=run_id(started))
        print(f"new cases: {written}" if written else "new cases: none (no unexpected divergence)")
    print_summary(result, sys.stdout)
    short = below_minimum(result.coverage, minimums)
    for problem in short:
        print(f"coverage too low: {problem}; add inputs that reach it (cases, --profile nightly) or lower the figure")
    print(f"\nreport: {folder / 'parity.json'}" + (f" (latest: {latest})" if latest else ""))
    return EXIT_DIVERGENCE if result.failed or short else EXIT_OK


def _run_folder(out: Path, name: str) -> Path:
    folder, n = out / name, 1
    while folder.exists():
        folder = out / f"{name}-{n}"
        n += 1
    folder.mkdir(parents=True)
    return folder


def _write_html(folder: Path, data: dict[str, Any]) -> None:
    try:
        from harness.report.page import render_report
    except ImportError:
        return  # the report module is optional: parity.json is the product of a run
    try:
        page = render_report(data)
    except Exception as exc:  # noqa: BLE001 - the JSON is written; say why the page is not
        print(f"tokconf run: warning: parity.html not written: {type(exc).__name__}: {exc}", file=sys.stderr)
        return
    tmp = folder / "parity.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(folder / "parity.html")


def _update_latest(out: Path, folder: Path) -> Path | None:
    """Copy the run into ``out/latest`` (replacing it); a copy works everywhere, a link does not."""
    latest = out / "latest"
    staging = out / ".latest.tmp"
    try:
        if staging.exists():
            shutil.rmtree(staging)
        shutil.copytree(folder, staging)
        if latest.is_symlink() or latest.is_file():
            latest.unlink()
        elif latest.exists():
            shutil.rmtree(latest)
        staging.replace(latest)
    except OSError as exc:
        print(f"tokconf run: warning: {latest} not updated: {exc}", file=sys.stderr)
        return None
    return latest


def print_summary(result: RunResult, out: TextIO) -> None:
    """The matrix as a table (adapters x checks), the counts, and what failed."""
    checks = list(result.checks)
    names = list(result.matrix)
    width = max([len(n) for n in names] + [7])
    out.write(f"{'adapter':<{width}}  " + " ".join(f"{_SHORT.get(c, c):>5}" for c in checks) + "  inputs\n")
    for name in names:
        row = result.matrix[name]
        cells = " ".join(f"{_CODES[row[c].status]:>5}" for c in checks)
        out.write(f"{name:<{width}}  {cells}  {sum(cell.inputs for cell in row.values())}\n")
    out.write("columns: " + ", ".join(f"{_SHORT.get(c, c)}={c}" for c in checks) + "\n")
    summary = result.summary()
    out.write("cells: " + ", ".join(f"{status} {count}" for status, count in summary.items()) + "\n")
    documented = result.by_status("documented")
    out.write(f"divergences: {len(documented)} documented, {len(result.by_status('unexpected'))} unexpected, "
              f"{len(result.by_status('stale'))} stale\n")
    for record in result.divergences:
        if record.status == "documented":
            continue
        where = f"case {record.case}" if record.case else record.origin
        out.write(f"\n{record.id} {record.status.upper()} {record.adapter} {record.check} [{record.kind}] ({where})\n")
        out.write(f"  {record.detail}\n")
        out.write(f"  reproduce: {record.evidence.reproduce}\n")
    for note in result.notes:
        out.write(f"note: {note}\n")
    print_coverage(result, out)


def print_coverage(result: RunResult, out: TextIO) -> None:
    """The lowest figure of each coverage measure over the adapters, and whose it is."""
    parts = []
    for measure in ("alternatives", "pairs", "vocab", "merges"):
        figures = [(c[measure]["fraction"], name) for name, c in result.coverage.items() if c.get(measure)]
        if figures:
            low, name = min(figures)
            parts.append(f"{measure} >= {low:.1%} ({name})")
    if parts:
        out.write("coverage (lowest): " + "; ".join(parts) + "\n")
