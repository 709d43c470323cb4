"""A fingerprint of a tokenizer: the SHA-256 of its IDs on one fixed probe text.

The probe exercises every top-level alternative of every split pattern tokconf knows (the
encoding files' patterns and GPT-2's; ``tests/test_fingerprint.py`` checks this), so a
loader that swapped a pre-tokenizer, dropped ``ignore_merges`` or shifted the special
range gives another hash. The probe never changes within a fingerprint version: the
version is part of what is printed, so two fingerprints are only compared when equal.
"""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

__all__ = ["FINGERPRINT_VERSION", "PROBE", "fingerprint_of"]

FINGERPRINT_VERSION = 1

# Each line aims at alternatives that differ between the known patterns: contractions in
# both cases, case-split words (Tekken and o200k split eBay, NaOH, pH; Llama 3 does not),
# combining marks (\p{M}), digit runs (\p{N}{1,3} against single digits), punctuation runs
# with trailing newlines and "/", whitespace runs before words and at the end, newline
# runs followed by a character, scripts, and a Llama 3 token its merges cannot build.
PROBE = "".join([
    "I'm sure they'll say it's done, we're told I've; WE'VE SEEN IT'S \"fine\"; don't ask, you'd know.\n",
    "eBay sold NaOH at pH 7; iPhone XMLHttpRequest camelCaseWord ALLCAPS Title\n",
    "cafe\u0301 nai\u0308ve \u0928\u092e\u0938\u094d\u0924\u0947 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 "
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\n",
    "1 12 123 1234 12345 1234567 3.14159 2024-01-02 \u0661\u0662\u0663\u0664 \u2160\u2161 \u00bd\n",
    "...!!! ??/ // <tag> {json: [1, 2]} a+b=c #define x\r\n",
    "\n\n\nx\n\n y\t\ttab  two   three    \u3000ideo \u00a0nbsp\r\r\n",
    " Vi\u1ec7t Nam, ti\u1ebfng Vi\u1ec7c, \u4e2d\u6587\u5206\u8bcd \u65e5\u672c\u8a9e\u306e\u6587 "
    "\ud55c\uad6d\uc5b4 \u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac\n",
    "emoji \U0001f600\U0001f44d\U0001f3fd \u2764\ufe0f family \U0001f468\u200d\U0001f469\u200d\U0001f467 end   ",
])


def fingerprint_of(ids: Sequence[int]) -> str:
    """``v1:`` and the SHA-256 of the IDs written as a JSON list (no spaces).

    >>> fingerprint_of([1, 2])[:11]
    'v1:49a64717'
    """
    data = json.dumps([int(i) for i in ids], separators=(",", ":")).encode()
    return f"v{FINGERPRINT_VERSION}:" + hashlib.sha256(data).hexdigest()
