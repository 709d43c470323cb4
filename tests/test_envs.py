"""Other environments side by side (issue 12).

Offline: an "environment" whose interpreter is this very Python shows the mechanism
(registration with the version in the name, a worker started with that interpreter, the
same vocabularies). Marked ``network`` (CI runs them; they install from the package
index once, into a cache kept between sessions, ``TOKCONF_TEST_ENV_CACHE`` or
``~/.cache/tokconf-test-envs``): tiktoken 0.9.0 beside the installed tiktoken on
cl100k_base and o200k_base, in one run and through a golden; transformers' slow GPT-2
tokenizer beside hf:gpt2 and tiktoken:gpt2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.envs.store import EnvAdapter, Environment, save
from harness.golden.format import read_golden
from harness.registry import library_version
from tests.env_cache import environments

REPO = Path(__file__).resolve().parents[1]


def tokconf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO, env=env)


# -- offline: this interpreter as an environment ---------------------------------------------


@pytest.fixture
def here_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path / "cache"))
    version = library_version("tiktoken") or "?"
    folder = tmp_path / "cache" / "envs" / "here"
    folder.mkdir(parents=True)
    save(Environment(name="here", folder=str(folder), python=sys.executable, requirements=(f"tiktoken=={version}",),
                     packages=(("tiktoken", version),),
                     adapters=(EnvAdapter(f"tiktoken@{version}:cl100k_base", "tiktoken:cl100k_base", "cl100k_base",
                                          "tiktoken", version),
                               EnvAdapter(f"tiktoken@{version}:o200k_harmony", "tiktoken:o200k_harmony",
                                          "o200k_harmony", "tiktoken", version, reason="planted: lacks it"))))
    (tmp_path / "cache" / "envs" / "half-made").mkdir()  # no env.json: never registered
    return {**os.environ, "TOKCONF_CACHE_DIR": str(tmp_path / "cache")}


def test_an_environment_registers_versioned_adapters_that_run_in_its_interpreter(here_env, tmp_path: Path) -> None:
    version = library_version("tiktoken")
    listing = json.loads(tokconf("list", "--json", env=here_env).stdout)["adapters"]
    rows = {r["name"]: r for r in listing if "@" in r["name"]}
    assert set(rows) == {f"tiktoken@{version}:cl100k_base", f"tiktoken@{version}:o200k_harmony"}
    assert rows[f"tiktoken@{version}:o200k_harmony"]["reason"] == "planted: lacks it"
    out = tmp_path / "reports"
    done = tokconf("run", "--impl", "tiktoken:cl100k_base", "--impl", f"tiktoken@{version}:cl100k_base",
                   "--no-generated", "--out", str(out), "--quiet", env=here_env)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    (row,) = [a for a in data["adapters"] if a["name"] == f"tiktoken@{version}:cl100k_base"]
    assert row["version"] == version and "worker process (environment here)" in row["isolated"]
    # the surface was walked: every path agrees but encode_to_numpy on a lone surrogate,
    # which tiktoken documents against itself under each policy (cases/tiktoken-numpy.yaml)
    assert data["matrix"][row["name"]]["api-surface"]["status"] == "documented"
    assert {d["case"] for d in data["divergences"] if d["adapter"] == row["name"]} == {
        f"tiktoken-encode-to-numpy-lone-surrogate-{p}-cl100k" for p in ("default", "all", "ordinary", "one")}
    done = tokconf("run", "--impl", f"tiktoken@{version}:o200k_harmony", "--out", str(out), env=here_env)
    assert done.returncode == 2 and "planted: lacks it" in done.stderr
    listed = tokconf("env", "list", env=here_env).stdout
    assert "half-made: half-made (no env.json)" in listed
    assert tokconf("env", "remove", "here", env=here_env).returncode == 0
    assert f"tiktoken@{version}" not in tokconf("list", env=here_env).stdout


def test_env_add_refuses_what_is_not_a_requirement(here_env) -> None:
    done = tokconf("env", "add", "not a requirement!", env=here_env)
    assert done.returncode == 2 and "is not a requirement like 'tiktoken==0.9.0'" in done.stderr


# -- network: real other releases -------------------------------------------------------------


@pytest.fixture(scope="session")
def tiktoken_0_9_0() -> dict[str, str]:
    return environments({"tiktoken-0.9.0": "tiktoken==0.9.0"})


OLD_AND_NEW = ["--impl", "tiktoken:cl100k_base", "--impl", "tiktoken@0.9.0:cl100k_base",
               "--impl", "tiktoken:o200k_base", "--impl", "tiktoken@0.9.0:o200k_base"]


@pytest.mark.network
def test_an_old_release_lacks_an_encoding_with_that_reason(tiktoken_0_9_0) -> None:
    envs = json.loads(tokconf("env", "list", "--json", env=tiktoken_0_9_0).stdout)["environments"]
    (env,) = [e for e in envs if e["name"] == "tiktoken-0.9.0"]
    adapters = {a["name"]: a for a in env["adapters"]}
    assert {"tiktoken@0.9.0:cl100k_base", "tiktoken@0.9.0:o200k_base", "tiktoken@0.9.0:gpt2"} <= set(adapters)
    assert adapters["tiktoken@0.9.0:cl100k_base"]["reason"] is None
    assert adapters["tiktoken@0.9.0:o200k_harmony"]["reason"].startswith("tiktoken 0.9.0 has no encoding 'o200k_harmony'")
    done = tokconf("run", "--impl", "tiktoken@0.9.0:o200k_harmony", env=tiktoken_0_9_0)
    assert done.returncode == 2 and "tiktoken 0.9.0 has no encoding 'o200k_harmony'" in done.stderr


@pytest.mark.network
def test_two_releases_in_one_run(tiktoken_0_9_0, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    # without the default long inputs: tiktoken 0.9.0 is quadratic on long runs, and its
    # long tier was 114 of this run's 200 s; the long tier across releases is
    # tests/test_release_ladder.py's (a million letters through every release)
    done = tokconf("run", *OLD_AND_NEW, "--no-default-long", "--out", str(out), "--quiet", env=tiktoken_0_9_0)
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    versions = {a["name"]: a["version"] for a in data["adapters"]}
    assert versions["tiktoken@0.9.0:cl100k_base"] == versions["tiktoken@0.9.0:o200k_base"] == "0.9.0"
    assert versions["tiktoken:cl100k_base"] == library_version("tiktoken")
    # the differences between the releases: 0.9.0's raw byte path loses an input whose
    # UTF-8 starts invalid, and its encode_to_numpy encodes a special literal as the
    # special ID under disallowed_special=() (cases/releases.yaml); encode_to_numpy refuses
    # a lone surrogate in every release (cases/tiktoken-numpy.yaml); IDs, decoding and every
    # other path agree
    found: dict[str, set[str]] = {}
    for d in data["divergences"]:
        assert d["status"] == "documented", d
        found.setdefault(d["adapter"], set()).add(d["case"])
    for name, short in (("cl100k_base", "cl100k"), ("o200k_base", "o200k")):
        surrogate = {f"tiktoken-encode-to-numpy-lone-surrogate-{p}-{short}" for p in ("default", "all", "ordinary", "one")}
        assert found[f"tiktoken:{name}"] == surrogate
        assert found[f"tiktoken@0.9.0:{name}"] == surrogate | {
            f"tiktoken-0.9.0-encode-bytes-invalid-start-{short}", f"tiktoken-0.9.0-encode-bytes-changed-{short}",
            f"tiktoken-0.9-0.10-encode-to-numpy-special-literal-{short}",
            f"tiktoken-0.9-0.10-encode-to-numpy-changed-{short}"}, done.stdout
    assert done.returncode == 0
    assert all(d["absorbed"] > 0 for d in data["divergences"])  # generated lone surrogates too


@pytest.mark.network
def test_the_same_difference_shows_in_the_gate_of_a_golden_made_with_the_old_release(tiktoken_0_9_0,
                                                                                       tmp_path: Path) -> None:
    import tiktoken

    golden = tmp_path / "old.tokconf"
    done = tokconf("snapshot", "--impl", "tiktoken@0.9.0:cl100k_base", "--impl", "tiktoken@0.9.0:o200k_base",
                   # 10^4: tiktoken 0.9.0 is quadratic on long runs (10^5 spaces: 7 s a call, 10^5
                   # ideographic spaces: over 50 s; 0.14: 0.03 s), and a surface is ~25 calls
                   "--long", "--long-sizes", "10000", "-o", str(golden), "--quiet", env=tiktoken_0_9_0)
    assert done.returncode == 0, done.stderr
    header, inputs = read_golden(golden)
    assert {a.version for a in header.adapters} == {"0.9.0"}
    texts = {item.source: item.text for item in inputs}
    assert sum(s.startswith("long:") for s in texts) == 8
    done = tokconf("gate", str(golden), "--impl", "tiktoken:cl100k_base", "--impl", "tiktoken:o200k_base", "--json",
                   env=tiktoken_0_9_0)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["by_kind"] == {"IDs changed": len(result["changes"])} and result["summaries"] == []
    starts_invalid = {s for s, t in texts.items() if t and "\ud800" <= t[0] <= "\udfff"}
    for name in ("cl100k_base", "o200k_base"):
        encoding = tiktoken.get_encoding(name)
        changes = [c for c in result["changes"] if c["adapter"] == f"tiktoken@0.9.0:{name}"]
        # 0.9.0's encode_to_numpy bug (numpy is in the environment now): on special literals
        numpy = [c for c in changes if c["path"] == "encode_to_numpy[ordinary]"]
        assert numpy and all("<|" in texts[c["source"]] for c in numpy)
        assert all(c["known"] and c["known"]["as"] == "known fix" for c in numpy)
        changes = [c for c in changes if c not in numpy]
        assert {c["path"] for c in changes} == {"_encode_bytes"}
        assert {c["source"] for c in changes} == starts_invalid
        for change in changes:
            assert change["before"] == {"ok": []}
            raw = texts[change["source"]].encode("utf-8", "surrogatepass")
            assert encoding.decode_bytes(change["after"]["ok"]) == raw  # fixed: every byte is back


@pytest.fixture(scope="session")
def transformers_4() -> tuple[dict[str, str], str]:
    env = environments({"transformers-lt5": "transformers<5"})
    envs = json.loads(tokconf("env", "list", "--json", env=env).stdout)["environments"]
    # the environment also has transformers 4's hf-transformers:ENC converters
    (slow,) = [a["name"] for e in envs if e["name"] == "transformers-lt5" for a in e["adapters"]
               if a["name"].startswith("hf-slow@")]
    return env, slow


@pytest.mark.network
def test_the_slow_gpt2_tokenizer_beside_the_fast_one_and_tiktoken(transformers_4, tmp_path: Path) -> None:
    env, slow = transformers_4
    assert slow.startswith("hf-slow@4.")
    out = tmp_path / "reports"
    done = tokconf("run", "--impl", slow, "--impl", "hf:gpt2", "--impl", "tiktoken:gpt2", "--out", str(out), "--quiet",
                   env=env)
    assert done.returncode == 0, done.stdout
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    mine = {(d["check"], d["case"]) for d in data["divergences"] if d["adapter"] == slow}
    assert mine == {
        ("id-parity", "unicode17-letter-before-contraction-r50k"),  # the `regex` module's Unicode 17 tables
        ("special-policy", "seed000-gpt2-endoftext-seven-tokens"),  # added tokens always special
        ("special-policy", "issue2-r50k-endoftext-ordinary"),
        ("encode-ordinary", "issue2-r50k-endoftext-ordinary"),
        ("error-category", "lone-surrogate-r50k"),  # UnicodeEncodeError, where the fast one raises TypeError
    }
    assert all(d["status"] == "documented" for d in data["divergences"])
