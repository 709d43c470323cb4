"""The tiktoken reference adapters: issue 2's acceptance figures, as exact IDs and outcomes."""

from __future__ import annotations

import pytest

from harness.outcomes import capture
from harness.registry import default_registry


def adapter(name: str):
    return default_registry().get(name)


@pytest.mark.parametrize("name", ["tiktoken:gpt2", "tiktoken:r50k_base"])
@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Hi 你!", [17250, 220, 19526, 254, 0]),
        ("internationalization", [45609, 1634]),
        ("    hello world!!!", [220, 220, 220, 23748, 995, 10185]),
    ],
)
def test_gpt2_figures(name: str, text: str, ids: list[int]) -> None:
    assert adapter(name).encode(text) == ids


def test_gpt2_endoftext_as_ordinary_text() -> None:
    assert adapter("tiktoken:gpt2").encode("<|endoftext|>", disallowed_special=()) == [
        27, 91, 437, 1659, 5239, 91, 29
    ]


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Hi 你! 😊", [13347, 220, 57668, 0, 27623, 232]),
        ("hello world", [15339, 1917]),
        ("hello ", [15339, 220]),
        ("world", [14957]),
        ("    hello world!!!", [262, 24748, 1917, 12340]),
        (" hello1234!\n中文", [24748, 4513, 19, 4999, 16325, 17161]),
        ("Year 2024 and 1000000 dollars", [9679, 220, 2366, 19, 323, 220, 1041, 931, 15, 11441]),
        ("\ud83d", [5809]),  # tiktoken replaces a lone surrogate with U+FFFD
    ],
)
def test_cl100k_figures(text: str, ids: list[int]) -> None:
    assert adapter("tiktoken:cl100k_base").encode(text) == ids


def test_cl100k_pretokenizes_digits_in_threes() -> None:
    assert adapter("tiktoken:cl100k_base").pretokenize(" hello1234!\n中文") == [
        " hello", "123", "4", "!\n", "中文"
    ]


def test_cl100k_special_policies() -> None:
    enc = adapter("tiktoken:cl100k_base")
    default = capture("encode", enc.encode, "<|endoftext|>", classify=enc.classify_error)
    assert (default.kind, default.category, default.native_type) == (
        "raised", "disallowed-special", "builtins.ValueError"
    )
    assert enc.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}) == [100257]
    assert enc.encode("<|endoftext|>", disallowed_special=()) == [27, 91, 8862, 728, 428, 91, 29]


def test_unknown_id_is_categorised() -> None:
    enc = adapter("tiktoken:cl100k_base")
    outcome = capture("decode", enc.decode_bytes, [100261], classify=enc.classify_error)
    assert outcome.kind == "raised" and outcome.category == "unknown-id"


def test_gpt2_and_r50k_claim_one_id_space() -> None:
    assert adapter("tiktoken:gpt2").encoding == adapter("tiktoken:r50k_base").encoding == "r50k_base"


def test_o200k_harmony_has_its_specials() -> None:
    enc = adapter("tiktoken:o200k_harmony")
    assert enc.special_tokens["<|start|>"] == 200006
    assert enc.encode("<|start|>", allowed_special="all") == [200006]
