"""GPT-2 encoder.py (issue 3 section 1, seed 000): every figure as an exact test."""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest

from harness.interface import TraceRound
from harness.outcomes import capture
from harness.registry import Registry, RegistryError
from harness.vocab import bytes_to_unicode, vocab_bytes
from implementations.gpt2_encoder import (
    Encoder,
    family,
    files_encoding,
    merge_all,
    parse_merges,
    read_text,
)

TINY = Path(__file__).parent / "data" / "gpt2_no_trailing_newline"


@pytest.fixture(scope="module")
def registry() -> Registry:
    # a private registry: only this family, so other families' state cannot interfere
    reg = Registry()
    reg.add(family(), provider="test")
    return reg


@pytest.fixture(scope="module")
def gpt2(registry: Registry):
    return registry.get("gpt2-encoder:gpt2")


@pytest.fixture(scope="module")
def strict(registry: Registry):
    return registry.get("gpt2-encoder-strict:gpt2")


# -- bytes_to_unicode -------------------------------------------------------------------


def test_bytes_to_unicode_is_a_bijection_keeping_188_and_shifting_68() -> None:
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert len(set(table.values())) == 256
    kept = [b for b in range(256) if table[b] == chr(b)]
    assert kept == [*range(33, 127), *range(161, 173), *range(174, 256)]
    assert len(kept) == 188
    shifted = [b for b in range(256) if table[b] != chr(b)]
    assert shifted == [*range(0, 33), *range(127, 161), 173]
    assert [ord(table[b]) for b in shifted] == list(range(256, 256 + 68))
    assert (table[32], table[0], table[173]) == ("Ġ", "Ā", "Ń")


def test_alias_and_id_are_different_maps(gpt2) -> None:
    enc = gpt2.native.encoder
    assert bytes_to_unicode()[97] == "a" and enc["a"] == 64
    assert bytes_to_unicode()[33] == "!" and enc["!"] == 0
    assert gpt2.native.aliases(" 你") == "Ġä½ł"
    # the character Ġ (U+0120) itself is the bytes [196, 160]: two aliases, not a space
    assert gpt2.native.aliases("Ġ") == "Ä" + bytes_to_unicode()[160] == "Äł"


# -- loading the merges -----------------------------------------------------------------


def test_slice_loader_drops_last_rule_without_trailing_newline() -> None:
    text = "#version: 0.2\nl o\nlo w"
    assert parse_merges(text, strict=False) == [("l", "o")]
    assert parse_merges(text, strict=True) == [("l", "o"), ("lo", "w")]
    assert parse_merges(text + "\n", strict=False) == [("l", "o"), ("lo", "w")]
    assert parse_merges(text + "\n", strict=True) == [("l", "o"), ("lo", "w")]


def test_strict_loader_rejects_malformed_lines() -> None:
    with pytest.raises(ValueError, match=r"vocab.bpe line 3 is 'a b c'"):
        parse_merges("#version: 0.2\nl o\na b c\n", strict=True)


def test_files_are_read_with_universal_newlines() -> None:
    assert parse_merges(read_text(b"#version: 0.2\r\na b\r\nab c\r\n"), strict=False) == [("a", "b"), ("ab", "c")]


def test_official_files_give_50000_rules_to_both_loaders(gpt2, strict) -> None:
    assert vocab_bytes("vocab.bpe").endswith(b"\n")
    assert len(gpt2.native.bpe_ranks) == 50_000
    assert gpt2.native.bpe_ranks == strict.native.bpe_ranks


def test_every_merge_id_is_256_plus_rank(gpt2) -> None:
    encoder = gpt2.native.encoder
    assert len(gpt2.native.bpe_ranks) == 50_000
    wrong = [(rule, rank) for rule, rank in gpt2.native.bpe_ranks.items() if encoder["".join(rule)] != 256 + rank]
    assert wrong == []


# -- BPE ------------------------------------------------------------------------------


def test_inner_loop_replaces_all_non_overlapping_occurrences() -> None:
    assert merge_all(tuple("aaa"), "a", "a") == (("aa", "a"), 1)
    assert merge_all(tuple("aaaaaaa"), "a", "a") == (("aa", "aa", "aa", "a"), 3)
    assert merge_all(("x", "a", "y", "a", "b"), "a", "b") == (("x", "a", "y", "ab"), 1)


def test_hi_ni_figure(gpt2) -> None:
    assert gpt2.pretokenize("Hi 你!") == ["Hi", " 你", "!"]
    assert gpt2.native.bpe("Ġä½ł") == "Ġ ä½ ł"
    assert gpt2.encode("Hi 你!") == [17250, 220, 19526, 254, 0]


@pytest.mark.parametrize(
    ("text", "chunks"),
    [
        ("I'll've", ["I", "'ll", "'ve"]),
        ("a  b", ["a", " ", " b"]),
        ("x \n", ["x", " \n"]),
        ("12abc!!", ["12", "abc", "!!"]),
    ],
)
def test_pretokenize_uses_gpt2_pattern(gpt2, text: str, chunks: list[str]) -> None:
    assert gpt2.pretokenize(text) == chunks
    assert "".join(chunks) == text


def test_internationalization_trace(gpt2) -> None:
    rounds = gpt2.trace("internationalization")
    assert len(rounds) == 14
    assert [r.rank for r in rounds] == [3, 5, 7, 9, 26, 39, 85, 97, 272, 503, 608, 1378, 22868, 45353]
    assert [(r.pair, r.merged) for r in rounds] == [
        (("i", "n"), 1), (("o", "n"), 2), (("e", "r"), 1), (("a", "t"), 2), (("a", "l"), 1),
        (("i", "on"), 2), (("at", "ion"), 2), (("t", "er"), 1), (("i", "z"), 1), (("ter", "n"), 1),
        (("ation", "al"), 1), (("iz", "ation"), 1), (("in", "tern"), 1), (("intern", "ational"), 1),
    ]
    assert rounds[-1].result == ["international", "ization"]
    assert gpt2.encode("internationalization") == [45609, 1634]


def test_aaaaaaa_trace_shows_non_overlapping_replacement(gpt2) -> None:
    assert gpt2.trace("aaaaaaa") == [
        TraceRound(pair=("a", "a"), rank=6996, merged=3, result=["aa", "aa", "aa", "a"]),
        TraceRound(pair=("aa", "aa"), rank=24538, merged=1, result=["aaaa", "aa", "a"]),
        TraceRound(pair=("aa", "a"), rank=45815, merged=1, result=["aaaa", "aaa"]),
    ]
    assert gpt2.encode("aaaaaaa") == [24794, 46071]
    assert gpt2.trace("aaaaaaa")[0].to_json() == {
        "pair": ["a", "a"], "rank": 6996, "merged": 3, "result": ["aa", "aa", "aa", "a"]
    }


def test_cache_holds_merged_chunks_but_not_single_symbols() -> None:
    encoder = json.loads(vocab_bytes("encoder.json"))
    native = Encoder(encoder, parse_merges(read_text(vocab_bytes("vocab.bpe")), strict=False))
    assert native.encode("a") == [64]
    assert native.cache == {}  # single-symbol chunk: early return, not cached
    assert native.encode("hello") == [31373]
    assert native.cache == {"hello": "hello"}
    # a second call is answered from the cache, not recomputed
    native.cache["hello"] = "h ello"
    assert native.encode("hello") == [71, 11109]


def test_caches_are_per_instance(registry: Registry) -> None:
    a = registry.get("gpt2-encoder:gpt2")
    b = registry.get("gpt2-encoder-strict:gpt2")
    a.encode("cachetest")
    assert "cachetest" in a.native.cache and "cachetest" not in b.native.cache


# -- specials ---------------------------------------------------------------------------


@pytest.mark.parametrize("allowed", [frozenset(), "all", frozenset({"<|endoftext|>"})])
def test_no_special_handling(gpt2, allowed) -> None:
    assert gpt2.encode("<|endoftext|>", allowed_special=allowed) == [27, 91, 437, 1659, 5239, 91, 29]
    assert gpt2.capabilities.special_policy == "none"
    assert gpt2.special_tokens == {"<|endoftext|>": 50256}


def test_decode_endoftext_id_gives_the_literal(gpt2) -> None:
    assert gpt2.decode([50256]) == "<|endoftext|>"


# -- decode -----------------------------------------------------------------------------


def test_decode_joins_bytes_before_utf8(gpt2) -> None:
    assert gpt2.decode([19526]) == "\ufffd"
    assert gpt2.decode([19526, 254]) == "你"
    assert gpt2.decode_bytes([19526]) == bytes([228, 189])
    assert gpt2.decode_bytes([254]) == bytes([160])


def test_decode_unknown_id_is_native_keyerror(gpt2) -> None:
    outcome = capture("decode", gpt2.decode, [50257], classify=gpt2.classify_error)
    assert (outcome.category, outcome.native_type) == ("unknown-id", "builtins.KeyError")


def test_strict_decode_of_invalid_bytes(gpt2) -> None:
    outcome = capture("decode", gpt2.decode, [19526], errors="strict", classify=gpt2.classify_error)
    assert (outcome.category, outcome.native_type) == ("invalid-utf8", "builtins.UnicodeDecodeError")


def test_lone_surrogate_is_unencodable(gpt2) -> None:
    outcome = capture("encode", gpt2.encode, "a\ud800b", classify=gpt2.classify_error)
    assert (outcome.category, outcome.native_type) == ("unencodable-text", "builtins.UnicodeEncodeError")


# -- registration and the DIR form ------------------------------------------------------


def test_family_registers_both_variants(registry: Registry) -> None:
    assert registry.names() == ["gpt2-encoder-strict:gpt2", "gpt2-encoder:gpt2"]
    assert {registry.spec(n).encoding for n in registry.names()} == {"r50k_base"}


def test_folder_without_trailing_newline_loses_last_rule(registry: Registry) -> None:
    assert not (TINY / "vocab.bpe").read_bytes().endswith(b"\n")
    lenient = registry.get(f"gpt2-encoder:{TINY}")
    strict = registry.get(f"gpt2-encoder-strict:{TINY}")
    expected_encoding = files_encoding((TINY / "encoder.json").read_bytes(), (TINY / "vocab.bpe").read_bytes())
    assert lenient.encoding == strict.encoding == expected_encoding
    assert expected_encoding.startswith("gpt2-files:") and len(expected_encoding) == len("gpt2-files:") + 12
    assert lenient.encode(" lower") == [32, 257, 258]  # Ġ | low | er: rule 'low er' was dropped
    assert strict.encode(" lower") == [32, 259]  # Ġ | lower
    assert [r.rank for r in lenient.trace(" lower")] == [0, 1, 2]
    assert [r.rank for r in strict.trace(" lower")] == [0, 1, 2, 3]
    assert lenient.decode([32, 257, 258]) == strict.decode([32, 259]) == " lower"
    assert lenient.special_tokens == {} and strict.special_tokens == {}


def test_folder_missing_files_is_a_registry_error(registry: Registry, tmp_path: Path) -> None:
    (tmp_path / "encoder.json").write_text("{}")
    with pytest.raises(RegistryError, match="vocab.bpe is missing"):
        registry.spec(f"gpt2-encoder:{tmp_path}")


def test_folder_changed_after_resolve_is_refused(tmp_path: Path) -> None:
    for name in ("encoder.json", "vocab.bpe"):
        (tmp_path / name).write_bytes((TINY / name).read_bytes())
    reg = Registry()
    reg.add(family(), provider="test")
    reg.spec(f"gpt2-encoder:{tmp_path}")
    (tmp_path / "vocab.bpe").write_bytes((TINY / "vocab.bpe").read_bytes() + b"\n")
    with pytest.raises(Exception, match="changed after"):
        reg.get(f"gpt2-encoder:{tmp_path}")


# -- agreement with tiktoken on GPT-2's ID space ----------------------------------------


def _assigned_text(rng: random.Random, length: int) -> str:
    pool = ["'s", "'ll", " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "12", "hello", "中文", "😊",
            "é", "e\u0301", "<|endoftext|>"]
    out = []
    for _ in range(length):
        if rng.random() < 0.5:
            out.append(rng.choice(pool))
        else:
            while True:
                # code points assigned in Python's Unicode 14 tables: newer ones are where the
                # `regex` module and tiktoken's Rust engine use different Unicode versions
                ch = chr(rng.randrange(0, 0x30000))
                if unicodedata.category(ch) not in ("Cn", "Cs"):
                    out.append(ch)
                    break
    return "".join(out)


def test_agrees_with_tiktoken_gpt2_on_random_text(gpt2) -> None:
    from implementations.tiktoken import TiktokenAdapter

    reference = TiktokenAdapter("gpt2")
    rng = random.Random(20261130)
    mismatches = [
        text for text in (_assigned_text(rng, rng.randrange(1, 12)) for _ in range(1000))
        if gpt2.encode(text) != reference.encode_ordinary(text)
    ]
    assert mismatches == []
