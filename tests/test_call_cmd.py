"""``tokconf call`` (issue 21 item 6): the API-surface divergences a run prints reproduce
through the same path, exit 1 while the difference is there and 0 once it is gone."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: words
    text: "hello world"
    encodings: [cl100k_base]
"""


def _tokconf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900)


def test_api_surface_divergences_reproduce_by_their_path(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    done = _tokconf("run", "--plugin", "tests.surface_adapters:adapters", "--impl", "planted:batch-drift",
                    "--impl", "planted:keyerror-became-valueerror", "--cases", str(tmp_path / "cases.yaml"),
                    "--no-generated", "--quiet", "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads((tmp_path / "out" / "latest" / "parity.json").read_text(encoding="ascii"))
    surface = {d["adapter"]: d for d in data["divergences"] if d["check"] == "api-surface"}
    assert set(surface) == {"planted:batch-drift", "planted:keyerror-became-valueerror"}
    for name, d in surface.items():
        argv = shlex.split(d["reproduce"])
        assert argv[:2] == ["tokconf", "call"] and "--path" in argv and argv[argv.index("--kind") + 1] == d["kind"]
        again = _tokconf(*argv[1:])
        assert again.returncode == 1, (d["reproduce"], again.stdout, again.stderr)
        shown = [argv[i + 1] for i, a in enumerate(argv) if a == "--path"]
        assert all(re.search(rf"^{re.escape(name)} +{re.escape(path)}  ", again.stdout, re.M) for path in shown), \
            again.stdout
        assert f"api-surface: {d['kind']}: " in again.stdout
        # the same command on the unplanted library: the difference is gone, exit 0
        clean = [("tiktoken:cl100k_base" if a == name else a) for a in argv[1:]]
        gone = _tokconf(*clean)
        assert gone.returncode == 0, (clean, gone.stdout, gone.stderr)
        assert "api-surface: no longer reproduced" in gone.stderr


def test_without_a_check_native_error_types_are_compared() -> None:
    # minbpe raises AssertionError where tiktoken raises ValueError: one category, two types
    done = _tokconf("call", "--impl", "minbpe:cl100k_base", "--impl", "tiktoken:cl100k_base", "encode", "--",
                    "<|endoftext|>")
    assert done.returncode == 1
    lines = done.stdout.split("\n")
    assert lines[0].startswith("minbpe:cl100k_base    raised disallowed-special (builtins.AssertionError)")
    assert lines[1].startswith("tiktoken:cl100k_base  raised disallowed-special (builtins.ValueError)")
    same = _tokconf("call", "--impl", "minbpe-fixed:cl100k_base", "--impl", "tiktoken:cl100k_base", "encode", "--",
                    "hello world")
    assert same.returncode == 0, same.stdout + same.stderr


def test_usage_errors_exit_2() -> None:
    assert _tokconf("call", "--impl", "tiktoken:cl100k_base", "--kind", "x", "encode", "--", "a").returncode == 2
    bad = _tokconf("call", "--impl", "tiktoken:cl100k_base", "decode", "--", "a")
    assert bad.returncode == 2 and "takes token IDs" in bad.stderr
