"""Deterministic shrinking of a failing text to a small one that still fails.

Both kinds of divergence go through the same function: one found by a YAML case, and
one found by a generated input (hypothesis already shrinks inside a pytest test, but the
runner records and re-shrinks every input here so the report shows minimal inputs no
matter where they came from, and the same input always shrinks to the same result).

The algorithm is delta debugging over code points (Zeller's *ddmin*), preceded by a pass
for long repeated runs and followed by two cheap passes:

0. **runs**: every run of one short unit repeated (``" " * 1000000``, ``"ab" * 5000``;
   at least :data:`RUN_MIN_CHARS` characters, found by a regular expression) has its
   repeat count *bisected*: the smallest count that still fails is kept (assuming, as
   length thresholds do, that more repetitions fail too; a count is only ever accepted
   when the predicate says it fails). A million-space input needs about twenty tries
   here, where ddmin would need tens of thousands.
0b. **ends**: a text still at least :data:`ENDS_FIRST_CHARS` (1,024) code points long
   has its shortest failing prefix bisected, then its shortest failing suffix (each
   accepted only when the predicate says it fails): a length threshold on any long text
   (a unit too long for pass 0, a document, a generated input of a few thousand code
   points) in a few dozen tries. If it is still that long, dropping single code points
   cannot make it shorter within the budget (more tries than ``max_calls``, each on a long
   text), so ddmin stops at 64 chunks and pass 2 is left out: it is as short as its length
   lets it be. Passes 3 and 4 still run when it is made of a few runs (a million spaces: a
   handful of calls), not on a document. A text those 64 chunks made short goes on
   through every pass.
1. **ddmin**: split the text into ``n`` chunks; try dropping each chunk (keep the
   complement); on success restart with fewer chunks, otherwise double ``n`` until the
   chunks are single code points. Dropping a chunk equal to the chunk just before it
   gives the string already tried, so it is skipped without building it: inside a
   uniform run this turns a quadratic pass into a linear one.
2. **one-by-one**: drop single code points until no single removal still fails, so the
   result is *1-minimal*: removing any one code point makes the failure go away (again
   skipping a code point equal to its left neighbour: same string).
3. **simplify**: replace each code point by a simpler one (``a``, ``0``, space, ``\\n``,
   in that order, only ones "simpler" than the current one) if the failure stays. This
   makes different random inputs with one cause shrink to the same canonical input,
   e.g. any trailing whitespace to a single space. A run is tried as a whole first
   (all its code points replaced), then only at its two ends.
4. **canonical**: replace each code point by the lowest one of its class (general
   category, script, UTF-8 length, whitespace; :mod:`harness.generate.canonical`) if the
   failure stays, runs as a whole first, as in pass 3. Two lone surrogates, or two Han
   characters, that fail for one reason then shrink to the same input, so one cause is
   one divergence (issue 21).

The predicate decides what "still fails" means; the runner passes one that demands the
*same kind* of divergence for the same adapter and check, so shrinking never wanders off
to a different bug. The empty string is a candidate like any other (an adapter may well
fail on it). The predicate is never called twice with one text, nor more than
``max_calls`` times, nor (with ``max_seconds``) after that many seconds: then the
smallest failing text found so far is the result, and :attr:`Shrunk.timed_out` says so.

Worked example: a bug that only shows on CRLF, found inside a longer input::

    >>> shrink("ab\\r\\ncd\\r", lambda s: "\\r\\n" in s)
    '\\r\\n'

a bug about trailing whitespace, where the simplify pass turns a tab into a space::

    >>> shrink("xyz\\t", lambda s: s[-1:].isspace())
    ' '

a length threshold on a long run, found by bisecting the run::

    >>> len(shrink(" " * 100000 + "x", lambda s: s.count(" ") >= 4321 and s.endswith("x")))
    4322

and one on a long text with no short unit, found by bisecting its ends::

    >>> len(shrink("The cat sat. " * 9000, lambda s: len(s) > 50000))
    50001
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from typing import Callable

from harness.cases.model import LONG_TEXT_CHARS, GeneratedText
from harness.generate.canonical import lowest_of_class

__all__ = ["ENDS_FIRST_CHARS", "RUN_MIN_CHARS", "SIMPLE_CHARS", "Shrunk", "as_generated", "runs", "shrink", "shrink_text",
           "simplicity"]

#: Replacement candidates of the simplify pass, simplest first.
SIMPLE_CHARS: tuple[str, ...] = ("a", "0", " ", "\n")
#: A repeated unit counts as a run (pass 0) from this many code points on.
RUN_MIN_CHARS = 16
#: The longest repeated unit pass 0 looks for.
RUN_MAX_PERIOD = 8
# the lazy unit makes the shortest period win ("    " is " " four times, not "  " twice)
_RUN = re.compile(r"(.{1,%d}?)\1{3,}" % RUN_MAX_PERIOD, re.DOTALL)


def simplicity(ch: str) -> tuple[int, int]:
    """Sort key: the candidates first (in order), then by code point.

    >>> simplicity("a") < simplicity(" ") < simplicity("\\t") < simplicity("你")
    True
    """
    if ch in SIMPLE_CHARS:
        return (0, SIMPLE_CHARS.index(ch))
    return (1, ord(ch))


def runs(text: str) -> list[tuple[int, str, int]]:
    """The runs pass 0 works on: (start, unit, count), left to right.

    >>> runs("x" + " " * 20 + "ab" * 10 + "y")
    [(1, ' ', 20), (21, 'ab', 10)]
    """
    found = []
    for match in _RUN.finditer(text):
        unit = match.group(1)
        length = match.end() - match.start()
        if length >= RUN_MIN_CHARS:
            found.append((match.start(), unit, length // len(unit)))
    return found


@dataclass(frozen=True)
class Shrunk:
    """The result of :func:`shrink_text`: the text, the predicate calls made, and
    whether the time bound stopped it (then the text may not be minimal)."""

    text: str
    calls: int
    timed_out: bool


class _Budget:
    """Counts predicate calls and time; memoises answers so no text is tried twice."""

    def __init__(self, predicate: Callable[[str], bool], max_calls: int, max_seconds: float | None) -> None:
        self._predicate = predicate
        self._max = max_calls
        self._deadline = None if max_seconds is None else time.monotonic() + max_seconds
        # long candidates are remembered by digest: a minute of shrinking a 10^5-character
        # finding once kept 800 MB of tried texts
        self._seen: dict[str | bytes, bool] = {}
        self.calls = 0
        self.timed_out = False

    @staticmethod
    def _key(text: str) -> str | bytes:
        if len(text) < 1024:
            return text
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()

    def known_to_fail(self, text: str) -> None:
        self._seen[self._key(text)] = True

    @property
    def exhausted(self) -> bool:
        if self.calls >= self._max:
            return True
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.timed_out = True
        return self.timed_out

    def tried(self, text: str) -> bool:
        return self._key(text) in self._seen

    def fails(self, text: str) -> bool:
        key = self._key(text)
        if key in self._seen:
            return self._seen[key]
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
        self._seen[key] = result
        return result


def shrink(text: str, fails: Callable[[str], bool], *, max_calls: int = 2000, max_seconds: float | None = None) -> str:
    """The smallest variant of ``text`` found for which ``fails`` still holds.

    ``fails(text)`` is assumed true (it is not re-checked). The result is a
    subsequence of ``text`` (after the simplify pass: with some code points replaced by
    simpler ones; after the runs pass: with fewer repetitions of a unit), deterministic
    for a deterministic predicate that the bounds do not cut short.
    """
    return shrink_text(text, fails, max_calls=max_calls, max_seconds=max_seconds).text


def shrink_text(text: str, fails: Callable[[str], bool], *, max_calls: int = 2000,
                max_seconds: float | None = None) -> Shrunk:
    """:func:`shrink`, saying how many calls it made and whether time ran out."""
    budget = _Budget(fails, max_calls, max_seconds)
    budget.known_to_fail(text)
    text = _halve_runs(text, budget)
    if len(text) >= ENDS_FIRST_CHARS:
        text = _trim_ends(text, budget)
    current = list(text)
    if len(current) >= ENDS_FIRST_CHARS:
        current = _ddmin(current, budget, max_chunks=64)
    if len(current) >= ENDS_FIRST_CHARS:
        if _exposed(current) <= _MAX_EXPOSED:  # a few runs: simplifying them is a few calls
            current = _simplify(current, budget)
            current = _canonical(current, budget)
        return Shrunk("".join(current), budget.calls, budget.timed_out)
    # short now (or from the start): every pass, down to one code point at a time
    current = _ddmin(current, budget)
    current = _one_by_one(current, budget)
    current = _simplify(current, budget)
    current = _canonical(current, budget)
    return Shrunk("".join(current), budget.calls, budget.timed_out)


#: From this many code points on, a text (after pass 0) is bisected by its ends first, and
#: one still this long after ddmin's 64 chunks is returned as it is: dropping its code
#: points one at a time takes more calls than ``max_calls`` allows (1,500 by default), each
#: on a text this long, and ends with the budget spent. A length threshold on a
#: 6,000-character generated input cost its 1,500 calls that way for nothing shorter.
ENDS_FIRST_CHARS = 1024

#: passes 3 and 4 on a long text only when they try at most this many single code points
_MAX_EXPOSED = 256


def _exposed(chars: list[str]) -> int:
    """How many code points passes 3 and 4 try one at a time: those not inside a run.

    >>> _exposed(list(" " * 20000)), _exposed(list("ab" * 10 + "xyz"))
    (2, 5)
    """
    interior = 0
    for start, unit, count in runs("".join(chars)):
        interior += max(0, len(unit) * count - 2)
    return len(chars) - interior


def _trim_ends(text: str, budget: _Budget) -> str:
    """The shortest failing prefix of ``text``, then that prefix's shortest failing suffix
    (bisected: assumes that a longer one fails too, accepts only what fails)."""
    low, high = 0, len(text)  # text[:high] is known to fail
    while low < high and not budget.exhausted:
        middle = (low + high) // 2
        if budget.fails(text[:middle]):
            high = middle
        else:
            low = middle + 1
    text = text[:high]
    low, high = 0, len(text)  # text[len(text) - high:] is known to fail
    while low < high and not budget.exhausted:
        middle = (low + high) // 2
        if budget.fails(text[len(text) - middle:]):
            high = middle
        else:
            low = middle + 1
    return text[len(text) - high:]


def _halve_runs(text: str, budget: _Budget) -> str:
    # right to left, so the positions of the runs still to do stay valid
    for start, unit, count in reversed(runs(text)):
        end = start + len(unit) * count
        head, tail = text[:start], text[end:]
        low, high = 0, count  # ``high`` repetitions are known to fail
        while low < high and not budget.exhausted:
            middle = (low + high) // 2
            if budget.fails(head + unit * middle + tail):
                high = middle
            else:
                low = middle + 1
        text = head + unit * high + tail
    return text


def _ddmin(chars: list[str], budget: _Budget, *, max_chunks: int | None = None) -> list[str]:
    n = 2
    while chars and not budget.exhausted and (max_chunks is None or n <= max_chunks):
        size = max(1, len(chars) // n)
        starts = list(range(0, len(chars), size))
        reduced = False
        for start in starts:
            if start >= size and chars[start:start + size] == chars[start - size:start]:
                continue  # dropping it leaves the same text as dropping the chunk before
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
            if i and chars[i] == chars[i - 1]:
                continue  # same text as dropping its left neighbour
            candidate = chars[:i] + chars[i + 1 :]
            if budget.fails("".join(candidate)):
                chars = candidate
                changed = True
                break
    return chars


def _canonical(chars: list[str], budget: _Budget) -> list[str]:
    def lower(ch: str) -> str | None:
        low = lowest_of_class(ch)
        return low if simplicity(low) < simplicity(ch) else None

    for start, unit, count in runs("".join(chars)):
        low = lower(unit) if len(unit) == 1 else None
        if low is not None and not budget.exhausted:
            candidate = chars[:start] + [low] * count + chars[start + count:]
            if budget.fails("".join(candidate)):
                chars = candidate
    interior = set()
    for start, unit, count in runs("".join(chars)):
        interior.update(range(start + 1, start + len(unit) * count - 1))
    for i in range(len(chars)):
        low = None if i in interior else lower(chars[i])
        if low is not None and not budget.exhausted:
            candidate = chars[:i] + [low] + chars[i + 1:]
            if budget.fails("".join(candidate)):
                chars = candidate
    return chars


def _simplify(chars: list[str], budget: _Budget) -> list[str]:
    text = "".join(chars)
    for start, unit, count in runs(text):
        if len(unit) != 1:
            continue
        end = start + count
        for replacement in SIMPLE_CHARS:
            if budget.exhausted or simplicity(replacement) >= simplicity(chars[start]):
                break
            candidate = chars[:start] + [replacement] * count + chars[end:]
            if budget.fails("".join(candidate)):
                chars = candidate
                break
    interior = set()
    for start, unit, count in runs("".join(chars)):
        interior.update(range(start + 1, start + len(unit) * count - 1))
    for i in range(len(chars)):
        if i in interior:
            continue
        for replacement in SIMPLE_CHARS:
            if budget.exhausted or simplicity(replacement) >= simplicity(chars[i]):
                break
            candidate = chars[:i] + [replacement] + chars[i + 1 :]
            if budget.fails("".join(candidate)):
                chars = candidate
                break
    return chars


#: head and tail around a run longer than this are too long to be a generator's ends
_MAX_ENDS = 64


def as_generated(text: str) -> GeneratedText | None:
    """``text`` as ``before + repeat * times + then`` when one run makes up almost all of it.

    >>> as_generated("x" + " " * 20000 + "yz")
    GeneratedText(repeat=' ', times=20000, before='x', then='yz')
    >>> as_generated("short") is None, as_generated("ab" * 6000) .times
    (True, 6000)
    """
    if len(text) < LONG_TEXT_CHARS:
        return None
    found = max(runs(text), key=lambda r: len(r[1]) * r[2], default=None)
    if found is None:
        return None
    start, unit, count = found
    end = start + len(unit) * count
    if start > _MAX_ENDS or len(text) - end > _MAX_ENDS:
        return None
    return GeneratedText(repeat=unit, times=count, before=text[:start], then=text[end:])
