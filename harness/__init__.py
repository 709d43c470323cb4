"""tokconf's engine: the adapter interface, outcomes, registry, vocabularies and runner."""

from harness.interface import Adapter, Capabilities, TraceRound
from harness.outcomes import CATEGORIES, Outcome, UnsupportedOperation, capture
from harness.registry import AdapterSpec, Family, default_registry

__all__ = [
    "Adapter",
    "AdapterSpec",
    "CATEGORIES",
    "Capabilities",
    "Family",
    "Outcome",
    "TraceRound",
    "UnsupportedOperation",
    "capture",
    "default_registry",
]
