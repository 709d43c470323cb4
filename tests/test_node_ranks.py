"""The JavaScript ports over the open-weight encodings' ranks (issue 23), through the real
CLI, real Node workers and the real npm packages (js-tiktoken 1.0.21, tiktoken 1.0.22),
installed in a Node environment of this module's own cache folder:

- the ports give the vendor's exact IDs (npm tiktoken on Llama 3, js-tiktoken on Tekken,
  whose pattern a JavaScript RegExp can compile);
- js-tiktoken on Llama 3 is unavailable with the reason: Node 20's RegExp has no
  ``(?i:...)`` group, and js-tiktoken compiles the pattern with it;
- a run of the llama3 group with the npm tiktoken port passes, and the same port with a
  planted wrong pattern (``tests/js_ranks_plugins.py``) fails with a run of digits as
  the minimal input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.worker.node import node_unavailable_reason

pytest.importorskip("llama_models")
pytest.importorskip("mistral_common")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("npm:js-tiktoken@1.0.21", "npm:tiktoken@1.0.22")
QUICK = ("--no-every-token", "--no-everyday", "--max-examples", "30", "--quiet", "--seed", "0")

pytestmark = pytest.mark.skipif(node_unavailable_reason() is not None, reason=str(node_unavailable_reason()))


def tokconf(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TOKCONF_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tokconf-npm-ranks")
    done = tokconf("env", "add", "--quiet", *PACKAGES, cache=folder)
    if done.returncode != 0:
        why = f"cannot install {', '.join(PACKAGES)} with npm: {done.stderr[-400:]}"
        if os.environ.get("TOKCONF_CI_NPM"):  # .ci/run installs them: a failure there is not a skip
            pytest.fail(why)
        pytest.skip(why)
    return folder


def encoded(cache: Path, text: str, *impls: str) -> dict[str, dict]:
    args = [arg for impl in impls for arg in ("--impl", impl)]
    done = tokconf("encode", "--json", "--allowed-special", "all", *args, "--", text, cache=cache)
    return {row["impl"]: row for row in json.loads(done.stdout)["results"]}


@pytest.mark.parametrize("text, ids", [
    ("Hello world, it's 12345", [9906, 1917, 11, 433, 596, 220, 4513, 1774]),
    ("<|begin_of_text|>x\n\n  y", [128000, 87, 271, 220, 379]),
])
def test_npm_tiktoken_gives_meta_llama3_ids(cache, text, ids):
    rows = encoded(cache, text, "meta:llama3", "tiktoken-wasm@1.0.22:llama3", "js-tiktoken@1.0.21:llama3")
    assert rows["meta:llama3"]["ids"] == ids
    assert rows["tiktoken-wasm@1.0.22:llama3"]["ids"] == ids
    reason = rows["js-tiktoken@1.0.21:llama3"]["unavailable"]
    assert "Invalid group" in reason and "(?i:" in reason and "JavaScript RegExp" in reason


def test_js_tiktoken_gives_mistral_tekken_ids(cache):
    text = "Hello world, it's 12345 ünïcödé 😀"
    rows = encoded(cache, text, "tekken:tekken_240911", "js-tiktoken@1.0.21:tekken_240911",
                   "tiktoken-wasm@1.0.22:tekken_240911")
    ids = rows["tekken:tekken_240911"]["ids"]
    assert ids[:11] == [22177, 4304, 1044, 1494, 1681, 1032, 1049, 1050, 1051, 1052, 1053]
    assert rows["js-tiktoken@1.0.21:tekken_240911"]["ids"] == ids
    assert rows["tiktoken-wasm@1.0.22:tekken_240911"]["ids"] == ids


def test_a_llama3_run_with_the_npm_port_passes_and_a_planted_pattern_fails(cache, tmp_path):
    good = tokconf("run", "--encoding", "llama3", "--impl", "tiktoken-wasm@1.0.22:llama3", *QUICK,
                   "--out", str(tmp_path / "good"), cache=cache)
    assert good.returncode == 0, good.stdout[-3000:]
    report = json.loads((tmp_path / "good" / "latest" / "parity.json").read_text())
    row = report["matrix"]["tiktoken-wasm@1.0.22:llama3"]
    assert row["id-parity"]["status"] == "agree"

    bad = tokconf("run", "--plugin", "tests.js_ranks_plugins:wrong_pattern", "--encoding", "llama3",
                  "--impl", "planted-wasm:llama3", "--no-cases", *QUICK, "--out", str(tmp_path / "bad"), cache=cache)
    assert bad.returncode == 1, bad.stdout[-3000:]
    report = json.loads((tmp_path / "bad" / "latest" / "parity.json").read_text())
    found = [d for d in report["divergences"] if d.get("adapter") == "planted-wasm:llama3" and d["check"] == "id-parity"]
    assert found, bad.stdout[-3000:]
    minimal = min((d["input"]["text"] for d in found), key=len)
    assert minimal.isdigit() and len(minimal) >= 4, found[0]["input"]
