"""The public API of a Hugging Face ``tokenizers.Tokenizer`` on one input, as outcomes.

The same idea as :mod:`implementations.tiktoken_surface`, for the paths HF users call:

- ``encode[special]`` / ``encode[plain]``: ``Tokenizer.encode(text, add_special_tokens=
  True/False)`` IDs; ``offsets[...]`` and ``tokens[...]`` of the same encodings (offsets
  are character spans into the text, so a change there moves every highlight a UI draws);
- ``encode_batch[special]`` / ``encode_batch[plain]``: ``encode_batch([text])`` IDs;
- ``encode[ordinary]``: with ``encode_special_tokens = True`` (literals as text), where
  the release has that switch;
- ``decode[keep]`` / ``decode[skip]``: ``decode(ids, skip_special_tokens=False/True)``
  and ``decode_batch[keep]``, on the IDs of ``encode[plain]``.

:func:`attributes`: vocabulary sizes with and without added tokens, the added tokens, a
hash of the vocabulary, and decoding IDs no vocabulary has.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

from harness.outcomes import Operation, Outcome, capture

__all__ = ["attributes", "walk"]

Classify = Callable[[Operation, BaseException], "str | None"]


def _record(out: list[tuple[str, Outcome]], path: str, op: Operation, fn: Callable[[], Any],
            classify: Classify) -> Outcome:
    outcome = capture(op, fn, classify=classify)
    if outcome.is_ok:
        outcome = Outcome.ok(_plain(outcome.value))
    out.append((path, outcome))
    return outcome


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def walk(tok: Any, text: str, *, classify: Classify, ordinary: Callable[[], Any] | None) -> list[tuple[str, Outcome]]:
    """Every public path of ``tok`` on ``text``; ``ordinary`` builds the twin that treats
    special literals as text (``None`` where the release lacks the switch)."""
    out: list[tuple[str, Outcome]] = []
    for label, add in (("special", True), ("plain", False)):
        enc = capture("encode", lambda a=add: tok.encode(text, add_special_tokens=a), classify=classify)
        if enc.is_ok:
            encoding = enc.value
            out.append((f"encode[{label}]", Outcome.ok(tuple(encoding.ids))))
            out.append((f"offsets[{label}]", Outcome.ok(tuple(tuple(span) for span in encoding.offsets))))
            out.append((f"tokens[{label}]", Outcome.ok(tuple(encoding.tokens))))
        else:
            out.extend((f"{p}[{label}]", enc) for p in ("encode", "offsets", "tokens"))
        _record(out, f"encode_batch[{label}]", "encode",
                lambda a=add: [e.ids for e in tok.encode_batch([text], add_special_tokens=a)], classify)
    if ordinary is None:
        out.append(("encode[ordinary]", Outcome.raised("unsupported", "tokconf.MissingMethod",
                                                       "this tokenizers release has no encode_special_tokens")))
    else:
        _record(out, "encode[ordinary]", "encode", lambda: ordinary().encode(text, add_special_tokens=False).ids, classify)
    source = dict(out).get("encode[plain]")
    if source is None or not source.is_ok:
        return out
    ids = list(source.value)
    _record(out, "decode[keep]", "decode", lambda: tok.decode(ids, skip_special_tokens=False), classify)
    _record(out, "decode[skip]", "decode", lambda: tok.decode(ids, skip_special_tokens=True), classify)
    _record(out, "decode_batch[keep]", "decode", lambda: tok.decode_batch([ids], skip_special_tokens=False), classify)
    return out


def attributes(tok: Any, *, classify: Classify) -> list[tuple[str, Outcome]]:
    out: list[tuple[str, Outcome]] = []
    _record(out, "get_vocab_size[with_added]", "other", lambda: tok.get_vocab_size(with_added_tokens=True), classify)
    _record(out, "get_vocab_size[without_added]", "other", lambda: tok.get_vocab_size(with_added_tokens=False), classify)
    _record(out, "added_tokens", "other", lambda: tuple(sorted(
        (i, t.content, bool(t.special)) for i, t in tok.get_added_tokens_decoder().items())), classify)
    _record(out, "get_vocab()", "other", lambda: _vocab_digest(tok.get_vocab(with_added_tokens=True)), classify)
    size = tok.get_vocab_size(with_added_tokens=True)
    _record(out, "decode[past-vocab]", "decode", lambda: tok.decode([size + 10]), classify)
    _record(out, "decode[2**32]", "decode", lambda: tok.decode([2**32]), classify)
    _record(out, "id_to_token[past-vocab]", "decode", lambda: tok.id_to_token(size + 10), classify)
    return out


def _vocab_digest(vocab: dict[str, int]) -> str:
    h = hashlib.sha256()
    for token, token_id in sorted(vocab.items(), key=lambda kv: (kv[1], kv[0])):
        h.update(f"{token_id}\t{token}\n".encode("utf-8", "surrogatepass"))
    return f"sha256:{h.hexdigest()} n={len(vocab)}"
