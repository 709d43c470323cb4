"""id-parity, error-category and expected, on toy adapters and a real tiktoken pair."""

from __future__ import annotations

import pytest

from harness.cases.model import Case, ExpectedError, ExpectedRound, Policy
from harness.checks.base import AGREE, ALL, DEFAULT, ORDINARY, SKIP, UNSUPPORTED, Finding
from tests.wrong_adapters import DropLastMerge, ToyClosed, toy
from tests.check_helpers import REF, calls, run



def test_id_parity_agrees_with_an_equal_adapter_and_skips_the_reference_itself() -> None:
    # the reference against itself compares nothing: not an input of its row (issue 21)
    assert run("id-parity", REF, "héllo\r\n") == SKIP
    assert run("id-parity", calls(toy(name="toy:twin")), "héllo\r\n") == AGREE


def test_id_parity_content_when_the_bytes_differ() -> None:
    finding = run("id-parity", calls(toy("crlf")), "a\r\nb")
    assert isinstance(finding, Finding)
    assert (finding.check, finding.kind, finding.adapter) == ("id-parity", "content", "toy:crlf")
    assert finding.ids == (("toy:crlf", (97, 10, 98)), ("toy:bytes", (97, 13, 10, 98)))


def test_id_parity_segmentation_when_only_the_tokens_differ() -> None:
    from implementations.tiktoken import TiktokenAdapter

    wrong, tiktoken = calls(DropLastMerge()), calls(TiktokenAdapter("cl100k_base"))
    finding = run("id-parity", wrong, " Conveyor", reference=tiktoken)
    assert isinstance(finding, Finding) and finding.kind == "segmentation"
    assert finding.ids[1] == ("tiktoken:cl100k_base", (100255,))
    assert len(finding.ids[0][1]) == 2


def test_id_parity_leaves_failures_to_error_category() -> None:
    assert run("id-parity", calls(toy("strict-surrogates")), "a\ud800") == SKIP


def test_error_category_kind_names_both_shapes() -> None:
    finding = run("error-category", calls(toy("strict-surrogates")), "a\ud800")
    assert isinstance(finding, Finding) and finding.kind == "raised:unencodable-text|ok"
    mine = dict(finding.outcomes)["toy:strict-surrogates"]
    assert (mine.category, mine.native_type) == ("unencodable-text", "builtins.UnicodeEncodeError")


def test_error_category_agrees_when_both_refuse_alike() -> None:
    assert run("error-category", calls(toy(name="toy:twin")), "<|x|>", DEFAULT) == AGREE


def test_a_declared_policy_is_not_charged_to_id_parity_or_error_category() -> None:
    hf_like = calls(toy(policy="always-special", name="toy:always"))
    assert run("id-parity", hf_like, "a<|x|>", DEFAULT) == AGREE
    assert run("error-category", hf_like, "a<|x|>", DEFAULT) == AGREE
    # without a literal the declaration changes nothing, so differences still count
    assert run("id-parity", calls(toy("crlf", policy="always-special")), "\r\n", DEFAULT).kind == "content"


def test_an_undeclared_special_bug_is_charged() -> None:
    finding = run("error-category", calls(toy("always-special")), "<|x|>", DEFAULT)
    assert isinstance(finding, Finding) and finding.kind == "ok|raised:disallowed-special"


def _case(**kwargs) -> Case:  # type: ignore[no-untyped-def]
    return Case(id="c", text=kwargs.pop("text", "ab"), file="t.yaml", line=1, **kwargs)


def test_expected_ids_by_encoding_and_by_adapter() -> None:
    case = _case(expect_ids={"toy-bytes": (97, 98), "toy:crlf": (1,)})
    assert run("expected", REF, "ab", case=case) == AGREE
    finding = run("expected", calls(toy("crlf")), "ab", case=case)
    assert isinstance(finding, Finding) and finding.kind == "ids" and not finding.shrinkable
    assert "expected IDs [1], got [97, 98]" in finding.detail


def test_expected_error_with_short_or_qualified_native_type() -> None:
    closed = calls(ToyClosed())
    for native in ("KeyError", "builtins.KeyError", None):
        case = _case(text="abc", expect_errors={"toy:closed": ExpectedError("unknown-token", native)})
        assert run("expected", closed, "abc", case=case, reference=closed) == AGREE
    case = _case(text="abc", expect_errors={"toy:closed": ExpectedError("unknown-token", "ValueError")})
    assert run("expected", closed, "abc", case=case, reference=closed).kind == "error:raised:unknown-token"


def test_expected_round_trip_both_ways() -> None:
    assert run("expected", REF, "a\ud800", case=_case(text="a\ud800", expect_roundtrip=False)) == AGREE
    assert run("expected", REF, "ab", case=_case(expect_roundtrip=True)) == AGREE
    finding = run("expected", calls(toy("rstrip")), "a ", case=_case(text="a ", expect_roundtrip=True))
    assert isinstance(finding, Finding) and finding.kind == "roundtrip"


def test_expected_pretokens_and_trace() -> None:
    case = _case(text="a b", expect_pretokens={"toy-bytes": ("a", " ", "b")})
    assert run("expected", REF, "a b", case=case) == AGREE
    case = _case(text="a b", expect_pretokens={"toy-bytes": ("a b",)})
    assert run("expected", REF, "a b", case=case).kind == "pretokens"
    case = _case(expect_trace={"toy:bytes": (ExpectedRound(rank=0),)})
    assert run("expected", REF, "ab", case=case) == UNSUPPORTED


def test_expected_skips_inputs_without_a_case_or_expectation() -> None:
    assert run("expected", REF, "ab") == SKIP
    assert run("expected", REF, "ab", case=_case()) == SKIP


@pytest.mark.parametrize("policy", [DEFAULT, ALL, ORDINARY])
def test_reference_agrees_with_itself_under_every_policy(policy: Policy) -> None:
    assert run("error-category", REF, "x<|yy|>y", policy) == AGREE
    assert run("id-parity", REF, "x<|yy|>y", policy) == SKIP  # itself: nothing compared
