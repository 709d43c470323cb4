"""Which vocabulary tokens byte-pair merging cannot build (issue 23).

tiktoken looks a whole pre-token chunk up in the ranks before merging, so every token is
reachable as a chunk of its own. A ``tokenizer.json`` whose BPE model has no
``ignore_merges`` only merges: a token that merging its own bytes by rank does not end in
is never produced (Llama 3's " Việc" merges to " Vi", "ệ", "c"). This is the pure audit of
a rank table, and :func:`merge_unreachable_section` the report's list of them per
vocabulary (parity.json ``vocabularies``).

It is not the every-token phase's reachability audit (issue 20), which asks which IDs one
*encoder* emits; this one asks which tokens a *merge list* can build at all, the same for
every conversion of the table.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable, Mapping

__all__ = ["merge_unreachable", "merge_unreachable_section", "unreachable_tokens"]


def _merge(piece: bytes, ranks: Mapping[bytes, int], limit: int) -> list[bytes]:
    # the rule tiktoken's merging follows: merge the adjacent pair whose concatenation has
    # the lowest rank (leftmost on a tie), again and again
    parts = [piece[i: i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, at = limit, -1
        for k in range(len(parts) - 1):
            rank = ranks.get(parts[k] + parts[k + 1], limit)
            if rank < best:
                best, at = rank, k
        if at < 0:
            break
        parts[at: at + 2] = [parts[at] + parts[at + 1]]
    return parts


def unreachable_tokens(ranks: Mapping[bytes, int]) -> list[bytes]:
    """The tokens of ``ranks`` (bytes -> rank) that merging their own bytes does not build,
    in rank order.

    Llama 3's ".:.:" is one (tiktoken issue 60): ":." merges first, and then no pair of
    ".", ":.", ":" is a token.

    >>> unreachable_tokens({b".": 0, b":": 1, b":.": 2, b".:": 3, b".:.:": 4})
    [b'.:.:']
    >>> unreachable_tokens({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4})
    []
    """
    limit = max(ranks.values(), default=0) + 1
    out = []
    for token, _ in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1 and _merge(token, ranks, limit) != [token]:
            out.append(token)
    return out


@lru_cache(maxsize=None)
def merge_unreachable(encoding: str) -> tuple[bytes, ...] | None:
    """The tokens of a data-described encoding's own rank file that merging cannot build;
    ``None`` for an unknown encoding, a GPT one (tiktoken's own files: none, measured) or
    one whose file cannot be read here."""
    from harness.encodings.catalog import encoding_spec
    from harness.encodings.ranks import encoding_ranks

    spec = encoding_spec(encoding)
    if spec is None or spec.vocabulary.pinned is not None:
        return None
    try:
        return tuple(unreachable_tokens(encoding_ranks(spec)))
    except Exception:  # noqa: BLE001 - a missing vocabulary is the adapters' to report
        return None


def merge_unreachable_section(encodings: Iterable[str]) -> dict[str, Any]:
    """parity.json ``vocabularies``: per encoding of the run, every token a merge list
    cannot build (shown as divergences' ``pieces`` are: whitespace visible, other bytes
    as ``\\xNN``; rank order), and how many."""
    from harness.escapes import visible_bytes

    out: dict[str, Any] = {}
    for encoding in sorted(set(encodings)):
        tokens = merge_unreachable(encoding)
        if tokens is None:
            continue
        out[encoding] = {"merge_unreachable": {
            "count": len(tokens),
            "tokens": [visible_bytes(token) for token in tokens],
        }}
    return out
