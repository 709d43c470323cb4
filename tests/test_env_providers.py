"""Environments never register each other's adapters, one name means one release, and an
environment installs what its library's public API needs (issue 22).

Offline: environments whose interpreter is this very Python, written as manifests, show
the rules of registration; the probe is run for real in this interpreter with
``TOKCONF_CACHE_DIR`` pointing at a cache that already holds an environment, which is how
the nesting bug arose (tokconf's source folder holds its egg-info, so a probe inside a new
environment also saw the ``envs`` family and re-registered the old environment's adapters
under the new version: ``tiktoken@0.9.0@0.10.0:cl100k_base``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.envs.create import API_REQUIREMENTS, api_requirements
from harness.envs.store import EnvAdapter, EnvError, Environment, found_adapters, load_all, save
from harness.registry import library_version

REPO = Path(__file__).resolve().parents[1]


def tokconf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO, env=env)


def _here(cache: Path, name: str, version: str) -> None:
    """An environment named ``name`` whose interpreter is this one, claiming ``version``."""
    folder = cache / "envs" / name
    folder.mkdir(parents=True)
    save(Environment(name=name, folder=str(folder), python=sys.executable, requirements=(f"tiktoken=={version}",),
                     packages=(("tiktoken", version),),
                     adapters=(EnvAdapter(f"tiktoken@{version}:cl100k_base", "tiktoken:cl100k_base", "cl100k_base",
                                          "tiktoken", version),)))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_probe_inside_an_environment_never_reports_another_environments_adapters(cache: Path) -> None:
    version = library_version("tiktoken")
    _here(cache, "older", version)
    environ = {**os.environ, "TOKCONF_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-m", "harness.envs.probe", "--library=tiktoken"], capture_output=True,
                          text=True, cwd=REPO, env=environ, check=True)
    names = {a["name"] for a in json.loads(done.stdout)["adapters"]}
    assert "tiktoken:cl100k_base" in names
    # before the fix the `envs` family's tiktoken@V:cl100k_base was reported too, and the
    # new environment registered it again as tiktoken@V@V:cl100k_base
    assert not [n for n in names if "@" in n], names


def test_a_name_another_environment_provides_is_refused_naming_both(cache: Path) -> None:
    _here(cache, "first", "0.9.0")
    probe = [{"name": "tiktoken:cl100k_base", "encoding": "cl100k_base", "library": "tiktoken", "version": "0.9.0",
              "reason": None}]
    with pytest.raises(EnvError) as caught:
        found_adapters(probe, name="second")
    message = str(caught.value)
    assert "environment second" in message and "tiktoken@0.9.0:cl100k_base (environment first)" in message
    assert "tokconf env remove first" in message
    # a release nobody provides yet is taken; a name already versioned is never taken
    probe[0]["version"] = "0.10.0"
    nested = {**probe[0], "name": "tiktoken@0.9.0:cl100k_base"}
    assert [a.name for a in found_adapters([*probe, nested], name="second")] == ["tiktoken@0.10.0:cl100k_base"]


def test_two_environments_made_earlier_with_one_name_make_it_unavailable_naming_both(cache: Path) -> None:
    version = library_version("tiktoken")
    _here(cache, "one", version)
    _here(cache, "two", version)
    environ = {**os.environ, "TOKCONF_CACHE_DIR": str(cache)}
    rows = [r for r in json.loads(tokconf("list", "--json", env=environ).stdout)["adapters"] if "@" in r["name"]]
    assert [r["name"] for r in rows] == [f"tiktoken@{version}:cl100k_base"]  # listed once
    assert "provided by 2 environments (one, two)" in rows[0]["reason"]
    done = tokconf("run", "--impl", f"tiktoken@{version}:cl100k_base", "--no-generated", env=environ)
    assert done.returncode == 2 and "provided by 2 environments (one, two)" in done.stderr


def test_provenance_of_an_environments_adapter_is_that_environments_release(cache: Path, tmp_path: Path) -> None:
    # the manifest says 9.9.9 while this interpreter has another tiktoken: the worker's
    # version check refuses to run it, but provenance must never take this process's version
    from harness.registry import Registry

    _here(cache, "claims", "9.9.9")
    registry = Registry()
    registry.load_entry_points()
    assert registry.provenance("tiktoken@9.9.9:cl100k_base").version == "9.9.9"
    assert registry.provenance("tiktoken:cl100k_base").version == library_version("tiktoken")


def test_the_api_requirements_of_tiktoken_are_installed_and_recorded(cache: Path) -> None:
    assert api_requirements(["tiktoken"]) == API_REQUIREMENTS["tiktoken"]
    assert api_requirements(["tokenizers"]) == ()
    folder = cache / "envs" / "rec"
    folder.mkdir(parents=True)
    save(Environment(name="rec", folder=str(folder), python=sys.executable, requirements=("tiktoken==0.9.0",),
                     packages=(("numpy", "2.0.0"), ("tiktoken", "0.9.0")),
                     api_requirements=api_requirements(["tiktoken"])))
    (env,) = load_all()
    assert env.api_requirements == (("numpy", "tiktoken's Encoding.encode_to_numpy imports numpy"),)
