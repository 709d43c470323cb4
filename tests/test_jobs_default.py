"""``tokconf run`` without ``--jobs`` uses the cores it may run on (issue 25).

The suite itself runs every other test's runs at one job (``TOKCONF_JOBS=1`` in
``conftest.py``: xdist already fills the cores); these tests take that away and look at
what a user's run does: the jobs its profile says it used, under a CPU affinity that
``taskset`` narrows, and the same cells at any number of jobs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import UsageError, build_parser
from harness.cli.isolation import default_jobs
from harness.cli.run_cmd import plan_from_args

ROOT = Path(__file__).resolve().parent.parent
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
SMALL_RUN = ["--impl", "bytebpe:demo", "--impl", "bytebpe-ltr:demo", "--no-every-token", "--no-everyday",
             "--no-cache", "--max-examples", "40", "--quiet", "--profile-harness"]


def _plan_jobs(*argv: str) -> int:
    args = build_parser().parse_args(["run", *argv])
    args.argv = list(argv)
    return plan_from_args(args).executor.jobs


def test_the_default_is_the_cores_this_process_may_run_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKCONF_JOBS", raising=False)
    assert default_jobs() == CORES
    assert _plan_jobs() == CORES
    assert _plan_jobs("--jobs", "1") == 1  # a flag always wins
    monkeypatch.setenv("TOKCONF_JOBS", "3")
    assert _plan_jobs() == 3 and _plan_jobs("-j", "2") == 2


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_a_bad_tokconf_jobs_is_a_usage_error_that_names_the_fix(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKCONF_JOBS", value)
    with pytest.raises(UsageError, match=rf"TOKCONF_JOBS must be a whole number of at least 1, got '{value}'; "
                                         r"fix it \(TOKCONF_JOBS=2\) or unset it"):
        _plan_jobs()


def _run(tmp_path: Path, name: str, *prefix: str, extra: tuple[str, ...] = ()) -> tuple[dict, dict]:
    env = {k: v for k, v in os.environ.items() if k != "TOKCONF_JOBS"}
    out = tmp_path / name
    done = subprocess.run([*prefix, sys.executable, "-m", "harness", "run", *SMALL_RUN, *extra, "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    (folder,) = [p for p in out.iterdir() if p.name != "latest"]
    profile = json.loads((folder / "harness-profile.json").read_text(encoding="utf-8"))
    report = json.loads((folder / "parity.json").read_text(encoding="utf-8"))
    return profile, report


def _cells(report: dict) -> dict:
    return {(a, c): (cell["status"], cell["inputs"]) for a, row in report["matrix"].items() for c, cell in row.items()}


@pytest.mark.skipif(shutil.which("taskset") is None or CORES < 2, reason="needs taskset and two cores")
def test_a_run_uses_every_core_it_may_and_reports_the_same_cells(tmp_path: Path) -> None:
    spread, report = _run(tmp_path, "all-cores")
    narrowed, narrowed_report = _run(tmp_path, "one-core", "taskset", "-c", "0")
    assert (spread["jobs"], narrowed["jobs"]) == (CORES, 1)
    assert _cells(report) == _cells(narrowed_report)
    assert [(d["adapter"], d["input"]) for d in report["divergences"]] == \
        [(d["adapter"], d["input"]) for d in narrowed_report["divergences"]]
