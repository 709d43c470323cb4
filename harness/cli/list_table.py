"""The text table of ``tokconf list``: every line fits 120 columns, no word is cut.

Names are printed whole (they are what a user copies into ``--impl``); a name wider than
its column gets a line of its own and its row continues under it. The reason an adapter
is unavailable (with its fix, at the end) is wrapped under the row, indented.
"""

from __future__ import annotations

import textwrap
from typing import Any, Iterable, Mapping

__all__ = ["WIDTH", "format_list"]

WIDTH = 120
_NAME, _ENCODING, _LIBRARY = 44, 28, 24  # column caps; 44 + 28 + 24 + "unavailable" + gaps < 120


def format_list(rows: Iterable[Mapping[str, Any]], failures: Mapping[str, str] | None = None) -> str:
    """Rows as ``tokconf list --json`` gives them -> the table, one adapter per row.

    >>> print(format_list([{"name": "tiktoken:gpt2", "encoding": "r50k_base", "library": "tiktoken",
    ...                     "version": "0.14.0", "available": True, "reason": None}]), end="")
    adapter        encoding   library          status
    tiktoken:gpt2  r50k_base  tiktoken 0.14.0  available
    """
    rows = list(rows)
    shown = [(row["name"], row["encoding"], _library(row), _status(row)) for row in rows]
    name_w = min(_NAME, max([len(s[0]) for s in shown] + [len("adapter")]))
    enc_w = min(_ENCODING, max([len(s[1]) for s in shown] + [len("encoding")]))
    lib_w = min(_LIBRARY, max([len(s[2]) for s in shown] + [len("library")]))

    def line(name: str, encoding: str, library: str, status: str) -> str:
        return f"{name:<{name_w}}  {encoding:<{enc_w}}  {library:<{lib_w}}  {status}".rstrip()

    out = [line("adapter", "encoding", "library", "status")]
    for row, (name, encoding, library, status) in zip(rows, shown):
        if len(name) > name_w:
            out.append(name)
            name = ""
        out.append(line(name, encoding, library, status))
        if not row["available"]:
            out.extend(_wrapped(row.get("reason") or "no reason given"))
    for name, reason in (failures or {}).items():
        out.append(line(name, "", "", "provider failed"))
        out.extend(_wrapped(reason))
    return "\n".join(out) + "\n"


def _library(row: Mapping[str, Any]) -> str:
    if not row["library"]:
        return "-"
    return f"{row['library']} {row['version'] or '(not installed)'}"


def _status(row: Mapping[str, Any]) -> str:
    return "available" if row["available"] else "unavailable"


def _wrapped(reason: str) -> list[str]:
    # wrapped, never cut: the fix is at the end of the reason
    return textwrap.wrap(" ".join(reason.split()), width=WIDTH, initial_indent="    ",
                         subsequent_indent="    ", break_on_hyphens=False, break_long_words=False)
