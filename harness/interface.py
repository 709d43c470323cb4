"""The one face every tokenizer shows the harness.

tiktoken's special-token policy is the common language::

    encode(text, allowed_special=set(), disallowed_special="all")

``allowed_special`` names the special literals that become their special IDs;
``disallowed_special`` names the literals whose presence is an error; the rest are
ordinary text. Where a native library means something else (Hugging Face always treats
added tokens as special, minbpe treats unlisted specials as ordinary text, GPT-2's
``encoder.py`` knows no specials at all) the adapter reports its *native* behaviour and
declares the difference in :attr:`Capabilities.special_policy` and ``notes``; it never
papers over it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import AbstractSet, Any, Collection, Literal, Mapping, Sequence

from harness.outcomes import Operation, Outcome, UnsupportedOperation
from harness.provenance import FileRecord, Provenance

__all__ = [
    "Adapter",
    "AllowedSpecial",
    "Capabilities",
    "DisallowedSpecial",
    "SpecialPolicy",
    "TraceRound",
    "resolve_special_policy",
]

AllowedSpecial = Literal["all"] | AbstractSet[str]
DisallowedSpecial = Literal["all"] | Collection[str]

#: How an adapter natively treats special-token literals.
#:  - ``tiktoken``: as the common language above.
#:  - ``always-special``: every registered literal becomes its ID whatever the policy (HF).
#:  - ``ordinary-unless-allowed``: literals outside an explicit allowed set are ordinary
#:    text rather than refused (minbpe's RegexTokenizer; its ``none_raise`` mode, which
#:    tiktoken's default maps to, still refuses every literal).
#:  - ``none``: no special handling at all; literals are always ordinary text (encoder.py).
SpecialPolicy = Literal["tiktoken", "always-special", "ordinary-unless-allowed", "none"]


@dataclass(frozen=True)
class Capabilities:
    """What an adapter supports, and how it differs from the common language."""

    special_policy: SpecialPolicy = "tiktoken"
    encode_ordinary: bool = True
    batch: bool = False
    trace: bool = False
    pretokenize: bool = False
    #: For a closed vocabulary: the characters it can encode at all. ``None`` = any text.
    alphabet: frozenset[str] | None = None
    #: For a closed *word* vocabulary: its pieces, so generated inputs are written in them
    #: (random characters of its alphabet almost never spell a known word). ``None``: none.
    words: tuple[str, ...] | None = None
    #: Declared, human-readable differences from tiktoken semantics, shown in reports.
    notes: tuple[str, ...] = ()
    #: Whose public API :meth:`Adapter.api_surface` walks (``"tiktoken"``, ``"tokenizers"``,
    #: ``"transformers"``); ``None`` = it has none. Adapters of one surface family compare
    #: path by path (two releases of one library); see :mod:`harness.checks.api_surface`.
    api_surface: str | None = None
    #: How many times a slow adapter halves its share of each generated pool (0: the
    #: whole pool); with any halving it takes no long pieces. Declared, never timed:
    #: which inputs run must not depend on how busy the machine is (issue 20). An int,
    #: as everything that crosses the worker protocol.
    generated_halvings: int = 0
    #: The longest input of the long tier (characters) this adapter takes, and the
    #: longest of the generated pool's long pieces; ``None``: every size. Declared by
    #: adapters whose encode grows faster than linearly on one long piece (pure-Python
    #: BPE), from a measurement recorded beside the declaration, so which long inputs run
    #: never depends on the machine (issue 20); what an adapter skips is recorded in
    #: parity.json (``run.limits.long_declared``, ``run.limits.generated_share``) and a note.
    long_limit: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "special_policy": self.special_policy,
            "encode_ordinary": self.encode_ordinary,
            "batch": self.batch,
            "trace": self.trace,
            "pretokenize": self.pretokenize,
            "closed_vocabulary": self.alphabet is not None,
            "notes": list(self.notes),
            "api_surface": self.api_surface,
        }


@dataclass(frozen=True)
class TraceRound:
    """One merge round: which pair merged, at what rank, in how many positions."""

    pair: tuple[Any, Any]
    rank: int | None
    merged: int
    result: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "pair": [_jsonable(p) for p in self.pair],
            "rank": self.rank,
            "merged": self.merged,
            "result": _jsonable(self.result),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    return value


def resolve_special_policy(
    specials: AbstractSet[str],
    allowed_special: AllowedSpecial,
    disallowed_special: DisallowedSpecial,
) -> tuple[frozenset[str], frozenset[str]]:
    """Turn tiktoken-style policy arguments into concrete (allowed, disallowed) sets.

    >>> sorted(resolve_special_policy({"<a>", "<b>"}, {"<a>"}, "all")[1])
    ['<b>']
    >>> resolve_special_policy({"<a>"}, "all", "all")
    (frozenset({'<a>'}), frozenset())
    """
    allowed = frozenset(specials) if allowed_special == "all" else frozenset(allowed_special)
    if disallowed_special == "all":
        disallowed = frozenset(specials) - allowed
    else:
        disallowed = frozenset(disallowed_special)
    return allowed, disallowed


class Adapter(ABC):
    """Base class for adapters. Subclasses set ``name``, ``encoding`` and ``library``.

    ``name`` is ``"<kind>:<encoding or argument>"``; ``encoding`` is the ID space it
    claims (IDs are compared only between adapters of the same encoding); ``library``
    is the distribution whose version the reports show.
    """

    name: str = ""
    encoding: str = ""
    library: str = ""
    capabilities: Capabilities = Capabilities()
    #: the language its users call it from (the report's language column)
    language: str = "Python"
    #: for a library that bundles its own rank tables: (pinned vocabulary file name,
    #: SHA-256 of the bundled table written in that file's format); vocab-consistency
    #: compares it with the pinned hash (kind ``rank-table:<file>``)
    vocabulary: tuple[tuple[str, str], ...] = ()
    #: Optional: the pre-tokenizer's split regex, in the syntax of the engine that runs it
    #: (tiktoken's fancy-regex, the ``regex`` module, Oniguruma for Hugging Face). tokconf
    #: reads it to build inputs for every alternative and boundary of the pattern, and to
    #: measure which of them a run exercised. ``None``: not known.
    split_pattern: str | None = None

    #: The files this adapter was built from (see :mod:`harness.provenance`); families
    #: that read a file the user names set it, built-in vocabularies are pinned already.
    files_read: tuple[FileRecord, ...] = ()

    def provenance(self) -> Provenance:
        """What exactly is under test: ``library``'s distribution and version, the files read."""
        return Provenance.of(self.library, self.files_read)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return {}

    @abstractmethod
    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]: ...

    def encode_ordinary(self, text: str) -> list[int]:
        return self.encode(text, allowed_special=frozenset(), disallowed_special=())

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        raise UnsupportedOperation(f"{self.name} has no batch encode")

    @abstractmethod
    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token, for showing token pieces."""
        return self.decode_bytes([token_id])

    def decode_stream(self, ids: Sequence[int]) -> list[str | None]:
        """Optional: the library's own streaming decoder fed ``ids`` one at a time.

        Returns what each step emitted (``None`` where it held text back), e.g. Hugging
        Face ``tokenizers``' ``DecodeStream``. The chunks must join to ``decode(ids)``.
        """
        raise UnsupportedOperation(f"{self.name} has no streaming decoder of its own")

    def trace(self, text: str) -> list[TraceRound]:
        raise UnsupportedOperation(f"{self.name} cannot trace its merges")

    def pretokenize(self, text: str) -> list[str]:
        raise UnsupportedOperation(f"{self.name} does not expose its pre-tokenizer")

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        """Every public path of the native library on ``text``: (path, outcome) pairs.

        Each path is one way the library's users reach it (``encode[all]``,
        ``encode_to_numpy[default]``, ``decode_with_offsets``, ...), run through
        :func:`harness.outcomes.capture`, so a path that raises is an outcome, not an
        escape. A path the installed release lacks is ``unsupported``. Declared by
        :attr:`Capabilities.api_surface`.
        """
        raise UnsupportedOperation(f"{self.name} does not walk a library API surface")

    def api_surfaces(self, texts: Sequence[str]) -> list[list[tuple[str, Outcome]]]:
        """Optional: :meth:`api_surface` of each text, in order, with work shared across
        texts (tiktoken's batch paths are asked once for all of them:
        :func:`implementations.tiktoken_surface.walk_many`). Each text's answer must be what
        :meth:`api_surface` gives for it alone. The harness uses it only when the class
        that defines :meth:`api_surface` defines this too (a subclass that changes one walk
        is never bypassed), and asks each text alone when it raises."""
        return [self.api_surface(text) for text in texts]

    def api_attributes(self) -> list[tuple[str, Outcome]]:
        """The same for what does not depend on an input: attributes (``n_vocab``, a hash
        of ``token_byte_values()``) and fixed probes (decoding an ID past the vocabulary)."""
        raise UnsupportedOperation(f"{self.name} does not walk a library API surface")

    def in_domain(self, text: str) -> bool:
        """Whether ``text`` is inside what this adapter claims to encode.

        Open vocabularies take any text; a closed one declares its alphabet and
        inputs outside it are not counted against it.
        """
        alphabet = self.capabilities.alphabet
        return alphabet is None or all(ch in alphabet for ch in text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        """Hook: map a native exception to an outcome category; ``None`` = default."""
        return None

    #: names of adapters over the same library whose declared native behaviour this one
    #: shares, so cases documenting that behaviour apply to it too (a converted
    #: ``hf-json:`` file declares like ``hf:<encoding>``)
    declares_like: tuple[str, ...] = ()

    def reproduce_flags(self) -> list[str]:
        """Hook: the ``tokconf`` flags that select this very adapter again (besides
        ``--impl`` and ``--plugin``), e.g. ``["--source-root", "minbpe-gpt4=/src/minbpe"]``,
        so a reproduce command copied from a report tests the same thing."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ({self.encoding})>"
