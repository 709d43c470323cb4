"""``--encoding-file``: a user's own encoding as data gets tiktoken, hf and rank-mode BPE
adapters over its verified rank file (issue 23); a bad file is exit 2 with file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.encodings import encoding_specs
from harness.encodings.ranks import rank_file_path


def _tokconf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=1200)


def _mine(tmp_path: Path, *, sha: str | None = None) -> Path:
    llama3 = encoding_specs()["llama3"]
    ranks = rank_file_path(llama3.vocabulary)
    if ranks is None:
        pytest.skip("llama-models is not installed")
    pattern = llama3.pattern.replace("'", "''")
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\n"
        "vocabulary:\n"
        "  format: tiktoken\n"
        f"  file: {ranks}\n"
        f"  sha256: {sha or llama3.vocabulary.sha256}\n"
        f"pattern: '{pattern}'\n"
        "special_tokens:\n"
        "  - {token: '<|begin_of_text|>', id: 128000}\n"
        "reference: tiktoken:mine\n", encoding="utf-8")
    return path


def test_a_users_encoding_file_brings_its_adapters(tmp_path: Path) -> None:
    done = _tokconf("encode", "--json", "--encoding-file", str(_mine(tmp_path)), "--impl", "tiktoken:mine",
                    "--impl", "hf:mine", "--impl", "bytebpe-ranks:mine", "--", " Việt")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    ids = {row["impl"]: row["ids"] for row in rows["results"]}
    assert ids == {"tiktoken:mine": [101798], "hf:mine": [101798], "bytebpe-ranks:mine": [101798]}


def test_a_wrong_hash_in_a_users_file_is_refused(tmp_path: Path) -> None:
    done = _tokconf("encode", "--encoding-file", str(_mine(tmp_path, sha="ab" * 32)), "--impl", "tiktoken:mine",
                    "--", "x")
    assert done.returncode == 2
    assert "ab" * 32 in done.stderr and "refusing vocabulary file" in done.stderr


def test_a_bad_encoding_file_is_a_usage_error_with_its_line(tmp_path: Path) -> None:
    path = _mine(tmp_path)
    path.write_text(path.read_text().replace("format: tiktoken", "format: spm"), encoding="utf-8")
    done = _tokconf("list", "--encoding-file", str(path))
    assert done.returncode == 2
    assert f"{path}, line 3: vocabulary.format: must be one of tiktoken, tekken-json" in done.stderr
