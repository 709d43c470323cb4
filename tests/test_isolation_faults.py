"""Adapters that hang, crash or misbehave become outcomes; the run finishes; --jobs 2 agrees.

The adapters of :mod:`tests.faulty_adapters` are plugins, so ``tokconf run`` isolates
them by default. One run with ``--jobs 1`` and one with ``--jobs 2`` go side by side
(real subprocesses, real workers, real signals); ``wrong:rstrip`` rides along so that
findings are shrunk in parallel too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: snowman
    text: "\u2603"
    encodings: [cl100k_base]
  - id: plain
    text: "hello world "
    encodings: [cl100k_base]
"""

#: adapter -> (check, kind, the adapter's outcome in the report (a subset of its fields))
EXPECTED = {
    "faulty:hang": ("error-category", "timeout|ok", {"kind": "timeout", "message": "no answer within 2 s"}),
    "faulty:segfault": ("error-category", "crashed:SIGSEGV|ok", {"kind": "crashed", "category": "SIGSEGV"}),
    "faulty:abort": ("error-category", "crashed:SIGABRT|ok", {"kind": "crashed", "category": "SIGABRT"}),
    "faulty:oom": ("error-category", "crashed:out-of-memory|ok", {"kind": "crashed", "category": "out-of-memory"}),
    "faulty:panic": ("error-category", "raised:internal-error|ok",
                     {"kind": "raised", "category": "internal-error", "native_type": "tests.faulty_adapters.Panic"}),
    "faulty:not-integers": ("error-category", "raised:internal-error|ok",
                            {"kind": "raised", "category": "internal-error", "native_type": "tokconf.BadReturnValue",
                             "message": "encode returned tuple ('1', 2.5), expected a list of int"}),
    "faulty:out-of-vocab": ("id-parity", "content", {"kind": "ok", "ids": [1_000_000]}),
}


def _command(tmp_path: Path, jobs: int) -> list[str]:
    return [sys.executable, "-m", "harness", "run", "--plugin", "tests.faulty_adapters:all",
            "--plugin", "tests.wrong_adapters:rstrip", "--impl", "tiktoken:cl100k_base",
            "--cases", str(tmp_path / "cases.yaml"), "--max-examples", "12", "--timeout", "2",
            "--jobs", str(jobs), "--out", str(tmp_path / f"jobs{jobs}"), "--quiet",
            # isolation is the subject: not the vocabulary, nor more inputs of the same kind
            # through the same workers (everyday documents, long inputs)
            "--no-every-token", "--no-everyday", "--no-default-long"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[subprocess.CompletedProcess[str], dict[str, Any]]]:
    tmp_path = tmp_path_factory.mktemp("faults")
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    procs = {jobs: subprocess.Popen(_command(tmp_path, jobs), cwd=REPO, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for jobs in (1, 2)}
    out = {}
    for jobs, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        report = tmp_path / f"jobs{jobs}" / "latest" / "parity.json"
        assert report.is_file(), stdout + stderr
        out[jobs] = (done, json.loads(report.read_text(encoding="utf-8")))
    return out


def _divergence(data: dict[str, Any], adapter: str, check: str) -> dict[str, Any]:
    found = [d for d in data["divergences"] if d["adapter"] == adapter and d["check"] == check]
    assert len(found) == 1, [(d["adapter"], d["check"], d["kind"]) for d in data["divergences"]]
    return found[0]


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_fault_is_an_outcome_on_its_input_and_the_run_finishes(runs: dict, jobs: int) -> None:
    proc, data = runs[jobs]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # unexpected divergences, nothing worse
    assert "Traceback" not in proc.stderr
    rows = {a["name"]: a for a in data["adapters"]}
    for adapter, (check, kind, outcome) in EXPECTED.items():
        assert rows[adapter]["isolated"].startswith("worker process; network: ")
        divergence = _divergence(data, adapter, check)
        assert divergence["status"] == "unexpected"
        assert divergence["kind"] == kind
        assert divergence["input"]["text"] == "\u2603"
        shown = divergence["outcomes"][adapter]
        assert {k: shown.get(k) for k in outcome} == outcome
        assert divergence["outcomes"]["tiktoken:cl100k_base"] == {"kind": "ok", "ids": [18107, 225]}
    # the ID outside the vocabulary is also a decode failure, found as symptoms of the same cause
    symptoms = _divergence(data, "faulty:out-of-vocab", "id-parity")["symptoms"]
    assert {(s["check"], s["kind"]) for s in symptoms} >= {("round-trip", "decode:raised:unknown-id")}


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_other_adapters_results_are_complete(runs: dict, jobs: int) -> None:
    _, data = runs[jobs]
    reference = data["matrix"]["tiktoken:cl100k_base"]
    # id-parity against itself compares nothing (issue 21): empty, never "agree"
    assert reference["id-parity"]["status"] == "empty"
    assert all(cell["status"] in ("agree", "empty") for cell in reference.values()), reference
    inputs = reference["error-category"]["inputs"]
    assert inputs > 12  # the cases and every generated input
    for adapter in EXPECTED:
        row = data["matrix"][adapter]
        # every input reached every faulty adapter (the snowman's failure is error-category's)
        assert row["error-category"]["inputs"] == inputs, adapter
        assert row["id-parity"]["inputs"] >= inputs - 1, adapter
        assert row["vocab-consistency"]["status"] == "agree", adapter
    rstrip = _divergence(data, "wrong:rstrip", "id-parity")
    assert rstrip["input"]["text"] == " "  # shrunk: trailing whitespace alone


def test_jobs_2_gives_the_report_of_jobs_1(runs: dict) -> None:
    def comparable(data: dict[str, Any]) -> dict[str, Any]:
        run = {k: v for k, v in data["run"].items() if k not in ("id", "started", "finished", "duration_s", "argv", "cache")}
        return {**data, "run": run}

    assert comparable(runs[2][1]) == comparable(runs[1][1])
