"""The input domain of a documented divergence: which other inputs share its cause.

A documented divergence explains its own case input. When the quirk is a *class* of
inputs (every text with a lone surrogate, every character the adapter's Unicode tables do
not know), the case declares that class as a ``domain``; a finding elsewhere in the run is
then documented only if its *shrunk* input lies inside it. Every condition given must
hold (they are ANDed):

- ``regex``: the input contains a match of this pattern (the ``regex`` module, so
  ``\\p{L}`` and friends work; searched, not anchored: anchor it yourself);
- ``chars``: the input contains at least one of these characters;
- ``ranges``: the input contains a code point in one of these ranges
  (``"U+323B0..U+3347F"``, or one code point ``"U+1F600"``).

Keep a domain as narrow as the cause: the run reports how many findings each documented
divergence absorbed, with examples, so an over-broad one shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

__all__ = ["Domain", "DomainError", "parse_range"]

_RANGE = re.compile(r"U\+([0-9A-F]{4,6})(?:\.\.U\+([0-9A-F]{4,6}))?")


class DomainError(ValueError):
    """A domain field that cannot be used; the message says which and how to fix it."""


def parse_range(text: str) -> tuple[int, int]:
    """``"U+0041..U+005A"`` -> ``(0x41, 0x5A)``; a single code point is a range of one.

    >>> parse_range("U+0041..U+005A"), parse_range("U+1F600")
    ((65, 90), (128512, 128512))
    """
    match = _RANGE.fullmatch(text)
    if match is None:
        raise DomainError(f"a code point range like 'U+0041..U+005A' or 'U+1F600', not {text!r}")
    low = int(match.group(1), 16)
    high = int(match.group(2), 16) if match.group(2) else low
    if low > high or high > 0x10FFFF:
        raise DomainError(f"a range from low to high within U+0000..U+10FFFF, not {text!r}")
    return low, high


def _parses_in_re(pattern: str) -> bool:
    r"""Whether the standard library's ``re`` accepts ``pattern``: then it is checked
    without compiling it with ``regex``.

    ``regex`` unrolls counted repeats: the long inputs' domain ``([ \t\u3000])\1{999998}``
    took 125 MB and seconds to compile, in every run that loaded the shipped cases. ``re``
    parses it in about 10 ms. A pattern ``re`` rejects (``\p{L}``: ``regex``'s own
    syntax) is compiled with ``regex`` at once, which says what is wrong. Matching is
    always ``regex``'s (:attr:`Domain._compiled`).

    >>> _parses_in_re(r"([ \t])\1{999998}"), _parses_in_re(r"\p{L}"), _parses_in_re("(unclosed")
    (True, False, False)
    """
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # re's FutureWarning on [[:alpha:]], regex's syntax
            re.compile(pattern)
    except re.error:
        return False
    return True


def _shortest_match(pattern: str) -> int:
    r"""The fewest characters a match of ``pattern`` has, by ``re``'s parser (0: it cannot
    say). A text shorter than that holds no match, and :meth:`Domain.contains` need not
    compile the pattern to know: a default run judges findings against the long inputs'
    domains, and compiling the two of them in its last phase set its peak (+133 MB).

    >>> _shortest_match(r"([ \t])\1{999998}"), _shortest_match(r"a|bc\d"), _shortest_match(r"x*")
    (999999, 1, 0)
    """
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # pragma: no cover - older Pythons
        import sre_parse as parser  # type: ignore[no-redef]
    try:
        return int(parser.parse(pattern).getwidth()[0])
    except Exception:  # noqa: BLE001 - a private parser: when it cannot say, match
        return 0


@dataclass(frozen=True)
class Domain:
    """A class of inputs; :meth:`contains` says whether a text is in it.

    >>> Domain(chars="\\ud800").contains("a\\ud800b"), Domain(chars="\\ud800").contains("ab")
    (True, False)
    >>> d = Domain(regex=r"\\p{Nd}{4}", ranges=((0x30, 0x39),))
    >>> d.contains("x 1234"), d.contains("x 123")
    (True, False)
    """

    regex: str | None = None
    chars: str | None = None
    ranges: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.regex is None and not self.chars and not self.ranges:
            raise DomainError("a domain needs at least one of regex, chars, ranges")
        if self.regex is not None and not self._re_accepts:
            self._compiled  # noqa: B018 -- compile now, so a bad pattern fails at load time

    @cached_property
    def _re_accepts(self) -> bool:
        return self.regex is not None and _parses_in_re(self.regex)

    @cached_property
    def _shortest(self) -> int:
        # only where re accepts the pattern: then its syntax, and so its matches' lengths,
        # are re's (regex's version-0 behaviour is re's by design)
        return _shortest_match(self.regex) if self._re_accepts else 0

    @cached_property
    def _compiled(self) -> Any:
        import regex  # the pattern dialect of the tokenizers under test

        try:
            return regex.compile(self.regex)
        except regex.error as exc:
            raise DomainError(f"a valid `regex` pattern: {exc}") from exc

    def contains(self, text: str) -> bool:
        if self.chars and not any(ch in text for ch in self.chars):
            return False
        if self.ranges and not any(low <= ord(ch) <= high for ch in text for low, high in self.ranges):
            return False
        if self.regex is not None and (len(text) < self._shortest or self._compiled.search(text) is None):
            return False
        return True

    def describe(self) -> str:
        """One line for reports: ``regex /…/, chars '…', ranges U+…``."""
        parts = []
        if self.regex is not None:
            parts.append(f"regex /{self.regex}/")
        if self.chars:
            parts.append("chars " + ascii(self.chars))
        if self.ranges:
            parts.append("ranges " + ", ".join(f"U+{a:04X}..U+{b:04X}" if a != b else f"U+{a:04X}"
                                               for a, b in self.ranges))
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"regex": self.regex, "chars": self.chars,
                "ranges": [[a, b] for a, b in self.ranges], "describe": self.describe()}
