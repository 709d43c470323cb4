"""The generated inputs of one encoding, in the order the adapters take them.

An open-vocabulary pool is, in order:

1. the fixed hostile atoms (:func:`~harness.generate.strategies.hostile_atoms`);
2. inputs derived from each adapter's own split pattern
   (:mod:`~harness.generate.pattern_inputs`, every profile);
3. hypothesis mixtures of every hostile category and of the patterns' own pieces
   (:func:`~harness.generate.strategies.hostile_text` with ``patterns``);
4. long single pre-tokens (:mod:`~harness.generate.long_pieces`, ``ci`` and ``nightly``),
   shortest first.

Once the pool has run, the runner adds coverage-steered inputs
(:mod:`~harness.generate.steer`; ``steer``), since they depend on what the pool produced.

``max_examples`` counts atoms and mixtures together, as it always has (a fast adapter
takes that many of them); the fixed sets come on top. A slow adapter takes a prefix of
the short part (:func:`~harness.generate.budget.pool_budget`), so pattern inputs reach it
before mixtures do, and long pieces only as far as their length fits its time.

    >>> pool = open_pool(literals=(), patterns=(r"\\p{N}{1,3}|\\s+|[a-z]+",), profile="dev", max_examples=3, seed=0)
    >>> pool.texts[:3], pool.fixed > 0, len(pool.texts) == 3 + pool.fixed, pool.short_count == len(pool.texts)
    ([' ', '  ', 'a '], True, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from harness.generate.long_pieces import long_pieces
from harness.generate.pattern_cache import cached_pattern_inputs
from harness.generate.pool_cache import pooled
from harness.generate.strategies import alphabet_text, hostile_atoms, hostile_text, word_text

__all__ = ["FIXED_SETS", "Pool", "closed_pool", "open_pool"]

#: Which fixed sets each profile runs on top of ``max_examples``.
FIXED_SETS: dict[str, tuple[str, ...]] = {
    "dev": ("pattern",),
    "ci": ("pattern", "long", "steer"),
    "nightly": ("pattern", "long", "steer"),
}


@dataclass(frozen=True)
class Pool:
    texts: list[str]
    #: how many of ``texts`` come from the fixed sets (on top of ``max_examples``)
    fixed: int = 0
    #: how many of ``texts`` are short; the long pieces, if any, are the rest
    short: int = -1

    @property
    def short_count(self) -> int:
        return len(self.texts) if self.short < 0 else self.short


def open_pool(*, literals: Sequence[str], patterns: Iterable[str], profile: str, max_examples: int,
              seed: int, cache: bool = False) -> Pool:
    """Atoms, the profile's fixed sets, then mixtures: ``max_examples`` + the fixed sets.

    ``cache``: keep the mixtures on disk (:mod:`~harness.generate.pool_cache`; for a
    derandomized profile, which draws the same ones every time). A pure function of its
    arguments, so ``--jobs`` processes may build pools in parallel.
    """
    literals = list(literals)
    patterns = list(dict.fromkeys(patterns))
    atoms = hostile_atoms(literals)
    base = atoms[:max_examples]
    wanted = max(0, max_examples - len(base))
    key = ["hostile_text", *literals, "patterns", *patterns] if cache else None
    mixtures = pooled(hostile_text(literals, patterns=patterns), count=wanted, seed_value=seed,
                      key=key) if wanted else []
    seen = set(base)
    mixtures = [t for t in mixtures if t not in seen]
    sets = FIXED_SETS.get(profile, ())
    fixed = [i.text for p in patterns for i in cached_pattern_inputs(p)] if "pattern" in sets else []
    fixed = [t for t in dict.fromkeys(fixed) if t not in seen]
    seen |= set(fixed)
    mixtures = [t for t in mixtures if t not in seen]
    seen |= set(mixtures)
    longs = [t for t in long_pieces() if t not in seen] if "long" in sets else []
    short = [*base, *fixed, *mixtures]
    return Pool([*short, *longs], fixed=len(fixed) + len(longs), short=len(short))


def closed_pool(*, alphabet: Iterable[str], max_examples: int, seed: int, cache: bool = False,
                words: Iterable[str] | None = None) -> Pool:
    """Atoms written in a closed vocabulary's alphabet, then text drawn from it; for a
    word vocabulary (``words``), text written in its words, half of the pool."""
    alphabet = frozenset(alphabet)
    key = ["alphabet_text", *sorted(alphabet)] if cache else None
    pool = pooled(alphabet_text(alphabet), count=max_examples, seed_value=seed, key=key)
    if words is not None:
        words = sorted(set(words))
        separators = sorted(ch for ch in alphabet if ch.isspace())
        key = ["word_text", *words, "|", *separators] if cache else None
        written = pooled(word_text(words, separators), count=max_examples, seed_value=seed, key=key)
        # interleaved, so a budget that takes only part of the pool still gets both kinds
        pool = [t for pair in zip(written, pool) for t in pair] + written[len(pool):] + pool[len(written):]
    return Pool(list(dict.fromkeys([*hostile_atoms(alphabet=alphabet), *pool]))[:max_examples])
