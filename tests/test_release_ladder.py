"""The ladder tiktoken 0.9.0, 0.10.0, 0.11.0, 0.13.0 beside the installed release (issue 22).

Marked ``network``: the releases are installed from the package index once, into the
cache the other environment tests use (``TOKCONF_TEST_ENV_CACHE`` or
``~/.cache/tokconf-test-envs``); an environment made by an older tokconf without numpy
is made again. Each behaviour change listed in docs/gating.md that a run can see is
asserted with the release where it changed: from one run on the cases, and from the
long tier's 10^6-character runs through snapshot and gate.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.env_cache import environments

REPO = Path(__file__).resolve().parents[1]
LADDER = ("0.9.0", "0.10.0", "0.11.0", "0.13.0")


def tokconf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO, env=env)


@pytest.fixture(scope="module")
def ladder() -> dict[str, str]:
    return environments({f"tiktoken-{version}": f"tiktoken=={version}" for version in LADDER})


def _cases_by_release(data: dict) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for d in data["divergences"]:
        found.setdefault(d["adapter"], set()).add(d["case"])
    return found


@pytest.mark.network
def test_one_run_finds_each_change_in_the_release_that_made_it(ladder: dict[str, str], tmp_path: Path) -> None:
    done = tokconf("run", "--ladder", f"tiktoken=={','.join(LADDER)}", "--encoding", "o200k_base", "--no-generated",
                   "--out", str(tmp_path), "--quiet", env=ladder)
    data = json.loads((tmp_path / "latest" / "parity.json").read_text(encoding="utf-8"))
    assert done.returncode == 0, done.stdout[-3000:]
    assert all(d["status"] == "documented" for d in data["divergences"])
    versions = {a["name"]: a["provenance"]["version"] for a in data["adapters"]}
    assert all(versions[f"tiktoken@{v}:o200k_base"] == v for v in LADDER)  # provenance from the environment
    found = _cases_by_release(data)
    surrogate = {f"tiktoken-encode-to-numpy-lone-surrogate-{p}-o200k" for p in ("default", "all", "ordinary", "one")}
    numpy_literal = {"tiktoken-0.9-0.10-encode-to-numpy-special-literal-o200k", "tiktoken-0.9-0.10-encode-to-numpy-changed-o200k"}
    encode_bytes = {"tiktoken-0.9.0-encode-bytes-invalid-start-o200k", "tiktoken-0.9.0-encode-bytes-changed-o200k"}
    # _encode_bytes fixed in 0.10.0; encode_to_numpy's special literal fixed in 0.11.0;
    # encode_to_numpy refusing a lone surrogate in every release, the installed one too
    assert found == {
        "tiktoken@0.9.0:o200k_base": encode_bytes | numpy_literal | surrogate,
        "tiktoken@0.10.0:o200k_base": numpy_literal | surrogate,
        "tiktoken@0.11.0:o200k_base": surrogate,
        "tiktoken@0.13.0:o200k_base": surrogate,
        "tiktoken:o200k_base": surrogate,
    }
    # the ladder says where each behaviour changed, read off the run (parity.json's ladders)
    installed = versions["tiktoken:o200k_base"]
    (folded,) = data["ladders"]
    assert folded["releases"] == [*LADDER, installed]
    spans = {b["kind"]: (b["runs"], b["changed_in"]) for b in folded["behaviours"]}
    assert spans["inconsistent:_encode_bytes→decode_bytes~input bytes:ok|ok"] == ([["0.9.0", "0.9.0"]], ["0.10.0"])
    assert spans["changed:_encode_bytes:ok|ok"] == ([["0.9.0", "0.9.0"]], ["0.10.0"])
    assert spans["inconsistent:encode_to_numpy[ordinary]~encode[ordinary]:ok|ok"] == ([["0.9.0", "0.10.0"]], ["0.11.0"])
    for policy in ("default", "all", "ordinary", "one"):
        kind = f"inconsistent:encode_to_numpy[{policy}]~encode[{policy}]:raised:unencodable-text|ok"
        assert spans[kind] == ([["0.9.0", installed]], [])


#: the long tier on a million letters in a fresh process: in the whole suite (not alone, not
#: with its file) the same code run in the pytest process once found no long unit at all
#: (``long_reach == {}``), so state an earlier test left behind reached it; a process of its
#: own is also how a user runs the tier. Prints what each release reached and what encode did.
_MILLION_LETTERS = r"""
import json
from harness.generate.long_inputs import LongOptions
from harness.registry import Registry
from harness.run.runner import Runner
from harness.run.selection import select
from harness.worker.setup import Isolation, WorkerSetup

registry = Registry()
registry.load_entry_points()
names = ["tiktoken:o200k_base"] + [f"tiktoken@{v}:o200k_base" for v in LADDER]
# the per-call timeout bounds what is slow: the batch check's half-length input (500,000
# letters, quadratic before 0.13.0) and its re-checks, each a worker busy until it is hit
# (15 s: 196 s for this run alone, 5 s: 114 s, the same reach and failures); what is
# asserted fails at once, and 0.13.0 and later encode the million letters in a fraction of it
isolation = Isolation(timeout_s=5.0, setup=WorkerSetup.from_registry(registry))
selected = select(registry, impls=names, isolation=isolation)
try:
    runner = Runner(selected, max_shrink_calls=0)
    runner.run_long(LongOptions(kinds=("letters",), lengths=(1_000_000,)))
    result = runner.finish()
finally:
    selected.close()
# what encode did on the million letters: grouping by cause merges an adapter's findings
# on one input into one divergence (its first check, here the batch check), so the
# encode outcome is read from the evidence of whichever divergence holds that input
failed = {}
for record in result.divergences:
    if len(record.text) != 1_000_000:
        continue
    for key in (record.adapter, f"{record.adapter} encode"):
        outcome = record.evidence.outcomes.get(key)
        if outcome is not None and outcome.kind == "raised":
            failed[record.adapter] = [outcome.kind, outcome.native_type]
print(json.dumps({"reach": runner.long_reach, "failed": failed, "notes": runner.notes}))
"""


@pytest.mark.network
def test_the_long_tier_tries_a_million_letters_on_every_release(ladder: dict[str, str]) -> None:
    # o200k_base on a million letters: a panic in 0.9.0 and 0.10.0 (after minutes on 10^5
    # in those releases, which once kept the predicting tier from trying 10^6), a
    # ValueError in 0.11.0, fine from 0.13.0 as in the installed release
    code = f"LADDER = {LADDER!r}\n" + _MILLION_LETTERS
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=ladder,
                          timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().split("\n")[-1])
    names = ["tiktoken:o200k_base"] + [f"tiktoken@{v}:o200k_base" for v in LADDER]
    assert got["reach"] == {n: {"letters": 1_000_000} for n in names}, got["notes"]
    assert got["failed"] == {
        "tiktoken@0.9.0:o200k_base": ["raised", "pyo3_runtime.PanicException"],
        "tiktoken@0.10.0:o200k_base": ["raised", "pyo3_runtime.PanicException"],
        "tiktoken@0.11.0:o200k_base": ["raised", "builtins.ValueError"],
    }, got["failed"]


@pytest.mark.network
def test_a_million_letters_through_o200k_base_in_each_release(ladder: dict[str, str], tmp_path: Path) -> None:
    # the long tier's 10^6 acceptance on the encode path alone (seconds, where the whole API
    # surface of five releases on 10^6 characters takes over 20 minutes): a panic (stack
    # overflow) in 0.9.0 and 0.10.0, a ValueError in 0.11.0, fine from 0.13.0
    text = tmp_path / "letters.txt"
    text.write_text("a" * 10**6, encoding="utf-8")
    impls = [a for v in (*LADDER, None) for a in ("--impl", f"tiktoken@{v}:o200k_base" if v else "tiktoken:o200k_base")]
    done = tokconf("encode", "--json", "--file", str(text), *impls, env=ladder)
    assert done.returncode == 1, done.stderr[-2000:]  # the releases disagree
    got = {r["impl"]: (r["error"]["type"] if "error" in r else len(r["ids"])) for r in json.loads(done.stdout)["results"]}
    assert got == {"tiktoken@0.9.0:o200k_base": "pyo3_runtime.PanicException",
                   "tiktoken@0.10.0:o200k_base": "pyo3_runtime.PanicException",
                   "tiktoken@0.11.0:o200k_base": "builtins.ValueError",
                   "tiktoken@0.13.0:o200k_base": 125_000, "tiktoken:o200k_base": 125_000}


def test_a_case_scoped_to_one_release_runs_on_every_release_unless_its_version_is_a_glob() -> None:
    # issue 22: cases scoped to js-tiktoken@1.0.21:* never ran on js-tiktoken@1.0.7:*, so the
    # older release looked fixed where it has the same bugs
    from harness.cases.loader import load_cases
    from harness.cases.match import case_applies_to

    (case,) = [c for c in load_cases() if c.id == "gpt-tokenizer-bom-token-not-found"]
    assert case_applies_to(case, "js-tiktoken@1.0.7:cl100k_base", "cl100k_base")
    assert case_applies_to(case, "gpt-tokenizer@2.9.0:o200k_base", "o200k_base")
    assert not case_applies_to(case, "tiktoken:cl100k_base", "cl100k_base")
    from dataclasses import replace

    pinned = replace(case, adapters=("js-tiktoken@1.0.2[1]:*",))
    assert case_applies_to(pinned, "js-tiktoken@1.0.21:cl100k_base", "cl100k_base")
    assert not case_applies_to(pinned, "js-tiktoken@1.0.7:cl100k_base", "cl100k_base")


@pytest.mark.network
def test_tiktoken_0_3_2_is_called_with_the_sets_its_documentation_shows(tmp_path: Path) -> None:
    # tiktoken 0.3.2's Rust core takes allowed_special only as a set: a frozenset raises
    # TypeError ("'frozenset' object cannot be converted to 'PySet'"), which once flooded
    # its run with thousands of findings of that one quirk (14 divergences here before the
    # adapter passed sets); called as documented, none is left, and the quirk is one fixed
    # probe of the surface's attributes (what a golden's gate compares once)
    env = environments({"tiktoken-0.3.2": "tiktoken==0.3.2"})
    done = tokconf("run", "--impl", "tiktoken@0.3.2:cl100k_base", "--impl", "tiktoken:cl100k_base", "--no-generated",
                   "--out", str(tmp_path), "--quiet", env=env)
    data = json.loads((tmp_path / "latest" / "parity.json").read_text(encoding="utf-8"))
    mine = [d for d in data["divergences"] if d["adapter"] == "tiktoken@0.3.2:cl100k_base"]
    assert mine, done.stdout[-2000:]  # 0.3.2 does differ (no encode_to_numpy, no decode_batch, ...)
    assert not [d for d in mine if "PySet" in json.dumps(d)]
    assert data["matrix"]["tiktoken@0.3.2:cl100k_base"]["expected"]["status"] == "agree"
    python = json.loads(tokconf("env", "list", "--json", env=env).stdout)
    (made,) = [e for e in python["environments"] if e["name"] == "tiktoken-0.3.2"]
    probe = ("import json, tiktoken\n"
             "from harness.vocab import seed_tiktoken_cache\n"
             "from implementations.tiktoken_surface import attributes\n"
             "seed_tiktoken_cache('cl100k_base')\n"
             "out = dict(attributes(tiktoken.get_encoding('cl100k_base'), classify=lambda op, e: None, release='0.3.2'))\n"
             "print(json.dumps(out['encode[allowed_special=frozenset()]'].native_type))\n")
    from harness.envs.handoff import verified_vocab_dir

    ran = subprocess.run([made["python"], "-c", probe], capture_output=True, text=True, cwd=REPO,
                         env={**env, "PYTHONPATH": str(REPO), "TOKCONF_VOCAB_DIR": str(verified_vocab_dir())})
    assert json.loads(ran.stdout.strip().split("\n")[-1]) == "builtins.TypeError", ran.stderr[-2000:]
