"""tokconf's engine: the adapter interface, outcomes, registry, vocabularies and runner.

Driving a run from Python (the third front door, beside ``tokconf run`` and the pytest
plugin)::

    from harness import AdapterChoice, Plan, execute

    plan = Plan(adapters=AdapterChoice(impl=("minbpe:cl100k_base",)), phases=("vocab", "cases"))
    outcome = execute(plan)           # writes reports/<run>/parity.json, like `tokconf run`
    outcome.exit_code, outcome.result.divergences

See docs/engine.md for the plan's fields and how a run flows.
"""

from typing import Any

from harness.interface import Adapter, Capabilities, TraceRound
from harness.outcomes import CATEGORIES, Outcome, UnsupportedOperation, capture
from harness.registry import AdapterSpec, Family, default_registry

#: the run API, imported when first used: ``import harness`` stays cheap for every worker
_RUN_API = {
    "AdapterChoice": "harness.run.choice", "Executor": "harness.engine.plan", "Limits": "harness.engine.plan",
    "Outputs": "harness.engine.plan", "Plan": "harness.engine.plan", "PlanError": "harness.engine.plan",
    "RunOutcome": "harness.engine.execute", "execute": "harness.engine.execute", "prepare": "harness.engine.execute",
}

__all__ = [
    "Adapter",
    "AdapterChoice",
    "AdapterSpec",
    "CATEGORIES",
    "Capabilities",
    "Executor",
    "Family",
    "Limits",
    "Outcome",
    "Outputs",
    "Plan",
    "PlanError",
    "RunOutcome",
    "TraceRound",
    "UnsupportedOperation",
    "capture",
    "default_registry",
    "execute",
    "prepare",
]


def __getattr__(name: str) -> Any:
    if name in _RUN_API:
        import importlib

        return getattr(importlib.import_module(_RUN_API[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
