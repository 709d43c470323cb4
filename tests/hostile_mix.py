"""Many generated hostile strings, cheaply: seeded ``random`` mixtures of the harness's atoms.

The fast-path tests compare two encoders on 10,000 strings per adapter; hypothesis would
spend most of the time generating. These mixtures draw from the same categories as
:mod:`harness.generate.strategies` (its whitespace kinds, contractions, scripts, emoji,
punctuation and hostile atoms), plus words, long runs (so the heap paths run) and lone
surrogates. Deterministic in the seed.
"""

from __future__ import annotations

import random

from harness.generate.strategies import CONTRACTIONS, EMOJI, PUNCTUATION, SCRIPTS, WHITESPACE, hostile_atoms

__all__ = ["hostile_mix"]

_WORDS = ("the", "The", "internationalization", "lower", "newest", "don", "hello", "world", "GDKKN",
          "indivisibility", "Schrödinger", "naïve", "中文", "ありがとう", "ΑΒΓ", "pythonic", "a", "I")
_RUNS = ("a", " ", "\n", "0", "!", "\u4e2d", "ab", "\U0001F600", "\t", "\u3000", "\r\n", "x ")


def _fragment(rng: random.Random, atoms: list[str]) -> str:
    kind = rng.randrange(11)
    if kind == 0:
        return rng.choice(atoms)
    if kind == 1:
        return rng.choice(WHITESPACE) * rng.randint(1, 4)
    if kind == 2:
        return rng.choice(CONTRACTIONS)
    if kind == 3:
        low, high = rng.choice(SCRIPTS)
        return "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 8)))
    if kind == 4:
        return rng.choice(EMOJI)
    if kind == 5:
        return "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 4)))
    if kind == 6:
        return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 9)))
    if kind == 7:
        return rng.choice(_RUNS) * (rng.randint(20, 300) if rng.random() < 0.1 else rng.randint(2, 12))
    if kind == 8:
        return chr(rng.randint(0xD800, 0xDFFF)) if rng.random() < 0.3 else chr(rng.randint(0x300, 0x36F))
    if kind == 9:
        return chr(rng.randint(0, 0x10FFFF))
    return rng.choice(_WORDS)


def hostile_mix(count: int, *, seed: int, literals: tuple[str, ...] = ()) -> list[str]:
    """``count`` strings of 0-12 fragments each; the first one is empty.

    >>> hostile_mix(3, seed=1) == hostile_mix(3, seed=1)
    True
    """
    rng = random.Random(seed)
    atoms = hostile_atoms(list(literals))
    out = [""]
    while len(out) < count:
        out.append("".join(_fragment(rng, atoms) for _ in range(rng.randint(1, 12))))
    return out
