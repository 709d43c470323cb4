"""Acceptance: the default run catches every deliberately wrong adapter with a minimal input.

One run over the six adapters of ``tests/wrong_adapters.py`` (and their reference,
``tiktoken:cl100k_base``), with the shipped cases and the generated checks under the
``ci`` profile, exactly as ``tokconf run --plugin tests.wrong_adapters:everything`` runs
them. Where the minimal input does not depend on which input found the bug, it is
asserted exactly.
"""

from __future__ import annotations

import pytest

from harness.cases.loader import load_cases
from harness.registry import Registry
from harness.run.result import RunResult
from harness.run.runner import GenerationOptions, Runner, case_adapter_names
from harness.run.selection import select
from tests import wrong_adapters

NAMES = ["wrong:ltr-merge", "wrong:drop-last", "wrong:per-token", "wrong:rstrip", "wrong:always-special", "wrong:crlf"]


@pytest.fixture(scope="module")
def result() -> RunResult:
    registry = Registry()
    registry.load_entry_points()
    registry.add(wrong_adapters.everything(), provider="plugin tests.wrong_adapters:everything")
    cases = [case for case in load_cases() if not case.long]  # as a default `tokconf run` does
    selected = select(registry, impls=NAMES, case_adapters=case_adapter_names(cases))
    runner = Runner(selected)
    runner.run_vocab()
    runner.run_cases(cases)
    runner.run_generated(GenerationOptions(profile="ci"))
    return runner.finish()


def unexpected(result: RunResult, adapter: str, check: str) -> list:  # type: ignore[type-arg]
    """Unexpected divergences of ``adapter`` that ``check`` saw (as any of their symptoms)."""
    return [d for d in result.divergences if d.adapter == adapter and d.status == "unexpected"
            and any(c == check for c, _, _ in d.symptoms)]


def test_every_wrong_adapter_fails_the_run_and_the_reference_does_not(result: RunResult) -> None:
    assert result.failed
    assert result.references["cl100k_base"] == "tiktoken:cl100k_base"
    for name in NAMES:
        assert any(cell.status == "unexpected" for cell in result.matrix[name].values()), name
    reference = result.matrix["tiktoken:cl100k_base"]
    # the one documented divergence of the reference itself: tiktoken's encode_to_numpy
    # refuses a lone surrogate that encode replaces (cases/tiktoken-numpy.yaml)
    assert {check for check, cell in reference.items() if cell.status == "documented"} == {"api-surface"}
    assert all(cell.status in ("agree", "documented", "unsupported", "empty") for cell in reference.values())


def test_crlf_mishandling_shrinks_to_crlf(result: RunResult) -> None:
    (record,) = unexpected(result, "wrong:crlf", "id-parity")
    assert record.text == "\r\n" and record.kind == "content"
    assert record.evidence.outcomes["wrong:crlf"].value == (198,)
    assert record.evidence.outcomes["tiktoken:cl100k_base"].value == (319,)
    assert record.evidence.pieces == {"wrong:crlf": ["␤"], "tiktoken:cl100k_base": ["␍␤"]}
    assert record.evidence.first_difference == 0
    assert record.evidence.first_differing_chunk == "\r\n"
    assert record.evidence.reproduce == (
        "tokconf encode --escapes --plugin tests.wrong_adapters:everything --impl wrong:crlf "
        "--impl tiktoken:cl100k_base -- '\\r\\n'"
    )
    assert [d.text for d in unexpected(result, "wrong:crlf", "round-trip")] == ["\r\n"]


def test_trailing_whitespace_stripper_shrinks_to_one_space(result: RunResult) -> None:
    (record,) = unexpected(result, "wrong:rstrip", "id-parity")
    assert record.text == " " and record.kind == "content"
    assert record.evidence.outcomes["wrong:rstrip"].value == ()
    assert [d.text for d in unexpected(result, "wrong:rstrip", "round-trip")] == [" "]


def test_lost_last_merge_is_found_by_the_token_it_made(result: RunResult) -> None:
    (record,) = unexpected(result, "wrong:drop-last", "vocab-consistency")
    assert record.text == " Conveyor" and record.kind == "segmentation"
    assert record.evidence.outcomes["tiktoken:cl100k_base"].value == (100255,)
    assert record.evidence.pieces["tiktoken:cl100k_base"] == ["␠Conveyor"]


def test_always_special_violates_the_policy_it_declares(result: RunResult) -> None:
    # one cause per literal it fails to refuse: each literal is its own minimal input, and
    # every check that saw the literal is a symptom of that one divergence
    records = {d.text: d for d in unexpected(result, "wrong:always-special", "special-policy")}
    assert sorted(records) == sorted(["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>",
                                      "<|fim_middle|>", "<|fim_suffix|>"])
    record = records["<|endoftext|>"]
    symptoms = {(c, k) for c, k, _ in record.symptoms}
    assert ("special-policy", "violation:default:ok|raised:disallowed-special") in symptoms
    assert ("id-parity", "segmentation") in symptoms
    assert record.evidence.outcomes["wrong:always-special"].value == (100257,)
    assert all(d.adapter != "wrong:always-special" or d.text in records
               for d in result.divergences if d.status == "unexpected")


def test_per_token_decode_shrinks_to_one_split_character(result: RunResult) -> None:
    from implementations.tiktoken import TiktokenAdapter

    tiktoken = TiktokenAdapter("cl100k_base")
    for check in ("round-trip", "per-token-decode"):
        records = unexpected(result, "wrong:per-token", check)
        assert records
        for record in records:  # every character it splits is its own minimal input
            assert len(record.text) == 1 and len(tiktoken.encode(record.text)) >= 2, record.text
            assert ("round-trip", "text") in {(c, k) for c, k, _ in record.symptoms}
            assert "\ufffd" in record.evidence.outcomes["wrong:per-token"].value


def test_left_to_right_merging_shrinks_to_a_one_minimal_word(result: RunResult) -> None:
    from implementations.tiktoken import TiktokenAdapter

    tiktoken = TiktokenAdapter("cl100k_base")
    wrong = wrong_adapters.LeftToRightMerger()
    records = unexpected(result, "wrong:ltr-merge", "id-parity")
    assert records
    ordinary = dict(allowed_special=frozenset(), disallowed_special=())
    for record in records:  # each a distinct minimal input: nothing smaller still fails
        assert record.kind == "segmentation" and 1 < len(record.text) <= 4, record.text
        assert wrong.encode(record.text, **ordinary) != tiktoken.encode(record.text, **ordinary)
        for i in range(len(record.text)):
            shorter = record.text[:i] + record.text[i + 1 :]
            assert wrong.encode(shorter, **ordinary) == tiktoken.encode(shorter, **ordinary), (record.text, shorter)


def test_one_divergence_per_minimal_input_and_nothing_unexplained_for_the_reference(result: RunResult) -> None:
    keys = [(d.adapter, d.text) for d in result.divergences if d.status == "unexpected"]
    assert len(keys) == len(set(keys))
    assert {d.adapter for d in result.divergences if d.status == "unexpected"} == set(NAMES)
