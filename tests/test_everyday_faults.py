"""Faults of the first minute fail both `tokconf run` and the pytest suite (issue 20):
a drop-in that lowercases a sentence-initial "The" (found by the every-token phase: the
token "The" alone) and one that loses the last character of inputs over 50,000
characters (found by the default run's 10^5-character inputs, which no flag asks for)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.bounds import input_text

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = {"everyday:lower-the": "tests.everyday_plugins:lower_the",
           "everyday:drop-last-over-50k": "tests.everyday_plugins:drop_last_over_50k"}


# the long inputs once took 20 GB here: stream-decode's cut points were quadratic in
# memory (harness/checks/stream.py, tests/test_checks_stream.py)
@pytest.mark.parametrize("name, check", [("everyday:lower-the", "every-token"), ("everyday:drop-last-over-50k", "long")])
def test_tokconf_run_fails(name: str, check: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--quiet", "--no-isolate", "--plugin", PLUGINS[name], "--impl", name,
         "--no-cases", "--max-examples", "1",
         # each fault with the phase that finds it: neither can show in everyday text (a lone
         # "The" token; inputs over 50,000 characters), and the long fault's run without every
         # token is 30 s of CPU here instead of 40
         *(["--no-default-long", "--no-everyday"] if check == "every-token" else ["--no-every-token", "--no-everyday"]),
         "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((tmp_path / "latest" / "parity.json").read_text(encoding="utf-8"))
    texts = [input_text(d["input"]) for d in data["divergences"] if d["adapter"] == name and d["status"] == "unexpected"]
    if check == "every-token":
        assert "The" in texts, texts
    else:
        assert texts and all(len(t) > 50_000 for t in texts), [len(t) for t in texts]


@pytest.mark.parametrize("name, item", [("everyday:lower-the", "every-token")])
def test_pytest_suite_fails(name: str, item: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    (pytester.path / "none.yaml").write_text("version: 1\ncases: []\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", PLUGINS[name], "--tokconf-impl", name, "--tokconf-no-isolate",
        "--tokconf-cases", "none.yaml", "-p", "no:cacheprovider", "-k", item, timeout=3600)
    outcomes = result.parseoutcomes()  # the reference's item passes, the faulty one's fails
    assert (outcomes.get("passed"), outcomes.get("failed")) == (1, 1) and outcomes.get("deselected", 0) >= 3, outcomes
    assert f"FAILED tokconf::{item}[{name}]" in result.stdout.str()


def test_pytest_suite_fails_on_a_long_item(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The over-50,000 fault fails the default long items, and only those."""
    name = "everyday:drop-last-over-50k"
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    (pytester.path / "none.yaml").write_text("version: 1\ncases: []\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", PLUGINS[name], "--tokconf-impl", name, "--tokconf-no-isolate",
        "--tokconf-no-every-token", "--tokconf-cases", "none.yaml", "-p", "no:cacheprovider", "-k", "long",
        timeout=3600)  # (without the shipped cases tiktoken's own documented quirks would fail other items)
    failed = [line for line in result.stdout.lines if line.startswith("FAILED ")]
    assert failed and all(line.startswith("FAILED tokconf::long[cl100k_base:") for line in failed), failed
    assert result.ret == 1
