"""Real tiktoken behind adapters whose API surface is planted with one fault each.

``--plugin tests.surface_adapters:adapters`` registers them:

- ``planted:batch-drift``: ``encode_batch`` under ``allowed_special="all"`` drops the
  last ID (one release disagreeing with itself);
- ``planted:keyerror-became-valueerror``: a release where ``encode_single_token`` of a
  text that is no single token raises ``ValueError`` instead of ``KeyError`` (same
  category, another native type: what ``except KeyError:`` in user code notices).
"""

from __future__ import annotations

from harness.outcomes import Outcome
from harness.registry import AdapterSpec
from implementations.tiktoken import TiktokenAdapter


class _Planted(TiktokenAdapter):
    fault = ""

    def __init__(self) -> None:
        super().__init__("cl100k_base")
        self.name = f"planted:{self.fault}"

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        return [(path, self.plant(path, outcome)) for path, outcome in super().api_surface(text)]

    def plant(self, path: str, outcome: Outcome) -> Outcome:
        return outcome


class BatchDrift(_Planted):
    fault = "batch-drift"

    def plant(self, path: str, outcome: Outcome) -> Outcome:
        if path == "encode_batch[all]" and outcome.is_ok and outcome.value and outcome.value[0]:
            return Outcome.ok((outcome.value[0][:-1],))
        return outcome


class ErrorTypeChanged(_Planted):
    fault = "keyerror-became-valueerror"

    def plant(self, path: str, outcome: Outcome) -> Outcome:
        if path == "encode_single_token[text]" and outcome.native_type == "builtins.KeyError":
            return Outcome.raised(outcome.category or "internal-error", "builtins.ValueError", outcome.message or "")
        return outcome


class MethodRemoved(_Planted):
    """A newer release without ``decode_with_offsets`` (the path is gone from its walk)."""

    fault = "method-removed"

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        return [(p, o) for p, o in super().api_surface(text) if p != "decode_with_offsets"]


class NoLongerSupported(_Planted):
    """A newer release where ``decode_bytes_batch`` is listed but no longer offered."""

    fault = "no-longer-supported"

    def plant(self, path: str, outcome: Outcome) -> Outcome:
        if path == "decode_bytes_batch":
            return Outcome.raised("unsupported", "harness.outcomes.UnsupportedOperation", "no decode_bytes_batch")
        return outcome


class WalkCrashed(_Planted):
    """The walk itself raises (a release whose import of a helper module broke)."""

    fault = "walk-crashed"

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        raise RuntimeError("planted: the surface walk crashed")


def adapters() -> list[AdapterSpec]:
    return [AdapterSpec(name=f"planted:{cls.fault}", encoding="cl100k_base", factory=cls, library="tiktoken")
            for cls in (BatchDrift, ErrorTypeChanged)]
