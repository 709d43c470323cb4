r"""Inputs derived from a tokenizer's own split pattern, each with the targets it aims at.

For every top-level alternative of a pattern (read by :mod:`harness.generate.pattern_parse`)
a *witness* is built from its tree: literals as written, each class by its typical member
(:mod:`harness.generate.unicode_edges`), each quantifier at its lower bound. Then every
*choice point* is varied one at a time, the rest kept at the witness:

- every quantifier at its bounds and one past them (``\p{N}{1,3}``: 1, 2, 3, 4 and 0
  digits; ``?``: 0, 1, 2);
- every class by its Unicode edges (first and last code point, first member of 2, 3
  and 4 UTF-8 bytes, members newer than this Python's Unicode, every member of a small
  class such as ``[sdmt]`` or ``\s``);
- every literal letter in every case and with its case-folding oddities (``s``: ``S``,
  U+017F ``ſ``; ``k``: U+212A KELVIN SIGN);
- every inner alternative (``ll``, ``ve``, ``re`` of a contraction group).

Then the boundaries: for every ordered pair of alternatives, text one alternative takes
followed by text the next takes (digits after letters, letters after a contraction,
spaces before and after everything), found by trying witnesses and variants side by side
until the pattern itself splits them that way; each alternative's witness with a space
or newline before and after.

What each input *does* is read back from the pattern (the ``regex`` module runs it
with every top-level branch in a named group), so the targets recorded for an input are
the alternatives and ordered pairs it actually exercises, plus the one choice it varied.
Inputs that cannot interfere are packed a few to a text (their chunks verified to be
unchanged by the packing), which keeps the set small; an input holding a character
newer than this Python's Unicode is packed only with others like it, since engines
with older tables are expected to split it differently and it should not hide its
neighbours.

:func:`pattern_inputs` is the fixed, deterministic set (the ``ci`` profile runs it);
:func:`pattern_text` is the hypothesis strategy over the same choice points.

    >>> model = pattern_model(r"\p{N}{1,3}|\s+|[a-z]+")
    >>> model.split("12345 ab")
    [(0, '123'), (0, '45'), (1, ' '), (2, 'ab')]
    >>> sorted({t for i in pattern_inputs(r"\p{N}{1,3}|\s+|[a-z]+") for t in i.targets if t.startswith("pair:")})[:3]
    ['pair:0>0', 'pair:0>1', 'pair:0>2']
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Iterable, Mapping, Sequence, TypeVar

import regex
from hypothesis import strategies as st

from harness.generate.pattern_parse import (
    Alternation,
    Anchor,
    CharSet,
    Group,
    Literal,
    Look,
    Node,
    PatternSyntaxError,
    Repeat,
    Sequence as SeqNode,
    labelled_source,
    read_pattern,
)
from harness.generate.unicode_edges import case_partners, class_profile, new_code_points

__all__ = ["PatternInput", "PatternModel", "Slot", "pattern_inputs", "pattern_model", "pattern_text"]

#: At most this many verified pieces share one packed input, and at most this many characters.
PACK_PIECES = 6
PACK_CHARS = 60
#: Members mixed into two-member runs for each quantifier over a class.
MIXED = 6
#: How many of the shortest single texts are tried side by side to find each ordered pair.
PAIR_POOL = 160


@dataclass(frozen=True)
class Slot:
    """One choice point of an alternative: a quantifier, a class, a literal, an inner ``|``."""

    path: tuple[int, ...]
    kind: str
    label: str
    options: tuple[object, ...]

    def describe(self, index: int) -> str:
        value = self.options[index]
        if isinstance(value, str):
            return f"{self.kind} {self.label}=U+{ord(value):04X}" if len(value) == 1 else f"{self.kind} {self.label}={value!r}"
        return f"{self.kind} {self.label}={value}"


@dataclass(frozen=True)
class PatternInput:
    text: str
    #: ``alt:I`` alternatives and ``pair:I>J`` boundaries the text exercises, and the
    #: choices it varied (``b1 quantifier {1,3}=4``, ``b0 literal s=U+017F``)
    targets: tuple[str, ...]
    #: holds a character newer than this Python's Unicode (kept alone, not packed)
    volatile: bool = False


def _repeat_label(node: Repeat) -> str:
    high = "" if node.high is None else str(node.high)
    base = {(0, "1"): "?", (0, ""): "*", (1, ""): "+"}.get((node.low, high), f"{{{node.low},{high}}}")
    return base + {"greedy": "", "lazy": "?", "possessive": "+"}[node.mode]


def _counts(node: Repeat) -> tuple[int, ...]:
    """The lower bound first (the witness), then the bounds and one past each."""
    low, high = node.low, node.high
    found = [low, low + 1]
    if high is None:
        found.append(low + 2)
    else:
        found += [high, high + 1]
    if low > 0:
        found.append(low - 1)
    return tuple(dict.fromkeys(found))


def _slots(node: Node, path: tuple[int, ...] = ()) -> list[Slot]:
    if isinstance(node, Literal):
        partners = sorted(case_partners(node.char) | ({node.char.swapcase()} - {node.char} if len(node.char.swapcase()) == 1 else set()))
        return [Slot(path, "literal", node.char, (node.char, *partners))] if partners else []
    if isinstance(node, CharSet):
        return [Slot(path, "class", node.source, tuple(class_profile(node.source, node.icase).options()))]
    if isinstance(node, SeqNode):
        return [s for i, item in enumerate(node.items) for s in _slots(item, path + (i,))]
    if isinstance(node, Alternation):
        inner = [s for i, b in enumerate(node.branches) for s in _slots(b, path + (i,))]
        return [Slot(path, "alternative", "|", tuple(range(len(node.branches)))), *inner]
    if isinstance(node, Group):
        return _slots(node.body, path + (0,))
    if isinstance(node, Repeat):
        return [Slot(path, "quantifier", _repeat_label(node), _counts(node)), *_slots(node.body, path + (0,))]
    return []  # lookarounds and anchors consume nothing


def render(node: Node, choice: Mapping[tuple[int, ...], object], path: tuple[int, ...] = ()) -> str:
    """The text ``node`` produces under ``choice`` (slot path -> option index; default 0).

    For a quantifier over a class the choice may instead be a tuple of member indexes:
    a run of those different members (``\\s+`` as newline then space).
    """
    if isinstance(node, Literal):
        options = _slot_options(node, path)
        return options[choice.get(path, 0)] if options else node.char
    if isinstance(node, CharSet):
        options = class_profile(node.source, node.icase).options()
        return options[choice.get(path, 0)] if options else ""
    if isinstance(node, SeqNode):
        return "".join(render(item, choice, path + (i,)) for i, item in enumerate(node.items))
    if isinstance(node, Alternation):
        index = choice.get(path, 0)
        return render(node.branches[index], choice, path + (index,))
    if isinstance(node, Group):
        return render(node.body, choice, path + (0,))
    if isinstance(node, Repeat):
        chosen = choice.get(path, 0)
        if isinstance(chosen, tuple) and isinstance(node.body, CharSet):
            # a run of different members of the class, one per repetition
            members = class_profile(node.body.source, node.body.icase).options()
            return "".join(members[k] for k in chosen)
        count = _counts(node)[chosen]
        return render(node.body, choice, path + (0,)) * count
    if isinstance(node, (Look, Anchor)):
        return ""
    raise TypeError(f"unknown pattern node {node!r}")


def _slot_options(node: Literal, path: tuple[int, ...]) -> tuple[object, ...]:
    found = _slots(node, path)
    return found[0].options if found else ()


@dataclass
class PatternModel:
    """A parsed pattern: its alternatives, their choice points, and a labelled matcher."""

    pattern: str
    branch_sources: tuple[str, ...]
    nodes: tuple[Node, ...]
    matcher: regex.Pattern[str]
    _splits: "_TextMemo" = field(default_factory=lambda: _TextMemo(SPLIT_MEMO_CHARS), repr=False)
    _branches: "_TextMemo" = field(default_factory=lambda: _TextMemo(BRANCH_MEMO_CHARS), repr=False)

    @cached_property
    def slots(self) -> tuple[tuple[Slot, ...], ...]:
        """Each alternative's choice points. Made when first asked: a class's members are
        found by scanning every code point (0.85 s for o200k_base's pattern on a slow core),
        and the coverage measure, which needs only :meth:`branches`,
        builds a model on every run."""
        return tuple(tuple(_slots(n)) for n in self.nodes)

    @cached_property
    def _branch_of(self) -> dict[str, int]:
        """A labelled group's name (``b0``, ``b1``, ...: :func:`labelled_source`) -> its alternative."""
        return {f"b{i}": i for i in range(len(self.nodes))}

    def split(self, text: str) -> list[tuple[int, str]]:
        """(alternative index, chunk) for each match of the pattern in ``text``."""
        found = self._splits.get(text)
        if found is None:
            branch = self._branch_of
            found = self._splits.keep(text, [(branch[m.lastgroup], m.group())
                                             for m in self.matcher.finditer(text) if m.end() != m.start()])
        return found

    def branches(self, text: str) -> tuple[int, ...]:
        """The alternative index of each chunk of ``text``, in order: :meth:`split` without
        the chunks, which is all coverage asks (making each chunk's string and pair was a
        quarter of a split's time on 2 KB of prose, and most of its memory).

        >>> pattern_model(r"\\p{N}{1,3}|\\s+|[a-z]+").branches("12345 ab")
        (0, 0, 1, 2)
        """
        found = self._branches.get(text)
        if found is None:
            branch = self._branch_of
            found = self._branches.keep(text, tuple([branch[m.lastgroup] for m in self.matcher.finditer(text)
                                                     if m.end() != m.start()]))
        return found

    def exercised(self, text: str) -> tuple[set[int], set[tuple[int, int]]]:
        """The alternatives that took a chunk of ``text``, and the ordered pairs of neighbours."""
        order = self.branches(text)
        return set(order), set(zip(order, order[1:]))


_T = TypeVar("_T")
#: characters of text whose splits a model keeps: the same text is split once for every
#: adapter that shares the pattern, and packing splits its growing texts again and again;
#: bounded by characters, not texts (4,096 kept splits of 2 KB corpus documents held 290
#: MB of the 380 MB such a corpus run's client peaked at)
SPLIT_MEMO_CHARS = 1 << 16
#: characters of text whose :meth:`PatternModel.branches` a model keeps (a tuple of small
#: ints per text: a 10^6-character long input's fits, for the next adapter to ask)
BRANCH_MEMO_CHARS = 1 << 21


class _TextMemo(dict):
    """Answers by text, forgotten all at once when the texts kept pass ``limit`` characters
    (a text longer than that is not kept)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.chars = 0

    def keep(self, text: str, answer: _T) -> _T:
        if len(text) <= self.limit:
            if self.chars + len(text) > self.limit:
                self.clear()
                self.chars = 0
            self[text] = answer
            self.chars += len(text)
        return answer


@lru_cache(maxsize=32)
def pattern_model(pattern: str) -> PatternModel | None:
    """The model of ``pattern``, or ``None`` when it cannot be read (see pattern_parse)."""
    try:
        parsed = read_pattern(pattern)
        matcher = regex.compile(labelled_source(pattern))
    except (PatternSyntaxError, regex.error):
        return None
    nodes = tuple(b.node for b in parsed.branches)
    return PatternModel(
        pattern=pattern,
        branch_sources=tuple(b.source for b in parsed.branches),
        nodes=nodes,
        matcher=matcher,
    )


def _targets(model: PatternModel, text: str, *extra: str) -> tuple[str, ...]:
    alternatives, pairs = model.exercised(text)
    return (*extra, *(f"alt:{a}" for a in sorted(alternatives)), *(f"pair:{a}>{b}" for a, b in sorted(pairs)))


def _variants(model: PatternModel, index: int) -> list[tuple[str, str]]:
    """(text, label): the witness of alternative ``index`` and each one-choice variation,
    and for each quantifier over a class, two-member runs of the typical member and each of
    the next :data:`MIXED` members, both ways round (a newline then a space)."""
    node = model.nodes[index]
    out = [(render(node, {}), f"b{index} witness")]
    for slot in model.slots[index]:
        for option in range(1, len(slot.options)):
            out.append((render(node, {slot.path: option}), f"b{index} {slot.describe(option)}"))
        repeated = _node_at(node, slot.path)
        if slot.kind == "quantifier" and isinstance(repeated, Repeat) and isinstance(repeated.body, CharSet):
            members = class_profile(repeated.body.source, repeated.body.icase).options()
            for k in range(1, min(len(members), MIXED + 1)):
                for run in ((0, k), (k, 0)):
                    out.append((render(node, {slot.path: run}), f"b{index} run {repeated.body.source}="
                                + "+".join(f"U+{ord(members[m]):04X}" for m in run)))
    return [(text, label) for text, label in out if text]


def _node_at(node: Node, path: tuple[int, ...]) -> Node:
    for step in path:
        if isinstance(node, SeqNode):
            node = node.items[step]
        elif isinstance(node, Alternation):
            node = node.branches[step]
        elif isinstance(node, (Group, Repeat, Look)):
            node = node.body
    return node


def _volatile(text: str) -> bool:
    new = _new_set()
    return any(ch in new for ch in text)


@lru_cache(maxsize=1)
def _new_set() -> frozenset[str]:
    return frozenset(new_code_points())


@lru_cache(maxsize=32)
def pattern_inputs(pattern: str) -> tuple[PatternInput, ...]:
    """The fixed, deterministic inputs for ``pattern`` (empty if it cannot be read)."""
    model = pattern_model(pattern)
    if model is None:
        return ()
    singles: list[tuple[str, str]] = []
    for index in range(len(model.nodes)):
        singles += _variants(model, index)
        witness = render(model.nodes[index], {})
        if witness:
            for before, after in ((" ", ""), ("", " "), ("\n", ""), ("", "\n"), (" ", " ")):
                singles.append((before + witness + after, f"b{index} context {before!r}+{after!r}"))
    singles += _pairs(model, singles)
    singles += _volatile_in_context(model, singles)
    seen: set[str] = set()
    candidates: list[PatternInput] = []
    for text, label in singles:
        if text in seen:
            continue
        seen.add(text)
        candidates.append(PatternInput(text, _targets(model, text, label), _volatile(text)))
    return tuple(_pack(model, candidates))


def _pairs(model: PatternModel, singles: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """For each ordered pair of alternatives (i, j) not yet seen: a text where j's chunk follows i's.

    Every two texts of ``singles`` side by side are read back through the pattern; the
    first (shortest-first) that shows a pair is kept for it. A pair no two texts show is
    left out: many are impossible (nothing follows ``\\s++$``; ``\\s+(?!\\S)`` always
    leaves the next whitespace to another alternative).
    """
    seen: set[tuple[int, int]] = set()
    for text, _ in singles:
        seen |= model.exercised(text)[1]
    pool = sorted({t for t, _ in singles if not _volatile(t)}, key=lambda t: (len(t), t))[:PAIR_POOL]
    found: list[tuple[str, str]] = []
    for left in pool:
        for right in pool:
            text = left + right
            pairs = model.exercised(text)[1] - seen
            if pairs:
                seen |= pairs
                found.append((text, "pair " + " ".join(f"b{a}>b{b}" for a, b in sorted(pairs))))
    return found


def _volatile_in_context(model: PatternModel, singles: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each one-character version edge followed by every alternative's witness.

    Alone, a character newer than some engine's tables is one chunk however it is
    classified, and its bytes merge the same; next to a contraction, a digit or a letter
    the classification decides where the chunk ends.
    """
    witnesses = [w for node in model.nodes if (w := render(node, {})) and not _volatile(w)]
    edges = sorted({t for t, _ in singles if len(t) == 1 and _volatile(t)})
    return [(edge + w, f"version edge U+{ord(edge):04X} before {w!r}") for edge in edges for w in witnesses]


def _pack(model: PatternModel, candidates: list[PatternInput]) -> list[PatternInput]:
    """Join inputs whose chunks stay exactly the same side by side (first fit, in order).

    Inputs holding a version-edge character are packed only with each other: engines
    with older Unicode tables split those differently by design, and such a difference
    must not hide another one in the same text.
    """
    packs: list[tuple[bool, list[PatternInput]]] = []
    for candidate in candidates:
        for volatile, pack in packs:
            if volatile != candidate.volatile or len(pack) >= PACK_PIECES:
                continue
            joined = "".join(c.text for c in pack)
            together = joined + candidate.text
            if len(together) <= PACK_CHARS and model.split(together) == model.split(joined) + model.split(candidate.text):
                pack.append(candidate)
                break
        else:
            packs.append((candidate.volatile, [candidate]))
    out = []
    for volatile, pack in packs:
        text = "".join(c.text for c in pack)
        labels = [t for c in pack for t in c.targets if not t.startswith(("alt:", "pair:"))]
        out.append(PatternInput(text, _targets(model, text, *labels), volatile))
    return out


def pattern_text(patterns: Iterable[str], *, max_pieces: int = 4) -> st.SearchStrategy[str]:
    """Hypothesis: a few alternatives' texts side by side, each choice point drawn at random.

    Each piece is one alternative with its choice points drawn at random; shrinking
    moves a piece toward the plain witness of its alternative.
    """
    models = [m for m in (pattern_model(p) for p in dict.fromkeys(patterns)) if m is not None]
    if not models:
        return st.just("")

    @st.composite
    def piece(draw: st.DrawFn) -> str:
        model = draw(st.sampled_from(models))
        index = draw(st.integers(0, len(model.nodes) - 1))
        # one draw picks every choice (cheap to generate); 0 is the plain witness, so
        # hypothesis' shrinking still ends there
        seed = draw(st.integers(0, 2**32 - 1))
        rng = random.Random(seed)
        choice = {s.path: rng.randrange(len(s.options)) if seed else 0 for s in model.slots[index]}
        return render(model.nodes[index], choice)

    return st.lists(piece(), min_size=1, max_size=max_pieces).map("".join)


def targets_of(inputs: Sequence[PatternInput]) -> set[str]:
    """Every target a set of inputs aims at."""
    return {t for i in inputs for t in i.targets}
