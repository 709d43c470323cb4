"""The reachability audit of a vocabulary (harness.checks.reachability), against real tiktoken.

Expected classes were measured by calling tiktoken directly: every decodable token's text
through ``Encoding.encode_ordinary``, then ``context_text`` of those not reached alone.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
import tiktoken

from harness.checks.reachability import CLASSES, audit, classify, context_text, token_texts


@lru_cache(maxsize=None)
def _pieces(name: str) -> dict[int, bytes | None]:
    enc = tiktoken.get_encoding(name)
    specials = set(enc.special_tokens_set)
    special_ids = {enc.encode_single_token(s) for s in specials}
    out: dict[int, bytes | None] = {}
    for i in range(enc.n_vocab):
        if i in special_ids:
            continue
        try:
            out[i] = enc.decode_single_token_bytes(i)
        except KeyError:
            out[i] = None
    return out


def _loop(enc: tiktoken.Encoding):
    return lambda texts: [enc.encode_ordinary(t) for t in texts]


def test_o200k_has_exactly_one_token_no_text_reaches() -> None:
    enc = tiktoken.get_encoding("o200k_base")
    pieces = _pieces("o200k_base")
    result = audit(pieces, _loop(enc))
    unreachable_texts = sorted(pieces[i].decode() for i in result.unreachable)  # type: ignore[union-attr]
    assert unreachable_texts == [" I'"]
    assert result.counts() == {"itself": 198424, "in-context": 11, "unreachable": 1, "undecodable": 1562, "absent": 19}
    # every in-context ID really comes out of its context text, and not of its text alone
    for token_id in result.in_context:
        text = pieces[token_id].decode()  # type: ignore[union-attr]
        assert enc.encode_ordinary(text) != [token_id]
    listed = result.to_json(pieces)["unreachable"]
    assert {entry["text"] for entry in listed} == {" I'"}  # type: ignore[index]


def test_cl100k_every_decodable_token_is_reached_alone() -> None:
    result = audit(_pieces("cl100k_base"), _loop(tiktoken.get_encoding("cl100k_base")))
    assert result.counts() == {"itself": 99483, "in-context": 0, "unreachable": 0, "undecodable": 773, "absent": 16}
    assert result.class_of(tiktoken.get_encoding("cl100k_base").encode_ordinary(" the")[0]) == "itself"


def test_an_encoder_that_splits_one_token_makes_it_unreachable() -> None:
    """Planted fault: an encoder that never emits " the" (it splits it). The audit must
    move exactly that ID out of ``itself``."""
    enc = tiktoken.get_encoding("cl100k_base")
    the = enc.encode_ordinary(" the")[0]
    pieces = {i: p for i, p in _pieces("cl100k_base").items() if i < 2000}

    def split(texts: list[str]) -> list[list[int]]:
        out = []
        for text in texts:
            ids: list[int] = []
            for token in enc.encode_ordinary(text):
                ids += enc.encode_ordinary(" ") + enc.encode_ordinary("the") if token == the else [token]
            out.append(ids)
        return out

    result = audit(pieces, split)
    assert result.unreachable == (the,)
    assert the not in result.itself


def test_classify_refuses_ids_it_was_not_given() -> None:
    with pytest.raises(ValueError, match="not encoded alone"):
        classify({0: b"a", 1: b"b"}, alone={0: [0]}, context={})


def test_contexts_and_texts() -> None:
    assert context_text(" the") == "x the the\n thex"
    assert token_texts({1: b"\xe4\xb8", 2: "中".encode()}) == {2: "中"}
    assert CLASSES[0] == "itself"
