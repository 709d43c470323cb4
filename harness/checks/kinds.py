"""A finding's kind in words, for people (parity.json keeps the machine label).

Kinds are built by the checks from a few shapes (:func:`harness.checks.base.shape`):
``ok``, ``raised:<category>``, ``timeout``, ``crashed``; a pair ``<mine>|<reference>``
says what the adapter did against what was expected of it.
"""

from __future__ import annotations

__all__ = ["kind_words"]

_PLAIN = {
    "segmentation": "other tokens for the same bytes",
    "content": "tokens that decode to other bytes",
    "ids": "other IDs",
    "bytes": "other bytes",
    "text": "other text",
    "strict": "other text with errors='strict'",
    "length": "another number of results",
    "trace": "other merge rounds",
    "not-reproduced": "documented divergence not reproduced",
    "special-ordinary": "a special ID that is also an ordinary token",
    "special-duplicate": "two specials share one ID",
}

_PREFIXED = {
    "encode": "encoding failed: {}",
    "decode": "decoding failed: {}",
    "piece": "per-token decode: {}",
    "token-round-trip": "a token's own text: {}",
    "special-decode": "decoding a special ID: {}",
    "declared": "declared special-token semantics ({})",
    "violation": "special-token policy violated: {}",
}


def _shape_words(shape: str) -> str:
    """``raised:unknown-id`` -> ``raises unknown-id``; ``ok`` -> ``returns``.

    >>> _shape_words("raised:unknown-id"), _shape_words("ok"), _shape_words("crashed")
    ('raises unknown-id', 'returns', 'crashes')
    """
    if shape.startswith("raised:"):
        return "raises " + shape[len("raised:"):]
    return {"ok": "returns", "timeout": "times out", "crashed": "crashes"}.get(shape, shape)


def kind_words(kind: str) -> str:
    """The kind as a short phrase.

    >>> kind_words("segmentation")
    'other tokens for the same bytes'
    >>> kind_words("raised:unencodable-text|ok")
    'raises unencodable-text where the reference returns'
    >>> kind_words("decode:raised:unknown-id")
    'decoding failed: raises unknown-id'
    >>> kind_words("declared:always-special")
    'declared special-token semantics (always-special)'
    >>> kind_words("something-new")
    'something-new'
    """
    if kind in _PLAIN:
        return _PLAIN[kind]
    if "|" in kind and ":" not in kind.split("|")[0].replace("raised:", ""):
        mine, theirs = kind.split("|", 1)
        return f"{_shape_words(mine)} where the reference {_shape_words(theirs)}"
    prefix, _, rest = kind.partition(":")
    if prefix in _PREFIXED and rest:
        inner = kind_words(rest) if "|" in rest else _shape_words(rest)
        return _PREFIXED[prefix].format(inner)
    return kind
