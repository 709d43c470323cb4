"""The pytest plugin reads and keeps the same units as ``tokconf run`` (issue 25).

Its items are the plan's units (harness/pytest/suite.py), so a unit ``tokconf run`` kept is
the item's answer, and the other way round. Before this its items ran their units without
the unit cache: a second ``pytest`` of the conformance suite cost as much CPU as the first
(574 s against 615 s here), even right after a ``tokconf run`` had kept every one of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.run_verdicts import verdicts

REPO = Path(__file__).resolve().parent.parent

#: one case: a task of ``tokconf run`` holds up to 24 cases, a pytest item one
CASE = """\
version: 1
cases:
  - id: hello
    text: "hello world"
    encodings: [r50k_base]
    expect:
      ids: {r50k_base: [31373, 995]}
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(pytester.path / "cache"))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    (pytester.path / "hello.yaml").write_text(CASE, encoding="utf-8")
    pytester.makepyfile(test_conformance="from harness.pytest.plugin import tokconf_suite\n"
                                         "test_tokconf = tokconf_suite()\n")
    return pytester


def _suite(project: pytest.Pytester, out: str, *extra: str) -> dict[str, Any]:
    result = project.runpytest_subprocess("test_conformance.py", "--tokconf-impl", "tiktoken:r50k_base",
                                          "--tokconf-cases", "hello.yaml", "--tokconf-no-everyday",
                                          "--tokconf-report", out, "-p", "no:cacheprovider", "-p", "no:xdist", *extra)
    # tiktoken's encode_to_numpy raises on a lone surrogate where its encode does not: the
    # shipped cases document that, this one-case file does not, so both runs fail on it
    assert result.ret == 1 and "tokconf: parity report" in result.stdout.str(), result.stdout.str()[-3000:]
    return json.loads((project.path / out / "latest" / "parity.json").read_text(encoding="utf-8"))


def test_pytest_reads_the_units_tokconf_run_kept_and_keeps_its_own(project: pytest.Pytester) -> None:
    out = project.path / "run"
    code = main(["run", "--quiet", "--impl", "tiktoken:r50k_base", "--cases", str(project.path / "hello.yaml"),
                 "--no-everyday", "--out", str(out)])
    assert code == 1
    ran = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    assert ran["run"]["cache"]["from_cache"] == {} and ran["run"]["cache"]["stored"] >= 5

    every_kind = {"tiktoken:r50k_base": ["cases", "every-token", "generated", "long", "shrink", "vocab"]}
    suite = _suite(project, "suite")
    # every unit of the plan came from what tokconf run kept: the case, every token, the
    # generated texts, the long inputs, the vocabulary probes and shrinks. An item shrinks
    # its own unexpected findings before the run groups them by cause, so it may shrink a
    # finding the run merged unshrunk: those are kept now
    assert suite["run"]["cache"]["from_cache"] == every_kind
    assert verdicts(suite) == verdicts(ran)

    again = _suite(project, "again")
    assert again["run"]["cache"]["from_cache"] == every_kind and again["run"]["cache"]["stored"] == 0
    assert verdicts(again) == verdicts(ran)

    asked = _suite(project, "asked", "--tokconf-no-cache")
    assert asked["run"]["cache"] == {"used": False}
    assert verdicts(asked) == verdicts(ran)
