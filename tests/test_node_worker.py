"""The Node worker (harness/worker/node/): the protocol in JavaScript, text crossing exactly.

A JavaScript string is UTF-16 code units; a Python str is code points. The test adapter
``tests/node/echo.mjs`` answers ``encode`` with the code units it received and ``decode``
with the string of the code units it is given, so each direction is seen exactly:

- Python -> Node: every code point class (ASCII, NUL, controls, U+FEFF, U+FFFE, U+FFFF,
  each of the 2048 surrogates alone, high+low written as two code points, reversed pairs,
  astral characters up to U+10FFFF) arrives as the code units UTF-16 gives it;
- Node -> Python: lone surrogates, reversed pairs, NUL and U+FFFF come back as those code
  points, and a high+low pair as the one astral character JSON and UTF-16 make of it.

The wire itself is checked too: a frame the worker writes is ASCII, a lone surrogate in
it is the escape ``\\udXXX`` (well-formed ``JSON.stringify``).
"""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest

from harness.cases.model import Policy
from harness.outcomes import ASK_APART, Outcome
from harness.worker.node import NodeExecutor, NodeSetup, node_binary, node_unavailable_reason, worker_script
from harness.worker.setup import Isolation
from tests.test_worker_bulk import counted

ECHO = str(Path(__file__).resolve().parent / "node" / "echo.mjs")

pytestmark = pytest.mark.skipif(node_unavailable_reason() is not None, reason=str(node_unavailable_reason()))


def utf16_units(text: str) -> list[int]:
    """What a JavaScript string made from ``text`` holds: a surrogate code point is its
    own code unit, an astral one a pair."""
    units: list[int] = []
    for ch in text:
        cp = ord(ch)
        if cp >= 0x10000:
            v = cp - 0x10000
            units += [0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)]
        else:
            units.append(cp)
    return units


def python_text(units: list[int]) -> str:
    """What Python reads from a JSON string of these code units: high+low joins."""
    out: list[str] = []
    i = 0
    while i < len(units):
        u = units[i]
        if 0xD800 <= u <= 0xDBFF and i + 1 < len(units) and 0xDC00 <= units[i + 1] <= 0xDFFF:
            out.append(chr(0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00)))
            i += 2
            continue
        out.append(chr(u))
        i += 1
    return "".join(out)


@pytest.fixture(scope="module")
def echo():
    executor = NodeExecutor("echo:test", Isolation(timeout_s=20), NodeSetup(modules=(("echo", ECHO),)))
    yield executor
    executor.close()


CLASSES = {
    "ascii": "hello, world",
    "nul-and-controls": "\x00a\x00\x01\x1f\x7f\x85",
    "latin-1": "".join(chr(c) for c in range(0x80, 0x100)),
    "bmp-specials": "\ufeff\ufffe\uffff\ufffd\u2028\u2029",
    "lone-high": "a\ud800b\udbffc",
    "lone-low": "\udc00x\udfff",
    "high-low-as-two-code-points": "\ud83d\ude00",
    "reversed-pair": "\ude00\ud83d",
    "high-high-low": "\ud800\ud800\udfff",
    "astral": "\U00010000\U0001f600\U0010ffff",
    "astral-beside-lone": "\ud800\U0001f600\udc00",
}


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_text_reaches_node_as_its_utf16_code_units(echo, label):
    text = CLASSES[label]
    got = echo.call("encode", text, Policy())
    assert got.is_ok, got.describe()
    assert list(got.value) == utf16_units(text)


@pytest.mark.parametrize("label", sorted(CLASSES))
def test_text_comes_back_from_node_exactly(echo, label):
    units = utf16_units(CLASSES[label])
    got = echo.call("decode", tuple(units), "replace")
    assert got.is_ok, got.describe()
    assert got.value == python_text(units)
    # and a string handed to Node comes back unchanged unless a high+low pair was
    # written as two code points (JavaScript cannot keep those apart)
    back = echo.call("pretokenize", CLASSES[label])
    assert back.value == (python_text(units),)


def test_every_surrogate_alone_both_ways(echo):
    for start in range(0xD800, 0xE000, 256):
        block = [start + k for k in range(256)]
        # separated by "." so no high+low pair forms
        text = ".".join(chr(u) for u in block)
        got = echo.call("encode", text, Policy())
        assert list(got.value) == utf16_units(text)
        back = echo.call("decode", tuple(utf16_units(text)), "replace")
        assert back.value == text


def test_every_code_point_in_one_string(echo):
    """All 1,114,112 code points (surrogates included) in one call, both ways."""
    text = "".join(chr(c) for c in range(0x110000))
    units = utf16_units(text)
    got = echo.call("encode", text, Policy())
    assert got.is_ok, got.describe()
    assert list(got.value) == units
    back = echo.call("decode", tuple(units), "replace")
    assert back.value == python_text(units)


def test_the_wire_is_ascii_with_surrogate_escapes():
    """Talk to worker.mjs directly (no launcher): read the raw bytes of its answer."""
    proc = subprocess.Popen([node_binary(), str(worker_script())], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)

    def send(message: dict) -> None:
        payload = json.dumps(message).encode("ascii")
        proc.stdin.write(struct.pack(">I", len(payload)) + payload)
        proc.stdin.flush()

    def receive() -> bytes:
        (length,) = struct.unpack(">I", proc.stdout.read(4))
        return proc.stdout.read(length)

    try:
        send({"type": "load", "adapter": "echo:test", "setup": {"node": {"modules": {"echo": ECHO}}}})
        ready = json.loads(receive())
        assert ready["type"] == "ready" and ready["info"]["language"] == "JavaScript"
        send({"type": "calls", "calls": [{"n": 0, "op": "decode", "args": [[0xD800, 0x61, 0xDE00, 0xE9, 0xD83D, 0xDE00], "replace"]}]})
        raw = receive()
        assert raw.isascii()
        assert b'"\\ud800a\\ude00\\u00e9\\ud83d\\ude00"' in raw
        assert json.loads(raw)["outcome"]["ok"] == "\ud800a\ude00\xe9\U0001f600"
        send({"type": "exit"})
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        proc.wait()


def test_failures_become_outcomes(echo):
    assert echo.call("encode", "!throw", Policy()).describe().startswith("raised internal-error (js.TypeError)")
    bad = echo.call("encode", "!float", Policy())
    assert (bad.category, bad.native_type) == ("internal-error", "tokconf.UnserializableValue")
    missing = echo.call("token_bytes", 70001)
    assert (missing.category, missing.native_type) == ("unknown-id", "js.RangeError")
    assert echo.call("trace", "x").is_unsupported
    # what a package prints goes to stderr, never into a frame
    assert echo.call("encode", "!print", Policy()).value == tuple(utf16_units("!print"))


def test_a_clean_list_is_one_call_with_each_items_own_answer(echo):
    texts = ["hello", "a\ud800b", "\U0001f600", ""]
    asked = counted(echo)
    try:
        many = echo.encode_many(texts, Policy())
        pieces = echo.token_bytes_many([104, 0x1f6, 255])
    finally:
        del echo.call_many
    assert asked == ["encode_many", "token_bytes_many"]
    assert many == [Outcome.ok(tuple(utf16_units(t))) for t in texts]
    assert pieces == [Outcome.ok(b"h"), Outcome.ok(b"\xf6"), Outcome.ok(b"\xff")]


def test_a_list_with_its_expected_answers_comes_back_as_the_positions_that_differ(echo):
    # harness/worker/differing.py: the every-token phase compares in the worker, in Node too
    texts = ["hello", "a\ud800b", "!throw", "xy", "\U0001f600", "!float"]
    expected = [tuple(utf16_units(t)) for t in texts]
    expected[3] = (120, 0)  # an expectation the answer does not meet
    expected[4] = None  # nothing expected: the reference raised there
    asked = counted(echo)
    try:
        found = echo.encode_differing(texts, Policy(), expected)
        pieces = echo.token_bytes_differing([104, 0x1f6, 70001, 255, 0], [b"h", b"?", b"x", b"\xff", b""])
    finally:
        del echo.call_many
    assert asked == ["encode_differing", "token_bytes_differing"]
    assert found == (2, 3, 4, 5)
    assert pieces == (1, 2, 4)


@pytest.mark.parametrize(("middle", "expected"), [
    ("!throw", "raised internal-error (js.TypeError)"),
    ("!float", "raised internal-error (tokconf.UnserializableValue)"),
    ("!hang", "timeout: no answer"),
    ("!exit", "crashed"),
])
def test_one_failing_item_of_a_list_gets_its_own_outcome_and_the_others_theirs(middle, expected):
    executor = NodeExecutor("echo:test", Isolation(timeout_s=2), NodeSetup(modules=(("echo", ECHO),)))
    try:
        first, failed, last = executor.encode_many(["ab", middle, "cd"], Policy())
        assert (first, last) == (Outcome.ok((97, 98)), Outcome.ok((99, 100)))
        assert failed.describe().startswith(expected) and ASK_APART not in failed.describe(), failed.describe()
        # a token_bytes that raises is that ID's unknown-id, the IDs beside it theirs
        hole = executor.token_bytes_many([104, 70001, 105])
        assert hole[0] == Outcome.ok(b"h") and hole[2] == Outcome.ok(b"i")
        assert (hole[1].category, hole[1].native_type) == ("unknown-id", "js.RangeError"), hole[1].describe()
    finally:
        executor.close()


def test_a_hang_times_out_and_an_exit_crashes_then_the_worker_restarts():
    executor = NodeExecutor("echo:test", Isolation(timeout_s=2), NodeSetup(modules=(("echo", ECHO),)))
    try:
        assert executor.call("encode", "!hang", Policy()).kind == "timeout"
        crashed = executor.call("encode", "!exit", Policy())
        assert (crashed.kind, crashed.category) == ("crashed", "exited")
        assert executor.call("encode", "ok", Policy()).value == (111, 107)
        assert executor.restarts == 2
    finally:
        executor.close()


def test_a_heap_past_the_limit_is_out_of_memory():
    executor = NodeExecutor("echo:test", Isolation(timeout_s=60, memory_limit_mb=256),
                            NodeSetup(modules=(("echo", ECHO),)))
    try:
        got = executor.call("encode", "!oom", Policy())
        assert (got.kind, got.category) == ("crashed", "out-of-memory"), got.describe()
    finally:
        executor.close()


def test_the_worker_is_kept_off_the_network(echo):
    assert echo.network is not None and echo.network.socket_block
    assert "fetch blocked" in echo.network.detail


def test_without_node_the_reason_says_so(monkeypatch):
    monkeypatch.setenv("TOKCONF_NODE", "/nonexistent/node")
    reason = node_unavailable_reason()
    assert reason is not None and "Node.js is not installed" in reason and "TOKCONF_NODE" in reason
    monkeypatch.delenv("TOKCONF_NODE")
    assert node_unavailable_reason() is None


def test_node_json_stringify_escapes_lone_surrogates():
    """Well-formed JSON.stringify (Node >= 12): a lone surrogate becomes a \\udXXX escape,
    a pair stays the character; what the protocol relies on before its own ASCII escaping."""
    script = 'process.stdout.write(JSON.stringify(["\\ud800", "\\udfff", "\\ud83d\\ude00"]))'
    out = subprocess.run([node_binary(), "-e", script], stdout=subprocess.PIPE, check=True).stdout
    assert out == '["\\ud800","\\udfff","\U0001f600"]'.encode("utf-8")
