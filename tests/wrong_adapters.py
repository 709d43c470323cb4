"""Deliberately wrong cl100k_base adapters: the default run must catch every one of them.

Each is a classic way to get a byte-level BPE tokenizer subtly wrong (seeds 000-003).
All claim ``encoding = "cl100k_base"`` and tiktoken's special-token semantics, so every
difference from ``tiktoken:cl100k_base`` is theirs. Load them with ``--plugin`` from the
repository root (``python -m harness`` has the current folder on the import path; the
``tokconf`` script needs ``PYTHONPATH=.``)::

    python -m harness run --plugin tests.wrong_adapters:crlf --impl wrong:crlf
    python -m harness run --plugin tests.wrong_adapters:everything

=================== ===================== ===============================================
plugin              adapter               what is wrong
=================== ===================== ===============================================
``ltr``             ``wrong:ltr-merge``    merges the leftmost mergeable pair, not the
                                           lowest-ranked one (seed 002, §3.5)
``drop_last``       ``wrong:drop-last``    lost its highest-rank merge rule, as encoder.py
                                           does with a merges file without a final newline
``per_token``       ``wrong:per-token``    ``decode`` decodes each token to a string on its
                                           own: a character split over tokens becomes U+FFFD
``rstrip``          ``wrong:rstrip``       strips trailing whitespace before encoding
``always_special``  ``wrong:always-special`` every literal is special under every policy,
                                           yet it declares tiktoken semantics
``crlf``            ``wrong:crlf``         reads text as if in text mode: CRLF becomes LF
=================== ===================== ===============================================
"""

from __future__ import annotations

from typing import Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial, resolve_special_policy
from harness.registry import AdapterSpec

ENCODING = "cl100k_base"


class _Wrapped(Adapter):
    """tiktoken's cl100k_base, with one thing broken by a subclass."""

    library = "tiktoken"
    encoding = ENCODING
    capabilities = Capabilities(pretokenize=True)

    def __init__(self) -> None:
        from implementations.tiktoken import TiktokenAdapter

        self.inner = TiktokenAdapter(ENCODING)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return self.inner.special_tokens

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.inner.decode_bytes(ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.inner.decode(ids, errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self.inner.token_bytes(token_id)

    def pretokenize(self, text: str) -> list[str]:
        return self.inner.pretokenize(text)

    def classify_error(self, op, exc):  # type: ignore[no-untyped-def]
        return self.inner.classify_error(op, exc)


class _OwnMerges(_Wrapped):
    """Encodes ordinary text with its own pure-Python BPE over cl100k_base's ranks."""

    def __init__(self) -> None:
        super().__init__()
        from harness.vocab import load_tiktoken_ranks

        self.ranks = load_tiktoken_ranks(ENCODING)

    def merge(self, piece: bytes) -> list[bytes]:  # pragma: no cover - overridden
        raise NotImplementedError

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        specials = self.inner.special_tokens
        allowed, disallowed = resolve_special_policy(set(specials), allowed_special, disallowed_special)
        for literal in disallowed:
            if literal in text:
                raise ValueError(f"Encountered text corresponding to disallowed special token {literal!r}")
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        ids: list[int] = []
        for part, special in _split_specials(text, allowed):
            if special:
                ids.append(specials[part])
                continue
            for chunk in self.inner.pretokenize(part):
                ids.extend(self.ranks[token] for token in self.merge(chunk.encode("utf-8")))
        return ids


def _split_specials(text: str, allowed: frozenset[str]) -> list[tuple[str, bool]]:
    """Split at allowed literals (longest first): [(text, is_special), ...]."""
    out: list[tuple[str, bool]] = []
    start = i = 0
    ordered = sorted(allowed, key=len, reverse=True)
    while i < len(text):
        hit = next((lit for lit in ordered if text.startswith(lit, i)), None)
        if hit is None:
            i += 1
            continue
        if start < i:
            out.append((text[start:i], False))
        out.append((hit, True))
        i += len(hit)
        start = i
    if start < len(text):
        out.append((text[start:], False))
    return out


class LeftToRightMerger(_OwnMerges):
    """Merges the first adjacent pair that is in the vocabulary, scanning from the left."""

    name = "wrong:ltr-merge"

    def merge(self, piece: bytes) -> list[bytes]:
        parts = [bytes([b]) for b in piece]
        merged = True
        while merged and len(parts) > 1:
            merged = False
            for i in range(len(parts) - 1):
                if parts[i] + parts[i + 1] in self.ranks:
                    parts[i : i + 2] = [parts[i] + parts[i + 1]]
                    merged = True
                    break
        return parts


class DropLastMerge(_Wrapped):
    """Lost the highest-rank merge: that token is decoded but never produced."""

    name = "wrong:drop-last"

    def __init__(self) -> None:
        super().__init__()
        import tiktoken

        native = self.inner.native
        ranks = dict(native._mergeable_ranks)
        last = max(ranks, key=ranks.__getitem__)
        del ranks[last]
        self.dropped = last
        self.reduced = tiktoken.Encoding(
            name="cl100k_base_without_last_merge", pat_str=native._pat_str,
            mergeable_ranks=ranks, special_tokens=dict(native._special_tokens),
        )

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return self.reduced.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


class PerTokenDecode(_Wrapped):
    """``decode`` turns each token into a string on its own, then joins the strings."""

    name = "wrong:per-token"

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return "".join(self.inner.token_bytes(i).decode("utf-8", errors=errors) for i in ids)


class StripTrailingWhitespace(_Wrapped):
    """Strips trailing whitespace before encoding (a "clean-up" that loses text)."""

    name = "wrong:rstrip"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return super().encode(text.rstrip(), allowed_special=allowed_special, disallowed_special=disallowed_special)


class AlwaysSpecial(_Wrapped):
    """Treats every registered literal as special whatever the policy, declaring tiktoken's."""

    name = "wrong:always-special"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return super().encode(text, allowed_special="all", disallowed_special=())


class CrlfAsLf(_Wrapped):
    """Reads text as a text-mode file would: every CRLF becomes LF before encoding."""

    name = "wrong:crlf"

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        return super().encode(text.replace("\r\n", "\n"), allowed_special=allowed_special,
                              disallowed_special=disallowed_special)


def _spec(cls: type[_Wrapped], description: str) -> AdapterSpec:
    return AdapterSpec(name=cls.name, encoding=ENCODING, factory=cls, library="tiktoken", description=description)


def ltr() -> AdapterSpec:
    return _spec(LeftToRightMerger, "deliberately wrong: left-to-right merging")


def drop_last() -> AdapterSpec:
    return _spec(DropLastMerge, "deliberately wrong: highest-rank merge rule lost")


def per_token() -> AdapterSpec:
    return _spec(PerTokenDecode, "deliberately wrong: per-token string decode")


def rstrip() -> AdapterSpec:
    return _spec(StripTrailingWhitespace, "deliberately wrong: strips trailing whitespace")


def always_special() -> AdapterSpec:
    return _spec(AlwaysSpecial, "deliberately wrong: literals special under every policy")


def crlf() -> AdapterSpec:
    return _spec(CrlfAsLf, "deliberately wrong: CRLF read as LF")


def everything() -> list[AdapterSpec]:
    return [ltr(), drop_last(), per_token(), rstrip(), always_special(), crlf()]


# ---------------------------------------------------------------------------------------
# Toy adapters for the checks' own tests: one ID per byte, two specials, no vocabulary to
# load, so a test can build dozens in milliseconds. ``ToyBytes(bug=...)`` breaks one thing.

import re as _re

TOY_SPECIALS = {"<|x|>": 256, "<|yy|>": 257}


class ToyBytes(Adapter):
    """IDs are byte values; ``<|x|>`` is 256 and ``<|yy|>`` 257.

    It follows the special-token semantics its ``policy`` declares (tiktoken's by default).

    ``bug`` names one deliberate fault: ``crlf``, ``rstrip``, ``strict-surrogates``,
    ``always-special``, ``per-token-decode``, ``bad-batch``, ``lossy-pretokenize``,
    ``dup-special``, ``bad-special-decode``, ``decode-raises``.
    """

    library = ""
    encoding = "toy-bytes"

    def __init__(self, bug: str = "", *, policy: str = "tiktoken", name: str | None = None) -> None:
        self.bug = bug
        self.name = name or (f"toy:{bug}" if bug else "toy:bytes")
        self.capabilities = Capabilities(batch=True, pretokenize=True, special_policy=policy)  # type: ignore[arg-type]

    @property
    def special_tokens(self) -> Mapping[str, int]:
        if self.bug == "dup-special":
            return {"<|x|>": 256, "<|yy|>": 256}
        return dict(TOY_SPECIALS)

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        specials = dict(TOY_SPECIALS)
        policy = self.capabilities.special_policy
        if self.bug == "always-special" or policy == "always-special":
            allowed_special, disallowed_special = "all", ()
        elif policy == "ordinary-unless-allowed":
            disallowed_special = ()
        elif policy == "none":
            allowed_special, disallowed_special = frozenset(), ()
        allowed, disallowed = resolve_special_policy(set(specials), allowed_special, disallowed_special)
        for literal in sorted(disallowed):
            if literal in text:
                raise ValueError(f"Encountered text corresponding to disallowed special token {literal!r}")
        if self.bug == "crlf":
            text = text.replace("\r\n", "\n")
        if self.bug == "rstrip":
            text = text.rstrip()
        ids: list[int] = []
        for part, special in _split_specials(text, allowed):
            if special:
                ids.append(specials[part])
            elif self.bug == "strict-surrogates":
                ids.extend(part.encode("utf-8"))
            else:
                ids.extend(part.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8"))
        return ids

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all") -> list[list[int]]:
        out = [self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in texts]
        if self.bug == "bad-batch":
            out = [ids[:-1] for ids in out]
        return out

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        out = bytearray()
        names = {v: k for k, v in TOY_SPECIALS.items()}
        for i in ids:
            if i in names and self.bug not in ("decode-raises",):
                out += ("<|z|>" if self.bug == "bad-special-decode" else names[i]).encode()
            elif 0 <= i < 256:
                out.append(i)
            else:
                raise KeyError(i)
        return bytes(out)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        if self.bug == "per-token-decode":
            return "".join(self.decode_bytes([i]).decode("utf-8", errors=errors) for i in ids)
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def pretokenize(self, text: str) -> list[str]:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        pattern = r"\S+" if self.bug == "lossy-pretokenize" else r"\S+|\s+"
        return _re.findall(pattern, text)


def toy(bug: str = "", **kwargs: object) -> ToyBytes:
    return ToyBytes(bug, **kwargs)  # type: ignore[arg-type]


class ToyClosed(ToyBytes):
    """A closed vocabulary: only ``a``, ``b`` and space; anything else is unknown-token."""

    def __init__(self, name: str = "toy:closed") -> None:
        super().__init__(name=name)
        self.encoding = "toy-closed"
        self.capabilities = Capabilities(alphabet=frozenset("ab "))

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return {}

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        for ch in text:
            if ch not in "ab ":
                raise KeyError(ch)
        return list(text.encode())
