"""A documented divergence's input domain (harness/cases/domain.py): checked when the
case file loads, compiled with ``regex`` only when a finding is first judged against it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.domain import Domain, DomainError
from harness.cases.loader import load_case_file

REPO = Path(__file__).resolve().parent.parent


def test_a_counted_repeat_is_not_compiled_until_it_is_matched() -> None:
    """``regex`` unrolls ``\\1{999998}`` into 125 MB; the shipped long cases' domains are
    loaded by every run but matched only by ``--long`` ones."""
    domain = Domain(regex=r"([ \t])\1{3}\S")
    assert "_compiled" not in vars(domain)
    assert domain.contains("x    y") and not domain.contains("x   y") and not domain.contains("x \t  y")
    assert "_compiled" in vars(domain)


def test_a_text_shorter_than_any_match_is_outside_without_compiling_the_pattern() -> None:
    # a default run judges its findings against the long cases' domains: no finding of
    # it is a million characters long, and compiling them set the run's peak
    domain = Domain(regex=r"([ \t])\1{999}\S")
    assert not domain.contains(" " * 999 + "x") and "_compiled" not in vars(domain)
    assert domain.contains("a" + " " * 1000 + "x") and not domain.contains(" \t" * 500 + "x")
    assert "_compiled" in vars(domain)
    shipped = [d.domain for case in load_case_file(REPO / "cases" / "long-inputs.yaml") for d in case.documented
               if d.domain is not None and d.domain.regex and "999998" in d.domain.regex]
    assert shipped and not any(d.contains(" " * 10**5 + "x") for d in shipped)
    assert not any("_compiled" in vars(d) for d in shipped)


def test_the_shipped_long_cases_load_without_compiling_their_domains() -> None:
    cases = load_case_file(REPO / "cases" / "long-inputs.yaml")
    domains = [d.domain for case in cases for d in case.documented if d.domain is not None and d.domain.regex]
    assert len(domains) >= 3
    assert not any("_compiled" in vars(d) for d in domains)


@pytest.mark.parametrize("pattern", ["(unclosed", r"\p{NoSuchProperty}", "a{2,1}"])
def test_a_bad_pattern_fails_when_the_domain_is_made(pattern: str) -> None:
    with pytest.raises(DomainError, match="a valid `regex` pattern"):
        Domain(regex=pattern)
