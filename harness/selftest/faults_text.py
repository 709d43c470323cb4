r"""Planted faults in pre-tokenization and merging: the algorithm's own less-used corners.

Each pre-tokenization fault is one edit of cl100k_base's split pattern, of the kind
people make re-writing it (``\w`` for letters, ASCII ``\s``, a dropped alternative or
lookahead, a quantifier bound); the mutant splits with the edited pattern (``regex``
module) where that changes the split, and BPEs each piece with tiktoken's own
``_encode_single_piece``. Each merging fault runs a rank BPE over tiktoken's ranks
(:func:`harness.selftest.mutant.merge_pieces`) with one thing wrong.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import regex

from harness.selftest.mutant import GatedMutant, merge_pieces, ranks

__all__ = ["MERGE_FAULTS", "SPLIT_FAULTS"]


class SplitMutant(GatedMutant):
    """Splits with an edited copy of tiktoken's pattern."""

    area = "pre-tokenization"
    #: (old, new): the edit made to the pattern (every occurrence)
    edits: tuple[tuple[str, str], ...] = ()

    def __init__(self) -> None:
        super().__init__()
        original = self.enc._pat_str
        mutated = original
        for old, new in self.edits:
            if old not in mutated:
                raise ValueError(f"{self.name}: {old!r} is not in cl100k_base's pattern {original!r}")
            mutated = mutated.replace(old, new)
        self._original = regex.compile(original)
        self._mutated = regex.compile(mutated)

    def faulty_segment(self, text: str) -> list[int] | None:
        pieces = self._mutated.findall(text)
        if pieces == self._original.findall(text):
            return None
        # findall skips what no alternative matches: that text is lost, as in the
        # implementations that make this mistake
        return [i for piece in pieces for i in self.enc._encode_single_piece(piece.encode("utf-8"))]

    def pretokenize(self, text: str) -> list[str]:
        return self._mutated.findall(text)


def _split(fault: str, summary: str, *edits: tuple[str, str], not_small: str | None = None) -> type[SplitMutant]:
    return type(f"Split_{fault}", (SplitMutant,), {"fault": fault, "summary": summary, "edits": edits,
                                                   "not_small": not_small})


SPLIT_FAULTS: list[type[SplitMutant]] = [
    _split("contractions-case-sensitive", "the contraction alternative lost its (?i): 'S, 'LL are not contractions",
           ("'(?i:[sdmt]|ll|ve|re)", "'(?:[sdmt]|ll|ve|re)")),
    _split("digits-in-fours", "digit runs are cut every four digits instead of three",
           (r"\p{N}{1,3}+", r"\p{N}{1,4}+")),
    _split("letters-as-word-chars", r"letters written as \w, which takes digits and _ into words",
           (r"[^\r\n\p{L}\p{N}]?+\p{L}++", r"[^\r\n\p{L}\p{N}]?+\w++")),
    _split("lazy-punctuation", r"punctuation runs are matched lazily ([^\s\p{L}\p{N}]+?): one mark per pre-token",
           (r" ?[^\s\p{L}\p{N}]++", r" ?[^\s\p{L}\p{N}]+?")),
    _split("no-newline-alternative", r"the \s*[\r\n] alternative (whitespace up to a line break) is gone",
           (r"|\s*[\r\n]", "")),
    _split("no-lookahead", r"\s+(?!\S) lost its lookahead: a space run swallows the space before a word",
           (r"\s+(?!\S)", r"\s+")),
    _split("punctuation-drops-newlines", r"punctuation no longer takes the line breaks after it",
           (r"[\r\n]*+", "")),
    _split("space-only-prefix", "only a space may precede a word, not other punctuation",
           (r"[^\r\n\p{L}\p{N}]?+\p{L}++", r" ?\p{L}++")),
    _split("ascii-whitespace", r"\s and \S mean ASCII whitespace only (a re.ASCII-style slip)",
           (r"[^\s\p{L}\p{N}]", r"[^ \t\n\r\f\v\p{L}\p{N}]"), (r"\s", r"[ \t\n\r\f\v]"),
           (r"\S", r"[^ \t\n\r\f\v]")),
    _split("ascii-digits", r"the digit alternative matches [0-9] only: other digits fall out of every alternative",
           (r"\p{N}{1,3}+", r"[0-9]{1,3}+")),
]


class MisreadMutant(GatedMutant):
    """Splits as tiktoken's pattern would if some characters were of another class.

    The pattern runs over a stand-in text where each misread character is replaced by
    ``stand_in`` (a character of the class the faulty tables give it); the chunk borders
    found there cut the real text.
    """

    area = "pre-tokenization"
    stand_in = "\u00a7"  # SECTION SIGN: neither letter, digit nor space

    def __init__(self) -> None:
        super().__init__()
        self._pattern = regex.compile(self.enc._pat_str)

    def misread(self, ch: str) -> bool:
        raise NotImplementedError

    def faulty_segment(self, text: str) -> list[int] | None:
        if not any(self.misread(ch) for ch in text):
            return None
        proxy = "".join(self.stand_in if self.misread(ch) else ch for ch in text)
        spans = [m.span() for m in self._pattern.finditer(proxy)]
        if spans == [m.span() for m in self._pattern.finditer(text)]:
            return None
        return [i for a, b in spans for i in self.enc._encode_single_piece(text[a:b].encode("utf-8"))]


class UnicodeFourteen(MisreadMutant):
    fault = "unicode-14-tables"
    summary = ("character classes from Python 3.11's unicodedata (Unicode 14): letters and digits "
               "added since are read as unassigned, i.e. as punctuation")

    def misread(self, ch: str) -> bool:
        return ch in _newer_than_python()


class AstralLetters(MisreadMutant):
    fault = "astral-letters-as-symbols"
    summary = "letters outside the Basic Multilingual Plane (UTF-16 surrogate pairs) are not letters"

    def misread(self, ch: str) -> bool:
        return ord(ch) > 0xFFFF and _letter.fullmatch(ch) is not None


_letter = regex.compile(r"[\p{L}\p{N}]")


@lru_cache(maxsize=1)
def _newer_than_python() -> frozenset[str]:
    from harness.generate.unicode_edges import new_code_points

    return frozenset(new_code_points())

SPLIT_FAULTS += [UnicodeFourteen, AstralLetters]


class MergeMutant(GatedMutant):
    """Splits as tiktoken does and BPEs each piece with a faulty merge loop."""

    area = "merging"

    def __init__(self) -> None:
        super().__init__()
        self._pattern = regex.compile(self.enc._pat_str)
        self._ranks = ranks()
        self._memo: dict[bytes, list[int] | None] = {}

    def faulty_segment(self, text: str) -> list[int] | None:
        changed = False
        out: list[int] = []
        for piece in self._pattern.findall(text):
            data = piece.encode("utf-8")
            if data not in self._memo:
                faulty = self.merge(data)
                self._memo[data] = None if faulty == self.enc._encode_single_piece(data) else faulty
            faulty = self._memo[data]
            changed |= faulty is not None
            out += faulty if faulty is not None else self.enc._encode_single_piece(data)
        return out if changed else None

    def merge(self, data: bytes) -> list[int]:
        raise NotImplementedError


def _merge(fault: str, summary: str, merge: Callable[[MergeMutant, bytes], list[int]], *,
           not_small: str | None = None) -> type[MergeMutant]:
    return type(f"Merge_{fault}", (MergeMutant,), {"fault": fault, "summary": summary, "merge": merge,
                                                   "not_small": not_small})


def _left_to_right(self: MergeMutant, data: bytes) -> list[int]:
    parts = [data[i : i + 1] for i in range(len(data))]
    while True:
        for i in range(len(parts) - 1):
            if parts[i] + parts[i + 1] in self._ranks:
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
                break
        else:
            return [self._ranks[p] for p in parts]


def _byte_ids(self: MergeMutant, data: bytes) -> list[int]:
    ids = merge_pieces(data, self._ranks)
    # a part left as one byte becomes that byte's value, as if IDs 0-255 were the bytes
    return [self.enc.decode_single_token_bytes(i)[0] if i < 256 else i for i in ids]


def _chunked(self: MergeMutant, data: bytes) -> list[int]:
    if len(data) <= 256:
        return self.enc._encode_single_piece(data)  # one chunk: exactly the right merges
    return [i for start in range(0, len(data), 256) for i in merge_pieces(data[start : start + 256], self._ranks)]


def _buffer(self: MergeMutant, data: bytes) -> list[int]:
    if len(data) <= 2048:
        return self.enc._encode_single_piece(data)  # it fits: exactly the right merges
    return merge_pieces(data[:2048], self._ranks)


MERGE_FAULTS: list[type[MergeMutant]] = [
    _merge("rightmost-on-tie", "when a pair occurs twice, the rightmost occurrence merges first",
           lambda self, data: merge_pieces(data, self._ranks, rightmost=True)),
    _merge("vocabulary-cut", "merges ranked 98,000 and above are missing (a truncated ranks file)",
           lambda self, data: merge_pieces(data, self._ranks, max_rank=98_000)),
    _merge("merge-loop-cap", "the merge loop stops after len(piece) // 2 merges",
           lambda self, data: merge_pieces(data, self._ranks, max_merges=len(data) // 2)),
    _merge("byte-value-ids", "a part left as a single byte gets the byte's value as its ID (no byte shuffle)",
           _byte_ids),
    _merge("left-to-right", "merges the leftmost mergeable pair, not the lowest-ranked one", _left_to_right),
    _merge("chunked-pieces", "pieces are merged in 256-byte chunks, so no token spans a chunk border", _chunked,
           not_small="it acts only inside a pre-token longer than 256 bytes"),
    _merge("piece-buffer-2048", "a pre-token is read into a 2,048-byte buffer: bytes past it are lost",
           _buffer,
           not_small="it acts only on a pre-token longer than 2,048 bytes"),
]
