"""A green run means conformance: a documented divergence explains its own input and the
domain it declares, nothing else (issue 10)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: emoji-quirk
    text: "\U0001F600"
    encodings: [cl100k_base]
    documented:
      - adapters: ["verdict:*"]
        check: id-parity
        kind: segmentation
        reason: "encodes the emoticons block byte by byte"
        source: "tests/verdict_adapters.py"
        domain: {ranges: ["U+1F600..U+1F64F"]}
  - id: another-emoji
    text: "x \U0001F603 y"
    encodings: [cl100k_base]
  - id: plain-english
    text: "over the hill"
    encodings: [cl100k_base]
"""


def run(tmp_path: Path, plugin: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES, encoding="utf-8")
    out = tmp_path / f"out-{plugin}"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", f"tests.verdict_adapters:{plugin}",
         "--impl", "verdict:" + plugin.replace("_", "-"),
         # the cases and generated inputs only: every token and everyday text add emoji of
         # the declared block whose absorbed examples crowd out the case's own
         "--cases", str(cases), "--max-examples", "40", "--no-every-token", "--no-everyday",
         "--out", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    return proc, json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))


def divergences(data: dict, adapter: str, status: str) -> list[dict]:
    return [d for d in data["divergences"] if d["adapter"] == adapter and d["status"] == status]


def test_the_documented_quirk_explains_its_domain_and_the_run_passes(tmp_path: Path) -> None:
    proc, data = run(tmp_path, "quirk")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (documented,) = [d for d in divergences(data, "verdict:quirk", "documented") if d["check"] == "id-parity"]
    assert documented["case"] == "emoji-quirk"
    # the other case's emoji lies in the declared block: explained, with its shrunk input shown
    assert documented["absorbed"] >= 1
    assert {"text": "\U0001F603", "escaped": "\U0001F603"} in documented["absorbed_examples"]
    assert divergences(data, "verdict:quirk", "unexpected") == []
    # one line in the terminal (the full list is behind --verbose and in parity.json)
    assert re.search(r"documented: \d+ divergence\(s\) explained [1-9]\d* more finding\(s\)", proc.stdout)


def test_a_second_fault_of_the_same_kind_on_another_input_fails_the_run(tmp_path: Path) -> None:
    proc, data = run(tmp_path, "two_faults")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    documented = [d for d in divergences(data, "verdict:two-faults", "documented") if d["check"] == "id-parity"]
    assert [d["case"] for d in documented] == ["emoji-quirk"]
    unexpected = divergences(data, "verdict:two-faults", "unexpected")
    # the bug on "the" is reported on its own shrunk input, of the very kind the quirk documents
    the = [d for d in unexpected if d["input"]["text"] == "the"]
    assert len(the) == 1, [d["input"]["text"] for d in unexpected]
    assert ("id-parity", "segmentation") in {(s["check"], s["kind"]) for s in the[0]["symptoms"]}
    assert the[0]["kind_words"] == "other tokens for the same bytes"
    assert the[0]["outcomes"]["verdict:two-faults"]["ids"] == [83, 383]
    assert the[0]["outcomes"]["tiktoken:cl100k_base"]["ids"] == [1820]
    # and nothing with an emoji in it is reported as unexpected
    assert not [d for d in unexpected if any(0x1F600 <= ord(c) <= 0x1F64F for c in d["input"]["text"])]
    assert "UNEXPECTED verdict:two-faults" in proc.stdout


def test_without_a_domain_only_the_own_input_is_explained(tmp_path: Path) -> None:
    cases = tmp_path / "narrow.yaml"
    cases.write_text(CASES.replace('        domain: {ranges: ["U+1F600..U+1F64F"]}\n', ""), encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", "tests.verdict_adapters:quirk", "--impl", "verdict:quirk",
         "--cases", str(cases), "--no-generated", "--out", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    assert ["\U0001F603"] == [d["input"]["text"] for d in divergences(data, "verdict:quirk", "unexpected")]
