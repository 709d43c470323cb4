"""Checks on the way back: round trip, whole-vs-per-token decode, decode of given IDs.

**round-trip** (every adapter): ``decode_bytes(encode(text))`` must be the UTF-8 bytes of
:func:`~harness.checks.base.expected_text` and ``decode(..., errors="replace")`` that
text. The expectation resolves surrogates per code point: a lone surrogate comes back
as U+FFFD (tiktoken replaces it before encoding; UTF-8 cannot carry it), a high+low
pair written as two code points comes back as the character it encodes. An adapter
that refuses such text raises instead; that is not a round-trip failure (nothing was
encoded) but an error-category difference — except for a closed vocabulary (declared
``alphabet``), which is compared with no other adapter: text it cannot encode at all is
lost, kind ``encode:<shape>``. Other kinds: ``bytes`` (lossy bytes), ``text`` (right
bytes, wrong string: a decode that is not "join bytes, then decode once"),
``decode:<shape>`` (decoding its own IDs failed).

**per-token-decode** (every adapter): joining each token's bytes must equal decoding the
whole list, and ``decode`` must equal that joined byte string decoded once. Decoding
token by token into strings turns a character split over two tokens into two U+FFFD
(seed 000); kinds ``bytes``, ``text``, ``piece:<shape>``.

**decode** (same encoding as the reference): the adapter decodes the *reference's* IDs
to the same bytes, the same text, and the same strict-decode error as the reference,
which tests the decoder apart from the encoder; plus the case's decode probes (IDs ->
text, bytes or error). Kinds ``bytes``, ``text``, ``strict`` when both sides decoded to
different values, ``<adapter shape>|<other shape>`` (``raised:unknown-id|ok``) when one
side raised, so a probe and a decode of the reference's IDs that fail the same way have
the same kind.
"""

from __future__ import annotations

from harness.cases.model import DecodeProbe
from harness.checks.ids import _error_matches
from harness.checks.base import (
    AGREE,
    SKIP,
    UNSUPPORTED,
    Result,
    Subject,
    expected_text,
    shape,
)
from harness.outcomes import Outcome

__all__ = ["check_decode", "check_per_token_decode", "check_round_trip"]


def check_round_trip(subject: Subject) -> Result:
    got = subject.adapter.encode(subject.text, subject.policy)
    if got.is_unsupported:
        return UNSUPPORTED
    if not got.is_ok:
        if subject.adapter.info.capabilities.alphabet is not None and got.category != "disallowed-special":
            # a closed vocabulary that cannot encode the text loses it: there is no other
            # adapter whose error it could disagree with, so this is where it shows
            return subject.finding("round-trip", f"encode:{shape(got)}",
                                   f"the text cannot be encoded at all: {got.describe()}",
                                   outcomes=((subject.name, got),))
        return SKIP
    ids = got.value
    want = expected_text(subject.text)
    raw = subject.adapter.decode_bytes(ids)
    name = subject.name
    common = {"ids": ((name, ids),)}
    if not raw.is_ok:
        return subject.finding("round-trip", f"decode:{shape(raw)}",
                               f"decoding its own IDs failed: {raw.describe()}",
                               outcomes=((name, got), (f"{name} decode_bytes", raw)), **common)
    if raw.value != want.encode("utf-8"):
        return subject.finding("round-trip", "bytes",
                               f"decode_bytes(encode(text)) is {raw.value!r}, expected "
                               f"{want.encode('utf-8')!r}",
                               outcomes=((name, raw), ("expected", Outcome.ok(want.encode("utf-8")))),
                               **common)
    text = subject.adapter.decode(ids, "replace")
    if text.is_unsupported:
        return AGREE
    if not (text.is_ok and text.value == want):
        return subject.finding("round-trip", "text" if text.is_ok else f"decode:{shape(text)}",
                               f"decode(encode(text)) is {text.describe()}, expected {want!r}",
                               outcomes=((name, text), ("expected", Outcome.ok(want))), **common)
    return AGREE


def check_per_token_decode(subject: Subject) -> Result:
    got = subject.adapter.encode(subject.text, subject.policy)
    if got.is_unsupported:
        return UNSUPPORTED
    if not got.is_ok:
        return SKIP
    ids, name = got.value, subject.name
    pieces = [subject.adapter.token_bytes(i) for i in ids]
    bad = next((p for p in pieces if not p.is_ok), None)
    if bad is not None:
        return subject.finding("per-token-decode", f"piece:{shape(bad)}",
                               f"token_bytes of one of its own IDs failed: {bad.describe()}",
                               outcomes=((name, got), (f"{name} token_bytes", bad)), ids=((name, ids),))
    joined = b"".join(p.value for p in pieces)
    whole = subject.adapter.decode_bytes(ids)
    if not whole.is_ok:
        return SKIP  # round-trip reports a decode that fails on its own IDs
    if whole.value != joined:
        return subject.finding("per-token-decode", "bytes",
                               f"decode_bytes gives {whole.value!r}, the joined pieces {joined!r}",
                               outcomes=((name, whole), ("joined pieces", Outcome.ok(joined))),
                               ids=((name, ids),))
    text = subject.adapter.decode(ids, "replace")
    want = joined.decode("utf-8", "replace")
    if text.is_ok and text.value != want:
        return subject.finding("per-token-decode", "text",
                               f"decode gives {text.value!r}; joining the bytes and decoding once "
                               f"gives {want!r}",
                               outcomes=((name, text), ("joined then decoded", Outcome.ok(want))),
                               ids=((name, ids),))
    return AGREE


def check_decode(subject: Subject) -> Result:
    ran = False
    if subject.case is not None and subject.case.decode:
        for probe in subject.case.decode:
            result = _probe(subject, probe)
            if result is UNSUPPORTED:
                continue
            ran = True
            if result is not AGREE:
                return result
    if subject.is_reference:
        return AGREE if ran else SKIP  # its own decode against itself compares nothing
    ref_ids = subject.reference.encode(subject.text, subject.policy)
    if not ref_ids.is_ok or not ref_ids.value:
        return AGREE if ran else SKIP
    ids = ref_ids.value
    name, ref = subject.name, subject.reference.name
    mine, theirs = subject.adapter.decode_bytes(ids), subject.reference.decode_bytes(ids)
    if mine.is_unsupported:
        return UNSUPPORTED
    show = {"ids": ((ref, ids),), "decode_ids": ids}
    if not mine.same_as(theirs):
        kind = "bytes" if mine.is_ok and theirs.is_ok else f"{shape(mine)}|{shape(theirs)}"
        return subject.finding("decode", kind,
                               f"decode_bytes of {ref}'s IDs: {name} {mine.describe()}, {ref} {theirs.describe()}",
                               outcomes=((name, mine), (ref, theirs)), **show)
    for errors in ("replace", "strict"):
        if errors == "strict" and theirs.is_ok and _valid_utf8(theirs.value):
            break  # strict equals replace on valid UTF-8
        a, b = subject.adapter.decode(ids, errors), subject.reference.decode(ids, errors)
        if a.is_unsupported:
            continue  # no such mode (a JavaScript decode has no strict one): nothing to compare
        if not a.same_as(b):
            kind = ("text" if errors == "replace" else "strict") if a.is_ok and b.is_ok else f"{shape(a)}|{shape(b)}"
            return subject.finding("decode", kind,
                                   f"decode(errors={errors!r}) of {ref}'s IDs: {name} {a.describe()}, "
                                   f"{ref} {b.describe()}",
                                   outcomes=((name, a), (ref, b)), **show)
    return AGREE


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _probe(subject: Subject, probe: DecodeProbe) -> Result:
    name = subject.name
    if probe.bytes_hex is not None:
        got = subject.adapter.decode_bytes(probe.ids)
        want: Outcome | None = Outcome.ok(bytes.fromhex(probe.bytes_hex))
        ok = got.is_ok and got.value == want.value
    else:
        got = subject.adapter.decode(probe.ids, probe.errors)
        if probe.error is not None:
            want = Outcome(kind="raised", category=probe.error.category,
                           native_type=probe.error.native_type, message="(expected)")
            ok = _error_matches(got, probe.error)
        else:
            want = Outcome.ok(probe.text)
            ok = got.is_ok and got.value == probe.text
    if got.is_unsupported and probe.error is None:
        return UNSUPPORTED
    if ok:
        return AGREE
    kind = f"{shape(got)}|{shape(want)}" if not (got.is_ok and want.is_ok) else ("bytes" if probe.bytes_hex is not None else "text")
    return subject.finding("decode", kind,
                           f"decode {list(probe.ids)} (errors={probe.errors!r}): expected "
                           f"{want.describe()}, got {got.describe()}",
                           outcomes=((name, got), ("expected", want)), decode_ids=probe.ids,
                           shrinkable=False)
