r"""The worker protocol: length-prefixed JSON frames over a worker's stdin and stdout.

A worker (:mod:`harness.worker.server`, or any program in any language that speaks this)
hosts one adapter and answers calls. This module is the whole contract; a worker in
another language (issue 16: Node) implements exactly what is written here.

Frames
------
Each message is one **frame**: a 4-byte unsigned big-endian length ``N`` followed by
``N`` bytes of JSON (RFC 8259) text encoding one object with a ``"type"`` member. The
JSON is ASCII (every non-ASCII code point written as ``\uXXXX``, astral ones as a
surrogate pair of escapes), so no decoder has to think about the encoding of the frame
itself; a reader must still accept UTF-8 JSON. A frame is at most :data:`MAX_FRAME`
bytes; a bigger length is a protocol error (a worker that printed something to its
protocol stream, for instance). Example, the ``exit`` message: ``00 00 00 10`` then the
16 bytes ``{"type": "exit"}``.

Why JSON and not msgpack: both ends are standard-library only (a worker may run in a
bare virtualenv with nothing installed, or in Node), and the frames are small except
for long inputs, whose strings JSON carries at about their own size.

Messages, parent to worker
--------------------------
``{"type": "load", "adapter": NAME, "setup": {...}}``
    build adapter ``NAME`` (once, first message). ``setup`` says how to find it: see
    :class:`harness.worker.setup.WorkerSetup`. Answer: one ``ready`` or ``error``.
``{"type": "calls", "calls": [CALL, ...]}``
    a batch. ``CALL`` is ``{"n": SEQ, "op": OP, "args": [VALUE, ...]}`` with an optional
    ``"follow": true`` on ``encode``/``encode_ordinary`` (see below). Answer: one
    ``outcome`` frame per call, in order, each written as soon as its call returns, so
    a parent that times one call out or sees the worker die knows exactly which call
    did it (the first without an answer) and which answers it already has.
``{"type": "exit"}``
    end cleanly (so does end of input).

Messages, worker to parent
--------------------------
``{"type": "ready", "info": INFO, "network": NET, "pid": PID, "version": VERSION}``
    the adapter is built. ``INFO`` is :class:`harness.calls.AdapterInfo` as JSON: an
    object with one member per field of that dataclass, by field name, each a VALUE
    (below); ``capabilities`` is likewise an object with one member per field of
    :class:`harness.interface.Capabilities` (``alphabet``: an array of strings or
    ``null``). A member left out takes the field's default (see :func:`info_from_json`).
    ``NET`` is ``{"namespace": bool, "socket_block": bool, "detail": str}``: which
    network protection is in force. ``VERSION``: the adapter library's version or ``null``.
``{"type": "error", "message": TEXT}``
    the adapter cannot be built here (the reason, for the report's unavailable row).
``{"type": "outcome", "n": SEQ, "outcome": OUTCOME}``
    the answer to call ``SEQ``.
``{"type": "follow", "n": SEQ, "calls": [[OP, [ARG, ...], OUTCOME], ...]}``
    sent right after the outcome of a call that asked ``"follow": true`` (always, with an
    empty array when the encode failed): the answers to what the checks ask next about
    the IDs it returned, without being asked: ``decode_bytes(ids)``,
    ``decode(ids, "replace")`` and ``token_bytes(id)`` for each distinct ID. The parent
    files each under (OP, ARGS). This is what lets one round trip carry all the calls of
    one input.

Operations are the methods of :class:`harness.calls.InProcess`: ``encode(text, policy)``,
``encode_ordinary(text)``, ``encode_batch(texts, policy)``, ``decode_bytes(ids)``,
``decode(ids, errors)``, ``token_bytes(id)``, ``pretokenize(text)``, ``trace(text)``,
``in_domain(text)``.

Values
------
========================= ==================================================
Python                    JSON
========================= ==================================================
``None``, bool, int       ``null``, ``true``/``false``, a number (IDs are
                          integers of any size; a JavaScript worker must not
                          send IDs beyond 2**53)
``str`` without surrogate a JSON string
code points
``str`` with one          ``{"u8": BASE64}``: the UTF-8 bytes, every
                          surrogate code point written as its own 3-byte
                          sequence (Python's ``surrogatepass``)
``bytes``                 ``{"b": BASE64}``
tuple or list             an array (read back as a tuple)
:class:`Policy`           ``{"policy": [ALLOWED, DISALLOWED]}``, each
                          ``"all"`` or an array of strings
:class:`TraceRound`       ``{"round": [PAIR, RANK, MERGED, RESULT]}``
========================= ==================================================

Why text with surrogates is not a plain JSON string: a Python ``str`` may hold the two
code points U+D83D U+DE00 side by side, a different string from U+1F600 (tokconf's
hostile inputs contain exactly that), but both have the one JSON spelling
``"\ud83d\ude00"`` and every JSON reader joins the pair. UTF-16 with ``surrogatepass``
has the same flaw. UTF-8 with ``surrogatepass`` keeps them apart (``ED A0 BD ED B8 80``
versus ``F0 9F 98 80``) and carries lone surrogates too. Code-point lists would also be
exact but are four to eight times larger, and million-character inputs are sent.
Everything else (NUL, U+FFFF, U+10FFFF, astral characters) survives a plain JSON string
exactly, so ordinary text stays readable and fast. A JavaScript worker cannot tell the
two spellings apart in its own strings (they are UTF-16); it decodes ``u8`` by hand and
may send any string as a plain JSON string.

The Node worker (``harness/worker/node/``, issue 16) does exactly that: ``u8`` becomes one
UTF-16 code unit per surrogate code point (a lone one stays lone), a plain string is
``JSON.parse``'d (``"\ud800"`` is that lone code unit), and what it sends is
``JSON.stringify`` (which, since Node 12, writes a lone surrogate as a ``\udXXX`` escape)
with every other non-ASCII code unit escaped too, so its frames are ASCII. Every string
JavaScript can hold crosses both ways unchanged (``tests/test_node_worker.py`` sends every
code point, and each of the 2048 surrogates alone). JavaScript values map to the table
above: arrays and typed arrays (``Uint32Array`` of IDs) to arrays, ``Uint8Array`` to
``{"b": ...}``, numbers only when they are safe integers.

Outcomes
--------
``{"ok": VALUE}``, ``{"raised": [CATEGORY, NATIVE_TYPE, MESSAGE]}``,
``{"timeout": MESSAGE}``, ``{"crashed": [CAUSE, MESSAGE]}``. A worker normally sends only
the first two; the parent makes timeouts and crashes itself.

>>> decode_value(json.loads(json.dumps(encode_value(("a\ud83d\ude00", "\U0001f600", b"\x00")))))
('a\ud83d\ude00', '😀', b'\x00')
"""

from __future__ import annotations

import base64
import json
import re
import struct
from dataclasses import fields
from typing import Any, BinaryIO

from harness.calls import AdapterInfo
from harness.cases.model import Policy
from harness.interface import Capabilities, TraceRound
from harness.outcomes import Outcome, ints_only

__all__ = [
    "MAX_FRAME",
    "ProtocolError",
    "decode_outcome",
    "decode_value",
    "encode_frame",
    "encode_outcome",
    "encode_value",
    "info_from_json",
    "info_to_json",
    "outcome_frame",
    "read_frame",
]

#: The largest frame either side accepts (a million-character input is a few MB).
MAX_FRAME = 1 << 30
_HEADER = struct.Struct(">I")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ProtocolError(Exception):
    """A frame that is not what this module says a frame is."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """One frame: the length, then the JSON (ASCII).

    >>> encode_frame({"type": "exit"})
    b'\\x00\\x00\\x00\\x10{"type": "exit"}'
    """
    payload = json.dumps(message, ensure_ascii=True).encode("ascii")
    if len(payload) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(payload)} bytes is over the {MAX_FRAME}-byte limit")
    return _HEADER.pack(len(payload)) + payload


def outcome_frame(number: int, outcome: Outcome) -> bytes:
    """The frame of call ``number``'s outcome: what :func:`encode_frame` makes of
    ``{"type": "outcome", "n": number, "outcome": encode_outcome(outcome)}``, byte for byte,
    written out directly for IDs (a worker answers hundreds of thousands of encodes a
    run, and ``json.dumps`` was 9 of each answer's 20 microseconds of overhead).

    >>> outcome_frame(7, Outcome.ok((15339, 1917))) == encode_frame(
    ...     {"type": "outcome", "n": 7, "outcome": encode_outcome(Outcome.ok((15339, 1917)))})
    True
    >>> outcome_frame(0, Outcome.ok(())) == encode_frame({"type": "outcome", "n": 0, "outcome": {"ok": []}})
    True
    """
    value = outcome.value
    if outcome.kind == "ok" and type(value) is tuple and type(number) is int \
            and ints_only(value):
        ids = ", ".join(map(str, value)).encode("ascii")
        payload = b'{"type": "outcome", "n": %d, "outcome": {"ok": [%s]}}' % (number, ids)
        if len(payload) <= MAX_FRAME:
            return _HEADER.pack(len(payload)) + payload
    return encode_frame({"type": "outcome", "n": number, "outcome": encode_outcome(outcome)})


def read_frame(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message from a blocking stream; ``None`` at a clean end of input."""
    header = stream.read(4)
    if not header:
        return None
    if len(header) < 4:
        raise ProtocolError(f"the stream ended inside a frame header ({len(header)} of 4 bytes)")
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ProtocolError(f"frame length {length} is over the {MAX_FRAME}-byte limit")
    payload = stream.read(length)
    if len(payload) < length:
        raise ProtocolError(f"the stream ended inside a frame ({len(payload)} of {length} bytes)")
    return parse_payload(payload)


#: one decoder for every frame: ``json.loads`` of bytes first guesses their encoding,
#: a cost paid per outcome (an isolated adapter's every-token slice is 8,192 of them)
_DECODE = json.JSONDecoder().decode


def parse_payload(payload: bytes | bytearray) -> dict[str, Any]:
    try:
        message = _DECODE(payload.decode("utf-8", "surrogatepass"))
    except ValueError as exc:
        raise ProtocolError(f"a frame is not JSON: {exc}; starts {bytes(payload[:60])!r}") from exc
    if not isinstance(message, dict) or "type" not in message:
        raise ProtocolError(f"a frame is not a message object with a type: {bytes(payload[:60])!r}")
    return message


def frame_length(header: bytes | bytearray) -> int:
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ProtocolError(f"frame length {length} is over the {MAX_FRAME}-byte limit "
                            f"(did the worker print to its protocol stream?)")
    return length


# -- values --------------------------------------------------------------------------------


def encode_text(text: str) -> Any:
    if _SURROGATE.search(text) is None:
        return text
    return {"u8": base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")}


def encode_value(value: Any) -> Any:
    """A Python value as JSON-ready data (see the table above); ``TypeError`` for others."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return encode_text(value)
    if isinstance(value, (tuple, list)):
        if ints_only(value):
            return list(value)  # the common case, IDs, without a call per element
        return [encode_value(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Policy):
        return {"policy": [_encode_policy_part(value.allowed_special), _encode_policy_part(value.disallowed_special)]}
    if isinstance(value, TraceRound):
        return {"round": [encode_value(tuple(value.pair)), value.rank, value.merged, encode_value(value.result)]}
    raise TypeError(f"{type(value).__name__} cannot cross the worker protocol")


def _encode_policy_part(part: Any) -> Any:
    return "all" if part == "all" else [encode_text(t) for t in sorted(part)]


def decode_value(data: Any) -> Any:
    """The inverse of :func:`encode_value`; arrays come back as tuples."""
    if isinstance(data, list):
        if ints_only(data):  # IDs: every element exactly an int, checked in C
            return tuple(data)
        return tuple(decode_value(v) for v in data)
    if isinstance(data, dict):
        if "u8" in data:
            return base64.b64decode(data["u8"]).decode("utf-8", "surrogatepass")
        if "b" in data:
            return base64.b64decode(data["b"])
        if "policy" in data:
            return _decoded_policy(data["policy"])
        if "round" in data:
            pair, rank, merged, result = data["round"]
            return TraceRound(pair=decode_value(pair), rank=rank, merged=merged, result=decode_value(result))
        raise ProtocolError(f"unknown tagged value {sorted(data)!r}")
    return data


#: policies decoded so far, by the repr of their JSON data (exact for JSON values): a
#: frame of 8,192 encodes holds one or two policies, and decoding one per call was 4 of
#: a worker's 20 microseconds of overhead per answer
_POLICIES: dict[str, Policy] = {}


def _decoded_policy(data: Any) -> Policy:
    key = repr(data)
    policy = _POLICIES.get(key)
    if policy is None:
        allowed, disallowed = data
        policy = Policy(allowed_special=_decode_policy_part(allowed),
                        disallowed_special=_decode_policy_part(disallowed))
        if len(_POLICIES) < 256:  # a run has a few; a hostile peer cannot grow this
            _POLICIES[key] = policy
    return policy


def _decode_policy_part(part: Any) -> Any:
    return "all" if part == "all" else frozenset(decode_value(t) for t in part)


def encode_outcome(outcome: Outcome) -> dict[str, Any]:
    if outcome.kind == "ok":
        return {"ok": encode_value(outcome.value)}
    if outcome.kind == "raised":
        return {"raised": [outcome.category, outcome.native_type, encode_text(outcome.message or "")]}
    if outcome.kind == "timeout":
        return {"timeout": encode_text(outcome.message or "")}
    return {"crashed": [outcome.category, encode_text(outcome.message or "")]}


def decode_outcome(data: dict[str, Any]) -> Outcome:
    if "ok" in data:
        return Outcome.ok(decode_value(data["ok"]))
    if "raised" in data:
        category, native_type, message = data["raised"]
        return Outcome.raised(category, native_type, decode_value(message))
    if "timeout" in data:
        return Outcome(kind="timeout", message=decode_value(data["timeout"]))
    if "crashed" in data:
        cause, message = data["crashed"]
        return Outcome.crashed(cause, decode_value(message))
    raise ProtocolError(f"an outcome has none of ok, raised, timeout, crashed: {sorted(data)!r}")


# -- adapter info --------------------------------------------------------------------------


def info_to_json(info: AdapterInfo) -> dict[str, Any]:
    """Every field of ``info`` by name (so a field added to :class:`AdapterInfo` crosses
    the boundary without a change here; :func:`_field_value` says how)."""
    data = {f.name: _field_value(getattr(info, f.name)) for f in fields(info) if f.name != "capabilities"}
    caps = info.capabilities
    data["capabilities"] = {f.name: _field_value(getattr(caps, f.name)) for f in fields(caps)}
    return data


def _field_value(value: Any) -> Any:
    if isinstance(value, frozenset):
        return [encode_value(v) for v in sorted(value)]
    return encode_value(value)


def info_from_json(data: dict[str, Any]) -> AdapterInfo:
    """The inverse of :func:`info_to_json`; a member left out takes the field's default."""
    caps = data.get("capabilities") or {}
    cap_values: dict[str, Any] = {}
    for f in fields(Capabilities):
        if f.name in caps:
            value = decode_value(caps[f.name])
            cap_values[f.name] = frozenset(value) if f.name == "alphabet" and value is not None else value
    values: dict[str, Any] = {"capabilities": Capabilities(**cap_values)}
    for f in fields(AdapterInfo):
        if f.name in data and f.name != "capabilities":
            values[f.name] = decode_value(data[f.name])
    try:
        return AdapterInfo(**values)
    except TypeError as exc:
        raise ProtocolError(f"the adapter info lacks a required field: {exc}") from exc
