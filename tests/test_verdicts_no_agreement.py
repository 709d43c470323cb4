"""No failure is agreement (issue 21, item 2): a check that compared nothing is never
``agree``; a failed api-surface walk and a path a release lost are findings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.calls import Calls, InProcess
from harness.checks.api_surface import check_api_surface
from harness.checks.base import ORDINARY, Finding, Subject
from harness.registry import default_registry
from harness.run.result import Cell
from tests import surface_adapters

REPO = Path(__file__).resolve().parent.parent


def reference() -> Calls:
    return Calls(InProcess(default_registry().get("tiktoken:cl100k_base")))


def planted(cls: type) -> Calls:
    return Calls(InProcess(cls()))


def test_a_crashed_api_surface_walk_is_a_finding_with_its_outcome() -> None:
    result = check_api_surface(Subject("hello world", ORDINARY, planted(surface_adapters.WalkCrashed), reference()))
    assert isinstance(result, Finding)
    assert result.kind == "walk:raised:internal-error"
    ((label, outcome),) = result.outcomes
    assert (label, outcome.native_type) == ("planted:walk-crashed", "builtins.RuntimeError")
    assert "the surface walk crashed" in result.detail


def test_a_method_removed_in_the_newer_release_is_reported() -> None:
    result = check_api_surface(Subject("hello world", ORDINARY, planted(surface_adapters.MethodRemoved), reference()))
    assert isinstance(result, Finding)
    assert result.kind == "removed:decode_with_offsets"
    assert "decode_with_offsets: removed (planted:method-removed lacks it" in result.detail


def test_a_path_no_longer_supported_is_reported() -> None:
    result = check_api_surface(Subject("hello world", ORDINARY, planted(surface_adapters.NoLongerSupported),
                                       reference()))
    assert isinstance(result, Finding)
    assert result.kind == "no-longer-supported:decode_bytes_batch"


def test_a_cell_that_compared_nothing_is_empty_not_agree() -> None:
    assert Cell().status == "empty"
    assert Cell(unsupported=2).status == "unsupported"
    assert Cell(inputs=1).status == "agree"


def test_a_run_shows_zero_input_cells_as_empty_and_the_reference_never_counts_itself(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text("version: 1\ncases:\n  - id: hi\n    text: \"hello world\"\n    encodings: [cl100k_base]\n",
                     encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--impl", "tiktoken:cl100k_base", "--impl", "hf:cl100k_base",
         "--cases", str(cases), "--no-generated", "--out", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    reference_row, other_row = data["matrix"]["tiktoken:cl100k_base"], data["matrix"]["hf:cl100k_base"]
    # id-parity of the reference against itself compared nothing; hf's compared one input
    assert (reference_row["id-parity"]["status"], reference_row["id-parity"]["inputs"]) == ("empty", 0)
    assert (other_row["id-parity"]["status"], other_row["id-parity"]["inputs"]) == ("agree", 1)
    # no case has expectations or decode probes: those cells ran on nothing
    assert reference_row["expected"]["status"] == "empty"
    assert other_row["decode"]["status"] == "agree"
    assert reference_row["decode"]["status"] == "empty"
    assert data["summary"]["empty"] == sum(
        cell["status"] == "empty" for row in data["matrix"].values() for cell in row.values())
    assert all(cell["inputs"] > 0 for row in data["matrix"].values() for cell in row.values()
               if cell["status"] == "agree")


def test_a_failing_special_tokens_is_a_finding_not_no_specials() -> None:
    from harness.checks.vocab import check_vocab
    from tests.wrong_adapters import _Wrapped

    class BrokenSpecials(_Wrapped):
        name = "verdict:broken-specials"

        @property
        def special_tokens(self):  # type: ignore[no-untyped-def]
            raise RuntimeError("planted: the special-token table failed to load")

    broken = Calls(InProcess(BrokenSpecials()))
    assert broken.info.special_tokens == ()
    report = check_vocab(broken, reference(), max_findings=5)
    first = report.findings[0]
    assert (first.check, first.kind) == ("vocab-consistency", "special-tokens:failed")
    assert "RuntimeError" in first.detail and "failed to load" in first.detail
