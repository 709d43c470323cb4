"""How a finding becomes documented, unexpected or stale, and what explains what.

Shared by the runner and the pytest plugin, so both judge alike.

A **documented divergence** (``documented:`` in a case) covers one (adapter, check) on
that case: a finding there is *documented*; no finding is *stale*.

Every other finding is *unexpected*, unless it is **explained**: a documented divergence
of the same adapter reproduced somewhere in the run with a matching (check, kind). A
finding is matched by its own (check, kind) and by the few equivalences below, each of
which names one root cause that shows in more than one check:

======================================= =================================================
finding                                 also explained by a documented
======================================= =================================================
any check, kind ``declared:<policy>``   special-policy ``declared:<policy>`` (the
                                        adapter's declared special-token semantics)
vocab-consistency ``segmentation`` /    id-parity of the same kind (the token-round-trip
``content``                             property *is* id parity on vocabulary texts)
round-trip ``decode:<shape>``           decode ``<shape>|ok`` (its decoder raises on IDs
                                        the reference decodes)
per-token-decode ``piece:<shape>``      decode ``<shape>|ok`` (same, one ID at a time)
vocab-consistency                       decode ``<shape>|ok`` (same, on a special ID)
``special-decode:<shape>``
======================================= =================================================

    >>> from harness.checks.base import Finding
    >>> explainers(Finding("hf:gpt2", "encode-ordinary", "declared:always-special", "", "x"))
    [('encode-ordinary', 'declared:always-special'), ('special-policy', 'declared:always-special')]
    >>> explainers(Finding("minbpe:r50k_base", "round-trip", "decode:raised:unknown-id", "", "x"))
    [('round-trip', 'decode:raised:unknown-id'), ('decode', 'raised:unknown-id|ok')]
"""

from __future__ import annotations

from typing import Iterable

from harness.checks.base import Finding

__all__ = ["DocumentedKinds", "explainers"]


def explainers(finding: Finding) -> list[tuple[str, str]]:
    """The (check, kind) pairs whose documented reproduction explains ``finding``."""
    check, kind = finding.check, finding.kind
    out = [(check, kind)]
    if kind.startswith("declared:") and check != "special-policy":
        out.append(("special-policy", kind))
    if check == "vocab-consistency" and kind in ("segmentation", "content"):
        out.append(("id-parity", kind))
    if check == "round-trip" and kind.startswith("decode:"):
        out.append(("decode", kind[len("decode:"):] + "|ok"))
    if check == "per-token-decode" and kind.startswith("piece:"):
        out.append(("decode", kind[len("piece:"):] + "|ok"))
    if check == "vocab-consistency" and kind.startswith("special-decode:"):
        out.append(("decode", kind[len("special-decode:"):] + "|ok"))
    return out


class DocumentedKinds:
    """The (adapter, check, kind) triples that documented divergences reproduced."""

    def __init__(self, triples: Iterable[tuple[str, str, str]] = ()) -> None:
        self._triples: set[tuple[str, str, str]] = set(triples)

    def add(self, adapter: str, check: str, kind: str) -> None:
        self._triples.add((adapter, check, kind))

    def explains(self, finding: Finding) -> bool:
        return any((finding.adapter, c, k) in self._triples for c, k in explainers(finding))

    def __contains__(self, triple: object) -> bool:
        return triple in self._triples

    def __len__(self) -> int:
        return len(self._triples)
