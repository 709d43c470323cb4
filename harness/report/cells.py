"""What a matrix cell and an unavailable adapter look like on the page.

Colour alone is not enough (colour-blind readers, greyscale prints): each status has a
glyph of its own shape and a word. The unexpected cell is the only one drawn solid, so
it is the first thing the eye finds; agreements and documented divergences stay quiet.
"""

from __future__ import annotations

import re
from typing import Mapping

__all__ = ["CELL_MARKS", "cell_mark", "reason_line"]

#: status -> (glyph, word). "empty" is a check that compared nothing: never an agreement.
CELL_MARKS: Mapping[str, tuple[str, str]] = {
    "agree": ("✓", "ok"),
    "documented": ("◐", "doc"),
    "unexpected": ("✗", "FAIL"),
    "stale": ("⚠", "stale"),
    "unsupported": ("–", "n/a"),
    "empty": ("∅", "none"),
    "unavailable": ("⊘", "off"),
    "not-run": ("·", "not run"),
}


def cell_mark(status: str) -> tuple[str, str]:
    """Glyph and word for a status; an unknown status shows itself rather than failing.

    >>> cell_mark("unexpected"), cell_mark("new-status")
    (('✗', 'FAIL'), ('?', 'new-status'))
    """
    return CELL_MARKS.get(status, ("?", status))


_CLAUSE_END = re.compile(r";\s|\.\s|:\s(?=pip |apt|pass |set |run |install )")


def reason_line(reason: str | None, *, limit: int = 90) -> str:
    """The first clause of an unavailable adapter's reason, for one line; the whole reason,
    with its fix, goes behind a disclosure.

    >>> reason_line("tokenizer.json for gpt2 is not in the offline cache; pass --vocab-dir FOLDER")
    'tokenizer.json for gpt2 is not in the offline cache'
    >>> reason_line("x" * 100)[-1]
    '…'
    """
    text = " ".join((reason or "unavailable").split("\n")[0].split())
    found = _CLAUSE_END.search(text)
    if found is not None and found.start() > 0:
        text = text[:found.start()]
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
