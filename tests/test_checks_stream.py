"""stream-decode on real adapters: prefixes and windows that cut characters, DecodeStream."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from harness.checks.base import AGREE, SKIP, Finding
from harness.checks.stream import MAX_CUTS, Detokenizer, _fed_cut_points, cut_points
from harness.generate.strategies import cut_utf8_pieces
from harness.registry import default_registry
from harness.selftest.faults_api import DecodePerToken, DropsIncompleteTail, DropsLeadingContinuation, QuestionMarks, StrictIgnored
from tests.check_helpers import calls, run


@pytest.fixture(scope="module")
def tiktoken_cl100k():  # type: ignore[no-untyped-def]
    return calls(default_registry().get("tiktoken:cl100k_base"))


@pytest.fixture(scope="module")
def tiktoken_r50k():  # type: ignore[no-untyped-def]
    return calls(default_registry().get("tiktoken:r50k_base"))


def test_the_detokenizer_holds_back_incomplete_utf8() -> None:
    detok = Detokenizer()
    assert detok.feed(b"\xe4") == "" and detok.pending
    assert detok.feed(b"\xbd\xa0a") == "你a" and not detok.pending
    assert detok.feed(b"\xff") == "\ufffd"  # invalid at once, not held
    assert detok.feed(b"\xf0\x9f") == "" and detok.finish() == "\ufffd"


def test_cut_points_are_the_prefixes_that_end_inside_a_character() -> None:
    # 😀 split 3+1 bytes, then an ASCII token
    prefixes, windows = cut_points([b"\xf0\x9f\x98", b"\x80", b"a"])
    assert prefixes == {1: ("", True), 2: ("😀", False)} and windows == [1]
    assert cut_points([b"ab", b"c"]) == ({}, [])  # nothing cut: nothing to decode


@given(st.one_of(cut_utf8_pieces(), st.lists(st.binary(max_size=4), max_size=30)))
def test_cut_points_from_byte_offsets_are_what_the_fed_decoder_gives(pieces: list[bytes]) -> None:
    """The offset arithmetic of valid UTF-8 (:func:`cut_points`) against feeding the
    incremental decoder piece by piece (:func:`_fed_cut_points`), which invalid bytes take."""
    assert cut_points(pieces) == _fed_cut_points(pieces)


def test_the_reference_agrees_with_itself_on_cut_sequences(tiktoken_cl100k) -> None:  # type: ignore[no-untyped-def]
    for text in ("\x85", "你好 \U0001F9D1\U0001F3FF\u200d\U0001F4BB", "plain ascii", "é\u0301"):
        assert run("stream-decode", tiktoken_cl100k, text, reference=tiktoken_cl100k) in (AGREE, SKIP), text


@pytest.mark.parametrize("fault, kind", [
    (StrictIgnored, "prefix-strict:ok"),
    (QuestionMarks, "prefix-text"),
    (DropsIncompleteTail, "prefix-bytes"),
    (DropsLeadingContinuation, "window-text"),
])
def test_planted_decoder_faults_show_on_cut_sequences(tiktoken_cl100k, fault, kind) -> None:  # type: ignore[no-untyped-def]
    # "\x85" is two tokens in cl100k_base: [126 = c2, 227 = 85]; only a cut sequence shows these
    finding = run("stream-decode", calls(fault()), "\x85", reference=tiktoken_cl100k)
    assert isinstance(finding, Finding) and finding.kind == kind
    assert finding.decode_ids in ((126,), (227,))
    assert run("decode", calls(fault()), "\x85", reference=tiktoken_cl100k) == AGREE  # the whole list is fine


def test_a_per_token_decoder_is_the_decode_checks_business(tiktoken_cl100k) -> None:  # type: ignore[no-untyped-def]
    # the prefix [126] alone gives U+FFFD either way; the whole list shows the fault
    assert run("stream-decode", calls(DecodePerToken()), "\x85", reference=tiktoken_cl100k) == AGREE
    assert isinstance(run("decode", calls(DecodePerToken()), "\x85", reference=tiktoken_cl100k), Finding)


def test_gpt3_tokenizer_decodes_a_cut_character_strictly(tiktoken_r50k) -> None:  # type: ignore[no-untyped-def]
    finding = run("stream-decode", calls(default_registry().get("gpt3-tokenizer:gpt2")), "你", reference=tiktoken_r50k)
    assert isinstance(finding, Finding) and finding.kind == "prefix-text:raised:invalid-utf8"
    assert finding.decode_ids == (19526,)


def test_hugging_face_decode_stream_never_emits_a_trailing_replacement_character(tiktoken_cl100k) -> None:  # type: ignore[no-untyped-def]
    hf = calls(default_registry().get("hf:cl100k_base"))
    finding = run("stream-decode", hf, "a\ufffd", reference=tiktoken_cl100k)
    assert isinstance(finding, Finding) and finding.kind == "decode-stream"
    assert "emits 'a'" in finding.detail and "gives 'a\ufffd'" in finding.detail
    # a U+FFFD with text after it comes out, late but whole
    assert run("stream-decode", hf, "a\ufffdb", reference=tiktoken_cl100k) == AGREE
    assert run("stream-decode", hf, "你好 \U0001F600", reference=tiktoken_cl100k) == AGREE


def test_cut_points_of_a_long_input_take_memory_linear_in_its_length() -> None:
    """Every token of a run of CJK split mid-character ends inside one: the cuts once kept a
    joined copy of the text so far at each of them, quadratic in memory (a 10^5-character
    input of the long tier took gigabytes and the run was OOM-killed)."""
    import tracemalloc

    pieces = [part for _ in range(6_000) for part in ("\u4f60".encode()[:1], "\u4f60".encode()[1:])]
    tracemalloc.start()
    try:
        prefixes, windows = cut_points(pieces)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000, peak  # the quadratic copies: ~18 million characters
    assert len(prefixes) <= MAX_CUTS and all(held for k, (_, held) in prefixes.items() if k != len(pieces) - 1)
    k = next(iter(prefixes))
    assert prefixes[k] == ("\u4f60" * (k // 2), True)
