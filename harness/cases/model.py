"""Values shared by the case loader, the checks and the runner.

A *case* is one fixed input from ``cases/*.yaml``; a *documented divergence* says that
an adapter is known to differ on it, why, and where that is written down. The loader
(`harness.cases.loader`) builds these from YAML; checks and the runner only read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping

from harness.cases.domain import Domain

__all__ = [
    "CHECKS",
    "Case",
    "DecodeProbe",
    "DocumentedDivergence",
    "ExpectedError",
    "ExpectedRound",
    "GeneratedText",
    "LONG_TEXT_CHARS",
    "Policy",
]

#: A case text this long (or longer) belongs to the long tier: tag ``long``, run only with
#: ``--long`` or the nightly profile.
LONG_TEXT_CHARS = 10_000

#: Every check, in display order. A divergence names one of these.
CHECKS: tuple[str, ...] = (
    "id-parity",  # IDs equal the reference adapter's for the same encoding
    "expected",  # the case's own expectations (IDs per encoding, error category per adapter)
    "round-trip",  # decode_bytes(encode(text)) gives back the text's bytes
    "per-token-decode",  # joining each token's bytes equals decoding the whole list
    "decode",  # decode probes: given IDs -> expected text, bytes or error
    "stream-decode",  # prefixes and windows that cut characters; streaming detokenizers
    "special-policy",  # allowed/disallowed special-token policy matrix
    "encode-ordinary",  # encode_ordinary(t) == encode(t, disallowed_special=())
    "batch",  # encode_batch == [encode(t) for t]
    "error-category",  # failures agree in category with the reference
    "pretokenize-coverage",  # pre-token chunks concatenate back to the input
    "api-surface",  # every public path of the library agrees within a release, and across releases
    "vocab-consistency",  # every ID round-trips, special IDs unique and disjoint
)


@dataclass(frozen=True)
class Policy:
    """tiktoken-style special-token policy: ``"all"`` or a frozenset of literals."""

    allowed_special: Literal["all"] | frozenset[str] = frozenset()
    disallowed_special: Literal["all"] | frozenset[str] = "all"

    def describe(self) -> str:
        def show(v: object) -> str:
            return v if isinstance(v, str) else "{" + ", ".join(sorted(v)) + "}"  # type: ignore[arg-type]

        return f"allowed={show(self.allowed_special)} disallowed={show(self.disallowed_special)}"


@dataclass(frozen=True)
class ExpectedError:
    """An expected failure: a category, and optionally the exact native type."""

    category: str
    native_type: str | None = None


@dataclass(frozen=True)
class ExpectedRound:
    """One expected merge round of ``Adapter.trace``; ``None`` fields are not compared.

    ``pair`` is compared with ``TraceRound.to_json()["pair"]`` (bytes shown as text).
    """

    rank: int | None = None
    merged: int | None = None
    pair: tuple[int | str, int | str] | None = None


@dataclass(frozen=True)
class DecodeProbe:
    """Decode these IDs; expect this text (with ``errors``), these bytes, or an error."""

    ids: tuple[int, ...]
    errors: str = "replace"
    text: str | None = None
    bytes_hex: str | None = None
    error: ExpectedError | None = None


@dataclass(frozen=True)
class DocumentedDivergence:
    """A known, explained difference. Reproducing it passes; not reproducing it is stale."""

    adapters: tuple[str, ...]  # adapter names; "kind:*" matches every adapter of a kind
    check: str  # one of CHECKS
    reason: str
    source: str  # a public reference (upstream file at a commit and line, issue URL) or a repository file; tests/test_case_sources.py
    #: the finding kind it documents (``segmentation``, ``raised:unknown-id|ok``, ...);
    #: required in case files (a crash on a documented segmentation quirk is another
    #: bug); None only where code builds an entry that accepts the kind it finds
    kind: str | None = None
    #: other inputs with the same cause (:mod:`harness.cases.domain`); None: only its own
    domain: Domain | None = None
    #: the line of its ``adapters`` list in the case file (0: not from a file)
    line: int = field(default=0, compare=False)
    #: further kinds of the same cause (``kind: [special-duplicate, special-decode]``)
    more_kinds: tuple[str, ...] = ()

    def accepts(self, kind: str) -> bool:
        """Whether a finding of ``kind`` on the entry's own input is this divergence."""
        return self.kind is None or kind == self.kind or kind in self.more_kinds


@dataclass(frozen=True)
class GeneratedText:
    """A long text given by a rule instead of stored: ``before + repeat * times + then``.

    >>> g = GeneratedText(repeat=" ", times=3, then="x")
    >>> g.text(), g.describe()
    ('   x', "' ' x 3 then 'x'")
    """

    repeat: str
    times: int
    before: str = ""
    then: str = ""

    def text(self) -> str:
        return self.before + self.repeat * self.times + self.then

    def describe(self) -> str:
        parts = [repr(self.before), "then"] if self.before else []
        parts += [f"{self.repeat!r} x {self.times}"]
        if self.then:
            parts += ["then", repr(self.then)]
        return " ".join(parts)

    def to_json(self) -> dict[str, object]:
        return {"before": self.before, "repeat": self.repeat, "times": self.times, "then": self.then}


@dataclass(frozen=True)
class Case:
    """One fixed input and what is known about it."""

    id: str
    text: str
    file: str
    line: int
    encodings: tuple[str, ...] | None = None  # None = every encoding
    adapters: tuple[str, ...] | None = None  # None = every adapter (of those encodings)
    policy: Policy = Policy()
    expect_ids: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # encoding or adapter -> IDs
    expect_errors: Mapping[str, ExpectedError] = field(default_factory=dict)  # encoding or adapter -> error
    expect_roundtrip: bool | None = None
    decode: tuple[DecodeProbe, ...] = ()
    tags: tuple[str, ...] = ()
    documented: tuple[DocumentedDivergence, ...] = ()
    # Added by the case loader work; all optional:
    #: Adapter whose IDs the others are compared with for this case (overrides the run's
    #: reference for its encoding); needed where no tiktoken adapter holds the encoding
    #: (``gpt2-encoder:DIR``, ``bytebpe:demo``).
    reference: str | None = None
    #: encoding or adapter (pattern) -> expected pre-token chunks (``Adapter.pretokenize``)
    expect_pretokens: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: adapter (pattern) -> expected merge rounds of ``Adapter.trace``, in order
    expect_trace: Mapping[str, tuple[ExpectedRound, ...]] = field(default_factory=dict)
    #: how ``text`` was generated (``text_generated``), for long inputs; None: stored
    generated: GeneratedText | None = None

    @property
    def long(self) -> bool:
        """In the long tier: tagged ``long`` (the loader demands it of long texts)."""
        return "long" in self.tags
