"""The simplest character of a character's class: what canonical shrinking lowers to.

Shrinking removes what a finding does not need, but it cannot tell that ``'\\ud808'`` and
``'\\ud837'`` are the same cause: both are one lone surrogate, and a package that raises on
every lone surrogate used to show one divergence per surrogate the generator happened to
draw (issue 21: 8 per encoding). The shrinker's last pass (:mod:`harness.generate.shrink`)
therefore tries, for each character, the *lowest code point of its class* and keeps it when
the finding stays; findings of one cause then meet on one canonical input and are grouped.

A character's class is (general category, script, UTF-8 length, whitespace or not): a
replacement of the same class is, for a byte-level BPE pre-tokenizer, the same kind of
letter, digit, mark or space (split patterns treat ``\\s`` apart, and a tab is a control
character as NUL is), with the same number of bytes to merge. Lone surrogates (category ``Cs``) are one
class whatever their value. Scripts come from the ``regex`` module's Unicode tables (the
same tables the split patterns are matched with); if those cannot be read, the class is
(category, UTF-8 length), and the shrinker still only keeps a replacement the check
confirms.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

__all__ = ["char_class", "lowest_of_class"]

#: the code points of each UTF-8 length, lowest first (surrogates encode in 3 bytes with
#: ``surrogatepass``, as the harness writes them)
_RANGES = {1: (0x00, 0x7F), 2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}


def _utf8_length(ch: str) -> int:
    code = ord(ch)
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


@lru_cache(maxsize=1)
def _script_names() -> tuple[str, ...]:
    """The script property values the ``regex`` module knows (long names), or none."""
    try:
        from regex import _regex_core

        values = _regex_core.PROPERTIES["SCRIPT"][1]
    except (ImportError, AttributeError, KeyError, TypeError):  # another regex release: no scripts
        return ()
    names: dict[int, str] = {}
    for name, number in values.items():
        # the first spelling of each value is its long name (COMMON before ZYYY)
        names.setdefault(number, name)
    return tuple(names[n] for n in sorted(names))


@lru_cache(maxsize=1)
def _script_pattern() -> regex.Pattern[str] | None:
    """One compiled alternation, a group per script: a character has exactly one script,
    so the group that matched names it (one match instead of one per script, each going
    through ``regex``'s pattern cache: that was 30 s of a run's shrinking)."""
    names = _script_names()
    if not names:
        return None
    return regex.compile("|".join(r"(\p{Script=%s})" % name for name in names))


@lru_cache(maxsize=None)
def _script(ch: str) -> str | None:
    pattern = _script_pattern()
    found = pattern.match(ch) if pattern is not None else None
    return _script_names()[found.lastindex - 1] if found is not None else None


def char_class(ch: str) -> tuple[str, str | None, int, bool]:
    """(general category, script, UTF-8 length, whitespace).

    >>> char_class("a"), char_class("\\u4e2d"), char_class("\\ud808")
    (('Ll', 'LATIN', 1, False), ('Lo', 'HAN', 3, False), ('Cs', 'UNKNOWN', 3, False))
    """
    return unicodedata.category(ch), _script(ch), _utf8_length(ch), ch.isspace()


@lru_cache(maxsize=1024)
def _lowest(category: str, script: str | None, length: int, space: bool) -> str | None:
    low, high = _RANGES[length]
    for code in range(low, high + 1):
        ch = chr(code)
        if unicodedata.category(ch) == category and ch.isspace() == space and (
                script is None or _script(ch) == script):
            return ch
    return None


@lru_cache(maxsize=4096)
def lowest_of_class(ch: str) -> str:
    """The lowest code point of ``ch``'s class (``ch`` itself if none is lower).

    >>> lowest_of_class("\\ud837"), lowest_of_class("Z"), lowest_of_class("7"), lowest_of_class("a")
    ('\\ud800', 'A', '0', 'a')
    >>> lowest_of_class("\\x0c"), lowest_of_class("\\x1b")
    ('\\t', '\\x00')
    >>> lowest_of_class("\\u9fa5") == "\\u3400"  # CJK Extension A comes before the main block
    True
    """
    category, script, length, space = char_class(ch)
    if category == "Cs":
        return "\ud800"  # every lone surrogate is one class: the scan would find this too
    found = _lowest(category, script, length, space)
    return found if found is not None and found < ch else ch

