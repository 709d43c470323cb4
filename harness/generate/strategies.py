r"""Hostile text for the generated checks, and the hypothesis profiles that bound it.

Each strategy is a named ``@st.composite`` function for one category of trouble a
byte-level BPE tokenizer meets (seeds 000-003): whitespace kinds and runs, digit runs,
contractions in every case, scripts whose letters are several UTF-8 bytes, combining
marks, emoji sequences, NUL and control characters, long runs, the special-token
literals of the adapters under test (whole, partial, adjacent, nested, wrapped in
whitespace) and lone surrogates, which are not valid Unicode yet are valid ``str``.

:func:`hostile_text` mixes them. Pieces are drawn with the simplest first, so when
hypothesis shrinks a failing example it moves toward short, plain text, and special
literals are ordered shortest first, so a special-token bug shrinks to the shortest
literal (``<|endoftext|>`` for cl100k_base).

Profiles are kept as plain :class:`hypothesis.settings` in :data:`PROFILES` and not
registered globally on import: the pytest plugin is installed for every project, and a
user's own ``ci`` profile must not be replaced by ours. :func:`register_profiles`
registers them (this repository's ``conftest.py`` calls it).

    >>> sorted(PROFILES)
    ['ci', 'dev', 'nightly']
    >>> PROFILES["ci"].derandomize, PROFILES["ci"].deadline
    (True, None)
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, Sequence

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from harness.generate.seed_only import seed_only

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "PROFILE_ENV",
    "alphabet_text",
    "word_text",
    "combining_marks",
    "contractions",
    "control_chars",
    "cut_utf8_pieces",
    "digit_runs",
    "emoji_sequences",
    "generate",
    "hostile_text",
    "long_runs",
    "lone_surrogates",
    "plain_words",
    "profile_settings",
    "register_profiles",
    "resolve_profile",
    "scripts",
    "special_literals",
    "whitespace_runs",
]

PROFILE_ENV = "HYPOTHESIS_PROFILE"
DEFAULT_PROFILE = "ci"

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

#: max_examples is per adapter for the fast ones; slower adapters get a share of it
#: (see harness.run.runner's budgets).
#: Every field that matters is set explicitly: a bare ``settings(...)`` inherits from the
#: profile loaded at import time, and hypothesis loads its own derandomized ``ci`` profile
#: by itself when it sees ``CI=true`` (nightly must stay random there too).
PROFILES: dict[str, settings] = {
    "dev": settings(max_examples=100, deadline=None, derandomize=False, suppress_health_check=_QUIET),
    "ci": settings(
        max_examples=300,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=_QUIET,
    ),
    "nightly": settings(max_examples=5000, deadline=None, derandomize=False, suppress_health_check=_QUIET),
}


def resolve_profile(name: str | None = None) -> str:
    """The profile to use: ``name``, else ``$HYPOTHESIS_PROFILE`` if it is ours, else ci.

    >>> resolve_profile("nightly")
    'nightly'
    """
    chosen = name or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if chosen not in PROFILES:
        if name is None:
            # HYPOTHESIS_PROFILE may name a user's own profile for their own tests
            return DEFAULT_PROFILE
        raise ValueError(
            f"unknown hypothesis profile {chosen!r}; tokconf's profiles are "
            f"{', '.join(sorted(PROFILES))}"
        )
    return chosen


def profile_settings(name: str | None = None) -> settings:
    return PROFILES[resolve_profile(name)]


def register_profiles() -> None:
    """Register ``dev``, ``ci`` and ``nightly`` with hypothesis (for this repo's tests)."""
    for name, profile in PROFILES.items():
        settings.register_profile(name, profile)


# -- categories -------------------------------------------------------------------------

WHITESPACE: tuple[str, ...] = (
    " ", "\n", "\t", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u2029", "\u0085",
    "\x1c", "\x0b", "\x0c", "\u1680", "\u2003", "\u200a", "\u202f", "\u205f", "\u200b",
    "\ufeff",
)
CONTRACTIONS: tuple[str, ...] = (
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'lL",
    "'D", "\u2019s", "\u2019LL", "'\u017f", "'\u212a",
)
SCRIPTS: tuple[tuple[int, int], ...] = (
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0x3040, 0x30FF),  # kana
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0x0600, 0x06FF),  # Arabic
    (0x0900, 0x097F),  # Devanagari (letters, signs, digits)
    (0x0E00, 0x0E7F),  # Thai
    (0x0400, 0x04FF),  # Cyrillic
    (0x00C0, 0x024F),  # Latin with diacritics
    (0x20000, 0x2A6DF),  # CJK extension B: four UTF-8 bytes
)
EMOJI: tuple[str, ...] = (
    "\U0001F600",  # grinning face
    "\U0001F44D\U0001F3FD",  # thumbs up, medium skin tone
    "\U0001F468\u200d\U0001F469\u200d\U0001F467",  # family, ZWJ sequence
    "\U0001F1FA\U0001F1F8",  # flag: two regional indicators
    "\U0001F1EF",  # a lone regional indicator
    "1\ufe0f\u20e3",  # keycap
    "\u2764\ufe0f",  # heart, variation selector
    "\U0001F3F3\ufe0f\u200d\U0001F308",  # rainbow flag
    "\U0001F9D1\U0001F3FF\u200d\U0001F4BB",  # technologist, dark skin tone
    "\U0001F3FB",  # a lone skin-tone modifier
)
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\u00bf\u2014\u2026\u3002\uff01"


@st.composite
def plain_words(draw: st.DrawFn) -> str:
    """ASCII words with an optional leading space, mixed case and punctuation."""
    word = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyzHELOWRD", min_size=1, max_size=12))
    lead = draw(st.sampled_from(["", " ", "  "]))
    tail = draw(st.sampled_from(["", "", ".", ",", "!", "?", "...", PUNCTUATION[draw(st.integers(0, len(PUNCTUATION) - 1))]]))
    return lead + word + tail


@st.composite
def whitespace_runs(draw: st.DrawFn) -> str:
    """Runs of mixed whitespace kinds (CRLF, NBSP, U+2028, U+3000, U+0085, \\x1c ...)."""
    kinds = draw(st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=6))
    repeat = draw(st.integers(1, 3))
    return "".join(kinds) * repeat


@st.composite
def digit_runs(draw: st.DrawFn) -> str:
    """ASCII digit runs of 1-20, sometimes other decimal digits (Arabic-Indic, fullwidth)."""
    length = draw(st.integers(1, 20))
    digits = draw(st.sampled_from(["0123456789", "0123456789", "\u0660\u0661\u0662\u0663", "\u0966\u0967\u0968", "\uff10\uff11\uff12"]))
    return "".join(draw(st.lists(st.sampled_from(digits), min_size=length, max_size=length)))


@st.composite
def contractions(draw: st.DrawFn) -> str:
    """English contractions in every case, with curly apostrophes and long s."""
    stem = draw(st.sampled_from(["", "it", "we", "THEY", "I", " you"]))
    return stem + draw(st.sampled_from(CONTRACTIONS))


@st.composite
def scripts(draw: st.DrawFn) -> str:
    """Letters of scripts with multi-byte UTF-8 (CJK, Hangul, Arabic, Devanagari, Thai ...)."""
    low, high = draw(st.sampled_from(SCRIPTS))
    return draw(st.text(alphabet=st.characters(min_codepoint=low, max_codepoint=high), min_size=1, max_size=8))


@st.composite
def combining_marks(draw: st.DrawFn) -> str:
    """Base letters with combining marks, and marks with no base at all."""
    base = draw(st.sampled_from(["", "e", "a", "\u0915", " "]))
    marks = draw(st.text(alphabet=st.characters(min_codepoint=0x0300, max_codepoint=0x036F), min_size=1, max_size=4))
    return base + marks


@st.composite
def emoji_sequences(draw: st.DrawFn) -> str:
    """Emoji with ZWJ joins, skin tones, flags, keycaps and variation selectors."""
    return "".join(draw(st.lists(st.sampled_from(EMOJI), min_size=1, max_size=3)))


@st.composite
def control_chars(draw: st.DrawFn) -> str:
    """NUL, C0 and C1 controls, DEL, U+FFFD and noncharacters."""
    chars = st.one_of(
        st.characters(min_codepoint=0, max_codepoint=0x1F),
        st.characters(min_codepoint=0x7F, max_codepoint=0x9F),
        st.sampled_from(["\x00", "\ufffd", "\ufffe", "\uffff", "\U0010ffff", "\u202e"]),
    )
    return draw(st.text(alphabet=chars, min_size=1, max_size=4))


@st.composite
def long_runs(draw: st.DrawFn) -> str:
    """One character or short unit repeated 100-600 times (pieces of 100+ and 500+ bytes)."""
    unit = draw(st.sampled_from(["a", " ", "\n", "0", "!", "\u4e2d", "ab", "\U0001F600", "\t"]))
    return unit * draw(st.integers(100, 600))


@st.composite
def lone_surrogates(draw: st.DrawFn) -> str:
    """One surrogate code point, optionally inside letters: a valid ``str``, invalid text."""
    surrogate = draw(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))
    return draw(st.sampled_from(["", "a"])) + surrogate + draw(st.sampled_from(["", "b"]))


@st.composite
def cut_utf8_pieces(draw: st.DrawFn) -> list[bytes]:
    """A text's UTF-8 cut at any bytes, empty pieces included: the token pieces a byte-level
    tokenizer's IDs can decode to, for the streaming decode's cut points (lone surrogates
    left out: no token's bytes hold one)."""
    data = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)).encode("utf-8")
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=30)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


def special_literals(literals: Sequence[str]) -> st.SearchStrategy[str]:
    """Special-token literals: whole, partial, adjacent, nested, wrapped in whitespace.

    Literals are tried shortest first so shrinking reaches the shortest one.
    """
    ordered = sorted(set(literals), key=lambda s: (len(s), s))
    if not ordered:
        return st.just("<|endoftext|>")

    @st.composite
    def draw_literal(draw: st.DrawFn) -> str:
        first = draw(st.sampled_from(ordered))
        shape = draw(st.sampled_from(["whole", "partial", "adjacent", "nested", "wrapped"]))
        if shape == "whole":
            return first
        if shape == "partial":
            cut = draw(st.integers(1, max(1, len(first) - 1)))
            return draw(st.sampled_from([first[:cut], first[cut:]]))
        if shape == "adjacent":
            return first + draw(st.sampled_from(ordered))
        if shape == "nested":
            middle = len(first) // 2
            return first[:middle] + draw(st.sampled_from(ordered)) + first[middle:]
        return draw(st.sampled_from([" ", "\n", "  "])) + first + draw(st.sampled_from([" ", "\n", ""]))

    return draw_literal()


def hostile_text(
    specials: Iterable[str] = (), *, max_pieces: int = 8, surrogates: bool = True,
    patterns: Iterable[str] = (),
) -> st.SearchStrategy[str]:
    """A mixture of every category, pieces concatenated so their borders interact.

    With ``patterns`` (split patterns of the adapters under test), text built from the
    patterns' own alternatives is one more category
    (:func:`harness.generate.pattern_inputs.pattern_text`).
    """
    pieces: list[st.SearchStrategy[str]] = [
        plain_words(),
        whitespace_runs(),
        digit_runs(),
        contractions(),
        scripts(),
        combining_marks(),
        emoji_sequences(),
        control_chars(),
        special_literals(tuple(specials)),
        long_runs(),
    ]
    if surrogates:
        pieces.append(lone_surrogates())
    patterns = tuple(patterns)
    if patterns:
        from harness.generate.pattern_inputs import pattern_text

        pieces.append(pattern_text(patterns, max_pieces=3))
    return st.lists(st.one_of(pieces), min_size=0, max_size=max_pieces).map("".join)


def alphabet_text(alphabet: Iterable[str], *, max_size: int = 40) -> st.SearchStrategy[str]:
    """Text drawn only from a closed vocabulary's alphabet (its declared domain)."""
    chars = sorted(set(alphabet))
    if not chars:
        return st.just("")
    return st.text(alphabet=st.sampled_from(chars), max_size=max_size)


def word_text(words: Sequence[str], separators: Iterable[str], *, max_words: int = 12) -> st.SearchStrategy[str]:
    """Text written in a closed word vocabulary: its pieces joined by its separators
    (one or two of them, or none), so most inputs lie in its domain and exercise it."""
    pieces = sorted(set(words))
    seps = sorted(set(separators)) or [" "]
    if not pieces:
        return st.just("")
    joint = st.one_of(st.just(""), st.sampled_from(seps), st.lists(st.sampled_from(seps), min_size=2, max_size=2).map("".join))
    pair = st.tuples(joint, st.sampled_from(pieces)).map("".join)
    return st.tuples(st.sampled_from(pieces), st.lists(pair, max_size=max_words - 1)).map(lambda t: t[0] + "".join(t[1]))


MAX_LITERAL_ATOMS = 16


def hostile_atoms(literals: Sequence[str] = (), *, alphabet: Iterable[str] | None = None) -> list[str]:
    r"""The smallest hostile inputs, tried first in every generated pool.

    Hypothesis decides how often a random mixture happens to be exactly ``"\r\n"`` or a
    lone space, and that changes between hypothesis releases even when derandomized. The
    one-to-three-character atoms that most bugs reduce to are therefore always tried
    first, whatever the version: every whitespace kind alone, doubled and after a word,
    ``\r\n`` runs, digit runs across the 3-digit boundary, each contraction after a
    letter, a lone surrogate of each half, and the shortest special literals. With ``alphabet``
    (a closed vocabulary) only the atoms written in it are kept.

    >>> atoms = hostile_atoms(["<|endoftext|>"])
    >>> [a for a in ("\r\n", " ", "a ", "1234", "a's", "\ud800", "<|endoftext|>") if a in atoms]
    ['\r\n', ' ', 'a ', '1234', "a's", '\ud800', '<|endoftext|>']
    """
    atoms: list[str] = []
    for ws in (*WHITESPACE, "\r\n"):
        atoms += [ws, ws * 2, "a" + ws, ws + "a", "a" + ws + "b"]
    atoms += ["\r\n\r\n", "a\r\nb", "\n\r", " \r\n"]
    atoms += ["1", "12", "123", "1234", "12345", "a1234", " 1234"]
    atoms += ["a" + c for c in CONTRACTIONS]
    atoms += ["\ud800", "\udc00", "a\ud83d", "\ud83d\ude00"]
    # o200k_harmony registers 1,000+ literals; the shortest few stand for them all
    # (random positions of every literal are the hostile_text strategy's job)
    few = sorted(literals, key=lambda lit: (len(lit), lit))[:MAX_LITERAL_ATOMS]
    atoms += [*few, *(" " + lit for lit in few)]
    if alphabet is not None:
        allowed = set(alphabet)
        atoms = [a for a in atoms if set(a) <= allowed]
    return list(dict.fromkeys(atoms))


def generate(strategy: st.SearchStrategy[str], *, count: int, seed_value: int) -> list[str]:
    """``count`` examples of ``strategy`` (fewer if it runs dry), deterministic in the seed:
    whatever modules are imported and however tokconf is installed (:mod:`.seed_only`).

    Hypothesis is used as a generator only; no shrinking happens here (the runner
    shrinks divergences itself). Duplicates are dropped, order is kept.
    """
    out: list[str] = []
    seen: set[str] = set()

    def collect(text: str) -> None:
        if text not in seen:
            seen.add(text)
            out.append(text)

    runner: Callable[[], None] = settings(
        database=None,
        max_examples=max(1, count),
        phases=[Phase.generate],
        derandomize=False,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )(seed(seed_value)(given(strategy)(collect)))
    with seed_only():
        runner()
    return out[:count]
