"""How a finding becomes documented, unexpected or stale, and what explains what.

Shared by the runner and the pytest plugin, so both judge alike.

A **documented divergence** (``documented:`` in a case) covers one (adapter, check) on
that case: a finding there is *documented*; no finding is *stale*. When it reproduces,
it becomes an :class:`Absorber` for the (check, kind) it showed (or the ``kind`` the case
declares), on **its own input** and, if the case declares one, on its **input domain**
(:class:`harness.cases.domain.Domain`). Any other finding is *unexpected* unless an
absorber of the same adapter covers it: same (check, kind) — or one of the equivalences
below, each naming one root cause that shows in more than one check — *and* the
finding's (shrunk) input is the absorber's own input or lies in its domain. So a quirk
documented once explains the class of inputs it declares, and nothing else: a bug of the
same kind on an unrelated input still fails.

The adapter-level declarations stay adapter-wide: a finding of kind
``declared:<policy>`` (the adapter's declared special-token semantics) is explained by a
reproduced ``special-policy`` declaration on any input; closed alphabets never produce
findings outside their domain in the first place.

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

from dataclasses import dataclass, field
from typing import Any

from harness.cases.domain import Domain
from harness.checks.base import Finding

__all__ = ["Absorber", "Documentation", "MAX_EXAMPLES", "explainers"]

#: shrunk examples kept per documented divergence, to show what it absorbed
MAX_EXAMPLES = 3


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


@dataclass(eq=False)
class Absorber:
    """A reproduced documented divergence, and the findings it has explained so far."""

    adapter: str
    check: str
    kind: str
    text: str
    domain: Domain | None = None
    #: the documented record this absorber counts into (a DivergenceRecord), if any
    record: Any = None
    absorbed: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def adapter_wide(self) -> bool:
        return self.kind.startswith("declared:")

    def covers(self, finding: Finding, text: str) -> bool:
        """Same adapter, a matching (check, kind), and ``text`` inside what it declares."""
        if finding.adapter != self.adapter or (self.check, self.kind) not in explainers(finding):
            return False
        return self.adapter_wide or text == self.text or (self.domain is not None and self.domain.contains(text))

    def absorb(self, example: str | None) -> None:
        """Count one explained finding; keep its shrunk input while examples are few."""
        self.absorbed += 1
        if example is not None and len(self.examples) < MAX_EXAMPLES and example not in self.examples:
            self.examples.append(example)
        if self.record is not None:
            self.record.absorbed = self.absorbed
            self.record.absorbed_examples = list(self.examples)


class Documentation:
    """Every reproduced documented divergence of the run, as absorbers."""

    def __init__(self) -> None:
        self.absorbers: list[Absorber] = []
        self._keys: dict[tuple[str, str, str, str, Domain | None], Absorber] = {}

    def add(self, adapter: str, check: str, kind: str, text: str, *,
            domain: Domain | None = None, record: Any = None) -> Absorber:
        key = (adapter, check, kind, text, domain)
        if key not in self._keys:
            self._keys[key] = Absorber(adapter, check, kind, text, domain, record)
            self.absorbers.append(self._keys[key])
        return self._keys[key]

    def absorber_for(self, finding: Finding, text: str | None = None) -> Absorber | None:
        """The first absorber that covers ``finding`` on ``text`` (default: its own text)."""
        text = finding.text if text is None else text
        for absorber in self.absorbers:
            if absorber.covers(finding, text):
                return absorber
        return None

    def adapter_wide_for(self, finding: Finding) -> Absorber | None:
        """An adapter-level declaration that explains ``finding`` wherever it occurs."""
        for absorber in self.absorbers:
            if absorber.adapter_wide and absorber.covers(finding, finding.text):
                return absorber
        return None

    def __len__(self) -> int:
        return len(self.absorbers)
