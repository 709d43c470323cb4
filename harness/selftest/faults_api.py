"""Planted faults around the algorithm: special tokens, decoding, batching, errors, the API.

Each is a classic slip of a wrapper or a re-implementation of tiktoken's API (seeds
000-003 and the issues): a policy argument ignored, a decode done token by token, a
batch that loses an empty text, a lone surrogate refused, text "cleaned" before it is
encoded. Each overrides exactly one method of :class:`harness.selftest.mutant.Mutant`.
"""

from __future__ import annotations

import codecs
import unicodedata
from typing import Sequence

import regex

from harness.interface import AllowedSpecial, DisallowedSpecial
from harness.selftest.mutant import Mutant

__all__ = ["API_FAULTS"]

_SHORTEST_LITERAL = "the shortest cl100k_base special literal, <|endoftext|>, is 13 characters"


def _question_marks(error: UnicodeError) -> tuple[str, int]:
    return "?", error.end  # type: ignore[attr-defined]


codecs.register_error("tokconf-selftest-question", _question_marks)


# -- special tokens ----------------------------------------------------------------------


class AllowedIgnored(Mutant):
    area, fault = "special tokens", "allowed-special-ignored"
    summary = "allowed_special is ignored: an allowed literal is refused or encoded as text"
    not_small = _SHORTEST_LITERAL

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self.inner.encode(text, allowed_special=frozenset(), disallowed_special=disallowed_special)


class DisallowedNeverRaises(Mutant):
    area, fault = "special tokens", "disallowed-never-raises"
    summary = "disallowed_special is ignored: a disallowed literal is encoded as ordinary text"
    not_small = _SHORTEST_LITERAL

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=())


class LooseSpecialMatch(Mutant):
    area, fault = "special tokens", "loose-special-match"
    summary = "anything shaped like <|name|> is taken for a disallowed special literal"

    _shape = regex.compile(r"<\|[A-Za-z0-9_]+\|>")

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        allowed = self.allowed(allowed_special, disallowed_special)
        if disallowed_special:
            for found in self._shape.findall(text):
                if found not in allowed:
                    raise ValueError(f"Encountered text corresponding to disallowed special token {found!r}.")
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class SpecialsAtStartOnly(Mutant):
    area, fault = "special tokens", "specials-at-start-only"
    summary = "an allowed literal becomes its special ID only at the very start of the text"
    not_small = _SHORTEST_LITERAL

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        # refused exactly as tiktoken refuses; only the recognition of allowed literals is wrong
        native = self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        allowed = self.allowed(allowed_special, disallowed_special)
        if not allowed:
            return native
        head = next((lit for lit in sorted(allowed, key=len, reverse=True) if text.startswith(lit)), None)
        rest = self.inner.encode(text[len(head or ""):], allowed_special=frozenset(), disallowed_special=())
        return [self.special_tokens[head], *rest] if head else rest


class OrdinaryKeepsSpecials(Mutant):
    area, fault = "special tokens", "encode-ordinary-keeps-specials"
    summary = "encode_ordinary turns special literals into their special IDs"
    not_small = _SHORTEST_LITERAL

    def encode_ordinary(self, text: str) -> list[int]:
        return self.inner.encode(text, allowed_special="all", disallowed_special=())


# -- decoding ------------------------------------------------------------------------------


class DecodePerToken(Mutant):
    area, fault = "decoding", "decode-per-token"
    summary = "decode turns each token into text on its own: a character split over tokens becomes U+FFFD"

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return "".join(self.enc.decode_single_token_bytes(i).decode("utf-8", errors) for i in ids)


class StrictIgnored(Mutant):
    area, fault = "decoding", "strict-ignored"
    summary = "decode(errors='strict') replaces invalid UTF-8 instead of raising"

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.inner.decode(ids, errors="replace")


class QuestionMarks(Mutant):
    area, fault = "decoding", "replace-with-question-mark"
    summary = "decode(errors='replace') writes '?' for invalid UTF-8 instead of U+FFFD"

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        handler = "tokconf-selftest-question" if errors == "replace" else errors
        return self.inner.decode_bytes(ids).decode("utf-8", handler)


class DropsIncompleteTail(Mutant):
    area, fault = "decoding", "decode-bytes-drops-incomplete-tail"
    summary = "decode_bytes leaves out a character cut off at the end of the IDs"

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        data = self.inner.decode_bytes(ids)
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            decoder.decode(data)
        except UnicodeDecodeError:
            return data
        pending = len(decoder.getstate()[0])
        return data[: len(data) - pending]


class DropsLeadingContinuation(Mutant):
    area, fault = "decoding", "decode-drops-leading-continuation"
    summary = "decode skips continuation bytes at the start (a 'resync' that loses the U+FFFD of a cut character)"

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        data = self.inner.decode_bytes(ids)
        start = 0
        while start < len(data) and 0x80 <= data[start] <= 0xBF:
            start += 1
        return data[start:].decode("utf-8", errors)


class TokenBytesStripped(Mutant):
    area, fault = "decoding", "token-bytes-strips-space"
    summary = "the bytes of a single token come back without their leading space"

    def token_bytes(self, token_id: int) -> bytes:
        return self.inner.token_bytes(token_id).lstrip(b" ")


# -- batching ------------------------------------------------------------------------------


class BatchReversed(Mutant):
    area, fault = "batching", "batch-reversed"
    summary = "encode_batch returns its results in reverse order"

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all") -> list[list[int]]:
        return super().encode_batch(texts, allowed_special=allowed_special, disallowed_special=disallowed_special)[::-1]


class BatchDropsEmpty(Mutant):
    area, fault = "batching", "batch-drops-empty-texts"
    summary = "encode_batch skips empty texts, so results no longer line up with inputs"

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all") -> list[list[int]]:
        return super().encode_batch([t for t in texts if t], allowed_special=allowed_special,
                                    disallowed_special=disallowed_special)


class BatchDefaultPolicy(Mutant):
    area, fault = "batching", "batch-ignores-policy"
    summary = "encode_batch drops its policy arguments and uses tiktoken's default"
    not_small = _SHORTEST_LITERAL

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all") -> list[list[int]]:
        return [self.encode(t) for t in texts]


# -- error handling ------------------------------------------------------------------------


class SurrogateRaises(Mutant):
    area, fault = "error handling", "surrogate-raises"
    summary = "a lone surrogate raises UnicodeEncodeError instead of becoming U+FFFD"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        text.encode("utf-8")
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class SurrogateDropped(Mutant):
    area, fault = "error handling", "surrogate-dropped"
    summary = "a lone surrogate is silently removed instead of becoming U+FFFD"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        cleaned = text.encode("utf-8", "ignore").decode("utf-8")
        return self.inner.encode(cleaned, allowed_special=allowed_special, disallowed_special=disallowed_special)


class EmptyRaises(Mutant):
    area, fault = "error handling", "empty-text-raises"
    summary = "encoding the empty string raises instead of giving []"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        if not text:
            raise ValueError("cannot encode an empty text")
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class UnknownIdEmpty(Mutant):
    area, fault = "error handling", "unknown-id-decodes-empty"
    summary = "decoding an ID the vocabulary lacks gives nothing instead of raising"
    not_small = "the fault is in decoding IDs: what shows it is an ID list (a case's decode probe), not a text"

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        out = bytearray()
        for i in ids:
            try:
                out += self.enc.decode_single_token_bytes(i)
            except (KeyError, OverflowError):
                continue
        return bytes(out)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.decode_bytes(ids).decode("utf-8", errors)


# -- API paths -----------------------------------------------------------------------------


class _Cleans(Mutant):
    """Changes the text before tiktoken sees it."""

    area = "API"

    def clean(self, text: str) -> str:
        raise NotImplementedError

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self.inner.encode(self.clean(text), allowed_special=allowed_special, disallowed_special=disallowed_special)


class Normalises(_Cleans):
    fault, summary = "nfc-normalises", "the text is NFC-normalised before encoding (e + U+0301 becomes é)"

    def clean(self, text: str) -> str:
        return unicodedata.normalize("NFC", text)


class CrlfToLf(_Cleans):
    fault, summary = "crlf-to-lf", "CRLF becomes LF before encoding (text read in text mode)"

    def clean(self, text: str) -> str:
        return text.replace("\r\n", "\n")


class NulTruncates(_Cleans):
    fault, summary = "nul-truncates", "the text ends at its first NUL (a C-string boundary)"

    def clean(self, text: str) -> str:
        return text.split("\x00", 1)[0]


class TruncatesLong(_Cleans):
    fault, summary = "truncates-long-text", "texts over 1,000 characters are silently cut to 1,000"
    not_small = "it acts only on texts longer than 1,000 characters"

    def clean(self, text: str) -> str:
        return text[:1000]


class OrdinaryDropsLast(Mutant):
    area, fault = "API", "encode-ordinary-drops-last"
    summary = "encode_ordinary loses the last token (an off-by-one slice)"

    def encode_ordinary(self, text: str) -> list[int]:
        return self.inner.encode_ordinary(text)[:-1]


API_FAULTS: list[type[Mutant]] = [
    AllowedIgnored, DisallowedNeverRaises, LooseSpecialMatch, SpecialsAtStartOnly, OrdinaryKeepsSpecials,
    DecodePerToken, StrictIgnored, QuestionMarks, DropsIncompleteTail, DropsLeadingContinuation, TokenBytesStripped,
    BatchReversed, BatchDropsEmpty, BatchDefaultPolicy,
    SurrogateRaises, SurrogateDropped, EmptyRaises, UnknownIdEmpty,
    Normalises, CrlfToLf, NulTruncates, TruncatesLong, OrdinaryDropsLast,
]
