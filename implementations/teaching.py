"""Teaching tokenizers from seed 002: closed vocabularies that show what gets lost.

- ``simple-v1``: split on punctuation and whitespace, strip, drop empties; the sorted
  pieces of a training text are the vocabulary; an unseen word is a ``KeyError``;
  decode joins with spaces and pulls punctuation back, so layout is not kept.
- ``simple-v2``: V1 plus ``<|endoftext|>`` and ``<|unk|>``; every unseen word becomes the
  one ``<|unk|>`` ID, so 青山 and 远海 decode to the same thing.
- ``simple-v3``: keeps every non-empty piece, whitespace included, and decodes by joining
  with ``""``: exact round trips when every piece is known; an unseen tab still fails.
- ``char-demo``: 31 characters and seven fixed merge rules, applied in table order.

Each declares its closed vocabulary (``Capabilities.alphabet``) and its domain
(``in_domain``), so the harness does not count a closed vocabulary's refusals against it.
The training text, ``data/teaching_lighthouse.txt``, is written for tokconf.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial, TraceRound
from harness.outcomes import Operation
from harness.registry import AdapterSpec

__all__ = ["CharDemo", "SimpleV1", "SimpleV2", "SimpleV3", "UnknownCharacter", "family"]

DATA_DIR = Path(__file__).resolve().parent / "data"
TEXTS = {"lighthouse": DATA_DIR / "teaching_lighthouse.txt"}

# the capture group keeps the separators themselves as pieces
_SPLIT = re.compile(r"""(--|[,.:;?!"'()]|\s)""")
# decode: the space V1 put before a punctuation mark goes away again
_TIGHTEN = re.compile(r"""\s+([,.:;?!"'()])""")


def layout_pieces(text: str) -> list[str]:
    """Every non-empty piece, whitespace included (V3).

    >>> layout_pieces("a  b, c")
    ['a', ' ', ' ', 'b', ',', ' ', 'c']
    """
    return [p for p in _SPLIT.split(text) if p]


def word_pieces(text: str) -> list[str]:
    """Pieces stripped, whitespace dropped (V1, V2).

    >>> word_pieces("青山, 青山。 -- ok")
    ['青山', ',', '青山。', '--', 'ok']
    """
    return [p.strip() for p in _SPLIT.split(text) if p.strip()]


class SimpleV1:
    """Word-level vocabulary: sorted pieces of a text, IDs by position."""

    def __init__(self, training_text: str) -> None:
        vocab = sorted(set(self.pieces(training_text)))
        self.str_to_int: dict[str, int] = {s: i for i, s in enumerate(vocab)}
        self.int_to_str: dict[int, str] = {i: s for s, i in self.str_to_int.items()}
        self.layout_chars = frozenset(ch for ch in training_text if ch.isspace())

    def pieces(self, text: str) -> list[str]:
        return word_pieces(text)

    def encode(self, text: str) -> list[int]:
        return [self.str_to_int[p] for p in self.pieces(text)]  # KeyError: an unseen word

    def decode(self, ids: Sequence[int]) -> str:
        return _TIGHTEN.sub(r"\1", " ".join(self.int_to_str[i] for i in ids))

    def knows_all(self, text: str) -> bool:
        return all(p in self.str_to_int for p in self.pieces(text))


class SimpleV2(SimpleV1):
    """V1 that never fails: unseen words all become the one ``<|unk|>``."""

    UNK = "<|unk|>"
    EOT = "<|endoftext|>"

    def __init__(self, training_text: str) -> None:
        super().__init__(training_text)
        for literal in (self.EOT, self.UNK):
            self.str_to_int[literal] = len(self.str_to_int)
        self.int_to_str = {i: s for s, i in self.str_to_int.items()}

    def encode(self, text: str) -> list[int]:
        unk = self.str_to_int[self.UNK]
        return [self.str_to_int.get(p, unk) for p in self.pieces(text)]

    def knows_all(self, text: str) -> bool:
        return all(p in self.str_to_int and p != self.UNK for p in self.pieces(text))


class SimpleV3(SimpleV1):
    """Keeps whitespace pieces and joins with "": exact, but only over known pieces."""

    def pieces(self, text: str) -> list[str]:
        return layout_pieces(text)

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.int_to_str[i] for i in ids)


class UnknownCharacter(KeyError):
    """A character outside char-demo's 31-character alphabet."""

    def __str__(self) -> str:
        return str(self.args[0])


class CharDemo:
    """Seed 002's interactive demo: characters, then seven rules in table order.

    >>> CharDemo().encode("lower lowest lower")
    [34, 26, 37, 26, 34]
    """

    ALPHABET = "abcdefghijklmnopqrstuvwxyz .,!?"
    RULES: tuple[tuple[str, str], ...] = (
        ("l", "o"), ("lo", "w"), ("e", "r"), ("low", "er"), ("s", "t"), ("e", "st"), ("low", "est"),
    )

    def __init__(self) -> None:
        symbols = list(self.ALPHABET) + [left + right for left, right in self.RULES]
        self.str_to_int = {s: i for i, s in enumerate(symbols)}
        self.int_to_str = dict(enumerate(symbols))

    def _symbols(self, text: str) -> list[str]:
        for position, ch in enumerate(text):
            if ch not in self.str_to_int:
                raise UnknownCharacter(
                    f"character {ch!r} (U+{ord(ch):04X}) at position {position} is not in the "
                    f"char-demo alphabet (a-z, space, . , ! ?); there is no case folding: "
                    f"write it in lower case or leave it out"
                )
        return list(text)

    def run(self, text: str, rounds: list[TraceRound] | None = None) -> list[str]:
        symbols = self._symbols(text)
        for rank, (left, right) in enumerate(self.RULES):
            merged: list[str] = []
            count = i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                    merged.append(left + right)
                    count += 1
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
            if rounds is not None and count:
                rounds.append(TraceRound(pair=(left, right), rank=rank, merged=count,
                                         result=self.str_to_int[left + right]))
        return symbols

    def encode(self, text: str) -> list[int]:
        return [self.str_to_int[s] for s in self.run(text)]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.int_to_str[i] for i in ids)

    def knows_all(self, text: str) -> bool:
        return all(ch in self.str_to_int for ch in text)


class TeachingAdapter(Adapter):
    """A teaching tokenizer behind the common interface; its native behaviour as is."""

    library = "tokconf"

    def __init__(self, tokenizer, *, name: str, capabilities: Capabilities, exact_layout: bool) -> None:
        self.tokenizer = tokenizer
        self.name = name
        self.encoding = f"closed:{name}"
        self.capabilities = capabilities
        self._exact_layout = exact_layout

    @property
    def special_tokens(self) -> Mapping[str, int]:
        if isinstance(self.tokenizer, SimpleV2):
            return {s: self.tokenizer.str_to_int[s] for s in (SimpleV2.EOT, SimpleV2.UNK)}
        return {}

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        return self.tokenizer.encode(text)  # no policy: see special_policy and notes

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.tokenizer.decode(list(ids)).encode("utf-8")

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.tokenizer.decode(list(ids))

    def trace(self, text: str) -> list[TraceRound]:
        if not isinstance(self.tokenizer, CharDemo):
            return super().trace(text)
        rounds: list[TraceRound] = []
        self.tokenizer.run(text, rounds)
        return rounds

    def pretokenize(self, text: str) -> list[str]:
        if isinstance(self.tokenizer, SimpleV3):
            return self.tokenizer.pieces(text)
        return super().pretokenize(text)

    def in_domain(self, text: str) -> bool:
        """Every piece is in the vocabulary, and nothing else (issue 21).

        Not "the round trip holds": that is the property the checks test, and a domain
        that excluded its failures made the round-trip check unable to fail. Nor is an
        exception "out of domain": it escapes here and the harness counts the input
        against the adapter (:meth:`harness.calls.Calls.in_domain`).
        """
        return self.tokenizer.knows_all(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if isinstance(exc, KeyError):
            return "unknown-id" if op == "decode" else "unknown-token"
        return None


#: pieces that are no words of the text (V2's specials): generated text leaves them out
_SPECIAL_PIECES = frozenset({"<|endoftext|>", "<|unk|>"})


def _alphabet(tokenizer: SimpleV1) -> frozenset[str]:
    return frozenset("".join(tokenizer.str_to_int)) | tokenizer.layout_chars


_SIMPLE_NOTES = {
    "simple-v1": (
        "closed word vocabulary (seed 002, SimpleTokenizerV1): an unseen word raises KeyError",
        "decode joins with spaces and re-attaches punctuation: whitespace layout is lost",
    ),
    "simple-v2": (
        "closed word vocabulary (seed 002, SimpleTokenizerV2): every unseen word becomes the "
        "same <|unk|> ID, so decode cannot recover it",
        "a whitespace-delimited <|endoftext|> or <|unk|> is always its special ID; there is "
        "no allowed/disallowed policy",
        "decode joins with spaces and re-attaches punctuation: whitespace layout is lost",
    ),
    "simple-v3": (
        "closed piece vocabulary keeping whitespace (seed 002, V3): exact round trips over "
        "known pieces; an unseen piece (a tab, a new word) raises KeyError",
    ),
}


def _build_simple(kind: str, text_name: str) -> TeachingAdapter:
    text = TEXTS[text_name].read_bytes().decode("utf-8")
    tokenizer = {"simple-v1": SimpleV1, "simple-v2": SimpleV2, "simple-v3": SimpleV3}[kind](text)
    return TeachingAdapter(
        tokenizer,
        name=f"{kind}:{text_name}",
        capabilities=Capabilities(
            special_policy="always-special" if kind == "simple-v2" else "none",
            pretokenize=kind == "simple-v3",
            alphabet=_alphabet(tokenizer),
            words=tuple(sorted(p for p in tokenizer.str_to_int if p not in _SPECIAL_PIECES)),
            notes=_SIMPLE_NOTES[kind],
        ),
        exact_layout=kind == "simple-v3",
    )


def _build_char_demo() -> TeachingAdapter:
    return TeachingAdapter(
        CharDemo(),
        name="char-demo:lowest",
        capabilities=Capabilities(
            special_policy="none",
            trace=True,
            alphabet=frozenset(CharDemo.ALPHABET),
            notes=(
                "seed 002's character demo: 31 characters, 7 fixed merge rules in table order, "
                "each over all non-overlapping matches; no case folding; an unknown character "
                "raises UnknownCharacter (a KeyError)",
            ),
        ),
        exact_layout=True,
    )


def _check(text_name: str) -> str | None:
    path = TEXTS[text_name]
    return None if path.is_file() else f"teaching text {path} is missing; reinstall tokconf"


def family() -> list[AdapterSpec]:
    specs = [
        AdapterSpec(
            name=f"{kind}:{text_name}",
            encoding=f"closed:{kind}:{text_name}",
            factory=lambda kind=kind, text_name=text_name: _build_simple(kind, text_name),
            library="tokconf",
            description=f"seed 002 teaching tokenizer {kind} over data/{TEXTS[text_name].name}",
            check=lambda text_name=text_name: _check(text_name),
        )
        for kind in ("simple-v1", "simple-v2", "simple-v3")
        for text_name in TEXTS
    ]
    specs.append(
        AdapterSpec(
            name="char-demo:lowest",
            encoding="closed:char-demo:lowest",
            factory=_build_char_demo,
            library="tokconf",
            description="seed 002 character demo: a-z, space, . , ! ? and 7 merge rules",
        )
    )
    return specs
