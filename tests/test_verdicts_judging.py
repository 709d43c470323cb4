"""Judging (issue 21, item 1): a documented divergence explains its own input and its
declared domain, of its declared kind, and nothing else.

- a finding whose input *contains* a documented input is shrunk, not absorbed: ``"xabé"``
  holds the documented ``"ab"`` and an undocumented bug on ``"é"``;
- ``kind`` is required on a documented entry, and a different kind on its input (a
  segmentation quirk that became a crash) is unexpected, the entry stale;
- an entry naming an adapter kind that does not exist (``tiktokn:*``) is a load error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cases.loader import CaseFileError, load_case_file

REPO = Path(__file__).resolve().parent.parent

DOCUMENTED_AB = """\
version: 1
cases:
  - id: ab-quirk
    text: "ab"
    encodings: [cl100k_base]
    documented:
      - adapters: ["{adapter}"]
        check: id-parity
{kind}        reason: "encodes ab as a + b"
        source: "tests/verdict_adapters.py"
"""

CONTAINED = DOCUMENTED_AB + """\
  - id: x-ab
    text: "xab"
    encodings: [cl100k_base]
  - id: x-ab-z-z
    text: "xabZ Z"
    encodings: [cl100k_base]
"""


def run(tmp_path: Path, cases: str, plugin: str, *, impl: str | None = None) -> tuple[subprocess.CompletedProcess[str], dict | None]:
    path = tmp_path / "cases.yaml"
    path.write_text(cases, encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", f"tests.verdict_adapters:{plugin}",
         "--impl", impl or "verdict:" + plugin, "--cases", str(path), "--no-generated", "--out", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    report = out / "latest" / "parity.json"
    return proc, json.loads(report.read_text(encoding="utf-8")) if report.exists() else None


def mine(data: dict, adapter: str, status: str) -> list[dict]:
    return [d for d in data["divergences"] if d["adapter"] == adapter and d["status"] == status]


def test_an_input_containing_a_documented_input_is_shrunk_and_its_second_bug_reported(tmp_path: Path) -> None:
    cases = CONTAINED.format(adapter="verdict:contained", kind='        kind: "segmentation"\n')
    proc, data = run(tmp_path, cases, "contained")
    assert data is not None, proc.stderr
    (documented,) = mine(data, "verdict:contained", "documented")
    assert documented["input"]["text"] == "ab"
    # "xab" (and vocabulary tokens holding "ab") shrink to "ab": explained; "xabZ Z"
    # shrinks to "Z Z", which nothing documents
    assert documented["absorbed_examples"] == [{"text": "ab", "escaped": "ab"}]
    unexpected = mine(data, "verdict:contained", "unexpected")
    assert [(d["check"], d["kind"], d["input"]["text"]) for d in unexpected] == [("id-parity", "segmentation", "Z Z")]
    assert unexpected[0]["outcomes"]["verdict:contained"]["ids"] == [57, 220, 57]
    assert unexpected[0]["outcomes"]["tiktoken:cl100k_base"]["ids"] == [57, 1901]
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_a_documented_entry_without_kind_is_a_load_error(tmp_path: Path) -> None:
    path = tmp_path / "kindless.yaml"
    path.write_text(DOCUMENTED_AB.format(adapter="verdict:crashing", kind=""), encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        load_case_file(path)
    (problem,) = caught.value.problems
    assert (problem.line, problem.field, problem.case_id) == (7, "cases[0].documented[0].kind", "ab-quirk")
    assert "'kind', which is required" in problem.expected


def test_a_kindless_entry_whose_input_starts_crashing_fails_the_run(tmp_path: Path) -> None:
    proc, _ = run(tmp_path, DOCUMENTED_AB.format(adapter="verdict:crashing", kind=""), "crashing")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cases.yaml:7: cases[0].documented[0].kind" in proc.stderr


def test_a_documented_segmentation_that_becomes_a_crash_is_unexpected_and_stale(tmp_path: Path) -> None:
    cases = DOCUMENTED_AB.format(adapter="verdict:crashing", kind='        kind: "segmentation"\n')
    proc, data = run(tmp_path, cases, "crashing")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert data is not None
    assert mine(data, "verdict:crashing", "documented") == []
    (stale,) = mine(data, "verdict:crashing", "stale")
    assert (stale["check"], stale["case"]) == ("id-parity", "ab-quirk")
    # the crash itself is error-category's finding (id-parity compares IDs only)
    crash = mine(data, "verdict:crashing", "unexpected")
    assert [(d["check"], d["kind"], d["input"]["text"]) for d in crash] == [
        ("error-category", "raised:internal-error|ok", "ab")]


def test_an_adapter_kind_that_does_not_exist_is_a_load_error_naming_the_known_kinds(tmp_path: Path) -> None:
    cases = DOCUMENTED_AB.format(adapter="tiktokn:*", kind='        kind: "segmentation"\n')
    proc, _ = run(tmp_path, cases, "crashing", impl="tiktoken:cl100k_base")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cases.yaml:7: documented.adapters (case 'ab-quirk')" in proc.stderr
    assert "'tiktokn:*' names kind 'tiktokn'" in proc.stderr
    assert "known kinds: " in proc.stderr and "tiktoken," in proc.stderr


def test_every_shipped_entry_names_a_registered_kind_and_a_missing_one_is_named() -> None:
    from harness.cases.loader import load_cases, unknown_adapter_kinds
    from harness.registry import default_registry

    cases = load_cases([REPO / "cases"])
    kinds = default_registry().kinds()
    assert unknown_adapter_kinds(cases, kinds) == []
    # `hf-slow*:gpt2` (a pattern over kinds) and `tiktoken@0.9.0:*` (an environment this
    # machine may lack) load; drop one registered kind and its entries are named
    missing = unknown_adapter_kinds(cases, [k for k in kinds if k != "minbpe-fixed"])
    assert missing and {field for _, _, field, _, _ in missing} == {"documented.adapters"}
    assert all("'minbpe-fixed:" in expected for _, _, _, expected, _ in missing)


def test_one_cause_may_name_the_kinds_it_shows_and_no_other(tmp_path: Path) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(DOCUMENTED_AB.format(adapter="verdict:crashing",
                                         kind='        kind: [special-duplicate, special-decode]\n'), encoding="utf-8")
    ((entry,),) = [case.documented for case in load_case_file(path)]
    assert entry.accepts("special-duplicate") and entry.accepts("special-decode")
    assert not entry.accepts("segmentation") and not entry.accepts("raised:internal-error|ok")
