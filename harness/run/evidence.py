"""Evidence for one divergence: what a person needs to see it and to reproduce it.

Given a (shrunk) :class:`~harness.checks.base.Finding`, :func:`gather` collects

- the index of the first differing ID, when two ID lists are compared;
- the first differing pre-token chunk: the reference's ``pretokenize`` splits the input,
  and the first chunk both adapters encode differently on its own is where they part;
- the token pieces of each ID list (``visible_bytes`` of ``token_bytes``) and their hex;
- the merge rounds of the adapters that can trace;
- the command that reproduces it: ``tokconf encode --escapes --impl A --impl B -- '...'``
  (``tokconf decode`` for divergences about given IDs), with the ``--plugin`` flags an
  adapter from a plugin needs and the flags of the policy it was seen under.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from harness.calls import Calls
from harness.checks.base import Finding, declared_policy, first_difference, policy_flags
from harness.escapes import escape_text, visible_bytes
from harness.outcomes import Outcome

__all__ = ["Evidence", "gather", "plugin_target", "reproduce_command"]

#: Checks whose divergences are about how text became IDs: a differing chunk means something.
_CHUNK_CHECKS = frozenset({"id-parity", "vocab-consistency", "expected", "error-category"})
_MAX_TRACE_ROUNDS = 300


@dataclass(frozen=True)
class Evidence:
    first_difference: int | None
    first_differing_chunk: str | None
    outcomes: dict[str, Outcome]
    pieces: dict[str, list[str | None]]
    piece_bytes: dict[str, list[str | None]]
    traces: dict[str, list[dict[str, Any]]]
    reproduce: str


def plugin_target(calls: Calls) -> str | None:
    """``module:attr`` when the adapter came from ``--plugin``, else ``None``.

    >>> from harness.calls import AdapterInfo
    >>> from harness.interface import Capabilities
    >>> class Fake: info = AdapterInfo("x:y", "e", "", Capabilities(), (), "plugin tests.wrong_adapters:crlf")
    >>> plugin_target(Fake())
    'tests.wrong_adapters:crlf'
    """
    provider = calls.info.provider
    return provider[len("plugin "):] if provider.startswith("plugin ") else None


def reproduce_command(finding: Finding, adapter: Calls, reference: Calls) -> str:
    """The shell command that shows this divergence again."""
    names = [adapter.name] if adapter is reference else [adapter.name, reference.name]
    plugins = sorted({t for t in (plugin_target(adapter), plugin_target(reference)) if t})
    parts: list[str] = ["tokconf"]
    if finding.decode_ids is not None:
        parts.append("decode")
        for target in plugins:
            parts += ["--plugin", target]
        for name in names:
            parts += ["--impl", name]
        parts += ["--", *(str(i) for i in finding.decode_ids)]
    else:
        parts += ["encode", "--escapes"]
        for target in plugins:
            parts += ["--plugin", target]
        for name in names:
            parts += ["--impl", name]
        parts += policy_flags(finding.policy)
        parts += ["--", escape_text(finding.text)]
    return " ".join(shlex.quote(p) for p in parts)


def _calls_for(label: str, adapter: Calls, reference: Calls) -> Calls:
    if label == "expected":
        return reference
    if reference is not adapter and (label == reference.name or label.startswith(reference.name + " ")):
        return reference
    return adapter


def first_differing_chunk(finding: Finding, adapter: Calls, reference: Calls) -> str | None:
    if adapter is reference or not finding.text or finding.check not in _CHUNK_CHECKS:
        return None
    chunks = reference.pretokenize(finding.text)
    if not chunks.is_ok:
        return None
    ref_policy = declared_policy(finding.policy, adapter.info.capabilities.special_policy)
    for chunk in chunks.value:
        if not adapter.encode(chunk, finding.policy).same_as(reference.encode(chunk, ref_policy)):
            return chunk
    return None


def gather(finding: Finding, adapter: Calls, reference: Calls, *, extra_outcomes: dict[str, Outcome] | None = None) -> Evidence:
    """Collect the evidence for ``finding``; calls are memoised, so this is cheap after a check."""
    pieces: dict[str, list[str | None]] = {}
    piece_hex: dict[str, list[str | None]] = {}
    for label, ids in finding.ids:
        calls = _calls_for(label, adapter, reference)
        outcomes = [calls.token_bytes(i) for i in ids]
        pieces[label] = [visible_bytes(o.value) if o.is_ok else None for o in outcomes]
        piece_hex[label] = [o.value.hex() if o.is_ok else None for o in outcomes]
    difference = first_difference(finding.ids[0][1], finding.ids[1][1]) if len(finding.ids) >= 2 else None
    traces: dict[str, list[dict[str, Any]]] = {}
    if finding.text:
        for calls in (adapter, reference):
            if calls.info.capabilities.trace and calls.name not in traces:
                rounds = calls.trace(finding.text)
                if rounds.is_ok:
                    traces[calls.name] = [r.to_json() for r in rounds.value[:_MAX_TRACE_ROUNDS]]
    outcomes = dict(finding.outcomes)
    outcomes.update(extra_outcomes or {})
    return Evidence(
        first_difference=difference,
        first_differing_chunk=first_differing_chunk(finding, adapter, reference),
        outcomes=outcomes,
        pieces=pieces,
        piece_bytes=piece_hex,
        traces=traces,
        reproduce=reproduce_command(finding, adapter, reference),
    )
