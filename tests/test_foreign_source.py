"""Source adapters built from the shipped specs, run on stand-in checkouts written for the
tests (a GPT-2-style encoder.py, a minbpe-style package, two teaching notebooks)."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import pytest

from harness.outcomes import capture
from harness.registry import AdapterUnavailable, Registry
from harness.vocab import VOCAB_FILES
from implementations.source import adapter as source
from implementations.source import load as source_load
from implementations.source.adapter import SourceAdapter, spec_from_argument
from implementations.tiktoken import TiktokenAdapter

DATA = Path(__file__).parent / "data" / "foreign"
CHECKOUTS = DATA / "checkouts"
ADHOC = DATA / "adhoc"
CL100K_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


@pytest.fixture(scope="module", autouse=True)
def checkouts(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("TOKCONF_SOURCE_ROOT", raising=False)
        mp.setenv("TOKCONF_SOURCE_ROOT_MINBPE", str(CHECKOUTS / "minbpe"))
        mp.setenv("TOKCONF_SOURCE_ROOT_GPT2", str(CHECKOUTS / "gpt-2"))
        mp.setenv("TOKCONF_SOURCE_ROOT_LLMS_FROM_SCRATCH", str(CHECKOUTS / "LLMs-from-scratch"))
        mp.setenv("TOKCONF_CACHE_DIR", str(tmp_path_factory.mktemp("tokconf-cache")))
        mp.setenv("TOKCONF_TEST_MARKER", str(tmp_path_factory.mktemp("marker") / "ran.marker"))
        yield


@pytest.fixture(scope="module")
def built() -> dict[str, SourceAdapter]:
    return {}


def adapter(built: dict[str, SourceAdapter], argument: str) -> SourceAdapter:
    if argument not in built:
        built[argument] = SourceAdapter(spec_from_argument(argument), name=f"source:{argument}")
    return built[argument]


def encode(a, text, **policy):
    return capture("encode", a.encode, text, classify=a.classify_error, **policy)


def decode(a, ids):
    return capture("decode", a.decode, ids, classify=a.classify_error)


# -- openai/gpt-2 src/encoder.py ------------------------------------------------------


def test_gpt2_encoder_gets_the_verified_files_in_a_models_dir(built) -> None:
    gpt2 = adapter(built, "openai-gpt2-encoder")
    assert (gpt2.name, gpt2.encoding) == ("source:openai-gpt2-encoder", "r50k_base")
    folder = Path(source_load.gpt2_models_dir("124M")) / "124M"
    for name in ("encoder.json", "vocab.bpe"):
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == VOCAB_FILES[name].sha256


@pytest.mark.parametrize("text, ids", [
    ("Hi 你!", [17250, 220, 19526, 254, 0]),
    ("internationalization", [45609, 1634]),
    ("    hello world!!!", [220, 220, 220, 23748, 995, 10185]),
    ("<|endoftext|>", [27, 91, 437, 1659, 5239, 91, 29]),
])
def test_gpt2_encoder_figures(built, text: str, ids: list[int]) -> None:
    gpt2 = adapter(built, "openai-gpt2-encoder")
    assert gpt2.encode(text) == ids
    assert gpt2.decode(ids) == text


def test_gpt2_encoder_special_policy_is_probed(built) -> None:
    gpt2 = adapter(built, "openai-gpt2-encoder")
    assert gpt2.capabilities.special_policy == "none"
    assert "special policy probed on this checkout: none (<|endoftext|>: False)" in gpt2.capabilities.notes
    assert gpt2.special_tokens == {"<|endoftext|>": 50256}
    assert gpt2.decode([50256]) == "<|endoftext|>"


def test_gpt2_encoder_decode(built) -> None:
    gpt2 = adapter(built, "openai-gpt2-encoder")
    assert gpt2.decode([19526]) == "\ufffd"  # Encoder(errors='replace')
    # bytes from its own decoder/byte_decoder tables, before its UTF-8 step
    assert gpt2.decode_bytes([19526]) == b"\xe4\xbd"
    assert gpt2.token_bytes(254) == b"\xa0"
    assert gpt2.decode_bytes([50256]) == b"<|endoftext|>"
    got = capture("decode", gpt2.decode_bytes, [50257], classify=gpt2.classify_error)
    assert (got.category, got.native_type) == ("unknown-id", "builtins.KeyError")
    got = decode(gpt2, [50257])
    assert (got.category, got.native_type) == ("unknown-id", "builtins.KeyError")


# -- karpathy/minbpe ------------------------------------------------------------------


def test_minbpe_gpt4_matches_tiktoken_ids(built) -> None:
    gpt4 = adapter(built, "minbpe-gpt4")
    reference = TiktokenAdapter("cl100k_base")
    assert gpt4.encoding == "cl100k_base"
    assert gpt4.special_tokens == CL100K_SPECIALS
    assert gpt4.encode("hello world") == [15339, 1917]
    assert gpt4.encode("Hi 你! 😊") == [13347, 220, 57668, 0, 27623, 232]
    for text in ["hello1234!\n中文", "    hello world!!!", "a\r\n\r\n b"]:
        assert gpt4.encode(text) == reference.encode(text)
        assert gpt4.encode_ordinary(text) == reference.encode_ordinary(text)


def test_minbpe_gpt4_none_raise_is_an_assertion_error(built) -> None:
    gpt4 = adapter(built, "minbpe-gpt4")
    got = encode(gpt4, "<|endoftext|>")
    assert (got.category, got.native_type) == ("disallowed-special", "builtins.AssertionError")
    assert gpt4.encode("<|endoftext|>hello", allowed_special="all") == [100257, 15339]
    assert gpt4.encode("<|endoftext|>", disallowed_special=()) == [27, 91, 8862, 728, 428, 91, 29]


def test_minbpe_gpt4_allowed_set_leaves_other_literals_ordinary(built) -> None:
    gpt4 = adapter(built, "minbpe-gpt4")
    text = "<|endoftext|><|fim_prefix|>"
    # tiktoken would raise for <|fim_prefix|>; minbpe's set policy treats it as text
    assert gpt4.encode(text, allowed_special={"<|endoftext|>"}) == [100257, 27, 91, 69, 318, 14301, 91, 29]
    assert gpt4.capabilities.special_policy == "ordinary-unless-allowed"


def test_minbpe_gpt4_decoding_a_special_id_is_a_key_error(built) -> None:
    gpt4 = adapter(built, "minbpe-gpt4")
    got = decode(gpt4, [100257])
    assert (got.category, got.native_type, got.message) == ("unknown-id", "builtins.KeyError", "100257")
    got = capture("decode", gpt4.decode_bytes, [100257], classify=gpt4.classify_error)
    assert (got.category, got.native_type) == ("unknown-id", "builtins.KeyError")
    assert gpt4.decode([15339, 1917]) == "hello world"
    assert gpt4.decode_bytes([9468]) == b"\xf0\x9f"  # half an emoji: bytes, not U+FFFD


def test_minbpe_regex_trained_in_setup(built) -> None:
    regex = adapter(built, "minbpe-regex")
    assert regex.encoding.startswith("trained:")
    assert regex.special_tokens == {"<|endoftext|>": 300, "<|endofprompt|>": 301}
    assert regex.encode("the lazy dog") == [257, 279, 282]
    assert regex.encode("the quick fox<|endoftext|>", allowed_special="all") == [257, 272, 275, 300]
    got = encode(regex, "the quick fox<|endoftext|>")
    assert (got.category, got.native_type) == ("disallowed-special", "builtins.AssertionError")
    assert regex.decode([257, 300]) == "the<|endoftext|>"  # RegexTokenizer does decode specials
    assert regex.decode_bytes([257, 300, 228]) == b"the<|endoftext|>\xe4"
    got = decode(regex, [999])
    assert (got.category, got.native_type, got.message) == ("unknown-id", "builtins.ValueError", "invalid token id: 999")


# -- rasbt/LLMs-from-scratch ch02 (seed 002, section 3.6) ------------------------------


def test_simple_notebook_counterexamples(built) -> None:
    simple = adapter(built, "llms-from-scratch-bpe-simple")
    assert simple.special_tokens == {"<|endoftext|>": 257}
    assert simple.decode(simple.encode("a  b\n")) == "a b"  # a space (and the newline) lost
    assert simple.decode(simple.encode("a\tb")) == "a b"
    assert simple.encode("Æ") == [198] and simple.decode([198]) == "Æ"
    got = encode(simple, "山")
    assert (got.category, got.native_type) == ("unknown-token", "builtins.ValueError")
    assert got.message == "Characters not found in vocab: ['山']"
    assert simple.encode("the lazy dog") == [259, 256, 108, 97, 122, 121, 256, 100, 111, 103]


def test_complex_notebook_counterexamples(built) -> None:
    full = adapter(built, "llms-from-scratch-bpe")
    assert full.decode(full.encode("a  b\n")) == "a  b\n"  # spaces and LF kept
    assert full.decode(full.encode("a\tb")) == "ab"  # the tab is not
    assert full.encode("Æ") == [198] and full.decode([198]) == "\n"  # ID 198 special-cased
    got = encode(full, "山")
    assert (got.category, got.native_type) == ("unknown-token", "builtins.ValueError")
    assert full.encode("the lazy dog") == [259, 279, 282]


def test_complex_notebook_policy_mapping(built) -> None:
    full = adapter(built, "llms-from-scratch-bpe")
    text = "the quick fox<|endoftext|>"
    assert full.encode(text) == [259, 272, 275, 60, 124, 101, 110, 100, 111, 102, 116, 101, 120, 116, 124, 62]
    assert full.encode(text, allowed_special="all") == [259, 272, 275, 257]


def test_text_only_decoders_derive_bytes_from_text_and_say_so(built) -> None:
    simple = adapter(built, "llms-from-scratch-bpe-simple")
    assert simple.decode_bytes(simple.encode("the dog")) == b"the dog"
    assert "decode_bytes is the UTF-8 of the native text decode (no bytes-level decode)" in simple.capabilities.notes
    gpt4 = adapter(built, "minbpe-gpt4")
    assert any("tables (vocab, inverse_byte_shuffle)" in n for n in gpt4.capabilities.notes)


def test_closed_alphabets(built) -> None:
    for name in ("llms-from-scratch-bpe-simple", "llms-from-scratch-bpe"):
        a = adapter(built, name)
        assert a.capabilities.alphabet is not None
        assert a.in_domain("the lazy dog Æ\n") and not a.in_domain("山")
        assert len(a.capabilities.alphabet) == 257  # chr(0)..chr(255) and Ġ


def test_unknown_ids_in_the_notebooks(built) -> None:
    for name in ("llms-from-scratch-bpe-simple", "llms-from-scratch-bpe"):
        got = decode(adapter(built, name), [999])
        assert (got.category, got.native_type) == ("unknown-id", "builtins.ValueError")


def test_no_notebook_cell_with_a_marker_ran(built) -> None:
    import os

    adapter(built, "llms-from-scratch-bpe-simple")
    adapter(built, "llms-from-scratch-bpe")
    assert not Path(os.environ["TOKCONF_TEST_MARKER"]).exists()


# -- your own source -------------------------------------------------------------------


def test_adhoc_source_with_bytes_decode_and_error_rules() -> None:
    char = SourceAdapter(spec_from_argument(f"{ADHOC}/chartok.py:CharTokenizer"))
    assert char.encode("abc ") == [0, 1, 2, 3]
    assert char.decode_bytes([2, 0]) == b"ca"
    assert char.capabilities.alphabet == frozenset("abc ")
    got = encode(char, "abz")
    assert (got.category, got.native_type) == ("unknown-token", "builtins.KeyError")
    got = decode(char, [9])
    assert (got.category, got.native_type) == ("unknown-id", "builtins.KeyError")


def test_a_base_exception_from_foreign_code_becomes_an_outcome() -> None:
    boom = SourceAdapter(spec_from_argument(f"{ADHOC}/chartok.py:BoomTokenizer"))
    got = encode(boom, "x")
    assert (got.kind, got.category) == ("raised", "internal-error")
    assert got.native_type.endswith("chartok.Boom")
    assert got.message == "cannot encode 'x'"


def test_a_class_without_the_spec_methods_is_refused_at_build() -> None:
    registry = Registry()
    registry.add(source.family(), provider="test")
    with pytest.raises(AdapterUnavailable, match=r"NotATokenizer has no method encode\(\) \(the spec's encode.method\)"):
        registry.get(f"source:{ADHOC}/chartok.py:NotATokenizer")


def test_through_the_registry(built) -> None:
    registry = Registry()
    registry.add(source.family(), provider="test")
    assert registry.status("source:minbpe-regex") is None
    regex = registry.get("source:minbpe-regex")
    assert regex.encode("the lazy dog") == [257, 279, 282]


def test_a_spec_moves_to_another_process_as_plain_data(built) -> None:
    spec = pickle.loads(pickle.dumps(spec_from_argument("llms-from-scratch-bpe")))
    rebuilt = SourceAdapter(spec)
    assert rebuilt.encode("the lazy dog") == adapter(built, "llms-from-scratch-bpe").encode("the lazy dog")
    assert rebuilt.encoding == adapter(built, "llms-from-scratch-bpe").encoding


def test_decode_bytes_through_a_named_native_method(tmp_path: Path) -> None:
    spec = tmp_path / "char.yaml"
    spec.write_text(
        "tokconf_source_spec: 1\n"
        f"source: {ADHOC / 'chartok.py'}\n"
        "class: CharTokenizer\n"
        "construct: {args: [ab]}\n"
        "encoding: trained\n"
        "encode: {method: encode}\n"
        "decode: {method: decode, returns: bytes}\n"
        "decode_bytes: {method: decode}\n", encoding="utf-8")
    char = SourceAdapter(spec_from_argument(str(spec)))
    assert char.encode("ba") == [1, 0]
    assert char.decode_bytes([1, 0]) == b"ba"
    assert char.decode([1, 0]) == "ba"
