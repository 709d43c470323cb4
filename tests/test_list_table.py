"""``tokconf list`` as text: 120 columns, whole names, whole reasons."""

from __future__ import annotations

import subprocess
import sys

from harness.cli.list_table import format_list

LONG = "tiktoken-compatible:some_long_vendor_package.submodule:cl100k_base"
REASON = ("vocabulary file p50k_base.tiktoken (sha256 94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069) "
          "is not available offline: put the file in a folder and pass `--vocab-dir FOLDER` or set "
          "TOKCONF_VOCAB_DIR=FOLDER")


def test_a_long_name_keeps_its_own_line_and_a_reason_wraps_under_its_row() -> None:
    rows = [
        {"name": "tiktoken:p50k_base", "encoding": "p50k_base", "library": "tiktoken", "version": "0.14.0",
         "available": False, "reason": REASON},
        {"name": LONG, "encoding": "cl100k_base", "library": "", "version": None, "available": True, "reason": None},
    ]
    assert format_list(rows, {"broken:*": "entry point broken = x:y failed to load: ImportError: no y"}) == (
        "adapter                                       encoding     library          status\n"
        "tiktoken:p50k_base                            p50k_base    tiktoken 0.14.0  unavailable\n"
        "    vocabulary file p50k_base.tiktoken (sha256 94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069) is not\n"
        "    available offline: put the file in a folder and pass `--vocab-dir FOLDER` or set TOKCONF_VOCAB_DIR=FOLDER\n"
        f"{LONG}\n"
        "                                              cl100k_base  -                available\n"
        "broken:*                                                                    provider failed\n"
        "    entry point broken = x:y failed to load: ImportError: no y\n"
    )


def test_tokconf_list_fits_120_columns_and_says_every_reason_whole() -> None:
    result = subprocess.run([sys.executable, "-m", "harness", "list"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    assert max(len(line) for line in lines) <= 120
    assert lines[0].split() == ["adapter", "encoding", "library", "status"]
    p50k = lines.index(next(line for line in lines if line.startswith("tiktoken:p50k_base ")))
    assert lines[p50k].split()[-1] == "unavailable"
    reason = " ".join(line.strip() for line in lines[p50k + 1:p50k + 3])
    assert reason.endswith("pass `--vocab-dir FOLDER` or set TOKCONF_VOCAB_DIR=FOLDER")
