"""How many inputs lay outside each closed vocabulary's domain (issue 21).

A closed vocabulary (``Capabilities.alphabet``, or an adapter with its own
``in_domain``) is checked only on inputs inside its domain; the rest are not silently
dropped: the run's notes say, per adapter, how many of the inputs it was offered lay
outside. ``--jobs`` deltas carry their own tally, merged in unit order.
"""

from __future__ import annotations

from harness.calls import Calls

__all__ = ["DomainTally"]


class DomainTally:
    """adapter -> [inputs outside its domain, inputs offered], for closed vocabularies."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}

    def inside(self, adapter: Calls, reference: Calls, text: str) -> bool:
        """Whether ``text`` lies in both domains; a closed vocabulary's tally counts it."""
        inside = adapter.in_domain(text) and reference.in_domain(text)
        if adapter.info.capabilities.alphabet is not None or adapter.info.custom_domain:
            tally = self.counts.setdefault(adapter.name, [0, 0])
            tally[0] += not inside
            tally[1] += 1
        return inside

    def add(self, other: "DomainTally") -> None:
        for name, (outside, offered) in other.counts.items():
            tally = self.counts.setdefault(name, [0, 0])
            tally[0] += outside
            tally[1] += offered

    def notes(self) -> list[str]:
        """One line per closed vocabulary, in name order."""
        return [f"{name}: {outside} of {offered} inputs lay outside its closed vocabulary's domain "
                f"(a piece not in its vocabulary) and were not checked"
                for name, (outside, offered) in sorted(self.counts.items())]
