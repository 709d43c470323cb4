"""``hf-slow:gpt2``: transformers' pure-Python ``GPT2Tokenizer``, the "slow" GPT-2 tokenizer.

Seed 002 compares the fast (Rust ``tokenizers``) and slow (Python) GPT-2 tokenizers of
transformers. transformers 5 no longer ships slow tokenizers, so this adapter is
available only where ``transformers<5`` is installed: in another environment, made with
``tokconf env add 'transformers<5'``, where it is ``hf-slow@<version>:gpt2``. It is built
from the verified ``encoder.json``/``vocab.bpe`` (``GPT2Tokenizer(vocab_file,
merges_file)``), never from a hub download.

Native behaviour, declared (:data:`SLOW_NOTES`): added tokens (``<|endoftext|>``) are
split out of the text whatever the policy (``always-special``); ``encode_ordinary`` uses
transformers' own ``split_special_tokens=True``; ``decode`` is called as users call it,
with transformers' defaults (``clean_up_tokenization_spaces`` as the release sets it);
``decode_bytes`` maps the tokens back through the tokenizer's own ``byte_decoder``.
"""

from __future__ import annotations

import hashlib
import importlib.util
from typing import Any, Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial
from harness.outcomes import Operation, Outcome, UnsupportedOperation, capture
from harness.registry import AdapterSpec, Family, library_version
from harness.vocab import vocab_path, vocab_unavailable_reason

__all__ = ["HFSlowAdapter", "SLOW_NOTES", "family"]

SLOW_NOTES: tuple[str, ...] = (
    "transformers' pure-Python GPT2Tokenizer (a 'slow' tokenizer; transformers 5 has none)",
    "added tokens are always special: <|endoftext|> in the text becomes its ID whatever the policy",
    "encode_ordinary: tokenize(text, split_special_tokens=True)",
    "decode: transformers' defaults (clean_up_tokenization_spaces as the release sets it); "
    "decode_bytes: the tokens through the tokenizer's byte_decoder",
    "text with a lone surrogate cannot be UTF-8 encoded: UnicodeEncodeError (tiktoken replaces it)",
)


class HFSlowAdapter(Adapter):
    library = "transformers"
    name = "hf-slow:gpt2"
    encoding = "r50k_base"

    def __init__(self) -> None:
        from transformers import GPT2Tokenizer

        self._tok = GPT2Tokenizer(vocab_file=str(vocab_path("encoder.json")), merges_file=str(vocab_path("vocab.bpe")))
        self.capabilities = Capabilities(special_policy="always-special", batch=True, pretokenize=True,
                                         notes=SLOW_NOTES, api_surface="transformers")

    @property
    def native(self) -> Any:
        return self._tok

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return {t: self._tok.convert_tokens_to_ids(t) for t in self._tok.all_special_tokens}

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self._tok.encode(text, add_special_tokens=False)

    def encode_ordinary(self, text: str) -> list[int]:
        tokens = self._tok.tokenize(text, split_special_tokens=True)
        return self._tok.convert_tokens_to_ids(tokens)

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all") -> list[list[int]]:
        return self._tok(list(texts), add_special_tokens=False)["input_ids"]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        out = bytearray()
        for token_id in ids:
            token = self._tok.decoder.get(token_id)
            if token is None:
                raise KeyError(token_id)
            out += bytes(self._tok.byte_decoder[ch] for ch in token)
        return bytes(out)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        if errors != "replace":
            raise UnsupportedOperation(f"{self.name}: GPT2Tokenizer decodes with the errors= it was built with "
                                       f"('replace'); errors={errors!r} is not offered")
        return self._tok.decode(list(ids))

    def token_bytes(self, token_id: int) -> bytes:
        return self.decode_bytes([token_id])

    def pretokenize(self, text: str) -> list[str]:
        return self._tok.pat.findall(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if isinstance(exc, NotImplementedError):
            return "unsupported"  # offsets: "not available when using Python tokenizers"
        if op == "decode" and isinstance(exc, (TypeError, KeyError, IndexError)):
            return "unknown-id"  # an ID with no token: None joined into the text
        return None

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        tok, out = self._tok, []

        def record(path: str, op: Operation, fn: Any) -> Outcome:
            outcome = capture(op, fn, classify=self.classify_error)
            if outcome.is_ok:
                outcome = Outcome.ok(_plain(outcome.value))
            out.append((path, outcome))
            return outcome

        record("encode[special]", "encode", lambda: tok.encode(text, add_special_tokens=True))
        plain = record("encode[plain]", "encode", lambda: tok.encode(text, add_special_tokens=False))
        record("tokenize", "encode", lambda: tok.tokenize(text))
        record("encode[ordinary]", "encode", lambda: tok.convert_tokens_to_ids(tok.tokenize(text, split_special_tokens=True)))
        record("__call__[plain]", "encode", lambda: tok(text, add_special_tokens=False)["input_ids"])
        record("__call__batch[plain]", "encode", lambda: tok([text], add_special_tokens=False)["input_ids"])
        record("offsets", "encode", lambda: tok(text, return_offsets_mapping=True)["offset_mapping"])
        if not plain.is_ok:
            return out
        ids = list(plain.value)
        record("convert_ids_to_tokens", "decode", lambda: tok.convert_ids_to_tokens(ids))
        record("decode[default]", "decode", lambda: tok.decode(ids))
        record("decode[no-cleanup]", "decode", lambda: tok.decode(ids, clean_up_tokenization_spaces=False))
        record("decode[skip]", "decode", lambda: tok.decode(ids, skip_special_tokens=True))
        record("batch_decode[default]", "decode", lambda: tok.batch_decode([ids]))
        return out

    def api_attributes(self) -> list[tuple[str, Outcome]]:
        tok = self._tok
        probes: list[tuple[str, Operation, Any]] = [
            ("vocab_size", "other", lambda: tok.vocab_size),
            ("len()", "other", lambda: len(tok)),
            ("all_special_tokens", "other", lambda: tuple(tok.all_special_tokens)),
            ("get_vocab()", "other", lambda: _digest(tok.get_vocab())),
            ("clean_up_tokenization_spaces", "other", lambda: tok.clean_up_tokenization_spaces),
            ("decode[past-vocab]", "decode", lambda: tok.decode([len(tok) + 10])),
            ("convert_ids_to_tokens[past-vocab]", "decode", lambda: tok.convert_ids_to_tokens([len(tok) + 10])),
        ]
        out = []
        for path, op, fn in probes:
            outcome = capture(op, fn, classify=self.classify_error)
            out.append((path, Outcome.ok(_plain(outcome.value)) if outcome.is_ok else outcome))
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _digest(vocab: dict[str, int]) -> str:
    h = hashlib.sha256()
    for token, token_id in sorted(vocab.items(), key=lambda kv: (kv[1], kv[0])):
        h.update(f"{token_id}\t{token}\n".encode("utf-8", "surrogatepass"))
    return f"sha256:{h.hexdigest()} n={len(vocab)}"


def _check() -> str | None:
    if importlib.util.find_spec("transformers") is None:
        return ("transformers is not installed here; the slow tokenizer needs transformers<5: "
                "`tokconf env add 'transformers<5'` and use hf-slow@<version>:gpt2")
    version = library_version("transformers") or "?"
    if version.split(".")[0].isdigit() and int(version.split(".")[0]) >= 5:
        return (f"transformers {version} has no slow tokenizers (removed in 5): "
                "`tokconf env add 'transformers<5'` and use hf-slow@<version>:gpt2")
    for name in ("encoder.json", "vocab.bpe"):
        reason = vocab_unavailable_reason(name)
        if reason is not None:
            return reason
    return None


def family() -> Family:
    spec = AdapterSpec(name="hf-slow:gpt2", encoding="r50k_base", factory=HFSlowAdapter, library="transformers",
                       description="transformers GPT2Tokenizer (pure Python) from encoder.json + vocab.bpe",
                       check=_check)
    return Family(kind="hf-slow", specs=lambda: [spec])
