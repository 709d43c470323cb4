"""minbpe equals tiktoken's IDs on random hostile text (fixed seed), for each encoding.

The generated text draws code points only from those assigned in Python's own Unicode
tables (14.0 for 3.11). Newer code points are where the two regex engines disagree: the
`regex` module (2026.x) knows Unicode 17, tiktoken's Rust engine an older version, so a
letter new in Unicode 17 is a letter to one and punctuation to the other. Minimal input:
``"\\U000323b0'm"`` (CJK Extension J, then 'm): tiktoken gives [..., 6, 76], minbpe
[..., 2846] for cl100k_base. That is a pre-tokenizer table difference, not a BPE one.
"""

from __future__ import annotations

import random
import unicodedata

import pytest

from harness.registry import Registry
from implementations.minbpe.adapters import family

POOL = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x85", "\u00a0", "\u2028", "\u2029", "\u3000",
    "\u200b", "\ufeff", "'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'m", "'t", "\u2019s", "'", '"',
    "0", "7", "12", "123", "1234567", "\u0663", "\u00b2", "\u216b", "a", "hello", "Hello", "HELLO",
    "internationalization", " the", "The", "\u00e9", "e\u0301", "\u00df", "\u0130", "\u01c5", "\u03a3",
    "中", "你好", "日本語", "한국어", "ไทย", "العربية", "עברית", "हिन्दी", "😊", "👍🏽", "👨\u200d👩\u200d👧", "🇺🇸",
    "\U00010348", "\U000E0041", "\x00", "\x01", "\x7f", "\x80", "\u00ad", "\ufffd", "\uffff",
    "<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "<|", "|>", "!", "?", "...", "--", "/", "//",
    "\\", "$", "\u20ac", "@", "#", "{", "}", "__init__", "=>", "::", "http://x.y/z?q=1", "CamelCase", "x86_64",
]


def _char(rng: random.Random) -> str:
    top = rng.choice([0x80, 0x250, 0x3000, 0x110000])
    while True:
        ch = chr(rng.randrange(0, top))
        if unicodedata.category(ch) not in ("Cn", "Cs"):  # see module docstring
            return ch


def hostile_strings(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randrange(1, 13)):
            roll = rng.random()
            if roll < 0.55:
                parts.append(rng.choice(POOL))
            elif roll < 0.9:
                parts.append(_char(rng))
            else:
                parts.append(rng.choice(POOL) * rng.randrange(2, 40))
        texts.append("".join(parts))
    return texts


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry()
    reg.add(family(), provider="test")
    return reg


@pytest.mark.parametrize(
    ("encoding", "count"), [("cl100k_base", 4000), ("r50k_base", 4000), ("o200k_base", 1500)]
)
def test_equals_tiktoken_on_hostile_text(registry: Registry, encoding: str, count: int) -> None:
    from implementations.tiktoken import TiktokenAdapter

    reference = TiktokenAdapter(encoding)
    ours = registry.get(f"minbpe:{encoding}")
    texts = hostile_strings(20261130, count)
    ordinary = [t for t in texts if ours.encode_ordinary(t) != reference.encode_ordinary(t)]
    assert ordinary == []
    allowed = [
        t for t in texts[:500]
        if ours.encode(t, allowed_special="all") != reference.encode(t, allowed_special="all")
    ]
    assert allowed == []


def test_both_modes_agree_on_ordinary_text(registry: Registry) -> None:
    up = registry.get("minbpe:cl100k_base")
    fixed = registry.get("minbpe-fixed:cl100k_base")
    for text in hostile_strings(5, 300):
        assert up.encode_ordinary(text) == fixed.encode_ordinary(text)
        ids = up.encode_ordinary(text)
        assert up.decode_bytes(ids) == fixed.decode_bytes(ids) == text.encode("utf-8")
