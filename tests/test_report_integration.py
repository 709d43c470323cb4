"""End to end: ``tokconf run`` writes parity.json and parity.html; ``tokconf report`` rebuilds
the page byte for byte; documented counterexamples and a planted wrong adapter show up.

Checks the runner/report contract on real output, not only on the hand-made fixtures.
Cases only (``--no-generated``) and four adapters keep it to a couple of seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.report.page import render_report
from harness.report.schema import load_parity

REPO = Path(__file__).resolve().parents[1]


def tokconf(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    result = tokconf("run", "--plugin", "tests.wrong_adapters:rstrip", "--impl", "tiktoken:cl100k_base",
                     "--impl", "minbpe:cl100k_base", "--impl", "wrong:rstrip",
                     "--cases", "cases/corpus-whitespace.yaml", "--cases", "cases/counterexamples.yaml",
                     "--no-generated", "--quiet", "--out", out)
    assert result.returncode == 1, result.stdout + result.stderr  # the planted adapter fails the run
    [folder] = [p for p in out.iterdir() if p.name != "latest" and not p.name.startswith(".")]
    return folder


def test_run_writes_a_valid_json_and_its_page(run_folder: Path) -> None:
    data = load_parity(run_folder / "parity.json")
    page = (run_folder / "parity.html").read_text(encoding="utf-8")
    assert page == render_report(data)
    assert (run_folder.parent / "latest" / "parity.html").read_text(encoding="utf-8") == page


def test_report_rebuilds_the_identical_page(run_folder: Path, tmp_path: Path) -> None:
    rebuilt = tmp_path / "again.html"
    result = tokconf("report", run_folder / "parity.json", "-o", rebuilt)
    assert result.returncode == 0, result.stderr
    assert rebuilt.read_bytes() == (run_folder / "parity.html").read_bytes()


def test_documented_and_planted_divergences_are_in_their_cells(run_folder: Path) -> None:
    data: dict[str, Any] = json.loads((run_folder / "parity.json").read_text(encoding="ascii"))
    page = (run_folder / "parity.html").read_text(encoding="utf-8")
    documented = [d for d in data["divergences"] if d["status"] == "documented"]
    assert {d["adapter"] for d in documented} >= {"minbpe:cl100k_base"}
    [planted] = [d for d in data["divergences"] if (d["adapter"], d["check"]) == ("wrong:rstrip", "id-parity")]
    assert planted["status"] == "unexpected"
    assert planted["input"] == {"text": " ", "escaped": " "}  # shrunk to a single trailing space
    assert data["matrix"]["wrong:rstrip"]["id-parity"]["status"] == "unexpected"
    for d in [*documented, planted]:
        assert d["id"] in data["matrix"][d["adapter"]][d["check"]]["divergences"]
        assert f'<details class="div st-{d["status"]}" id="{d["id"]}"' in page
