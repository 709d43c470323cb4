"""tiktoken, used through its public API exactly as its users use it.

Vocabulary files are pre-seeded into tiktoken's own cache (see ``harness.vocab``), so
``tiktoken.get_encoding(name)`` works offline. An encoding tokconf has no pinned file
for is never requested from tiktoken, because tiktoken would go to the network.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial
from harness.outcomes import Operation, Outcome
from harness.registry import AdapterSpec, Family, library_version
from harness.vocab import TIKTOKEN_ENCODING_FILES, seed_tiktoken_cache, vocab_unavailable_reason
from implementations.tiktoken_surface import as_documented

__all__ = ["TiktokenAdapter", "family"]

ENCODINGS = ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base", "o200k_harmony")


class TiktokenAdapter(Adapter):
    library = "tiktoken"
    capabilities = Capabilities(batch=True, pretokenize=True, api_surface="tiktoken")

    def __init__(self, encoding_name: str) -> None:
        import tiktoken
        import regex

        seed_tiktoken_cache(encoding_name)
        self._enc = tiktoken.get_encoding(encoding_name)
        self._pattern = regex.compile(self._enc._pat_str)
        self._release = library_version("tiktoken") or "?"
        self.name = f"tiktoken:{encoding_name}"
        # gpt2 and r50k_base are one ID space; reports compare them together
        self.encoding = "r50k_base" if encoding_name == "gpt2" else encoding_name

    @property
    def native(self):  # the tiktoken.Encoding, for users who want to reach through
        return self._enc

    @property
    def split_pattern(self) -> str:
        return self._enc._pat_str

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self._enc._special_tokens)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        # called as tiktoken's documentation shows, with sets: tiktoken 0.3.2 refuses a frozenset
        return self._enc.encode(text, allowed_special=as_documented(allowed_special),
                                disallowed_special=as_documented(disallowed_special))

    def encode_ordinary(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        return self._enc.encode_batch(list(texts), allowed_special=as_documented(allowed_special),
                                      disallowed_special=as_documented(disallowed_special))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self._enc.decode_bytes(list(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self._enc.decode(list(ids), errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self._enc.decode_single_token_bytes(token_id)

    def pretokenize(self, text: str) -> list[str]:
        # tiktoken's own pattern, run by `regex` (its engine reads possessive quantifiers as
        # tiktoken's fancy-regex does). Surrogates are replaced first, as tiktoken does.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return self._pattern.findall(text)

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        from implementations.tiktoken_surface import walk

        return walk(self._enc, text, classify=self.classify_error, release=self._release)

    def api_surfaces(self, texts: Sequence[str]) -> list[list[tuple[str, Outcome]]]:
        from implementations.tiktoken_surface import walk_many

        return walk_many(self._enc, texts, classify=self.classify_error, release=self._release)

    def api_attributes(self) -> list[tuple[str, Outcome]]:
        from implementations.tiktoken_surface import attributes

        return attributes(self._enc, classify=self.classify_error, release=self._release)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        # tiktoken's decoder raises KeyError for an ID outside the vocabulary, OverflowError
        # for one that does not fit its 32-bit type, and a Rust panic (PanicException, a
        # BaseException) for some others: all are unknown IDs.
        if op == "decode" and (
            isinstance(exc, (KeyError, OverflowError)) or type(exc).__name__ == "PanicException"
        ):
            return "unknown-id"
        return None


@lru_cache(maxsize=1)
def _known_encodings() -> frozenset[str]:
    """The encodings the installed tiktoken registers (cheap: no vocabulary is read)."""
    from tiktoken.registry import list_encoding_names

    return frozenset(list_encoding_names())


def _check(encoding: str) -> str | None:
    if importlib.util.find_spec("tiktoken") is None:
        return "the tiktoken package is not installed: `pip install tiktoken`"
    known = _known_encodings()
    if encoding not in known:
        # an older release: the vocabulary file alone would say "available" wrongly
        return (f"tiktoken {library_version('tiktoken')} has no encoding {encoding!r} (it has "
                f"{', '.join(sorted(known))}): `pip install -U tiktoken`")
    for name in TIKTOKEN_ENCODING_FILES[encoding]:
        reason = vocab_unavailable_reason(name)
        if reason is not None:
            return reason
    return None


def _spec(encoding: str) -> AdapterSpec:
    return AdapterSpec(
        name=f"tiktoken:{encoding}",
        encoding="r50k_base" if encoding == "gpt2" else encoding,
        factory=lambda: TiktokenAdapter(encoding),
        library="tiktoken",
        description=f"tiktoken.get_encoding({encoding!r})",
        check=lambda: _check(encoding),
    )


def family() -> Family:
    return Family(kind="tiktoken", specs=lambda: [_spec(e) for e in ENCODINGS])
