"""The report lists every token a merge list cannot build, per open-weight vocabulary of
the run (issue 23: "the report lists every unreachable token per vocabulary")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.encodings.reach import merge_unreachable_section
from harness.report.schema import load_parity

pytest.importorskip("llama_models")


def test_a_run_over_llama3_lists_its_588_tokens_in_parity_json_and_the_page(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--impl", "tiktoken:llama3", "--encoding", "llama3",
                           "--no-cases", "--no-generated", "--quiet", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    data = load_parity(tmp_path / "latest" / "parity.json")  # schema-checked
    listed = data["vocabularies"]["llama3"]["merge_unreachable"]
    assert listed["count"] == 588 == len(listed["tokens"])
    # shown as divergence pieces are: whitespace visible
    assert "␠Việt" in listed["tokens"] and "␠hello" not in listed["tokens"]
    page = (tmp_path / "latest" / "parity.html").read_text(encoding="utf-8")
    assert 'id="vocabularies"' in page and "␠Việt" in page


def test_an_audited_table_without_such_tokens_says_0_and_tiktokens_own_add_no_section() -> None:
    # tiktoken's own tables are not audited (none has such a token): a default run has no section
    assert merge_unreachable_section(["cl100k_base", "o200k_base", "unknown"]) == {}
    section = merge_unreachable_section(["llama4", "qwen3_6", "cl100k_base"])
    assert {name: facts["merge_unreachable"]["count"] for name, facts in section.items()} == {"llama4": 0, "qwen3_6": 201}
