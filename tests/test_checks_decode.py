"""round-trip, per-token-decode and decode."""

from __future__ import annotations

from harness.cases.model import Case, DecodeProbe, ExpectedError
from harness.checks.base import AGREE, ALL, SKIP, Finding, expected_text
from tests.wrong_adapters import ToyClosed, toy
from tests.check_helpers import REF, calls, run



def test_expected_text_resolves_surrogates_per_code_point() -> None:
    assert expected_text("a\ud800b") == "a\ufffdb"
    assert expected_text("\ud83d\ude00") == "\U0001F600"  # a high+low pair reads as UTF-16
    assert expected_text("\ude00\ud83d") == "\ufffd\ufffd"  # the other order is two lone ones
    assert expected_text("\ud83d") == "\ufffd"
    assert expected_text("plain") == "plain"


def test_round_trip_accepts_the_replacement_of_lone_surrogates() -> None:
    for text in ("a\ud800b", "\ud83d\ude00", "x\udfff\ud800", "héllo 你 \U0001F600"):
        assert run("round-trip", REF, text) == AGREE, text


def test_round_trip_bytes_and_text_kinds() -> None:
    lossy = run("round-trip", calls(toy("rstrip")), "a\t")
    assert isinstance(lossy, Finding) and lossy.kind == "bytes"
    assert dict(lossy.outcomes)["expected"].value == b"a\t"
    split = run("round-trip", calls(toy("per-token-decode")), "é")
    assert isinstance(split, Finding) and split.kind == "text"
    assert dict(split.outcomes)["toy:per-token-decode"].value == "\ufffd\ufffd"


def test_round_trip_leaves_a_refusal_to_error_category_except_for_closed_vocabularies() -> None:
    assert run("round-trip", calls(toy("strict-surrogates")), "\ud800") == SKIP
    closed = calls(ToyClosed())
    finding = run("round-trip", closed, "abc", reference=closed)
    assert isinstance(finding, Finding) and finding.kind == "encode:raised:unknown-token"
    assert run("round-trip", closed, "ab a", reference=closed) == AGREE


def test_round_trip_of_its_own_special_ids() -> None:
    finding = run("round-trip", calls(toy("decode-raises")), "<|x|>", ALL)
    assert isinstance(finding, Finding) and finding.kind == "decode:raised:unknown-id"
    assert run("round-trip", REF, "<|x|>", ALL) == AGREE


def test_per_token_decode() -> None:
    assert run("per-token-decode", REF, "é你\U0001F600") == AGREE
    finding = run("per-token-decode", calls(toy("per-token-decode")), "你")
    assert isinstance(finding, Finding) and finding.kind == "text"
    assert "joining the bytes and decoding once gives '你'" in finding.detail
    piece = run("per-token-decode", calls(toy("decode-raises")), "a<|x|>", ALL)
    assert isinstance(piece, Finding) and piece.kind == "piece:raised:unknown-id"


def test_decode_of_the_references_ids() -> None:
    assert run("decode", calls(toy(name="toy:twin")), "a<|x|>", ALL) == AGREE
    finding = run("decode", calls(toy("decode-raises")), "a<|x|>", ALL)
    assert isinstance(finding, Finding) and finding.kind == "raised:unknown-id|ok"
    assert finding.decode_ids == (97, 256)
    text = run("decode", calls(toy("per-token-decode")), "é")
    assert isinstance(text, Finding) and text.kind == "text"


def test_decode_probes() -> None:
    probes = (
        DecodeProbe(ids=(195,), text="\ufffd"),
        DecodeProbe(ids=(195, 169), text="é"),
        DecodeProbe(ids=(195,), errors="strict", error=ExpectedError("invalid-utf8", "UnicodeDecodeError")),
        DecodeProbe(ids=(999,), error=ExpectedError("unknown-id", "builtins.KeyError")),
        DecodeProbe(ids=(256, 97), bytes_hex="3c7c787c3e61"),
    )
    case = Case(id="p", text="", file="t.yaml", line=1, encodings=("toy-bytes",), decode=probes)
    assert run("decode", REF, "", case=case) == AGREE
    finding = run("decode", calls(toy("per-token-decode")), "", case=case)
    assert isinstance(finding, Finding) and finding.kind == "text" and not finding.shrinkable
    assert finding.decode_ids == (195, 169)
    raising = run("decode", calls(toy("decode-raises")), "", case=case)
    assert isinstance(raising, Finding) and raising.kind == "raised:unknown-id|ok"
    assert raising.decode_ids == (256, 97)
