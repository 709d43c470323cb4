"""Own byte-level BPE (issue 3, section 3): training, rank encoding, specials, save/load."""

from __future__ import annotations

import doctest
import json

import pytest

from harness.outcomes import capture
from implementations.bytebpe import model as bytebpe
from implementations.bytebpe import base as bytebpe_base
from implementations.bytebpe import ltr as bytebpe_ltr
from implementations.bytebpe import patterns as bytebpe_patterns
from implementations.bytebpe.model import ByteBPE, TrainingError, train
from implementations.bytebpe.base import (
    DisallowedSpecialError,
    ModelFileError,
    SpecialTokenError,
    UnknownTokenId,
)
from implementations.bytebpe.ltr import LeftToRightByteBPE
from implementations.bytebpe.patterns import GPT2_PATTERN, GPT4_PATTERN, PatternDropsText, split_chunks

FIGURE_TEXT = "低山 low low lower low\n低山"
A, B, C = ord("a"), ord("b"), ord("c")


@pytest.mark.parametrize("module", [bytebpe_base, bytebpe_patterns, bytebpe, bytebpe_ltr])
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


# -- training ------------------------------------------------------------------------


def test_figure_budget_274_gives_265_entries_after_9_merges() -> None:
    model = train(FIGURE_TEXT, vocab_size=274)
    assert len(model.merges) == 9
    assert model.ordinary_size == 265
    # ' l', 'ow', ' low', then the bytes of 低 and 山, then ' low low'
    assert [pair for pair, _ in sorted(model.merges.items(), key=lambda kv: kv[1])] == [
        (32, 108), (111, 119), (256, 257), (142, 229), (177, 177),
        (189, 259), (228, 261), (258, 258), (262, 260),
    ]
    assert model.vocab[262] == "低".encode()[:1] + "低".encode()[1:] + "山".encode()[:1]
    assert model.vocab[264] == "低山".encode()


def test_budget_is_an_upper_bound() -> None:
    assert len(train(FIGURE_TEXT, vocab_size=10_000).merges) == 9
    small = train(FIGURE_TEXT, vocab_size=259)
    assert len(small.merges) == 3 and small.ordinary_size == 259
    assert train(FIGURE_TEXT, vocab_size=256).ordinary_size == 256


def test_ties_go_to_the_smallest_pair_and_single_pairs_never_merge() -> None:
    # (a,b) and (b,c) are both seen twice; (a,b) is lexicographically smaller
    assert list(train("abcabc", vocab_size=257).merges) == [(A, B)]
    assert train("abcd", vocab_size=300).merges == {}


def test_pre_split_sums_counts_over_chunks_and_never_crosses_them() -> None:
    # chunks 'ab', ' ab', ' ab': (a,b) three times, then (' ', ab) twice
    model = train("ab ab ab", vocab_size=300, pattern_name="gpt2")
    assert list(model.merges) == [(A, B), (32, 256)]
    # 'x.x.x.': every character is its own chunk under GPT-2's pattern: nothing to merge
    assert train("x.x.x.", vocab_size=300, pattern_name="gpt2").merges == {}
    assert list(train("x.x.x.", vocab_size=257).merges) == [(ord("x"), ord("."))]


def test_several_texts_are_split_on_their_own() -> None:
    # 'ab' + 'ab' would hold (b,a) once if joined; separately there is no (b,a) at all
    model = train(["ab", "ab"], vocab_size=300, pattern_name="none")
    assert list(model.merges) == [(A, B)]


def test_training_refuses_bad_arguments() -> None:
    with pytest.raises(TrainingError, match="below the 256"):
        train("abc", vocab_size=255)
    with pytest.raises(TrainingError, match="lone surrogate"):
        train("ab\ud800ab", vocab_size=300)
    with pytest.raises(ValueError, match="unknown pre-split pattern 'gpt3'"):
        train("abc", vocab_size=300, pattern_name="gpt3")


# -- pre-split -----------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [GPT2_PATTERN, GPT4_PATTERN])
@pytest.mark.parametrize(
    "text",
    ["hello world", "  a\r\n\r\nb\t\t c  ", "it's 1234567!!\n中文😀", "\x00\x85\u2028 x", ""],
)
def test_builtin_patterns_chunks_rebuild_the_text(pattern: str, text: str) -> None:
    assert "".join(split_chunks(text, pattern)) == text


def test_seed_003_pre_split_example() -> None:
    assert split_chunks(" hello1234!\n中文", GPT4_PATTERN) == [" hello", "123", "4", "!\n", "中文"]


def test_a_pattern_that_drops_characters_is_an_error_naming_the_first_one() -> None:
    model = ByteBPE(pattern=r"\w+")
    assert model.pattern_name == "custom"
    with pytest.raises(PatternDropsText, match=r"position 2, character '\\t' \(U\+0009\)"):
        model.encode_ordinary("ab\tc d")
    with pytest.raises(PatternDropsText, match="position 0, character ' '"):
        train(" ab", vocab_size=300, pattern=r"\w+")


# -- encoding by rank ----------------------------------------------------------------


def test_encode_by_stored_rank_not_left_to_right() -> None:
    # (b,c) -> 256 at rank 0, (a,b) -> 257 at rank 1 (seed 002, §3.5)
    merges = [(B, C), (A, B)]
    right, wrong = ByteBPE(merges), LeftToRightByteBPE(merges)
    assert right.encode_ordinary("abc") == [A, 256]
    assert wrong.encode_ordinary("abc") == [257, C]
    assert right.decode_bytes([A, 256]) == wrong.decode_bytes([257, C]) == b"abc"


def test_encode_merges_all_non_overlapping_occurrences_per_round() -> None:
    model = ByteBPE([(A, A)])
    rounds = model.trace("aaaaa")
    assert model.encode_ordinary("aaaaa") == [256, 256, A]
    assert [(r.pair, r.rank, r.merged, r.result) for r in rounds] == [((b"a", b"a"), 0, 2, 256)]


def test_encoding_never_retrains_on_the_input() -> None:
    model = train(FIGURE_TEXT, vocab_size=274)
    # 'zz zz zz' is frequent in this input, but no merge was learned for it
    assert model.encode_ordinary("zz zz zz") == list(b"zz zz zz")


def test_trace_of_the_figure_model() -> None:
    model = train(FIGURE_TEXT, vocab_size=274)
    assert [(r.pair, r.rank, r.merged) for r in model.trace(" lower")] == [
        ((b" ", b"l"), 0, 1), ((b"o", b"w"), 1, 1), ((b" l", b"ow"), 2, 1),
    ]
    assert model.encode_ordinary(" lower") == [258, ord("e"), ord("r")]


def test_decode_joins_all_bytes_before_decoding_once() -> None:
    model = ByteBPE()
    shan = list("山".encode())
    assert model.decode(shan) == "山"
    assert model.decode(shan[:1]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        model.decode(shan[:2], errors="strict")


def test_decode_of_an_unknown_id() -> None:
    model = ByteBPE()
    with pytest.raises(UnknownTokenId, match="token ID 256 is not in this vocabulary"):
        model.decode([97, 256])
    outcome = capture("decode", model.decode, [256])
    assert (outcome.category, outcome.native_type) == (
        "unknown-id", "implementations.bytebpe.base.UnknownTokenId",
    )


# -- special tokens ------------------------------------------------------------------


def test_seed_003_special_token_policies() -> None:
    tok = ByteBPE(pattern_name="gpt4")
    tok.register_special({"<|end|>": 1000})
    with pytest.raises(DisallowedSpecialError, match="'<\\|end\\|>' at position 1"):
        tok.encode("x<|end|>")
    assert tok.encode("x<|end|>", allowed_special=set()) == list(b"x<|end|>")
    assert tok.encode("x<|end|>", allowed_special="all") == [ord("x"), 1000]
    assert tok.encode("x<|end|>", allowed_special={"<|end|>"}) == [ord("x"), 1000]
    assert tok.decode([ord("x"), 1000]) == "x<|end|>"
    outcome = capture("encode", tok.encode, "<|end|>")
    assert outcome.category == "disallowed-special"


def test_explicit_set_makes_only_its_literals_special() -> None:
    tok = ByteBPE(special_tokens={"<|a|>": 300, "<|b|>": 301})
    assert tok.encode("<|a|><|b|>", allowed_special={"<|a|>"}) == [300, *b"<|b|>"]
    with pytest.raises(SpecialTokenError, match="'<\\|c\\|>', which is not a registered"):
        tok.encode("x", allowed_special={"<|c|>"})


def test_overlapping_specials_match_longest_first() -> None:
    tok = ByteBPE(special_tokens={"<|a|>": 300, "<|a|>b": 301, "b<|a|>": 302})
    assert tok.encode("<|a|>b", allowed_special="all") == [301]
    assert tok.encode("x<|a|>c", allowed_special="all") == [ord("x"), 300, ord("c")]
    # leftmost wins before longest: 'b<|a|>' starts first
    assert tok.encode("b<|a|>b", allowed_special="all") == [302, ord("b")]
    with pytest.raises(DisallowedSpecialError, match="'b<\\|a\\|>' at position 0"):
        tok.encode("b<|a|>b")


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"<|x|>": 97}, "ID 97, which is an ordinary token"),
        ({"<|x|>": 300, "<|y|>": 300}, "share ID 300"),
        ({"": 300}, "non-empty string"),
        ({"<|x|>": True}, "non-negative integers"),
        ({"<|x|>": -1}, "non-negative integers"),
        ({"<|x|>": "300"}, "non-negative integers"),
        ({"<|\ud800|>": 300}, r"'\\ud800' \(U\+D800\), which has no UTF-8 form"),
    ],
)
def test_special_registration_is_validated(mapping: dict, message: str) -> None:
    tok = ByteBPE()
    with pytest.raises(SpecialTokenError, match=message):
        tok.register_special(mapping)
    assert tok.special_tokens == {}  # nothing half-registered


def test_re_registering_a_literal_with_another_id_is_refused() -> None:
    tok = ByteBPE(special_tokens={"<|x|>": 300})
    tok.register_special({"<|x|>": 300})
    with pytest.raises(SpecialTokenError, match="already registered with ID 300, not 301"):
        tok.register_special({"<|x|>": 301})
    with pytest.raises(SpecialTokenError, match="ordinary token"):
        ByteBPE([(A, B)], special_tokens={"<|x|>": 256})


# -- save / load ---------------------------------------------------------------------


def test_save_load_round_trips_exactly(tmp_path) -> None:
    model = train(
        [FIGURE_TEXT, "it's 1234 lower lowest\r\n"], vocab_size=280, pattern_name="gpt4",
        special_tokens={"<|endoftext|>": 280, "<|终|>": 281},
    )
    first = model.save(tmp_path / "m.json")
    loaded = ByteBPE.load(first)
    assert loaded.same_model(model)
    assert loaded.merges == model.merges and loaded.vocab == model.vocab
    assert loaded.special_tokens == model.special_tokens
    assert all(isinstance(k, int) for k in loaded.vocab)  # JSON's string keys restored
    assert (loaded.pattern_name, loaded.pattern) == ("gpt4", GPT4_PATTERN)
    second = loaded.save(tmp_path / "again.json")
    assert first.read_bytes() == second.read_bytes()
    text = "低山 lower <|endoftext|>"
    assert loaded.encode(text, allowed_special="all") == model.encode(text, allowed_special="all")


def test_custom_pattern_survives_save_load(tmp_path) -> None:
    model = train("ab ab ab", vocab_size=300, pattern=r"\S+|\s+")
    loaded = ByteBPE.load(model.save(tmp_path / "m.json"))
    assert (loaded.pattern_name, loaded.pattern) == ("custom", r"\S+|\s+")


def _saved(tmp_path, edit) -> str:
    data = train(FIGURE_TEXT, vocab_size=274).to_json()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="other"), "not a tokconf byte-BPE model"),
        (lambda d: d.update(version=99), "model version 99"),
        (lambda d: d["vocab"].update({"256": "ffff"}), "vocab disagrees with its merges at ID 256"),
        (lambda d: d["merges"].insert(0, [300, 1]), "does not exist before it"),
        (lambda d: d["merges"].append([32, 108]), "repeats merge 0"),
        (lambda d: d.update(special_tokens={"<|x|>": 100}), "ordinary token"),
        (lambda d: d.update(merges="nope"), "malformed"),
    ],
)
def test_load_rejects_broken_model_files(tmp_path, edit, message: str) -> None:
    with pytest.raises(ModelFileError, match=message):
        ByteBPE.load(_saved(tmp_path, edit))


def test_load_of_a_missing_file_says_how_to_make_one(tmp_path) -> None:
    with pytest.raises(ModelFileError, match="does not exist; train one with `tokconf train"):
        ByteBPE.load(tmp_path / "nope.json")
