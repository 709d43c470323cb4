"""How many generated inputs an adapter gets.

``max_examples`` (from the hypothesis profile or ``--max-examples``) is what an adapter
gets, unless it declares a smaller share (:func:`pool_budget`): which inputs run is
decided by seed, profile, flags and declarations, never by timing, so a loaded machine
checks the same inputs as an idle one (issue 20; timed budgets gave 163 inputs under
``--jobs 2`` where ``--jobs 1`` gave 177, so the timed rule is gone).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.calls import Calls

if TYPE_CHECKING:
    from harness.generate.pools import Pool

__all__ = ["declared_share", "pool_budget", "share_budget", "takes_input"]


def share_budget(halvings: int, *, max_examples: int) -> int:
    """``max_examples`` halved ``halvings`` times, never below ``min(10, max_examples)``.

    >>> share_budget(0, max_examples=150), share_budget(2, max_examples=150), share_budget(9, max_examples=150)
    (150, 37, 10)
    """
    if halvings < 0:
        raise ValueError(f"generated_halvings is 0 or more, not {halvings}")
    return max(max_examples >> halvings, min(10, max_examples))


def pool_budget(adapter: Calls, pool: "Pool", *, max_examples: int) -> int:
    """How many leading inputs of ``pool`` an adapter takes: decided by its declared
    :attr:`~harness.interface.Capabilities.generated_halvings` alone, never by timing,
    so ``--jobs 2`` on a loaded machine checks what ``--jobs 1`` checks on an idle one.

    No halving is the whole pool, long pieces included; otherwise the short part
    (atoms, pattern inputs, mixtures), whose full size is ``max_examples`` plus the
    pattern inputs, halved that many times, and no long pieces.
    """
    halvings = adapter.info.capabilities.generated_halvings
    if halvings <= 0:
        return len(pool.texts)
    short = pool.texts[: pool.short_count]
    longs = pool.texts[pool.short_count :]
    wanted = max_examples + pool.fixed - len(longs)
    return min(len(short), share_budget(halvings, max_examples=wanted))


def takes_input(adapter: Calls, pool: "Pool", index: int, budget: int) -> bool:
    """Whether an adapter whose share is ``budget`` (:func:`pool_budget`) takes input
    ``index`` of ``pool``: an input of its share, a long piece only when it is no longer
    than the longest long input the adapter declares it takes
    (:attr:`~harness.interface.Capabilities.long_limit`, which the long tier honours too).
    A quadratic encoder (js-tiktoken declares 1,000 characters) fed the pool's 4,096-byte
    pieces, each through its whole API, took 58 of 90 s of r50k_base's generated inputs.
    """
    if index >= budget:
        return False
    if index < pool.short_count:
        return True
    limit = adapter.info.capabilities.long_limit
    return limit is None or len(pool.texts[index]) <= limit


def declared_share(adapter: Calls, pool: "Pool", taken: int) -> dict[str, int]:
    """What parity.json says of an adapter's share of ``pool``: its declared halvings, the
    pool's size, the inputs it takes and what it skips (short inputs, long pieces).
    ``taken``: its budget (:func:`pool_budget`)."""
    short = pool.short_count
    inputs = sum(takes_input(adapter, pool, i, taken) for i in range(len(pool.texts)))
    return {"halvings": adapter.info.capabilities.generated_halvings, "pool": len(pool.texts), "inputs": inputs,
            "skipped_short": max(0, short - taken), "skipped_long_pieces": len(pool.texts) - short - max(0, inputs - short)}
