"""The paths a golden records per adapter and input.

An adapter that walks its library's API surface (:attr:`Capabilities.api_surface`:
tiktoken, tokenizers, transformers) records every path of it
(:func:`harness.checks.api_surface.surface_of`). Any other adapter records the common
operations of tokconf's interface under the same path names where they mean the same:
``encode[default|all|ordinary|one]``, ``encode_ordinary``, ``encode_batch[ordinary]``,
and ``decode_bytes`` / ``decode[replace]`` of the IDs of ``encode[all]``.
"""

from __future__ import annotations

from harness.calls import Calls, surface_from_data
from harness.cases.model import Policy
from harness.checks.api_surface import surface_of
from harness.checks.base import ALL, DEFAULT, ORDINARY
from harness.outcomes import Outcome

__all__ = ["attributes_for", "paths_for"]


def paths_for(calls: Calls, text: str) -> dict[str, Outcome]:
    """Every recorded path of ``calls`` on ``text``, in a stable order."""
    calls.reset()
    surface = surface_of(calls, text)
    if surface is not None:
        return surface
    policies = [("default", DEFAULT), ("all", ALL), ("ordinary", ORDINARY)]
    literals = calls.literals_in(text)
    if literals:
        policies.append(("one", Policy(allowed_special=frozenset({literals[0]}), disallowed_special="all")))
    out = {f"encode[{label}]": calls.encode(text, policy) for label, policy in policies}
    caps = calls.info.capabilities
    if caps.encode_ordinary:
        out["encode_ordinary"] = calls.encode_ordinary(text)
    if caps.batch:
        out["encode_batch[ordinary]"] = calls.encode_batch((text,), ORDINARY)
    source = out["encode[all]"] if out["encode[all]"].is_ok else out.get("encode_ordinary")
    if source is not None and source.is_ok:
        out["decode_bytes"] = calls.decode_bytes(source.value)
        out["decode[replace]"] = calls.decode(source.value, "replace")
    return out


def attributes_for(calls: Calls) -> dict[str, Outcome]:
    """What does not depend on the input: the library's attributes and fixed probes, or
    for other adapters the special tokens they declare."""
    if calls.info.capabilities.api_surface:
        outcome = calls.api_attributes()
        if outcome.is_ok:
            return surface_from_data(outcome.value)
        if not outcome.is_unsupported:
            return {"api_attributes": outcome}
    return {"special_tokens": Outcome.ok(tuple(sorted(calls.info.special_tokens)))}
