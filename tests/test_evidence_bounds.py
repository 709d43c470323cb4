"""Evidence of a divergence on a long input holds what the report keeps, found as before.

``harness.run.evidence.gather`` used to build a piece for every ID and a JSON round for
every merge of a million-character input, then ``parity.json`` kept the first 1,000
pieces and no trace of it; special literals were found one character at a time. A long
input is not traced at all now; a shorter one keeps its first rounds.
"""

from __future__ import annotations

import pytest

from harness.calls import Calls, InProcess
from harness.cases.model import LONG_TEXT_CHARS, Policy
from harness.checks.base import ORDINARY, Finding
from harness.report.bounds import MAX_ITEMS
from harness.run.evidence import _MAX_PIECES, _MAX_TRACE_ROUNDS, gather, special_segments
from implementations.bytebpe.adapters import build_rank_mode
from implementations.tiktoken import TiktokenAdapter


def _scan(text: str, specials: dict[str, int], allowed: frozenset[str]) -> list[tuple[str, int | None]]:
    """The definition: at each place, the longest allowed literal that starts there."""
    live = sorted((s for s in specials if s in allowed), key=len, reverse=True)
    out: list[tuple[str, int | None]] = []
    start = i = 0
    while i < len(text):
        literal = next((s for s in live if text.startswith(s, i)), None)
        if literal is None:
            i += 1
            continue
        if start < i:
            out.append((text[start:i], None))
        out.append((literal, specials[literal]))
        i = start = i + len(literal)
    if start < len(text):
        out.append((text[start:], None))
    return out


SPECIALS = {"<|a|>": 1, "<|a|>x": 2, "|>": 3, "a.b": 4}


@pytest.mark.parametrize("text", [
    "", "plain", "<|a|>", "<|a|>x<|a|>", "<|a|><|a|>xy", "x<|a|", "<|a|>|>", "a.ba.b", "aXb a.b",
    "<|<|a|>x|>", "\ud800<|a|>\n", "|>|>|",
])
@pytest.mark.parametrize("allowed", [frozenset(SPECIALS), frozenset({"<|a|>", "a.b"}), frozenset()])
def test_special_segments_are_the_longest_literal_at_the_leftmost_place(text: str, allowed: frozenset[str]) -> None:
    got = special_segments(text, SPECIALS, Policy(allowed_special=allowed))
    assert got == _scan(text, SPECIALS, allowed)
    assert "".join(segment for segment, _ in got) == text


def test_a_long_inputs_evidence_keeps_what_the_report_keeps() -> None:
    adapter = Calls(InProcess(build_rank_mode("cl100k_base")))
    reference = Calls(InProcess(TiktokenAdapter("cl100k_base")))
    text = "ab1 " * 3_000  # 12,000 characters, 6,000 IDs, more merge rounds than that
    ids = adapter.encode(text, ORDINARY).value
    finding = Finding(adapter.name, "id-parity", "content", "", text, policy=ORDINARY,
                      ids=(("adapter", tuple(ids)), ("reference", tuple(ids[:-1]))))
    evidence = gather(finding, adapter, reference)
    assert _MAX_PIECES == MAX_ITEMS + 1  # one more than the report keeps says the list was cut
    assert len(ids) > 2 * MAX_ITEMS
    assert {label: len(p) for label, p in evidence.pieces.items()} == {"adapter": MAX_ITEMS + 1,
                                                                        "reference": MAX_ITEMS + 1}
    assert evidence.pieces["adapter"][:3] == ["ab", "1", "\u2420ab"]  # a space drawn as ␠
    assert evidence.piece_bytes["adapter"][1] == b"1".hex()
    assert evidence.first_difference == len(ids) - 1
    # no trace: the report leaves a long input's out, and its merge rounds (a million for a
    # million characters) were memoised with the adapter's calls (188 MB on the shipped cases)
    assert evidence.traces == {} and not [key for key in adapter._memo if key[0] == "trace"]


def test_a_shorter_inputs_trace_keeps_its_first_rounds() -> None:
    adapter = Calls(InProcess(build_rank_mode("cl100k_base")))
    reference = Calls(InProcess(TiktokenAdapter("cl100k_base")))
    text = "ab1 " * 2_000  # 8,000 characters, under the long inputs' 10,000: traced
    assert len(text) < LONG_TEXT_CHARS
    ids = adapter.encode(text, ORDINARY).value
    finding = Finding(adapter.name, "id-parity", "content", "", text, policy=ORDINARY,
                      ids=(("adapter", tuple(ids)), ("reference", tuple(ids[:-1]))))
    rounds = gather(finding, adapter, reference).traces[adapter.name]
    assert len(rounds) == _MAX_TRACE_ROUNDS
    assert rounds[0]["pair"] == ["a", "b"]  # the first rounds are those of the whole trace
