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
    assert "does not parse" in " ".join(lines[row + 1:row + 4])  # the reason, wrapped under its row


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
    proc = run("--encoding", "p50k_base", out=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no check ran on any input" in proc.stderr


@pytest.mark.parametrize(("plugin", "message"), [
    ("broken", "silent:broken: RuntimeError: the tokenizer's vocabulary is not where it looked"),
    ("no_encoding", "silent:no-encoding: claims no encoding"),
    ("p50k", "no reference for p50k_base: tiktoken:p50k_base cannot run"),
])
def test_a_plugin_that_cannot_be_judged(tmp_path: Path, plugin: str, message: str) -> None:
    proc = run("--plugin", f"tests.silent_plugins:{plugin}", out=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr


def test_list_says_unavailable_for_an_encoding_the_release_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken.registry

    from implementations import tiktoken as adapters

    adapters._known_encodings.cache_clear()
    monkeypatch.setattr(tiktoken.registry, "list_encoding_names", lambda: ["gpt2", "r50k_base", "cl100k_base"])
    try:
        reason = adapters._check("o200k_harmony")
    finally:
        adapters._known_encodings.cache_clear()
    assert reason is not None and "has no encoding 'o200k_harmony'" in reason and "pip install -U tiktoken" in reason
    assert adapters._check("cl100k_base") is None
