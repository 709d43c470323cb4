"""hf:* agree with tiktoken on 20,000 random hostile strings per encoding (fixed seed).

tiktoken encodes with ``disallowed_special=()``, HF with its native ``encode_batch``; the
strings hold no special-token literal, so the two policies cannot differ on them.
"""

from __future__ import annotations

import random

import pytest
import regex

from harness.registry import default_registry

SEED = 20261130
COUNT = 20_000

DIGITS = [*"0123456789", "00", "000", "0000", "12345", "9999999", "1234567890", "٣", "١٢٣٤", "１２", "²", "Ⅻ", "½", "৭"]
LETTERS = [*"abcxyzABCXYZ", "é", "ß", "ſ", "İ", "ǅ", "ʰ", "K", "Ω", "ﬁ", "hello", "World", "ÉCOLE", "naïve"]
WHITESPACE = [
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r", "\r\n", "\r\n\r\n", "\x0b", "\x0c", "\xa0", "\u2028",
    "\u2029", "\u3000", "\u0085", "\x1c", "\x1d", "\x1e", "\x1f", "\u1680", "\u2000", "\u2003",
    "\u200a", "\u202f", "\u205f", "\u180e", "\u200b", "\ufeff", " \n", "\n ", " \r\n ",
]
CJK = ["中", "文", "日本語", "한국어", "ひらがな", "カタカナ", "，", "。"]
EMOJI = ["👨\u200d👩\u200d👧", "👍🏽", "🏳️\u200d🌈", "😊", "\u200d", "\ufe0f", "🇺🇸"]
MARKS = ["e\u0301", "\u0301", "\u0308", "a\u0308\u0301", "क्ष", "\u094d", "ि"]
CONTRACTIONS = [
    quote + suffix
    for quote in ("'", "’")
    for suffix in ("s", "S", "t", "T", "d", "D", "m", "M", "ll", "LL", "Ll", "lL", "ve", "VE", "Ve", "re", "RE", "rE", "ſ")
]
PUNCTUATION = [*"'’!?.,;:-/\\<>|()[]{}\"@#$%&*+=_~`^", "...", "!!!", "<|", "|>", "<|endoftext", "|endoftext|>"]
FRAGMENTS = DIGITS + LETTERS + WHITESPACE + CJK + EMOJI + MARKS + CONTRACTIONS + PUNCTUATION


def hostile_strings(seed: int, count: int, *, avoid=()) -> list[str]:
    """``count`` random strings; any holding a literal from ``avoid`` is drawn again."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 24)))
        if not any(literal in text for literal in avoid):
            out.append(text)
    return out


def any_code_points(seed: int, count: int, *, avoid=()) -> list[str]:
    """Strings over all of Unicode (surrogates excepted), unassigned code points included."""
    rng = random.Random(seed)

    def one() -> str:
        roll = rng.random()
        if roll < 0.3:
            return rng.choice(" 1a'\n\r\t")
        high = 0x2FFF if roll < 0.7 else 0x10FFFF
        while True:
            code = rng.randint(0x80, high)
            if not 0xD800 <= code <= 0xDFFF:
                return chr(code)

    out: list[str] = []
    while len(out) < count:
        text = "".join(one() for _ in range(rng.randint(1, 12)))
        if not any(literal in text for literal in avoid):
            out.append(text)
    return out


def mismatches(texts, left, right) -> list[str]:
    return [f"{ascii(t)}: tiktoken {a} hf {b}" for t, a, b in zip(texts, left, right) if a != b]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base", "gpt2"])
@pytest.mark.parametrize("strings", [hostile_strings, any_code_points])
def test_hf_agrees_with_tiktoken(encoding: str, strings) -> None:
    registry = default_registry()
    reference, hf = registry.get(f"tiktoken:{encoding}"), registry.get(f"hf:{encoding}")
    texts = strings(SEED, COUNT, avoid=reference.special_tokens)
    assert len(texts) == COUNT and not any("<|endoftext|>" in t for t in texts)
    expected = reference.encode_batch(texts, disallowed_special=())
    got = hf.encode_batch(texts)
    assert mismatches(texts, expected, got)[:5] == []


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base", "gpt2"])
def test_hf_chunks_equal_tiktoken_pattern_chunks(encoding: str) -> None:
    registry = default_registry()
    reference, hf = registry.get(f"tiktoken:{encoding}"), registry.get(f"hf:{encoding}")
    pattern = regex.compile(reference.native._pat_str)
    texts = hostile_strings(SEED + 1, 5_000)
    differing = [ascii(t) for t in texts if hf.pretokenize(t) != pattern.findall(t)]
    assert differing[:5] == []


def test_the_alphabet_is_hostile() -> None:
    texts = hostile_strings(SEED, COUNT)
    assert any("<|endoftext|>" in t for t in texts)  # literals do occur, and are drawn again
    joined = "".join(texts)
    for needle in ("\r\n", "\xa0", "\u2028", "\u3000", "\u0085", "\x1c", "\u200d", "\u0301", "'LL", "'S", "’s", "1234567890"):
        assert needle in joined
    assert sum(len(t) for t in texts) > 20 * COUNT
