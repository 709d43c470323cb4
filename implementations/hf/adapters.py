"""Hugging Face ``tokenizers`` adapters: ``hf:gpt2``, ``hf:cl100k_base``, ``hf:o200k_base``.

``hf:gpt2`` is built the way HF users build GPT-2: ``BPE.from_file`` on GPT-2's own
``encoder.json``/``vocab.bpe`` with HF's ByteLevel pre-tokenizer (its built-in GPT-2
pattern). ``hf:cl100k_base`` and ``hf:o200k_base`` are converted by
:mod:`implementations.hf.convert` from the verified ``.tiktoken`` ranks and cached on disk.
:class:`HFAdapter` wraps any ``tokenizers.Tokenizer`` (``hf-json:`` uses it too).

What HF does natively is reported, not hidden (see :data:`HF_NOTES`): added tokens are
always special, IDs in the gaps of a vocabulary decode to nothing, decoding is always
lossy, and text with a lone surrogate is refused.
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from typing import Any, Mapping, Sequence

import regex

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial
from harness.outcomes import Operation, Outcome, UnsupportedOperation
from harness.registry import AdapterSpec, Family
from harness.vocab import bytes_to_unicode, vocab_unavailable_reason
from implementations.hf import convert as hf_convert
__all__ = ["HFAdapter", "HF_NOTES", "family", "make_converted", "make_gpt2"]

#: Native Hugging Face behaviour every adapter here declares.
HF_NOTES: tuple[str, ...] = (
    "added tokens are always special: every special literal in the text becomes its ID "
    "whatever allowed_special/disallowed_special say, and a disallowed literal never raises",
    "encode_ordinary uses HF's own switch Tokenizer.encode_special_tokens = True "
    "(special literals become ordinary text)",
    "an ID with no token (a gap in the vocabulary, or past its end) decodes to nothing (b''); "
    "an ID outside 0..2**32-1 raises OverflowError",
    "decode is always lossy (invalid UTF-8 becomes U+FFFD); errors= other than 'replace' is "
    "unsupported; decode_bytes is assembled from id_to_token and the byte-level alphabet, "
    "because HF offers no bytes API",
    "text that is not valid Unicode (a lone surrogate) is refused with TypeError; tiktoken "
    "replaces it with U+FFFD instead",
)

_UNENCODABLE_MESSAGES = ("TextInputSequence must be str", "TextEncodeInput must be")

#: The split HF's ByteLevel pre-tokenizer makes when ``use_regex`` is on: GPT-2's pattern,
#: built into ``tokenizers`` (``pre_tokenizers/byte_level.rs``), run by Oniguruma.
BYTE_LEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


@lru_cache(maxsize=1)
def latin1_table() -> dict[int, str]:
    """A ``str.translate`` table after which a text of byte-level aliases, encoded as
    Latin-1, is its bytes: each alias (:func:`harness.vocab.bytes_to_unicode`) becomes the
    character of its byte, and each other character below U+0100 becomes U+FFFF, which
    Latin-1 refuses, as it refuses any character from U+0144 on (none is an alias): a text
    that is not all aliases fails. One table for every adapter (callers do not change it).

    >>> table = latin1_table()
    >>> "Ġhié".translate(table).encode("latin-1"), "Ā".translate(table) == "\\x00"
    (b' hi\\xe9', True)
    >>> " ".translate(table), "中".translate(table)  # no aliases: the space, a character past U+0143
    ('\\uffff', '中')
    """
    table = {code: "\uffff" for code in range(256)}
    table.update((ord(ch), chr(b)) for b, ch in bytes_to_unicode().items())
    return table


def byte_level_bytes(token: str, table: Mapping[int, str]) -> bytes:
    """A token's bytes as HF's ``ByteLevel`` decoder makes them: each character mapped
    through the alphabet when every one of them is an alias, else the token's own UTF-8,
    whole (``decoders.ByteLevel().decode(["<中Ġ>"])`` is ``'<中Ġ>'``, while
    ``decode(["<Ġs>"])`` is ``'< s>'``: asked of tokenizers 0.23.3 directly).

    >>> table = latin1_table()
    >>> byte_level_bytes("<Ġs>", table), byte_level_bytes("<中Ġ>", table), byte_level_bytes("a b", table)
    (b'< s>', b'<\\xe4\\xb8\\xad\\xc4\\xa0>', b'a b')
    """
    try:
        return token.translate(table).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8")


def split_pattern_of(pre_tokenizer: Any) -> str | None:
    """The regex a ``tokenizers`` pre-tokenizer splits with: the first ``Split`` regex of
    it (a ``Sequence`` is searched in order), or ByteLevel's built-in GPT-2 pattern.

    The pre-tokenizer's own JSON state is read, never the whole tokenizer's.
    """
    if pre_tokenizer is None:
        return None
    try:
        state = json.loads(pre_tokenizer.__getstate__())
    except (AttributeError, TypeError, ValueError):
        return None
    steps = state.get("pretokenizers", [state]) if isinstance(state, dict) else []
    for step in steps:
        if step.get("type") == "Split":
            pattern = step.get("pattern", {})
            if "Regex" in pattern:
                return pattern["Regex"]
            if "String" in pattern:
                return regex.escape(pattern["String"])
        if step.get("type") == "ByteLevel" and step.get("use_regex", True):
            return BYTE_LEVEL_PATTERN
    return None


# -- the adapter --------------------------------------------------------------------------


class HFAdapter(Adapter):
    """Any ``tokenizers.Tokenizer``, called as its users call it."""

    library = "tokenizers"

    def __init__(
        self,
        tokenizer: Any,
        *,
        name: str,
        encoding: str,
        notes: Sequence[str] = (),
        add_special_tokens: bool = False,
    ) -> None:
        self._tok = tokenizer
        self._add_special_tokens = add_special_tokens
        self.name = name
        self.encoding = encoding
        self._specials = {
            added.content: token_id
            for token_id, added in tokenizer.get_added_tokens_decoder().items()
            if added.special
        }
        decoder = tokenizer.decoder
        self._byte_level = decoder is not None and type(decoder).__name__ == "ByteLevel"
        self._as_latin1 = latin1_table()
        lossy = () if self._byte_level else (
            "decoder is not ByteLevel: decode_bytes is the UTF-8 of the decoded text, so it "
            "cannot show invalid byte sequences",
        )
        self.capabilities = Capabilities(
            special_policy="always-special",
            encode_ordinary=True,
            batch=True,
            trace=False,
            pretokenize=tokenizer.pre_tokenizer is not None,
            notes=(*HF_NOTES, *lossy, *notes),
            api_surface="tokenizers",
        )

    @property
    def native(self) -> Any:
        """The ``tokenizers.Tokenizer``, for users who want to reach through."""
        return self._tok

    @property
    def split_pattern(self) -> str | None:
        return split_pattern_of(self._tok.pre_tokenizer)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self._specials)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        # HF has no per-literal policy: added tokens are always matched (declared
        # "always-special"), so the policy arguments change nothing here.
        return self._tok.encode(text, add_special_tokens=self._add_special_tokens).ids

    def encode_ordinary(self, text: str) -> list[int]:
        # HF's own switch, flipped for this one call and put back: a second tokenizer with
        # the switch on would hold a second copy of the vocabulary and merges (about
        # 70 MB for cl100k_base, 140 MB for o200k_base)
        tok = self._tok
        before = tok.encode_special_tokens
        tok.encode_special_tokens = True
        try:
            return tok.encode(text, add_special_tokens=self._add_special_tokens).ids
        finally:
            tok.encode_special_tokens = before

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=self._add_special_tokens)
        return [e.ids for e in encodings]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        if not self._byte_level:
            return self.decode(ids).encode("utf-8")
        # As HF's decode does: look each ID up (a gap gives None and is skipped), then map
        # each token through the byte-level alphabet, added tokens included; a token with
        # a character outside it passes whole, as its UTF-8 (byte_level_bytes).
        tokens = [t for t in map(self._tok.id_to_token, ids) if t is not None]
        try:
            # every token all aliases (nearly every call): one C pass over them joined
            return "".join(tokens).translate(self._as_latin1).encode("latin-1")
        except UnicodeEncodeError:
            return b"".join(byte_level_bytes(token, self._as_latin1) for token in tokens)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        if errors != "replace":
            raise UnsupportedOperation(
                f"{self.name}: Hugging Face decode is always lossy (U+FFFD for invalid UTF-8); "
                f"errors={errors!r} is not offered, use decode_bytes for the raw bytes"
            )
        return self._tok.decode(list(ids), skip_special_tokens=False)

    def token_bytes(self, token_id: int) -> bytes:
        return self.decode_bytes([token_id])

    def decode_stream(self, ids: Sequence[int]) -> list[str | None]:
        from tokenizers.decoders import DecodeStream

        stream = DecodeStream(skip_special_tokens=False)
        return [stream.step(self._tok, token_id) for token_id in ids]

    def pretokenize(self, text: str) -> list[str]:
        pre = self._tok.pre_tokenizer
        if pre is None:
            raise UnsupportedOperation(f"{self.name} has no pre-tokenizer")
        # HF shows chunks in its byte-level alphabet; its offsets (in characters) give the text
        return [text[start:end] for _, (start, end) in pre.pre_tokenize_str(text)]

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        from implementations.hf.surface import walk

        ordinary = self._ordinary_view if hasattr(self._tok, "encode_special_tokens") else None
        return walk(self._tok, text, classify=self.classify_error, ordinary=ordinary)

    def _ordinary_view(self) -> Any:
        """The tokenizer as ``encode_special_tokens = True`` makes it, by flipping the switch
        per call (as :meth:`encode_ordinary` does) rather than holding a second copy."""
        tok = self._tok

        class _Ordinary:
            def encode(self, text: str, add_special_tokens: bool = False) -> Any:
                before = tok.encode_special_tokens
                tok.encode_special_tokens = True
                try:
                    return tok.encode(text, add_special_tokens=add_special_tokens)
                finally:
                    tok.encode_special_tokens = before

        return _Ordinary()

    def api_attributes(self) -> list[tuple[str, Outcome]]:
        from implementations.hf.surface import attributes

        return attributes(self._tok, classify=self.classify_error)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if op == "decode" and isinstance(exc, OverflowError):
            return "unknown-id"  # the ID does not fit HF's u32
        if isinstance(exc, TypeError) and any(m in str(exc) for m in _UNENCODABLE_MESSAGES):
            return "unencodable-text"  # a str HF cannot take as UTF-8: a lone surrogate
        return None


# -- registration -------------------------------------------------------------------------


def _check(vocab_files: Sequence[str]) -> str | None:
    if importlib.util.find_spec("tokenizers") is None:
        return "the tokenizers package is not installed: `pip install tokenizers`"
    for name in vocab_files:
        reason = vocab_unavailable_reason(name)
        if reason is not None:
            return reason
    return None


def make_gpt2() -> HFAdapter:
    return HFAdapter(
        hf_convert.gpt2_tokenizer(),
        name="hf:gpt2",
        encoding="r50k_base",
        notes=(
            "pre-tokenizer: HF's ByteLevel with its built-in GPT-2 pattern; the BPE model "
            "applies merges only (no whole-chunk vocabulary lookup), as HF's GPT-2 does",
        ),
    )


def make_converted(encoding: str) -> HFAdapter:
    return HFAdapter(
        hf_convert.cached_tiktoken_tokenizer(encoding),
        name=f"hf:{encoding}",
        encoding=encoding,
        notes=(
            "converted by tokconf from the .tiktoken ranks (merges recovered from the ranks); "
            "tiktoken's split pattern translated for Oniguruma: X{n,m}+ -> (?>X{n,m}), $ -> \\z",
        ),
    )


def _specs() -> list[AdapterSpec]:
    specs = [
        AdapterSpec(
            name="hf:gpt2",
            encoding="r50k_base",
            factory=make_gpt2,
            library="tokenizers",
            description="tokenizers BPE.from_file(encoder.json, vocab.bpe) + ByteLevel",
            check=lambda: _check(("encoder.json", "vocab.bpe")),
        )
    ]
    for encoding, conversion in hf_convert.CONVERSIONS.items():
        specs.append(
            AdapterSpec(
                name=f"hf:{encoding}",
                encoding=encoding,
                factory=lambda e=encoding: make_converted(e),
                library="tokenizers",
                description=f"tokenizers BPE converted from {conversion.vocab_file}",
                check=lambda f=conversion.vocab_file: _check((f,)),
            )
        )
    return specs


def family() -> Family:
    return Family(kind="hf", specs=_specs)
