"""minbpe's GPT4Tokenizer approach (issue 3 section 2, seed 001): figures as exact tests."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.interface import TraceRound
from harness.outcomes import capture
from harness.registry import Registry
from harness.vocab import load_tiktoken_ranks
from implementations.minbpe import adapters as minbpe
from implementations.minbpe import recovery as minbpe_recover
from implementations.minbpe.adapters import (
    MergeRecoveryError,
    earlier_parts,
    family,
    load_or_recover_merges,
    merge_buckets,
    merge_rounds,
    native_allowed_special,
    recover_merges,
)


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry()
    reg.add(family(), provider="test")
    return reg


@pytest.fixture(scope="module")
def up(registry: Registry):
    return registry.get("minbpe:cl100k_base")


@pytest.fixture(scope="module")
def fixed(registry: Registry):
    return registry.get("minbpe-fixed:cl100k_base")


def test_family_lists_six_adapters(registry: Registry) -> None:
    assert registry.names() == [
        "minbpe-fixed:cl100k_base", "minbpe-fixed:o200k_base", "minbpe-fixed:r50k_base",
        "minbpe:cl100k_base", "minbpe:o200k_base", "minbpe:r50k_base",
    ]
    assert {n: registry.spec(n).encoding for n in registry.names()}["minbpe:r50k_base"] == "r50k_base"


@pytest.mark.parametrize("encoding", minbpe.ENCODINGS)
def test_pattern_and_specials_are_tiktokens(encoding: str) -> None:
    from implementations.tiktoken import TiktokenAdapter

    native = TiktokenAdapter(encoding).native
    assert minbpe.PATTERNS[encoding] == native._pat_str
    assert minbpe.SPECIAL_TOKENS[encoding] == native._special_tokens


# -- merge recovery ---------------------------------------------------------------------


def test_hello_recovers_as_h_plus_ello(up) -> None:
    ranks = load_tiktoken_ranks("cl100k_base")
    assert [ranks[b] for b in (b"!", b"e", b"h", b"l", b"o", b"hello")] == [0, 68, 71, 75, 78, 15339]
    assert earlier_parts(ranks, b"hello", 15339) == [b"h", b"ello"]
    assert earlier_parts(ranks, b"hello", 15340) == [b"hello"]  # <= would swallow the target
    assert up.native.tables.merges[(71, 4896)] == 15339
    assert len(up.native.tables.merges) == 100_000


def test_recovery_refuses_a_token_that_is_not_two_earlier_tokens() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"xyz": 257}
    with pytest.raises(MergeRecoveryError, match=r"token b'xyz' \(rank 257\).*3 parts"):
        recover_merges(ranks)


def test_recovery_of_a_small_vocabulary() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    # b+c is not tried for abc: a+b ranks lower and takes b first
    assert recover_merges(ranks) == {(97, 98): 256, (98, 99): 257, (256, 99): 258}


def test_merges_are_cached_on_disk_by_vocabulary_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path))
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    first = load_or_recover_merges(ranks, vocab_sha256="f" * 64)
    path = tmp_path / "minbpe" / ("f" * 64 + ".merges")
    assert path.is_file() and first == {(97, 98): 256, (256, 99): 257}
    assert [p.name for p in (tmp_path / "minbpe").iterdir()] == [path.name]  # no temp file left

    def no_recovery(_ranks):
        raise AssertionError("the cached file should have been used")

    monkeypatch.setattr(minbpe_recover, "recover_merges", no_recovery)  # where the cache looks it up
    assert load_or_recover_merges(ranks, vocab_sha256="f" * 64) == first
    monkeypatch.undo()
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path))
    # a damaged file is not trusted: recomputed and rewritten
    path.write_bytes(path.read_bytes()[:-4] + b"\x00\x00\x00\x00")
    assert load_or_recover_merges(ranks, vocab_sha256="f" * 64) == first
    assert minbpe_recover._deserialise(path.read_bytes(), "f" * 64) == first
    # another vocabulary hash is another file
    load_or_recover_merges(ranks, vocab_sha256="e" * 64)
    assert (tmp_path / "minbpe" / ("e" * 64 + ".merges")).is_file()


# -- byte shuffle and vocabulary --------------------------------------------------------


def test_byte_shuffle_and_internal_vocab(up) -> None:
    tables = up.native.tables
    assert tables.shuffle[32] == 220
    assert list(b"hello".translate(tables.shuffle)) == [71, 68, 75, 75, 78]
    assert list(b"ab".translate(tables.shuffle)) == [64, 65]
    assert tables.vocab[71] == bytes([71])
    assert tables.vocab[4896] == bytes([68, 75, 75, 78])
    assert tables.vocab[15339] == b"GDKKN"
    assert tables.vocab[15339].translate(tables.inverse) == b"hello"
    assert up.decode([15339]) == "hello"
    assert up.encode("ab") == [370]


# -- integer BPE ------------------------------------------------------------------------


def test_hello_trace(up) -> None:
    assert up.trace("hello") == [
        TraceRound(pair=(b"e", b"l"), rank=301, merged=1, result=[71, 301, 75, 78]),
        TraceRound(pair=(b"l", b"o"), rank=385, merged=1, result=[71, 301, 385]),
        TraceRound(pair=(b"el", b"lo"), rank=4896, merged=1, result=[71, 4896]),
        TraceRound(pair=(b"h", b"ello"), rank=15339, merged=1, result=[15339]),
    ]
    assert up.trace("hello")[0].to_json() == {"pair": ["e", "l"], "rank": 301, "merged": 1, "result": [71, 301, 75, 78]}


def test_trace_merges_all_non_overlapping_places(up) -> None:
    first = up.trace("aaaaaaa")[0]
    assert (first.pair, first.merged, len(first.result)) == ((b"a", b"a"), 3, 4)


@pytest.mark.parametrize(
    ("text", "ids", "chunks"),
    [
        ("Hi 你! 😊", [13347, 220, 57668, 0, 27623, 232], ["Hi", " 你", "!", " 😊"]),
        ("hello world", [15339, 1917], ["hello", " world"]),
        ("internationalization", [98697, 2065], ["internationalization"]),
    ],
)
def test_cl100k_figures(up, fixed, text: str, ids: list[int], chunks: list[str]) -> None:
    assert up.encode(text) == fixed.encode(text) == ids
    assert up.pretokenize(text) == chunks


def test_bucket_merge_equals_round_merge(up) -> None:
    merges = up.native.tables.merges
    shuffle = up.native.tables.shuffle
    rng = random.Random(7)
    alphabets = ["ab", "abc ", "aaaa", "the quick brown fox", "你好世界", "0123456789"]
    for _ in range(300):
        text = "".join(rng.choice(rng.choice(alphabets)) for _ in range(rng.randrange(0, 200)))
        ids = list(text.encode("utf-8").translate(shuffle))
        assert merge_buckets(ids, merges) == merge_rounds(list(ids), merges), text


def test_long_single_character_run(up) -> None:
    from implementations.tiktoken import TiktokenAdapter

    text = "a" * 100_000
    assert up.encode_ordinary(text) == TiktokenAdapter("cl100k_base").encode_ordinary(text)


# -- special tokens ---------------------------------------------------------------------


def test_policy_mapping_from_tiktoken_arguments() -> None:
    specials = {"<a>", "<b>"}
    assert native_allowed_special(specials, frozenset(), "all") == "none_raise"
    assert native_allowed_special(specials, frozenset(), ()) == "none"
    assert native_allowed_special(specials, frozenset(), {"<b>"}) == "none_raise"
    assert native_allowed_special(specials, "all", "all") == "all"
    assert native_allowed_special(specials, "all", ()) == "all"
    assert native_allowed_special(specials, frozenset({"<a>"}), "all") == {"<a>"}


def test_upstream_none_raise_is_an_assertion_error(up) -> None:
    outcome = capture("encode", up.encode, "x<|endoftext|>", classify=up.classify_error)
    assert (outcome.category, outcome.native_type, outcome.message) == (
        "disallowed-special", "builtins.AssertionError", ""
    )
    with pytest.raises(AssertionError):
        up.native.encode("<|fim_prefix|>")  # the native default is none_raise


def test_fixed_none_raise_is_a_value_error(fixed) -> None:
    outcome = capture("encode", fixed.encode, "x<|endoftext|>", classify=fixed.classify_error)
    assert (outcome.category, outcome.native_type) == ("disallowed-special", "builtins.ValueError")
    assert "'<|endoftext|>'" in outcome.message


@pytest.mark.parametrize("name", ["minbpe:cl100k_base", "minbpe-fixed:cl100k_base"])
def test_special_policies(registry: Registry, name: str) -> None:
    a = registry.get(name)
    ordinary = [27, 91, 8862, 728, 428, 91, 29]
    assert a.encode("<|endoftext|>", disallowed_special=()) == ordinary
    assert a.encode_ordinary("<|endoftext|>") == ordinary
    assert a.encode("<|endoftext|>hello", allowed_special="all") == [100257, 15339]
    assert a.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}) == [100257]
    # unlike tiktoken, a special outside the allowed set is ordinary text, not an error
    assert a.encode("<|fim_prefix|><|endoftext|>", allowed_special={"<|endoftext|>"}) == (
        a.encode_ordinary("<|fim_prefix|>") + [100257]
    )
    assert a.native.encode("<|endoftext|>", allowed_special="none") == ordinary
    with pytest.raises(ValueError, match="not understood"):
        a.native.encode("x", allowed_special="some")
    assert a.capabilities.special_policy == "ordinary-unless-allowed"
    assert a.special_tokens == minbpe.SPECIAL_TOKENS["cl100k_base"]


# -- decode -----------------------------------------------------------------------------


def test_upstream_decode_of_special_id_is_keyerror(up) -> None:
    outcome = capture("decode", up.decode, [100257, 15339], classify=up.classify_error)
    assert (outcome.category, outcome.native_type) == ("unknown-id", "builtins.KeyError")


def test_fixed_decode_of_special_id(fixed) -> None:
    assert fixed.decode([100257, 15339]) == "<|endoftext|>hello"
    assert fixed.decode_bytes([100257, 15339]) == b"<|endoftext|>hello"


def test_unknown_id(up, fixed) -> None:
    up_outcome = capture("decode", up.decode, [100261], classify=up.classify_error)
    assert (up_outcome.category, up_outcome.native_type) == ("unknown-id", "builtins.KeyError")
    fixed_outcome = capture("decode", fixed.decode, [100261], classify=fixed.classify_error)
    assert (fixed_outcome.category, fixed_outcome.native_type) == ("unknown-id", "builtins.ValueError")
    assert fixed_outcome.message.startswith("unknown token ID: 100261")


def test_decode_joins_bytes_before_utf8(up) -> None:
    ids = up.encode(" 😊")
    assert ids == [27623, 232]
    assert up.decode(ids[:1]) == " \ufffd"
    assert up.decode(ids) == " 😊"


def test_decode_supports_only_replace(up) -> None:
    outcome = capture("decode", up.decode, [15339], errors="strict", classify=up.classify_error)
    assert (outcome.category, outcome.native_type) == ("unsupported", "harness.outcomes.UnsupportedOperation")


def test_lone_surrogate_is_unencodable(up, fixed) -> None:
    for a in (up, fixed):
        outcome = capture("encode", a.encode_ordinary, "a\udc80", classify=a.classify_error)
        assert (outcome.category, outcome.native_type) == ("unencodable-text", "builtins.UnicodeEncodeError")


@pytest.mark.parametrize(
    ("encoding", "text", "ids"),
    [
        ("r50k_base", "Hi 你!", [17250, 220, 19526, 254, 0]),
        ("r50k_base", "internationalization", [45609, 1634]),
        ("r50k_base", "<|endoftext|>", None),
        ("o200k_base", "hello world", [24912, 2375]),
        ("o200k_base", "<|endoftext|>", None),
    ],
)
def test_other_encodings(registry: Registry, encoding: str, text: str, ids: list[int] | None) -> None:
    a = registry.get(f"minbpe-fixed:{encoding}")
    special = minbpe.SPECIAL_TOKENS[encoding]["<|endoftext|>"]
    if ids is None:
        assert a.encode(text, allowed_special="all") == [special]
        assert a.decode([special]) == text
    else:
        assert a.encode(text) == ids
        assert a.decode(ids) == text
