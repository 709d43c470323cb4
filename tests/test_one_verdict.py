"""Issue 21 item 4: one verdict everywhere. The exit code, parity.json's ``verdict``, the
page's verdict and the terminal's verdict line are one function's answer
(:func:`harness.report.verdict.verdict_of`), so they cannot disagree."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.report.page import render_report
from harness.report.schema import ParityValidationError, validate_parity
from harness.report.verdict import decide, verdict_of

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: plain
    text: "hello world"
    encodings: [cl100k_base]
"""


def _verdict_on_page(html: str) -> str:
    match = re.search(r'<p class="verdict v-(\w+)" id="verdict">([^<]*)</p>', html)
    if match is None:
        raise AssertionError("the page shows no verdict")
    return match.group(2).replace("&#39;", "'")


def test_min_coverage_fails_the_page_the_json_and_the_exit_code_alike(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    # one case reaches a few dozen of cl100k_base's 100k tokens: far below half of them
    code = main(["run", "--impl", "tiktoken:cl100k_base", "--cases", str(tmp_path / "cases.yaml"),
                 "--no-generated", "--quiet", "--min-coverage", "vocab=0.5", "--out", str(tmp_path / "out")])
    stdout = capsys.readouterr().out
    assert code == 1
    data = json.loads((tmp_path / "out" / "latest" / "parity.json").read_text(encoding="utf-8"))
    assert data["schema_version"] == 3
    assert data["verdict"]["result"] == "FAIL" and data["verdict"]["exit_code"] == 1
    assert data["run"]["coverage_minimums"]["minimums"] == {"vocab": 0.5}
    assert [b.split(":")[0] for b in data["run"]["coverage_minimums"]["below"]] == ["tiktoken"]
    line = f"FAIL: {data['verdict']['reason']}"
    assert "coverage below its minimum" in line
    # no divergence at all: on the old page this read "PASS" while the run exited 1
    assert not data["divergences"]
    page = (tmp_path / "out" / "latest" / "parity.html").read_text(encoding="utf-8")
    assert _verdict_on_page(page) == line + " (exit code 1)"
    assert 'class="verdict v-fail"' in page
    assert " ".join(line.split()) in " ".join(stdout.split())  # wrapped at 120 columns
    lines = stdout.rstrip("\n").split("\n")
    closing = lines[lines.index(next(x for x in lines if x.startswith("FAIL: "))):]
    assert closing[-1] == "exit code 1" and max(len(x) for x in closing) <= 120
    # the rest of what limited the run is in the file too
    assert data["run"]["limits"]["isolation"]["timeout_s"] == 60.0
    assert isinstance(data["run"]["notes"], list) and data["run"]["lost_shards"] == []


def test_a_verdict_edited_by_hand_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    assert main(["run", "--impl", "tiktoken:cl100k_base", "--cases", str(tmp_path / "cases.yaml"),
                 "--no-generated", "--quiet", "--out", str(tmp_path / "out")]) == 0
    data = json.loads((tmp_path / "out" / "latest" / "parity.json").read_text(encoding="utf-8"))
    assert data["verdict"] == {"result": "PASS", "reason": "only agreements and documented divergences",
                               "exit_code": 0}
    data["run"]["lost_shards"] = ["shard 3 of 8"]
    with pytest.raises(ParityValidationError, match=r"\$\.verdict: .*decide .*FAIL.*1 corpus shard lost: shard 3"):
        validate_parity(data)
    # the page follows the computed verdict, not the stored one
    assert _verdict_on_page(render_report(data, validate=False)).startswith("FAIL: 1 corpus shard lost: shard 3 of 8")


def test_the_verdict_counts_divergences_and_every_reason() -> None:
    assert decide(unexpected=0, stale=1).line == "FAIL: 1 stale divergence"
    lost = decide(unexpected=0, stale=0, lost_shards=["a", "b"])
    assert (lost.word, lost.exit_code, lost.reason) == ("FAIL", 1, "2 corpus shards lost: a, b")
    stopped = decide(unexpected=3, stale=0, incomplete={"reason": "interrupted by SIGINT (Ctrl-C)",
                                                         "phase": "generated", "exit_code": 130})
    assert (stopped.word, stopped.exit_code) == ("INCOMPLETE", 130)
    assert stopped.reasons[1] == "3 unexpected divergences"
    # a schema_version 2 file (no verdict stored) gets the same function's answer
    old = {"divergences": [{"status": "documented"}, {"status": "unexpected"}], "run": {}}
    assert verdict_of(old).line == "FAIL: 1 unexpected divergence"


def test_a_whole_run_whose_reference_cannot_run_exits_2(tmp_path: Path) -> None:
    # tiktoken made unimportable: every built-in encoding loses its pinned reference
    shadow = tmp_path / "shadow" / "tiktoken"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('tiktoken hidden by the test')\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "shadow"), str(REPO)]))
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--no-generated", "--quiet",
                           "--out", str(tmp_path / "out")], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "a built-in encoding's reference cannot run" in proc.stderr
    assert "no reference for cl100k_base: tiktoken:cl100k_base cannot run" in proc.stderr
    assert "narrow the run with --impl/--encoding" in proc.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
