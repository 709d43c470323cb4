"""Nothing fails silently: an adapter that was asked for and cannot run ends the run with
exit 2 and its reason on stderr, and so does a run that tested nothing (issue 10)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MINBPE = REPO / "tests" / "data" / "foreign" / "checkouts" / "minbpe"


def tokconf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TOKCONF_SOURCE_ROOT")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env=full_env)


def run(*args: str, **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return tokconf("run", "--no-generated", "--quiet", "--out", str(kw.pop("out")), *args, **kw)


def test_a_source_spec_with_a_wrong_root(tmp_path: Path) -> None:
    proc = run("--impl", "source:minbpe-gpt4", "--source-root", str(tmp_path / "nowhere"), out=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "source:minbpe-gpt4:" in proc.stderr and "does not exist" in proc.stderr
    assert not (tmp_path / "latest").exists()


def test_a_source_file_with_a_syntax_error(tmp_path: Path) -> None:
    checkout = tmp_path / "minbpe"
    shutil.copytree(MINBPE, checkout)
    gpt4 = checkout / "minbpe" / "gpt4.py"
    gpt4.write_text(gpt4.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    proc = run("--impl", "source:minbpe-gpt4", "--source-root", str(checkout), out=tmp_path / "out")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{gpt4.resolve()}:" in proc.stderr and "does not parse" in proc.stderr
    # `tokconf list` knows without building
    listed = tokconf("list", "--source-root", str(checkout))
    lines = listed.stdout.split("\n")
    row = next(i for i, x in enumerate(lines) if x.startswith("source:minbpe-gpt4 "))
    assert lines[row].rstrip().endswith("unavailable")
    # the reason, wrapped under its row (over more lines, the longer the temporary folder's path)
    reason = []
    for line in lines[row + 1:]:
        if not line.startswith(" "):
            break
        reason.append(line.strip())
    assert "does not parse" in " ".join(reason), reason


def test_a_name_error_while_building(tmp_path: Path) -> None:
    checkout = tmp_path / "minbpe"
    shutil.copytree(MINBPE, checkout)
    gpt4 = checkout / "minbpe" / "gpt4.py"
    text = gpt4.read_text(encoding="utf-8")
    gpt4.write_text(text.replace("def __init__(self):\n", "def __init__(self):\n        undefined_helper()\n", 1),
                    encoding="utf-8")
    assert "undefined_helper" in gpt4.read_text(encoding="utf-8")
    proc = run("--impl", "source:minbpe-gpt4", "--source-root", str(checkout), out=tmp_path / "out")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "NameError" in proc.stderr and "undefined_helper" in proc.stderr


def test_a_missing_vocabulary_asked_for(tmp_path: Path) -> None:
    proc = run("--impl", "tiktoken:p50k_base", out=tmp_path)
    assert proc.returncode == 2
    assert "tiktoken:p50k_base: vocabulary file p50k_base.tiktoken" in proc.stderr and "--vocab-dir" in proc.stderr


def test_a_run_where_nothing_can_run(tmp_path: Path) -> None:
    # the counterexamples name no p50k_base reference (cases/javascript.yaml names tiktoken's
    # WASM build, which runs where the npm packages are installed)
    proc = run("--encoding", "p50k_base", "--cases", str(REPO / "cases" / "counterexamples.yaml"), out=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no check ran on any input" in proc.stderr


@pytest.mark.parametrize(("plugin", "message"), [
    ("broken", "silent:broken: RuntimeError: the tokenizer's vocabulary is not where it looked"),
    ("no_encoding", "silent:no-encoding: claims no encoding"),
    ("p50k", "no reference for p50k_base: tiktoken:p50k_base cannot run"),
])
def test_a_plugin_that_cannot_be_judged(tmp_path: Path, plugin: str, message: str) -> None:
    proc = run("--plugin", f"tests.silent_plugins:{plugin}", "--cases", str(REPO / "cases" / "counterexamples.yaml"),
               out=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr


def test_list_says_unavailable_for_an_encoding_the_release_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken.registry

    from implementations import tiktoken as adapters

    adapters._known_encodings.cache_clear()
    monkeypatch.setattr(tiktoken.registry, "list_encoding_names", lambda: ["gpt2", "r50k_base", "cl100k_base"])
    try:
        reason = adapters._check("o200k_harmony")
        kept = adapters._check("cl100k_base")
    finally:
        # the cache must not keep the planted list: a later test in this process then found
        # tiktoken without o200k_base (only when pytest-xdist put such a test after this one)
        adapters._known_encodings.cache_clear()
    assert reason is not None and "has no encoding 'o200k_harmony'" in reason and "pip install -U tiktoken" in reason
    assert kept is None


def test_adapters_whose_pinned_reference_cannot_run_are_not_judged_by_each_other() -> None:
    """Two ports of an encoding whose reference cannot run (p50k_base has no offline
    vocabulary here) are not compared with each other: a port that copies another's bug
    would agree with it. They are rows that say why, with the fix; asked for, exit 2."""
    from harness.registry import AdapterSpec, Registry
    from harness.run.selection import SelectionError, select
    from tests.silent_plugins import P50k

    class OtherP50k(P50k):
        name = "silent:other-p50k"

    registry = Registry()
    registry.load_entry_points()
    registry.add([AdapterSpec(name="silent:p50k", encoding="p50k_base", factory=P50k, library="tiktoken"),
                  AdapterSpec(name="silent:other-p50k", encoding="p50k_base", factory=OtherP50k, library="tiktoken")],
                 provider="test")
    assert registry.spec("tiktoken:p50k_base").unavailable_reason() is not None  # what this test stands on
    selected = select(registry, encodings=["p50k_base"])
    try:
        assert "p50k_base" not in selected.references and not selected.calls
        for name in ("silent:p50k", "silent:other-p50k"):
            row = selected.rows[name]
            assert not row.available
            assert row.reason.startswith("not judged: no reference for p50k_base: tiktoken:p50k_base cannot run")
            assert row.reason.endswith("pass --reference p50k_base=ADAPTER")
    finally:
        selected.close()
    with pytest.raises(SelectionError, match="no reference for p50k_base: tiktoken:p50k_base cannot run"):
        select(registry, impls=["silent:p50k"], required=["silent:p50k"])
    # a reference the cases name for the encoding serves, as --reference does
    named = select(registry, encodings=["p50k_base"], case_references=["silent:other-p50k"])
    try:
        assert named.references == {"p50k_base": "silent:other-p50k"} and "silent:p50k" in named.calls
    finally:
        named.close()
    chosen = select(registry, encodings=["p50k_base"], references={"p50k_base": "silent:other-p50k"})
    try:
        assert chosen.references == {"p50k_base": "silent:other-p50k"} and set(chosen.calls) == set(chosen.rows) - {
            "tiktoken:p50k_base"}
    finally:
        chosen.close()


def test_a_case_naming_an_environment_that_is_not_installed_is_a_note_not_a_row() -> None:
    from harness.registry import Registry
    from harness.run.selection import select

    registry = Registry()
    registry.load_entry_points()
    selected = select(registry, encodings=["cl100k_base"],
                      case_adapters=["nosuchpkg@9.9.9:cl100k_base", "nosuchpkg@9.9.9:o200k_base", "nosuch:thing"])
    try:
        assert not any(name.startswith("nosuchpkg@") for name in selected.rows)
        assert any("environments not installed here, not run: nosuchpkg@9.9.9 (2 adapters)" in note
                   for note in selected.notes)
        # a name that is no environment's stays a row: a misspelt fixture must show
        assert not selected.rows["nosuch:thing"].available
    finally:
        selected.close()
