"""The worker protocol (harness.worker.protocol): frames, values, adapter info, and a real worker.

Issues 12, 15 and 16 build other workers on this contract, so every class of code point
is round-tripped exactly, through JSON text as another language would read it.
"""

from __future__ import annotations

import io
import json
import struct
from dataclasses import fields

import pytest

from harness.calls import AdapterInfo, Calls, InProcess
from harness.cases.model import Policy
from harness.checks.base import ORDINARY
from harness.interface import Capabilities, TraceRound
from harness.outcomes import Outcome
from harness.registry import default_registry
from harness.worker.client import WorkerExecutor
from harness.worker.protocol import (
    MAX_FRAME,
    ProtocolError,
    decode_outcome,
    decode_value,
    encode_frame,
    encode_outcome,
    encode_value,
    info_from_json,
    info_to_json,
    outcome_frame,
    read_frame,
)
from harness.worker.setup import Isolation, WorkerSetup
from tests.probe_adapters import QUESTION

#: one text per class of code point a tokenizer's input may hold
TEXTS = {
    "empty": "",
    "ascii": "hello world",
    "nul": "a\x00b\x00",
    "controls": "\x01\x1f\x7f\x85\u2028\u2029",
    "bmp": "héllo 你好 \u0300",
    "u+fffe/ffff": "\ufffe\uffff",
    "astral": "\U0001f600\U0001f1fa\U0001f1f8",
    "u+10ffff": "\U0010ffff",
    "lone high": "a\ud800",
    "lone low": "\udc00b",
    "reversed pair": "\ude00\ud83d",
    # two code points, not the emoji: JSON's "\ud83d\ude00" would join them
    "surrogate pair as two code points": "\ud83d\ude00",
    "pair beside the emoji": "\ud83d\ude00\U0001f600",
    "every surrogate edge": "\ud800\udbff\udc00\udfff",
}


def wire(value: object) -> object:
    """Through the JSON text of a frame and back, as a reader in another language sees it."""
    return decode_value(json.loads(json.dumps(encode_value(value), ensure_ascii=True)))


@pytest.mark.parametrize("name", list(TEXTS))
def test_every_code_point_class_round_trips_exactly(name: str) -> None:
    text = TEXTS[name]
    back = wire(text)
    assert back == text and [ord(c) for c in back] == [ord(c) for c in text]


def test_a_surrogate_pair_stays_two_code_points_and_the_emoji_stays_one() -> None:
    assert len(wire("\ud83d\ude00")) == 2
    assert len(wire("\U0001f600")) == 1
    assert wire("\ud83d\ude00") != wire("\U0001f600")


def test_text_without_surrogates_is_a_plain_json_string() -> None:
    assert encode_value("a\x00\uffff\U0010ffff") == "a\x00\uffff\U0010ffff"
    assert list(encode_value("\ud800")) == ["u8"]


def test_bytes_of_every_value_round_trip() -> None:
    every = bytes(range(256))
    assert wire(every) == every
    assert wire(b"\xed\xa0\x80\xff\xfe") == b"\xed\xa0\x80\xff\xfe"


def test_nested_values_policies_and_trace_rounds() -> None:
    ids = tuple(range(0, 300000, 7001)) + (2**40,)
    assert wire(ids) == ids
    assert wire(((1, 2), (), ("a\ud800", b"\x00"))) == ((1, 2), (), ("a\ud800", b"\x00"))
    policy = Policy(allowed_special=frozenset({"<|endoftext|>", "\ud800"}), disallowed_special="all")
    assert wire(policy) == policy
    assert wire(Policy(allowed_special="all", disallowed_special=frozenset())) == Policy("all", frozenset())
    rounds = (TraceRound(pair=(b" ", b"t"), rank=256, merged=2, result=b" t"), TraceRound(("a", 1), None, 0))
    assert wire(rounds) == rounds
    with pytest.raises(TypeError, match="cannot cross"):
        encode_value(object())


@pytest.mark.parametrize("outcome", [
    Outcome.ok((1, 2)), Outcome.ok("\ud800x"), Outcome.ok(b"\xff"),
    Outcome.raised("unknown-id", "builtins.KeyError", "9\udc00"),
    Outcome.timeout(2.5), Outcome.crashed("SIGSEGV", "the worker died"), Outcome.crashed("out-of-memory"),
])
def test_outcomes_round_trip(outcome: Outcome) -> None:
    assert decode_outcome(json.loads(json.dumps(encode_outcome(outcome)))) == outcome



def test_each_policy_decodes_to_itself_when_many_cross_in_turn() -> None:
    """A worker decodes each distinct policy once and reuses it: policies that differ in
    one literal (a lone surrogate included), or only in which side holds it, stay apart."""
    literals = ["<|endoftext|>", "<|fim_prefix|>", "\ud800", "<|endoftext|>\udfff"]
    policies = [Policy(allowed_special=frozenset({lit}), disallowed_special="all") for lit in literals]
    policies += [Policy(allowed_special=frozenset(), disallowed_special=frozenset({lit})) for lit in literals]
    policies += [ORDINARY, Policy("all", frozenset()), Policy(frozenset(literals), "all")]
    for _ in range(2):
        assert [decode_value(json.loads(json.dumps(encode_value(p)))) for p in policies] == policies


@pytest.mark.parametrize("outcome", [
    Outcome.ok((15339, 1917)), Outcome.ok(()), Outcome.ok((2**40, 0)), Outcome.ok((True, 1)), Outcome.ok(b"\xff"),
    Outcome.ok("\ud800"), Outcome.raised("unknown-id", "builtins.KeyError", "9"), Outcome.timeout(1),
])
def test_an_outcome_frame_is_the_generic_frame_byte_for_byte(outcome: Outcome) -> None:
    """The worker writes an answer's frame without json.dumps when it is IDs; the bytes
    are exactly the generic frame's (a bool is no ID: it goes the generic way)."""
    generic = encode_frame({"type": "outcome", "n": 12, "outcome": encode_outcome(outcome)})
    assert outcome_frame(12, outcome) == generic
    assert decode_outcome(read_frame(io.BytesIO(generic))["outcome"]) == outcome

def test_frames_are_length_prefixed_ascii_json() -> None:
    frame = encode_frame({"type": "calls", "calls": [{"n": 0, "op": "encode", "args": [encode_value("你\ud800")]}]})
    (length,) = struct.unpack(">I", frame[:4])
    assert length == len(frame) - 4
    assert frame[4:].isascii()
    stream = io.BytesIO(frame + encode_frame({"type": "exit"}))
    first = read_frame(stream)
    assert decode_value(first["calls"][0]["args"][0]) == "你\ud800"
    assert read_frame(stream) == {"type": "exit"}
    assert read_frame(stream) is None


def test_broken_frames_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError, match="inside a frame header"):
        read_frame(io.BytesIO(b"\x00\x00"))
    with pytest.raises(ProtocolError, match="inside a frame"):
        read_frame(io.BytesIO(struct.pack(">I", 10) + b"{}"))
    with pytest.raises(ProtocolError, match="over the"):
        read_frame(io.BytesIO(struct.pack(">I", MAX_FRAME + 1)))
    with pytest.raises(ProtocolError, match="not JSON"):
        read_frame(io.BytesIO(struct.pack(">I", 3) + b"abc"))
    with pytest.raises(ProtocolError, match="with a type"):
        read_frame(io.BytesIO(struct.pack(">I", 2) + b"[]"))


def test_every_adapter_info_field_crosses_the_boundary() -> None:
    caps = Capabilities(special_policy="always-special", encode_ordinary=False, batch=True, trace=True,
                        pretokenize=True, alphabet=frozenset({"a", "\ud800", "\U0001f600"}), notes=("n", "\udcff"),
                        api_surface="tiktoken", words=("she", "\ud800"), generated_halvings=2,
                        long_limit=10_000)
    info = AdapterInfo(name="x:\ud83d", encoding="cl100k_base", library="lib", capabilities=caps,
                       special_tokens=(("<|a|>", 5), ("\udc00", 6)), provider="plugin m:x", custom_domain=True,
                       reproduce_flags=("--source-root", "/tmp/\u00e9"), declares_like=("hf:*",),
                       language="JavaScript", vocabulary=(("cl100k_base.tiktoken", "ab" * 32),),
                       split_pattern="\\s+(?!\\S)|\ud800",
                       special_tokens_error="raised:internal-error RuntimeError: \udc80")
    # every field is set away from its default, so a field the protocol forgets fails here
    for f in fields(AdapterInfo):
        if f.default is not f.default_factory:  # type: ignore[misc] - dataclasses.MISSING compares fine
            assert getattr(info, f.name) != f.default, f.name
    for f in fields(Capabilities):
        assert getattr(caps, f.name) != f.default, f.name
    assert info_from_json(json.loads(json.dumps(info_to_json(info)))) == info
    assert set(info_to_json(info)) == {f.name for f in fields(AdapterInfo)}


def test_a_real_worker_answers_like_the_adapter_in_process() -> None:
    name = "tiktoken:cl100k_base"
    registry = default_registry()
    here = Calls(InProcess(registry.get(name), provider=registry.spec(name).provider))
    worker = WorkerExecutor(name, Isolation(mode="all"))
    try:
        there = Calls(worker)
        assert there.info == here.info
        for text in TEXTS.values():
            for op, args in [("encode", (text, ORDINARY)), ("encode_ordinary", (text,)), ("pretokenize", (text,))]:
                assert getattr(there, op)(*args) == getattr(here, op)(*args), (op, text)
        ids = here.encode("héllo \U0001f600", ORDINARY).value
        assert there.decode_bytes(ids) == here.decode_bytes(ids)
        assert there.decode((100276, 10**9), "replace") == here.decode((100276, 10**9), "replace")
        # many calls in one round trip, with the follow-ups a check asks next
        answers = dict(worker.call_many([("encode", (t, ORDINARY), True) for t in TEXTS.values()]))
        for text in TEXTS.values():
            got = answers[("encode", text, ORDINARY)]
            assert got == here.encode(text, ORDINARY)
            assert answers[("decode_bytes", got.value)] == here.decode_bytes(got.value)
    finally:
        worker.close()


def test_a_worker_sees_no_network_interface_but_loopback_when_the_namespace_is_in_force() -> None:
    registry = default_registry(plugins=["tests.probe_adapters:network"])
    setup = WorkerSetup.from_registry(registry)
    assert setup.plugins == ("tests.probe_adapters:network",)
    worker = WorkerExecutor("probe:network", Isolation(mode="all", setup=setup))
    try:
        [(_, seen)] = worker.call_many([("encode", (QUESTION, ORDINARY), False)])
        assert worker.network is not None and worker.network.socket_block and worker.network.detail
        if worker.network.namespace:
            assert seen == Outcome.ok((1,))
        else:  # the OS refused the namespace: the worker must say so, and still sees the host
            assert "socket block only" in worker.network.detail
    finally:
        worker.close()
    here = InProcess(registry.get("probe:network")).call("encode", QUESTION, ORDINARY)
    assert here.is_ok and here.value[0] >= 1
