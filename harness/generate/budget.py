"""How many generated inputs an adapter gets.

``max_examples`` (from the hypothesis profile or ``--max-examples``) is what a fast
adapter gets. A pure-Python adapter can be a thousand times slower than tiktoken, so each
adapter is timed on a few inputs first and given the largest halving of
``max_examples`` that fits a time budget (12 s of checking by default). Halvings, not a
free number, so that timing noise rarely changes the count: a run is repeatable.
"""

from __future__ import annotations

import time

from typing import TYPE_CHECKING

from harness.calls import Calls
from harness.checks.base import ORDINARY

if TYPE_CHECKING:
    from harness.generate.pools import Pool

__all__ = ["budget_for", "calibrate", "pool_budget"]

#: Share of an adapter's time budget the long pieces may take (after the short inputs).
LONG_SHARE = 0.1


def budget_for(seconds_per_input: float, *, max_examples: int, time_budget_s: float) -> int:
    """How many generated inputs an adapter gets: the largest halving of ``max_examples``
    that fits the time budget, never fewer than ``min(10, max_examples)``.

    >>> budget_for(0.0001, max_examples=150, time_budget_s=12)
    150
    >>> budget_for(0.2, max_examples=150, time_budget_s=12)
    37
    >>> budget_for(5.0, max_examples=150, time_budget_s=12)
    10
    """
    floor = min(10, max_examples)
    affordable = time_budget_s / max(seconds_per_input, 1e-9)
    tier = max_examples
    while tier > floor and tier > affordable:
        tier //= 2
    return max(tier, floor)


def calibrate(adapter: Calls, pool: list[str], *, max_examples: int, time_budget_s: float) -> int:
    """Time ``encode`` on up to 8 inputs spread over ``pool``; return the adapter's budget."""
    sample = pool[:: max(1, len(pool) // 8)][:8]
    started = time.perf_counter()
    for text in sample:
        adapter.reset()
        adapter.encode(text, ORDINARY)
    adapter.reset()
    per_encode = (time.perf_counter() - started) / max(1, len(sample))
    # the checks of one input cost about a dozen encodes' worth of calls
    return budget_for(per_encode * 12, max_examples=max_examples, time_budget_s=time_budget_s)


def pool_budget(adapter: Calls, pool: "Pool", *, max_examples: int, time_budget_s: float) -> int:
    """How many leading inputs of ``pool`` an adapter takes.

    The short part (atoms, pattern inputs, mixtures) is calibrated as before, its
    full size being ``max_examples`` plus the pattern inputs. Only an adapter that takes
    all of it goes on to the long pieces (shortest first), as many as fit
    :data:`LONG_SHARE` of the time budget at the speed it showed on a 512-byte piece.
    """
    short = pool.texts[: pool.short_count]
    longs = pool.texts[pool.short_count :]
    wanted = max_examples + pool.fixed - len(longs)
    budget = min(len(short), calibrate(adapter, short, max_examples=wanted, time_budget_s=time_budget_s))
    if budget < len(short) or not longs:
        return budget
    probe = min(longs, key=lambda t: abs(len(t.encode("utf-8", "surrogatepass")) - 512))
    adapter.reset()
    started = time.perf_counter()
    adapter.encode(probe, ORDINARY)
    per_byte = (time.perf_counter() - started) / max(1, len(probe.encode("utf-8", "surrogatepass")))
    adapter.reset()
    spent, taken = 0.0, 0
    for text in longs:
        spent += per_byte * len(text.encode("utf-8", "surrogatepass")) * 12
        if spent > time_budget_s * LONG_SHARE:
            break
        taken += 1
    return budget + taken
