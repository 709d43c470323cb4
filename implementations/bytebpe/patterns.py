"""Pre-split patterns for byte BPE, and chunking that refuses to lose text.

BPE merges only inside a chunk; the chunks must concatenate back to the input, or
characters vanish before BPE ever runs (seed 003, §23.1). :func:`split_chunks` checks
this and names the first character a pattern drops.

The pattern strings are data (the published definitions), written out here and checked
against tiktoken's own in the tests; they need the third-party ``regex`` module
(``\\p{L}``, possessive quantifiers), not ``re``.
"""

from __future__ import annotations

from functools import lru_cache

import regex

__all__ = [
    "CL100K_PATTERN",
    "GPT2_PATTERN",
    "GPT4_PATTERN",
    "O200K_PATTERN",
    "PATTERNS",
    "PatternDropsText",
    "R50K_PATTERN",
    "compile_pattern",
    "pattern_by_name",
    "split_chunks",
]

#: GPT-2's ``encoder.py`` pattern, as released (issue 3, seed 000).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: tiktoken's equivalent, faster form of the GPT-2 pattern (r50k_base, gpt2).
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

#: cl100k_base's pattern; the course calls it the GPT-4 pattern (seed 003).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
GPT4_PATTERN = CL100K_PATTERN

_O200K_CONTRACTIONS = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
#: o200k_base's pattern: cased letter runs, digits in threes, punctuation, whitespace.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        + _O200K_CONTRACTIONS,
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        + _O200K_CONTRACTIONS,
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: Names the trainer and the CLI accept; ``none`` = the whole text is one chunk.
PATTERNS: dict[str, str | None] = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN, "none": None}


class PatternDropsText(ValueError):
    """A pre-split pattern skipped characters, so its chunks do not rebuild the input."""


def pattern_by_name(name: str) -> str | None:
    """``"gpt2"`` / ``"gpt4"`` / ``"none"`` -> the pattern string (``None`` for none)."""
    try:
        return PATTERNS[name]
    except KeyError:
        raise ValueError(
            f"unknown pre-split pattern {name!r}; choose one of {', '.join(PATTERNS)}"
        ) from None


@lru_cache(maxsize=16)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"pre-split pattern {pattern!r} does not compile: {exc}") from exc


def split_chunks(text: str, pattern: str | None) -> list[str]:
    """Split ``text`` into chunks with ``pattern``; the chunks always rebuild ``text``.

    >>> split_chunks("hello1234!\\n中文", GPT4_PATTERN)
    ['hello', '123', '4', '!\\n', '中文']
    >>> split_chunks("a b", None)
    ['a b']
    >>> split_chunks("ab\\tc", r"\\w+")
    Traceback (most recent call last):
    ...
    implementations.bytebpe.patterns.PatternDropsText: pre-split pattern '\\\\w+' drops text: position 2, character '\\t' (U+0009), is in no chunk; use a pattern whose alternatives cover every character (end it with |\\s+|. for example), or no pattern
    """
    if pattern is None:
        return [text] if text else []
    compiled = compile_pattern(pattern)
    if not compiled.groups:  # with groups, findall would return the groups, not the matches
        # findall's matches never overlap and come in order, so when their lengths add
        # up to the text's, they cover it: the common case costs one C-level findall
        chunks = list(filter(None, compiled.findall(text)))  # an empty match covers nothing
        if sum(map(len, chunks)) == len(text):
            return chunks
    chunks = []
    expected = 0
    for found in compiled.finditer(text):
        if found.start() != expected:
            _dropped(text, pattern, expected)
        if found.end() == found.start():
            continue  # an empty match covers nothing and drops nothing
        chunks.append(found.group())
        expected = found.end()
    if expected != len(text):
        _dropped(text, pattern, expected)
    return chunks


def _dropped(text: str, pattern: str, position: int) -> None:
    ch = text[position]
    raise PatternDropsText(
        f"pre-split pattern {pattern!r} drops text: position {position}, character "
        f"{ch!r} (U+{ord(ch):04X}), is in no chunk; use a pattern whose alternatives cover "
        f"every character (end it with |\\s+|. for example), or no pattern"
    )
