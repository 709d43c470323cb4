"""Which pinned ID space a tokenizer.json reproduces, read from its vocabulary alone.

A bare ``tokenizer.json`` says nothing about the ID space it claims. If its byte-level BPE
vocabulary is, token for token and ID for ID, one of the pinned ``.tiktoken`` rank tables
(r50k_base, cl100k_base, o200k_base), it claims that encoding and is compared with its
reference; otherwise it keeps an ID space of its own and runs without ID parity.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Mapping

from harness.vocab import bytes_to_unicode, load_tiktoken_ranks, vocab_unavailable_reason

__all__ = ["PINNED", "hf_name_for", "recognize_encoding", "vocab_as_bytes"]

#: pinned rank tables a tokenizer.json may reproduce, by the encoding they are
PINNED = ("r50k_base", "cl100k_base", "o200k_base")
#: the ``hf:`` adapter of each encoding, whose declared native behaviour an hf-json of it shares
_HF_NAMES = {"r50k_base": "hf:gpt2", "cl100k_base": "hf:cl100k_base", "o200k_base": "hf:o200k_base"}


def hf_name_for(encoding: str) -> str | None:
    """``hf:gpt2`` for r50k_base, and so on; ``None`` for an ID space of its own.

    >>> hf_name_for("r50k_base"), hf_name_for("hf-json:abc")
    ('hf:gpt2', None)
    """
    known = _HF_NAMES.get(encoding)
    if known is None:
        # an open-weight encoding file (issue 23) has its own hf:ENC conversion
        from harness.encodings import encoding_spec

        spec = encoding_spec(encoding)
        if spec is not None and spec.vocabulary.pinned is None:
            known = f"hf:{encoding}"
    return known


def vocab_as_bytes(vocab: Mapping[str, int]) -> dict[bytes, int] | None:
    """A byte-level vocabulary (GPT-2's printable alias per byte) as bytes -> ID; ``None``
    if a token holds a character outside that alphabet (not a byte-level vocabulary).

    >>> vocab_as_bytes({"a": 64, "Ġb": 300})
    {b'a': 64, b' b': 300}
    >>> vocab_as_bytes({"你": 1}) is None
    True
    """
    decoder = {ch: b for b, ch in bytes_to_unicode().items()}
    out: dict[bytes, int] = {}
    for token, token_id in vocab.items():
        try:
            out[bytes(decoder[ch] for ch in token)] = token_id
        except KeyError:
            return None
    return out


@lru_cache(maxsize=None)
def _ranks(stem: str) -> dict[bytes, int] | None:
    if vocab_unavailable_reason(f"{stem}.tiktoken") is not None:
        return None
    return load_tiktoken_ranks(stem)


def recognize_encoding(document: Any) -> str | None:
    """The pinned encoding whose ranks equal the file's BPE vocabulary exactly, if any."""
    model = document.get("model") if isinstance(document, dict) else None
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if not isinstance(vocab, dict) or model.get("type") not in (None, "BPE"):
        return None
    # added (special) tokens may sit in the model's vocabulary too (GPT-2's <|endoftext|>);
    # the pinned rank tables hold ordinary tokens only
    added = {t.get("content") for t in document.get("added_tokens") or () if isinstance(t, dict)}
    vocab = {token: token_id for token, token_id in vocab.items() if token not in added}
    as_bytes = None
    for stem in PINNED:
        ranks = _ranks(stem)
        if ranks is None or len(ranks) != len(vocab):
            continue  # sizes first: loading a table is the cost, comparing is cheap
        as_bytes = as_bytes if as_bytes is not None else vocab_as_bytes(vocab)
        if as_bytes == ranks:
            return stem
    return None


def recognize_file(raw: bytes) -> str | None:
    """:func:`recognize_encoding` of a tokenizer.json's bytes."""
    try:
        return recognize_encoding(json.loads(raw))
    except (ValueError, UnicodeDecodeError):
        return None
