"""What the generated phase runs: one pool per encoding (or closed vocabulary), cut into units.

The runner asks for pools (built in ``--jobs`` processes when there are several: each
is a pure function of its spec), sizes each adapter's share, then hands the units to
:class:`harness.run.parallel.Jobs`. Everything here is decided from the pools and the
budgets alone, never from what ran before, so ``--jobs N`` runs the same units.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

from harness.calls import Calls
from harness.generate.pools import Pool
from harness.run.coverage import trace_indices
from harness.run.parallel import GeneratedUnit
from harness.run.selection import Selected

__all__ = ["PoolPlan", "pool_specs", "prepare_pools", "steered_units", "steers", "units_of"]

#: (pool, the adapters that take it, their reference)
PoolPlan = tuple[Pool, list[Calls], Calls]


def pool_specs(selected: Selected, *, profile: str, max_examples: int, seed: int,
               cache: bool) -> list[tuple[dict[str, Any], list[Calls], Calls]]:
    """Per encoding: the open pool's spec (the group's special literals and split patterns)
    for the adapters without an alphabet, and a closed pool's for each that has one. The
    seed of an encoding is ``seed`` mixed with the encoding's name, so adding an encoding
    to a run does not change another's pool."""
    out: list[tuple[dict[str, Any], list[Calls], Calls]] = []
    for encoding in selected.encodings():
        reference = selected.reference_for(encoding)
        group = selected.group(encoding)
        mixed = (seed + zlib.crc32(encoding.encode())) % 2**32
        open_group = [a for a in group if a.info.capabilities.alphabet is None]
        if open_group:
            literals = tuple(sorted({lit for a in group for lit, _ in a.info.special_tokens}))
            patterns = tuple(dict.fromkeys(p for a in [reference, *open_group] if (p := a.info.split_pattern)))
            out.append(({"literals": literals, "patterns": patterns, "profile": profile,
                         "max_examples": max_examples, "seed": mixed, "cache": cache}, open_group, reference))
        for adapter in group:
            if adapter.info.capabilities.alphabet is not None:
                out.append(({"alphabet": adapter.info.capabilities.alphabet, "max_examples": max_examples,
                             "seed": mixed, "cache": cache, "words": adapter.info.capabilities.words},
                            [adapter], reference))
    return out


def prepare_pools(runner: Any, options: Any) -> list[PoolPlan]:
    """The generated phase's pools (built on the runner's executor) and each adapter's share
    of them; sets the runner's profile, seed, size and budgets, which the report shows.
    ``options``: a :class:`harness.run.runner.GenerationOptions`."""
    from harness.generate.budget import declared_share, pool_budget
    from harness.generate.strategies import profile_settings, resolve_profile

    runner.generated = True
    runner.profile = resolve_profile(options.profile)
    profile = profile_settings(runner.profile)
    runner.max_examples = options.max_examples if options.max_examples is not None else profile.max_examples
    if options.seed is not None:
        runner.seed = options.seed
    else:
        runner.seed = 0 if profile.derandomize else random.SystemRandom().randrange(2**32)
    planned = pool_specs(runner.selected, profile=runner.profile, max_examples=runner.max_examples,
                         seed=runner.seed, cache=profile.derandomize)
    pools: list[Pool] = runner.jobs.map("pool", [spec for spec, _, _ in planned])
    plans = [(pool, adapters, reference) for pool, (_, adapters, reference) in zip(pools, planned)]
    for pool, adapters, _ in plans:
        for adapter in adapters:
            # declared, never timed (issue 20): the same inputs on a loaded machine
            runner.budgets[adapter.name] = pool_budget(adapter, pool, max_examples=runner.max_examples)
            share = runner.shares[adapter.name] = declared_share(adapter, pool, runner.budgets[adapter.name])
            limit = adapter.info.capabilities.long_limit
            if share["halvings"] == 0 and share["skipped_long_pieces"] and limit is not None:
                note = (f"generated: {adapter.name} declares it takes at most {limit} characters (long_limit): "
                        f"{share['skipped_long_pieces']} of the pool's long pieces left out")
                if note not in runner.notes:
                    runner.notes.append(note)
    return plans


def steers(profile: str) -> bool:
    """Whether the profile adds coverage-steered inputs once the pools have run."""
    from harness.generate.pools import FIXED_SETS

    return "steer" in FIXED_SETS.get(profile, ())


def units_of(plans: list[PoolPlan], budgets: dict[str, int]) -> list[GeneratedUnit]:
    """Each pool's inputs in order, each to the adapters whose budget reaches it; the
    first short inputs of a pool are traced (:func:`harness.run.coverage.trace_indices`)."""
    from harness.generate.budget import takes_input

    units: list[GeneratedUnit] = []
    for pool, adapters, reference in plans:
        traced = trace_indices(pool.texts)
        for i, text in enumerate(pool.texts):
            active = tuple(a.name for a in adapters if takes_input(a, pool, i, budgets[a.name]))
            if active:
                units.append((text, active, reference.name, i in traced))
    return units


def steered_units(plans: list[PoolPlan], budgets: dict[str, int], steer: Any, *,
                  seed: int) -> tuple[list[GeneratedUnit], list[tuple[Calls, Any]]]:
    """Coverage-steered inputs (``steer(reference, seed=...)``, :mod:`harness.generate.steer`)
    of each open pool, for the adapters that took the pool's whole short part; with the
    steered inputs per reference, for the coverage figures once they ran."""
    units: list[GeneratedUnit] = []
    steered = []
    for pool, adapters, reference in plans:
        if adapters[0].info.capabilities.alphabet is not None:
            continue
        whole = tuple(a.name for a in adapters if budgets[a.name] >= pool.short_count)
        inputs = steer(reference, seed=seed)
        steered.append((reference, inputs))
        if whole:
            units += [(text, whole, reference.name, False) for text in inputs.texts]
    return units, steered
