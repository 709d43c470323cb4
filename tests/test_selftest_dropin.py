"""The drop-in API faults (harness/selftest/faults_dropin.py) under pytest: the tokconf
plugin fails exactly their items. That ``tokconf selftest``'s engine catches every one,
by api-surface alone, is tests/test_selftest.py's, on the one selftest run the suite
makes (a second in-process run of the ten faults here cost a minute)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.selftest.faults_dropin import DROPIN_FAULTS

ROOT = Path(__file__).resolve().parent.parent


def test_pytest_fails_every_drop_in_fault(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    names = {f"selftest:{f.fault}" for f in DROPIN_FAULTS}
    assert len(names) == 10
    impls = [arg for name in sorted(names) for arg in ("--tokconf-impl", name)]
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", "harness.selftest.score:dropin_family", *impls, "--tokconf-profile", "dev",
        # the API surface is walked on the cases and generated inputs: every token, everyday
        # text and the default long inputs (most of this run) add no item these faults fail
        "--tokconf-no-every-token", "--tokconf-no-everyday", "--tokconf-no-default-long",
        "--tokconf-no-isolate", "-p", "no:cacheprovider", timeout=3600)
    text = result.stdout.str()
    failing = set(re.findall(r"unexpected divergence: (selftest:[a-z0-9-]+) / ", text))
    assert failing == names, (sorted(failing), sorted(names))
