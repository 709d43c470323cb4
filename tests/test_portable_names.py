"""Adapter names never hold an install's absolute path: fixtures are ``{cases}/...``.

A name is what ``tokconf diff`` keys two runs on and what a reproduce command repeats, so
the same code installed in two folders must produce the same names, and a name must
work from any folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cases import fixtures
from harness.cases.loader import load_case_file
from harness.registry import Registry
from implementations import gpt2_encoder
from implementations.bytebpe import adapters as bytebpe
from implementations.bytebpe.adapters import DEMO_MODEL
from implementations.hf import tokenizer_json as hf_json
from implementations.source import adapter as source

REPO = Path(__file__).resolve().parents[1]
FIXTURE = "{cases}/data/gpt2-merges-no-trailing-newline"
CASE = (
    "version: 1\ncases:\n  - id: fixture\n    text: lower\n"
    "    adapters: ['gpt2-encoder:{here}/data/gpt2-merges-no-trailing-newline']\n"
)


@pytest.fixture()
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the installed cases folder (as in site-packages/harness/data/cases)."""
    folder = tmp_path / "site-packages" / "harness" / "data" / "cases"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# tokconf case files\n", encoding="utf-8")
    shutil.copytree(REPO / "cases" / "data", folder / "data")
    monkeypatch.setattr(fixtures, "_candidate_dirs", lambda: (folder,))
    return folder


@pytest.fixture()
def registry() -> Registry:
    fresh = Registry()
    for family in (gpt2_encoder.family(), bytebpe.family(), hf_json.family(), source.family()):
        fresh.add(family, provider="test")
    return fresh


# -- {here} in case files ----------------------------------------------------------------


def test_here_in_the_shipped_folder_becomes_cases_however_the_file_was_given(
    shipped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (shipped / "extra.yaml").write_text(CASE, encoding="utf-8")
    expected = (f"gpt2-encoder:{FIXTURE}",)
    assert load_case_file(shipped / "extra.yaml")[0].adapters == expected
    monkeypatch.chdir(shipped.parent)
    assert load_case_file(Path("cases") / "extra.yaml")[0].adapters == expected


def test_here_in_a_folder_of_your_own_keeps_the_path_as_given(
    shipped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "x.yaml").write_text(CASE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_case_file("mine/x.yaml")[0].adapters == (
        "gpt2-encoder:mine/data/gpt2-merges-no-trailing-newline",)
    assert load_case_file(mine / "x.yaml")[0].adapters == (
        f"gpt2-encoder:{mine.as_posix()}/data/gpt2-merges-no-trailing-newline",)


def test_no_shipped_case_names_an_absolute_path() -> None:
    from harness.cases.loader import load_cases
    from harness.run.runner import case_adapter_names

    names = case_adapter_names(load_cases())
    assert f"gpt2-encoder:{FIXTURE}" in names and f"gpt2-encoder-strict:{FIXTURE}" in names
    assert [n for n in names if str(REPO) in n or n.split(":", 1)[-1].startswith("/")] == []


# -- the families resolve {cases}, and name shipped files by it ----------------------------


def test_gpt2_encoder_resolves_cases_and_names_an_absolute_path_into_it_portably(
    shipped: Path, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # any folder
    adapter = registry.get(f"gpt2-encoder:{FIXTURE}")
    assert adapter.name == f"gpt2-encoder:{FIXTURE}"
    assert adapter.encode("lower") == [257, 101, 114]
    absolute = registry.spec(f"gpt2-encoder-strict:{shipped}/data/gpt2-merges-no-trailing-newline")
    assert absolute.name == f"gpt2-encoder-strict:{FIXTURE}"
    assert absolute.factory().encode("lower") == [257, 258]


def test_a_file_outside_the_cases_keeps_the_path_as_given(
    shipped: Path, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO / "cases" / "data" / "gpt2-merges-no-trailing-newline", tmp_path / "merges")
    shutil.copy(DEMO_MODEL, tmp_path / "model.json")
    monkeypatch.chdir(tmp_path)
    assert registry.spec("gpt2-encoder:merges").name == "gpt2-encoder:merges"
    assert registry.spec("bytebpe:model.json").name == "bytebpe:model.json"
    assert registry.spec(f"bytebpe:{tmp_path}/model.json").name == f"bytebpe:{tmp_path}/model.json"
    assert registry.spec("bytebpe:demo").name == "bytebpe:demo"


def test_bytebpe_hf_json_and_source_resolve_cases(
    shipped: Path, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(DEMO_MODEL, shipped / "data" / "model.json")
    registry_hf = Registry()
    registry_hf.add(__import__("implementations.hf.adapters", fromlist=["family"]).family(), provider="test")
    registry_hf.get("hf:gpt2").native.save(str(shipped / "data" / "tokenizer.json"))
    adhoc = REPO / "tests" / "data" / "foreign" / "adhoc"
    shutil.copy(adhoc / "chartok.py", shipped / "data" / "chartok.py")
    for spec_file in adhoc.glob("chartok*.tokconf.yaml"):
        shutil.copy(spec_file, shipped / "data" / spec_file.name)
    monkeypatch.chdir(tmp_path)

    model = registry.get("bytebpe:{cases}/data/model.json")
    assert model.name == "bytebpe:{cases}/data/model.json"
    assert model.encoding == bytebpe.model_encoding(DEMO_MODEL)
    assert registry.spec(f"bytebpe-ltr:{shipped}/data/model.json").name == "bytebpe-ltr:{cases}/data/model.json"

    hf = registry.get("hf-json:{cases}/data/tokenizer.json")
    assert hf.name == "hf-json:{cases}/data/tokenizer.json"
    assert hf.encode("Hi 你!") == [17250, 220, 19526, 254, 0]
    assert registry.spec(f"hf-json:{shipped}/data/tokenizer.json").name == "hf-json:{cases}/data/tokenizer.json"

    char = registry.get("source:{cases}/data/chartok.py:CharTokenizer")
    assert char.name == "source:{cases}/data/chartok.py:CharTokenizer"
    assert registry.spec(f"source:{shipped}/data/chartok.py:CharTokenizer").name == (
        "source:{cases}/data/chartok.py:CharTokenizer")


def test_shipped_spec_names_are_never_taken_for_paths(
    shipped: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    (shipped / "minbpe-gpt4").mkdir()  # a folder named like a shipped spec, where we stand
    monkeypatch.chdir(shipped)
    assert registry.spec("source:minbpe-gpt4").name == "source:minbpe-gpt4"
    (shipped / "demo").write_text("{}", encoding="utf-8")
    assert registry.spec("bytebpe:demo").name == "bytebpe:demo"


# -- from the command line ------------------------------------------------------------------


def test_a_fixture_name_works_from_any_folder(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "harness", "encode", "--json", "--impl", f"gpt2-encoder:{FIXTURE}",
         "--impl", f"gpt2-encoder-strict:{FIXTURE}", "--", "lower"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    rows = json.loads(result.stdout)["results"]
    assert [(r["impl"], r["ids"]) for r in rows] == [
        (f"gpt2-encoder:{FIXTURE}", [257, 101, 114]), (f"gpt2-encoder-strict:{FIXTURE}", [257, 258])]


# -- the acceptance: the same code from two install folders diffs clean ---------------------


def _install(target: Path) -> Path:
    """Copy the packages as a wheel lays them out: the cases as package data, no checkout."""
    site = target / "site-packages"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("harness", "implementations"):
        shutil.copytree(REPO / package, site / package, ignore=skip)  # follows harness/data/cases
    assert (site / "harness" / "data" / "cases" / "README.md").is_file()
    assert not (site / "harness" / "data" / "cases").is_symlink()
    return site


def _tokconf(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    program = (
        "import sys; sys.path.insert(0, sys.argv[1]); import harness; "
        "assert harness.__file__.startswith(sys.argv[1]), harness.__file__; "
        "from harness.cli import main; sys.exit(main(sys.argv[2:]))"
    )
    return subprocess.run([sys.executable, "-c", program, str(site), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def _fixture_encoding() -> str:
    folder = REPO / "cases" / "data" / "gpt2-merges-no-trailing-newline"
    return gpt2_encoder.files_encoding((folder / "encoder.json").read_bytes(), (folder / "vocab.bpe").read_bytes())


def test_the_same_code_from_two_install_folders_diffs_clean(tmp_path: Path) -> None:
    runs = []
    for label in ("first", "second"):
        site = _install(tmp_path / label)
        out = tmp_path / f"out-{label}"
        # no --impl: the fixture adapters join the run because the shipped cases name them,
        # as in a default run; --encoding keeps the run to them
        result = _tokconf(site, "run", "--quiet", "--no-generated", "--encoding", _fixture_encoding(),
                          "--out", str(out), cwd=tmp_path / label)
        assert result.returncode == 0, result.stdout + result.stderr
        summary = result.stdout.split("\nreport: ")[0]
        assert str(tmp_path) not in summary  # the summary names no install
        assert max(len(line) for line in summary.split("\n")) <= 120
        assert "[1] gpt2-encoder-strict:{cases}/data/gpt2-merges-no-trailing-newline\n" in summary  # the legend
        assert "voc=vocab-consistency\n" in summary  # the column legend is wrapped, not cut
        runs.append(out / "latest" / "parity.json")
    result = _tokconf(_install(tmp_path / "third"), "diff", "--json", str(runs[0]), str(runs[1]), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    diff = json.loads(result.stdout)
    assert {key: diff[key] for key in ("adapters", "libraries", "vocabularies", "environment", "cells",
                                       "changed_outcomes", "checks", "divergences", "gating")} == {
        "adapters": [], "libraries": [], "vocabularies": [], "environment": [], "cells": [],
        "changed_outcomes": [], "checks": {"added": [], "removed": []},
        "divergences": {"new": [], "changed": [], "fixed": [], "unchecked": []}, "gating": 0,
    }
    assert diff["unchanged_divergences"] == len(json.loads(runs[1].read_text())["divergences"])
    names = [a["name"] for a in json.loads(runs[0].read_text())["adapters"]]
    assert names == [f"gpt2-encoder-strict:{FIXTURE}", f"gpt2-encoder:{FIXTURE}"]
    assert json.loads(runs[1].read_text())["summary"]["documented"] == 2  # the fixture's counterexample
