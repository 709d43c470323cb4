"""Deterministic shrinking of a failing text to a small one that still fails.

Both kinds of divergence go through the same function: one found by a YAML case, and
one found by a generated input (hypothesis already shrinks inside a pytest test, but the
runner records and re-shrinks every input here so the report shows minimal inputs no
matter where they came from, and the same input always shrinks to the same result).

The algorithm is delta debugging over code points (Zeller's *ddmin*) followed by two
cheap passes:

1. **ddmin**: split the text into ``n`` chunks; try dropping each chunk (keep the
   complement); on success restart with fewer chunks, otherwise double ``n`` until the
   chunks are single code points.
2. **one-by-one**: drop single code points until no single removal still fails, so the
   result is *1-minimal*: removing any one code point makes the failure go away.
3. **simplify**: replace each code point by a simpler one (``a``, ``0``, space, ``\\n``,
   in that order, only ones "simpler" than the current one) if the failure stays. This
   makes different random inputs with one cause shrink to the same canonical input,
   e.g. any trailing whitespace to a single space.

The predicate decides what "still fails" means; the runner passes one that demands the
*same kind* of divergence for the same adapter and check, so shrinking never wanders off
to a different bug. The empty string is a candidate like any other (an adapter may well
fail on it). The predicate is never called twice with one text, nor more than
``max_calls`` times.

Worked example: a bug that only shows on CRLF, found inside a longer input::

    >>> shrink("ab\\r\\ncd\\r", lambda s: "\\r\\n" in s)
    '\\r\\n'

and a bug about trailing whitespace, where the simplify pass turns a tab into a space::

    >>> shrink("xyz\\t", lambda s: s[-1:].isspace())
    ' '
"""

from __future__ import annotations

from typing import Callable

__all__ = ["SIMPLE_CHARS", "shrink", "simplicity"]

#: Replacement candidates of the simplify pass, simplest first.
SIMPLE_CHARS: tuple[str, ...] = ("a", "0", " ", "\n")


def simplicity(ch: str) -> tuple[int, int]:
    """Sort key: the candidates first (in order), then by code point.

    >>> simplicity("a") < simplicity(" ") < simplicity("\\t") < simplicity("你")
    True
    """
    if ch in SIMPLE_CHARS:
        return (0, SIMPLE_CHARS.index(ch))
    return (1, ord(ch))


class _Budget:
    """Counts predicate calls; memoises answers so no text is tried twice."""

    def __init__(self, predicate: Callable[[str], bool], max_calls: int) -> None:
        self._predicate = predicate
        self._max = max_calls
        self._seen: dict[str, bool] = {}
        self.calls = 0

    @property
    def exhausted(self) -> bool:
        return self.calls >= self._max

    def fails(self, text: str) -> bool:
        if text in self._seen:
            return self._seen[text]
        if self.exhausted:
            return False
        self.calls += 1
        try:
            result = bool(self._predicate(text))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception:
            # a predicate that blows up on a candidate tells us nothing about it: keep the
            # last known failing text rather than chase a different problem
            result = False
        self._seen[text] = result
        return result


def shrink(text: str, fails: Callable[[str], bool], *, max_calls: int = 2000) -> str:
    """The smallest variant of ``text`` found for which ``fails`` still holds.

    ``fails(text)`` is assumed true (it is not re-checked). The result is a
    subsequence of ``text`` (after the simplify pass: with some code points replaced by
    simpler ones), deterministic for a deterministic predicate.
    """
    budget = _Budget(fails, max_calls)
    budget._seen[text] = True
    current = list(text)
    current = _ddmin(current, budget)
    current = _one_by_one(current, budget)
    current = _simplify(current, budget)
    return "".join(current)


def _ddmin(chars: list[str], budget: _Budget) -> list[str]:
    n = 2
    while chars and not budget.exhausted:
        size = max(1, len(chars) // n)
        starts = list(range(0, len(chars), size))
        reduced = False
        for start in starts:
            complement = chars[:start] + chars[start + size :]
            if budget.fails("".join(complement)):
                chars = complement
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if size == 1:
                break
            n = min(len(chars), n * 2)
    return chars


def _one_by_one(chars: list[str], budget: _Budget) -> list[str]:
    changed = True
    while changed and not budget.exhausted:
        changed = False
        for i in range(len(chars)):
            candidate = chars[:i] + chars[i + 1 :]
            if budget.fails("".join(candidate)):
                chars = candidate
                changed = True
                break
    return chars


def _simplify(chars: list[str], budget: _Budget) -> list[str]:
    for i in range(len(chars)):
        for replacement in SIMPLE_CHARS:
            if budget.exhausted or simplicity(replacement) >= simplicity(chars[i]):
                break
            candidate = chars[:i] + [replacement] + chars[i + 1 :]
            if budget.fails("".join(candidate)):
                chars = candidate
                break
    return chars
