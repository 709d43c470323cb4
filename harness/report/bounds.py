"""Keeping a report readable when an input is a million characters long.

A divergence found on a long input (``--long``) would otherwise carry its text several
times over (the text, its escaped form, the reproduce command, the first differing
chunk) and one entry per token in each ID list, piece list and trace: hundreds of MB of
JSON and a page no browser opens. So, in ``parity.json``:

- an input of :data:`LONG_CHARS` characters or more that is one repeated unit between a
  short head and tail is written as ``input.generated`` (``{"before", "repeat", "times",
  "then"}``, the rule of a case's ``text_generated``) *instead of* ``input.text``;
  :func:`input_text` gives the text back exactly. Any other long input keeps its text;
- ``input.escaped`` and ``first_differing_chunk`` of a long input show its first and last
  :data:`EDGE_CHARS` characters around a ``…[N characters]…`` marker;
- ID lists, pieces and piece bytes keep their first :data:`MAX_ITEMS` entries (an
  outcome says ``ids_total``), traces of a long input are left out, and details are
  clipped; the divergence then says so in ``truncated``.

Short inputs are untouched: everything above applies only past the limits.
"""

from __future__ import annotations

from typing import Any, Mapping

from harness.cases.model import LONG_TEXT_CHARS, GeneratedText
# found beside the run finder it uses; re-exported: the report's public name
from harness.generate.shrink import as_generated
from harness.escapes import escape_text

__all__ = ["EDGE_CHARS", "LONG_CHARS", "MAX_DETAIL", "MAX_ITEMS", "abbreviate", "as_generated", "clip",
           "escaped", "evidence_json", "input_json", "input_text"]

LONG_CHARS = LONG_TEXT_CHARS
EDGE_CHARS = 100
MAX_ITEMS = 1000
MAX_DETAIL = 2000


def abbreviate(text: str, *, limit: int = LONG_CHARS) -> str:
    """``text`` itself, or its ends around a marker saying how much was left out.

    >>> abbreviate("short")
    'short'
    >>> abbreviate("a" * 30000)[95:125]
    'aaaaa…[29800 characters]…aaaaa'

    """
    if len(text) < limit:
        return text
    left_out = len(text) - 2 * EDGE_CHARS
    return f"{text[:EDGE_CHARS]}…[{left_out} characters]…{text[-EDGE_CHARS:]}"


def escaped(text: str) -> str:
    """``escape_text(text)``, of the ends only for a long text (the marker itself unescaped)."""
    if len(text) < LONG_CHARS:
        return escape_text(text)
    return (f"{escape_text(text[:EDGE_CHARS])}…[{len(text) - 2 * EDGE_CHARS} characters]…"
            f"{escape_text(text[-EDGE_CHARS:])}")


def input_json(text: str) -> dict[str, Any]:
    """The ``input`` object of a divergence."""
    generated = as_generated(text)
    if generated is not None:
        return {"generated": generated.to_json(), "escaped": escaped(text)}
    return {"text": text, "escaped": escaped(text)}


def input_text(data: Mapping[str, Any]) -> str:
    """The exact input of an ``input`` object (written out, or generated).

    >>> input_text({"generated": {"before": "", "repeat": "ab", "times": 2, "then": "!"}})
    'abab!'
    """
    if "text" in data:
        return data["text"]
    g = data["generated"]
    return GeneratedText(repeat=g["repeat"], times=g["times"], before=g.get("before", ""),
                         then=g.get("then", "")).text()


def clip(text: str, *, limit: int = MAX_DETAIL) -> str:
    """A detail line of at most about ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + f"…[{len(text) - limit} more characters]"


def evidence_json(outcomes: dict[str, Any], pieces: dict[str, list[Any]], piece_bytes: dict[str, list[Any]],
                  traces: dict[str, list[Any]], *, long_input: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The evidence lists within bounds, and the ``truncated`` note (None: nothing cut).

    ``outcomes`` are already JSON (``outcome_json``); each list keeps its first
    :data:`MAX_ITEMS` entries.
    """
    cut = False
    bounded_outcomes = {}
    for label, outcome in outcomes.items():
        ids = outcome.get("ids")
        if isinstance(ids, list) and len(ids) > MAX_ITEMS:
            outcome = {**outcome, "ids": ids[:MAX_ITEMS], "ids_total": len(ids)}
            cut = True
        bounded_outcomes[label] = outcome

    def first(lists: dict[str, list[Any]]) -> dict[str, list[Any]]:
        nonlocal cut
        if any(len(v) > MAX_ITEMS for v in lists.values()):
            cut = True
        return {k: list(v[:MAX_ITEMS]) for k, v in lists.items()}

    data = {"outcomes": bounded_outcomes, "pieces": first(pieces), "piece_bytes": first(piece_bytes),
            "traces": {} if long_input else traces}
    if long_input and traces:
        cut = True
    if not cut:
        return data, None
    return data, {"items": MAX_ITEMS,
                  "note": f"a long input: ID, piece and byte lists keep their first {MAX_ITEMS} entries"
                          + (", traces are left out" if long_input and traces else "")}
