"""The corpus screen: which text checks a ``--corpus`` document runs.

A corpus is for scale: every document runs :data:`SCREEN_CHECKS`, what differs between
drop-ins at scale, at three adapter calls a document. A document
:mod:`harness.cases.corpus` tags ``screened`` (all but 1 in ``--full-checks-every``) runs
every text check only when the screen finds something, so a flagged document still shows
all its symptoms. Only the checks that ran are counted, so a cell's inputs say how many
documents it compared. Coverage reads back through the split pattern only the documents
that ran every check (:func:`ran_every_check`): that read-back costs 1.5 to 3 times
tiktoken's whole encode of a document (2 KB of prose: 650 to 940 us against 260 us), and
the report says on how many inputs the pattern was measured.
"""

from __future__ import annotations

from typing import Any, Iterable

from harness.cases.corpus import is_document
from harness.checks import TEXT_CHECKS, run_text_check
from harness.checks.base import Finding, Result, Subject

__all__ = ["SCREEN_CHECKS", "ran_every_check", "screened_only", "text_check_results"]

SCREEN_CHECKS: tuple[str, ...] = ("id-parity", "error-category", "round-trip")


def _screened(case: Any) -> bool:
    """A case file's own ``screened`` tag is only a tag: its ids cannot be a document's."""
    return "screened" in case.tags and is_document(case)


def screened_only(cases: Iterable[Any]) -> frozenset[str]:
    """The texts of ``cases`` that only the screen checks unless it finds something: those
    of screened documents and of no other case (a text also checked in full is asked in
    full)."""
    cases = list(cases)
    full = {case.text for case in cases if not _screened(case)}
    return frozenset(case.text for case in cases if _screened(case) and case.text not in full)


def text_check_results(case: Any, subject: Subject) -> list[tuple[str, Result]]:
    """(check, result) for every text check on ``subject``, or for the screen's alone when
    ``case`` is a screened corpus document on which they find nothing."""
    if _screened(case):
        results = [(check, run_text_check(check, subject)) for check in SCREEN_CHECKS]
        if not any(isinstance(result, Finding) for _, result in results):
            return results
    return [(check, run_text_check(check, subject)) for check in TEXT_CHECKS]


def ran_every_check(results: list[tuple[str, Result]]) -> bool:
    """Whether ``results`` (:func:`text_check_results`) are every text check's, not the
    screen's alone."""
    return len(results) == len(TEXT_CHECKS)
