"""Long single pre-tokens: 1 to 4,096 bytes of one kind of text, for the ``ci`` profile.

BPE works inside one pre-token, and implementations break on long ones in their own
ways: a cache keyed by a truncated piece, a chunked loop that splits a piece at a fixed
size, a quadratic merge loop, a recursion limit. Each input here is one run that every
split pattern keeps whole (letters, digits for GPT-2's pattern, spaces at the end of the
text, CJK, emoji, a mixed-script word), with its length in UTF-8 bytes swept over every
power of two up to 4,096, one either side of each, and round numbers.

Every length is swept once, the kinds dealt out to the lengths in turn (so each kind
meets short, middle and long lengths), and every kind is also taken at the longest
length: about fifty inputs, 50 KB in all (the million-character tier belongs to the
isolation work). A length a kind cannot hit exactly (three-byte CJK, four-byte emoji)
is filled as close as whole characters allow, never over.

    >>> [len(p.encode()) for p in long_pieces()[:6]]
    [1, 2, 3, 3, 4, 6]
    >>> len(long_pieces()), max(len(p.encode()) for p in long_pieces())
    (51, 4096)
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["KINDS", "LENGTHS", "long_pieces", "piece"]

MAX_BYTES = 4096
POWERS: tuple[int, ...] = tuple(1 << k for k in range(13))
NEIGHBOURS: tuple[int, ...] = tuple(
    sorted({n for p in POWERS for n in (p - 1, p + 1) if 1 <= n <= MAX_BYTES} - set(POWERS))
)
ROUND: tuple[int, ...] = (10, 50, 100, 200, 300, 500, 1000, 1500, 2000, 2500, 3000, 4000)
LENGTHS: tuple[int, ...] = tuple(sorted({*POWERS, *NEIGHBOURS, *ROUND}))

#: The units each kind is built from, cycled. Lower case only, so o200k's
#: upper-then-lower letter rule keeps a letter run whole.
KINDS: dict[str, str] = {
    "letters": "thequickbrownfoxjumpsoverthelazydog",
    "digits": "3141592653589793238462643383279502884197",
    "spaces": " ",
    "cjk": "\u4e2d\u6587\u5b57\u7b26\u8bcd\u8a9e\u6f22\u5b57\u9f8d\u9f98",
    "emoji": "\U0001F600\U0001F680\U0001F44D\U0001F389\U0001F9E0\U0001FAE0",
    "mixed": "a\u00e9\u4e2d\u00df\u0436\u03bb\u05d0\u0915\u0e01\uac00",
}


def piece(kind: str, size: int) -> str:
    """``size`` UTF-8 bytes (or as close as whole characters allow) of ``kind``.

    >>> piece("cjk", 7), piece("letters", 5), len(piece("emoji", 9).encode())
    ('中文', 'thequ', 8)
    """
    units = KINDS[kind]
    out: list[str] = []
    used = 0
    i = 0
    while True:
        ch = units[i % len(units)]
        width = len(ch.encode("utf-8"))
        if used + width > size:
            if not out:
                out.append(ch)  # a kind whose characters are wider than the size: one character
            break
        out.append(ch)
        used += width
        i += 1
    return "".join(out)


@lru_cache(maxsize=1)
def long_pieces() -> tuple[str, ...]:
    """The whole set, shortest first: every length once, the kinds dealt in turn, and
    every kind at the longest length."""
    kinds = list(KINDS)
    chosen = [(size, kinds[turn % len(kinds)]) for turn, size in enumerate(LENGTHS)]
    chosen += [(MAX_BYTES, kind) for kind in kinds]
    return tuple(dict.fromkeys(piece(kind, size) for size, kind in sorted(chosen)))
