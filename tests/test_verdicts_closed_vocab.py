"""Closed vocabularies (issue 21, item 3): the domain of a teaching tokenizer is "every
piece is in the vocabulary" and nothing else, so its round-trip check can fail; each run
says how many inputs lay outside each closed vocabulary's domain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.generate.pools import closed_pool
from harness.registry import default_registry

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: known-words
    text: "the lamp shone"
    adapters: ["verdict:v1-drops-lamp"]
  - id: unseen-word
    text: "the 青山"
    adapters: ["verdict:v1-drops-lamp"]
"""


def test_a_round_trip_bug_on_known_words_is_found_and_out_of_domain_inputs_are_counted(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES, encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", "tests.verdict_adapters:v1_drops_lamp",
         "--impl", "verdict:v1-drops-lamp", "--cases", str(cases), "--no-generated", "--out", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    found = [(d["check"], d["kind"], d["input"]["text"]) for d in data["divergences"] if d["status"] == "unexpected"]
    trips = [text for check, kind, text in found if (check, kind) == ("round-trip", "bytes")]
    assert len(trips) == 1 and "lamp" in trips[0], found
    # the unseen word is outside the domain: not checked, and said so (the run's notes;
    # parity.json carries them once its schema has notes, issue 21 item 4)
    said = " ".join((proc.stdout + proc.stderr).split())
    assert "verdict:v1-drops-lamp: 1 of 2 inputs lay outside its closed vocabulary's domain" in said, said


def test_simple_v1_domain_is_its_vocabulary_and_an_exception_is_no_verdict_on_the_domain() -> None:
    v1 = default_registry().get("simple-v1:lighthouse")
    assert v1.in_domain("the   lamp\nshone")  # known words in a layout decode does not keep
    assert not v1.in_domain("the 青山")
    assert v1.capabilities.words is not None and "lamp" in v1.capabilities.words


def test_generation_for_a_word_vocabulary_writes_in_its_words() -> None:
    v1 = default_registry().get("simple-v1:lighthouse")
    caps = v1.capabilities
    assert caps.alphabet is not None and caps.words is not None
    pool = closed_pool(alphabet=caps.alphabet, words=caps.words, max_examples=200, seed=0)
    inside = sum(v1.in_domain(text) for text in pool.texts)
    letters_only = closed_pool(alphabet=caps.alphabet, max_examples=200, seed=0)
    inside_before = sum(v1.in_domain(text) for text in letters_only.texts)
    # most random strings over the alphabet spell no known word; written in words, most inputs are inside
    assert inside >= 60 and inside > 3 * inside_before, (inside, inside_before)
