"""The release ladder section of the page: parity.json's optional ``ladders``, made readable.

A ladder run (``tokconf run --ladder``, issue 22) already folded each behaviour across the
releases (:mod:`harness.report.ladder`) and wrote the result into parity.json; this module
only lays that out, so the page, the terminal lines and the JSON cannot disagree. Per
ladder: the releases oldest first as columns; per behaviour a row with the matrix's glyph
of its status in each release (the agreement glyph where it does not show), the releases
that show it and the release where it changed, whether a shipped case documents it, and
the input that shows it with its whitespace made visible.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.escapes import EscapeError, parse_escapes
from harness.report.cells import cell_mark
from harness.report.ladder import release_span
from harness.report.view import short_visible

__all__ = ["ladder_tables", "release_cell"]

#: when a release shows a behaviour under several statuses, the cell shows the loudest
_LOUDEST_FIRST = ("unexpected", "stale", "documented")


def release_cell(release: str, statuses: str | None) -> dict[str, Any]:
    """What one release's cell of a behaviour shows: its loudest status's glyph and word.

    >>> release_cell("0.9", "documented/unexpected")["status"], release_cell("0.10", None)["word"]
    ('unexpected', 'ok')
    """
    if statuses is None:  # this release does not show the behaviour: it agrees with the reference there
        glyph, word = cell_mark("agree")
        return {"release": release, "status": "agree", "glyph": glyph, "word": word,
                "title": f"{release}: does not show it"}
    found = statuses.split("/")
    status = next((s for s in _LOUDEST_FIRST if s in found), found[0])
    glyph, word = cell_mark(status)
    return {"release": release, "status": status, "glyph": glyph, "word": word,
            "title": f"{release}: shows it ({statuses})"}


def _visible_input(escaped: str) -> str:
    # parity.json keeps the input escaped and cut at 120 characters, so a cut may end
    # inside an escape: then the escaped form is what there is to show
    try:
        return short_visible(parse_escapes(escaped), limit=80)
    except EscapeError:
        return short_visible(escaped, limit=80)


def _row(behaviour: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    shown = {release: statuses for release, statuses in behaviour["shown"]}
    statuses = sorted({s for both in shown.values() for s in both.split("/")})
    documented = any(s in ("documented", "stale") for s in statuses)
    return {
        "check": behaviour["check"],
        "kind": behaviour["kind"],
        "encoding": behaviour["encoding"],
        "case": behaviour["case"],
        "escaped": behaviour["input"],
        "visible": _visible_input(behaviour["input"]),
        "cells": [release_cell(release, shown.get(release)) for release in order],
        "span": release_span(behaviour["runs"]),
        "everywhere": len(shown) == len(order),
        "changed_in": list(behaviour["changed_in"]),
        "documented": documented,
        "statuses": "/".join(statuses),
    }


def ladder_tables(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One table per ladder of the run, in parity.json's order; empty without ladders."""
    return [{"library": section["library"], "releases": list(section["releases"]),
             "rows": [_row(b, section["releases"]) for b in section["behaviours"]]}
            for section in data.get("ladders") or ()]
