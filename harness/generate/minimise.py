"""Shrinking a finding: the same check, the same kind, on the smallest text.

:func:`harness.generate.shrink.shrink` is the algorithm; this module says what "still fails"
means for a :class:`~harness.checks.base.Finding`: running its check again on the
candidate text (with the same adapter, reference and policy) gives a finding of the same
*kind*, and the candidate is inside both adapters' domains. Findings tied to a case's own
expectations or decode probes are not shrunk: another text has no expectation.
"""

from __future__ import annotations

from harness.calls import Calls
from harness.cases.model import Policy
from harness.checks.base import ORDINARY, SKIP, Finding, Result, Subject
from harness.checks import run_text_check
from harness.checks.ids import compare_ids
from harness.generate.shrink import shrink_text

__all__ = ["recheck", "shrink_finding", "shrink_finding_bounded", "shrinkable"]

_SHRINKABLE_VOCAB_KINDS = frozenset({"segmentation", "content"})


def recheck(finding: Finding, text: str, adapter: Calls, reference: Calls, policy: Policy) -> Result:
    """Run the finding's check again on another text (what shrinking asks)."""
    adapter.reset()
    reference.reset()
    if not (adapter.in_domain(text) and reference.in_domain(text)):
        return SKIP
    if finding.check == "vocab-consistency":
        return compare_ids(Subject(text, ORDINARY, adapter, reference), finding.check)
    return run_text_check(finding.check, Subject(text, policy, adapter, reference))


def shrinkable(finding: Finding) -> bool:
    if not finding.text or not finding.shrinkable:
        return False
    return finding.check != "vocab-consistency" or finding.kind in _SHRINKABLE_VOCAB_KINDS


def shrink_finding(finding: Finding, adapter: Calls, reference: Calls, policy: Policy, *, max_calls: int = 1500,
                   max_seconds: float | None = None) -> Finding:
    """The finding on the smallest text that fails the same check with the same kind."""
    return shrink_finding_bounded(finding, adapter, reference, policy, max_calls=max_calls,
                                  max_seconds=max_seconds)[0]


def shrink_finding_bounded(finding: Finding, adapter: Calls, reference: Calls, policy: Policy, *,
                           max_calls: int = 1500, max_seconds: float | None = None) -> tuple[Finding, bool]:
    """:func:`shrink_finding`, and whether ``max_seconds`` cut it short (then the text
    is the smallest found in time, not necessarily minimal)."""
    if not shrinkable(finding):
        return finding, False

    def same_failure(text: str) -> bool:
        result = recheck(finding, text, adapter, reference, policy)
        return isinstance(result, Finding) and result.shows(finding.kind)

    shrunk = shrink_text(finding.text, same_failure, max_calls=max_calls, max_seconds=max_seconds)
    if shrunk.text == finding.text:
        # nothing smaller fails (or no call was allowed): the finding already is the one on
        # this text, and checking it again would walk every path once more; on a long input
        # that is the whole API surface of both adapters, for each finding on it
        return finding, shrunk.timed_out
    again = recheck(finding, shrunk.text, adapter, reference, policy)
    if not isinstance(again, Finding):
        return finding, shrunk.timed_out
    # the shrunk text may show other kinds too: this finding stays the kind it was
    return next((f for f in again.each_kind() if f.kind == finding.kind), again), shrunk.timed_out
