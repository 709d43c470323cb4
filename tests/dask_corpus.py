"""A deterministic corpus of short documents for the Dask executor's tests and bench."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ("the", "quick", "brown", "fox", "über", "naïve", "日本語", "テスト", "  ", "\t", "123", "4567", "don't",
         "I'm", "...", "!!", "😀", "code()", "x=1;", "\n", "ß", "Ω", "ﬁ", "\r\n", "<|endoftext|>", "ǅ", "\u2028")


def write_corpus(path: Path, documents: int, *, seed: int = 15) -> Path:
    """``documents`` JSON Lines documents of 1 to 8 words, the same for the same arguments."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(documents):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
            handle.write(json.dumps({"text": text}) + "\n")
    return path
