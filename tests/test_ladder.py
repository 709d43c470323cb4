"""Release ladders (issue 22): ``tokconf run --ladder`` and ``env add --ladder``, offline.

The releases' environments here are planted manifests whose interpreter is this very
Python (as in tests/test_envs.py), so the mechanism runs for real (workers, the run, the
ladder folded from parity.json) without installing anything. The ladder of real
releases is in tests/test_release_ladder.py (marked ``network``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.envs.ladder import LadderError, installed_rungs, ladder_adapters, parse_ladder, release_key
from harness.envs.store import EnvAdapter, Environment, save
from harness.registry import library_version
from harness.report.ladder import behaviours

REPO = Path(__file__).resolve().parents[1]


def tokconf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO, env=env)


def _env(name: str, version: str, *, library: str = "tiktoken", encodings=("cl100k_base", "o200k_harmony"),
         lacks: str = "o200k_harmony", folder: str = "/nowhere") -> Environment:
    kind = library.removeprefix("npm:")
    return Environment(name=name, folder=folder, python=sys.executable, requirements=(f"{library}=={version}",),
                       packages=((kind, version),),
                       adapters=tuple(EnvAdapter(f"{kind}@{version}:{e}", f"{kind}:{e}", e, library, version,
                                                 reason="lacks it" if e == lacks else None) for e in encodings))


def test_a_ladder_is_a_library_with_listed_releases_or_bounds() -> None:
    assert parse_ladder("tiktoken").versions == () and parse_ladder("tiktoken").clauses == ()
    assert parse_ladder("tiktoken==0.9.0,0.10.0").versions == ("0.9.0", "0.10.0")
    ranged = parse_ladder("tiktoken>=0.9,<=0.13")
    assert [v for v in ("0.8.0", "0.9.0", "0.10.0", "0.13.0", "0.14.0", "0.13.0rc1") if ranged.admits(v)] == [
        "0.9.0", "0.10.0", "0.13.0"]
    assert parse_ladder("npm:js-tiktoken==1.0.7,1.0.21").requirement("1.0.7") == "npm:js-tiktoken@1.0.7"
    with pytest.raises(LadderError, match="is not a bound like >=0.9"):
        parse_ladder("tiktoken>=0.9,latest")
    assert sorted(["0.13.0", "0.9", "0.10.0"], key=release_key) == ["0.9", "0.10.0", "0.13.0"]


def test_the_rungs_are_the_releases_in_environments_oldest_first_with_the_installed_one_on_top() -> None:
    envs = [_env("b", "0.10.0"), _env("a", "0.9.0"), _env("c", "0.13.0"),
            _env("js", "1.0.21", library="npm:js-tiktoken", encodings=("cl100k_base",))]
    rungs = installed_rungs(parse_ladder("tiktoken<0.13"), envs)
    assert list(rungs) == ["0.9.0", "0.10.0"]  # 0.10.0 after 0.9.0; the npm package is another library
    names = ladder_adapters(rungs, parse_ladder("tiktoken"), encodings=[], available=["tiktoken:cl100k_base"],
                            installed="0.14.0")
    # an encoding a release lacks is no rung's adapter
    assert names == {"tiktoken@0.9.0:cl100k_base": "0.9.0", "tiktoken@0.10.0:cl100k_base": "0.10.0",
                     "tiktoken:cl100k_base": "0.14.0"}
    with pytest.raises(LadderError, match="env add --ladder"):
        ladder_adapters(rungs, parse_ladder("tiktoken"), encodings=["o200k_base"], available=[], installed="0.14.0")


def test_each_behaviour_says_the_releases_that_show_it_and_where_it_changed() -> None:
    def d(adapter: str, kind: str, text: str = "x", status: str = "documented") -> dict:
        return {"adapter": adapter, "check": "api-surface", "kind": kind, "encoding": "e", "status": status,
                "input": {"escaped": text}, "case": None}

    releases = {"t@0.9:e": "0.9", "t@0.10:e": "0.10", "t@0.11:e": "0.11", "t:e": "0.14"}
    order = ["0.9", "0.10", "0.11", "0.14"]
    data = {"divergences": [d("t@0.9:e", "fixed-in-0.10"), d("t@0.9:e", "back"), d("t@0.11:e", "back"),
                            *(d(a, "everywhere") for a in releases), d("other:e", "not a rung")]}
    found = {b.kind: b for b in behaviours(data, releases, order)}
    assert set(found) == {"fixed-in-0.10", "back", "everywhere"}
    assert (found["fixed-in-0.10"].runs, found["fixed-in-0.10"].changed_in) == ((("0.9", "0.9"),), ("0.10",))
    # fixed in 0.10, back in 0.11, fixed again in 0.14
    assert (found["back"].runs, found["back"].changed_in) == ((("0.9", "0.9"), ("0.11", "0.11")), ("0.10", "0.14"))
    assert (found["everywhere"].runs, found["everywhere"].changed_in) == ((("0.9", "0.14"),), ())
    # what changed inside the ladder comes first
    assert [b.kind for b in behaviours(data, releases, order)][-1] == "everywhere"


@pytest.fixture
def planted_ladder(tmp_path: Path) -> dict[str, str]:
    """A release in an environment whose interpreter is this very Python (an environment
    whose release is not what its manifest says is refused: tokconf checks)."""
    cache = tmp_path / "cache"
    folder = cache / "envs" / "here"
    folder.mkdir(parents=True)
    save(_env("here", library_version("tiktoken") or "?", encodings=("o200k_base",), lacks="", folder=str(folder)))
    return {**os.environ, "TOKCONF_CACHE_DIR": str(cache)}


KINDS = [f"inconsistent:encode_to_numpy[{p}]~encode[{p}]:raised:unencodable-text|ok" for p in ("default", "all", "ordinary")]


def test_run_ladder_runs_every_release_side_by_side_and_folds_each_divergence(planted_ladder, tmp_path: Path) -> None:
    version = library_version("tiktoken")
    # planted: encode_to_numpy's refusal of a lone surrogate documented for the environment's
    # release only, so the installed release shows it unexpected: the ladder must say so per release
    cases = tmp_path / "planted.yaml"
    cases.write_text(json.dumps({"version": 1, "cases": [{
        "id": "planted-surrogate", "text_escaped": "\\ud83d", "encodings": ["o200k_base"],
        "documented": [{"adapters": [f"tiktoken@{version}:*"], "check": "api-surface", "kind": KINDS,
                        "reason": "planted for the ladder test", "source": "tests/test_ladder.py"}]}]}),
        encoding="utf-8")
    out = tmp_path / "reports"
    done = tokconf("run", "--ladder", "tiktoken", "--encoding", "o200k_base", "--cases", str(cases),
                   "--no-generated", "--out", str(out), "--quiet", env=planted_ladder)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    from harness.report.schema import validate_parity

    validate_parity(data)  # the ladders section is in the schema
    (ladder,) = data["ladders"]
    assert ladder["releases"] == [version, f"{version} (installed)"]
    assert ladder["adapters"] == {f"tiktoken@{version}:o200k_base": version,
                                  "tiktoken:o200k_base": f"{version} (installed)"}
    found = {b["kind"]: b for b in ladder["behaviours"] if b["case"] == "planted-surrogate"}
    assert set(found) == set(KINDS)  # the unexpected record's every symptom is a behaviour
    # the documented record carries its first kind: shown by both releases, documented in one,
    # unexpected in the other; the other kinds are the installed release's unexpected symptoms
    assert found[KINDS[0]]["shown"] == [[version, "documented"], [f"{version} (installed)", "unexpected"]]
    assert found[KINDS[0]]["runs"] == [[version, f"{version} (installed)"]] and found[KINDS[0]]["changed_in"] == []
    for kind in KINDS[1:]:
        assert found[kind]["shown"] == [[f"{version} (installed)", "unexpected"]]
    assert f"ladder tiktoken: {version} < {version} (installed)" in done.stdout


def test_a_ladder_nothing_fits_is_a_usage_error_with_the_fix(planted_ladder, tmp_path: Path) -> None:
    done = tokconf("run", "--ladder", "tiktoken>=0.20", "--out", str(tmp_path), env=planted_ladder)
    assert done.returncode == 2
    assert "no installed release of tiktoken fits the ladder" in done.stderr and "env add --ladder" in done.stderr
