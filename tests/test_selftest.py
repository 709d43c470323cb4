"""The mutation score: every planted fault is caught, and the README says so.

One selftest run (the ``ci`` profile, as ``tokconf selftest``), plus a "fault" that
changes nothing: it must come out clean, so a caught fault is caught for its fault.
CI fails here when a change to generation or to the checks lets a planted fault through,
or when the score in the README no longer matches the faults.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.selftest.faults_dropin import DROPIN_FAULTS
from harness.selftest.mutant import Mutant
from harness.selftest.score import FAULTS, Score, run_selftest
from tests.printed_commands import PrintedCommands

README = Path(__file__).resolve().parent.parent / "README.md"
AREAS = {"pre-tokenization", "merging", "special tokens", "decoding", "batching", "error handling", "API",
         "drop-in API"}


class NoFault(Mutant):
    area, fault = "none", "no-fault"
    summary = "the mutant base itself: tiktoken, answered through the same wrapper"


@pytest.fixture(scope="module")
def score() -> Score:
    return run_selftest(faults=[*FAULTS, NoFault])


def verdict(score: Score, fault: str):  # type: ignore[no-untyped-def]
    return next(v for v in score.verdicts if v.fault == fault)


def test_the_faults_span_every_area() -> None:
    assert len(FAULTS) >= 25
    assert {f.area for f in FAULTS} == AREAS
    assert len({f.fault for f in FAULTS}) == len(FAULTS)


def test_every_planted_fault_is_caught_and_the_unchanged_wrapper_is_not(score: Score) -> None:
    missed = [v.fault for v in score.verdicts if not v.caught and v.fault != "no-fault"]
    assert missed == []
    assert not verdict(score, "no-fault").caught
    assert score.reference_problems == ()


def test_minimal_inputs_are_small_or_say_why_not(score: Score) -> None:
    for v in score.verdicts:
        if v.caught:
            assert v.small or v.not_small, (v.fault, v.text)
    small = {v.fault for v in score.verdicts if v.small}
    assert {f.fault for f in FAULTS if f.not_small is None} <= small


@pytest.mark.parametrize("fault, check, text", [
    ("crlf-to-lf", "expected", "\r\n"),
    ("nul-truncates", "id-parity", "\x00"),
    ("surrogate-raises", "error-category", "\ud800"),
    ("lazy-punctuation", "expected", "!!"),
    ("batch-reversed", "batch", "a"),
    ("empty-text-raises", "error-category", ""),
    ("strict-ignored", "stream-decode", "\x85"),
    ("decode-drops-leading-continuation", "stream-decode", "\x85"),
    ("loose-special-match", "error-category", "<|a|>"),
    ("specials-at-start-only", "id-parity", "a<|endoftext|>"),
])
def test_exact_minimal_inputs(score: Score, fault: str, check: str, text: str) -> None:
    v = verdict(score, fault)
    assert v.text == text and check in v.checks, (v.text, v.checks)


def test_faults_that_need_long_text_are_found_by_long_pieces(score: Score) -> None:
    assert len(verdict(score, "chunked-pieces").text.encode("utf-8")) > 256
    assert len(verdict(score, "piece-buffer-2048").text.encode("utf-8")) > 2048
    assert len(verdict(score, "truncates-long-text").text) > 1000


def test_drop_in_faults_are_seen_by_the_api_walk_alone(score: Score) -> None:
    """encode and the other adapter methods of a drop-in fault are tiktoken's: only the
    API walk can see it (tests/test_selftest_dropin.py: pytest finds the same ones)."""
    dropin = {f.fault for f in DROPIN_FAULTS}
    assert len(dropin) == 10
    assert {v.check for v in score.verdicts if v.fault in dropin} == {"api-surface"}


def test_the_readme_states_this_score(score: Score) -> None:
    caught = sum(v.caught for v in score.verdicts if v.fault != "no-fault")
    text = README.read_text(encoding="utf-8")
    found = re.search(r"mutation score: \*\*(\d+)/(\d+)\*\*", text)
    assert found, "README.md must state the selftest score as 'mutation score: **N/M**'"
    assert (int(found.group(1)), int(found.group(2))) == (caught, len(FAULTS))


def test_every_caught_faults_printed_command_reproduces_it(score: Score) -> None:
    """Issue 21 item 6, on this file's selftest run: each caught fault's command, run as a
    user copies it (it names the selftest family with ``--plugin``), exits 1. The first
    command of each verb runs as a process, the others in this one (tests/printed_commands.py:
    a process for each of the 52 was one of the suite's five slowest tests, 99 to 107 s in
    CI, 61 s alone on a quiet machine; now 25 s)."""
    caught = [v for v in score.verdicts if v.caught]
    assert caught and all(v.reproduce for v in caught)
    commands = PrintedCommands(README.parent)
    ran = [(fault, commands.run(fault.reproduce or "")) for fault in caught]
    assert commands.verbs_run_as_a_process >= {"call", "encode"}, commands.verbs_run_as_a_process
    failed = [f"{fault.fault} ({fault.check} {fault.kind}): exit {r.code}: {r.command}\n{r.said}"
              for fault, r in ran if r.code != 1]
    assert not failed, "\n".join(failed)
