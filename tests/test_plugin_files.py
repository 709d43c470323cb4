"""Plugins from any folder, errors that say the fix, and the pytest plugin's own output."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.registry import Registry, RegistryError

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "plugins" / "sample_plugins.py"

#: a plugin file that imports a neighbour, as a user's own folder of helpers would
HELPER = "def latin1(text):\n    return list(text.encode('latin-1'))\n"
PLUGIN = """\
from harness import Adapter
from toyhelper import latin1

class Toy(Adapter):
    name = "toyfile:latin1"
    encoding = "toy-latin1"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        return latin1(text)

    def decode_bytes(self, ids):
        return bytes(ids)
"""


def tokconf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "tokconf"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture()
def plugin_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "my plugins"  # a space: the path is a path, not a module name
    folder.mkdir()
    (folder / "toy.py").write_text(PLUGIN, encoding="utf-8")
    (folder / "toyhelper.py").write_text(HELPER, encoding="utf-8")
    return folder


# -- --plugin FILE.py:ATTR -----------------------------------------------------------------------


def test_a_plugin_file_works_from_any_folder_relative_or_absolute(plugin_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for target, cwd in ((f"{plugin_dir}/toy.py:Toy", elsewhere), ("my plugins/toy.py:Toy", tmp_path)):
        result = tokconf("encode", "--plugin", target, "--impl", "toyfile:latin1", "--json", "--", "hé", cwd=cwd)
        assert result.returncode == 0, result.stderr
        assert '"ids": [104, 233]' in result.stdout


def test_a_plugin_file_loads_once_under_a_stable_name(plugin_dir: Path) -> None:
    first, second = Registry(), Registry()
    assert first.load_plugin(f"{plugin_dir}/toy.py:Toy") == ["toyfile:latin1"]
    assert second.load_plugin(f"{plugin_dir}/toy.py:Toy") == ["toyfile:latin1"]
    assert type(first.get("toyfile:latin1")) is type(second.get("toyfile:latin1"))
    assert type(first.get("toyfile:latin1")).__module__.startswith("tokconf_plugin_toy_")


def test_file_plugin_errors_say_what_and_the_fix(plugin_dir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    registry = Registry()
    with pytest.raises(RegistryError) as missing:
        registry.load_plugin("nope/toy.py:Toy")
    assert str(missing.value) == (
        f"--plugin nope/toy.py:Toy: there is no file {tmp_path}/nope/toy.py (relative to the current "
        f"folder {tmp_path}); give the path of a .py file")
    (plugin_dir / "broken.py").write_text("raise ValueError('no vocabulary here')\n", encoding="utf-8")
    with pytest.raises(RegistryError) as broken:
        registry.load_plugin("my plugins/broken.py:Toy")
    assert str(broken.value) == (
        "--plugin my plugins/broken.py:Toy: running my plugins/broken.py failed: ValueError: no vocabulary here "
        "(raised at my plugins/broken.py:1 in <module>)")
    with pytest.raises(RegistryError) as attr:
        registry.load_plugin("my plugins/toy.py:Nope")
    assert str(attr.value).startswith(
        f"--plugin my plugins/toy.py:Nope: {plugin_dir.resolve()}/toy.py has no attribute 'Nope'; it has: ")
    with pytest.raises(RegistryError) as shape:
        registry.load_plugin("my plugins/toy.py")
    assert str(shape.value) == ("--plugin 'my plugins/toy.py' must be MODULE:ATTR or FILE.py:ATTR, e.g. "
                                "--plugin mypkg.adapter:factory or --plugin plugins/mine.py:MyTokenizer")


def test_a_missing_module_says_where_it_looked_and_how_to_add_one(tmp_path: Path) -> None:
    result = tokconf("run", "--plugin", "mypkg.adapter:factory", cwd=tmp_path)
    assert result.returncode == 2
    message = result.stderr.strip()
    # the console script's own path (this process's differs: a pytest-xdist worker's has more)
    child_path = json.loads(subprocess.run([sys.executable, "-c", "import json, sys; print(json.dumps(sys.path))"],
                                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout)
    searched = [p for p in dict.fromkeys(child_path[1:]) if p and p != str(tmp_path) and os.path.isdir(p)]
    assert message.startswith(
        f"tokconf run: error: --plugin mypkg.adapter:factory: no module named 'mypkg'; searched the current "
        f"folder {tmp_path} and Python's path: ")
    assert all(p in message for p in searched if "site-packages" in p)
    assert message.endswith(
        "Fix: run from the folder that holds mypkg/ (or mypkg.py), add that folder to PYTHONPATH, "
        "`pip install -e` its package, or give the file itself: --plugin path/to/mypkg/adapter.py:factory")


def test_a_missing_submodule_or_dependency_is_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "mypkg" / "needs.py").write_text("import tokconf_no_such_dependency\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry()
    with pytest.raises(RegistryError) as sub:
        registry.load_plugin("mypkg.adapter:factory")
    assert str(sub.value).startswith(
        f"--plugin mypkg.adapter:factory: no module named 'mypkg.adapter' (mypkg itself is at "
        f"{tmp_path}/mypkg/__init__.py); searched the current folder {tmp_path}")
    with pytest.raises(RegistryError) as dependency:
        registry.load_plugin("mypkg.needs:factory")
    assert str(dependency.value) == (
        "--plugin mypkg.needs:factory: importing 'mypkg.needs' failed: it imports "
        "'tokconf_no_such_dependency', which is not installed here; `pip install` the package that "
        "provides 'tokconf_no_such_dependency'")


# -- the documented factory (docs/adapters.md, linked from the README) --------------------------------


def _readme_block(after: str) -> str:
    text = (REPO / "docs" / "adapters.md").read_text(encoding="utf-8")
    start = text.index(after)
    block = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert block is not None
    return block.group(1)


def test_the_readme_factory_registers_one_adapter_per_encoding(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "mypkg" / "adapters.py").write_text(_readme_block("several encodings"), encoding="utf-8")
    result = tokconf("encode", "--plugin", "mypkg/adapters.py:factory", "--impl", "mine:cl100k_base",
                     "--impl", "mine:o200k_base", "--impl", "tiktoken:cl100k_base", "--impl", "tiktoken:o200k_base",
                     "--json", "--", "hello world", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('"ids": [15339, 1917]') == 2  # cl100k_base, mine and tiktoken
    assert result.stdout.count('"ids": [24912, 2375]') == 2  # o200k_base


# -- the pytest plugin's own lines ------------------------------------------------------------------


LONG_REASON = ("needs the toy-vocab package and its 40 MB vocabulary file, which is not installed in this "
               "environment; fix: `pip install toy-vocab==1.2.3` and run `toy-vocab fetch --offline-cache DIR`, "
               "then set TOY_VOCAB_DIR=DIR")


def test_pytest_counts_the_suite_items_and_prints_unavailable_reasons_whole(pytester: pytest.Pytester,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    shutil.copy(SAMPLE, pytester.path / "toys.py")
    with (pytester.path / "toys.py").open("a", encoding="utf-8") as out:
        out.write(f"\n\ndef gone():\n    return AdapterSpec(name='toy:gone', encoding='toy-latin1', "
                  f"factory=factory, check=lambda: {LONG_REASON!r})\n")
    (pytester.path / "cases.yaml").write_text("version: 1\ncases:\n  - {id: hi, text: hi}\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", "toys.py:factory", "--tokconf-plugin", "toys.py:gone", "--tokconf-impl", "toy:latin1",
        "--tokconf-impl", "toy:gone", "--tokconf-cases", "cases.yaml", "--tokconf-no-generated",
        "-p", "no:cacheprovider",
    )
    # the case and the vocabulary check of toy:latin1 pass; toy:gone was asked for and
    # cannot run: a failing item, not a silent skip
    result.assert_outcomes(passed=2, failed=1)
    assert "collected 3 items" in result.outlines
    assert "FAILED tokconf::unavailable[toy:gone]" in result.stdout.str()
    start = result.outlines.index("tokconf: 1 adapter(s) unavailable, not tested:")
    lines = result.outlines[start + 1:start + 5]
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("  toy:gone: needs the toy-vocab") and lines[1].startswith("      ")
    said = " ".join(line.strip() for line in lines if line.startswith("  "))
    assert said.startswith(f"toy:gone: {LONG_REASON}")
