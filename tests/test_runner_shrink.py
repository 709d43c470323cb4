"""The deterministic shrinker (harness.generate.shrink) and shrinking of findings (harness.generate.minimise)."""

from __future__ import annotations

import pytest

from harness.calls import Calls, InProcess
from harness.checks.base import ORDINARY, Finding, Subject
from harness.checks import run_text_check
from harness.generate.minimise import shrink_finding, shrinkable
from harness.generate.shrink import shrink, shrink_text, simplicity
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


def test_a_length_threshold_on_a_long_document_shrinks_by_its_ends_in_few_calls() -> None:
    # a drop-in that loses the last character of inputs over 50,000 characters, seen on a
    # 10^5-character document whose unit is too long for the runs pass: ddmin alone spent
    # its whole minute (1,500 calls on 50,000-character texts) and kept 800 MB of them
    document = "The report was due on Monday, so Mara read logs.\n" * 2100
    calls: list[int] = []

    def fails(s: str) -> bool:
        calls.append(len(s))
        return len(s) > 50_000

    shrunk = shrink_text(document, fails)
    assert len(shrunk.text) == 50_001 and not shrunk.timed_out
    assert shrunk.text == document[:50_001][-50_001:]  # the prefix, then its suffix
    # two bisections of 17 tries each, then ddmin up to 64 chunks (2 + 4 + ... + 64 = 126)
    assert len(calls) == shrunk.calls <= 17 * 2 + 126, len(calls)


def test_a_length_threshold_on_a_few_thousand_characters_shrinks_by_its_ends_too() -> None:
    # tests/engine_adapters.py's long-tail drop-in loses the last character of inputs over
    # 5,000 characters; its findings are generated inputs of about 6,000, below the long
    # tier's 10^4. ddmin alone spent all 1,500 calls on this text and stopped at 5,005
    text = "".join(chr(0x61 + (i * 7) % 26) + (" " if i % 5 == 4 else "") for i in range(5_000))
    calls: list[int] = []

    def fails(s: str) -> bool:
        calls.append(len(s))
        return len(s) > 5_000

    shrunk = shrink_text(text, fails, max_calls=1_500)
    assert len(text) == 6_000 and shrunk.text == text[:5_001][-5_001:] and not shrunk.timed_out
    # two bisections of 13 tries each, then ddmin up to 64 chunks
    assert len(calls) == shrunk.calls <= 13 * 2 + 126, len(calls)


def test_a_fault_inside_a_few_thousand_characters_still_shrinks_to_one_minimal() -> None:
    # the ends come in to the fault; what is left is short, so every pass runs on it
    text = "x" * 1_500 + "\r\n" + "y" * 2_500
    assert shrink(text, lambda s: "\r\n" in s) == "\r\n"
    # two places far apart: the ends keep both, ddmin's chunks drop what is between
    assert shrink("q" + "z" * 3_000 + "w", lambda s: s.startswith("q") and s.endswith("w")) == "qw"


def test_a_long_text_keeps_its_trigger_inside() -> None:
    # a fault at one character deep inside a long text: the ends come in to it
    text = "a" * 40_000 + "\u0301" + "b" * 40_000
    assert shrink(text, lambda s: "\u0301" in s) == "\u0301"


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


def test_findings_are_ordered_as_the_per_character_key_ordered_them_without_making_it() -> None:
    # issue 25: the old key made a list of per-character tuples for every finding's text at
    # once (186 MB for a default run's long inputs); TextSize compares lazily, same order
    import random
    import tracemalloc

    from harness.run.settle import TextSize

    rng = random.Random(25)
    texts = ["".join(rng.choice("ab \t\n0你\ud800é") for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    assert sorted(texts, key=TextSize) == sorted(texts, key=lambda t: (len(t), [simplicity(c) for c in t]))
    long_texts = [c * 10**5 for c in "ab \t你"]
    tracemalloc.start()
    try:
        ordered = sorted(long_texts, key=TextSize)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ordered == sorted(long_texts, key=lambda t: simplicity(t[0]))  # one character each, one length
    assert peak < 10**6, peak  # the per-character keys were 5 x 10^5 tuples, tens of MB
