"""Hugging Face adapters: issue 2's figures as exact IDs, and HF's native behaviour as it is."""

from __future__ import annotations

import random

import pytest

from harness.outcomes import capture
from harness.registry import default_registry
from implementations.hf import adapters as hf_adapters
from implementations.hf import convert as hf_convert
#: ordinary tokens are IDs 0..N-1; specials (and gaps) come after
ORDINARY_TOKENS = {"hf:gpt2": 50256, "hf:cl100k_base": 100256, "hf:o200k_base": 199998}


def adapter(name: str):
    return default_registry().get(name)


@pytest.fixture(scope="module")
def tiktoken_cl100k():
    return default_registry().get("tiktoken:cl100k_base")


# -- acceptance figures -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Hi 你!", [17250, 220, 19526, 254, 0]),
        ("internationalization", [45609, 1634]),
        ("    hello world!!!", [220, 220, 220, 23748, 995, 10185]),
    ],
)
def test_gpt2_figures(text: str, ids: list[int]) -> None:
    assert adapter("hf:gpt2").encode(text) == ids


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
    ],
)
def test_cl100k_figures(text: str, ids: list[int]) -> None:
    assert adapter("hf:cl100k_base").encode(text) == ids


def test_cl100k_pretokenizes_as_the_seed_says() -> None:
    assert adapter("hf:cl100k_base").pretokenize(" hello1234!\n中文") == [" hello", "123", "4", "!\n", "中文"]


def test_encoding_is_not_additive_over_concatenation() -> None:
    hf = adapter("hf:cl100k_base")
    assert hf.encode("hello ") + hf.encode("world") == [15339, 220, 14957] != hf.encode("hello world")


def test_names_and_id_spaces() -> None:
    assert [(adapter(n).name, adapter(n).encoding) for n in ("hf:gpt2", "hf:cl100k_base", "hf:o200k_base")] == [
        ("hf:gpt2", "r50k_base"),
        ("hf:cl100k_base", "cl100k_base"),
        ("hf:o200k_base", "o200k_base"),
    ]


# -- HF's native special-token behaviour --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "literal", "special_id"),
    [
        ("hf:gpt2", "<|endoftext|>", 50256),
        ("hf:cl100k_base", "<|endoftext|>", 100257),
        ("hf:cl100k_base", "<|fim_middle|>", 100259),
        ("hf:cl100k_base", "<|endofprompt|>", 100276),
        ("hf:o200k_base", "<|endoftext|>", 199999),
        ("hf:o200k_base", "<|endofprompt|>", 200018),
    ],
)
@pytest.mark.parametrize(
    "policy",
    [
        {},  # tiktoken's default: disallowed -> tiktoken raises, HF does not
        {"allowed_special": "all"},
        {"disallowed_special": ()},  # tiktoken: ordinary text; HF: still special
        {"allowed_special": frozenset(), "disallowed_special": "all"},
    ],
)
def test_special_literal_is_always_special(name: str, literal: str, special_id: int, policy: dict) -> None:
    hf = adapter(name)
    assert hf.capabilities.special_policy == "always-special"
    outcome = capture("encode", hf.encode, "a" + literal + "b", classify=hf.classify_error, **policy)
    assert outcome.is_ok
    assert outcome.value == (*hf.encode("a"), special_id, *hf.encode("b"))


def test_tiktoken_refuses_what_hf_accepts(tiktoken_cl100k) -> None:
    reference = capture("encode", tiktoken_cl100k.encode, "<|endoftext|>", classify=tiktoken_cl100k.classify_error)
    native = capture("encode", adapter("hf:cl100k_base").encode, "<|endoftext|>")
    assert (reference.category, reference.native_type) == ("disallowed-special", "builtins.ValueError")
    assert native.value == (100257,)


@pytest.mark.parametrize(
    ("name", "ids"),
    [
        ("hf:gpt2", [27, 91, 437, 1659, 5239, 91, 29]),
        ("hf:cl100k_base", [27, 91, 8862, 728, 428, 91, 29]),
    ],
)
def test_encode_ordinary_uses_hf_encode_special_tokens(name: str, ids: list[int]) -> None:
    hf = adapter(name)
    assert hf.encode_ordinary("<|endoftext|>") == ids
    assert hf.encode("<|endoftext|>") != ids  # the switch lives on a twin, not on the shared tokenizer


def test_special_tokens_mapping() -> None:
    assert adapter("hf:cl100k_base").special_tokens == {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    }
    assert adapter("hf:o200k_base").special_tokens == {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
    assert adapter("hf:gpt2").special_tokens == {"<|endoftext|>": 50256}


def test_special_tokens_match_tiktoken() -> None:
    for encoding in ("cl100k_base", "o200k_base"):
        reference = default_registry().get(f"tiktoken:{encoding}")
        assert dict(hf_convert.CONVERSIONS[encoding].special_tokens) == dict(reference.special_tokens)
        assert hf_convert.CONVERSIONS[encoding].pattern == reference.native._pat_str


# -- decoding: gaps, out of range, lossy --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "gap_ids"),
    [
        ("hf:cl100k_base", [100256, *range(100261, 100276)]),
        ("hf:o200k_base", [199998, *range(200000, 200018)]),
        ("hf:cl100k_base", [100277, 10**9]),  # past the end, still a u32
    ],
)
def test_gap_ids_decode_to_nothing(name: str, gap_ids: list[int]) -> None:
    hf = adapter(name)
    for gap in gap_ids:
        assert hf.decode_bytes([gap]) == b""
        assert hf.decode([gap]) == ""
        assert hf.decode_bytes([*hf.encode("hello"), gap, *hf.encode(" world")]) == b"hello world"


def test_tiktoken_refuses_the_gap_hf_decodes_to_nothing(tiktoken_cl100k) -> None:
    reference = capture("decode", tiktoken_cl100k.decode_bytes, [100256], classify=tiktoken_cl100k.classify_error)
    assert (reference.category, reference.native_type) == ("unknown-id", "builtins.KeyError")
    assert capture("decode", adapter("hf:cl100k_base").decode_bytes, [100256]).value == b""


@pytest.mark.parametrize("bad_id", [-1, 2**32])
def test_ids_outside_u32_raise_overflow(bad_id: int) -> None:
    hf = adapter("hf:cl100k_base")
    for op in (hf.decode, hf.decode_bytes):
        outcome = capture("decode", op, [bad_id], classify=hf.classify_error)
        assert (outcome.category, outcome.native_type) == ("unknown-id", "builtins.OverflowError")


def test_decode_is_lossy_and_strict_is_unsupported() -> None:
    hf = adapter("hf:cl100k_base")
    ids = hf.encode("😊")  # two tokens that split the character's bytes
    assert ids == [76460, 232] and hf.decode_bytes(ids) == "😊".encode()
    assert hf.decode_bytes(ids[:1]) == b"\xf0\x9f\x98"
    assert hf.decode(ids[:1]) == "\ufffd"
    outcome = capture("decode", hf.decode, ids[:1], errors="strict", classify=hf.classify_error)
    assert outcome.category == "unsupported"


def test_special_ids_decode_to_their_literal() -> None:
    hf = adapter("hf:cl100k_base")
    assert hf.decode_bytes([15339, 100257, 1917]) == b"hello<|endoftext|> world"
    assert hf.decode([100276]) == "<|endofprompt|>"  # HF's default would skip it; tokconf asks not to


@pytest.mark.parametrize("name", ["hf:gpt2", "hf:cl100k_base", "hf:o200k_base"])
def test_decode_bytes_agrees_with_native_decode_and_tiktoken(name: str) -> None:
    hf = adapter(name)
    reference = default_registry().get(name.replace("hf:", "tiktoken:"))
    rng = random.Random(1729)
    ordinary = ORDINARY_TOKENS[name]
    specials = list(hf.special_tokens.values())
    for _ in range(300):
        ids = [rng.choice(specials) if rng.random() < 0.05 else rng.randrange(ordinary) for _ in range(rng.randint(1, 8))]
        raw = hf.decode_bytes(ids)
        assert raw == reference.decode_bytes(ids)
        assert raw.decode("utf-8", errors="replace") == hf.decode(ids)


def test_token_bytes() -> None:
    hf = adapter("hf:cl100k_base")
    assert [hf.token_bytes(i) for i in (15339, 220, 100257)] == [b"hello", b" ", b"<|endoftext|>"]


# -- lone surrogates: HF refuses them -------------------------------------------------------


@pytest.mark.parametrize("name", ["hf:gpt2", "hf:cl100k_base", "hf:o200k_base"])
def test_lone_surrogate_is_refused_natively(name: str) -> None:
    hf = adapter(name)
    for op, call in (("encode", hf.encode), ("encode", hf.encode_ordinary), ("other", hf.pretokenize)):
        outcome = capture(op, call, "a\ud83db", classify=hf.classify_error)
        assert outcome.category == "unencodable-text"
    single = capture("encode", hf.encode, "\ud83d", classify=hf.classify_error)
    assert single.native_type == "builtins.TypeError"
    batch = capture("encode", hf.encode_batch, ["ok", "\ud83d"], classify=hf.classify_error)
    assert (batch.category, batch.native_type) == ("unencodable-text", "builtins.TypeError")
    pre = capture("other", hf.pretokenize, "\ud83d", classify=hf.classify_error)
    assert pre.native_type == "builtins.UnicodeEncodeError"


def test_tiktoken_replaces_the_surrogate_where_hf_refuses(tiktoken_cl100k) -> None:
    assert tiktoken_cl100k.encode("\ud83d") == [5809]
    assert capture("encode", adapter("hf:cl100k_base").encode, "\ud83d").kind == "raised"


# -- batch, pretokenize, capabilities -------------------------------------------------------


@pytest.mark.parametrize("name", ["hf:gpt2", "hf:cl100k_base", "hf:o200k_base"])
def test_batch_equals_single(name: str) -> None:
    hf = adapter(name)
    texts = ["", "hello world", "<|endoftext|>x", " 12345\r\n\u3000中文😊", "'LL 'S ’s"]
    assert hf.encode_batch(texts) == [hf.encode(t) for t in texts]


def test_pretokenize_chunks_are_text_and_cover_the_input() -> None:
    text = "  Hello 你好 1234567 ’s\r\n\u2028x  "
    for name in ("hf:gpt2", "hf:cl100k_base", "hf:o200k_base"):
        chunks = adapter(name).pretokenize(text)
        assert "".join(chunks) == text
    assert adapter("hf:gpt2").pretokenize(" hello 你好") == [" hello", " 你好"]


def test_capabilities_declare_native_differences() -> None:
    caps = adapter("hf:cl100k_base").capabilities
    assert (caps.special_policy, caps.batch, caps.pretokenize, caps.trace, caps.encode_ordinary) == (
        "always-special", True, True, False, True
    )
    text = " ".join(caps.notes)
    for phrase in ("always special", "never raises", "decodes to nothing", "lone surrogate", "(?>X{n,m})"):
        assert phrase in text


def test_listing_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("listing must not build a tokenizer")

    monkeypatch.setattr(hf_convert, "cached_tiktoken_tokenizer", refuse)
    monkeypatch.setattr(hf_convert, "gpt2_tokenizer", refuse)
    specs = {s.name: s for s in hf_adapters.family().specs()}
    assert sorted(specs) == ["hf:cl100k_base", "hf:gpt2", "hf:o200k_base"]
    assert all(s.unavailable_reason() is None and s.library == "tokenizers" for s in specs.values())
    assert specs["hf:gpt2"].encoding == "r50k_base"
