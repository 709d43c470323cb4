"""The deterministic shrinker (harness.generate.shrink) and shrinking of findings (harness.generate.minimise)."""

from __future__ import annotations

import pytest

from harness.calls import Calls, InProcess
from harness.checks.base import ORDINARY, Finding, Subject
from harness.checks import run_text_check
from harness.generate.minimise import shrink_finding, shrinkable
from harness.generate.shrink import shrink, simplicity
from tests.wrong_adapters import toy


def test_shrinks_to_the_crlf_inside_a_longer_text() -> None:
    assert shrink("ab\r\ncd\r", lambda s: "\r\n" in s) == "\r\n"


def test_simplify_pass_turns_a_trailing_tab_into_a_space() -> None:
    assert shrink("xyz\t", lambda s: s[-1:].isspace()) == " "


def test_result_is_one_minimal() -> None:
    text = "the quick brown fox jumps over the lazy dog"

    def fails(s: str) -> bool:
        return "q" in s and "z" in s and s.index("q") < s.index("z")

    result = shrink(text, fails)
    assert result == "qz"
    for i in range(len(result)):
        assert not fails(result[:i] + result[i + 1 :])


def test_the_empty_string_is_a_candidate() -> None:
    assert shrink("abc", lambda s: True) == ""


def test_same_input_same_result_and_no_text_tried_twice() -> None:
    seen: list[str] = []

    def fails(s: str) -> bool:
        seen.append(s)
        return "7" in s

    first = shrink("12345678907", fails)
    assert first == "7"
    assert len(seen) == len(set(seen))
    assert shrink("12345678907", lambda s: "7" in s) == first


def test_call_budget_is_respected() -> None:
    calls = []
    shrink("x" * 200 + "y", lambda s: calls.append(s) or "y" in s, max_calls=10)
    assert len(calls) <= 10


def test_a_predicate_that_raises_counts_as_not_failing() -> None:
    def fails(s: str) -> bool:
        if len(s) < 3:
            raise RuntimeError("boom")
        return True

    assert len(shrink("abcdef", fails)) == 3


def test_simplicity_orders_candidates_first_then_code_points() -> None:
    assert sorted("\t 0a\u4e2d\n", key=simplicity) == ["a", "0", " ", "\n", "\t", "\u4e2d"]


def _calls(adapter) -> Calls:  # type: ignore[no-untyped-def]
    return Calls(InProcess(adapter))


def test_shrink_finding_keeps_the_kind_and_reaches_the_minimal_input() -> None:
    adapter, reference = _calls(toy("crlf")), _calls(toy())
    text = "hello\tworld\r\n and more"
    finding = run_text_check("id-parity", Subject(text, ORDINARY, adapter, reference))
    assert isinstance(finding, Finding) and finding.kind == "content"
    smallest = shrink_finding(finding, adapter, reference, ORDINARY)
    assert smallest.text == "\r\n"
    assert smallest.kind == "content"
    assert smallest.ids == (("toy:crlf", (10,)), ("toy:bytes", (13, 10)))


def test_case_expectations_and_probes_are_not_shrunk() -> None:
    finding = Finding("a:b", "expected", "ids", "", "long text", shrinkable=False)
    assert not shrinkable(finding)
    assert not shrinkable(Finding("a:b", "vocab-consistency", "special-duplicate", "", "<|x|>"))
    assert shrinkable(Finding("a:b", "vocab-consistency", "segmentation", "", " Conveyor"))
    assert not shrinkable(Finding("a:b", "id-parity", "content", "", ""))


@pytest.mark.parametrize("bug, text, minimal", [
    ("rstrip", "abc  \n", " "),
    ("crlf", "x\r\ny", "\r\n"),
])
def test_round_trip_findings_shrink_too(bug: str, text: str, minimal: str) -> None:
    adapter = _calls(toy(bug))
    finding = run_text_check("round-trip", Subject(text, ORDINARY, adapter, adapter))
    assert isinstance(finding, Finding) and finding.kind == "bytes"
    assert shrink_finding(finding, adapter, adapter, ORDINARY).text == minimal
