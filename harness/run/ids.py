"""Divergence ids from content: the same divergence has the same id in every run.

Ids used to be positions (``d0018`` was the eighteenth divergence in sort order), so one
new finding renamed every divergence after it and a bookmark, a ticket or ``tokconf diff``
pointed at a different one in the next run (issue 21). An id is now a hash of what the
divergence *is*: adapter, check, kind, the (canonical, shrunk) input, the policy it was
seen under and the case that documents it. Its status is left out on purpose, so a
documented divergence that goes stale keeps its name. Two records with the same content
(which the settling does not produce, but a plugin's check might) get ``-2``, ``-3`` in
their sort order, so ids stay unique.
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable

from harness.checks.base import policy_flags
from harness.run.result import DivergenceRecord

__all__ = ["assign_ids", "content_id"]

#: hex digits of SHA-256 kept: 40 bits, so a run's few hundred divergences never collide
#: by chance (and a collision would only add a suffix)
DIGITS = 10


def content_id(record: DivergenceRecord) -> str:
    """``d`` + 10 hex digits of the SHA-256 of the divergence's content.

    >>> from harness.run.evidence import Evidence
    >>> e = Evidence(None, None, {}, {}, {}, {}, "")
    >>> r = DivergenceRecord("a:x", None, "round-trip", "x", "unexpected", "generated", None, None, None,
    ...                      "\\ud800", "content", "", e)
    >>> content_id(r) == content_id(DivergenceRecord(**{**r.__dict__, "status": "stale", "occurrences": 3}))
    True
    >>> content_id(r) != content_id(DivergenceRecord(**{**r.__dict__, "text": "\\ud801"}))
    True
    """
    content = [record.adapter, record.check, record.kind, record.text, policy_flags(record.policy), record.case]
    digest = hashlib.sha256(json.dumps(content, ensure_ascii=True).encode("ascii")).hexdigest()
    return "d" + digest[:DIGITS]


def assign_ids(records: Iterable[DivergenceRecord]) -> None:
    """Give every record its content id (in sort order, so a repeat's suffix is stable)."""
    taken: dict[str, int] = {}
    for record in sorted(records, key=DivergenceRecord.sort_key):
        ident = content_id(record)
        taken[ident] = taken.get(ident, 0) + 1
        record.id = ident if taken[ident] == 1 else f"{ident}-{taken[ident]}"
