"""Hypothesis drawing from the seed alone, without the constants of "local" modules.

Since 6.131 Hypothesis draws about 5 % of its primitive values from a pool of constants,
and that pool holds, besides its own fixed constants, every literal it finds in the
imported modules it calls local: any module whose file is neither in the standard library
nor under ``site-packages`` (``hypothesis/internal/conjecture/providers.py``,
``_get_local_constants`` and ``HypothesisProvider._maybe_draw_constant``). A tester of
user code wants that; a generator whose inputs must be a function of their seed does
not. For tokconf it made the same seed draw other inputs

- from an editable checkout than from a wheel (the ``harness`` modules are local in
  one, in ``site-packages`` in the other): asked directly, Hypothesis 6.170.27 drew a
  different pool for the same spec and seed under ``pip install .`` than under
  ``pip install -e .``, with every other package at the same release;
- with a user's ``--plugin`` module imported, or under pytest, whose test modules are
  local: so a golden recorded by one could be compared with other inputs by the other.

:func:`seed_only` stands in an empty pool for the local one while a generator runs (for
the whole process: a Hypothesis test in another thread meanwhile draws without them too),
and empties Hypothesis's cache of permitted constants on the way in and out (it holds
local constants drawn before, and must not keep ours for a test that runs after). With a
Hypothesis that has no local constants it changes nothing.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["seed_only"]


class _NoConstants:
    """The local-constants pool with nothing in it (what ``_maybe_draw_constant`` reads)."""

    def set_for_type(self, choice_type: Any) -> tuple[()]:
        return ()

    def __len__(self) -> int:
        return 0


#: threads inside :func:`seed_only` (a Dask worker draws pools in several): the stand-in
#: goes in with the first and out with the last, so none draws with it gone
_inside = 0
_lock = threading.Lock()
#: Hypothesis's own function, while the stand-in is in its place
_saved: list[Any] = []


@contextmanager
def seed_only() -> Iterator[None]:
    """Hypothesis without local constants inside the ``with`` block."""
    global _inside
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a release without this module has no local constants either
        yield
        return
    constants = getattr(providers, "CONSTANTS_CACHE", None)
    if getattr(providers, "_get_local_constants", None) is None or not hasattr(constants, "cache"):
        yield
        return
    with _lock:
        if _inside == 0:
            _saved.append(providers._get_local_constants)
            providers._get_local_constants = _no_constants
        _inside += 1
    constants.cache.clear()  # this thread's (the cache is per thread)
    try:
        yield
    finally:
        constants.cache.clear()
        with _lock:
            _inside -= 1
            if _inside == 0:
                providers._get_local_constants = _saved.pop()


def _no_constants(*args: Any, **kwargs: Any) -> _NoConstants:
    return _NoConstants()
