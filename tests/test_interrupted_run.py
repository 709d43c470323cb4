"""A run stopped by SIGTERM or Ctrl-C still writes parity.json and the page, marked incomplete:
cells it never reached are ``not-run``, its verdict is INCOMPLETE with the signal's exit
code, and it leaves ``reports/latest`` to the last whole run (issue 21 item 4)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.schema import validate_parity
from tests.signal_state import when_signalled

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
  - id: later
    text: "never reached"
    encodings: [cl100k_base]
    documented:
      - adapters: ["faulty:hang"]
        check: id-parity
        kind: segmentation
        reason: never judged, the run stops on the snowman before it
        source: tests/test_interrupted_run.py
"""


def test_sigterm_and_sigint_during_the_cases_leave_an_incomplete_report(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    procs = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        (tmp_path / signum.name / "latest").mkdir(parents=True)
        (tmp_path / signum.name / "latest" / "parity.json").write_text("the last whole run", encoding="utf-8")
        # faulty:hang sleeps on the snowman; with a 120 s time limit the run sits in the cases
        command = [sys.executable, "-m", "harness", "run", "--plugin", "tests.faulty_adapters:hang",
                   "--impl", "faulty:hang", "--cases", str(tmp_path / "cases.yaml"), "--no-generated",
                   "--timeout", "120", "--out", str(tmp_path / signum.name)]
        # a fixed width: the closing lines wrap to the terminal, and the test reads them whole
        procs[signum] = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, env={**os.environ, "COLUMNS": "160"})
    states = {}
    for signum, proc in procs.items():
        assert proc.stderr is not None
        for line in proc.stderr:  # the progress bar names each phase as it starts
            if line.startswith("cases "):
                break
        else:
            pytest.fail(f"the run ended before its cases: {proc.communicate()}")
        states[signum] = when_signalled(proc.pid)
        proc.send_signal(signum)
    for signum, proc in procs.items():
        # a stopped run writes its report in seconds; on a loaded machine it took over 120 s once
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 128 + signum, f"{states[signum]}\n{stdout}{stderr}"
        # an interrupted run does not replace the last whole run's reports/latest
        latest = tmp_path / signum.name / "latest"
        assert (latest / "parity.json").read_text(encoding="utf-8") == "the last whole run"
        folders = [f for f in (tmp_path / signum.name).iterdir() if f.name != "latest"]
        assert len(folders) == 1
        data = json.loads((folders[0] / "parity.json").read_text(encoding="utf-8"))
        validate_parity(data)
        name = "SIGINT (Ctrl-C)" if signum == signal.SIGINT else "SIGTERM"
        assert data["run"]["incomplete"] == {"reason": f"interrupted by {name}", "phase": "cases",
                                             "exit_code": 128 + signum}
        # the vocabulary check had finished before the signal: it is in the report
        assert data["matrix"]["faulty:hang"]["vocab-consistency"]["inputs"] > 0
        # the cells no input reached are "not run", never a green "agree 0"
        cells = [cell for row in data["matrix"].values() for cell in row.values()]
        assert all(cell["inputs"] > 0 for cell in cells if cell["status"] == "agree")
        assert data["summary"]["not-run"] == sum(cell["status"] == "not-run" for cell in cells) > 0
        assert data["matrix"]["faulty:hang"]["batch"]["status"] == "not-run"
        line = f"INCOMPLETE: interrupted by {name} during cases: only what finished was checked"
        assert data["verdict"] == {"result": "INCOMPLETE", "reason": line.split(": ", 1)[1],
                                   "exit_code": 128 + signum}
        assert f"{line} (exit code {128 + signum})" in (folders[0] / "parity.html").read_text(encoding="utf-8")
        lines = stdout.rstrip("\n").split("\n")
        assert line in lines and lines[-1] == f"exit code {128 + signum}"
        assert "latest: not replaced (an interrupted run; the last whole run stays there)" in lines
        # the cases' unit never finished, so none of them is in the report (the plain one's
        # result went with it): the documented entry was not judged, and the notes say so
        assert ("1 documented entries of 3 of 3 cases were never judged (the run stopped before cases plain, "
                "snowman, later): findings they explain are counted as unexpected here") in data["run"]["notes"]
