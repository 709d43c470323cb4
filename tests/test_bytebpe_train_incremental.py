"""The incremental trainer learns exactly the reference trainer's merges.

``train`` keeps pair counts up to date; ``train_reference`` recounts everything per
merge, as the rule is written. Same merges, in the same order, on every corpus here:
overlapping runs, ties, weights, scripts, whitespace, the three pattern choices, and a
slice of real prose. (How much faster it is, is ``bench/run.py``'s business.)
"""

from __future__ import annotations

import random

import pytest
from pydoc_data.topics import topics

from implementations.bytebpe.incremental import learn_merges
from implementations.bytebpe.model import train, train_reference
from tests.hostile_mix import hostile_mix

SMALL = [
    "",
    "a",
    "aaaa",
    "aaaaaaa aaaaaa aaaaa",
    "ab ab cd cd ef ef",  # ties everywhere: smallest pair first
    "低山 low low lower low\n低山",
    "abababab babababa",
    "the the the then there these",
    "\r\n\r\n  \t\t 12345 12 1 !!! ??? ...",
]


@pytest.mark.parametrize("pattern_name", ["none", "gpt2", "gpt4"])
@pytest.mark.parametrize("text", SMALL)
def test_small_texts(text: str, pattern_name: str) -> None:
    for vocab_size in (256, 257, 260, 300):
        fast = train(text, vocab_size=vocab_size, pattern_name=pattern_name)
        reference = train_reference(text, vocab_size=vocab_size, pattern_name=pattern_name)
        assert fast.merges == reference.merges, (text, vocab_size)


@pytest.mark.parametrize("seed", range(40))
def test_generated_corpora(seed: int) -> None:
    rng = random.Random(seed)
    # training refuses lone surrogates (they have no UTF-8 form): leave those texts out
    texts = [t for t in hostile_mix(rng.randint(1, 30), seed=seed) if not any("\ud800" <= ch <= "\udfff" for ch in t)]
    pattern_name = rng.choice(["none", "gpt2", "gpt4"])
    vocab_size = rng.choice([260, 300, 400])
    fast = train(texts, vocab_size=vocab_size, pattern_name=pattern_name)
    reference = train_reference(texts, vocab_size=vocab_size, pattern_name=pattern_name)
    assert list(fast.merges) == list(reference.merges)


def test_a_slice_of_prose() -> None:
    text = "".join(topics.values())[:30_000]
    fast = train(text, vocab_size=256 + 300, pattern_name="gpt4")
    reference = train_reference(text, vocab_size=256 + 300, pattern_name="gpt4")
    assert len(fast.merges) == 300
    assert list(fast.merges) == list(reference.merges)


def test_weights_count_as_repetitions() -> None:
    once = learn_merges([[1, 2, 3], [2, 3]], [3, 1], num_merges=3, first_id=10)
    repeated = learn_merges([[1, 2, 3]] * 3 + [[2, 3]], [1, 1, 1, 1], num_merges=3, first_id=10)
    assert once == repeated == [(2, 3), (1, 10)]  # (2, 3) is seen 3 + 1 times, (1, 2) 3 times
