"""What a run exercised, per adapter: a measure next to every verdict.

A green run means something only together with what it covered. For each adapter the
collector records, over every input the adapter was checked on (cases and generated):

- **pattern alternatives and ordered pairs** of its own split pattern
  (``Adapter.split_pattern``; an adapter that declares none is measured with its
  reference's pattern, and says so) that took a chunk of some input, read back with the
  ``regex`` module (:class:`harness.generate.pattern_inputs.PatternModel`). Pairs are
  counted out of those known to be possible: the ones the pattern's own pieces form
  side by side (:func:`harness.generate.pattern_inputs.pattern_inputs`) and any other an
  input showed; many of the ``n*n`` ordered pairs (also given) are impossible (nothing
  follows ``\\s++$``);
- **vocabulary**: distinct IDs in its encode outputs or checked one by one by the
  every-token phase, out of its vocabulary size (the ordinary IDs found by probing
  ``token_bytes``, plus the special IDs); with that phase, also how many IDs it checked
  and, for a reference, its reachability audit (``every_token``, ``reachability``);
- **merge ranks** applied, for adapters that trace their merges (sampled: the first
  :data:`TRACE_INPUTS` generated inputs of each pool of at most :data:`TRACE_CHARS` characters, so the
  figure is repeatable and cheap), out of the merges the vocabulary holds;
- **Unicode general categories** (this Python's ``unicodedata``) and **scripts** (the
  ``regex`` module's tables) of the characters of its inputs.

``--min-coverage`` turns these figures into a gate (:func:`below_minimum`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable

import regex

from harness.calls import Calls
from harness.cases.model import Policy
from harness.generate.pattern_cache import cached_pattern_inputs
from harness.generate.pattern_inputs import pattern_model
from harness.generate.steer import Steered, steered_inputs
from harness.run.id_runs import IdRuns

__all__ = ["METRICS", "STEERED", "Collector", "below_minimum", "parse_minimums", "script_of", "trace_indices",
           "vocab_size"]

#: coverage-steered inputs per encoding (ci, nightly), each with four unseen tokens
STEERED = 24
TRACE_INPUTS = 80
TRACE_CHARS = 32
#: Names ``--min-coverage`` accepts, and the summary field each reads.
METRICS: dict[str, str] = {"alternatives": "alternatives", "pairs": "pairs", "vocab": "vocab", "merges": "merges"}

#: Scripts reported by name (Unicode's Script property as the ``regex`` module has it);
#: others are counted as "Other". Names the installed ``regex`` does not know are dropped.
SCRIPTS = (
    "Common", "Inherited", "Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac",
    "Thaana", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada",
    "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar", "Georgian", "Hangul", "Ethiopic",
    "Cherokee", "Khmer", "Mongolian", "Han", "Hiragana", "Katakana", "Bopomofo", "Yi", "Braille",
    "Runic", "Ogham", "Tifinagh", "Nko", "Javanese", "Balinese", "Adlam", "Osage", "Deseret",
    "Gothic", "Cuneiform", "Egyptian_Hieroglyphs", "Garay", "Todhri", "Kawi", "Nag_Mundari",
)


@lru_cache(maxsize=1)
def _script_matcher() -> regex.Pattern[str]:
    parts = []
    for name in SCRIPTS:
        try:
            regex.compile(rf"\p{{Script={name}}}")
        except regex.error:
            continue
        parts.append(rf"(?P<{name}>\p{{Script={name}}})")
    return regex.compile("|".join(parts))


@lru_cache(maxsize=65536)
def script_of(ch: str) -> str:
    """The Unicode script of one character, as the ``regex`` module knows it.

    >>> script_of("a"), script_of("中"), script_of("1"), script_of("\\u0301")
    ('Latin', 'Han', 'Common', 'Inherited')
    """
    found = _script_matcher().fullmatch(ch)
    return found.lastgroup if found and found.lastgroup else "Other"


def trace_indices(texts: list[str]) -> frozenset[int]:
    """The positions of a pool whose inputs tracing adapters trace: the first
    :data:`TRACE_INPUTS` of 1 to :data:`TRACE_CHARS` characters. Chosen from the pool, not
    from what ran before, so ``--jobs N`` traces the same inputs as one job.

    >>> sorted(trace_indices(["", "ab", "x" * 40, "c"]))
    [1, 3]
    """
    chosen = [i for i, text in enumerate(texts) if 0 < len(text) <= TRACE_CHARS]
    return frozenset(chosen[:TRACE_INPUTS])


@dataclass
class _Seen:
    inputs: int = 0
    #: of them, the inputs read back through the pattern (``Collector.observe``'s ``split``)
    split: int = 0
    pattern: str | None = None
    pattern_source: str = "own"
    alternatives: dict[int, int] = field(default_factory=dict)
    pairs: set[tuple[int, int]] = field(default_factory=set)
    ids: set[int] = field(default_factory=set)
    ranks: set[Any] = field(default_factory=set)
    traced: int = 0
    categories: set[str] = field(default_factory=set)
    scripts: set[str] = field(default_factory=set)
    #: the characters whose category and script are counted: a document classifies only
    #: the ones it adds (prose repeats the same few dozen; a corpus paid ~20 us a document)
    chars: set[str] = field(default_factory=set)
    steered: dict[str, int] | None = None
    #: IDs the every-token phase checked (:mod:`harness.run.every_token`): one run of IDs
    #: per vocabulary, not 200,000 ints
    checked: IdRuns = field(default_factory=IdRuns)
    #: token texts that differed there beyond what was checked in full
    left_over: int = 0
    #: a reference's reachability audit (:mod:`harness.checks.reachability`), as JSON
    reachability: dict[str, Any] | None = None


class Collector:
    """Fed by the runner after each input's checks; summarised once at the end."""

    def __init__(self, *, reference_pattern: Callable[[str], str | None] = lambda encoding: None) -> None:
        self._seen: dict[str, _Seen] = {}
        #: encoding -> the split pattern of its reference, for adapters that declare none
        self._reference_pattern = reference_pattern
        #: the last text and its characters: every adapter of an input observes the same text
        self._text_chars: tuple[str, frozenset[str]] = ("", frozenset())
        self._calls: dict[str, Calls] = {}

    def _for(self, adapter: Calls) -> _Seen:
        seen = self._seen.get(adapter.name)
        if seen is None:
            seen = self._seen[adapter.name] = _Seen()
            self._calls[adapter.name] = adapter
            seen.pattern = adapter.info.split_pattern
            if seen.pattern is None:
                seen.pattern = self._reference_pattern(adapter.info.encoding)
                seen.pattern_source = "reference"
        return seen

    def observe(self, text: str, adapter: Calls, policy: Policy, *, trace: bool = False, split: bool = True) -> None:
        """Record one input the adapter was checked on (its encode answer is memoised);
        ``trace``: also record the merge ranks it applies (:func:`trace_indices`);
        ``split``: also read it back through the pattern (alternatives and pairs), which
        costs more than tiktoken's whole encode of it: a corpus document the screen passed
        is not (:mod:`harness.run.screen`; the module docstring says why)."""
        seen = self._for(adapter)
        seen.inputs += 1
        outcome = adapter.encode(text, policy)
        if outcome.is_ok:
            seen.ids.update(outcome.value)
        model = pattern_model(seen.pattern) if seen.pattern and split else None
        if model is not None:
            seen.split += 1
            order = model.branches(text)
            for b in set(order):
                seen.alternatives[b] = seen.alternatives.get(b, 0) + 1
            seen.pairs.update(zip(order, order[1:]))
        new = self._characters(text) - seen.chars
        if new:
            seen.chars |= new
            seen.categories.update(map(unicodedata.category, new))
            seen.scripts.update(map(script_of, new))
        if trace and adapter.info.capabilities.trace:
            seen.traced += 1
            rounds = adapter.trace(text)
            if rounds.is_ok:
                seen.ranks.update(r.rank for r in rounds.value if getattr(r, "rank", None) is not None)

    def checked(self, adapter: Calls, ids: Iterable[int], *, left_over: int = 0) -> None:
        """The every-token phase checked these IDs on the adapter."""
        seen = self._for(adapter)
        seen.checked.update(ids)
        seen.left_over += left_over

    def audited(self, reference: Calls, reachability: dict[str, Any]) -> None:
        self._for(reference).reachability = reachability

    def fresh(self) -> "Collector":
        """An empty collector with the same pattern lookup (a ``--jobs`` task's own)."""
        return Collector(reference_pattern=self._reference_pattern)

    def observations(self) -> dict[str, "_Seen"]:
        """What this collector saw, as plain data that crosses a process boundary."""
        return self._seen

    def add(self, seen_by_name: dict[str, "_Seen"], calls: dict[str, Calls]) -> None:
        """Merge :meth:`observations` of another collector (``calls``: the adapters by name).
        Counts add and sets unite, so the order of merging does not change the summary."""
        for name, other in seen_by_name.items():
            if name not in self._seen:
                self._for(calls[name])
            mine = self._seen[name]
            mine.inputs += other.inputs
            mine.split += other.split
            mine.traced += other.traced
            for branch, count in other.alternatives.items():
                mine.alternatives[branch] = mine.alternatives.get(branch, 0) + count
            mine.pairs |= other.pairs
            mine.ids |= other.ids
            mine.ranks |= other.ranks
            mine.categories |= other.categories
            mine.scripts |= other.scripts
            mine.chars |= other.chars
            mine.checked |= other.checked
            mine.left_over += other.left_over
            mine.reachability = mine.reachability or other.reachability

    def steer(self, reference: Calls, *, seed: int) -> Steered:
        """:data:`STEERED` inputs holding tokens ``reference`` has not produced so far."""
        specials = reference.info.special_ids  # a property that builds a set: once, not per ID
        candidates = (i for i in range(256, vocab_size(reference)) if i not in specials)
        return steered_inputs(reference, seen=self.ids_seen(reference.name), candidates=candidates,
                              count=STEERED, seed=seed)

    def steered(self, reference: Calls, texts: list[str], targeted: Iterable[int]) -> None:
        """After the steered inputs ran: how many of their target tokens the reference produced."""
        seen = self._for(reference)
        wanted = set(targeted)
        seen.steered = {"inputs": len(texts), "targeted": len(wanted), "produced": len(wanted & seen.ids)}

    def ids_seen(self, adapter: str) -> set[int]:
        seen = self._seen.get(adapter)
        return set(seen.ids) if seen else set()

    def _characters(self, text: str) -> frozenset[str]:
        if self._text_chars[0] != text:
            self._text_chars = (text, frozenset(text))
        return self._text_chars[1]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per adapter, JSON-ready (see the module docstring for the fields)."""
        return {name: self._summarise(name, seen) for name, seen in sorted(self._seen.items())}

    def _summarise(self, name: str, seen: _Seen) -> dict[str, Any]:
        calls = self._calls[name]
        out: dict[str, Any] = {"inputs": seen.inputs, "pattern": None, "alternatives": None, "pairs": None}
        model = pattern_model(seen.pattern) if seen.pattern else None
        if model is not None:
            n = len(model.nodes)
            constructible = {t for i in cached_pattern_inputs(seen.pattern) for t in i.targets if t.startswith("pair:")}
            out["pattern"] = {
                "source": seen.pattern_source,
                "pattern": seen.pattern,
                "inputs": seen.split,
                "branches": [{"index": i, "source": src, "inputs": seen.alternatives.get(i, 0)}
                             for i, src in enumerate(model.branch_sources)],
                "pairs_missing": [f"{a}>{b}" for a in range(n) for b in range(n)
                                  if (a, b) not in seen.pairs and f"pair:{a}>{b}" in constructible],
            }
            out["alternatives"] = _fraction(len(seen.alternatives), n)
            known = constructible | {f"pair:{a}>{b}" for a, b in seen.pairs}
            out["pairs"] = {**_fraction(len(seen.pairs), len(known)), "ordered": n * n}
        size = vocab_size(calls)
        # an ID counts once an encode produced it or the every-token phase checked it
        out["vocab"] = {**_fraction(len(seen.checked) + seen.checked.count_outside(seen.ids), size)} if size else None
        if seen.checked:
            out["every_token"] = {"checked": len(seen.checked), "not_fully_checked": seen.left_over}
        if seen.reachability is not None:
            out["reachability"] = seen.reachability
        if calls.info.capabilities.trace:
            merges = max(0, size - 256 - len(calls.info.special_ids)) if size else 0
            out["merges"] = {**_fraction(len(seen.ranks), merges), "traced_inputs": seen.traced} if merges else None
        else:
            out["merges"] = None
        if seen.steered is not None:
            out["steered"] = dict(seen.steered)
        out["categories"] = sorted(seen.categories)
        out["scripts"] = sorted(seen.scripts)
        return out


def _fraction(part: int, whole: int) -> dict[str, Any]:
    return {"seen": part, "total": whole, "fraction": round(part / whole, 4) if whole else 0.0}


def vocab_size(calls: Calls, *, limit: int = 1 << 24) -> int:
    """Ordinary IDs plus the special IDs past them.

    The end of the ordinary IDs is the first non-special ID with no bytes: like
    :func:`harness.checks.vocab.ordinary_end`, but an empty piece counts as absent too,
    since Hugging Face decodes an ID it does not have to nothing rather than failing.
    """
    specials = calls.info.special_ids

    def present(i: int) -> bool:
        if i in specials:
            return True
        piece = calls.token_bytes(i)
        return piece.is_ok and bool(piece.value)

    low, high = 0, 256
    if not present(0):
        return len(specials)
    while high < limit and present(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if present(middle) else (low, middle)
    return high + sum(1 for i in specials if i >= high)


def parse_minimums(values: Iterable[str]) -> dict[str, float]:
    """``["0.9", "vocab=0.01"]`` -> ``{"alternatives": 0.9, "vocab": 0.01}``.

    >>> parse_minimums(["0.5", "pairs=0.25"])
    {'alternatives': 0.5, 'pairs': 0.25}
    """
    out: dict[str, float] = {}
    for value in values:
        metric, sep, figure = value.rpartition("=")
        metric = metric if sep else "alternatives"
        if metric not in METRICS:
            raise ValueError(f"--min-coverage {value!r}: unknown measure {metric!r}; use one of "
                             f"{', '.join(METRICS)} (e.g. --min-coverage alternatives=0.9)")
        try:
            fraction = float(figure)
        except ValueError:
            raise ValueError(f"--min-coverage {value!r}: {figure!r} is not a number between 0 and 1") from None
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"--min-coverage {value!r}: {fraction} is not between 0 and 1")
        out[metric] = fraction
    return out


def below_minimum(summary: dict[str, dict[str, Any]], minimums: dict[str, float]) -> list[str]:
    """One message per (adapter, measure) under its minimum; measures an adapter lacks are skipped."""
    problems = []
    for name, figures in summary.items():
        for metric, minimum in minimums.items():
            figure = figures.get(METRICS[metric])
            if figure is None or figure["fraction"] >= minimum:
                continue
            problems.append(f"{name}: {metric} coverage {figure['fraction']:.4f} ({figure['seen']} of "
                            f"{figure['total']}) is below --min-coverage {metric}={minimum}")
    return problems
