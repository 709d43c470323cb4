"""special-policy and encode-ordinary."""

from __future__ import annotations

import pytest

from harness.checks.base import AGREE, SKIP, Finding
from harness.checks.special import policy_matrix
from tests.wrong_adapters import toy
from tests.check_helpers import REF, calls, run



def test_policy_matrix_labels() -> None:
    assert [label for label, _ in policy_matrix(["<|x|>"])] == ["default", "all", "ordinary", "one"]
    assert [label for label, _ in policy_matrix([])] == ["default", "all", "ordinary"]


@pytest.mark.parametrize("text", ["<|x|>", "a<|x|><|yy|>b", " <|yy|>\n", "<|x<|yy|>|>"])
def test_same_semantics_agree(text: str) -> None:
    assert run("special-policy", calls(toy(name="toy:twin")), text) == AGREE
    assert run("special-policy", REF, text) == AGREE  # the reference, structurally


def test_no_literal_no_check() -> None:
    assert run("special-policy", REF, "<|x") == SKIP


def test_a_text_refused_whatever_the_policy_is_skipped() -> None:
    assert run("special-policy", calls(toy("strict-surrogates")), "\ud800<|x|>") == SKIP


def test_undeclared_always_special_is_a_violation() -> None:
    finding = run("special-policy", calls(toy("always-special")), "<|x|>")
    assert isinstance(finding, Finding)
    assert finding.kind == "violation:default:ok|raised:disallowed-special"
    assert not finding.declared


@pytest.mark.parametrize("policy, kind", [
    ("always-special", "declared:always-special"),
    ("none", "declared:none"),
    ("ordinary-unless-allowed", "declared:ordinary-unless-allowed"),
])
def test_declared_policies_give_declared_differences(policy: str, kind: str) -> None:
    finding = run("special-policy", calls(toy(policy=policy, name=f"toy:{policy}")), "a<|x|>b<|yy|>")
    assert isinstance(finding, Finding) and finding.kind == kind and finding.declared


def test_a_declaration_permits_a_difference_it_does_not_demand_one() -> None:
    # declares "none" (literals always ordinary) yet behaves exactly like tiktoken
    modest = calls(toy(name="toy:modest"))
    modest.info = type(modest.info)(**{**modest.info.__dict__,
                                       "capabilities": type(modest.info.capabilities)(special_policy="none")})
    assert run("special-policy", modest, "<|x|>") == AGREE


def test_behaving_like_neither_tiktoken_nor_the_declaration_is_a_violation() -> None:
    # declares "none" (never special) but turns the literal into its ID under every policy
    confused = calls(toy("always-special", name="toy:confused"))
    confused.info = type(confused.info)(**{**confused.info.__dict__,
                                           "capabilities": type(confused.info.capabilities)(special_policy="none")})
    finding = run("special-policy", confused, "<|x|>")
    assert isinstance(finding, Finding) and finding.kind == "violation:default:ok|ok" and not finding.declared


def test_ordinary_ids_around_a_literal_are_not_this_checks_business() -> None:
    # a CRLF bug next to a literal: special IDs and errors agree, so special-policy agrees
    assert run("special-policy", calls(toy("crlf")), "\r\n<|x|>") == AGREE


def test_the_reference_is_checked_structurally() -> None:
    broken = calls(toy("always-special"))
    finding = run("special-policy", broken, "<|x|>", reference=broken)
    assert isinstance(finding, Finding) and finding.kind == "violation:default:ok"


def test_encode_ordinary() -> None:
    assert run("encode-ordinary", REF, "a<|x|>") == AGREE
    declared = run("encode-ordinary", calls(toy(policy="always-special", name="toy:a")), "a<|x|>")
    assert declared == AGREE  # the toy's encode_ordinary is the base class's: encode(..., ORDINARY)
