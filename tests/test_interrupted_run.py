"""A run stopped by SIGTERM or Ctrl-C still writes parity.json and the page, marked incomplete."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.schema import validate_parity

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: plain
    text: "hello"
    encodings: [cl100k_base]
  - id: snowman
    text: "\u2603"
    encodings: [cl100k_base]
"""


def test_sigterm_and_sigint_during_the_cases_leave_an_incomplete_report(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    procs = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        # faulty:hang sleeps on the snowman; with a 120 s time limit the run sits in the cases
        command = [sys.executable, "-m", "harness", "run", "--plugin", "tests.faulty_adapters:hang",
                   "--impl", "faulty:hang", "--cases", str(tmp_path / "cases.yaml"), "--no-generated",
                   "--timeout", "120", "--out", str(tmp_path / signum.name)]
        procs[signum] = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
    for signum, proc in procs.items():
        assert proc.stderr is not None
        for line in proc.stderr:  # the progress bar names each phase as it starts
            if line.startswith("cases "):
                break
        else:
            pytest.fail(f"the run ended before its cases: {proc.communicate()}")
        proc.send_signal(signum)
    for signum, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signum, stdout + stderr
        latest = tmp_path / signum.name / "latest"
        data = json.loads((latest / "parity.json").read_text(encoding="utf-8"))
        validate_parity(data)
        name = "SIGINT (Ctrl-C)" if signum == signal.SIGINT else "SIGTERM"
        assert data["run"]["incomplete"] == {"reason": f"interrupted by {name}", "phase": "cases"}
        # the vocabulary check had finished before the signal: it is in the report
        assert data["matrix"]["faulty:hang"]["vocab-consistency"]["inputs"] > 0
        assert "INCOMPLETE (interrupted by" in (latest / "parity.html").read_text(encoding="utf-8")
        assert "INCOMPLETE: interrupted by" in stdout
