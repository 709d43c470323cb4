"""The cache of other releases' environments that the network tests share.

Kept between sessions (``TOKCONF_TEST_ENV_CACHE`` or ``~/.cache/tokconf-test-envs``), and
shared by test files that the suite's worker processes run at the same time: both
``tests/test_envs.py`` and ``tests/test_release_ladder.py`` make ``tiktoken-0.9.0``. Two
workers that both saw it missing would both ``tokconf env add`` it, and the second add
fails on the first's folder. :func:`making_environments` lets one look-and-make at a time.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ENV_CACHE = Path(os.environ.get("TOKCONF_TEST_ENV_CACHE", Path.home() / ".cache" / "tokconf-test-envs"))


@contextmanager
def making_environments() -> Iterator[dict[str, str]]:
    """Hold the cache's lock; yields the environment variables that point tokconf at it."""
    ENV_CACHE.mkdir(parents=True, exist_ok=True)
    with open(ENV_CACHE / ".test-lock", "w", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield {**os.environ, "TOKCONF_CACHE_DIR": str(ENV_CACHE)}
