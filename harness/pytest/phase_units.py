"""The every-token and long units of the pytest suite (:mod:`harness.pytest.suite`).

The same inputs ``tokconf run`` runs (:mod:`harness.run.every_token`,
:mod:`harness.run.long_tier`), cut for items: every-token is one unit per adapter (every
slice of its encoding's reference on that adapter alone, so a failing item names the
adapter), the long inputs one unit per (encoding, kind), as in a run.
"""

from __future__ import annotations

from typing import Any

__all__ = ["audit", "every_token_tasks", "long_options", "long_units", "note_reach"]


def _plans(suite: Any) -> dict[str, Any]:
    if "_every_token_plans" not in suite.__dict__:
        from harness.run.every_token import plans_for

        plans = {plan.encoding: plan for plan in plans_for(suite.selected)}
        for plan in plans.values():
            suite.selected.calls[plan.reference].forget_pieces(plan.ids)  # as run_phase does
        suite.__dict__["_every_token_plans"] = plans
    return suite.__dict__["_every_token_plans"]


def every_token_tasks(suite: Any) -> list[tuple[str, list[tuple[Any, tuple[str, ...]]]]]:
    """(adapter, its every-token task) per adapter of an encoding whose reference runs:
    the reference first, then the others sorted; none under the dev profile, as in a run."""
    if "every-token" not in suite.plan.phases or suite.profile == "dev":
        return []
    out = []
    for encoding, plan in _plans(suite).items():
        names = [a.name for a in suite.selected.group(encoding)]
        for name in [plan.reference] + sorted(n for n in names if n != plan.reference):
            out.append((name, [(token_slice, (name,)) for token_slice in plan.slices]))
    return out


def audit(suite: Any, adapter: str | None) -> None:
    """A reference's reachability audit goes into the run's coverage with its own unit."""
    for plan in _plans(suite).values():
        if plan.reference == adapter:
            suite.collector.coverage.audited(suite.selected.calls[adapter], plan.reachability_json())


def long_options(suite: Any) -> Any:
    """The long inputs the plan runs, as the engine's long phase chooses them (None: none)."""
    from harness.generate.long_inputs import DEFAULT_LONG, LongOptions

    plan = suite.plan
    if "long" not in plan.phases or "generated" not in plan.phases:
        return None
    if plan.long or suite.profile == "nightly":
        return LongOptions()
    return DEFAULT_LONG if plan.default_long else None


def long_units(suite: Any) -> list[Any]:
    from harness.run.long_tier import long_units as units_of

    options = long_options(suite)
    return [] if options is None else units_of(suite.selected, options)


def note_reach(suite: Any) -> None:
    """After the last long unit: the notes of adapters that fell short of the largest size."""
    from harness.run.long_tier import reach_notes

    options = long_options(suite)
    if options is not None:
        reach_notes(suite.collector, options)
