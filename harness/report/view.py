"""Pure helpers that turn parity.json values into what the HTML templates show.

Everything here is plain data in, plain ``str``/dict out; HTML escaping is Jinja2's job
(autoescape). What these helpers add is making the *invisible* visible: token text is
untrusted, and besides markup it can carry bidi overrides (U+202E reverses what follows),
lone surrogates (unencodable in the UTF-8 page) and terminal escapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from harness.escapes import escape_text, visible

__all__ = [
    "IdCell",
    "IdRow",
    "adapter_order",
    "align_ids",
    "hex_groups",
    "marked_segments",
    "neutralize",
    "outcome_line",
    "short_visible",
]

# Characters that must never reach the page raw: C0/C1 controls (bar \t and \n), lone
# surrogates (not encodable as UTF-8), bidi controls (they reorder what follows, so a
# token could display as something it is not) and U+2028/2029 (line breaks to some
# terminals and JavaScript, invisible in HTML).
_DANGEROUS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


def neutralize(text: str) -> str:
    r"""Replace controls, lone surrogates and bidi controls by their backslash escapes.

    Applied to every value the templates print (Jinja2 ``finalize``), before escaping.

    >>> neutralize("ab\u202ecd\ud800\x1b[31m\n")
    'ab\\u202ecd\\ud800\\x1b[31m\n'
    """
    return _DANGEROUS.sub(lambda m: escape_text(m.group()), text)


_MARKS = re.compile(r"[␠␤␍⇥]+|\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def marked_segments(text: str) -> list[tuple[str, str]]:
    r"""Split visible text into plain runs and markers, so the page can tint the markers.

    ``ws`` marks the whitespace symbols of :func:`harness.escapes.visible`, ``xe`` the
    ``\xNN``/``\uNNNN`` escapes; plain text has an empty class.

    >>> marked_segments("␠␠a\\x00b")
    [('␠␠', 'ws'), ('a', ''), ('\\x00', 'xe'), ('b', '')]
    """
    out: list[tuple[str, str]] = []
    position = 0
    for match in _MARKS.finditer(text):
        if match.start() > position:
            out.append((text[position : match.start()], ""))
        out.append((match.group(), "xe" if match.group().startswith("\\") else "ws"))
        position = match.end()
    if position < len(text):
        out.append((text[position:], ""))
    return out


def short_visible(text: str, *, limit: int = 60) -> str:
    r"""``visible(text)`` cut to ``limit`` characters with an ellipsis, for one-line summaries.

    >>> short_visible("hello world\n")
    'hello␠world␤'
    >>> short_visible("x" * 70, limit=10)
    'xxxxxxxxx…'
    """
    shown = visible(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def hex_groups(text: str) -> tuple[str, bool]:
    r"""The UTF-8 bytes of ``text`` in hex, one group per character, and whether it holds
    lone surrogates (which only encode with ``surrogatepass``, i.e. not as valid UTF-8).

    >>> hex_groups("a é")
    ('61 20 c3a9', False)
    >>> hex_groups("\ud83d")
    ('eda0bd', True)
    """
    groups = [ch.encode("utf-8", "surrogatepass").hex() for ch in text]
    return " ".join(groups), any("\ud800" <= ch <= "\udfff" for ch in text)


def adapter_order(divergence: Mapping[str, Any]) -> list[str]:
    """Adapters of a divergence: the reference first, then the adapter, then any others.

    >>> adapter_order({"reference": "r", "adapter": "a", "outcomes": {"a": {}, "x": {}, "r": {}}, "pieces": {}})
    ['r', 'a', 'x']
    """
    names: list[str] = []
    for name in (divergence.get("reference"), divergence["adapter"]):
        if name and name not in names:
            names.append(name)
    extra = set(divergence.get("outcomes", {})) | set(divergence.get("pieces", {})) | set(divergence.get("traces", {}))
    names.extend(sorted(extra - set(names)))
    return names


@dataclass(frozen=True)
class IdCell:
    """One token position of one adapter in the aligned ID table."""

    token_id: str  # "" when this adapter has no token at this index
    piece: str  # visible piece text, "" when unknown
    piece_hex: str  # the token's bytes in hex when the run recorded them
    mark: str  # "same", "differs", "first" (the first difference) or "missing"


@dataclass(frozen=True)
class IdRow:
    adapter: str
    cells: tuple[IdCell, ...]


def align_ids(
    divergence: Mapping[str, Any], adapters: Sequence[str]
) -> tuple[list[int], list[IdRow]]:
    """Index-aligned ID lists of every adapter whose outcome is a flat ID list.

    Returns the column indexes and one row per adapter. A position differs when the
    adapters do not all have the same ID there; ``first_difference`` (or, when absent,
    the first differing position) is marked ``first``.

    >>> cols, rows = align_ids({"first_difference": 1, "outcomes": {"r": {"kind": "ok", "ids": [1, 2]},
    ...     "a": {"kind": "ok", "ids": [1, 3, 4]}}, "pieces": {"a": ["x", "y", "z"]}}, ["r", "a"])
    >>> cols
    [0, 1, 2]
    >>> [c.mark for c in rows[1].cells], rows[1].cells[2].piece
    (['same', 'first', 'differs'], 'z')
    """
    lists: dict[str, list[int]] = {}
    for name in adapters:
        outcome = divergence.get("outcomes", {}).get(name)
        if outcome and outcome.get("kind") == "ok" and "ids" in outcome:
            ids = outcome["ids"]
            if all(isinstance(i, int) for i in ids):
                lists[name] = ids
    if not lists:
        return [], []
    width = max(len(ids) for ids in lists.values())
    columns = list(range(width))
    differs = [len({ids[i] if i < len(ids) else None for ids in lists.values()}) > 1 for i in columns]
    first = divergence.get("first_difference")
    if first is None or not (0 <= first < width):
        first = next((i for i in columns if differs[i]), None)
    rows: list[IdRow] = []
    for name, ids in lists.items():
        pieces = divergence.get("pieces", {}).get(name) or []
        hexes = (divergence.get("piece_bytes") or {}).get(name) or []
        cells = []
        for i in columns:
            if i >= len(ids):
                cells.append(IdCell("", "", "", "missing"))
                continue
            mark = "first" if i == first else ("differs" if differs[i] else "same")
            piece = pieces[i] if i < len(pieces) and pieces[i] is not None else ""
            piece_hex = hexes[i] if i < len(hexes) and hexes[i] is not None else ""
            cells.append(IdCell(str(ids[i]), piece, piece_hex, mark))
        rows.append(IdRow(name, tuple(cells)))
    return columns, rows


def outcome_line(outcome: Mapping[str, Any] | None) -> str:
    r"""One line describing an outcome, safe to print on a terminal.

    >>> outcome_line({"kind": "ok", "ids": [1, 2]})
    '[1, 2]'
    >>> outcome_line({"kind": "ok", "bytes": "6869"})
    'bytes 68 69'
    >>> outcome_line({"kind": "raised", "category": "unknown-id", "native_type": "builtins.KeyError", "message": "99\x1b"})
    'raised unknown-id (builtins.KeyError): 99\\x1b'
    """
    if not outcome:
        return "(no outcome recorded)"
    kind = outcome.get("kind")
    if kind == "ok":
        if "ids" in outcome:
            return "[" + ", ".join(str(i) for i in outcome["ids"]) + "]"
        if "bytes" in outcome:
            data = outcome["bytes"]
            return "bytes " + " ".join(data[i : i + 2] for i in range(0, len(data), 2))
        text = outcome.get("text")
        return "null" if text is None else "text " + visible(text)
    if kind == "raised":
        native = f" ({outcome['native_type']})" if outcome.get("native_type") else ""
        message = f": {neutralize(outcome['message'])}" if outcome.get("message") else ""
        return f"raised {outcome.get('category')}{native}{message}"
    return f"{kind}" + (f": {neutralize(outcome['message'])}" if outcome.get("message") else "")
