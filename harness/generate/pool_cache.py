"""Generated mixtures, kept on disk when a run would only draw the same ones again.

Under a derandomized profile (``ci``, the default) the pool of an encoding is a pure
function of the strategy, its arguments, the count, the seed and the hypothesis
release, yet drawing it costs about 0.4 s per encoding, a tenth of the harness's own
time in a default run. :func:`pooled` keeps it under ``cache_dir()/pools``, named by a
hash of everything it depends on: the hypothesis version, the source of
:mod:`harness.generate.strategies` (any change to a strategy is a new pool), the
caller's key (the special literals and split patterns, or the alphabet, the strategy was built from), the
count and the seed. A random-seed profile passes no key and is never cached, so the
folder does not fill up with pools nobody asks for again.

The file is JSON with ``ensure_ascii``: lone surrogates survive as ``\\udXXX`` escapes. A
file that does not read back as a list of strings is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from hypothesis import __version__ as hypothesis_version
from hypothesis import strategies as st

from harness.atomic import write_atomic
from harness.generate import strategies
from harness.vocab import cache_dir

__all__ = ["pool_path", "pooled"]

_FORMAT = "tokconf-pool-v1"


@lru_cache(maxsize=1)
def _strategies_source_hash() -> str | None:
    try:
        return hashlib.sha256(Path(strategies.__file__).read_bytes()).hexdigest()
    except (OSError, TypeError):
        return None  # no source to hash (a frozen install): no caching


def pool_path(key: Sequence[str], *, count: int, seed_value: int) -> Path | None:
    """Where the pool for these arguments is kept (``None``: it cannot be cached)."""
    source = _strategies_source_hash()
    if source is None:
        return None
    identity = json.dumps([_FORMAT, hypothesis_version, source, list(key), count, seed_value], ensure_ascii=True)
    return cache_dir() / "pools" / f"{hashlib.sha256(identity.encode()).hexdigest()}.json"


def pooled(
    strategy: st.SearchStrategy[str], *, count: int, seed_value: int, key: Sequence[str] | None
) -> list[str]:
    """:func:`harness.generate.strategies.generate`, from the disk cache when ``key`` is given.

    ``key`` must name everything the strategy was built from besides its code (the
    literals of ``hostile_text``, the alphabet of ``alphabet_text``).
    """
    path = None if key is None else pool_path(key, count=count, seed_value=seed_value)
    if path is not None:
        try:
            cached = json.loads(path.read_text(encoding="ascii"))
        except (OSError, ValueError):
            cached = None
        if isinstance(cached, list) and all(isinstance(text, str) for text in cached):
            return cached
    pool = strategies.generate(strategy, count=count, seed_value=seed_value)
    if path is not None:
        try:
            write_atomic(path, json.dumps(pool, ensure_ascii=True), encoding="ascii")
        except OSError:
            pass  # a read-only cache costs time, not correctness
    return pool
