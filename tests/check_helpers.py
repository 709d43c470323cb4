"""Running one check on one input in tests: adapters wrapped as ``Calls``, a toy reference."""

from __future__ import annotations

from harness.calls import Calls, InProcess
from harness.cases.model import Case, Policy
from harness.checks.base import ORDINARY, Subject
from harness.checks import run_text_check
from tests.wrong_adapters import toy


def calls(adapter) -> Calls:  # type: ignore[no-untyped-def]
    return Calls(InProcess(adapter))


REF = calls(toy())


def run(check: str, adapter: Calls, text: str, policy: Policy = ORDINARY, *, reference: Calls = REF,
        case: Case | None = None):  # type: ignore[no-untyped-def]
    """The check's verdict on ``text``; answers remembered for an earlier input are dropped."""
    adapter.reset()
    reference.reset()
    return run_text_check(check, Subject(text, policy, adapter, reference, case))
