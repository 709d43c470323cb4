"""The drop-in API faults (harness/selftest/faults_dropin.py): every one caught, by
api-surface only, and the same ones under `tokconf selftest`'s engine and under pytest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.selftest.faults_dropin import DROPIN_FAULTS
from harness.selftest.score import run_selftest

ROOT = Path(__file__).resolve().parent.parent


def test_every_drop_in_fault_is_caught_by_api_surface_and_pytest_agrees(pytester: pytest.Pytester,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    score = run_selftest(faults=DROPIN_FAULTS, profile="dev")
    caught = {f"selftest:{v.fault}" for v in score.verdicts if v.caught}
    assert score.reference_problems == ()
    assert len(caught) == score.total == len(DROPIN_FAULTS) == 10, [v for v in score.verdicts if not v.caught]
    # encode and the other adapter methods are tiktoken's: only the API walk can see them
    assert {v.check for v in score.verdicts} == {"api-surface"}
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    impls = [arg for f in DROPIN_FAULTS for arg in ("--tokconf-impl", f"selftest:{f.fault}")]
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", "harness.selftest.score:dropin_family", *impls, "--tokconf-profile", "dev",
        "--tokconf-no-isolate", "-p", "no:cacheprovider", timeout=3600)
    text = result.stdout.str()
    failing = set(re.findall(r"unexpected divergence: (selftest:[a-z0-9-]+) / ", text))
    assert failing == caught, (sorted(failing), sorted(caught))
