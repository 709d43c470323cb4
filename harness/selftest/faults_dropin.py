"""Planted faults on the public API paths of a drop-in replacement for tiktoken.

A package that claims to be tiktoken (``tiktoken-compatible:``) is used through every
method of ``tiktoken.Encoding``, not only ``encode``. Each fault here is such a package:
tiktoken's own ``Encoding`` behind a proxy whose one method is wrong, walked by
api-surface exactly as :class:`implementations.tiktoken_compatible.TiktokenCompatibleAdapter`
walks a real drop-in (the tiktoken adapter's own walk, reached through the registry, so
the engine does not import the adapters). ``encode`` and the other adapter
methods stay tiktoken's, so only api-surface can catch these: a run that does not walk
a drop-in's surface misses every one of them.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

from harness.interface import Capabilities
from harness.outcomes import Outcome
from harness.selftest.mutant import Mutant

__all__ = ["DROPIN_FAULTS"]


class _Proxy:
    """tiktoken's Encoding with one method replaced."""

    def __init__(self, enc: Any, method: str, wrong: Callable[..., Any]) -> None:
        self._enc, self._method, self._wrong = enc, method, wrong

    def __getattr__(self, name: str) -> Any:
        if name == self._method:
            right = getattr(self._enc, name)
            return lambda *args, **kwargs: self._wrong(right, *args, **kwargs)
        return getattr(self._enc, name)


class DropInFault(Mutant):
    area = "drop-in API"
    capabilities = Capabilities(batch=True, pretokenize=True, api_surface="tiktoken")
    #: the Encoding method the fault lives in
    method = ""
    #: it is tiktoken but for the fault: tiktoken's documented behaviour (encode_to_numpy
    #: refusing a lone surrogate, cases/api-surface.yaml) is not the fault's finding
    declares_like = ("tiktoken:cl100k_base",)

    def wrong(self, right: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        # tiktoken's own walk (the adapter's), over the proxy: the same paths a real
        # drop-in is walked on, without the engine importing the adapters
        return self._clone().api_surface(text)

    def api_surfaces(self, texts: Sequence[str]) -> list[list[tuple[str, Outcome]]]:
        return self._clone().api_surfaces(texts)

    def _clone(self) -> Any:
        clone = copy.copy(self.inner)
        clone._enc = _Proxy(self.inner.native, self.method, self.wrong)  # type: ignore[attr-defined]
        return clone


class OffsetsShifted(DropInFault):
    fault, method = "dropin-offsets-shifted", "decode_with_offsets"
    summary = "decode_with_offsets gives every offset one character late"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        text, offsets = right(*args, **kwargs)
        return text, [o + 1 for o in offsets]


class SingleTokenOffByOne(DropInFault):
    fault, method = "dropin-single-token-off-by-one", "encode_single_token"
    summary = "encode_single_token gives the next ID"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        return right(*args, **kwargs) + 1


class BatchDecodeLosesLast(DropInFault):
    fault, method = "dropin-decode-batch-drops-last-char", "decode_batch"
    summary = "decode_batch loses the last character of each text"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        return [t[:-1] for t in right(*args, **kwargs)]


class NumpyDropsLast(DropInFault):
    fault, method = "dropin-numpy-drops-last-id", "encode_to_numpy"
    summary = "encode_to_numpy drops the last ID"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        return right(*args, **kwargs)[:-1]


class TokensBytesSwapped(DropInFault):
    fault, method = "dropin-tokens-bytes-reversed", "decode_tokens_bytes"
    summary = "decode_tokens_bytes lists the token pieces in reverse order"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        return list(reversed(right(*args, **kwargs)))


class OrdinaryBatchAllowsSpecials(DropInFault):
    fault, method = "dropin-ordinary-batch-specials", "encode_ordinary_batch"
    summary = "encode_ordinary_batch turns special literals into special IDs"
    not_small = "it needs a special literal: the shortest cl100k_base one, <|endoftext|>, is 13 characters"

    def wrong(self, right, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        return [self.inner.native.encode(t, allowed_special="all") for t in texts]  # type: ignore[attr-defined]


class BytesBatchLosesLastByte(DropInFault):
    fault, method = "dropin-bytes-batch-drops-last-byte", "decode_bytes_batch"
    summary = "decode_bytes_batch loses the last byte of each text"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        return [b[:-1] for b in right(*args, **kwargs)]


class SinglePieceStripped(DropInFault):
    fault, method = "dropin-single-bytes-stripped", "decode_single_token_bytes"
    summary = "decode_single_token_bytes strips the token's leading space"

    def wrong(self, right, *args, **kwargs):  # type: ignore[no-untyped-def]
        return right(*args, **kwargs).lstrip(b" ") or b" "


class RawBytesStrict(DropInFault):
    fault, method = "dropin-encode-bytes-strict", "_encode_bytes"
    summary = "_encode_bytes decodes its bytes strictly first: invalid UTF-8 raises"

    def wrong(self, right, data, *args, **kwargs):  # type: ignore[no-untyped-def]
        return self.inner.native.encode_ordinary(bytes(data).decode("utf-8"))  # type: ignore[attr-defined]


class BatchIgnoresPolicy(DropInFault):
    fault, method = "dropin-encode-batch-ignores-allowed", "encode_batch"
    summary = "encode_batch ignores allowed_special: literals stay refused"
    not_small = "it needs a special literal: the shortest cl100k_base one, <|endoftext|>, is 13 characters"

    def wrong(self, right, texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["allowed_special"] = set()
        return right(texts, *args, **kwargs)


DROPIN_FAULTS: list[type[Mutant]] = [
    OffsetsShifted, SingleTokenOffByOne, BatchDecodeLosesLast, NumpyDropsLast, TokensBytesSwapped,
    OrdinaryBatchAllowsSpecials, BytesBatchLosesLastByte, SinglePieceStripped, RawBytesStrict, BatchIgnoresPolicy,
]

