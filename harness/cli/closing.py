"""The last lines ``tokconf run`` prints: the verdict in words, the counts, the files.

They come from parity.json itself, through :func:`harness.report.verdict.verdict_of`,
the function that also gives the exit code and the page's verdict, so the terminal, the
page and ``$?`` cannot tell three different stories (issue 21). Printed last, so the
verdict is what a reader sees without scrolling.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Mapping, TextIO

from harness.report.verdict import Verdict, verdict_of

__all__ = ["print_closing"]


def _wrapped(line: str) -> str:
    # wrapped to the terminal (COLUMNS), never cut: a verdict's reasons end with what to fix
    from harness.cli.summary import terminal_width

    return textwrap.fill(line, width=terminal_width(), subsequent_indent="  ", break_on_hyphens=False,
                         break_long_words=False) + "\n"


def _counts(data: Mapping[str, Any]) -> list[str]:
    """``divergences: 0 unexpected, 0 stale, 12 documented`` and the matrix cells by status."""
    statuses = [d["status"] for d in data["divergences"]]
    divergences = ", ".join(f"{statuses.count(s)} {s}" for s in ("unexpected", "stale", "documented"))
    cells = ", ".join(f"{n} {s}" for s, n in data["summary"].items() if n or s != "not-run")
    return [f"divergences: {divergences}", f"matrix cells: {cells}"]


def print_closing(data: Mapping[str, Any], folder: Path, out: TextIO, *, latest: Path | None,
                  latest_kept: str | None = None) -> Verdict:
    """Print the closing lines for the run in ``data`` written to ``folder``; return its verdict.

    ``latest_kept``: why ``reports/latest`` was left as it was (an interrupted run).
    """
    verdict = verdict_of(data)
    out.write("\n" + _wrapped(verdict.line))
    out.write("".join(_wrapped(line) for line in _counts(data)))
    out.write(f"report: {folder / 'parity.json'}\n")
    if (folder / "parity.html").exists():
        out.write(f"page:   {folder / 'parity.html'}\n")
    if latest is not None:
        out.write(f"latest: {latest}\n")
    elif latest_kept:
        out.write(f"latest: not replaced ({latest_kept})\n")
    out.write(f"exit code {verdict.exit_code}\n")
    return verdict
