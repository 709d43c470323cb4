"""The fingerprint's probe text exercises every alternative of every split pattern tokconf
knows, so any swapped pattern can change the hash (issue 23)."""

from __future__ import annotations

import regex
import pytest

from harness.encodings import encoding_specs
from harness.encodings.fingerprint import PROBE, fingerprint_of
from harness.generate.pattern_parse import branches, labelled_source

# GPT-2's own pattern, built into HF's ByteLevel pre-tokenizer (the hf:gpt2 loader's)
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
PATTERNS = {**{name: spec.pattern for name, spec in encoding_specs().items()}, "gpt2-bytelevel": GPT2_PATTERN}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_the_probe_takes_every_alternative_of_every_known_pattern(name: str) -> None:
    pattern = PATTERNS[name]
    taken = {m.lastgroup for m in regex.finditer(labelled_source(pattern), PROBE)}
    every = {f"b{b.index}" for b in branches(pattern)}
    assert taken == every, f"{name}: the probe never takes {sorted(every - taken)}"


def test_the_known_patterns_split_the_probe_differently() -> None:
    splits: dict[tuple[str, ...], list[str]] = {}
    for name, pattern in PATTERNS.items():
        splits.setdefault(tuple(regex.findall(pattern, PROBE)), []).append(name)
    # alike only where the patterns are one pattern: the same string (o200k's in llama4,
    # Tekken's twice), Meta's non-possessive spelling of cl100k's, and tiktoken's faster
    # spelling of GPT-2's (tiktoken_ext/openai_public.py says it is equivalent)
    assert sorted(sorted(names) for names in splits.values()) == [
        ["cl100k_base", "llama3"], ["gpt2-bytelevel", "r50k_base"], ["llama4", "o200k_base", "o200k_harmony"],
        ["qwen"], ["qwen3_6"], ["tekken_240718", "tekken_240911"],
    ]


def test_the_fingerprint_is_the_sha256_of_the_ids() -> None:
    assert fingerprint_of([1, 2]) == "v1:49a64717d5d4cb19952e6eac2946415cf6879adacf9908e7d872332d32c6e684"
    assert fingerprint_of([2, 1]) != fingerprint_of([1, 2])
