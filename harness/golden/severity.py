"""The order of a gate's changes, and what collapses into one line (issue 22).

A gate of tiktoken 0.9.0's golden against 0.14.0 once listed 200 rows of
``now supported encode_to_numpy`` first (numpy was missing from the old environment) and
the real ``raised→ok`` and ``IDs changed`` rows under "... and 2857 more". Changes are
now ordered by what they mean for a user's code:

0. an answer changed: ``raised→ok``, ``ok→raised`` (``ok→timeout``, ``ok→crashed`` ...),
   ``IDs changed``, ``value changed``;
1. a failure changed: ``category changed``, ``error type changed``;
2. the surface changed: ``now supported``, ``no longer supported``, ``path added``,
   ``path removed``, and a corpus's ``input ...`` changes.

A path that appeared or disappeared (``now supported`` / ``no longer supported``) is one
:class:`Summary` per (adapter, path, kind): how many inputs, and the reason the
unsupported side gave (``numpy`` missing), never one row per input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

__all__ = ["Summary", "order_changes", "severity", "summarise"]

_FAILURE = frozenset({"category changed", "error type changed"})
_SURFACE = frozenset({"now supported", "no longer supported", "path added", "path removed", "input changed",
                      "input added", "input removed"})
#: changes that become one summary line per (adapter, path, kind)
SUMMARISED = frozenset({"now supported", "no longer supported"})


def severity(kind: str) -> int:
    """0: an answer changed; 1: a failure changed; 2: the surface changed.

    >>> [severity(k) for k in ("raised→ok", "IDs changed", "error type changed", "now supported")]
    [0, 0, 1, 2]
    """
    if kind in _FAILURE:
        return 1
    if kind in _SURFACE:
        return 2
    return 0


def order_changes(changes: Iterable[Any]) -> list[Any]:
    """``changes`` by severity; within one severity in the golden's order (stable)."""
    return sorted(changes, key=lambda c: severity(c.kind))


@dataclass(frozen=True)
class Summary:
    kind: str
    adapter: str
    now: str
    path: str
    inputs: int
    #: what the unsupported side said (the missing module, the method a release lacks)
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "adapter": self.adapter, "now": self.now, "path": self.path,
                "inputs": self.inputs, "why": self.why}

    def line(self) -> str:
        """``tiktoken@0.9.0:cl100k_base encode_to_numpy[all]: now supported on 2918 inputs (...)``"""
        return f"{self.adapter} -> {self.now} {self.path}: {self.kind} on {self.inputs} inputs ({self.why})"


def summarise(changes: Iterable[Any]) -> tuple[list[Any], list[Summary]]:
    """The changes that stay rows, and one summary per (adapter, now, path, kind) of the
    paths that appeared or disappeared, in order of first appearance."""
    rows, groups = [], {}
    for change in changes:
        if change.kind not in SUMMARISED:
            rows.append(change)
            continue
        key = (change.kind, change.adapter, change.now, change.path)
        unsupported = change.before if change.kind == "now supported" else change.after
        why = (unsupported.message or unsupported.native_type or "unsupported") if unsupported is not None else ""
        count, first_why = groups.get(key, (0, why))
        groups[key] = (count + 1, first_why)
    summaries = [Summary(kind, adapter, now, path, count, why[:200])
                 for (kind, adapter, now, path), (count, why) in groups.items()]
    return rows, summaries
