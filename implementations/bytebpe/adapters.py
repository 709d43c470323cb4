"""Adapters over the byte-BPE models: trained files, the wrong variant, and rank mode.

tiktoken's policy arguments map onto ByteBPE's native ``allowed_special`` like this:

- the default (nothing allowed, every registered literal disallowed) *is* the native
  default ``allowed_special=None``: a registered literal raises;
- otherwise the disallowed literals are looked for first with the model's own check
  (the same error the native default raises), then the text is encoded with the
  allowed literals as specials and everything else as ordinary text.

tiktoken ignores allowed literals that are not registered; ByteBPE refuses them, so
they are dropped before the call rather than turned into an error tiktoken never raises.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Mapping, Sequence

from harness.cases.fixtures import portable_argument, resolve_argument
from harness.interface import (
    Adapter,
    AllowedSpecial,
    Capabilities,
    DisallowedSpecial,
    TraceRound,
    resolve_special_policy,
)
from harness.outcomes import Operation
from harness.provenance import file_record
from harness.registry import AdapterSpec, Family, RegistryError
from harness.vocab import shared_tiktoken_decoder, shared_tiktoken_ranks, vocab_unavailable_reason
from implementations.bytebpe.model import ByteBPE
from implementations.bytebpe.base import DisallowedSpecialError, UnknownTokenId
from implementations.bytebpe.ltr import LeftToRightByteBPE
from implementations.bytebpe.ranks import ENCODINGS, RankByteBPE
from implementations.bytebpe.training import hooks as training_hooks

__all__ = ["ByteBPEAdapter", "DEMO_MODEL", "build_rank_mode", "family", "model_encoding", "rank_specs", "spec_for"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
#: Trained by tokconf's own trainer from ``bytebpe_demo.txt`` (see ``data/README.md``).
DEMO_MODEL = DATA_DIR / "bytebpe_demo.json"

TRAINED_NOTES = (
    "own byte-level BPE (seed 002): encodes by stored merge rank, all non-overlapping "
    "occurrences per round",
    "a lone surrogate raises UnicodeEncodeError (tiktoken would substitute U+FFFD)",
    "native allowed_special=None raises on any registered literal; tiktoken's "
    "disallowed_special is mapped by checking for those literals before encoding",
)
LTR_NOTES = (
    "DELIBERATELY WRONG (seed 002, §3.5): merges the first known pair scanning left to "
    "right instead of the lowest-rank pair; decodes to the same text, different IDs",
)


class ByteBPEAdapter(Adapter):
    """One ByteBPE-family model behind the common interface."""

    library = "tokconf"

    def __init__(
        self, model: ByteBPE, *, name: str, encoding: str, capabilities: Capabilities
    ) -> None:
        self.model = model
        self.name = name
        self.encoding = encoding
        self.capabilities = capabilities

    @property
    def split_pattern(self) -> str | None:
        return self.model.pattern

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self.model.special_tokens)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        registered = frozenset(self.model.special_tokens)
        allowed, disallowed = resolve_special_policy(registered, allowed_special, disallowed_special)
        allowed &= registered
        if not allowed and disallowed == registered:
            return self.model.encode(text, allowed_special=None)
        if disallowed:
            self.model.raise_if_present(text, disallowed)
        return self.model.encode(text, allowed_special=allowed)

    def encode_ordinary(self, text: str) -> list[int]:
        return self.model.encode_ordinary(text)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        if not self.capabilities.batch:
            return super().encode_batch(texts)
        return [
            self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special)
            for t in texts
        ]

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.model.decode_bytes(ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.model.decode(ids, errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self.model.token_bytes(token_id)

    def trace(self, text: str) -> list[TraceRound]:
        return self.model.trace(text)

    def pretokenize(self, text: str) -> list[str]:
        return self.model.pretokenize(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if isinstance(exc, DisallowedSpecialError):
            return "disallowed-special"
        if isinstance(exc, UnknownTokenId):
            return "unknown-id"
        return None


def model_encoding(path: Path) -> str:
    """``trained:`` + the first 12 hex digits of the model file's SHA-256."""
    return "trained:" + hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _model_path(argument: str) -> Path:
    return DEMO_MODEL if argument == "demo" else resolve_argument(argument)


def build(argument: str, *, left_to_right: bool) -> ByteBPEAdapter:
    """Load the model file and wrap it (the spec's factory)."""
    path = _model_path(argument)
    if left_to_right:
        model: ByteBPE = LeftToRightByteBPE.load(path)
    else:
        model = ByteBPE.load(path)
    kind = "bytebpe-ltr" if left_to_right else "bytebpe"
    adapter = ByteBPEAdapter(
        model,
        name=f"{kind}:{argument}",
        encoding=model_encoding(path),
        capabilities=Capabilities(
            trace=True,
            pretokenize=True,
            notes=(LTR_NOTES + TRAINED_NOTES) if left_to_right else TRAINED_NOTES,
        ),
    )
    if argument != "demo":  # the demo model ships with tokconf: its version says which
        adapter.files_read = (file_record(argument, path),)
    return adapter


def spec_for(argument: str, *, left_to_right: bool) -> AdapterSpec:
    """The spec for ``bytebpe[-ltr]:ARGUMENT``; ``demo`` is the shipped model.

    Hashing the file is the only work done here (the encoding names the file's hash);
    parsing the model waits for the factory.
    """
    kind = "bytebpe-ltr" if left_to_right else "bytebpe"
    if not argument:
        raise RegistryError(f"{kind}: needs a model file: {kind}:PATH/TO/MODEL.json")
    if argument != "demo":
        argument = portable_argument(argument)  # the name never holds an install's absolute path
    path = _model_path(argument)
    try:
        encoding = model_encoding(path)
    except OSError as exc:
        if argument == "demo":  # listing must survive a broken install; say why instead
            reason = exc.strerror  # `exc` is unbound once the except block ends
            return AdapterSpec(
                name=f"{kind}:demo", encoding="trained:unavailable",
                factory=lambda: build(argument, left_to_right=left_to_right), library="tokconf",
                check=lambda: f"the shipped demo model {path} is missing ({reason}); reinstall tokconf",
            )
        raise RegistryError(
            f"{kind}:{argument}: cannot read model file {path} ({exc.strerror}); train one with "
            f"`tokconf train --vocab-size 500 -o {path} FILE`"
        ) from exc
    what = "left-to-right (wrong) encoder over" if left_to_right else "own byte BPE,"
    return AdapterSpec(
        name=f"{kind}:{argument}",
        encoding=encoding,
        factory=lambda: build(argument, left_to_right=left_to_right),
        library="tokconf",
        description=f"{what} model {path.name}",
    )


RANK_NOTES = (
    "rank mode (seed 003): pieces as bytes, lowest-rank concatenation merged first via a "
    "heap over a linked list (O(n log n) per piece)",
    "a piece that is itself a token is taken whole, as tiktoken does",
    "lone surrogates become U+FFFD before encoding, as tiktoken does",
    "the pre-split runs on the `regex` module's Unicode tables, tiktoken's on its Rust "
    "regex crate's: characters one has assigned and the other not (with regex 2026.x and "
    "tiktoken 0.14, Unicode 17.0's additions such as CJK Extension J, U+323B0-U+3347F) "
    "fall into different pattern classes and split differently",
)


def build_rank_mode(argument: str) -> ByteBPEAdapter:
    """``bytebpe-ranks:ARGUMENT``: the pinned ranks file, merged by :class:`RankByteBPE`."""
    stem, encoding, pattern, special_tokens = ENCODINGS[argument]
    model = RankByteBPE(
        shared_tiktoken_ranks(stem), decoder=shared_tiktoken_decoder(stem),
        pattern=pattern, special_tokens=special_tokens,
    )
    return ByteBPEAdapter(
        model,
        name=f"bytebpe-ranks:{argument}",
        encoding=encoding,
        capabilities=Capabilities(batch=True, trace=True, pretokenize=True, notes=RANK_NOTES),
    )


def _rank_spec(argument: str) -> AdapterSpec:
    stem, encoding, _, _ = ENCODINGS[argument]
    return AdapterSpec(
        name=f"bytebpe-ranks:{argument}",
        encoding=encoding,
        factory=lambda: build_rank_mode(argument),
        library="tokconf",
        description=f"own byte BPE over {stem}.tiktoken ranks (heap merge)",
        check=lambda: vocab_unavailable_reason(f"{stem}.tiktoken"),
    )


def rank_specs() -> list[AdapterSpec]:
    """One spec per encoding the rank mode covers."""
    return [_rank_spec(argument) for argument in ENCODINGS]


# -- registration ----------------------------------------------------------------------


def family() -> list[Family]:
    """``bytebpe:PATH``, ``bytebpe-ltr:PATH``, ``bytebpe:demo`` and the rank mode."""

    return [
        Family(
            kind="bytebpe",
            specs=lambda: [spec_for("demo", left_to_right=False)],
            resolve=lambda arg: spec_for(arg, left_to_right=False),
            hooks=training_hooks(model_encoding),
        ),
        Family(
            kind="bytebpe-ltr",
            specs=lambda: [spec_for("demo", left_to_right=True)],
            resolve=lambda arg: spec_for(arg, left_to_right=True),
        ),
        Family(kind="bytebpe-ranks", specs=rank_specs),
    ]
