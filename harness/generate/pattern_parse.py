r"""Read a pre-tokenizer regex into its parts: alternatives, quantifiers, classes, literals.

Pattern-aware generation (:mod:`harness.generate.pattern_inputs`) needs to know what a
tokenizer's split pattern is made of, and coverage needs to know which top-level
alternative took each chunk. Python's own ``re._parser`` cannot read these patterns:
tiktoken's are written for Rust's fancy-regex (``\p{L}``, possessive ``++``/``?+``/
``{1,3}+``), the ``regex`` module reads the same syntax, and the patterns a converted
``tokenizer.json`` holds are Oniguruma's (atomic groups ``(?>...)``, ``\z``). This is a
small recursive-descent reader of the subset these patterns use; anything outside it
(backreferences, verbose mode, conditionals) raises :class:`PatternSyntaxError` naming
the position, and callers leave that pattern out rather than guess.

A character class is kept as its own source text (``[^\s\p{L}\p{N}]``, ``\p{L}``, ``.``):
which characters it holds is asked of the ``regex`` module when needed, so the Unicode
tables are the module's, not a copy.

    >>> [b.source for b in branches(r"'(?i:[sdmt]|ll)|\p{N}{1,3}+|\s+(?!\S)")]
    ["'(?i:[sdmt]|ll)", '\\p{N}{1,3}+', '\\s+(?!\\S)']
    >>> parse(r"\p{N}{1,3}+")
    Repeat(body=CharSet(source='\\p{N}', icase=False), low=1, high=3, mode='possessive')
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Union

__all__ = [
    "Alternation",
    "Anchor",
    "Branch",
    "CharSet",
    "Group",
    "Literal",
    "Look",
    "Node",
    "ParsedPattern",
    "PatternSyntaxError",
    "Repeat",
    "Sequence",
    "branches",
    "labelled_source",
    "parse",
    "read_pattern",
]


class PatternSyntaxError(ValueError):
    """The pattern uses syntax this reader does not know (or is malformed)."""


@dataclass(frozen=True)
class Literal:
    """One character matched as itself (case-insensitively under ``(?i)``)."""

    char: str
    icase: bool = False


@dataclass(frozen=True)
class CharSet:
    """One character out of a set, kept as regex source: ``[...]``, ``\\p{..}``, ``\\s``, ``.``."""

    source: str
    icase: bool = False


@dataclass(frozen=True)
class Sequence:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Alternation:
    branches: tuple["Node", ...]


@dataclass(frozen=True)
class Group:
    body: "Node"
    atomic: bool = False


@dataclass(frozen=True)
class Repeat:
    """``body`` from ``low`` to ``high`` times (``None``: no upper bound)."""

    body: "Node"
    low: int
    high: int | None
    mode: str = "greedy"  # greedy | lazy | possessive


@dataclass(frozen=True)
class Look:
    """A lookaround: it constrains the context and consumes nothing."""

    body: "Node"
    behind: bool = False
    negative: bool = False


@dataclass(frozen=True)
class Anchor:
    kind: str  # ^ $ \A \z \Z \b \B \G


Node = Union[Literal, CharSet, Sequence, Alternation, Group, Repeat, Look, Anchor]


@dataclass(frozen=True)
class Branch:
    """A top-level alternative: its index, its exact source text and its tree."""

    index: int
    source: str
    node: Node


@dataclass(frozen=True)
class ParsedPattern:
    pattern: str
    #: inline flags written at the very start, e.g. ``(?i)``; they apply to every branch
    global_flags: str
    branches: tuple[Branch, ...]


_ESCAPE_CLASSES = frozenset("sSdDwWhHvV")
_ESCAPE_ANCHORS = {"b": r"\b", "B": r"\B", "A": r"\A", "z": r"\z", "Z": r"\Z", "G": r"\G"}
_ESCAPE_CONTROLS = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b", "0": "\0"}
_KNOWN_FLAGS = frozenset("imsuaL")


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    # -- helpers --------------------------------------------------------------------------

    def fail(self, what: str) -> PatternSyntaxError:
        return PatternSyntaxError(
            f"cannot read the split pattern {self.p!r} at position {self.i}: {what}; "
            f"tokconf reads the regex subset tokenizer patterns use (alternatives, groups, "
            f"classes, \\p{{..}}, greedy/lazy/possessive quantifiers, lookarounds)"
        )

    def peek(self, n: int = 1) -> str:
        return self.p[self.i : self.i + n]

    def at_end(self) -> bool:
        return self.i >= len(self.p)

    # -- grammar --------------------------------------------------------------------------

    def alternation(self, icase: bool) -> tuple[Node, list[tuple[int, int, Node]]]:
        spans: list[tuple[int, int, Node]] = []
        start = self.i
        first = self.sequence(icase)
        spans.append((start, self.i, first))
        while self.peek() == "|":
            self.i += 1
            start = self.i
            node = self.sequence(icase)
            spans.append((start, self.i, node))
        nodes = tuple(node for _, _, node in spans)
        return (nodes[0] if len(nodes) == 1 else Alternation(nodes)), spans

    def sequence(self, icase: bool) -> Node:
        items: list[Node] = []
        while not self.at_end() and self.peek() not in "|)":
            if self.peek(2) == "(?" and self._inline_flags_ahead():
                icase = self._read_inline_flags(icase)
                continue
            items.append(self.quantified(self.atom(icase)))
        return items[0] if len(items) == 1 else Sequence(tuple(items))

    def atom(self, icase: bool) -> Node:
        ch = self.p[self.i]
        if ch == "(":
            return self.group(icase)
        if ch == "[":
            end = self._class_end(self.i)
            source = self.p[self.i : end]
            self.i = end
            return CharSet(source, icase)
        if ch == "\\":
            return self.escape(icase)
        if ch == ".":
            self.i += 1
            return CharSet(".", icase)
        if ch in "^$":
            self.i += 1
            return Anchor(ch)
        if ch in "*+?{" and not (ch == "{" and not self._interval_at(self.i)):
            raise self.fail(f"quantifier {ch!r} with nothing to repeat")
        self.i += 1
        return Literal(ch, icase)

    def escape(self, icase: bool) -> Node:
        if self.i + 1 >= len(self.p):
            raise self.fail("a trailing backslash")
        c = self.p[self.i + 1]
        start = self.i
        self.i += 2
        if c in "pP":
            if self.peek() == "{":
                close = self.p.find("}", self.i)
                if close < 0:
                    raise self.fail("an unclosed \\p{")
                self.i = close + 1
            else:
                self.i += 1
            return CharSet(self.p[start : self.i], icase)
        if c in _ESCAPE_CLASSES:
            return CharSet(self.p[start : self.i], icase)
        if c in _ESCAPE_ANCHORS:
            return Anchor(_ESCAPE_ANCHORS[c])
        if c in _ESCAPE_CONTROLS:
            return Literal(_ESCAPE_CONTROLS[c], icase)
        if c in "xuU":
            return Literal(self._code_point(c), icase)
        if c.isdigit() or c in "kgKXQE":
            raise self.fail(f"the escape \\{c} (backreferences and the like are not supported)")
        return Literal(c, icase)

    def _code_point(self, kind: str) -> str:
        if kind == "x" and self.peek() == "{":
            close = self.p.find("}", self.i)
            digits, self.i = self.p[self.i + 1 : close], close + 1
        else:
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits, self.i = self.p[self.i : self.i + width], self.i + width
        try:
            return chr(int(digits, 16))
        except ValueError as exc:
            raise self.fail(f"a malformed \\{kind} escape {digits!r}") from exc

    def group(self, icase: bool) -> Node:
        self.i += 1  # (
        atomic = False
        look: Look | None = None
        if self.peek() == "?":
            head = self.peek(4)
            if head.startswith("?:"):
                self.i += 2
            elif head.startswith("?>"):
                self.i += 2
                atomic = True
            elif head.startswith(("?=", "?!")):
                look = Look(Sequence(()), behind=False, negative=head[1] == "!")
                self.i += 2
            elif head.startswith(("?<=", "?<!")):
                look = Look(Sequence(()), behind=True, negative=head[2] == "!")
                self.i += 3
            elif head.startswith(("?P<", "?<")) or head.startswith("?'"):
                close = self.p.find(">" if "<" in head[:3] else "'", self.i + 2)
                if close < 0:
                    raise self.fail("an unclosed group name")
                self.i = close + 1
            elif head.startswith("?#"):
                close = self.p.find(")", self.i)
                self.i = close + 1
                return Sequence(())
            else:
                icase = self._read_scoped_flags(icase)
        body, _ = self.alternation(icase)
        if self.peek() != ")":
            raise self.fail("an unclosed group")
        self.i += 1
        if look is not None:
            return Look(body, behind=look.behind, negative=look.negative)
        return Group(body, atomic=atomic)

    def _inline_flags_ahead(self) -> bool:
        j = self.i + 2
        while j < len(self.p) and (self.p[j] in _KNOWN_FLAGS or self.p[j] in "-x"):
            j += 1
        return j < len(self.p) and self.p[j] == ")" and j > self.i + 2

    def _read_inline_flags(self, icase: bool) -> bool:
        close = self.p.index(")", self.i)
        flags = self.p[self.i + 2 : close]
        self.i = close + 1
        return self._apply_flags(flags, icase)

    def _read_scoped_flags(self, icase: bool) -> bool:
        self.i += 1  # ?
        start = self.i
        while not self.at_end() and self.peek() not in ":)":
            self.i += 1
        if self.peek() != ":":
            raise self.fail("an unknown group syntax")
        flags = self.p[start : self.i]
        self.i += 1
        return self._apply_flags(flags, icase)

    def _apply_flags(self, flags: str, icase: bool) -> bool:
        on, _, off = flags.partition("-")
        for flag in on + off:
            if flag == "x":
                raise self.fail("verbose mode (?x)")
            if flag not in _KNOWN_FLAGS:
                raise self.fail(f"the inline flag {flag!r}")
        if "i" in on:
            icase = True
        if "i" in off:
            icase = False
        return icase

    def quantified(self, atom: Node) -> Node:
        while not self.at_end():
            ch = self.peek()
            if ch == "*":
                low, high, self.i = 0, None, self.i + 1
            elif ch == "+":
                low, high, self.i = 1, None, self.i + 1
            elif ch == "?":
                low, high, self.i = 0, 1, self.i + 1
            elif ch == "{" and self._interval_at(self.i):
                close = self.p.index("}", self.i)
                body = self.p[self.i + 1 : close]
                self.i = close + 1
                if "," in body:
                    a, b = body.split(",", 1)
                    low, high = int(a or 0), (int(b) if b else None)
                else:
                    low = high = int(body)
            else:
                return atom
            mode = "greedy"
            if self.peek() == "?":
                mode, self.i = "lazy", self.i + 1
            elif self.peek() == "+":
                # possessive in fancy-regex and `regex` (Oniguruma reads X{n,m}+ otherwise)
                mode, self.i = "possessive", self.i + 1
            atom = Repeat(atom, low, high, mode)
        return atom

    def _interval_at(self, i: int) -> bool:
        close = self.p.find("}", i)
        if close < 0:
            return False
        body = self.p[i + 1 : close]
        a, _, b = body.partition(",")
        return bool(body) and (a.isdigit() or (a == "" and "," in body)) and (b == "" or b.isdigit())

    def _class_end(self, i: int) -> int:
        """Index just past the class starting at ``i`` (nested ``[...]`` sets included)."""
        j = i + 1
        if self.p[j : j + 1] == "^":
            j += 1
        if self.p[j : j + 1] == "]":
            j += 1  # a leading ']' is literal
        depth = 1
        while j < len(self.p):
            ch = self.p[j]
            if ch == "\\":
                if self.p[j + 1 : j + 2] in ("p", "P") and self.p[j + 2 : j + 3] == "{":
                    j = self.p.index("}", j) + 1
                else:
                    j += 2
                continue
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        self.i = i
        raise self.fail("an unclosed character class")


@lru_cache(maxsize=64)
def read_pattern(pattern: str) -> ParsedPattern:
    """The pattern's global flags and top-level branches with their source text."""
    reader = _Reader(pattern)
    icase = False
    global_flags = ""
    while reader.peek(2) == "(?" and reader._inline_flags_ahead():
        start = reader.i
        icase = reader._read_inline_flags(icase)
        global_flags += pattern[start : reader.i]
    _, spans = reader.alternation(icase)
    if not reader.at_end():
        raise reader.fail("an unbalanced ')'")
    found = tuple(Branch(i, pattern[a:b], node) for i, (a, b, node) in enumerate(spans))
    return ParsedPattern(pattern, global_flags, found)


def parse(pattern: str) -> Node:
    """The tree of the whole pattern."""
    parsed = read_pattern(pattern)
    nodes = tuple(b.node for b in parsed.branches)
    return nodes[0] if len(nodes) == 1 else Alternation(nodes)


def branches(pattern: str) -> tuple[Branch, ...]:
    """The top-level alternatives, in order (one branch for a pattern without ``|``)."""
    return read_pattern(pattern).branches


def labelled_source(pattern: str) -> str:
    """The pattern with each top-level branch in a named group ``b0``, ``b1``, ...

    ``match.lastgroup`` then says which alternative took a chunk. The branches keep
    their order, so the regex engine chooses exactly as with the original pattern.

    >>> labelled_source(r"(?i)a|b+")
    '(?i)(?P<b0>a)|(?P<b1>b+)'
    """
    parsed = read_pattern(pattern)
    return parsed.global_flags + "|".join(f"(?P<b{b.index}>{b.source})" for b in parsed.branches)
