r"""Which characters stand for a character class: its plain member, its Unicode edges.

A split pattern's classes (``\p{L}``, ``[^\s\p{L}\p{N}]``, ``\s``) are where engines
disagree: a letter assigned in Unicode 16 is ``\p{L}`` for an engine with Unicode 16
tables and unassigned (so punctuation-like) for one with older tables; ``\s`` differs
between engines on U+0085 and U+001C; a case-insensitive ``(?i:'s)`` may or may not
match U+017F ``ſ``. The members chosen here are exactly those:

- the *typical* member (the first of a short list of everyday characters in the class);
- the first and last code point of the class, and its first member of two, three and
  four UTF-8 bytes;
- *version edges*: members assigned in the ``regex`` module's Unicode tables but
  unassigned in this Python's ``unicodedata`` (a newer Unicode than some engines have);
- for a letter, the characters a case-insensitive match treats as the same letter
  (``s``: ``S``, ``ſ``; ``k``: ``K``, U+212A KELVIN SIGN).

Membership is always asked of the ``regex`` module with the class's own source text.

    >>> profile = class_profile(r"\p{N}")
    >>> profile.typical, profile.first
    ('0', '0')
    >>> [f"U+{ord(c):04X}" for c in sorted(case_partners("k"))]
    ['U+004B', 'U+212A']
"""

from __future__ import annotations

import array
import itertools
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

import regex

__all__ = ["ClassProfile", "all_code_points", "case_partners", "class_profile", "new_code_points"]

#: Everyday characters, in the order a "typical member" is picked from a class.
TYPICAL = (
    "a", "e", "s", "A", "Z", "0", "7", " ", ".", "!", ",", "'", "-", "/", "?", "\n", "\r",
    "\t", "é", "ß", "中", "\u0627", "\U0001F600", "\u00a0", "\u3000", "\u0663", "\u00b2",
    "\u0301", "\x00",
)

#: A class with at most this many members has every member tried (``[sdmt]`` under ``(?i)``).
SMALL = 32


@lru_cache(maxsize=1)
def all_code_points() -> str:
    """Every code point but the surrogates, in order (index = code point below U+D800).

    Made from UTF-32 bytes, not by joining 1.1 million one-character strings: the join's
    list of string objects was a 100 MB transient, which set a default run's peak when
    it came late in the run (issue 25).

    >>> text = all_code_points()
    >>> len(text), text[0x41], f"{ord(text[0xD800]):X}", f"{ord(text[-1]):X}"
    (1112064, 'A', 'E000', '10FFFF')
    """
    return _decoded(range(0xD800), range(0xE000, 0x110000))


def _decoded(*ranges: Iterable[int]) -> str:
    """The code points of ``ranges`` as one string, by way of a UTF-32 buffer (4 bytes each).

    >>> _decoded(range(0x61, 0x64), [0x4E2D])
    'abc中'
    """
    codes = array.array("I" if array.array("I").itemsize == 4 else "L")
    for part in ranges:
        codes.extend(part)
    return codes.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


def _index(code_point: int) -> int:
    """Position of ``code_point`` in :func:`all_code_points`."""
    return code_point if code_point < 0xD800 else code_point - 0x800


@lru_cache(maxsize=1)
def new_code_points() -> str:
    """Characters the ``regex`` module's tables assign that ``unicodedata`` does not.

    This Python's ``unicodedata`` is an older Unicode than the ``regex`` module's, so
    these are the characters of the newer versions: where engines built on different
    Unicode versions can disagree (tiktoken's Rust tables, Oniguruma's, ``regex``'s).
    """
    unassigned = _decoded(ord(ch) for ch in all_code_points() if unicodedata.category(ch) == "Cn")
    return "".join(regex.findall(r"\P{Cn}", unassigned))


@dataclass(frozen=True)
class ClassProfile:
    source: str
    typical: str | None
    first: str | None
    last: str | None
    #: first member of 2, 3 and 4 UTF-8 bytes (``None`` where the class has none)
    wide: tuple[str | None, str | None, str | None]
    #: members new since this Python's Unicode (see :func:`new_code_points`)
    version_edges: tuple[str, ...]
    #: every member, for a class of at most :data:`SMALL` characters (``[sdmt]``)
    small: tuple[str, ...] = ()

    def options(self) -> list[str]:
        """Distinct members, the typical one first."""
        found = [self.typical, *self.small, self.first, self.last, *self.wide, *self.version_edges]
        return list(dict.fromkeys(ch for ch in found if ch is not None))


@lru_cache(maxsize=256)
def _compiled(source: str, icase: bool) -> regex.Pattern[str]:
    return regex.compile(("(?i)" if icase else "") + source)


def member(source: str, ch: str, *, icase: bool = False) -> bool:
    """Whether the one-character class ``source`` holds ``ch``."""
    return _compiled(source, icase).fullmatch(ch) is not None


@lru_cache(maxsize=256)
def class_profile(source: str, icase: bool = False) -> ClassProfile:
    compiled = _compiled(source, icase)
    everything = all_code_points()
    typical = next((ch for ch in TYPICAL if compiled.fullmatch(ch)), None)
    first = compiled.search(everything)
    last = _compiled("(?r)" + source, icase).search(everything)
    wide = tuple(
        (m.group() if (m := compiled.search(everything, _index(start))) else None)
        for start in (0x80, 0x800, 0x10000)
    )
    new = new_code_points()
    edges: list[str] = []
    found = compiled.search(new)
    if found:
        edges.append(found.group())
        last_new = _compiled("(?r)" + source, icase).search(new)
        if last_new and last_new.group() != found.group():
            edges.append(last_new.group())
    if typical is None and first is not None:
        typical = first.group()
    small = list(itertools.islice(compiled.finditer(everything), SMALL + 1))
    return ClassProfile(
        source=source,
        typical=typical,
        first=first.group() if first else None,
        last=last.group() if last else None,
        wide=wide,  # type: ignore[arg-type]
        version_edges=tuple(edges),
        small=tuple(m.group() for m in small) if len(small) <= SMALL else (),
    )


@lru_cache(maxsize=256)
def case_partners(ch: str) -> frozenset[str]:
    """Other characters a case-insensitive match of ``ch`` accepts (``regex`` module).

    Only the Basic Multilingual Plane is searched: every partner of a letter a split
    pattern spells out (ASCII contractions) lives there.
    """
    if not ch.isalpha():
        return frozenset()
    bmp = all_code_points()[: _index(0x10000)]
    found = set(regex.findall("(?i)" + regex.escape(ch), bmp))
    found |= {c for c in (ch.upper(), ch.lower(), ch.title()) if len(c) == 1}
    found.discard(ch)
    return frozenset(found)
