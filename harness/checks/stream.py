r"""stream-decode: decoding token by token, as an LLM server does, and cut sequences.

A server decodes what the model has produced so far: a *prefix* of the IDs, which often
ends inside a character (the first token of a CJK character or an emoji carries only
some of its UTF-8 bytes), or a *window* that starts inside one. Whole-text round trips
never show how a decoder handles those, so this check decodes them.

The IDs are the reference's for the input (the adapter's own when it is the reference):
prefixes that end inside a character, then the longest prefix, and a few windows
starting inside a character, at most :data:`MAX_CUTS` and :data:`MAX_WINDOWS` of them
(an input whose tokens never cut a character costs nothing). What each should give is computed from the token pieces alone (the bytes of
each ID, from the reference's ``token_bytes``), the way the byte-level contract says:
join the bytes, then decode once.

- **decode_bytes** of a cut sequence is the joined pieces (kind ``prefix-bytes`` /
  ``window-bytes``);
- **decode(errors="replace")** is what an incremental detokenizer (:class:`Detokenizer`:
  hold back incomplete UTF-8, emit text as tokens arrive) has emitted after those tokens,
  plus one U+FFFD for the incomplete character it holds back (the maximal subpart rule,
  which Python and Rust's ``from_utf8_lossy`` share): what a streaming server shows. For
  a window the joined bytes decoded at once (kinds ``prefix-text``, ``window-text``);
- **decode(errors="strict")** raises ``invalid-utf8`` exactly when those bytes are not
  UTF-8 (kinds ``prefix-strict``, ``window-strict``; on valid UTF-8 it is not asked
  again, strict equals replace there); an adapter without strict decoding is skipped
  there, not failed;
- the library's **own streaming decoder** (``Adapter.decode_stream``, e.g. Hugging Face
  ``tokenizers``' ``DecodeStream``), fed the IDs one by one, must join to ``decode`` of
  the whole list (kind ``decode-stream``).

A decode that raises where the contract gives text has kind ``<where>-<what>:<shape>``
(``prefix-text:raised:unknown-id``).
"""

from __future__ import annotations

import codecs
from itertools import accumulate
from typing import Any, Iterator

from harness.checks.base import AGREE, SKIP, UNSUPPORTED, Result, Subject, shape
from harness.outcomes import Outcome

__all__ = ["Detokenizer", "check_stream_decode", "cut_points", "stream_calls"]

CHECK = "stream-decode"
#: prefixes decoded per input (those ending inside a character first)
MAX_CUTS = 6
#: windows decoded per input, each starting inside a character
MAX_WINDOWS = 2
WINDOW = 3


class Detokenizer:
    r"""Streaming detokenization: feed token bytes, get the text that is complete so far.

    Incomplete UTF-8 at the end is held back until the next token completes it (or the
    stream ends, when it becomes U+FFFD); invalid bytes become U+FFFD as they come.

    >>> d = Detokenizer()
    >>> d.feed(b"a\xe4\xb8"), d.pending, d.feed(b"\xad!"), d.finish()
    ('a', True, '中!', '')
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, piece: bytes) -> str:
        return self._decoder.decode(piece)

    @property
    def pending(self) -> bool:
        return bool(self._decoder.getstate()[0])

    def finish(self) -> str:
        return self._decoder.decode(b"", final=True)


def cut_points(pieces: list[bytes]) -> tuple[dict[int, tuple[str, bool]], list[int]]:
    r"""Prefixes worth decoding for these token pieces, and window starts.

    Prefixes: those that end inside a character (spread evenly if more than fit), and
    then the longest one; none when no token ends inside a character. For each: the text an incremental decoder has emitted by then, and
    whether it holds back part of a character. Windows start where a prefix ended
    inside a character, so they begin with continuation bytes.

    >>> cut_points([b"a", b"\xe4", b"\xb8\xad", b"b"])
    ({2: ('a', True), 3: ('a中', False)}, [2])
    >>> cut_points([b"a", b"\xe4", b"\xff", b"b"])  # not UTF-8: the decoder fed piece by piece
    ({2: ('a', True), 3: ('a\ufffd\ufffd', False)}, [2])
    """
    joined = b"".join(pieces)
    try:
        joined.decode("utf-8")
    except UnicodeDecodeError:
        return _fed_cut_points(pieces)
    # valid UTF-8 (nearly every input): a prefix ends inside a character exactly where the
    # next byte is a continuation byte, and the decoder has emitted every character before
    # that character's lead byte. Found from byte offsets, in C but for one comparison per
    # token, where feeding the decoder cost 2 us a token for each adapter twice (a quarter
    # of a long generated slice of r50k_base's eight adapters; issue 25)
    ends = list(accumulate(map(len, pieces[:-1])))
    inside = [k for k, end in enumerate(ends, start=1) if end < len(joined) and joined[end] & 0xC0 == 0x80]
    inside = _spread(inside)
    chosen = [*inside, len(pieces) - 1] if inside else []
    cuts = {}
    for k in dict.fromkeys(chosen):
        start = end = ends[k - 1]
        while start > 0 and start < len(joined) and joined[start] & 0xC0 == 0x80:
            start -= 1  # back to the lead byte of the character the prefix ends inside
        cuts[k] = (joined[:start].decode("utf-8"), start != end)
    return cuts, inside[:MAX_WINDOWS]


def _fed_cut_points(pieces: list[bytes]) -> tuple[dict[int, tuple[str, bool]], list[int]]:
    r""":func:`cut_points` by feeding a :class:`Detokenizer` piece by piece (what an invalid
    byte becomes, and what the decoder then holds, is the codec's to say).

    >>> _fed_cut_points([b"a", b"\xe4", b"\xb8\xad", b"b"]) == cut_points([b"a", b"\xe4", b"\xb8\xad", b"b"])
    True
    """
    n = len(pieces)
    inside: list[int] = []
    # the emitted text's length after each prefix, not the text: a joined copy per prefix
    # is quadratic in memory (a 10^5-character run of CJK held gigabytes)
    states: dict[int, tuple[int, bool]] = {}
    detok = Detokenizer()
    emitted: list[str] = []
    length = 0
    for k, piece in enumerate(pieces[:-1], start=1):
        emitted.append(detok.feed(piece))
        length += len(emitted[-1])
        states[k] = (length, detok.pending)
        if detok.pending:
            inside.append(k)
    inside = _spread(inside)
    # where no token ends inside a character every prefix decodes like whole text, which
    # round-trip and decode already check: nothing to do
    chosen = [*inside, n - 1] if inside else []
    text = "".join(emitted)
    return {k: (text[:states[k][0]], states[k][1]) for k in dict.fromkeys(chosen)}, inside[:MAX_WINDOWS]


def _spread(inside: list[int]) -> list[int]:
    """At most ``MAX_CUTS - 1`` of the prefixes ending inside a character, spread evenly.

    >>> _spread(list(range(100)))
    [0, 20, 40, 60, 80]
    """
    if len(inside) <= MAX_CUTS - 1:
        return inside
    step = len(inside) / (MAX_CUTS - 1)
    return [inside[int(i * step)] for i in range(MAX_CUTS - 1)]


def _strictly(data: bytes) -> Outcome:
    try:
        return Outcome.ok(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return Outcome.raised("invalid-utf8", "builtins.UnicodeDecodeError", str(exc))


def _agrees(got: Outcome, want: Outcome) -> bool:
    if want.is_ok:
        return got.is_ok and got.value == want.value
    return got.kind == "raised" and got.category == want.category


def check_stream_decode(subject: Subject) -> Result:
    adapter = subject.adapter
    source = subject.adapter if subject.is_reference else subject.reference
    encoded = source.encode(subject.text, subject.policy)
    if encoded.is_unsupported or not encoded.is_ok or not encoded.value:
        return SKIP
    ids: tuple[int, ...] = encoded.value
    pieces = [source.token_bytes(i) for i in ids]
    if not all(p.is_ok for p in pieces):
        return SKIP  # per-token-decode and vocab-consistency report unusable pieces
    chunks = [p.value for p in pieces]
    whole = adapter.decode_bytes(ids)
    if whole.is_unsupported:
        return UNSUPPORTED
    if not whole.is_ok or not adapter.decode(ids, "replace").is_ok:
        return SKIP  # it cannot decode these IDs at all: the decode check's business
    show = {"ids": ((source.name, ids),)}
    for segment, joined, replaced, where in _segments(ids, chunks):
        problem = _judge(subject, segment, joined, replaced, where, show)
        if problem is not None:
            return problem
    return _own_stream(subject, ids, show)


def _segments(ids: tuple[int, ...], chunks: list[bytes]) -> Iterator[tuple[tuple[int, ...], bytes, str, str]]:
    """The cut sequences the check decodes: (IDs, their joined pieces, the text expected
    of ``decode(errors="replace")``, ``prefix`` or ``window``), prefixes first."""
    prefixes, windows = cut_points(chunks)
    for k, (text, held) in prefixes.items():
        yield ids[:k], b"".join(chunks[:k]), text + ("\ufffd" if held else ""), "prefix"
    for start in windows:
        joined = b"".join(chunks[start : start + WINDOW])
        yield ids[start : start + WINDOW], joined, joined.decode("utf-8", "replace"), "window"


def stream_calls(ids: tuple[int, ...], chunks: list[bytes]) -> list[tuple[str, tuple[Any, ...]]]:
    r"""The calls :func:`check_stream_decode` makes of an adapter that passes it, on the
    reference's ``ids`` for an input and their pieces ``chunks``: what a worker can be
    asked ahead in one round trip (:mod:`harness.run.prefetch`).

    >>> stream_calls((7, 8, 9), [b"a", b"\xe4", b"\xb8\xad"])  # doctest: +NORMALIZE_WHITESPACE
    [('decode_bytes', ((7, 8, 9),)), ('decode', ((7, 8, 9), 'replace')),
     ('decode_bytes', ((7, 8),)), ('decode', ((7, 8), 'replace')), ('decode', ((7, 8), 'strict')),
     ('decode_bytes', ((9,),)), ('decode', ((9,), 'replace')), ('decode', ((9,), 'strict')),
     ('decode_stream', ((7, 8, 9),))]
    """
    calls: list[tuple[str, tuple[Any, ...]]] = [("decode_bytes", (ids,)), ("decode", (ids, "replace"))]
    for segment, joined, _, _ in _segments(ids, chunks):
        calls += [("decode_bytes", (segment,)), ("decode", (segment, "replace"))]
        if not _strictly(joined).is_ok:
            calls.append(("decode", (segment, "strict")))
    return [*calls, ("decode_stream", (ids,))]


def _judge(subject: Subject, segment: tuple[int, ...], joined: bytes, replaced: str, where: str,
           show: dict) -> Result | None:
    adapter, name = subject.adapter, subject.name
    strict = _strictly(joined)
    expectations = [
        ("bytes", lambda: adapter.decode_bytes(segment), Outcome.ok(joined), "decode_bytes"),
        ("text", lambda: adapter.decode(segment, "replace"), Outcome.ok(replaced), "decode(errors='replace')"),
    ]
    if not strict.is_ok:  # on valid UTF-8 strict is replace; where it is not, it must raise
        expectations.append(("strict", lambda: adapter.decode(segment, "strict"), strict, "decode(errors='strict')"))
    for what, call_it, want, call in expectations:
        got = call_it()
        if got.is_unsupported or _agrees(got, want):
            continue
        kind = f"{where}-{what}"
        if not (got.is_ok and want.is_ok):
            kind += ":ok" if got.is_ok else f":{shape(got)}"
        return subject.finding(
            CHECK, kind,
            f"{call} of a {where} of {len(segment)} token(s) ({list(segment)}) that the pieces "
            f"{joined!r} make: {name} {got.describe()}, expected {want.describe()}",
            outcomes=((name, got), ("expected", want)), decode_ids=segment, **show,
        )
    return None


def _own_stream(subject: Subject, ids: tuple[int, ...], show: dict) -> Result:
    """The library's own streaming decoder fed the IDs one by one joins to its decode."""
    adapter, name = subject.adapter, subject.name
    stream = adapter.decode_stream(ids)
    if stream.is_unsupported:
        return AGREE
    whole = adapter.decode(ids, "replace")
    if not stream.is_ok:
        return subject.finding(CHECK, f"decode-stream:{shape(stream)}",
                               f"{name}'s own streaming decoder failed: {stream.describe()}",
                               outcomes=((f"{name} decode_stream", stream), (name, whole)), **show)
    joined = "".join(c for c in stream.value if c is not None)
    if joined != whole.value:
        return subject.finding(
            CHECK, "decode-stream",
            f"{name}'s own streaming decoder, fed the IDs one by one, emits {joined!r} "
            f"({list(stream.value)!r}); its decode of the whole list gives {whole.value!r}",
            outcomes=((f"{name} decode_stream", Outcome.ok(joined)), (name, whole)), **show,
        )
    return AGREE
