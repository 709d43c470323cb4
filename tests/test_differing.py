"""Which answers differ from the expected ones, asked where they are (harness/worker/differing.py).

The every-token phase sends a worker its texts with the reference's IDs, and its IDs with
the reference's bytes, and the worker sends back only the positions that differ. These
tests hold that to the plain way (every answer asked, compared in this process) on a
planted drop-in in a real worker, in Python and in Node: wrong IDs, a raised error, wrong
bytes, a missing ID, and a hang in the middle of a frame. If the worker dropped a
differing position, or kept an agreeing one, the exact lists below would not match.
"""

from __future__ import annotations

from typing import Mapping

import pytest

from harness.calls import Calls, InProcess
from harness.checks.base import ORDINARY
from harness.registry import AdapterSpec, default_registry
from harness.worker.client import WorkerExecutor
from harness.worker.differing import differing_encodes, differing_pieces, join_pieces, split_pieces
from harness.worker.setup import Isolation, WorkerSetup
from tests.faulty_adapters import TRIGGER
from tests.test_worker_bulk import counted
from tests.wrong_adapters import ENCODING, _Wrapped

WRONG_IDS, RAISES = "\u00a7", "\u00a4"  # § gets an extra ID 0; ¤ raises
WRONG_PIECE, NO_PIECE = 1000, 1001

TEXTS = ["hello world", f"a {WRONG_IDS} b", "  trailing  ", f"{RAISES}!", "\u00e9t\u00e9", f"x{WRONG_IDS}",
         "<|endoftext|>"]
#: the positions of TEXTS whose IDs are not tiktoken's (the special literal is ordinary
#: text under this policy, and agrees)
WRONG_TEXTS = [1, 3, 5]
IDS = [15339, WRONG_PIECE, 1917, NO_PIECE, 100257, 220]


class _Differs(_Wrapped):
    """tiktoken's cl100k_base with an extra ID 0 after a text holding §, an error on one
    holding ¤, a wrong piece for ID 1000 and none for ID 1001."""

    name = "planted:differs"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if RAISES in text:
            raise ValueError("planted: this text raises")
        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return [*ids, 0] if WRONG_IDS in text else ids

    def token_bytes(self, token_id: int) -> bytes:
        if token_id == NO_PIECE:
            raise KeyError(token_id)
        piece = super().token_bytes(token_id)
        return piece + b"!" if token_id == WRONG_PIECE else piece

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return self.inner.special_tokens


def planted() -> list[AdapterSpec]:
    return [AdapterSpec(name=_Differs.name, encoding=ENCODING, factory=_Differs, library="tiktoken")]


def _worker(name: str, *, timeout_s: float = 60.0) -> WorkerExecutor:
    registry = default_registry(plugins=["tests.test_differing:planted", "tests.faulty_adapters:all"])
    return WorkerExecutor(name, Isolation(mode="all", setup=WorkerSetup.from_registry(registry), timeout_s=timeout_s))


def _expected() -> tuple[list, list[bytes]]:
    """tiktoken's own answers, asked in this process: the plan's."""
    tiktoken = Calls(InProcess(default_registry().get("tiktoken:cl100k_base")))
    ids = [tiktoken.encode(t, ORDINARY) for t in TEXTS]
    return [o.value if o.is_ok else None for o in ids], [tiktoken.token_bytes(i).value for i in IDS]


@pytest.mark.parametrize("frame", [2, 64])
def test_a_worker_sends_back_exactly_the_positions_the_parent_finds(frame: int) -> None:
    expected_ids, expected_pieces = _expected()
    here = Calls(InProcess(_Differs()))
    assert not hasattr(here.executor, "encode_differing")  # in process: every answer, compared here
    assert differing_encodes(here, TEXTS, ORDINARY, expected_ids, frame=frame) == WRONG_TEXTS
    assert differing_pieces(here, IDS, expected_pieces, frame=frame) == [1, 3]
    worker = _worker(_Differs.name)
    try:
        asked = counted(worker)
        calls = Calls(worker)
        assert differing_encodes(calls, TEXTS, ORDINARY, expected_ids, frame=frame) == WRONG_TEXTS
        assert differing_pieces(calls, IDS, expected_pieces, frame=frame) == [1, 3]
        # compared in the worker: one call per frame; a frame of one item is its own call
        assert asked == [_asked(TEXTS[n:n + frame], "encode") for n in range(0, len(TEXTS), frame)] + \
            [_asked(IDS[n:n + frame], "token_bytes") for n in range(0, len(IDS), frame)]
        assert frame == 64 or "encode" in asked
    finally:
        worker.close()


def _asked(items: list, single: str) -> str:
    return f"{single}_differing" if len(items) > 1 else single


def test_tiktoken_itself_in_a_worker_differs_only_where_it_raises() -> None:
    expected_ids, expected_pieces = _expected()
    worker = _worker("tiktoken:cl100k_base")
    try:
        calls = Calls(worker)
        assert differing_encodes(calls, TEXTS, ORDINARY, expected_ids, frame=64) == []
        assert differing_pieces(calls, IDS, expected_pieces, frame=64) == []
        # a wrong expectation is found too: the worker compares, it does not agree blindly;
        # nothing expected (the reference raised there) always differs
        wrong = [*expected_ids[:2], (1, 2, 3), *expected_ids[3:6], None]
        assert differing_encodes(calls, TEXTS, ORDINARY, wrong, frame=64) == [2, 6]
        assert differing_pieces(calls, IDS, [*expected_pieces[:5], b"?"], frame=64) == [5]
    finally:
        worker.close()


def test_a_hang_in_a_frame_costs_that_text_alone() -> None:
    texts = ["hello", f"snow {TRIGGER} man", "world"]
    tiktoken = Calls(InProcess(default_registry().get("tiktoken:cl100k_base")))
    expected = [tiktoken.encode(t, ORDINARY).value for t in texts]
    worker = _worker("faulty:hang", timeout_s=2.0)
    try:
        asked = counted(worker)
        # the frame's call times out; each text is then asked on its own, and only the
        # one that hangs differs (a timeout of its own)
        assert differing_encodes(Calls(worker), texts, ORDINARY, expected, frame=8) == [1]
        assert asked == ["encode_differing", "encode", "encode", "encode"]
    finally:
        worker.close()


def test_pieces_cross_as_one_string_and_come_back_whole() -> None:
    pieces = [b"", b"\xff\x00", "\u00e9".encode(), b"abc"]
    assert split_pieces(*join_pieces(pieces)) == pieces
    with pytest.raises(ValueError, match="do not cut"):
        split_pieces(b"abc", (1, 1))
